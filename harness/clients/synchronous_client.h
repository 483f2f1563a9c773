// SynchronousClient: the application-thread loop shared by the strategies in
// which an operation is one blocking round trip (pooled and shared): build a
// request, Call() it, check the reply, record the latency. In open loop
// (rate > 0) each request has an intended send time on the thread's arrival
// schedule (uniform or Poisson, random phase) and its latency is measured
// from that time, so a stalled server shows up in the latencies instead of
// silently slowing the schedule (coordinated omission). Waits are absolute
// clock_nanosleep sleeps, never spins.
//
// The loop charges its thread's time to the client phases (client_phases.h):
// building a request is build, the round trip is wait unless the strategy
// says more (RoundTrip's `phases`: the pooled strategy's own write() is
// send, its read() wait and its parsing receive; the shared strategy's
// caller that writes the batch is in send), and checking and recording the
// reply is receive. Where another thread does the I/O (the shared reader,
// the event loops), the load thread is waiting, and that is what it reports.
//
// Thread safety: RunThread runs on many threads at once; RoundTrip must be
// thread-safe in subclasses.
#pragma once

#include <string_view>

#include "harness/clients/client_strategy.h"
#include "harness/measurement/client_phases.h"
#include "harness/measurement/thread_recorder.h"

namespace kvlab::harness {

// A load thread's phase clock, charging its ThreadRecorder.
using LoadPhaseClock = PhaseClock<ThreadRecorder>;

class SynchronousClient : public ClientStrategy {
 public:
  Status RunThread(ThreadLoad& load) final;

  // One round trip: sends `request` (one RESP command) and returns its
  // reply. Thread-safe. REQUIRES: Connect() succeeded.
  Status Call(std::string_view request, ReplyPtr* reply) {
    return RoundTrip(request, reply, nullptr);
  }

  // Call(), charging the calling load thread's time to `phases` (its clock,
  // in the wait phase on entry) where the strategy tells its steps apart;
  // null outside a load thread.
  virtual Status RoundTrip(std::string_view request, ReplyPtr* reply, LoadPhaseClock* phases) = 0;
};

// Enters `phase` on `phases` when the caller has a clock.
inline void EnterPhase(LoadPhaseClock* phases, ClientPhase phase) {
  if (phases != nullptr) phases->Enter(phase);
}

// Sleeps until the steady clock reads `deadline_ns` or *stop is set.
void SleepUntil(uint64_t deadline_ns, const std::atomic<bool>& stop);

}  // namespace kvlab::harness
