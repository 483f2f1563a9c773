// What the engine microbenchmarks share: the key space they populate, how
// each engine is configured for them, and BatchCaller, which executes a batch
// on an engine and waits for its completion — inline for single, concurrent
// and striped; across the channel to a shard thread and back through the
// one-shot completion for sharded.
//
// Thread-safety: SharedKeyspace() and PopulatedEngine() may be called from
// any thread; each benchmark thread owns its own BatchCaller.
#pragma once

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "engines/engine.h"

namespace kvlab::micro {

// 100k keys: bigger than the CPU's L2 cache of entries, small enough to
// populate in well under a second.
constexpr uint32_t kKeyCount = 100000;
constexpr std::string_view kValue = "0123456789abcdef";  // 16 bytes, as redis-benchmark's -d 16

struct Keyspace {
  std::vector<std::string> present;  // populated before measuring: GET hits
  std::vector<std::string> absent;   // never written: GET misses
};

inline const Keyspace& SharedKeyspace() {
  static const Keyspace keys = [] {
    Keyspace k;
    char name[32];
    for (uint32_t i = 0; i < kKeyCount; ++i) {
      std::snprintf(name, sizeof name, "key:%08u", i);
      k.present.emplace_back(name);
      std::snprintf(name, sizeof name, "nil:%08u", i);
      k.absent.emplace_back(name);
    }
    return k;
  }();
  return keys;
}

// Sharded runs with two shard threads: enough for a real hop and routing by
// hash, and no more threads than this 2-core class of machine has.
inline EngineConfig BenchConfig(std::string_view kind, unsigned shards = 2,
                                HopMode hop = HopMode::kCommand) {
  EngineConfig config;
  config.kind = std::string(kind);
  config.shards = shards;
  config.hop = hop;
  return config;
}

// Executes batches on one engine from the calling thread and waits for each
// to complete. One per thread.
class BatchCaller {
 public:
  explicit BatchCaller(Engine& engine) : engine_(engine) {}
  BatchCaller(const BatchCaller&) = delete;
  BatchCaller& operator=(const BatchCaller&) = delete;

  // Runs `ops` as one batch; returns its results (valid until the next call).
  const std::vector<OpResult>& Run(const std::vector<Operation>& ops) {
    batch_.ops = ops;
    batch_.results.resize(ops.size());
    done_.store(false, std::memory_order_relaxed);
    engine_.Execute(batch_, [this] {
      done_.store(true, std::memory_order_release);
      done_.notify_one();
    });
    done_.wait(false, std::memory_order_acquire);
    return batch_.results;
  }

  const OpResult& Run(const Operation& op) {
    single_[0] = op;
    return Run(single_)[0];
  }

 private:
  Engine& engine_;
  Batch batch_;
  std::vector<Operation> single_ = std::vector<Operation>(1);
  std::atomic<bool> done_{false};
};

// The engine for `config`, holding every key of SharedKeyspace().present.
// Made and populated on first use and kept for the rest of the process, so
// the repeated runs Google Benchmark makes of one benchmark (and the GET and
// SET benchmarks of one engine) share it. Thread-safe: every thread of a
// multi-threaded benchmark calls it before its loop and gets the same engine.
// Exits with a message if the engine cannot be made.
inline Engine& PopulatedEngine(const EngineConfig& config) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<Engine>> engines;
  const std::string name = config.kind + "/" + std::to_string(config.shards) + "/" +
                           std::to_string(static_cast<int>(config.hop));
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<Engine>& engine = engines[name];
  if (engine) return *engine;
  if (const Status made = MakeEngine(config, &engine); !made.ok()) {
    std::fprintf(stderr, "kvlab-micro: engine %s: %s\n", config.kind.c_str(),
                 made.message().c_str());
    std::exit(1);
  }
  BatchCaller caller(*engine);
  std::vector<Operation> ops;
  for (const std::string& key : SharedKeyspace().present) {
    Operation op;
    op.code = OpCode::kSet;
    op.key = key;
    op.value = kValue;
    ops.push_back(op);
    if (ops.size() == 1024) {
      caller.Run(ops);
      ops.clear();
    }
  }
  if (!ops.empty()) caller.Run(ops);
  return *engine;
}

}  // namespace kvlab::micro
