// Workload: what the load harness sends. A WorkloadSpec (command, key space,
// key distribution, value sizes, seed) is parsed from the command line; each
// application thread owns a WorkloadGenerator that turns the spec into RESP
// requests, deterministically for a given seed and thread index.
//
// Keys are "<key_prefix><index>" with index in [0, keys): `keys = 1` is the
// single key "key:0". INCRBY adds `increment` (7, as the seed's benchmark).
// The multi-key commands name `keys_per_command` keys each: `mset:N` (one
// MSET of N pairs), `mget:N`, and `multi-incr:N` (MULTI, N INCRBYs, EXEC:
// N + 2 requests, sent in that order on one connection, so it needs a
// client that gives each thread one connection of its own).
//
// `ycsb:W` (--ycsb W) runs YCSB's workload W (load, A..F; harness/workloads/ycsb.h):
// `keys` is YCSB's recordcount, the value size its field length, the key
// distribution `zipf:THETA` its zipfian (latest for D) with that constant,
// `uniform` its uniform. Its operations may take several requests in a
// row; a client strategy hands every reply to OnReply, which says whether
// the operation is complete or appends its next request.
//
// Thread safety: WorkloadSpec is a plain value. A WorkloadGenerator belongs
// to one thread; the YcsbSequences it may share with others are thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "harness/clients/reply_check.h"
#include "harness/status.h"
#include "harness/workloads/ycsb.h"
#include "harness/workloads/ycsb_operations.h"
#include "harness/workloads/zipf_distribution.h"

namespace kvlab::harness {

// kRedisBenchmark: one test of redis-benchmark's own list (rb:lpush, ...),
// which only --loadgen redis-benchmark can send.
enum class CommandKind {
  kGet,
  kSet,
  kIncrby,
  kPing,
  kMix,
  kLpush,  // LPUSH key value: a container write (the list grows)
  kMset,
  kMget,
  kMultiIncr,
  kYcsb,
  kRedisBenchmark
};
enum class KeyDistribution { kUniform, kZipf, kSequential };

// What --prefill stores under each key: a string (SET), or a container of
// `elements` elements of --value-size bytes each (HSET, RPUSH, SADD, ZADD):
// the memory table's "hash of 10 fields".
struct ValueShape {
  enum class Kind { kString, kHash, kList, kSet, kZSet };
  Kind kind = Kind::kString;
  int elements = 1;
};

struct WorkloadSpec {
  CommandKind command = CommandKind::kSet;
  int mix_set_ratio = 1;  // --ratio SET:GET for kMix
  int mix_get_ratio = 10;
  uint64_t keys = 100000;
  std::string key_prefix = "key:";
  KeyDistribution distribution = KeyDistribution::kUniform;
  double zipf_theta = 0.99;
  size_t value_size_min = 64;
  size_t value_size_max = 64;
  int64_t increment = 7;
  uint64_t seed = 1;
  int keys_per_command = 1;              // kMset, kMget, kMultiIncr
  YcsbWorkload ycsb = YcsbWorkload::kA;  // kYcsb
  std::string redis_benchmark_test;      // kRedisBenchmark: its -t name ("lrange_100")
  ValueShape shape;                      // what --prefill stores
};

// redis-benchmark's default test list (`redis-benchmark -q` with no -t), in
// its order, as -t spells each test.
inline constexpr std::string_view kRedisBenchmarkTests[] = {
    "ping_inline", "ping_mbulk", "set",        "get",        "incr", "lpush", "rpush",
    "lpop",        "rpop",       "sadd",       "hset",       "spop", "zadd",  "zpopmin",
    "lrange_100",  "lrange_300", "lrange_500", "lrange_600", "mset"};

// The most keys one multi-key request may name.
inline constexpr int kMaxKeysPerCommand = 1000;

// Whether a command's requests must stay in order on one connection (a
// transaction's MULTI ... EXEC).
inline bool NeedsOwnConnection(CommandKind kind) { return kind == CommandKind::kMultiIncr; }

// Parsers for the command-line spellings; each returns InvalidArgument
// naming what is allowed.
Status ParseCommandKind(std::string_view text, CommandKind* out);  // get|set|incrby|ping|mix|lpush
// Any --command spelling, the multi-key ones (mset:N, mget:N, multi-incr:N)
// and ycsb:W and rb:TEST included; sets spec->command, spec->keys_per_command,
// spec->ycsb, spec->redis_benchmark_test.
Status ParseCommand(std::string_view text, WorkloadSpec* spec);
Status ParseKeyDistribution(std::string_view text,
                            WorkloadSpec* spec);                   // uniform|zipf:THETA|sequential
Status ParseValueSize(std::string_view text, WorkloadSpec* spec);  // N or MIN-MAX
Status ParseRatio(std::string_view text, WorkloadSpec* spec);      // SET:GET
Status ParseValueShape(std::string_view text,
                       WorkloadSpec* spec);  // string|hash:N|list:N|set:N|zset:N
// "string", "hash:10".
std::string ValueShapeName(const ValueShape& shape);
const char* CommandName(CommandKind kind);
// The command as --command spells it: "set", "mset:8", "ycsb:A".
std::string CommandLabel(const WorkloadSpec& spec);
// "uniform", "zipf:0.99", "sequential".
std::string KeyDistributionName(const WorkloadSpec& spec);
// "64" or "16-1024".
std::string ValueSizeName(const WorkloadSpec& spec);

// What the harness must check about one request's reply, and (YCSB) where
// the request stands in its operation.
struct RequestInfo {
  ExpectedReply expected;
  int64_t increment;  // INCRBY's amount; 0 for other commands
  YcsbStep ycsb_step = YcsbStep::kNone;
  YcsbOperation ycsb_operation = YcsbOperation::kRead;
  uint64_t keynum = 0;     // the record the operation is on (scan: its start)
  uint32_t scan_slot = 0;  // kScanRead: where the scan's keys are kept
  uint32_t scan_next = 0;  // kScanRead: the index of the key this request reads
};

class WorkloadGenerator {
 public:
  // `stream` separates the random streams of threads (and of points).
  // `ycsb_sequences`: YCSB's key counters, shared by a point's threads (null:
  // a counter of this generator's own).
  WorkloadGenerator(const WorkloadSpec& spec, uint64_t stream, uint64_t sequential_start,
                    std::shared_ptr<YcsbSequences> ycsb_sequences = nullptr);
  WorkloadGenerator(const WorkloadGenerator&) = delete;
  WorkloadGenerator& operator=(const WorkloadGenerator&) = delete;

