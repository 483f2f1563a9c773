// How Redis 7.0 reads a sorted set's score: string2d()'s rules (a score, a
// weight). Replies write scores with ReplyList::Double (Redis's
// addReplyDouble), a bulk string in RESP2 and a double in RESP3.
//
// Pure functions; thread-safe.
#pragma once

#include <cerrno>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>
#include <string_view>

namespace kvlab {

// string2d(): strtod over all the bytes, no leading space, no overflow,
// no underflow to zero, not NaN.
inline bool ParseZSetScore(std::string_view arg, double* score) {
  if (arg.empty() || std::isspace(static_cast<unsigned char>(arg[0]))) return false;
  const std::string text(arg);
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || std::isnan(value)) return false;
  if (errno == ERANGE && (value == HUGE_VAL || value == -HUGE_VAL || value == 0)) return false;
  *score = value;
  return true;
}

}  // namespace kvlab
