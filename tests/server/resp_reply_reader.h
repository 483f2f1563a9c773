// Splits a byte stream of RESP2 or RESP3 replies into whole replies, for
// tests that compare servers reply by reply.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kvlab::test {

// Length of the complete reply at the front of `bytes`, or 0 if incomplete.
inline size_t CompleteReplyLength(std::string_view bytes, size_t pos = 0) {
  if (pos >= bytes.size()) return 0;
  size_t crlf = bytes.find("\r\n", pos);
  if (crlf == std::string_view::npos) return 0;
  char type = bytes[pos];
  size_t after_line = crlf + 2;
  // One line: RESP2's simple types, RESP3's null, double, boolean, big number.
  if (type == '+' || type == '-' || type == ':' || type == '_' || type == ',' || type == '#' ||
      type == '(') {
    return after_line - pos;
  }
  long long n = std::stoll(std::string(bytes.substr(pos + 1, crlf - pos - 1)));
  if (type == '$' || type == '=' || type == '!') {  // bulk, verbatim, blob error
    if (n < 0) return after_line - pos;
    if (bytes.size() < after_line + n + 2) return 0;
    return after_line + n + 2 - pos;
  }
  if (type == '%' || type == '|') n *= 2;  // a map's (or attribute's) keys and values
  // '*', '~', '>' (push), '%'
  size_t cursor = after_line;
  for (long long i = 0; i < n; ++i) {
    size_t len = CompleteReplyLength(bytes, cursor);
    if (len == 0) return 0;
    cursor += len;
  }
  return cursor - pos;
}

inline std::vector<std::string> SplitReplies(std::string_view bytes) {
  std::vector<std::string> replies;
  size_t pos = 0;
  while (pos < bytes.size()) {
    size_t len = CompleteReplyLength(bytes, pos);
    if (len == 0) {
      replies.emplace_back(bytes.substr(pos));
      break;
    }
    replies.emplace_back(bytes.substr(pos, len));
    pos += len;
  }
  return replies;
}

}  // namespace kvlab::test
