// IoThreadPool: N I/O threads, each running its own EventLoop.
//
// A connection lives on exactly one loop for its whole life, so its
// callbacks never run concurrently and need no locks. New connections are
// spread round-robin over the loops.
//
// Thread-safety: Next() is called from the one accepting thread; Start(),
// ReleaseWhenIdle() and Join() from the thread that owns the pool. The loops
// themselves are thread-safe for Post().
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <memory>
#include <thread>
#include <vector>

#include "server/net/event_loop.h"

namespace kvlab {

class IoThreadPool {
 public:
  // REQUIRES: threads >= 1.
  explicit IoThreadPool(unsigned threads);
  ~IoThreadPool();  // Join()s; functions still posted are destroyed with the loops
  IoThreadPool(const IoThreadPool&) = delete;
  IoThreadPool& operator=(const IoThreadPool&) = delete;

  size_t size() const { return loops_.size(); }
  EventLoop& Next();
  // Loop `index` (< size()): the thread-per-core engine's owner `index`.
  EventLoop& loop(size_t index) { return *loops_[index]; }

  // Returns once every thread runs and has published its ThreadIds() entry.
  void Start();
  // The kernel id of each I/O thread, in loop order (INFO's per-thread CPU
  // figures). REQUIRES: Start() has returned.
  const std::vector<pid_t>& ThreadIds() const { return thread_ids_; }
  // Lets each thread return once its loop is idle (closed connections,
  // finished engine batches).
  void ReleaseWhenIdle();
  void Join();

 private:
  std::vector<std::unique_ptr<EventLoop>> loops_;
  std::vector<std::thread> threads_;
  std::vector<pid_t> thread_ids_;
  size_t next_ = 0;
  bool released_ = false;
};

}  // namespace kvlab
