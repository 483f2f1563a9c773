// ConcurrentEngine (`concurrent`): one tbb::concurrent_hash_map shared by all
// I/O threads; each thread executes its commands inline, locking only the
// entry it touches (a const_accessor for reads, an accessor for writes).
// This is the role the seed gave Rust's DashMap.
//
// Thread-safe: Execute() and Info() may be called from any number of threads.
// Atomicity: each keyed operation is atomic (it holds its entry's lock).
// DBSIZE and FLUSHALL close the TableGate (see table_gate.h): they wait for
// in-flight keyed operations, run alone, and so see or produce one consistent
// moment of the whole keyspace. A batch as a whole is not atomic.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <string_view>

#include <oneapi/tbb/concurrent_hash_map.h>

#include "engines/inline_engine.h"
#include "engines/entry.h"
#include "engines/memory_meter.h"
#include "engines/table_gate.h"

namespace kvlab {

class ConcurrentEngine final : public InlineEngine {
 public:
  explicit ConcurrentEngine(const EngineConfig& config);

  EngineInfo Info() const override;
  bool OverMemoryLimit() const override { return meter_.OverLimit(); }

 private:
  // TBB's HashCompare, transparent so string_view keys probe without allocating.
  struct KeyHashCompare {
    using is_transparent = void;
    size_t hash(std::string_view key) const { return KeyHash{}(key); }
    bool equal(std::string_view a, std::string_view b) const { return a == b; }
  };
  // std::allocator, not TBB's default scalable allocator: the map's nodes
  // then come from malloc like every other engine's, so INFO's allocator-
  // level used_memory (mallinfo2) counts them.
  using Map = tbb::concurrent_hash_map<std::string, Entry, KeyHashCompare,
                                       std::allocator<std::pair<const std::string, Entry>>>;
  class WriteSlot;

  OpResult ExecuteKeyed(const Operation& op, int64_t now_ms) override;
  int64_t CountLiveKeys(int64_t now_ms) override;
  void ClearAll() override;

  MemoryMeter meter_;
  TableGate gate_;
  Map map_;
};

}  // namespace kvlab
