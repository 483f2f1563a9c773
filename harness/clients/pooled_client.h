// PooledClient: Lettuce + commons-pool2, over direct blocking I/O. A pool of
// `connections` connections (default 8, commons-pool2's maxTotal); each
// operation borrows one, does a synchronous round trip on the caller's
// thread and returns it (connection_pool.h: LIFO idle, blocking borrow, a
// failed connection fails the pool). `--io event-loop` has the Lettuce/Netty
// variant, in which an event-loop thread does the I/O
// (event_loop_pooled_client.h).
//
// Thread safety: thread-safe.
#pragma once

#include <memory>
#include <vector>

#include "harness/clients/connection_pool.h"
#include "harness/clients/synchronous_client.h"

namespace kvlab::harness {

class PooledClient final : public SynchronousClient {
 public:
  explicit PooledClient(const StrategyOptions& options);
  PooledClient(const PooledClient&) = delete;
  PooledClient& operator=(const PooledClient&) = delete;

  Status Connect() override;
  void Interrupt() override;
  Status RoundTrip(std::string_view request, ReplyPtr* reply, LoadPhaseClock* phases) override;

  // Connections currently lent out (for tests of the pool's bound).
  int borrowed() const { return pool_.borrowed(); }

 private:
  const StrategyOptions options_;
  std::vector<std::unique_ptr<Connection>> connections_;  // all of them, lent or idle
  ConnectionPool<Connection> pool_;
};

}  // namespace kvlab::harness
