#include "harness/clients/routed_client.h"

namespace kvlab::harness {
namespace {

// A request MOVED more often than this in a row means the nodes disagree.
constexpr int kMaxRedirects = 5;

}  // namespace

RoutedClient::RoutedClient(ClientKind kind, const StrategyOptions& options)
    : kind_(kind), options_(options) {}

Status RoutedClient::Connect() {
  Status mapped = SlotMapOf(options_, &map_);
  if (!mapped.ok()) return mapped;
  for (const Target& node : map_->nodes()) {
    StrategyOptions per_node = options_;
    per_node.target = node;
    per_node.route_slots = false;
    per_node.slot_map = nullptr;
    std::unique_ptr<ClientStrategy> inner = MakeClientStrategy(kind_, per_node);
    auto* synchronous = dynamic_cast<SynchronousClient*>(inner.get());
    if (synchronous == nullptr)
      return Status::InvalidArgument("--route slots: not a synchronous client");
    inner.release();
    nodes_.emplace_back(synchronous);
    Status connected = nodes_.back()->Connect();
    if (!connected.ok()) return connected.WithContext("node " + node.ToUrl());
  }
  return Status::Ok();
}

Status RoutedClient::RoundTrip(std::string_view request, ReplyPtr* reply, LoadPhaseClock* phases) {
  size_t node = map_->NodeOf(request);
  for (int redirect = 0;; ++redirect) {
    Status called = nodes_[node]->RoundTrip(request, reply, phases);
    if (!called.ok()) return called;
    const std::optional<size_t> moved_to = map_->Follow(**reply);
    if (!moved_to) return Status::Ok();
    if (redirect == kMaxRedirects) return Status::IoError("--route slots: MOVED in a loop");
    node = *moved_to;
  }
}

void RoutedClient::Interrupt() {
  for (auto& node : nodes_) node->Interrupt();
}

int64_t RoutedClient::loop_wakeups() const {
  int64_t total = -1;
  for (const auto& node : nodes_) {
    const int64_t wakeups = node->loop_wakeups();
    if (wakeups >= 0) total = (total < 0 ? 0 : total) + wakeups;
  }
  return total;
}

}  // namespace kvlab::harness
