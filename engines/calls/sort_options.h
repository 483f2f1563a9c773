// SortOptions: SORT's and SORT_RO's arguments (key [BY pattern] [LIMIT offset
// count] [GET pattern ...] [ASC|DESC] [ALPHA] [STORE destination]) parsed as
// Redis 7.0's sortCommandGeneric() parses them, with its error texts. The
// server parses them to answer an error at once and to choose the
// operations SORT needs; the engine's SORT step (sort_read.h) parses the
// same arguments again when it runs.
//
// Plain value type; the views point into the parsed arguments. Pure
// functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kvlab {

struct SortOptions {
  std::string_view key;
  // The last BY pattern given; Redis uses it only when it sorts.
  std::optional<std::string_view> by;
  // A BY pattern without '*' was given (BY nosort): nothing is sorted, and
  // it stays so even if a later BY has a '*', as in Redis.
  bool dont_sort = false;
  std::vector<std::string_view> gets;  // GET patterns, in order ("#": the element)
  bool desc = false;
  bool alpha = false;
  int64_t limit_start = 0;
  int64_t limit_count = -1;  // -1: to the end
  std::optional<std::string_view> store;

  // Whether running it may read keys other than `key` (BY or GET patterns
  // that substitute the element): its group must then hold every key.
  bool ReadsOtherKeys() const;
};

// Parses args (args[0] the command's name, args[1] the key). `read_only`
// (SORT_RO) refuses STORE as a syntax error, as Redis does. Returns the
// error reply's text ("ERR syntax error", "ERR value is not an integer or
// out of range"), or nullopt when `options` holds the parsed arguments.
// REQUIRES: args.size() >= 2.
std::optional<std::string_view> ParseSortOptions(std::span<const std::string_view> args,
                                                 bool read_only, SortOptions* options);

// A pattern's text up to its first NUL byte: Redis reads patterns with C
// string functions (strchr, strstr) although it copies their full length.
std::string_view PatternCString(std::string_view pattern);

}  // namespace kvlab
