// Engine microbenchmarks: each engine in-process, no sockets, no RESP — GET
// and SET as single-operation batches through Engine::Execute, at 1..N caller
// threads, over uniform and zipf-distributed keys, for keys that exist (hit)
// and keys that do not (miss).
//
// Names: BM_EngineGet/<engine>/<uniform|zipf>/<hit|miss>/threads:T and
// BM_EngineSet/<engine>/<uniform|zipf>/threads:T (SET overwrites existing
// keys, so the map does not grow while it is measured). BM_EngineGetP16/
// <engine>/uniform/hit runs batches of 16 GETs, as one read of a P16 client
// brings, where an engine can overlap the lookups' cache misses (items are
// operations, not batches). The `single` engine
// is the Redis model and runs at one thread only.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>

#include "engines/engine.h"
#include "harness/workloads/zipf_distribution.h"
#include "micro/engine_fixture.h"

namespace kvlab::micro {
namespace {

constexpr double kZipfTheta = 0.99;  // YCSB's default skew

enum class Keys { kUniform, kZipf };

// Key indices one thread will visit, drawn with a fixed seed per thread so
// every run visits the same keys in the same order.
std::vector<uint32_t> KeySequence(Keys keys, int thread_index) {
  std::mt19937_64 rng(0x6b766c6162ull + static_cast<uint64_t>(thread_index));
  std::vector<uint32_t> sequence(1 << 16);
  if (keys == Keys::kUniform) {
    std::uniform_int_distribution<uint32_t> uniform(0, kKeyCount - 1);
    for (uint32_t& k : sequence) k = uniform(rng);
  } else {
    harness::ZipfDistribution zipf(kKeyCount, kZipfTheta);
    for (uint32_t& k : sequence) k = static_cast<uint32_t>(zipf(rng) - 1);
  }
  return sequence;
}

// GET or SET of single-operation batches over `names`, in this thread's key order.
void RunOps(benchmark::State& state, const EngineConfig& config, OpCode code, Keys keys,
            const std::vector<std::string>& names) {
  const std::vector<uint32_t> sequence = KeySequence(keys, state.thread_index());
  BatchCaller caller(PopulatedEngine(config));
  Operation op;
  op.code = code;
  if (code == OpCode::kSet) op.value = kValue;
  size_t i = 0;
  for (auto _ : state) {
    op.key = names[sequence[i++ & (sequence.size() - 1)]];
    benchmark::DoNotOptimize(caller.Run(op).kind);
  }
  state.SetItemsProcessed(state.iterations());
}

// GETs of existing keys in batches of 16, in this thread's key order.
void RunPipelinedGets(benchmark::State& state, const EngineConfig& config) {
  constexpr size_t kPipeline = 16;
  const std::vector<uint32_t> sequence = KeySequence(Keys::kUniform, state.thread_index());
  const std::vector<std::string>& names = SharedKeyspace().present;
  BatchCaller caller(PopulatedEngine(config));
  std::vector<Operation> ops(kPipeline);
  for (Operation& op : ops) op.code = OpCode::kGet;
  size_t i = 0;
  for (auto _ : state) {
    for (Operation& op : ops) op.key = names[sequence[i++ & (sequence.size() - 1)]];
    benchmark::DoNotOptimize(caller.Run(ops).back().kind);
  }
  state.SetItemsProcessed(state.iterations() * kPipeline);
}

int MaxThreads() { return std::max(2, static_cast<int>(std::thread::hardware_concurrency())); }

void RegisterEngineBenchmarks() {
  for (const char* kind : {"single", "sharded", "concurrent", "striped"}) {
    const EngineConfig config = BenchConfig(kind);
    const int max_threads = std::string(kind) == "single" ? 1 : MaxThreads();
    benchmark::RegisterBenchmark(("BM_EngineGetP16/" + std::string(kind) + "/uniform/hit").c_str(),
                                 [config](benchmark::State& s) { RunPipelinedGets(s, config); })
        ->UseRealTime();
    for (Keys keys : {Keys::kUniform, Keys::kZipf}) {
      const std::string dist = keys == Keys::kUniform ? "uniform" : "zipf";
      for (bool hit : {true, false}) {
        benchmark::RegisterBenchmark(
            ("BM_EngineGet/" + std::string(kind) + "/" + dist + (hit ? "/hit" : "/miss")).c_str(),
            [config, keys, hit](benchmark::State& s) {
              RunOps(s, config, OpCode::kGet, keys,
                     hit ? SharedKeyspace().present : SharedKeyspace().absent);
            })
            ->ThreadRange(1, max_threads)
            ->UseRealTime();
      }
      benchmark::RegisterBenchmark(("BM_EngineSet/" + std::string(kind) + "/" + dist).c_str(),
                                   [config, keys](benchmark::State& s) {
                                     RunOps(s, config, OpCode::kSet, keys,
                                            SharedKeyspace().present);
                                   })
          ->ThreadRange(1, max_threads)
          ->UseRealTime();
    }
  }
}

const bool engine_benchmarks_registered = (RegisterEngineBenchmarks(), true);

}  // namespace
}  // namespace kvlab::micro
