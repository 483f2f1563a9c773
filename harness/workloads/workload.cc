#include "harness/workloads/workload.h"

#include <charconv>
#include <cstdio>

#include "harness/clients/resp_encoding.h"

namespace kvlab::harness {
namespace {

template <typename Number>
bool ParseNumber(std::string_view text, Number* out) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return error == std::errc() && end == text.data() + text.size();
}

// One SplitMix64 step: spreads (seed, stream) into unrelated generator seeds.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

constexpr size_t kMaxValueSize = 512 * 1024 * 1024;  // Redis's proto-max-bulk-len

}  // namespace

Status ParseCommandKind(std::string_view text, CommandKind* out) {
  if (text == "get")
    *out = CommandKind::kGet;
  else if (text == "set")
    *out = CommandKind::kSet;
  else if (text == "incrby")
    *out = CommandKind::kIncrby;
  else if (text == "ping")
    *out = CommandKind::kPing;
  else if (text == "mix")
    *out = CommandKind::kMix;
  else if (text == "lpush")
    *out = CommandKind::kLpush;
  else
    return Status::InvalidArgument("bad --command '" + std::string(text) +
                                   "' (allowed: get, set, incrby, ping, mix, lpush)");
  return Status::Ok();
}

Status ParseCommand(std::string_view text, WorkloadSpec* spec) {
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    spec->keys_per_command = 1;
    return ParseCommandKind(text, &spec->command);
  }
  const std::string_view name = text.substr(0, colon);
  if (name == "ycsb") {
    Status parsed = ParseYcsbWorkload(text.substr(colon + 1), &spec->ycsb);
    if (!parsed.ok()) return parsed.WithContext("--command " + std::string(text));
    spec->command = CommandKind::kYcsb;
    spec->keys_per_command = 1;
    return Status::Ok();
  }
  if (name == "rb") {
    const std::string_view test = text.substr(colon + 1);
    for (const std::string_view known : kRedisBenchmarkTests) {
      if (test != known) continue;
      spec->command = CommandKind::kRedisBenchmark;
      spec->redis_benchmark_test = std::string(test);
      spec->keys_per_command = 1;
      return Status::Ok();
    }
    std::string allowed;
    for (const std::string_view known : kRedisBenchmarkTests) {
      allowed += (allowed.empty() ? "" : ", ") + std::string(known);
    }
    return Status::InvalidArgument("bad --command '" + std::string(text) +
                                   "': rb:TEST takes one of redis-benchmark's tests: " + allowed);
  }
  int keys = 0;
  CommandKind kind;
  if (name == "mset")
    kind = CommandKind::kMset;
  else if (name == "mget")
    kind = CommandKind::kMget;
  else if (name == "multi-incr")
    kind = CommandKind::kMultiIncr;
  else
    return Status::InvalidArgument("bad --command '" + std::string(text) +
                                   "' (allowed with :N: mset, mget, multi-incr; ycsb:W; rb:TEST)");
  if (!ParseNumber(text.substr(colon + 1), &keys) || keys < 1 || keys > kMaxKeysPerCommand) {
    return Status::InvalidArgument("bad --command '" + std::string(text) + "': N must be 1.." +
                                   std::to_string(kMaxKeysPerCommand));
  }
  spec->command = kind;
  spec->keys_per_command = keys;
  return Status::Ok();
}

const char* CommandName(CommandKind kind) {
  switch (kind) {
    case CommandKind::kGet:
      return "get";
    case CommandKind::kSet:
      return "set";
    case CommandKind::kIncrby:
      return "incrby";
    case CommandKind::kPing:
      return "ping";
    case CommandKind::kMix:
      return "mix";
    case CommandKind::kLpush:
      return "lpush";
    case CommandKind::kMset:
      return "mset";
    case CommandKind::kMget:
      return "mget";
    case CommandKind::kMultiIncr:
      return "multi-incr";
    case CommandKind::kYcsb:
      return "ycsb";
    case CommandKind::kRedisBenchmark:
      return "rb";
  }
  return "?";
}

