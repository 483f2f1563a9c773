// Redis's long double rules for INCRBYFLOAT (string2ld and ld2string's
// human-friendly form, src/util.c).
//
// Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kvlab {

// Parses `text` as Redis's string2ld(): strtold over the whole string, no
// leading space, no trailing bytes, not NaN, no overflow or underflow to
// zero ("inf" is accepted, as in Redis). Anything else is not a float.
std::optional<long double> ParseRedisLongDouble(std::string_view text);

// Redis's LD_STR_HUMAN: "%.17Lf" with trailing zeros (and a bare '.')
// removed, and "-0" written as "0".
std::string FormatRedisLongDouble(long double value);

}  // namespace kvlab
