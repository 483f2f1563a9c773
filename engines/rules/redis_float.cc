#include "engines/rules/redis_float.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace kvlab {
namespace {

// Redis's MAX_LONG_DOUBLE_CHARS.
constexpr size_t kMaxLongDoubleChars = 5 * 1024;

}  // namespace

std::optional<long double> ParseRedisLongDouble(std::string_view text) {
  char buf[kMaxLongDoubleChars];
  if (text.empty() || text.size() >= sizeof buf) return std::nullopt;
  std::memcpy(buf, text.data(), text.size());
  buf[text.size()] = '\0';
  errno = 0;
  char* end = nullptr;
  const long double value = std::strtold(buf, &end);
  if (std::isspace(static_cast<unsigned char>(buf[0])) || *end != '\0' ||
      static_cast<size_t>(end - buf) != text.size() ||
      (errno == ERANGE &&
       (value == HUGE_VALL || value == -HUGE_VALL || std::fpclassify(value) == FP_ZERO)) ||
      errno == EINVAL || std::isnan(value)) {
    return std::nullopt;
  }
  return value;
}

std::string FormatRedisLongDouble(long double value) {
  char buf[kMaxLongDoubleChars];
  int length = std::snprintf(buf, sizeof buf, "%.17Lf", value);
  if (length < 0 || static_cast<size_t>(length) + 1 > sizeof buf) return {};
  if (std::memchr(buf, '.', static_cast<size_t>(length)) != nullptr) {
    while (buf[length - 1] == '0') --length;
    if (buf[length - 1] == '.') --length;
  }
  if (length == 2 && buf[0] == '-' && buf[1] == '0') return "0";
  return std::string(buf, static_cast<size_t>(length));
}

}  // namespace kvlab
