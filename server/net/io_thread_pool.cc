#include "server/net/io_thread_pool.h"

#include <cstdio>
#include <exception>
#include <latch>

#include "engines/threads/thread_cpu.h"

namespace kvlab {

IoThreadPool::IoThreadPool(unsigned threads) {
  for (unsigned i = 0; i < threads; ++i) loops_.push_back(std::make_unique<EventLoop>());
}

IoThreadPool::~IoThreadPool() {
  ReleaseWhenIdle();
  Join();
}

EventLoop& IoThreadPool::Next() {
  EventLoop& loop = *loops_[next_];
  next_ = (next_ + 1) % loops_.size();
  return loop;
}

void IoThreadPool::Start() {
  thread_ids_.assign(loops_.size(), 0);
  std::latch started(static_cast<std::ptrdiff_t>(loops_.size()));
  for (size_t i = 0; i < loops_.size(); ++i) {
    threads_.emplace_back([this, i, &started, &loop = *loops_[i]] {
      thread_ids_[i] = CurrentThreadId();  // read by others only after the latch
      started.count_down();
      try {
        loop.Run();
      } catch (const std::exception& error) {
        // A callback must never throw; if one does, the server cannot stay correct.
        std::fprintf(stderr, "kvlab-server: fatal error in I/O thread: %s\n", error.what());
        std::terminate();
      }
    });
  }
  started.wait();
}

void IoThreadPool::ReleaseWhenIdle() {
  if (released_) return;
  released_ = true;
  for (auto& loop : loops_) loop->ReleaseWhenIdle();
}

void IoThreadPool::Join() {
  for (auto& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
  threads_.clear();
}

}  // namespace kvlab
