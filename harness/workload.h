// Workload: what the load harness sends. A WorkloadSpec (command, key space,
// key distribution, value sizes, seed) is parsed from the command line; each
// application thread owns a WorkloadGenerator that turns the spec into RESP
// requests, deterministically for a given seed and thread index.
//
// Keys are "<key_prefix><index>" with index in [0, keys): `keys = 1` is the
// single key "key:0". INCRBY adds `increment` (7, as the seed's benchmark).
//
// Thread safety: WorkloadSpec is a plain value. A WorkloadGenerator belongs
// to one thread.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>

#include "harness/reply_check.h"
#include "harness/status.h"
#include "harness/zipf_distribution.h"

namespace kvlab::harness {

enum class CommandKind { kGet, kSet, kIncrby, kPing, kMix };
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
};

// Parsers for the command-line spellings; each returns InvalidArgument
// naming what is allowed.
Status ParseCommandKind(std::string_view text, CommandKind* out);        // get|set|incrby|ping|mix
Status ParseKeyDistribution(std::string_view text, WorkloadSpec* spec);  // uniform|zipf:THETA|sequential
Status ParseValueSize(std::string_view text, WorkloadSpec* spec);        // N or MIN-MAX
Status ParseRatio(std::string_view text, WorkloadSpec* spec);            // SET:GET
const char* CommandName(CommandKind kind);
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
  const WorkloadSpec spec_;
  std::mt19937_64 random_;
  std::optional<ZipfDistribution> zipf_;
  uint64_t sequential_next_;
  std::string value_bytes_;
  std::string key_buffer_;
  std::string increment_text_;
};

}  // namespace kvlab::harness
