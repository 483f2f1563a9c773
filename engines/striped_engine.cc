#include "engines/striped_engine.h"

#include <mutex>
#include <string>

#include "engines/engine_kind.h"
#include "engines/keyspace_ops.h"

namespace kvlab {

StripedEngine::StripedEngine(const EngineConfig& config)
    : InlineEngine(config), meter_(config.max_memory_bytes) {
  const unsigned count = ResolvedStripes(config);
  stripes_.reserve(count);
  for (unsigned i = 0; i < count; ++i) stripes_.push_back(std::make_unique<Stripe>(meter_));
}

StripedEngine::Stripe& StripedEngine::StripeFor(std::string_view key) {
  return *stripes_[KeyHash{}(key) % stripes_.size()];
}

OpResult StripedEngine::ExecuteKeyed(const Operation& op, int64_t now_ms) {
  Stripe& stripe = StripeFor(op.key);
  if (IsReadOnly(op.code)) {
    std::shared_lock reader(stripe.lock);
    return stripe.keys.Read(op, now_ms);
  }
  std::unique_lock writer(stripe.lock);
  return stripe.keys.Apply(op, now_ms);
}

int64_t StripedEngine::CountLiveKeys(int64_t now_ms) {
  std::vector<std::shared_lock<std::shared_mutex>> readers;
  readers.reserve(stripes_.size());
  for (const auto& stripe : stripes_) readers.emplace_back(stripe->lock);
  int64_t live = 0;
  for (const auto& stripe : stripes_) live += stripe->keys.CountLive(now_ms);
  return live;
}

void StripedEngine::ClearAll() {
  std::vector<std::unique_lock<std::shared_mutex>> writers;
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
