#include "server/resp_parser.h"

#include <algorithm>
#include <cstring>

#include "engines/rules/redis_integer.h"

namespace kvlab {
namespace {

// Position of the first `wanted` or NUL byte at or after `from`, or npos.
// Protocol lines are short, so a plain loop beats find_first_of (which calls
// memchr on the set for every byte).
size_t FindByteOrNul(std::string_view buffer, size_t from, char wanted) {
  for (size_t i = from; i < buffer.size(); ++i) {
    char c = buffer[i];
    if (c == wanted || c == '\0') return i;
  }
  return std::string_view::npos;
}

// Protocol lengths are short digit strings; this is ParseRedisInt64 for the
// common case (1..9 digits, no leading zero) and defers to it otherwise, so
// what is accepted stays exactly Redis's string2ll().
std::optional<int64_t> ParseLength(std::string_view text) {
  if (text.empty() || text.size() > 9 || text[0] < '1' || text[0] > '9') {
    return ParseRedisInt64(text);
  }
  int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

// isspace() in the C locale, which sdssplitargs uses to skip blanks.
bool IsBlank(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

bool IsHexDigit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

// sdssplitargs() from Redis's sds.c, over a line that ends at its first NUL
// (Redis hands it a C string). Returns false on unbalanced quotes.
bool SplitInlineArgs(std::string_view line, std::deque<std::string>& storage,
                     std::vector<std::string_view>* args) {
  line = line.substr(0, line.find('\0'));
  const char* p = line.data();
  const char* end = line.data() + line.size();
  auto at = [&](const char* q) { return q < end ? *q : '\0'; };
  while (true) {
    while (p < end && IsBlank(*p)) ++p;
    if (p >= end) return true;
    bool in_double = false;
    bool in_single = false;
    bool done = false;
    std::string& current = storage.emplace_back();
    while (!done) {
      char c = at(p);
      if (in_double || in_single) {
        const char quote = in_double ? '"' : '\'';
        if (in_double && c == '\\' && at(p + 1) == 'x' && IsHexDigit(at(p + 2)) &&
            IsHexDigit(at(p + 3))) {
          current.push_back(static_cast<char>(HexValue(at(p + 2)) * 16 + HexValue(at(p + 3))));
          p += 3;
        } else if (in_double && c == '\\' && at(p + 1)) {
          ++p;
          switch (*p) {
            case 'n':
              current.push_back('\n');
              break;
            case 'r':
              current.push_back('\r');
              break;
            case 't':
              current.push_back('\t');
              break;
            case 'b':
              current.push_back('\b');
              break;
            case 'a':
              current.push_back('\a');
              break;
            default:
              current.push_back(*p);
              break;
          }
        } else if (in_single && c == '\\' && at(p + 1) == '\'') {
          ++p;
          current.push_back('\'');
        } else if (c == quote) {
          // A closing quote must be followed by a blank or the end.
          if (at(p + 1) && !IsBlank(at(p + 1))) return false;
          done = true;
        } else if (!c) {
          return false;
        } else {
          current.push_back(c);
        }
      } else {
        switch (c) {
          case ' ':
          case '\n':
          case '\r':
          case '\t':
          case '\0':
            done = true;
            break;
          case '"':
            in_double = true;
            break;
          case '\'':
            in_single = true;
            break;
          default:
            current.push_back(c);
            break;
        }
      }
      if (p < end) ++p;
    }
    args->push_back(current);
  }
}

}  // namespace

RespParser::Result RespParser::Fail(Result result, std::string text) {
  error_ = "ERR Protocol error: " + std::move(text);
  return result;
}

void RespParser::FinishCommand(size_t next_start) {
  command_start_ = next_start;
  cursor_ = next_start;
  stage_ = Stage::kCommandStart;
  arg_spans_.clear();
}

RespParser::Result RespParser::Parse(std::string_view buffer, std::vector<std::string_view>* args,
                                     bool auth_required) {
  args->clear();
  if (stage_ == Stage::kCommandStart) {
    if (command_start_ >= buffer.size()) return Result::kInputPending;
    if (buffer[command_start_] != '*') return ParseInline(buffer, args);
    stage_ = Stage::kArrayLen;
    cursor_ = command_start_;
  }
  return ParseArray(buffer, args, auth_required);
}

RespParser::Result RespParser::ParseInline(std::string_view buffer,
                                           std::vector<std::string_view>* args) {
  // Resume the search for '\n' where the last call stopped.
  // Redis searches its buffer with strchr(): a NUL byte hides everything
  // after it, so a line with a NUL never completes (until it is too big).
  size_t search_from = cursor_ > command_start_ ? cursor_ : command_start_;
  size_t newline = FindByteOrNul(buffer, search_from, '\n');
  if (newline == std::string_view::npos || buffer[newline] == '\0') {
    cursor_ = newline == std::string_view::npos ? buffer.size() : newline;
    if (buffer.size() - command_start_ > limits_.max_inline_len) {
      return Fail(Result::kInlineTooBig, "too big inline request");
    }
    return Result::kInputPending;
  }
  size_t line_end = newline;
  if (line_end > command_start_ && buffer[line_end - 1] == '\r') --line_end;
  std::string_view line = buffer.substr(command_start_, line_end - command_start_);
  if (!SplitInlineArgs(line, inline_storage_, args)) {
    args->clear();
    return Fail(Result::kBadInlineQuoting, "unbalanced quotes in request");
  }
  FinishCommand(newline + 1);
  return Result::kOk;
}

RespParser::Result RespParser::ParseArray(std::string_view buffer,
                                          std::vector<std::string_view>* args, bool auth_required) {
  // Finds "\r\n" ending the line that starts at cursor_; npos when the line is
  // incomplete (Redis looks for '\r' and then needs one more byte).
  // A NUL before the '\r' hides it, as with strchr() in Redis.
  // Scanning resumes where the last call stopped, so a length line that
  // arrives a byte at a time costs O(n), not O(n^2).
  auto find_cr = [&](size_t from) {
    size_t hit = FindByteOrNul(buffer, std::max(from, line_scan_), '\r');
    if (hit == std::string_view::npos) {
      line_scan_ = buffer.size();
      return std::string_view::npos;
    }
    line_scan_ = hit;  // a CR or NUL: found again at once next time
    return buffer[hit] == '\0' ? std::string_view::npos : hit;
  };
  auto line_end = [&](size_t from) {
    size_t cr = find_cr(from);
    if (cr == std::string_view::npos || cr + 1 >= buffer.size()) return std::string_view::npos;
    return cr;
  };

  if (stage_ == Stage::kArrayLen) {
    size_t cr = line_end(cursor_);
    if (cr == std::string_view::npos) {
      if (find_cr(cursor_) == std::string_view::npos &&
          buffer.size() - cursor_ > limits_.max_inline_len) {
        return Fail(Result::kArrayLenTooLong, "too big mbulk count string");
      }
      return Result::kInputPending;
    }
    std::optional<int64_t> count = ParseLength(buffer.substr(cursor_ + 1, cr - cursor_ - 1));
    if (!count || *count > static_cast<int64_t>(limits_.max_args)) {
      return Fail(Result::kBadArrayLen, "invalid multibulk length");
    }
    if (*count > 10 && auth_required) {
      return Fail(Result::kUnauthArrayLen, "unauthenticated multibulk length");
    }
    cursor_ = cr + 2;
    if (*count <= 0) {  // "*0" and "*-1": a command with no arguments, ignored
      FinishCommand(cursor_);
      return Result::kOk;
    }
    args_left_ = static_cast<uint64_t>(*count);
    if (args_left_ > kKeptArguments) [[unlikely]]
      saw_large_command_ = true;
    arg_spans_.reserve(args_left_ < 1024 ? args_left_ : 1024);
    stage_ = Stage::kBulkLen;
  }

  while (args_left_ > 0) {
    if (stage_ == Stage::kBulkLen) {
      size_t cr = line_end(cursor_);
      if (cr == std::string_view::npos) {
        if (find_cr(cursor_) == std::string_view::npos &&
            buffer.size() - cursor_ > limits_.max_inline_len) {
          return Fail(Result::kBulkLenTooLong, "too big bulk count string");
        }
        return Result::kInputPending;
      }
      if (buffer[cursor_] != '$') {
        // Redis formats with %c into a C string: a NUL byte ends the text.
        std::string text = "expected '$', got '";
        if (buffer[cursor_] != '\0') text += std::string{buffer[cursor_], '\''};
        return Fail(Result::kExpectedBulk, std::move(text));
      }
      std::optional<int64_t> len = ParseLength(buffer.substr(cursor_ + 1, cr - cursor_ - 1));
      if (!len || *len < 0 || static_cast<uint64_t>(*len) > MaxBulkLen()) {
        return Fail(Result::kBadBulkLen, "invalid bulk length");
      }
      if (*len > 16384 && auth_required) {
        return Fail(Result::kUnauthBulkLen, "unauthenticated bulk length");
      }
      bulk_len_ = static_cast<uint64_t>(*len);
      if (bulk_len_ > kLargeArgumentBytes) [[unlikely]]
        saw_large_command_ = true;
      cursor_ = cr + 2;
      stage_ = Stage::kBulkData;
    }
    // Redis skips the two bytes after the payload without checking them.
    if (buffer.size() - cursor_ < bulk_len_ + 2) return Result::kInputPending;
    arg_spans_.emplace_back(cursor_, bulk_len_);
    cursor_ += bulk_len_ + 2;
    --args_left_;
    stage_ = Stage::kBulkLen;
  }

  args->reserve(arg_spans_.size());
  for (const auto& [offset, length] : arg_spans_) args->push_back(buffer.substr(offset, length));
  FinishCommand(cursor_);
  return Result::kOk;
}

void RespParser::Compact(std::string& buffer) {
  size_t drop = command_start_;
  if (drop > 0) {
    buffer.erase(0, drop);
    command_start_ -= drop;
    cursor_ -= drop;
    line_scan_ = line_scan_ > drop ? line_scan_ - drop : 0;
    for (auto& span : arg_spans_) span.first -= drop;
  }
  inline_storage_.clear();
}

void RespParser::ReleaseLargeBuffers(std::string& buffer) {
  if (buffer.capacity() > kKeptBufferBytes && buffer.size() < buffer.capacity() / 4)
    buffer.shrink_to_fit();
  if (arg_spans_.capacity() > kKeptArguments && arg_spans_.size() < kKeptArguments)
    arg_spans_.shrink_to_fit();
  saw_large_command_ = false;
}

}  // namespace kvlab
