// RespParser: a resumable parser for client requests in RESP2 — arrays of
// bulk strings ("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n") and Redis inline commands
// ("GET k\r\n", split like Redis's sdssplitargs, quotes and escapes included).
//
// The parser reads the caller's buffer without copying it: it keeps a cursor
// and the state of a half-read command, so a buffer may hold many pipelined
// commands and the rest of a command can arrive in later reads. Bulk
// arguments are returned as views into the buffer; only inline arguments that
// had quotes or escapes are materialised, in storage the parser owns.
//
// Limits and error texts are Redis 7.0's (processMultibulkBuffer and
// processInlineBuffer in src/networking.c).
//
// Not thread-safe: one parser per connection, used from one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engines/rules/proto_max_bulk_len.h"

namespace kvlab {

class RespParser {
 public:
  enum class Result : uint8_t {
    kOk,                // a whole command was parsed (its args may be empty: skip it)
    kInputPending,      // need more bytes; call again after appending to the buffer
    kBadArrayLen,       // "*x\r\n": not a number, or above the argument limit
    kBadBulkLen,        // "$x\r\n": not a number, negative, or above the bulk limit
    kExpectedBulk,      // an array element that does not start with '$'
    kArrayLenTooLong,   // no "\r" within the inline limit after '*'
    kBulkLenTooLong,    // no "\r" within the inline limit after '$'
    kInlineTooBig,      // an inline line longer than the inline limit
    kBadInlineQuoting,  // unbalanced quotes in an inline command
    kUnauthArrayLen,    // more than 10 arguments before AUTH (Redis refuses them)
    kUnauthBulkLen,     // a bulk over 16384 bytes before AUTH
  };

  struct Limits {
    // The longest bulk string; unset: the process's proto-max-bulk-len,
    // read at every bulk header, so CONFIG SET reaches open connections.
    std::optional<uint64_t> max_bulk_len;
    // Arguments per command. Redis 7.0 allows up to INT_MAX (older releases
    // 1024*1024); the connection's query-buffer limit bounds memory anyway.
    uint64_t max_args = 2147483647;
    size_t max_inline_len = 64 * 1024;  // PROTO_INLINE_MAX_SIZE
  };

  RespParser() = default;
  explicit RespParser(Limits limits) : limits_(limits) {}
  RespParser(const RespParser&) = delete;
  RespParser& operator=(const RespParser&) = delete;

  // Parses the next command of `buffer`, which holds every byte received and
  // not yet Compact()ed (the parser remembers how far it got). On kOk, *args
  // is replaced by the command's arguments; the views stay valid until the
  // buffer changes or Compact() is called. `auth_required` applies Redis's
  // stricter limits for clients that have not authenticated yet.
  // After an error the parser must not be used again (the client is closed).
  Result Parse(std::string_view buffer, std::vector<std::string_view>* args,
               bool auth_required = false);

  // Bytes at the front of the buffer that belong to commands already
  // returned; the caller may erase them once it no longer needs the views.
  size_t consumed() const { return command_start_; }

  // Erases consumed() bytes from `buffer` and rebases the parser's state on
  // what remains. Invalidates every view returned so far.
  void Compact(std::string& buffer);

  // A command far larger than usual (more than kKeptArguments arguments, or
  // an argument of more than kLargeArgumentBytes) grows the buffer and the
  // parser's lists by megabytes. Once it is consumed, the caller gives the
  // memory back (Redis shrinks a big idle query buffer likewise), keeping
  // what ordinary pipelines need; the flag costs a parse one comparison.
  // Values up to 4 MB keep their buffer: a workload of such SETs would
  // otherwise grow it again for every command.
  bool saw_large_command() const { return saw_large_command_; }
  void ReleaseLargeBuffers(std::string& buffer);
  static constexpr size_t kKeptBufferBytes = 256 * 1024;
  static constexpr size_t kKeptArguments = 4096;
  static constexpr size_t kLargeArgumentBytes = 4 * 1024 * 1024;

  // The client-facing error text for the last error result, without the
  // leading '-' and trailing CRLF: "ERR Protocol error: invalid bulk length".
  const std::string& error() const { return error_; }

 private:
  enum class Stage : uint8_t { kCommandStart, kArrayLen, kBulkLen, kBulkData };

  Result ParseInline(std::string_view buffer, std::vector<std::string_view>* args);
  Result ParseArray(std::string_view buffer, std::vector<std::string_view>* args,
                    bool auth_required);
  Result Fail(Result result, std::string text);
  void FinishCommand(size_t next_start);
  uint64_t MaxBulkLen() const {
    return limits_.max_bulk_len ? *limits_.max_bulk_len : static_cast<uint64_t>(ProtoMaxBulkLen());
  }

  Limits limits_;
  Stage stage_ = Stage::kCommandStart;
  size_t command_start_ = 0;  // first byte of the command being parsed
  size_t cursor_ = 0;         // next byte to look at
  size_t line_scan_ = 0;      // how far the search for a length line's CR got
  uint64_t args_left_ = 0;    // array elements still to read
  uint64_t bulk_len_ = 0;     // length of the bulk being read
  std::vector<std::pair<size_t, size_t>> arg_spans_;
  bool saw_large_command_ = false;          // offset, length in the buffer
  std::deque<std::string> inline_storage_;  // unescaped inline arguments
  std::string error_;
};

}  // namespace kvlab