std::string CommandLabel(const WorkloadSpec& spec) {
  std::string label = CommandName(spec.command);
  if (spec.command == CommandKind::kMset || spec.command == CommandKind::kMget ||
      spec.command == CommandKind::kMultiIncr) {
    label += ":" + std::to_string(spec.keys_per_command);
  }
  if (spec.command == CommandKind::kYcsb) label += std::string(":") + YcsbWorkloadName(spec.ycsb);
  if (spec.command == CommandKind::kRedisBenchmark) label += ":" + spec.redis_benchmark_test;
  return label;
}

Status ParseKeyDistribution(std::string_view text, WorkloadSpec* spec) {
  if (text == "uniform") {
    spec->distribution = KeyDistribution::kUniform;
    return Status::Ok();
  }
  if (text == "sequential") {
    spec->distribution = KeyDistribution::kSequential;
    return Status::Ok();
  }
  constexpr std::string_view kZipf = "zipf:";
  if (text.starts_with(kZipf)) {
    double theta = 0;
    if (ParseNumber(text.substr(kZipf.size()), &theta) && theta > 0 && theta <= 10) {
      spec->distribution = KeyDistribution::kZipf;
      spec->zipf_theta = theta;
      return Status::Ok();
    }
    return Status::InvalidArgument("bad --key-dist '" + std::string(text) +
                                   "': THETA must be a number in (0, 10]");
  }
  return Status::InvalidArgument("bad --key-dist '" + std::string(text) +
                                 "' (allowed: uniform, zipf:THETA, sequential)");
}

std::string KeyDistributionName(const WorkloadSpec& spec) {
  switch (spec.distribution) {
    case KeyDistribution::kUniform:
      return "uniform";
    case KeyDistribution::kSequential:
      return "sequential";
    case KeyDistribution::kZipf: {
      char text[32];
      std::snprintf(text, sizeof(text), "zipf:%g", spec.zipf_theta);
      return text;
    }
  }
  return "?";
}

Status ParseValueShape(std::string_view text, WorkloadSpec* spec) {
  if (text == "string") {
    spec->shape = ValueShape{};
    return Status::Ok();
  }
  const size_t colon = text.find(':');
  const std::string_view kind = text.substr(0, colon);
  ValueShape shape;
  if (kind == "hash")
    shape.kind = ValueShape::Kind::kHash;
  else if (kind == "list")
    shape.kind = ValueShape::Kind::kList;
  else if (kind == "set")
    shape.kind = ValueShape::Kind::kSet;
  else if (kind == "zset")
    shape.kind = ValueShape::Kind::kZSet;
  const bool counted = colon != std::string_view::npos &&
                       ParseNumber(text.substr(colon + 1), &shape.elements) &&
                       shape.elements >= 1 && shape.elements <= 100000;
  if (shape.kind == ValueShape::Kind::kString || !counted) {
    return Status::InvalidArgument(
        "bad --value-shape '" + std::string(text) +
        "' (allowed: string, hash:N, list:N, set:N, zset:N; N 1..100000)");
  }
  spec->shape = shape;
  return Status::Ok();
}

std::string ValueShapeName(const ValueShape& shape) {
  switch (shape.kind) {
    case ValueShape::Kind::kString:
      return "string";
    case ValueShape::Kind::kHash:
      return "hash:" + std::to_string(shape.elements);
    case ValueShape::Kind::kList:
      return "list:" + std::to_string(shape.elements);
    case ValueShape::Kind::kSet:
      return "set:" + std::to_string(shape.elements);
    case ValueShape::Kind::kZSet:
      return "zset:" + std::to_string(shape.elements);
  }
  return "?";
}

Status ParseValueSize(std::string_view text, WorkloadSpec* spec) {
  const size_t dash = text.find('-');
  size_t low = 0;
  size_t high = 0;
  const bool parsed =
      dash == std::string_view::npos
          ? ParseNumber(text, &low) && ((high = low), true)
          : ParseNumber(text.substr(0, dash), &low) && ParseNumber(text.substr(dash + 1), &high);
  if (!parsed || low > high || high > kMaxValueSize) {
    return Status::InvalidArgument("bad --value-size '" + std::string(text) +
                                   "' (allowed: N or MIN-MAX bytes, MIN <= MAX <= 512 MiB)");
  }
  spec->value_size_min = low;
  spec->value_size_max = high;
  return Status::Ok();
}

