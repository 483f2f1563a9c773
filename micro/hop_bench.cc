// The cost of one sharded hop — the number behind the first seed's "+11..13%".
//
// One caller thread executes batches of 1 and of 16 operations on a sharded
// engine with ONE shard (so every batch is exactly one hop: the request goes
// into the shard's channel, the shard thread executes it, and the reply comes
// back through the one-shot completion) and the same batches on `concurrent`,
// which executes them inline on the calling thread. The difference between the
// two times is the hop: per command (ops:1) and per batch of 16 (ops:16, one
// hop carries 16 commands).
//
// Names: BM_Hop/<sharded|concurrent>/<get|set>/ops:<1|16>; items/s counts
// operations, so ns per operation is 1e9 / items_per_second. "Time" is wall
// time (the latency the caller sees); "CPU" is the whole process's CPU time,
// caller and shard thread together — the hop's CPU cost, which unlike wall
// time barely moves when other programs compete for the cores.
//
// BM_Hop waits for each batch before sending the next, so on `sharded` every
// hop also pays for waking the sleeping shard thread and then the caller: the
// latency of one request on an idle server. BM_HopLoaded keeps 64 batches in
// flight (the caller sends them all, then waits for all), so the shard thread
// stays awake and drains its channel in bursts: the throughput cost of the
// hop on a busy server, the regime the seed's "+11..13%" was measured in.
#include <atomic>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "engines/engine.h"
#include "micro/engine_fixture.h"

namespace kvlab::micro {
namespace {

// 64 batches of `batch_size` operations on fixed, uniformly drawn keys.
std::vector<std::vector<Operation>> MakeBatches(OpCode code, size_t batch_size) {
  const Keyspace& keys = SharedKeyspace();
  std::mt19937 rng(42);
  std::uniform_int_distribution<uint32_t> pick(0, kKeyCount - 1);
  std::vector<std::vector<Operation>> batches(64);
  for (std::vector<Operation>& batch : batches) {
    for (size_t i = 0; i < batch_size; ++i) {
      Operation op;
      op.code = code;
      op.key = keys.present[pick(rng)];
      if (code == OpCode::kSet) op.value = kValue;
      batch.push_back(op);
    }
  }
  return batches;
}

void RunBatches(benchmark::State& state, const EngineConfig& config, OpCode code) {
  const size_t batch_size = static_cast<size_t>(state.range(0));
  const std::vector<std::vector<Operation>> batches = MakeBatches(code, batch_size);
  BatchCaller caller(PopulatedEngine(config));
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(caller.Run(batches[i++ & 63]).data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(batch_size));
}

// Keeps kInFlight batches outstanding on one engine: sends them all, then
// waits for the last completion.
class InFlightCaller {
 public:
  static constexpr int kInFlight = 64;

  InFlightCaller(Engine& engine, const std::vector<std::vector<Operation>>& batches)
      : engine_(engine) {
    for (int i = 0; i < kInFlight; ++i) {
      batches_[i].ops = batches[i % batches.size()];
      batches_[i].results.resize(batches_[i].ops.size());
    }
  }

  void RunAll() {
    outstanding_.store(kInFlight, std::memory_order_relaxed);
    for (Batch& batch : batches_) {
      engine_.Execute(batch, [this] {
        if (outstanding_.fetch_sub(1, std::memory_order_acq_rel) == 1) outstanding_.notify_one();
      });
    }
    for (int left = outstanding_.load(std::memory_order_acquire); left != 0;
         left = outstanding_.load(std::memory_order_acquire)) {
      outstanding_.wait(left, std::memory_order_acquire);
    }
  }

 private:
  Engine& engine_;
  Batch batches_[kInFlight];
  std::atomic<int> outstanding_{0};
};

void RunLoaded(benchmark::State& state, const EngineConfig& config, OpCode code) {
  const size_t batch_size = static_cast<size_t>(state.range(0));
  InFlightCaller caller(PopulatedEngine(config), MakeBatches(code, batch_size));
  for (auto _ : state) caller.RunAll();
  state.SetItemsProcessed(state.iterations() * InFlightCaller::kInFlight *
                          static_cast<int64_t>(batch_size));
}

void RegisterHopBenchmarks() {
  for (const char* kind : {"sharded", "concurrent"}) {
    const EngineConfig config = BenchConfig(kind, /*shards=*/1);
    for (OpCode code : {OpCode::kGet, OpCode::kSet}) {
      const std::string name =
          std::string("BM_Hop/") + kind + (code == OpCode::kGet ? "/get" : "/set");
      benchmark::RegisterBenchmark(
          name.c_str(), [config, code](benchmark::State& s) { RunBatches(s, config, code); })
          ->ArgName("ops")
          ->Arg(1)
          ->Arg(16)
          ->UseRealTime()
          ->MeasureProcessCPUTime();
      benchmark::RegisterBenchmark(
          ("BM_HopLoaded/" + name.substr(name.find('/') + 1)).c_str(),
          [config, code](benchmark::State& s) { RunLoaded(s, config, code); })
          ->ArgName("ops")
          ->Arg(1)
          ->Arg(16)
          ->UseRealTime()
          ->MeasureProcessCPUTime();
    }
  }
}

const bool hop_benchmarks_registered = (RegisterHopBenchmarks(), true);

}  // namespace
}  // namespace kvlab::micro
