// PooledClient: Lettuce + commons-pool2. A pool of `connections` connections
// (default 8, commons-pool2's maxTotal); each operation borrows one, does a
// synchronous round trip and returns it. When every connection is out, a
// borrower blocks until one comes back. A connection that fails fails the
// pool: every waiting and later borrower gets the error.
//
// Thread safety: thread-safe.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

#include "harness/synchronous_client.h"

namespace kvlab::harness {

class PooledClient final : public SynchronousClient {
 public:
  explicit PooledClient(const StrategyOptions& options);
  PooledClient(const PooledClient&) = delete;
  PooledClient& operator=(const PooledClient&) = delete;

  Status Connect() override;
  void Interrupt() override;
  Status Call(std::string_view request, ReplyPtr* reply) override;

  // Connections currently lent out (for tests of the pool's bound).
  int borrowed() const;

 private:
  Status Borrow(Connection** connection);
  void GiveBack(Connection* connection);
  void Fail(const Status& status);

  const StrategyOptions options_;
  std::vector<std::unique_ptr<Connection>> connections_;  // all of them, lent or idle

  mutable std::mutex mutex_;
  std::condition_variable returned_;
  std::vector<Connection*> idle_;  // GUARDED_BY(mutex_)
  Status failure_;                 // GUARDED_BY(mutex_)
};

}  // namespace kvlab::harness
