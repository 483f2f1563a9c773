// ConfigParameters: what CONFIG GET and CONFIG SET know — Redis 7.0's
// parameter names and aliases, kvlab's values, and what a SET does. Each
// parameter has one of three effects:
//   - applied: kvlab acts on it at once — maxmemory (the engine's limit),
//     notify-keyspace-events (the engine's event classes),
//     stage-sample (kvlab's own: INFO stages' sampling rate) and
//     the compact-encoding limits of hashes, sets and sorted sets
//     (encoding_limits.h);
//   - recorded: a Redis knob for a feature kvlab has differently or not at
//     all (list node sizes, streams, scripting, replication, slowlog, ...):
//     validated as Redis validates it, kept, and reported back by CONFIG
//     GET, with no other effect — so clients and Redis's own test suite that
//     set them run, and `CONFIG GET` never claims a value kvlab ignores
//     silently: Effect() tells, and docs/ lists them;
//   - fixed: chosen at start (port, bind, io-threads, ...) and refused by
//     CONFIG SET as Redis refuses an immutable config. Persistence kvlab
//     does not have (appendonly yes, a save schedule) is refused with a
//     message that says so.
// CONFIG SET of several parameters is all or nothing, as in Redis.
//
// Thread-safe: a mutex guards the recorded values; applied values live where
// they act (the engine, the process's EncodingLimits).
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/mutex.h"
#include "engines/engine.h"
#include "server/server_settings.h"
#include "server/stage_stats.h"

namespace kvlab {

class ConfigParameters {
 public:
  enum class Effect { kApplied, kRecorded, kFixed };

  ConfigParameters(Engine& engine, const ServerSettings& settings, StageStats& stages);
  ConfigParameters(const ConfigParameters&) = delete;
  ConfigParameters& operator=(const ConfigParameters&) = delete;

  // CONFIG GET: the (name, value) pairs whose name or alias matches one of
  // `patterns` (a glob, case-insensitive; a pattern without glob bytes
  // names one parameter exactly), each parameter once.
  std::vector<std::pair<std::string, std::string>> Get(
      std::span<const std::string_view> patterns) const;

  // CONFIG SET name value [name value ...]. Returns nullopt when every
  // value was valid and set, else Redis's error text (without "-"), and
  // nothing changed.
  std::optional<std::string> Set(std::span<const std::string_view> names_and_values);

  // How a parameter (name or alias) acts; nullopt when there is none.
  std::optional<Effect> EffectOf(std::string_view name) const;

  // What the parameters read and change.
  Engine& engine() { return engine_; }
  const ServerSettings& settings() const { return settings_; }
  StageStats& stages() { return stages_; }

  struct Parameter;  // config_parameters.cc

 private:
  std::string ValueOf(const Parameter& parameter) const REQUIRES(mutex_);

  Engine& engine_;
  const ServerSettings& settings_;
  StageStats& stages_;
  mutable Mutex mutex_;
  std::map<std::string, std::string, std::less<>> recorded_ GUARDED_BY(mutex_);
};

}  // namespace kvlab
