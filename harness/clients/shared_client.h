// SharedClient: Lettuce's shared connection, over direct blocking I/O. ONE
// connection carries every application thread's requests. A caller appends
// its request to the outgoing buffer and its waiter to the FIFO of pending
// callers — both under one lock, so the FIFO order is the order of the bytes
// on the wire. If no write is in flight, the caller becomes the writer: it
// sends the buffer from its own thread, and keeps sending whatever other
// callers appended meanwhile until the buffer is empty (so concurrent
// callers are batched, and nobody is woken to write). A reader thread parses
// replies and hands each to the oldest pending caller (RESP answers in
// order). This is where a request crosses threads: reader -> caller (the
// waiter). `--io event-loop` has the Lettuce/Netty variant, in which an
// event-loop thread writes too (event_loop_shared_client.h).
//
// Thread safety: thread-safe.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <thread>

#include "base/mutex.h"
#include "harness/clients/reply_waiter.h"
#include "harness/clients/synchronous_client.h"

namespace kvlab::harness {

class SharedClient final : public SynchronousClient {
 public:
  explicit SharedClient(const StrategyOptions& options);
  ~SharedClient() override;
  SharedClient(const SharedClient&) = delete;
  SharedClient& operator=(const SharedClient&) = delete;

  Status Connect() override;
  void Interrupt() override;
  Status RoundTrip(std::string_view request, ReplyPtr* reply, LoadPhaseClock* phases) override;

  // How many writes were made (a write carries >= 1 request), for tests and
  // for reporting the batching achieved.
  uint64_t writes() const;

 private:
  // Sends the outgoing buffer until it is empty. REQUIRES: this thread set
  // writing_ (it holds the writer role until it clears it).
  void WriteUntilDrained();
  void ReaderLoop();
  void Fail(const Status& status);
  void Close();

  const StrategyOptions options_;
  std::unique_ptr<Connection> connection_;
  std::thread reader_;

  mutable Mutex mutex_;
  std::string outgoing_ GUARDED_BY(mutex_);              // queued, not yet sent
  bool writing_ GUARDED_BY(mutex_) = false;              // some caller is sending
  std::deque<ReplyWaiter*> pending_ GUARDED_BY(mutex_);  // written or queued, not answered
  Status failure_ GUARDED_BY(mutex_);
  bool closing_ GUARDED_BY(mutex_) = false;
  uint64_t writes_ GUARDED_BY(mutex_) = 0;
};

}  // namespace kvlab::harness
