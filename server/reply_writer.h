// ReplyWriter: appends replies to an output buffer (the bytes a connection
// writes back to its client), in the RESP version its client chose with
// HELLO: RESP2 by default, RESP3 after HELLO 3.
//
// The typed replies (MapHeader, SetHeader, Double, Verbatim, the pair
// headers) are where Redis 7.0 itself answers differently in RESP3; a
// command uses them exactly where Redis does (addReplyMapLen,
// addReplySetLen, addReplyDouble, addReplyVerbatim, `c->resp > 2`), and
// writes the same bytes as before in RESP2.
//
// A thin, copy-free view over a std::string the caller owns; it never
// flushes. Not thread-safe; cheap to construct per reply.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace kvlab {

// The protocol of one connection (Redis's client->resp).
enum class RespVersion : uint8_t { kResp2 = 2, kResp3 = 3 };

class ReplyWriter {
 public:
  explicit ReplyWriter(std::string& out, RespVersion version = RespVersion::kResp2)
      : out_(&out), version_(version) {}

  void SimpleString(std::string_view text);  // +text\r\n
  // An array of status lines: a container command's HELP, in Redis's form.
  void StatusLines(std::span<const std::string_view> lines);
  void Ok() { SimpleString("OK"); }
  // `text` is the whole error line without '-' and CRLF, code included:
  // "ERR syntax error", "WRONGPASS invalid ...". CR/LF in it become spaces
  // so a client-supplied byte cannot break the framing (as Redis does).
  void Error(std::string_view text);
  void Integer(int64_t value);                                 // :value\r\n
  void Bulk(std::string_view value);                           // $len\r\nvalue\r\n
  void Nil() { out_->append(resp3() ? "_\r\n" : "$-1\r\n"); }  // a missing value
  void ArrayHeader(uint64_t count);                            // *count\r\n, then `count` replies
  void NilArray() { out_->append(resp3() ? "_\r\n" : "*-1\r\n"); }  // a missing array
  // Bytes already in RESP form (shared constant replies).
  void Raw(std::string_view bytes) { out_->append(bytes); }

  // RESP3-typed replies: each writes its RESP2 form on a RESP2 connection.
  // A map of `pairs` keys each followed by its value: %pairs / *2·pairs.
  void MapHeader(uint64_t pairs);
  // An unordered collection of `count` replies: ~count / *count.
  void SetHeader(uint64_t count);
  // Out-of-band data (Pub/Sub messages and (un)subscribe confirmations):
  // >count / *count.
  void PushHeader(uint64_t count);
  // Redis's addReplyDouble(): %.17g, "inf"/"-inf"; ,d / a bulk string.
  void Double(double value);
  // Redis's addReplyHumanLongDouble(): `text` already formatted (GEOPOS's
  // coordinates); ,text / a bulk string.
  void HumanDouble(std::string_view text);
  // Text meant for humans (INFO, CLIENT LIST): =len\r\ntxt:text / a bulk.
  void Verbatim(std::string_view text);
  // Replies of (member, score) pairs (ZRANGE WITHSCORES, ZPOPMIN with a
  // count): RESP2 keeps them flat, RESP3 nests each pair in an array.
  // ArrayOfPairsHeader(n): *n / *2n; then before each pair PairHeader():
  // *2 / nothing.
  void ArrayOfPairsHeader(uint64_t pairs);
  void PairHeader() {
    if (resp3()) out_->append("*2\r\n");
  }

  RespVersion version() const { return version_; }
  std::string& buffer() { return *out_; }

 private:
  bool resp3() const { return version_ == RespVersion::kResp3; }
  void Line(char type, int64_t value);
  std::string* out_;
  RespVersion version_;
};

}  // namespace kvlab
