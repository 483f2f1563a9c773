#include "server/io_thread_pool.h"

#include <cstdio>
#include <exception>
#include <latch>

#include "engines/thread_cpu.h"

namespace kvlab {

IoThreadPool::IoThreadPool(unsigned threads) {
  for (unsigned i = 0; i < threads; ++i) {
    // concurrency_hint 1: each context is run by exactly one thread.
    contexts_.push_back(std::make_unique<boost::asio::io_context>(1));
    keep_running_.emplace_back(boost::asio::make_work_guard(*contexts_.back()));
  }
}

IoThreadPool::~IoThreadPool() {
  ReleaseWhenIdle();
  Join();
}

boost::asio::io_context& IoThreadPool::Next() {
  boost::asio::io_context& context = *contexts_[next_];
  next_ = (next_ + 1) % contexts_.size();
  return context;
}

void IoThreadPool::Start() {
  thread_ids_.assign(contexts_.size(), 0);
  std::latch started(static_cast<std::ptrdiff_t>(contexts_.size()));
  for (size_t i = 0; i < contexts_.size(); ++i) {
    threads_.emplace_back([this, i, &started, &context = contexts_[i]] {
      thread_ids_[i] = CurrentThreadId();  // read by others only after the latch
      started.count_down();
      try {
        context->run();
      } catch (const std::exception& error) {
        // A handler must never throw; if one does, the server cannot stay correct.
        std::fprintf(stderr, "kvlab-server: fatal error in I/O thread: %s\n", error.what());
        std::terminate();
      }
    });
  }
  started.wait();
}

void IoThreadPool::ReleaseWhenIdle() {
  for (auto& guard : keep_running_) guard.reset();
}

void IoThreadPool::Join() {
  for (auto& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
  threads_.clear();
}

}  // namespace kvlab
