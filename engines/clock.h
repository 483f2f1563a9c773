// The engines' one clock: wall-clock unix time in milliseconds.
//
// Expiry deadlines are absolute unix milliseconds (EXPIREAT/PXAT semantics),
// so every engine, the server (which turns EX/PX into deadlines) and the tests
// must read the same clock. Thread-safe.
#pragma once

#include <cstdint>

namespace kvlab {

// Milliseconds since the unix epoch (std::chrono::system_clock).
int64_t UnixNowMs();

}  // namespace kvlab
