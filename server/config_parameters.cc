#include "server/config_parameters.h"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>

#include "base/ascii_case.h"
#include "engines/containers/encoding_limits.h"
#include "engines/rules/glob.h"
#include "engines/rules/hyperloglog.h"
#include "engines/rules/proto_max_bulk_len.h"
#include "engines/rules/redis_integer.h"
#include "server/aof_rewrite_policy.h"
#include "server/keyspace_notifier.h"

namespace kvlab {

// How a value is validated and written back (Redis 7.0's config types).
enum class ValueKind {
  kInteger,         // string2ll, then the bounds
  kMemory,          // memtoull (b, k, kb, m, mb, g, gb), then the bounds
  kBool,            // yes/no, read back lower case
  kEnum,            // one of `choices`, read back lower case
  kSave,            // "" or pairs of <seconds> <changes>
  kText,            // any string
  kKeyspaceEvents,  // notify-keyspace-events' classes, read back as Redis writes them
};

struct ConfigParameters::Parameter {
  std::string_view name;
  std::string_view alias;  // Redis's older name, or empty
  Effect effect;
  ValueKind kind;
  long long min = 0;  // kInteger, kMemory
  unsigned long long max = LLONG_MAX;
  std::vector<std::string_view> choices = {};  // kEnum
  std::string_view initial = {};               // kRecorded: Redis's default
  // kApplied: where the value lives.
  std::function<std::string(ConfigParameters&)> read = nullptr;
  std::function<void(ConfigParameters&, unsigned long long)> apply = nullptr;
  // kApplied with a value that is not a number: applies the normalised text.
  std::function<void(ConfigParameters&, std::string_view)> apply_text = nullptr;
  // kFixed: the value chosen at start; kRecorded with a check beyond the
  // kind: why a valid value is still refused (empty: accepted).
  std::function<std::string(const ConfigParameters&)> fixed = nullptr;
  std::function<std::string(std::string_view)> refuse = nullptr;
  bool immutable_in_redis = false;  // Redis's own wording for the refusal
  bool hidden = false;              // only an exact CONFIG GET shows it
};

namespace {

using Parameter = ConfigParameters::Parameter;
using Effect = ConfigParameters::Effect;

std::function<std::string(ConfigParameters&)> ReadLimit(
    std::atomic<size_t> EncodingLimits::*limit) {
  return [limit](ConfigParameters&) {
    return std::to_string(EncodingLimits::Read(CompactEncodingLimits().*limit));
  };
}
std::function<void(ConfigParameters&, unsigned long long)> WriteLimit(
    std::atomic<size_t> EncodingLimits::*limit) {
  return [limit](ConfigParameters&, unsigned long long value) {
    (CompactEncodingLimits().*limit).store(static_cast<size_t>(value), std::memory_order_relaxed);
  };
}

std::string NoSnapshots(std::string_view value) {
  return value.empty() ? std::string() : "kvlab-server keeps no snapshots (no RDB persistence)";
}
std::string OnlyNoEviction(std::string_view value) {
  return value == "noeviction" ? std::string()
                               : "kvlab-server evicts nothing: only noeviction is implemented";
}

// The table, sorted by name (CONFIG GET's order).
const std::vector<Parameter>& Parameters() {
  constexpr long long kIntMax = INT_MAX;
  constexpr long long kLongMax = LONG_MAX;
  static const std::vector<Parameter> table = {
      {.name = "activerehashing",
       .effect = Effect::kRecorded,
       .kind = ValueKind::kBool,
       .initial = "yes"},
      {.name = "appenddirname",
       .effect = Effect::kFixed,
       .kind = ValueKind::kText,
       .fixed = [](const ConfigParameters&) { return std::string("appendonlydir"); },
       .immutable_in_redis = true},
      {.name = "appendfilename",
       .effect = Effect::kFixed,
       .kind = ValueKind::kText,
       .fixed = [](const ConfigParameters& c) { return c.settings().append_filename; },
       .immutable_in_redis = true},
      {.name = "appendfsync",
       .effect = Effect::kFixed,
       .kind = ValueKind::kEnum,
       .choices = {"always", "everysec", "no"},
       .fixed =
           [](const ConfigParameters& c) {
             switch (c.settings().append_fsync) {
               case AppendFsync::kAlways:
                 return std::string("always");
               case AppendFsync::kEverySec:
                 return std::string("everysec");
               case AppendFsync::kNo:
                 break;
             }
             return std::string("no");
           }},
      {.name = "appendonly",
       .effect = Effect::kFixed,
       .kind = ValueKind::kBool,
       .fixed =
           [](const ConfigParameters& c) {
             return std::string(c.settings().append_only ? "yes" : "no");
           }},
      {.name = "auto-aof-rewrite-min-size",
       .effect = Effect::kApplied,
       .kind = ValueKind::kMemory,
       .min = 0,
       .max = LLONG_MAX,
       .read =
           [](ConfigParameters&) {
             return std::to_string(AutoRewritePolicy().min_size.load(std::memory_order_relaxed));
           },
       .apply =
           [](ConfigParameters&, unsigned long long value) {
             AutoRewritePolicy().min_size.store(value, std::memory_order_relaxed);
           }},
      {.name = "auto-aof-rewrite-percentage",
       .effect = Effect::kApplied,
       .kind = ValueKind::kInteger,
       .min = 0,
       .max = kIntMax,
       .read =
           [](ConfigParameters&) {
             return std::to_string(AutoRewritePolicy().percentage.load(std::memory_order_relaxed));
           },
       .apply =
           [](ConfigParameters&, unsigned long long value) {
             AutoRewritePolicy().percentage.store(static_cast<int64_t>(value),
                                                  std::memory_order_relaxed);
           }},
      {.name = "bind",
       .effect = Effect::kFixed,
       .kind = ValueKind::kText,
       .fixed = [](const ConfigParameters& c) { return c.settings().bind; }},
      {.name = "busy-reply-threshold",
       .alias = "lua-time-limit",
       .effect = Effect::kRecorded,
       .kind = ValueKind::kInteger,
       .min = 0,
       .max = kLongMax,
       .initial = "5000"},
      {.name = "client-query-buffer-limit",
       .effect = Effect::kFixed,
       .kind = ValueKind::kMemory,
       .fixed =
           [](const ConfigParameters& c) {
             return std::to_string(c.settings().client_query_buffer_limit);
           }},
      {.name = "cluster-enabled",
       .effect = Effect::kFixed,
       .kind = ValueKind::kBool,
       .fixed = [](const ConfigParameters&) { return std::string("no"); },
       .immutable_in_redis = true},
      {.name = "databases",
       .effect = Effect::kFixed,
       .kind = ValueKind::kInteger,
       .fixed = [](const ConfigParameters&) { return std::string("1"); },
       .immutable_in_redis = true},
      {.name = "dir",
       .effect = Effect::kFixed,
       .kind = ValueKind::kText,
       .fixed = [](const ConfigParameters& c) { return c.settings().dir; }},
      {.name = "hash-max-listpack-entries",
       .alias = "hash-max-ziplist-entries",
       .effect = Effect::kApplied,
       .kind = ValueKind::kInteger,
       .min = 0,
       .max = kLongMax,
       .read = ReadLimit(&EncodingLimits::hash_entries),
       .apply = WriteLimit(&EncodingLimits::hash_entries)},
      {.name = "hash-max-listpack-value",
       .alias = "hash-max-ziplist-value",
       .effect = Effect::kApplied,
       .kind = ValueKind::kMemory,
       .min = 0,
       .max = kLongMax,
       .read = ReadLimit(&EncodingLimits::hash_value_bytes),
       .apply = WriteLimit(&EncodingLimits::hash_value_bytes)},
      {.name = "stage-sample",
       .effect = Effect::kApplied,
       .kind = ValueKind::kInteger,
       .min = 0,
       .max = UINT32_MAX,
       .read =
           [](ConfigParameters& c) {
             return std::to_string(c.stages().sample_every.load(std::memory_order_relaxed));
           },
       .apply =
           [](ConfigParameters& c, unsigned long long value) {
             c.stages().SetSampleEvery(static_cast<uint32_t>(value), c.engine());
           }},
      {.name = "hll-sparse-max-bytes",
       .effect = Effect::kApplied,
       .kind = ValueKind::kMemory,
       .min = 0,
       .max = kLongMax,
       .read = [](ConfigParameters&) { return std::to_string(HllSparseMaxBytesSetting().load()); },
       .apply =
           [](ConfigParameters&, unsigned long long value) {
             HllSparseMaxBytesSetting().store(static_cast<int64_t>(value),
                                              std::memory_order_relaxed);
           }},
      {.name = "hz",
       .effect = Effect::kRecorded,
       .kind = ValueKind::kInteger,
       .min = 0,
       .max = kIntMax,
       .initial = "10"},
      {.name = "io-threads",
       .effect = Effect::kFixed,
       .kind = ValueKind::kInteger,
       .fixed = [](const ConfigParameters& c) { return std::to_string(c.settings().io_threads); },
       .immutable_in_redis = true},
      {.name = "latency-monitor-threshold",
       .effect = Effect::kRecorded,
       .kind = ValueKind::kInteger,
       .min = 0,
       .max = LLONG_MAX,
       .initial = "0"},
      {.name = "lazyfree-lazy-expire",
       .effect = Effect::kRecorded,
       .kind = ValueKind::kBool,
       .initial = "no"},
      {.name = "lazyfree-lazy-server-del",
       .effect = Effect::kRecorded,
       .kind = ValueKind::kBool,
       .initial = "no"},
      {.name = "lazyfree-lazy-user-del",
       .effect = Effect::kRecorded,
       .kind = ValueKind::kBool,
       .initial = "no"},
      {.name = "lazyfree-lazy-user-flush",
       .effect = Effect::kRecorded,
       .kind = ValueKind::kBool,
       .initial = "no"},
      {.name = "list-compress-depth",
       .effect = Effect::kRecorded,
       .kind = ValueKind::kInteger,
       .min = 0,
       .max = kIntMax,
       .initial = "0"},
      {.name = "list-max-listpack-size",
       .alias = "list-max-ziplist-size",
       .effect = Effect::kRecorded,
       .kind = ValueKind::kInteger,
       .min = INT_MIN,
       .max = kIntMax,
       .initial = "-2"},
      {.name = "maxclients",
       .effect = Effect::kFixed,
       .kind = ValueKind::kInteger,
       .fixed = [](const ConfigParameters& c) { return std::to_string(c.settings().max_clients); }},
      {.name = "maxmemory",
       .effect = Effect::kApplied,
       .kind = ValueKind::kMemory,
       .min = 0,
       .max = ULLONG_MAX,
       .read = [](ConfigParameters& c) { return std::to_string(c.engine().MemoryLimit()); },
       .apply = [](ConfigParameters& c, unsigned long long v) { c.engine().SetMemoryLimit(v); }},
      {.name = "maxmemory-policy",
       .effect = Effect::kRecorded,
       .kind = ValueKind::kEnum,
       .choices = {"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl", "allkeys-lru",
                   "allkeys-lfu", "allkeys-random", "noeviction"},
       .initial = "noeviction",
       .refuse = OnlyNoEviction},
      {.name = "maxmemory-samples",
       .effect = Effect::kRecorded,
       .kind = ValueKind::kInteger,
       .min = 1,
       .max = 64,
       .initial = "5"},
      {.name = "min-replicas-to-write",
       .alias = "min-slaves-to-write",
       .effect = Effect::kRecorded,
       .kind = ValueKind::kInteger,
       .min = 0,
       .max = kIntMax,
       .initial = "0"},
      {.name = "notify-keyspace-events",
       .effect = Effect::kApplied,
       .kind = ValueKind::kKeyspaceEvents,
       .read =
           [](ConfigParameters& c) {
             return KeyspaceEventClassesText(c.engine().modifications().event_classes());
           },
       .apply_text =
           [](ConfigParameters& c, std::string_view text) {
             c.engine().modifications().SetEventClasses(*KeyspaceEventClassesFromText(text));
           }},
      {.name = "port",
       .effect = Effect::kFixed,
       .kind = ValueKind::kInteger,
       .fixed = [](const ConfigParameters& c) { return std::to_string(c.settings().port); }},
      {.name = "proto-max-bulk-len",
       .effect = Effect::kApplied,
       .kind = ValueKind::kMemory,
       .min = kMinProtoMaxBulkLen,
       .max = kLongMax,
       .read = [](ConfigParameters&) { return std::to_string(ProtoMaxBulkLen()); },
       .apply =
           [](ConfigParameters&, unsigned long long value) {
             ProtoMaxBulkLenSetting().store(static_cast<int64_t>(value), std::memory_order_relaxed);
           }},
      {.name = "protected-mode",
       .effect = Effect::kFixed,
       .kind = ValueKind::kBool,
       .fixed =
           [](const ConfigParameters& c) {
             return std::string(c.settings().protected_mode ? "yes" : "no");
           }},
      {.name = "rdb-key-save-delay",
       .effect = Effect::kRecorded,
       .kind = ValueKind::kInteger,
       .min = INT_MIN,
       .max = kIntMax,
       .initial = "0",
       .hidden = true},
      {.name = "repl-ping-replica-period",
       .alias = "repl-ping-slave-period",
       .effect = Effect::kRecorded,
       .kind = ValueKind::kInteger,
       .min = 1,
       .max = kIntMax,
       .initial = "10"},
      {.name = "replica-read-only",
       .alias = "slave-read-only",
       .effect = Effect::kRecorded,
       .kind = ValueKind::kBool,
       .initial = "yes"},
      {.name = "replica-serve-stale-data",
       .alias = "slave-serve-stale-data",
       .effect = Effect::kRecorded,
       .kind = ValueKind::kBool,
       .initial = "yes"},
      {.name = "requirepass",
       .effect = Effect::kFixed,
       .kind = ValueKind::kText,
       .fixed = [](const ConfigParameters& c) { return c.settings().requirepass; }},
      {.name = "save",
       .effect = Effect::kRecorded,
       .kind = ValueKind::kSave,
       .initial = "",
       .refuse = NoSnapshots},
      {.name = "set-max-intset-entries",
       .effect = Effect::kApplied,
       .kind = ValueKind::kInteger,
       .min = 0,
       .max = kLongMax,
       .read = ReadLimit(&EncodingLimits::set_intset_entries),
       .apply = WriteLimit(&EncodingLimits::set_intset_entries)},
      {.name = "slowlog-log-slower-than",
       .effect = Effect::kRecorded,
       .kind = ValueKind::kInteger,
       .min = -1,
       .max = LLONG_MAX,
       .initial = "10000"},
      {.name = "slowlog-max-len",
       .effect = Effect::kRecorded,
       .kind = ValueKind::kInteger,
       .min = 0,
       .max = kLongMax,
       .initial = "128"},
      {.name = "stream-node-max-bytes",
       .effect = Effect::kRecorded,
       .kind = ValueKind::kMemory,
       .min = 0,
       .max = kLongMax,
       .initial = "4096"},
      {.name = "stream-node-max-entries",
       .effect = Effect::kRecorded,
       .kind = ValueKind::kInteger,
       .min = 0,
       .max = LLONG_MAX,
       .initial = "100"},
      {.name = "timeout",
       .effect = Effect::kFixed,
       .kind = ValueKind::kInteger,
       .fixed = [](const ConfigParameters&) { return std::string("0"); }},
      {.name = "unixsocket",
       .effect = Effect::kFixed,
       .kind = ValueKind::kText,
       .fixed = [](const ConfigParameters& c) { return c.settings().unix_socket; },
       .immutable_in_redis = true},
      {.name = "zset-max-listpack-entries",
       .alias = "zset-max-ziplist-entries",
       .effect = Effect::kApplied,
       .kind = ValueKind::kInteger,
       .min = 0,
       .max = kLongMax,
       .read = ReadLimit(&EncodingLimits::zset_entries),
       .apply = WriteLimit(&EncodingLimits::zset_entries)},
      {.name = "zset-max-listpack-value",
       .alias = "zset-max-ziplist-value",
       .effect = Effect::kApplied,
       .kind = ValueKind::kMemory,
       .min = 0,
       .max = kLongMax,
       .read = ReadLimit(&EncodingLimits::zset_value_bytes),
       .apply = WriteLimit(&EncodingLimits::zset_value_bytes)},
  };
  return table;
}

// The parameter named `name` (its name or alias, any case), and which of
// the two was used.
const Parameter* Lookup(std::string_view name, std::string_view* spelled) {
  for (const Parameter& parameter : Parameters()) {
    for (std::string_view candidate : {parameter.name, parameter.alias}) {
      if (!candidate.empty() && AsciiLowercase(name) == candidate) {
        if (spelled != nullptr) *spelled = candidate;
        return &parameter;
      }
    }
  }
  return nullptr;
}

// Redis's memtoull(): digits and an optional unit; no sign.
std::optional<unsigned long long> ParseMemoryValue(std::string_view text) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  const std::string unit = AsciiLowercase(text.substr(digits));
  unsigned long long multiplier = 0;
  if (unit.empty() || unit == "b")
    multiplier = 1;
  else if (unit == "k")
    multiplier = 1000;
  else if (unit == "kb")
    multiplier = 1024;
  else if (unit == "m")
    multiplier = 1000 * 1000;
  else if (unit == "mb")
    multiplier = 1024 * 1024;
  else if (unit == "g")
    multiplier = 1000ull * 1000 * 1000;
  else if (unit == "gb")
    multiplier = 1024ull * 1024 * 1024;
  else
    return std::nullopt;
  const std::string number(text.substr(0, digits));
  errno = 0;
  const unsigned long long value = number.empty() ? 0 : std::strtoull(number.c_str(), nullptr, 10);
  if (errno == ERANGE || value > ULLONG_MAX / multiplier) return std::nullopt;
  return value * multiplier;
}

// A numeric value within the parameter's bounds (as unsigned when the lower
// bound is 0 or more, two's complement otherwise), or the error text.
std::optional<unsigned long long> ParseNumber(const Parameter& parameter, std::string_view text,
                                              std::string* error) {
  bool negative = false;
  unsigned long long value = 0;
  if (parameter.kind == ValueKind::kMemory) {
    const std::optional<unsigned long long> parsed = ParseMemoryValue(text);
    if (!parsed) {
      *error = "argument must be a memory value";
      return std::nullopt;
    }
    value = *parsed;
  } else {
    const std::optional<int64_t> parsed = ParseRedisInt64(text);
    if (!parsed) {
      *error = "argument couldn't be parsed into an integer";
      return std::nullopt;
    }
    negative = *parsed < 0;
    value = static_cast<unsigned long long>(*parsed);
  }
  const bool in_bounds =
      parameter.min < 0 ? static_cast<long long>(value) >= parameter.min &&
                              static_cast<long long>(value) <= static_cast<long long>(parameter.max)
                        : !negative && value >= static_cast<unsigned long long>(parameter.min) &&
                              value <= parameter.max;
  if (!in_bounds) {
    const std::string max = parameter.min < 0
                                ? std::to_string(static_cast<long long>(parameter.max))
                                : std::to_string(parameter.max);
    *error =
        "argument must be between " + std::to_string(parameter.min) + " and " + max + " inclusive";
    return std::nullopt;
  }
  return value;
}

// Redis's setConfigSaveOption() check: pairs of non-negative integers.
bool ValidSaveSchedule(std::string_view text) {
  std::vector<std::string_view> words;
  for (size_t at = 0; at < text.size();) {
    const size_t space = text.find(' ', at);
    const size_t end = space == std::string_view::npos ? text.size() : space;
    if (end > at) words.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  if (words.size() % 2 != 0) return false;
  for (std::string_view word : words) {
    const std::optional<int64_t> number = ParseRedisInt64(word);
    if (!number || *number < 0) return false;
  }
  return true;
}

// The value CONFIG GET will report for `text`, or the error text.
std::optional<std::string> Normalise(const Parameter& parameter, std::string_view text,
                                     std::string* error) {
  switch (parameter.kind) {
    case ValueKind::kInteger:
    case ValueKind::kMemory: {
      const std::optional<unsigned long long> value = ParseNumber(parameter, text, error);
      if (!value) return std::nullopt;
      return parameter.min < 0 ? std::to_string(static_cast<long long>(*value))
                               : std::to_string(*value);
    }
    case ValueKind::kBool: {
      const std::string lower = AsciiLowercase(text);
      if (lower != "yes" && lower != "no") {
        *error = "argument must be 'yes' or 'no'";
        return std::nullopt;
      }
      return lower;
    }
    case ValueKind::kEnum: {
      const std::string lower = AsciiLowercase(text);
      for (std::string_view choice : parameter.choices) {
        if (lower == choice) return lower;
      }
      *error = "argument(s) must be one of the following: ";
      for (size_t i = 0; i < parameter.choices.size(); ++i) {
        if (i != 0) *error += ", ";
        *error += parameter.choices[i];
      }
      return std::nullopt;
    }
    case ValueKind::kSave:
      if (!ValidSaveSchedule(text)) {
        *error = "Invalid save parameters";
        return std::nullopt;
      }
      return std::string(text);
    case ValueKind::kText:
      return std::string(text);
    case ValueKind::kKeyspaceEvents: {
      const std::optional<uint32_t> classes = KeyspaceEventClassesFromText(text);
      if (!classes) {
        *error = std::string(kInvalidKeyspaceEventClasses);
        return std::nullopt;
      }
      return KeyspaceEventClassesText(*classes);
    }
  }
  return std::nullopt;
}

bool HasGlobBytes(std::string_view pattern) {
  return pattern.find_first_of("[*?") != std::string_view::npos;
}

}  // namespace

ConfigParameters::ConfigParameters(Engine& engine, const ServerSettings& settings,
                                   StageStats& stages)
    : engine_(engine), settings_(settings), stages_(stages) {
  MutexLock lock(mutex_);
  for (const Parameter& parameter : Parameters()) {
    if (parameter.effect == Effect::kRecorded) {
      recorded_.emplace(std::string(parameter.name), std::string(parameter.initial));
    }
  }
}

std::string ConfigParameters::ValueOf(const Parameter& parameter) const {
  switch (parameter.effect) {
    case Effect::kApplied:
      return parameter.read(const_cast<ConfigParameters&>(*this));
    case Effect::kFixed:
      return parameter.fixed(*this);
    case Effect::kRecorded:
      return recorded_.find(parameter.name)->second;
  }
  return {};
}

std::vector<std::pair<std::string, std::string>> ConfigParameters::Get(
    std::span<const std::string_view> patterns) const {
  std::vector<std::pair<std::string, std::string>> matched;
  // Each name once (Redis keys its answer by name; an alias is a name).
  auto add = [&](const Parameter& parameter, std::string_view shown) {
    for (const auto& [name, value] : matched) {
      if (AsciiLowercase(name) == AsciiLowercase(shown)) return;
    }
    MutexLock lock(mutex_);
    matched.emplace_back(std::string(shown), ValueOf(parameter));
  };
  for (std::string_view pattern : patterns) {
    if (!HasGlobBytes(pattern)) {
      // Redis answers an exact name as it was typed, hidden ones included.
      if (const Parameter* parameter = Lookup(pattern, nullptr)) add(*parameter, pattern);
      continue;
    }
    for (const Parameter& parameter : Parameters()) {
      if (parameter.hidden) continue;
      for (std::string_view name : {parameter.name, parameter.alias}) {
        // An alias is a parameter of its own in Redis's table: both show.
        if (!name.empty() && GlobMatch(pattern, name, /*nocase=*/true)) add(parameter, name);
      }
    }
  }
  return matched;
}

std::optional<std::string> ConfigParameters::Set(
    std::span<const std::string_view> names_and_values) {
  struct Change {
    const Parameter* parameter;
    std::string_view spelled;
    std::string value;
  };
  std::vector<Change> changes;
  // First every name, as Redis does: an unknown one wins over other errors.
  for (size_t i = 0; i + 1 < names_and_values.size(); i += 2) {
    std::string_view spelled;
    const Parameter* parameter = Lookup(names_and_values[i], &spelled);
    if (parameter == nullptr) {
      return "ERR Unknown option or number of arguments for CONFIG SET - '" +
             std::string(names_and_values[i]) + "'";
    }
    changes.push_back({parameter, spelled, std::string(names_and_values[i + 1])});
  }
  auto failed = [](std::string_view name, std::string_view why) {
    return "ERR CONFIG SET failed (possibly related to argument '" + std::string(name) + "') - " +
           std::string(why);
  };
  for (size_t i = 0; i < changes.size(); ++i) {
    const Parameter& parameter = *changes[i].parameter;
    if (parameter.effect == Effect::kFixed) {
      return failed(changes[i].spelled, parameter.immutable_in_redis
                                            ? "can't set immutable config"
                                            : "kvlab-server sets it at start only "
                                              "(a command-line option)");
    }
    for (size_t j = 0; j < i; ++j) {
      if (changes[j].parameter == &parameter)
        return failed(changes[i].spelled, "duplicate parameter");
    }
  }
  // Then every value, before anything changes.
  for (Change& change : changes) {
    std::string error;
    std::optional<std::string> value = Normalise(*change.parameter, change.value, &error);
    if (!value) return failed(change.spelled, error);
    if (change.parameter->refuse) {
      const std::string refused = change.parameter->refuse(*value);
      if (!refused.empty()) return failed(change.spelled, refused);
    }
    change.value = std::move(*value);
  }
  MutexLock lock(mutex_);
  for (const Change& change : changes) {
    if (change.parameter->apply_text) {
      change.parameter->apply_text(*this, change.value);
    } else if (change.parameter->effect == Effect::kApplied) {
      std::string ignored;
      const unsigned long long value = *ParseNumber(*change.parameter, change.value, &ignored);
      change.parameter->apply(*this, value);
    } else {
      recorded_[std::string(change.parameter->name)] = change.value;
    }
  }
  return std::nullopt;
}

std::optional<ConfigParameters::Effect> ConfigParameters::EffectOf(std::string_view name) const {
  const Parameter* parameter = Lookup(name, nullptr);
  if (parameter == nullptr) return std::nullopt;
  return parameter->effect;
}

}  // namespace kvlab
