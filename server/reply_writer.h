// ReplyWriter: appends RESP2 replies to an output buffer (the bytes a
// connection writes back to its client).
//
// A thin, copy-free view over a std::string the caller owns; it never
// flushes. Not thread-safe; cheap to construct per reply.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kvlab {

class ReplyWriter {
 public:
  explicit ReplyWriter(std::string& out) : out_(&out) {}

  void SimpleString(std::string_view text);   // +text\r\n
  void Ok() { SimpleString("OK"); }
  // `text` is the whole error line without '-' and CRLF, code included:
  // "ERR syntax error", "WRONGPASS invalid ...". CR/LF in it become spaces
  // so a client-supplied byte cannot break the framing (as Redis does).
  void Error(std::string_view text);
  void Integer(int64_t value);                // :value\r\n
  void Bulk(std::string_view value);          // $len\r\nvalue\r\n
  void Nil() { out_->append("$-1\r\n"); }     // RESP2 null bulk
  void ArrayHeader(uint64_t count);           // *count\r\n, then `count` replies
  void NilArray() { out_->append("*-1\r\n"); }
  // Bytes already in RESP form (shared constant replies).
  void Raw(std::string_view bytes) { out_->append(bytes); }

  std::string& buffer() { return *out_; }

 private:
  void Line(char type, int64_t value);
  std::string* out_;
};

}  // namespace kvlab
