// AutoRewrite: Redis's automatic append-only file rewrite. A thread looks at
// the log's size ten times a second (as Redis's serverCron does) and, once
// AutoRewriteDue() says so (aof_rewrite_policy.h), runs BGREWRITEAOF through
// a Session of the server's own on an I/O thread, as a client would: one
// code path for both, and a rewrite already running is simply refused.
//
// Thread-safe; the destructor stops the thread (before the I/O threads stop).
#pragma once

#include <condition_variable>
#include <mutex>
#include <thread>

#include "server/durable_log.h"
#include "server/net/event_loop.h"
#include "server/server_context.h"

namespace kvlab {

class AutoRewrite {
 public:
  AutoRewrite(ServerContext& server, EventLoop& loop, DurableLog& log);
  ~AutoRewrite();
  AutoRewrite(const AutoRewrite&) = delete;
  AutoRewrite& operator=(const AutoRewrite&) = delete;

 private:
  void Run();

  ServerContext& server_;
  EventLoop& loop_;
  DurableLog& log_;
  std::mutex mutex_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace kvlab
