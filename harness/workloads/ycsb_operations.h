// YcsbOperations: one application thread's YCSB operations as RESP
// requests (ycsb.h says what each operation sends). An operation of several
// requests is a chain: the first is built by Start(), each next one by
// Continue() once the previous one's reply is in, so a pipelined connection
// may carry many operations' chains interleaved, one request of each in
// flight at a time. What a chain still needs travels in its RequestInfo;
// the keys a scan must still read are kept here, in a slot the RequestInfo
// names, until the scan's last read is answered.
//
// Thread safety: belongs to one thread (its WorkloadGenerator's); the
// YcsbSequences it shares are thread-safe.
#pragma once

#include <hiredis/hiredis.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "harness/clients/reply_check.h"
#include "harness/workloads/ycsb.h"

namespace kvlab::harness {

struct RequestInfo;

// Which request of a YCSB operation a request is.
enum class YcsbStep : uint8_t {
  kNone,         // not a YCSB request
  kRead,         // read: HGETALL (the whole operation)
  kUpdate,       // update: HMSET of one field (the whole operation)
  kInsertHash,   // insert: HMSET of every field; then kInsertIndex
  kInsertIndex,  // insert: ZADD _indices (the last)
  kScanIndex,    // scan: ZRANGEBYSCORE _indices; then kScanRead per key answered
  kScanRead,     // scan: HGETALL of one key answered
  kRmwRead,      // read-modify-write: HGETALL; then kRmwWrite if the record exists
  kRmwWrite,     // read-modify-write: HMSET of one field (the last)
};

// What one reply means for the operation it belongs to.
struct ReplyOutcome {
  bool done = true;  // the operation is complete and `verdict` is its verdict
  ReplyVerdict verdict = ReplyVerdict::kOk;
};

struct YcsbOptions {
  YcsbWorkload workload = YcsbWorkload::kA;
  YcsbKeyDistribution distribution = YcsbKeyDistribution::kScrambledZipfian;
  double theta = kYcsbZipfianConstant;
  uint64_t records = 1000;
  size_t field_length_min = kYcsbFieldLength;
  size_t field_length_max = kYcsbFieldLength;
};

class YcsbOperations {
 public:
  // `random` and `value_bytes` (at least field_length_max bytes) belong to
  // the owning WorkloadGenerator and outlive this object. `sequences` is
  // shared by the point's threads.
  YcsbOperations(const YcsbOptions& options, std::shared_ptr<YcsbSequences> sequences,
                 std::mt19937_64* random, std::string_view value_bytes);
  YcsbOperations(const YcsbOperations&) = delete;
  YcsbOperations& operator=(const YcsbOperations&) = delete;

  // Draws the next operation and appends its first request to *out.
  RequestInfo Start(std::string* out);
  // After `reply` (judged `verdict`) answered the request *info describes:
  // appends the operation's next request to *out and updates *info (done
  // false), or ends the operation (done true, its verdict). An error reply
  // ends an operation at once.
  ReplyOutcome Continue(const redisReply& reply, ReplyVerdict verdict, RequestInfo* info,
                        std::string* out);

  // The operation the mix draws next (advances the random stream).
  YcsbOperation DrawOperation();
  const YcsbSequences& sequences() const { return *sequences_; }

 private:
  uint64_t NextKeynum();
  std::string_view NextFieldValue();
  void AppendRead(std::string_view key, std::string* out);
  void AppendUpdate(std::string_view key, std::string* out);
  void AppendInsertHash(std::string_view key, std::string* out);
  void AppendInsertIndex(std::string_view key, std::string* out);
  void AppendScanIndex(std::string_view start_key, int length, std::string* out);
  uint32_t TakeScanSlot();

  const YcsbOptions options_;
  const std::shared_ptr<YcsbSequences> sequences_;
  std::mt19937_64& random_;
  const std::string_view value_bytes_;
  YcsbKeyChooser chooser_;
  double cumulative_[kYcsbOperationKinds];           // the mix's running sums
  std::vector<std::vector<std::string>> scan_keys_;  // per slot: the keys a scan reads
  std::vector<uint32_t> free_scan_slots_;
  std::string key_;                      // scratch: the current key's name
  std::vector<std::string_view> words_;  // scratch: a request's words
};

}  // namespace kvlab::harness
