#include "server/io_thread_pool.h"

#include <cstdio>
#include <exception>

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
  for (auto& context : contexts_) {
    threads_.emplace_back([&context] {
      try {
        context->run();
      } catch (const std::exception& error) {
        // A handler must never throw; if one does, the server cannot stay correct.
        std::fprintf(stderr, "kvlab-server: fatal error in I/O thread: %s\n", error.what());
        std::terminate();
      }
    });
  }
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
