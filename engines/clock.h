// The engines' one clock: wall-clock unix time in milliseconds.
//
// Expiry deadlines are absolute unix milliseconds (EXPIREAT/PXAT semantics),
// so every engine, the server (which turns EX/PX into deadlines) and the tests
// must read the same clock. Thread-safe.
//
// A replay of the append-only file sets the clock to each record's own time
// (the clock reading its write's batch decided expiry with), so that every
// expiry decision of the replay is the one the write made: a key that had
// expired when a later write touched it is missing in the replay too, and one
// that was alive then is alive. Only the replay sets it, before the server
// accepts any client.
#pragma once

#include <cstdint>
#include <optional>

namespace kvlab {

// Milliseconds since the unix epoch (std::chrono::system_clock), or the
// replay's clock while one is set.
int64_t UnixNowMs();

// Sets (a value) or clears (nullopt) the replay's clock for every thread.
// A batch already running keeps the reading it took.
void SetReplayClock(std::optional<int64_t> now_ms);

}  // namespace kvlab
