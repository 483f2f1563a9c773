#include "server/stage_stats.h"

#include <cstdio>

namespace kvlab {

std::string_view StageName(Stage stage) {
  static constexpr std::array<std::string_view, kStageCount> kNames = {
      "read", "parse", "dispatch", "queue", "execute", "return", "render", "write", "total"};
  return kNames[static_cast<size_t>(stage)];
}

void StageStats::SetSampleEvery(uint32_t every, Engine& engine) {
  sample_every.store(every, std::memory_order_relaxed);
  engine.TimeThreads(every != 0);
}

void StageStats::Record(const StageSample& s) {
  const EngineStageMarks& engine = s.engine;
  const int64_t picked_up = engine.picked_up_ns.load(std::memory_order_relaxed);
  const int64_t executed = engine.executed_ns.load(std::memory_order_relaxed);
  Add(Stage::kRead, s.wake, s.received);
  Add(Stage::kParse, s.received, s.parsed);
  if (s.handed == 0 || picked_up == 0 || executed == 0) {
    Add(Stage::kDispatch, s.parsed, s.queued);  // answered without the engine
  } else if (engine.hopped.load(std::memory_order_relaxed)) {
    Add(Stage::kDispatch, s.parsed, s.handed);
    Add(Stage::kQueue, s.handed, picked_up);
    Add(Stage::kExecute, picked_up, executed);
    if (s.resumed != 0) {
      Add(Stage::kReturn, executed, s.resumed);
      Add(Stage::kRender, s.resumed, s.queued);
    } else {  // finished before Execute() returned: no hop back
      Add(Stage::kRender, executed, s.queued);
    }
  } else {
    Add(Stage::kDispatch, s.parsed, picked_up);
    Add(Stage::kExecute, picked_up, executed);
    Add(Stage::kRender, executed, s.queued);
  }
  Add(Stage::kWrite, s.queued, s.sent);
  Add(Stage::kTotal, s.wake, s.sent);
}

void StageStats::Reset() {
  for (StageHistogram& histogram : histograms_) histogram.Reset();
}

namespace {

std::string Usec(int64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", static_cast<double>(ns) / 1000.0);
  return text;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> StageStats::InfoFields(
    const std::vector<std::pair<std::string, BusyWaitTotals>>& threads) const {
  std::vector<std::pair<std::string, std::string>> fields;
  fields.emplace_back("stage_sample", std::to_string(sample_every.load(std::memory_order_relaxed)));
  fields.emplace_back("stage_samples", std::to_string(histogram(Stage::kTotal).Count()));
  for (size_t i = 0; i < kStageCount; ++i) {
    const StageHistogram& h = histograms_[i];
    const uint64_t calls = h.Count();
    if (calls == 0) continue;  // absent, not zero
    const int64_t sum = h.SumNs();
    fields.emplace_back("stage_" + std::string(StageName(static_cast<Stage>(i))),
                        "calls=" + std::to_string(calls) + ",usec=" + Usec(sum) +
                            ",usec_per_call=" + Usec(sum / static_cast<int64_t>(calls)) + ",p50=" +
                            Usec(h.PercentileNs(0.5)) + ",p99=" + Usec(h.PercentileNs(0.99)) +
                            ",p99.9=" + Usec(h.PercentileNs(0.999)));
  }
  for (const auto& [name, totals] : threads) {
    fields.emplace_back("thread_" + name,
                        "busy_usec=" + Usec(totals.busy_ns) + ",wait_usec=" + Usec(totals.wait_ns));
  }
  return fields;
}

}  // namespace kvlab
