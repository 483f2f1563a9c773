// The harness's one clock: std::chrono::steady_clock (monotonic, nanosecond
// resolution on Linux), as integer nanoseconds. Throughput and latency are
// never derived from coarse ticks. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>

namespace kvlab::harness {

inline uint64_t NowNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

}  // namespace kvlab::harness
