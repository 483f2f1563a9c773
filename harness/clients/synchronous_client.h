// SynchronousClient: the application-thread loop shared by the strategies in
// which an operation is one blocking round trip (pooled and shared): build a
// request, Call() it, check the reply, record the latency. In open loop
// (rate > 0) each request has an intended send time on the thread's arrival
// schedule (uniform or Poisson, random phase) and its latency is measured
// from that time, so a stalled server shows up in the latencies instead of
// silently slowing the schedule (coordinated omission). Waits are absolute
// clock_nanosleep sleeps, never spins.
//
// Thread safety: RunThread runs on many threads at once; Call must be
// thread-safe in subclasses.
#pragma once

#include <string_view>

#include "harness/clients/client_strategy.h"

namespace kvlab::harness {

class SynchronousClient : public ClientStrategy {
 public:
  Status RunThread(ThreadLoad& load) final;

  // One round trip: sends `request` (one RESP command) and returns its
  // reply. Thread-safe. REQUIRES: Connect() succeeded.
  virtual Status Call(std::string_view request, ReplyPtr* reply) = 0;
};

// Sleeps until the steady clock reads `deadline_ns` or *stop is set.
void SleepUntil(uint64_t deadline_ns, const std::atomic<bool>& stop);

}  // namespace kvlab::harness
