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
// Thread safety: RunThread(i) touches only thread i's connections;
// Interrupt() may run on any thread.
#pragma once

#include <memory>
#include <vector>

#include "harness/client_strategy.h"

namespace kvlab::harness {

class DedicatedClient final : public ClientStrategy {
 public:
  explicit DedicatedClient(const StrategyOptions& options);
  DedicatedClient(const DedicatedClient&) = delete;
  DedicatedClient& operator=(const DedicatedClient&) = delete;

  Status Connect() override;
  Status RunThread(ThreadLoad& load) override;
  void Interrupt() override;

  // How many connections thread `thread_index` owns.
  int ConnectionsOf(int thread_index) const;

 private:
  const StrategyOptions options_;
  // per_thread_[i] are thread i's connections.
  std::vector<std::vector<std::unique_ptr<Connection>>> per_thread_;
};

}  // namespace kvlab::harness
