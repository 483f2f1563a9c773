#include "engines/engine_kind.h"

#include <algorithm>
#include <thread>

namespace kvlab {
namespace {

constexpr EngineKind kKinds[] = {
    {.name = "single",
     .summary = "the Redis model: one thread runs every connection and command on a plain "
                "hash map",
     .single_threaded = true},
    {.name = "sharded",
     .summary = "shard threads each own a hash map; a command hops to its key's shard over "
                "a channel and the reply hops back",
     .uses_shards = true},
    {.name = "concurrent",
     .summary = "tbb::concurrent_hash_map shared by the I/O threads; commands run inline"},
    {.name = "striped",
     .summary = "lock stripes, each a hash map behind a shared_mutex (DashMap's design); "
                "commands run inline",
     .uses_stripes = true},
    {.name = "owner",
     .summary = "thread-per-core: each I/O thread owns one shard; a local key runs inline, "
                "another thread's key hops to its owner",
     .thread_per_core = true},
};

}  // namespace

unsigned HardwareThreads() { return std::max(1u, std::thread::hardware_concurrency()); }

std::span<const EngineKind> AllEngineKinds() { return kKinds; }

const EngineKind* FindEngineKind(std::string_view name) {
  for (const EngineKind& kind : kKinds) {
    if (kind.name == name) return &kind;
  }
  return nullptr;
}

const std::vector<std::string>& EngineKinds() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all;
    for (const EngineKind& kind : kKinds) all.emplace_back(kind.name);
    return all;
  }();
  return names;
}

EngineTraits TraitsOf(const EngineConfig& config) {
  const EngineKind& kind = *FindEngineKind(config.kind);
  EngineTraits traits;
  traits.single_threaded = kind.single_threaded;
  // Only the sharded engine hops; inline engines always take a whole read.
  traits.batch_per_read = !kind.uses_shards || config.hop == HopMode::kBatch;
  traits.runs_on_io_threads = kind.thread_per_core;
  return traits;
}

unsigned ResolvedShards(const EngineConfig& config) {
  return config.shards != 0 ? config.shards : HardwareThreads();
}

unsigned ResolvedStripes(const EngineConfig& config) {
  return config.stripes != 0 ? config.stripes : kDefaultStripes;
}

}  // namespace kvlab