  // Appends the next operation's (first) request as RESP to *out and says
  // what it expects.
  RequestInfo AppendNext(std::string* out);
  // Judges `reply` to the request *info describes. When the request's
  // operation goes on (YCSB), appends its next request to *out, updates
  // *info and returns done false; otherwise returns done true and the
  // operation's verdict. Replies must come in the order of their requests
  // per connection; chains of different operations may interleave.
  ReplyOutcome OnReply(const redisReply& reply, RequestInfo* info, std::string* out) {
    const ReplyVerdict verdict = CheckReply(reply, info->expected);
    if (info->ycsb_step == YcsbStep::kNone) return {true, verdict};
    return ycsb_->Continue(reply, verdict, info, out);
  }
  // YCSB's operations (null unless the command is ycsb:W).
  YcsbOperations* ycsb() { return ycsb_.get(); }

  // The index of the next key, per the spec's distribution.
  uint64_t NextKeyIndex();
  // The next value (a view of a buffer owned by the generator).
  std::string_view NextValue();
  // "<prefix><index>" in a buffer owned by the generator.
  std::string_view KeyName(uint64_t index);

 private:
  RequestInfo AppendMultiKey(CommandKind command, std::string* out);
  RequestInfo AppendTransactionStep(std::string* out);

  const WorkloadSpec spec_;
  std::mt19937_64 random_;
  std::optional<ZipfDistribution> zipf_;
  uint64_t sequential_next_;
  std::string value_bytes_;
  std::string key_buffer_;
  std::string increment_text_;
  std::vector<std::string> multi_keys_;   // a multi-key request's key names
  int transaction_step_ = 0;              // kMultiIncr: 0 = MULTI, 1..N, N + 1 = EXEC
  std::unique_ptr<YcsbOperations> ycsb_;  // kYcsb
};

// YCSB's key counters for a point whose threads run `spec` (null unless
// its command is ycsb:W).
std::shared_ptr<YcsbSequences> MakeYcsbSequences(const WorkloadSpec& spec);

}  // namespace kvlab::harness
