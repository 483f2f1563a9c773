// RoutedClient: `--route slots` for the pooled and shared strategies. It
// reads the slot map once (slot_map.h) and keeps one inner client per node —
// a pool of --connections, or one shared connection, per owner, with either
// I/O model — and sends each operation to the owner of its first key. A
// -MOVED reply re-points the slot and the operation is sent again to the
// node it names (counted: moved()).
//
// Thread-safe as SynchronousClient: Call() from every application thread.
#pragma once

#include <memory>
#include <vector>

#include "harness/clients/slot_map.h"
#include "harness/clients/synchronous_client.h"

namespace kvlab::harness {

class RoutedClient final : public SynchronousClient {
 public:
  // `kind` is pooled or shared; options.target is any node of the cluster.
  RoutedClient(ClientKind kind, const StrategyOptions& options);

  Status Connect() override;
  Status RoundTrip(std::string_view request, ReplyPtr* reply, LoadPhaseClock* phases) override;
  void Interrupt() override;
  int64_t loop_wakeups() const override;
  int64_t moved() const override { return map_ ? static_cast<int64_t>(map_->moved()) : 0; }

 private:
  const ClientKind kind_;
  const StrategyOptions options_;
  std::shared_ptr<SlotMap> map_;
  std::vector<std::unique_ptr<SynchronousClient>> nodes_;  // by SlotMap node index
};

}  // namespace kvlab::harness
