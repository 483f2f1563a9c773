#include "harness/clients/client_strategy.h"

#include "harness/clients/dedicated_client.h"
#include "harness/clients/event_loop_pooled_client.h"
#include "harness/clients/event_loop_shared_client.h"
#include "harness/clients/pooled_client.h"
#include "harness/clients/routed_client.h"
#include "harness/clients/shared_client.h"

namespace kvlab::harness {

Status ParseRefillMode(std::string_view text, RefillMode* out) {
  if (text == "steady")
    *out = RefillMode::kSteady;
  else if (text == "burst")
    *out = RefillMode::kBurst;
  else
    return Status::InvalidArgument("bad --refill '" + std::string(text) +
                                   "' (allowed: steady, burst)");
  return Status::Ok();
}

const char* RefillModeName(RefillMode mode) {
  return mode == RefillMode::kBurst ? "burst" : "steady";
}

uint64_t SendDeadline(const ThreadLoad& load, bool stopping, uint64_t now_ns) {
  if (!stopping) return now_ns;
  return load.stop_at_ns == nullptr ? 0 : load.stop_at_ns->load(std::memory_order_acquire);
}

Status SlotMapOf(const StrategyOptions& options, std::shared_ptr<SlotMap>* out) {
  if (options.slot_map) {
    *out = options.slot_map;
    return Status::Ok();
  }
  std::unique_ptr<SlotMap> fetched;
  Status status = SlotMap::Fetch(options.target, options.connection, &fetched);
  if (status.ok()) *out = std::move(fetched);
  return status;
}

std::unique_ptr<ClientStrategy> MakeClientStrategy(ClientKind kind,
                                                   const StrategyOptions& options) {
  if ((options.route_slots || options.slot_map) && kind != ClientKind::kDedicated) {
    return std::make_unique<RoutedClient>(kind, options);  // one inner client per node
  }
  switch (kind) {
    case ClientKind::kDedicated:
      return std::make_unique<DedicatedClient>(options);
    case ClientKind::kPooled:
      if (options.io.model == IoModel::kEventLoop)
        return std::make_unique<EventLoopPooledClient>(options);
      return std::make_unique<PooledClient>(options);
    case ClientKind::kShared:
      if (options.io.model == IoModel::kEventLoop)
        return std::make_unique<EventLoopSharedClient>(options);
      return std::make_unique<SharedClient>(options);
  }
  return nullptr;
}

}  // namespace kvlab::harness
