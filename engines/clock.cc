#include "engines/clock.h"

#include <atomic>
#include <chrono>
#include <limits>

namespace kvlab {
namespace {

constexpr int64_t kRealClock = std::numeric_limits<int64_t>::min();
// Relaxed: the replay hands each piece to the engine through a channel or a
// post after setting it, which orders the store before the engine's read.
std::atomic<int64_t> replay_now_ms{kRealClock};

}  // namespace

int64_t UnixNowMs() {
  const int64_t replay = replay_now_ms.load(std::memory_order_relaxed);
  if (replay != kRealClock) [[unlikely]] {
    return replay;
  }
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

void SetReplayClock(std::optional<int64_t> now_ms) {
  replay_now_ms.store(now_ms.value_or(kRealClock), std::memory_order_relaxed);
}

}  // namespace kvlab
