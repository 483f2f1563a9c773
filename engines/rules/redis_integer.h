// Redis's integer rules for string values (INCR/INCRBY/DECR/DECRBY).
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace kvlab {

// Parses `text` exactly as Redis's string2ll() (src/util.c) does: an optional
// '-', then either the single digit "0" or a digit 1-9 followed by digits, no
// spaces, no '+', no leading zeros, no "-0", fewer than 21 bytes, and inside
// int64. Anything else (including "") is not an integer.
std::optional<int64_t> ParseRedisInt64(std::string_view text);

// value + delta, or nullopt when the sum would overflow int64 (Redis:
// "increment or decrement would overflow").
std::optional<int64_t> CheckedAdd(int64_t value, int64_t delta);

}  // namespace kvlab
