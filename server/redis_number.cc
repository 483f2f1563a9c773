#include "server/redis_number.h"

namespace kvlab {

std::optional<int64_t> ParseRedisInt64(std::string_view text) {
  // LONG_STR_SIZE in Redis: 21 bytes including the terminator.
  if (text.empty() || text.size() >= 21) return std::nullopt;
  if (text.size() == 1 && text[0] == '0') return 0;
  size_t i = 0;
  bool negative = false;
  if (text[0] == '-') {
    negative = true;
    i = 1;
    if (text.size() == 1) return std::nullopt;
  }
  if (text[i] < '1' || text[i] > '9') return std::nullopt;
  uint64_t value = 0;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c < '0' || c > '9') return std::nullopt;
    uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  if (negative) {
    if (value > static_cast<uint64_t>(INT64_MAX) + 1) return std::nullopt;
    return static_cast<int64_t>(0 - value);
  }
  if (value > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  return static_cast<int64_t>(value);
}

}  // namespace kvlab
