// EventLoopPooledClient: Lettuce + commons-pool2 as Lettuce runs it — a pool
// (connection_pool.h: LIFO idle, `connections` at most, default 8, blocking
// borrow) of connections owned by event-loop threads, given to the loops
// round-robin. Each operation borrows a connection, submits its command to
// that connection's loop and blocks until the loop completes it, then
// returns the connection.
//
// Thread safety: thread-safe.
#pragma once

#include <memory>
#include <vector>

#include "harness/clients/connection_pool.h"
#include "harness/clients/event_loop.h"
#include "harness/clients/synchronous_client.h"

namespace kvlab::harness {

class EventLoopPooledClient final : public SynchronousClient {
 public:
  explicit EventLoopPooledClient(const StrategyOptions& options);
  ~EventLoopPooledClient() override;
  EventLoopPooledClient(const EventLoopPooledClient&) = delete;
  EventLoopPooledClient& operator=(const EventLoopPooledClient&) = delete;

  Status Connect() override;
  void Interrupt() override;
  // The loop thread sends and reads; the caller waits (its phase on entry).
  Status RoundTrip(std::string_view request, ReplyPtr* reply, LoadPhaseClock* phases) override;

  int borrowed() const { return pool_.borrowed(); }
  int64_t loop_wakeups() const override { return static_cast<int64_t>(loops_.wakeups()); }

 private:
  // A pooled connection: the channel and the loop that owns it.
  struct PooledChannel {
    std::unique_ptr<EventLoopChannel> channel;
    EventLoop* loop;
  };

  const StrategyOptions options_;
  EventLoopGroup loops_;
  std::vector<std::unique_ptr<PooledChannel>> channels_;  // all of them, lent or idle
  ConnectionPool<PooledChannel> pool_;
};

}  // namespace kvlab::harness