std::string ValueSizeName(const WorkloadSpec& spec) {
  if (spec.value_size_min == spec.value_size_max) return std::to_string(spec.value_size_min);
  return std::to_string(spec.value_size_min) + "-" + std::to_string(spec.value_size_max);
}

Status ParseRatio(std::string_view text, WorkloadSpec* spec) {
  const size_t colon = text.find(':');
  int sets = 0;
  int gets = 0;
  if (colon == std::string_view::npos || !ParseNumber(text.substr(0, colon), &sets) ||
      !ParseNumber(text.substr(colon + 1), &gets) || sets < 0 || gets < 0 || sets + gets == 0) {
    return Status::InvalidArgument("bad --ratio '" + std::string(text) +
                                   "' (allowed: SET:GET, two non-negative integers, not both 0)");
  }
  spec->mix_set_ratio = sets;
  spec->mix_get_ratio = gets;
  return Status::Ok();
}

std::shared_ptr<YcsbSequences> MakeYcsbSequences(const WorkloadSpec& spec) {
  if (spec.command != CommandKind::kYcsb) return nullptr;
  return std::make_shared<YcsbSequences>(spec.keys);
}

WorkloadGenerator::WorkloadGenerator(const WorkloadSpec& spec, uint64_t stream,
                                     uint64_t sequential_start,
                                     std::shared_ptr<YcsbSequences> ycsb_sequences)
    : spec_(spec),
      random_(Mix(spec.seed ^ Mix(stream))),
      sequential_next_(spec.keys == 0 ? 0 : sequential_start % spec.keys),
      key_buffer_(spec.key_prefix),
      increment_text_(std::to_string(spec.increment)) {
  if (spec_.distribution == KeyDistribution::kZipf) zipf_.emplace(spec_.keys, spec_.zipf_theta);
  // Values are random printable bytes, fixed per seed, sliced per request.
  std::mt19937_64 value_random(Mix(spec.seed));
  value_bytes_.resize(spec_.value_size_max);
  for (char& c : value_bytes_) c = static_cast<char>('a' + value_random() % 26);
  if (spec_.command == CommandKind::kYcsb) {
    YcsbOptions options;
    options.workload = spec_.ycsb;
    options.distribution = spec_.distribution == KeyDistribution::kUniform
                               ? YcsbKeyDistribution::kUniform
                           : UsesLatest(spec_.ycsb) ? YcsbKeyDistribution::kLatest
                                                    : YcsbKeyDistribution::kScrambledZipfian;
    options.theta = spec_.zipf_theta;
    options.records = spec_.keys;
    options.field_length_min = spec_.value_size_min;
    options.field_length_max = spec_.value_size_max;
    if (!ycsb_sequences) ycsb_sequences = MakeYcsbSequences(spec_);
    ycsb_ = std::make_unique<YcsbOperations>(options, std::move(ycsb_sequences), &random_,
                                             value_bytes_);
  }
}

uint64_t WorkloadGenerator::NextKeyIndex() {
  switch (spec_.distribution) {
    case KeyDistribution::kUniform:
      return std::uniform_int_distribution<uint64_t>(0, spec_.keys - 1)(random_);
    case KeyDistribution::kZipf:
      return (*zipf_)(random_)-1;
    case KeyDistribution::kSequential: {
      const uint64_t index = sequential_next_;
      sequential_next_ = sequential_next_ + 1 == spec_.keys ? 0 : sequential_next_ + 1;
      return index;
    }
  }
  return 0;
}

std::string_view WorkloadGenerator::NextValue() {
  size_t size = spec_.value_size_min;
  if (spec_.value_size_max != spec_.value_size_min) {
    size =
        std::uniform_int_distribution<size_t>(spec_.value_size_min, spec_.value_size_max)(random_);
  }
  return std::string_view(value_bytes_).substr(0, size);
}

