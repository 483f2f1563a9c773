#include "server/net/aof_auto_rewrite.h"

#include <chrono>
#include <iostream>
#include <string>
#include <vector>

#include "server/net/aof_loader.h"
#include "server/aof_rewrite_policy.h"

namespace kvlab {

AutoRewrite::AutoRewrite(ServerContext& server, EventLoop& loop, DurableLog& log)
    : server_(server), loop_(loop), log_(log) {
  thread_ = std::thread([this] { Run(); });
}

AutoRewrite::~AutoRewrite() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  thread_.join();
}

void AutoRewrite::Run() {
  std::unique_lock lock(mutex_);
  std::chrono::steady_clock::time_point last_attempt;
  while (!stop_cv_.wait_for(lock, std::chrono::milliseconds(100), [this] { return stop_; })) {
    const DurableLog::Counters counters = log_.counters();
    const AofRewritePolicy& policy = AutoRewritePolicy();
    // A failed rewrite (a full disk, say) is tried again after a pause, not
    // ten times a second.
    if (!counters.last_rewrite_ok &&
        std::chrono::steady_clock::now() - last_attempt < std::chrono::seconds(10)) {
      continue;
    }
    if (counters.rewrite_in_progress ||
        !AutoRewriteDue(counters.file_bytes, counters.base_bytes,
                        policy.percentage.load(std::memory_order_relaxed),
                        policy.min_size.load(std::memory_order_relaxed))) {
      continue;
    }
    std::cerr << "kvlab-server: starting an automatic append-only file rewrite ("
              << counters.file_bytes << " bytes, " << counters.base_bytes
              << " after the last rewrite)\n";
    std::vector<ReplayPiece> command(1);
    command[0].bytes = "*1\r\n$12\r\nBGREWRITEAOF\r\n";
    last_attempt = std::chrono::steady_clock::now();
    lock.unlock();  // the command may take a while to be served: stop waits meanwhile
    const Status ran = RunCommandsOnLoop(server_, loop_, std::move(command));
    lock.lock();
    if (!ran.ok()) std::cerr << "kvlab-server: " << ran.message() << "\n";
  }
}

}  // namespace kvlab
