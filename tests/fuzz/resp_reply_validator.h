// RespReplyValidator: checks that a byte string is a sequence of complete,
// well-formed RESP2 replies, and counts them. Written from the protocol
// specification, independently of the server's ReplyWriter, so that the
// fuzzer's verdict does not share the code it judges.
//
// RESP2 reply forms accepted:
//   +<line>\r\n          simple string (no CR or LF inside)
//   -<line>\r\n          error (non-empty, no CR or LF inside)
//   :<int64>\r\n         integer (optional '-', no leading zeros, fits int64)
//   $<n>\r\n<n bytes>\r\n  bulk string, n >= 0;  $-1\r\n  null bulk
//   *<n>\r\n<n replies>  array, n >= 0;          *-1\r\n  null array
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
  size_t replies = 0;   // top-level replies found
  std::vector<size_t> reply_ends;  // offset just past each top-level reply
  std::string error;    // what is wrong and at which offset, when !ok
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
    if (std::string_view("+-:$*").find(type) == std::string_view::npos) {
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
      case '$':
        if (!ParseInt64(line, &n) || n < -1) return Fail("bad bulk length '" + std::string(line) + "'");
        if (n == -1) return true;
        if (bytes_.size() - pos_ < static_cast<uint64_t>(n) + 2) return Fail("truncated bulk");
        pos_ += static_cast<size_t>(n);
        if (bytes_.substr(pos_, 2) != "\r\n") return Fail("bulk not followed by CRLF");
        pos_ += 2;
        return true;
      default:  // '*'
        if (!ParseInt64(line, &n) || n < -1) return Fail("bad array length '" + std::string(line) + "'");
        for (int64_t i = 0; i < n; ++i) {
          if (!Reply(depth + 1)) return false;
        }
        return true;
    }
  }

  std::string_view bytes_;
  size_t pos_ = 0;
  std::string error_;
};

}  // namespace kvlab::fuzz
