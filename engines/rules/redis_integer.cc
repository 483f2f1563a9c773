#include "engines/rules/redis_integer.h"

#include <limits>

namespace kvlab {

std::optional<int64_t> ParseRedisInt64(std::string_view text) {
  // Redis's LONG_STR_SIZE: 20 bytes hold "-9223372036854775808"; longer
  // strings are rejected before any digit is read.
  constexpr size_t kMaxLength = 20;
  if (text.empty() || text.size() > kMaxLength) return std::nullopt;
  if (text == "0") return 0;

  size_t pos = 0;
  const bool negative = text[0] == '-';
  if (negative) ++pos;
  if (pos == text.size() || text[pos] < '1' || text[pos] > '9') return std::nullopt;

  uint64_t magnitude = 0;
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  for (; pos < text.size(); ++pos) {
    const char c = text[pos];
    if (c < '0' || c > '9') return std::nullopt;
    const unsigned digit = static_cast<unsigned>(c - '0');
    if (magnitude > kMax / 10 || magnitude * 10 > kMax - digit) return std::nullopt;
    magnitude = magnitude * 10 + digit;
  }

  constexpr uint64_t kMaxPositive = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (negative) {
    if (magnitude > kMaxPositive + 1) return std::nullopt;
    return magnitude == kMaxPositive + 1 ? std::numeric_limits<int64_t>::min()
                                         : -static_cast<int64_t>(magnitude);
  }
  if (magnitude > kMaxPositive) return std::nullopt;
  return static_cast<int64_t>(magnitude);
}

std::optional<int64_t> CheckedAdd(int64_t value, int64_t delta) {
  int64_t sum = 0;
  if (__builtin_add_overflow(value, delta, &sum)) return std::nullopt;
  return sum;
}

}  // namespace kvlab
