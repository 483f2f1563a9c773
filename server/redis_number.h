// Integer parsing exactly as Redis 7.0 does it (string2ll in src/util.c):
// optional '-', then digits with no leading zero, no '+', no spaces, at most
// 20 characters, within int64. Used for protocol lengths and for every
// integer argument, so kvlab accepts and rejects exactly what Redis does.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace kvlab {

std::optional<int64_t> ParseRedisInt64(std::string_view text);

}  // namespace kvlab
