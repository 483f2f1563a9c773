// DedicatedClient: what redis-benchmark and memtier do. Each application
// thread owns its share of `connections` (spread as evenly as possible) and
// drives them from its own event loop (ppoll): in closed loop each connection
// keeps `pipeline` requests in flight, refilling a slot as soon as its reply
// arrives (`steady`), or sends `pipeline` requests in one write and the next
// batch once all are answered (`burst`); in open loop a request is sent when
// its intended time comes and some connection has fewer than `pipeline`
// requests in flight, and its latency counts from the intended time
// (coordinated omission) — every request of a batch with its own time. The
// loop sleeps in ppoll until the next intended time or a reply, to the
// nanosecond; it never spins.
//
// With --route slots (options.route_slots) each of a thread's connections is
// a group of one socket per cluster node (slot_map.h): a request goes to the
// socket of its first key's owner, `pipeline` counts the group's requests
// in flight, and a -MOVED reply sends the request again to the node it
// names (moved()).
//
// Thread safety: RunThread(i) touches only thread i's connections;
// Interrupt() may run on any thread.
#pragma once

#include <memory>
#include <vector>

#include "harness/clients/client_strategy.h"
#include "harness/clients/slot_map.h"

namespace kvlab::harness {

class DedicatedClient final : public ClientStrategy {
 public:
  explicit DedicatedClient(const StrategyOptions& options);
  DedicatedClient(const DedicatedClient&) = delete;
  DedicatedClient& operator=(const DedicatedClient&) = delete;

  Status Connect() override;
  Status RunThread(ThreadLoad& load) override;
  void Interrupt() override;
  int64_t moved() const override { return map_ ? static_cast<int64_t>(map_->moved()) : -1; }

  // How many connections thread `thread_index` owns.
  int ConnectionsOf(int thread_index) const;

 private:
  const StrategyOptions options_;
  std::shared_ptr<SlotMap> map_;  // --route slots
  // per_thread_[i] are thread i's connections; routed, connection g's socket
  // to node n is at g * nodes + n.
  std::vector<std::vector<std::unique_ptr<Connection>>> per_thread_;
};

}  // namespace kvlab::harness
