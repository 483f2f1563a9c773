// IoThreadPool: N I/O threads, each running its own boost::asio::io_context.
//
// A connection lives on exactly one io_context for its whole life, so its
// handlers never run concurrently and need no locks. New connections are
// spread round-robin over the contexts.
//
// Thread-safety: Next() is called from the one accepting thread; Start(),
// ReleaseWhenIdle() and Join() from the thread that owns the pool. The
// contexts themselves are thread-safe for post().
#pragma once

#include <sys/types.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <cstddef>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

namespace kvlab {

class IoThreadPool {
 public:
  // REQUIRES: threads >= 1.
  explicit IoThreadPool(unsigned threads);
  ~IoThreadPool();  // Join()s; handlers still queued are destroyed with the contexts
  IoThreadPool(const IoThreadPool&) = delete;
  IoThreadPool& operator=(const IoThreadPool&) = delete;

  size_t size() const { return contexts_.size(); }
  boost::asio::io_context& Next();

  // Returns once every thread runs and has published its ThreadIds() entry.
  void Start();
  // The kernel id of each I/O thread, in context order (INFO's per-thread
  // CPU figures). REQUIRES: Start() has returned.
  const std::vector<pid_t>& ThreadIds() const { return thread_ids_; }
  // Lets each thread return once its context has no handlers and no
  // outstanding work left (closed connections, finished engine batches).
  void ReleaseWhenIdle();
  void Join();

 private:
  using WorkGuard = boost::asio::executor_work_guard<boost::asio::io_context::executor_type>;
  std::vector<std::unique_ptr<boost::asio::io_context>> contexts_;
  std::vector<std::optional<WorkGuard>> keep_running_;
  std::vector<std::thread> threads_;
  std::vector<pid_t> thread_ids_;
  size_t next_ = 0;
};

}  // namespace kvlab
