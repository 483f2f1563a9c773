// StageClockNs(): the one clock every stage timestamp of a sampled request
// is read from (server/stage_stats.h), on whichever thread takes it — the
// I/O thread, a shard thread or an owner thread — so that a time taken on
// one thread can be subtracted from a time taken on another.
//
// steady_clock (CLOCK_MONOTONIC through the vDSO, about 20 ns a reading
// here), not rdtsc: it is the same on every core without a calibration,
// never steps back, and a sampled request reads it about ten times, so its
// cost is noise at any sampling rate that keeps the overhead small anyway.
//
// Thread-safe (a pure function of the kernel's clock).
#pragma once

#include <time.h>

#include <cerrno>
#include <chrono>
#include <cstdint>

namespace kvlab {

// Nanoseconds since an arbitrary, fixed origin; never 0 in a running system
// (0 is "not taken" in the stage records).
inline int64_t StageClockNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Passes `ns` on the clock inside a stage: the known-answer tests' injected
// stage time. It sleeps until 200 µs before the end and spins the rest, so
// that it ends on time (a sleep alone overshoots by the timer slack and the
// wake-up) and uses little CPU: a thread that spun for milliseconds is the
// one the scheduler preempts next (Linux's fair scheduler owes its CPU to
// others), which moved a 2 ms spin's cost into the next stage's send() on a
// busy machine.
inline void SpinStageClock(int64_t ns) {
  constexpr int64_t kSpinTailNs = 200'000;
  const int64_t until = StageClockNs() + ns;
  if (ns > kSpinTailNs) {
    const int64_t wake = until - kSpinTailNs;
    timespec at{static_cast<time_t>(wake / 1'000'000'000), static_cast<long>(wake % 1'000'000'000)};
    while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, nullptr) == EINTR) {
    }
  }
  while (StageClockNs() < until) {
  }
}

}  // namespace kvlab