std::string_view WorkloadGenerator::KeyName(uint64_t index) {
  key_buffer_.resize(spec_.key_prefix.size());  // keeps the prefix written at construction
  char digits[24];
  const auto result = std::to_chars(digits, digits + sizeof(digits), index);
  key_buffer_.append(digits, result.ptr);
  return key_buffer_;
}

RequestInfo WorkloadGenerator::AppendNext(std::string* out) {
  CommandKind command = spec_.command;
  if (command == CommandKind::kMix) {
    const int total = spec_.mix_set_ratio + spec_.mix_get_ratio;
    const int draw = std::uniform_int_distribution<int>(0, total - 1)(random_);
    command = draw < spec_.mix_set_ratio ? CommandKind::kSet : CommandKind::kGet;
  }
  switch (command) {
    case CommandKind::kPing:
      AppendCommand(out, {"PING"});
      return {ExpectedReply::kPong, 0};
    case CommandKind::kGet:
      AppendCommand(out, {"GET", KeyName(NextKeyIndex())});
      return {ExpectedReply::kBulkOrNil, 0};
    case CommandKind::kIncrby:
      AppendCommand(out, {"INCRBY", KeyName(NextKeyIndex()), increment_text_});
      return {ExpectedReply::kInteger, spec_.increment};
    case CommandKind::kSet:
    case CommandKind::kMix: {
      const std::string_view key = KeyName(NextKeyIndex());
      AppendCommand(out, {"SET", key, NextValue()});
      return {ExpectedReply::kOk, 0};
    }
    case CommandKind::kLpush: {
      const std::string_view key = KeyName(NextKeyIndex());
      AppendCommand(out, {"LPUSH", key, NextValue()});
      return {ExpectedReply::kInteger, 0};  // the list's new length
    }
    case CommandKind::kMset:
    case CommandKind::kMget:
      return AppendMultiKey(command, out);
    case CommandKind::kMultiIncr:
      return AppendTransactionStep(out);
    case CommandKind::kYcsb:
      return ycsb_->Start(out);
    case CommandKind::kRedisBenchmark:
      // Never generated here: ValidateConfig (sweep.cc) gives these to
      // redis-benchmark, which runs its own tests.
      break;
  }
  return {ExpectedReply::kOk, 0};
}

// MSET k1 v1 ... kN vN (one value for all: the atomicity checks need none)
// or MGET k1 ... kN, distinct keys drawn from the distribution.
RequestInfo WorkloadGenerator::AppendMultiKey(CommandKind command, std::string* out) {
  const bool mset = command == CommandKind::kMset;
  multi_keys_.clear();
  for (int i = 0; i < spec_.keys_per_command; ++i) {
    multi_keys_.emplace_back(KeyName(NextKeyIndex()));
  }
  const std::string_view value = mset ? NextValue() : std::string_view();
  const size_t words = 1 + multi_keys_.size() * (mset ? 2 : 1);
  out->append("*").append(std::to_string(words)).append("\r\n");
  auto bulk = [out](std::string_view word) {
    out->append("$").append(std::to_string(word.size())).append("\r\n").append(word).append("\r\n");
  };
  bulk(mset ? "MSET" : "MGET");
  for (const std::string& key : multi_keys_) {
    bulk(key);
    if (mset) bulk(value);
  }
  return {mset ? ExpectedReply::kOk : ExpectedReply::kArray, 0};
}

// MULTI, then N INCRBYs (each answered +QUEUED), then EXEC (an array of
// the N new values): N + 2 requests in a row.
RequestInfo WorkloadGenerator::AppendTransactionStep(std::string* out) {
  const int step = transaction_step_;
  transaction_step_ = step == spec_.keys_per_command + 1 ? 0 : step + 1;
  if (step == 0) {
    AppendCommand(out, {"MULTI"});
    return {ExpectedReply::kOk, 0};
  }
  if (step == spec_.keys_per_command + 1) {
    AppendCommand(out, {"EXEC"});
    return {ExpectedReply::kArray, 0};
  }
  AppendCommand(out, {"INCRBY", KeyName(NextKeyIndex()), increment_text_});
  return {ExpectedReply::kQueued, 0};
}

}  // namespace kvlab::harness
