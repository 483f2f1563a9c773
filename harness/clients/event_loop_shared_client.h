// EventLoopSharedClient: Lettuce's shared connection as Lettuce runs it — ONE
// connection, owned by an event-loop thread, used by every application
// thread. A caller submits its command to the loop and blocks on its own
// waiter; the loop writes (per command or batched, --flush), reads, decodes
// and completes the callers in FIFO order. With --loop-threads > 1 the other
// loops simply have no connection (as in Netty: a channel lives on one loop).
//
// Thread safety: thread-safe.
#pragma once

#include <memory>

#include "harness/clients/event_loop.h"
#include "harness/clients/synchronous_client.h"

namespace kvlab::harness {

class EventLoopSharedClient final : public SynchronousClient {
 public:
  explicit EventLoopSharedClient(const StrategyOptions& options);
  ~EventLoopSharedClient() override;
  EventLoopSharedClient(const EventLoopSharedClient&) = delete;
  EventLoopSharedClient& operator=(const EventLoopSharedClient&) = delete;

  Status Connect() override;
  void Interrupt() override;
  // The loop thread sends and reads; the caller waits (its phase on entry).
  Status RoundTrip(std::string_view request, ReplyPtr* reply, LoadPhaseClock* phases) override;

  int64_t loop_wakeups() const override { return static_cast<int64_t>(loops_.wakeups()); }

 private:
  const StrategyOptions options_;
  EventLoopGroup loops_;
  std::unique_ptr<EventLoopChannel> channel_;
  EventLoop* loop_ = nullptr;  // the loop that owns channel_
};

}  // namespace kvlab::harness
