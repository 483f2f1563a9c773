#include "harness/measurement/start_instant.h"

#include <time.h>

#include <algorithm>

namespace kvlab::harness {
namespace {

// How often a sleeper looks at `cancel`: Ctrl-C must not wait for a far instant.
constexpr uint64_t kCancelCheckNs = 50'000'000;

}  // namespace

uint64_t RealtimeNowNs() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(now.tv_nsec);
}

int64_t SleepUntilRealtime(uint64_t instant_ns, const std::atomic<bool>* cancel) {
  for (uint64_t now = RealtimeNowNs(); now < instant_ns; now = RealtimeNowNs()) {
    if (cancel != nullptr && cancel->load()) return -static_cast<int64_t>(instant_ns - now);
    // An absolute CLOCK_REALTIME sleep also follows a clock step made while asleep.
    const uint64_t wake = std::min(instant_ns, now + kCancelCheckNs);
    timespec until{static_cast<time_t>(wake / 1'000'000'000u),
                   static_cast<long>(wake % 1'000'000'000u)};
    clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &until, nullptr);
  }
  return static_cast<int64_t>(RealtimeNowNs() - instant_ns);
}

}  // namespace kvlab::harness
