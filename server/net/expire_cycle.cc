#include "server/net/expire_cycle.h"

#include <utility>

namespace kvlab {

ExpireCycle::ExpireCycle(Engine& engine, EventLoop& loop) : engine_(engine), loop_(loop) {
  thread_ = std::thread([this] { Run(); });
}

ExpireCycle::~ExpireCycle() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void ExpireCycle::Run() {
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, kPeriod, [this] { return stop_; })) {
    // No write has ever stored a deadline: nothing to reclaim, and no batch
    // to run through the engine's threads and counters.
    if (!engine_.modifications().deadline_stored()) continue;
    lock.unlock();
    RunOnce();
    lock.lock();
  }
}

void ExpireCycle::RunOnce() {
  {
    std::lock_guard lock(mutex_);
    finished_ = false;
  }
  loop_.Post([this] {
    batch_.Clear();
    Operation reclaim;
    reclaim.code = OpCode::kReclaimExpired;
    reclaim.integer = kPlacesPerCall;
    batch_.Add(reclaim);
    // `done` may run on another thread (a shard's): it only signals.
    engine_.Execute(batch_, [this] {
      std::lock_guard lock(mutex_);
      finished_ = true;
      wake_.notify_all();
    });
    // This loop's connections may have asked for wake-ups per round
    // (Connection): the batch must not wait for that round.
    engine_.WakeDeferred();
  });
  // Not cut short by a stop: the batch must not outlive this object.
  std::unique_lock lock(mutex_);
  wake_.wait(lock, [this] { return finished_; });
}

}  // namespace kvlab
