// ClientPhases: where a load thread's own time goes, the client's side of
// the server's INFO stages. A thread's loop is split into four phases,
// every nanosecond of it charged to exactly one:
//   build   — making the next requests (the workload's AppendNext);
//   send    — write()/send() of what is ready;
//   wait    — until a reply, the next intended send time or a free
//             connection comes (in poll, a blocking read or a waiter);
//   receive — read(), parsing the replies, checking and recording them.
// Summed over a window's threads and divided by its operations they are
// microseconds per operation that add up to threads x window / ops, so a
// client-bound point shows which of them the client spends its time in.
// Every strategy measures them (dedicated_client.cc, synchronous_client.h);
// rows of other load generators leave them absent, not zero.
//
// PhaseClock costs one clock read per phase change.
//
// Thread safety: a PhaseClock belongs to one thread; it charges its
// thread's ThreadRecorder (AddPhaseNs), which other threads read.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "harness/measurement/load_clock.h"

namespace kvlab::harness {

enum class ClientPhase : uint8_t { kBuild = 0, kSend, kWait, kReceive };
inline constexpr size_t kClientPhaseCount = 4;

// "build", "send", "wait", "receive": the point record's client_<name>_us.
const std::array<const char*, kClientPhaseCount>& ClientPhaseNames();

// Nanoseconds per phase.
using PhaseNs = std::array<uint64_t, kClientPhaseCount>;

// Charges the time between phase changes to the phase that was running.
// `Sink` has AddPhaseNs(ClientPhase, uint64_t) (ThreadRecorder).
template <class Sink>
class PhaseClock {
 public:
  PhaseClock(Sink* sink, ClientPhase first) : sink_(sink), current_(first), since_(NowNs()) {}
  PhaseClock(const PhaseClock&) = delete;
  PhaseClock& operator=(const PhaseClock&) = delete;

  // Ends the running phase now and starts `next`.
  void Enter(ClientPhase next) {
    const uint64_t now = NowNs();
    sink_->AddPhaseNs(current_, now - since_);
    current_ = next;
    since_ = now;
  }

 private:
  Sink* const sink_;
  ClientPhase current_;
  uint64_t since_;
};

}  // namespace kvlab::harness
