// RespReplyValidator: checks that a byte string is a sequence of complete,
// well-formed RESP2 or RESP3 replies (a session switches with HELLO 3), and
// counts them. Written from the protocol
// specification, independently of the server's ReplyWriter, so that the
// fuzzer's verdict does not share the code it judges.
//
// RESP2 reply forms accepted:
//   +<line>\r\n          simple string (no CR or LF inside)
//   -<line>\r\n          error (non-empty, no CR or LF inside)
//   :<int64>\r\n         integer (optional '-', no leading zeros, fits int64)
//   $<n>\r\n<n bytes>\r\n  bulk string, n >= 0;  $-1\r\n  null bulk
//   *<n>\r\n<n replies>  array, n >= 0;          *-1\r\n  null array
// RESP3 forms accepted (those Redis 7.0 writes for kvlab's commands):
//   _\r\n                null
//   ,<double>\r\n        double: a decimal or exponent form, inf, -inf, nan
//   #t\r\n  #f\r\n       boolean
//   %<n>\r\n<2n replies> map;  ~<n>\r\n<n replies>  set
//   =<n>\r\n<fmt>:<n-4 bytes>\r\n  verbatim string, fmt 3 bytes
//
// Pure functions; thread-safe.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kvlab::fuzz {

struct ReplyCheck {
  bool ok = true;
  size_t replies = 0;              // top-level replies found
  std::vector<size_t> reply_ends;  // offset just past each top-level reply
  std::string error;               // what is wrong and at which offset, when !ok
};

class RespReplyValidator {
 public:
  // Every byte of `bytes` must belong to a complete top-level reply.
  static ReplyCheck CheckAll(std::string_view bytes) {
    RespReplyValidator validator(bytes);
    ReplyCheck check;
    while (validator.pos_ < bytes.size()) {
      if (!validator.Reply(0)) {
        check.ok = false;
        check.error = validator.error_;
        return check;
      }
      ++check.replies;
      check.reply_ends.push_back(validator.pos_);
    }
    return check;
  }

 private:
  // Replies nest only through arrays; kvlab's deepest reply (COMMAND) is 3
  // levels, so anything deeper than this is a malformed count.
  static constexpr int kMaxDepth = 32;

  explicit RespReplyValidator(std::string_view bytes) : bytes_(bytes) {}

  bool Fail(std::string what) {
    error_ = what + " at offset " + std::to_string(pos_);
    return false;
  }

  // The line after the type byte, up to (not including) "\r\n"; advances
  // past the CRLF. Fails if there is no CRLF or a bare CR/LF inside.
  bool Line(std::string_view* line) {
    size_t start = pos_;
    size_t crlf = bytes_.find("\r\n", start);
    if (crlf == std::string_view::npos) return Fail("line without CRLF");
    std::string_view text = bytes_.substr(start, crlf - start);
    if (text.find_first_of("\r\n") != std::string_view::npos) return Fail("bare CR or LF in line");
    *line = text;
    pos_ = crlf + 2;
    return true;
  }

  static bool ParseInt64(std::string_view text, int64_t* value) {
    if (text.empty()) return false;
    std::string_view digits = text[0] == '-' ? text.substr(1) : text;
    if (digits.empty() || (digits.size() > 1 && digits[0] == '0')) return false;
    if (text == "-0") return false;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
    return ec == std::errc() && end == text.data() + text.size();
  }

  bool Reply(int depth) {
    if (depth > kMaxDepth) return Fail("arrays nested too deep");
    if (pos_ >= bytes_.size()) return Fail("truncated reply");
    char type = bytes_[pos_];
    if (std::string_view("+-:$*_,#%~=").find(type) == std::string_view::npos) {
      return Fail("unknown reply type byte " + std::to_string(static_cast<unsigned char>(type)));
    }
    ++pos_;
    std::string_view line;
    if (!Line(&line)) return false;
    int64_t n = 0;
    switch (type) {
      case '+':
        return true;
      case '-':
        return line.empty() ? Fail("empty error") : true;
      case ':':
        return ParseInt64(line, &n) ? true : Fail("bad integer '" + std::string(line) + "'");
      case '_':
        return line.empty() ? true : Fail("null with a payload");
      case ',':
        return ValidDouble(line) ? true : Fail("bad double '" + std::string(line) + "'");
      case '#':
        return line == "t" || line == "f" ? true : Fail("bad boolean '" + std::string(line) + "'");
      case '$':
      case '=': {
        if (!ParseInt64(line, &n) || n < (type == '$' ? -1 : 4)) {
          return Fail("bad string length '" + std::string(line) + "'");
        }
        if (n == -1) return true;
        if (bytes_.size() - pos_ < static_cast<uint64_t>(n) + 2) return Fail("truncated string");
        if (type == '=' && bytes_[pos_ + 3] != ':') return Fail("verbatim string without format");
        pos_ += static_cast<size_t>(n);
        if (bytes_.substr(pos_, 2) != "\r\n") return Fail("string not followed by CRLF");
        pos_ += 2;
        return true;
      }
      default: {  // '*', '%', '~'
        const int64_t least = type == '*' ? -1 : 0;
        if (!ParseInt64(line, &n) || n < least) {
          return Fail("bad aggregate length '" + std::string(line) + "'");
        }
        if (type == '%') n *= 2;  // keys and values
        for (int64_t i = 0; i < n; ++i) {
          if (!Reply(depth + 1)) return false;
        }
        return true;
      }
    }
  }

  // A RESP3 double: what printf's %.17g can write, or inf/-inf/nan.
  static bool ValidDouble(std::string_view text) {
    if (text == "inf" || text == "-inf" || text == "nan" || text == "-nan") return true;
    if (text.empty() || text.find_first_not_of("0123456789+-.e") != std::string_view::npos) {
      return false;
    }
    double value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return ec == std::errc() && end == text.data() + text.size();
  }

  std::string_view bytes_;
  size_t pos_ = 0;
  std::string error_;
};

}  // namespace kvlab::fuzz
