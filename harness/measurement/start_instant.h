// Waiting for a wall-clock instant: how kvlab-load processes on several hosts
// begin their measured run together (kvlab-load --start-at). The instant is
// CLOCK_REALTIME, the one clock that hosts share (kept in step by NTP/chrony,
// and the runner corrects for the offset it measured); throughput and latency
// are still measured with the steady clock (load_clock.h).
//
// Thread safety: pure functions; thread-safe.
#pragma once

#include <atomic>
#include <cstdint>

namespace kvlab::harness {

// CLOCK_REALTIME in nanoseconds since the Unix epoch.
uint64_t RealtimeNowNs();

// Sleeps until CLOCK_REALTIME reaches `instant_ns`, or until `*cancel` (may
// be null) becomes true. Returns how late it returned: now - instant_ns in
// nanoseconds, >= 0 once the instant was reached (at once when it had already
// passed), < 0 when cancelled before it.
int64_t SleepUntilRealtime(uint64_t instant_ns, const std::atomic<bool>* cancel);

}  // namespace kvlab::harness
