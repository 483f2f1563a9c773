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
// Thread safety: WorkloadSpec is a plain value. A WorkloadGenerator belongs
// to one thread.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "harness/reply_check.h"
#include "harness/status.h"
#include "harness/zipf_distribution.h"

namespace kvlab::harness {

enum class CommandKind { kGet, kSet, kIncrby, kPing, kMix, kMset, kMget, kMultiIncr };
enum class KeyDistribution { kUniform, kZipf, kSequential };

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
  int keys_per_command = 1;  // kMset, kMget, kMultiIncr
};

// The most keys one multi-key request may name.
inline constexpr int kMaxKeysPerCommand = 1000;

// Whether a command's requests must stay in order on one connection (a
// transaction's MULTI ... EXEC).
inline bool NeedsOwnConnection(CommandKind kind) { return kind == CommandKind::kMultiIncr; }

// Parsers for the command-line spellings; each returns InvalidArgument
// naming what is allowed.
Status ParseCommandKind(std::string_view text, CommandKind* out);        // get|set|incrby|ping|mix
// Any --command spelling, the multi-key ones (mset:N, mget:N, multi-incr:N)
// included; sets spec->command and spec->keys_per_command.
Status ParseCommand(std::string_view text, WorkloadSpec* spec);
Status ParseKeyDistribution(std::string_view text, WorkloadSpec* spec);  // uniform|zipf:THETA|sequential
Status ParseValueSize(std::string_view text, WorkloadSpec* spec);        // N or MIN-MAX
Status ParseRatio(std::string_view text, WorkloadSpec* spec);            // SET:GET
const char* CommandName(CommandKind kind);
// The command as --command spells it: "set", "mset:8".
std::string CommandLabel(const WorkloadSpec& spec);
// "uniform", "zipf:0.99", "sequential".
std::string KeyDistributionName(const WorkloadSpec& spec);
// "64" or "16-1024".
std::string ValueSizeName(const WorkloadSpec& spec);

// What the harness must check about one request's reply.
struct RequestInfo {
  ExpectedReply expected;
  int64_t increment;  // INCRBY's amount; 0 for other commands
};

class WorkloadGenerator {
 public:
  // `stream` separates the random streams of threads (and of points).
  WorkloadGenerator(const WorkloadSpec& spec, uint64_t stream, uint64_t sequential_start);
  WorkloadGenerator(const WorkloadGenerator&) = delete;
  WorkloadGenerator& operator=(const WorkloadGenerator&) = delete;

  // Appends the next request as RESP to *out and says what it expects.
  RequestInfo AppendNext(std::string* out);

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
  std::vector<std::string> multi_keys_;  // a multi-key request's key names
  int transaction_step_ = 0;             // kMultiIncr: 0 = MULTI, 1..N, N + 1 = EXEC
};

}  // namespace kvlab::harness
