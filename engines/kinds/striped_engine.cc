#include "engines/kinds/striped_engine.h"

#include <algorithm>
#include <mutex>
#include <shared_mutex>
#include <string>

#include "engines/engine_kind.h"
#include "engines/calls/keyspace_ops.h"

namespace kvlab {

StripedEngine::StripedEngine(const EngineConfig& config)
    : InlineEngine(config), meter_(config.max_memory_bytes) {
  const unsigned count = ResolvedStripes(config);
  stripes_.reserve(count);
  for (unsigned i = 0; i < count; ++i)
    stripes_.push_back(std::make_unique<Stripe>(meter_, modifications_));
}

size_t StripedEngine::StripeIndex(std::string_view key) const {
  return KeyHash{}(key) % stripes_.size();
}

StripedEngine::Stripe& StripedEngine::StripeFor(std::string_view key) {
  return *stripes_[StripeIndex(key)];
}

OpResult StripedEngine::ExecuteKeyed(const Operation& op, int64_t now_ms) {
  Stripe& stripe = StripeFor(op.key);
  if (IsReadOnly(op)) {
    ReaderLock reader(stripe.lock);
    return stripe.keys.Read(op, now_ms);
  }
  WriterLock writer(stripe.lock);
  return stripe.keys.Apply(op, now_ms);
}

void StripedEngine::ExecuteGroup(Batch& batch, AtomicGroup& group, int64_t now_ms) {
  const uint32_t end = group.first + group.count;
  bool whole_keyspace = false;
  bool read_only = true;
  thread_local std::vector<size_t> held;
  held.clear();
  for (uint32_t i = group.first; i < end; ++i) {
    const Operation& op = batch.ops[i];
    if (IsKeyless(op.code)) {
      whole_keyspace = true;
      if (op.code == OpCode::kFlushAll) read_only = false;
    } else {
      held.push_back(StripeIndex(op.key));
      // A read that passes the group's state along (PFCOUNT of several
      // keys) runs on the write path: the shared-lock path has no state.
      if (!IsReadOnly(op) || NeedsGroupState(op)) read_only = false;
    }
  }
  if (whole_keyspace) {
    held.resize(stripes_.size());
    for (size_t s = 0; s < held.size(); ++s) held[s] = s;
  } else {
    std::sort(held.begin(), held.end());
    held.erase(std::unique(held.begin(), held.end()), held.end());
  }
  // Ascending stripe order: the rule every multi-stripe holder follows.
  for (size_t s : held) {
    if (read_only)
      stripes_[s]->lock.lock_shared();
    else
      stripes_[s]->lock.lock();
  }
  struct Release {
    const std::vector<size_t>& held;
    const std::vector<std::unique_ptr<Stripe>>& stripes;
    bool shared;
    ~Release() {
      for (auto s = held.rbegin(); s != held.rend(); ++s) {
        if (shared)
          stripes[*s]->lock.unlock_shared();
        else
          stripes[*s]->lock.unlock();
      }
    }
  } release{held, stripes_, read_only};
  // The lambdas run with the stripes above held (the analysis checks a
  // lambda on its own, without them).
  RunGroupOps(
      batch, group, now_ms,
      [&](const Operation& op, GroupState& state) NO_THREAD_SAFETY_ANALYSIS {
        Stripe& stripe = StripeFor(op.key);
        return read_only ? stripe.keys.Read(op, now_ms) : stripe.keys.Apply(op, now_ms, &state);
      },
      [&](const Operation& op) NO_THREAD_SAFETY_ANALYSIS {
        int64_t live = 0;
        for (const auto& stripe : stripes_) {
          if (op.code == OpCode::kDbSize) live += stripe->keys.CountLive(now_ms);
          if (op.code == OpCode::kFlushAll) stripe->keys.Clear();
          if (op.code == OpCode::kCollectKeys) stripe->keys.Collect(*op.collect, now_ms);
        }
        return op.code == OpCode::kDbSize ? OpResult::Integer(live) : OpResult::Ok();
      });
}

void StripedEngine::CollectKeys(KeyCollector& collector, int64_t now_ms) {
  std::vector<std::shared_lock<SharedMutex>> readers;
  readers.reserve(stripes_.size());
  for (const auto& stripe : stripes_) readers.emplace_back(stripe->lock);
  for (const auto& stripe : stripes_) stripe->keys.Collect(collector, now_ms);
}

int64_t StripedEngine::CountLiveKeys(int64_t now_ms) {
  std::vector<std::shared_lock<SharedMutex>> readers;
  readers.reserve(stripes_.size());
  for (const auto& stripe : stripes_) readers.emplace_back(stripe->lock);
  int64_t live = 0;
  for (const auto& stripe : stripes_) live += stripe->keys.CountLive(now_ms);
  return live;
}

int64_t StripedEngine::ReclaimExpired(int64_t now_ms, size_t places) {
  int64_t reclaimed = 0;
  for (const auto& stripe : stripes_) {
    WriterLock writer(stripe->lock);
    reclaimed += stripe->keys.ReclaimExpired(now_ms, places);
  }
  return reclaimed;
}

void StripedEngine::ClearAll() {
  std::vector<std::unique_lock<SharedMutex>> writers;
  writers.reserve(stripes_.size());
  for (const auto& stripe : stripes_) writers.emplace_back(stripe->lock);
  for (const auto& stripe : stripes_) stripe->keys.Clear();
}

EngineInfo StripedEngine::Info() const {
  return {{"engine", "striped"},
          {"stripes", std::to_string(stripes_.size())},
          {"dataset_bytes", std::to_string(meter_.UsedBytes())}};
}

}  // namespace kvlab
