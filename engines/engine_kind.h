// EngineKind: the table of kvlab's keyspace engines — each one's name, which
// of the engine options apply to it, their defaults and limits, and how the
// server must drive it (EngineTraits). The command line, the ready line, the
// engines' constructors and MakeEngine all read it, so an engine's facts are
// written down once.
//
// Constants and pure functions over a table built at compile time;
// thread-safe.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engines/engine.h"

namespace kvlab {

// Shard threads and lock stripes are capped far beyond any useful machine:
// the caps guard against a typo spawning a million threads or locks.
inline constexpr unsigned kMaxShards = 1024;
inline constexpr unsigned kMaxStripes = 1u << 20;
// DashMap's default stripe count on a many-core machine.
inline constexpr unsigned kDefaultStripes = 64;

// The machine's hardware threads (at least 1): the default shard count.
unsigned HardwareThreads();

struct EngineKind {
  std::string_view name;
  std::string_view summary;  // one line, for `kvlab-server --kinds`
  // Only one thread may call Execute() (EngineTraits::single_threaded).
  bool single_threaded = false;
  bool uses_shards = false;   // EngineConfig::shards and ::hop apply
  bool uses_stripes = false;  // EngineConfig::stripes applies
  // Its shards are the server's I/O threads: EngineConfig::shards is set
  // from --io-threads (EngineTraits::runs_on_io_threads).
  bool thread_per_core = false;
};

// Every engine, in the order usage messages list them.
std::span<const EngineKind> AllEngineKinds();

// nullptr when no engine has that name.
const EngineKind* FindEngineKind(std::string_view name);

// The kinds' names in table order, for usage messages and tests.
const std::vector<std::string>& EngineKinds();

// How the server must drive an engine built from `config`. REQUIRES:
// FindEngineKind(config.kind) != nullptr.
EngineTraits TraitsOf(const EngineConfig& config);

// config.shards, or HardwareThreads() when it is 0.
unsigned ResolvedShards(const EngineConfig& config);
// config.stripes, or kDefaultStripes when it is 0.
unsigned ResolvedStripes(const EngineConfig& config);

}  // namespace kvlab
