// FunctionThread: a thread that runs the functions posted to it, in the
// order posted: the smallest EventLoop. The owner engine's owners run on
// one each when no server attached its I/O threads; the tests use one as a
// stand-in for an I/O thread's loop.
//
// Thread-safe: Post() from any thread. Destruction runs everything posted
// so far, then joins the thread; REQUIRES: not called on the thread itself.
#pragma once

#include <condition_variable>
#include <functional>
#include <thread>
#include <utility>
#include <vector>

#include "base/mutex.h"

namespace kvlab {

class FunctionThread {
 public:
  FunctionThread() : thread_([this] { Run(); }) {}
  ~FunctionThread() {
    {
      MutexLock lock(mutex_);
      stopping_ = true;
    }
    ready_.notify_one();
    thread_.join();
  }
  FunctionThread(const FunctionThread&) = delete;
  FunctionThread& operator=(const FunctionThread&) = delete;

  void Post(std::function<void()> function) {
    {
      MutexLock lock(mutex_);
      queue_.push_back(std::move(function));
    }
    ready_.notify_one();
  }

 private:
  void Run() {
    std::vector<std::function<void()>> running;
    MutexLock lock(mutex_);
    for (;;) {
      lock.Wait(ready_, [this]() REQUIRES(mutex_) { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything posted has run
      running.swap(queue_);
      lock.Unlock();
      for (auto& function : running) function();
      running.clear();
      lock.Lock();
    }
  }

  Mutex mutex_;
  std::condition_variable ready_;
  std::vector<std::function<void()>> queue_ GUARDED_BY(mutex_);
  bool stopping_ GUARDED_BY(mutex_) = false;
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace kvlab
