// The harness's one clock: std::chrono::steady_clock (CLOCK_MONOTONIC on
// Linux, nanosecond resolution), as integer nanoseconds, and a precise sleep
// on that same clock. Throughput and latency are never derived from coarse
// ticks. Thread-safe.
#pragma once

#include <time.h>

#include <cerrno>
#include <chrono>
#include <cstdint>

namespace kvlab::harness {

inline uint64_t NowNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

// Sleeps until NowNs() reads at least `deadline_ns`, with the kernel's
// absolute-time sleep (no spinning; sub-millisecond deadlines are honoured
// to the timer slack, ~50 µs by default).
inline void SleepUntilNs(uint64_t deadline_ns) {
  const timespec deadline{static_cast<time_t>(deadline_ns / 1'000'000'000),
                          static_cast<long>(deadline_ns % 1'000'000'000)};
  while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nullptr) == EINTR) {
  }
}

}  // namespace kvlab::harness
