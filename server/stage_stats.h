// StageStats: where a request's time goes inside the server — one histogram
// per stage of the sampled requests (stage_sample.h), which `INFO stages`
// reports and CONFIG RESETSTAT clears, and the rate they are sampled at.
//
// The stages, between consecutive timestamps of a StageSample:
//   read      wake -> received: the wake-up to this socket's recv() (the
//             sockets served before it in the same round included)
//   parse     received -> parsed
//   dispatch  parsed -> handed to the engine (the command's handler and the
//             rest of a pipelined read's commands); without a hop, parsed ->
//             picked_up; without an engine batch, parsed -> queued
//   queue     handed -> picked_up by another thread (hop only)
//   execute   picked_up -> executed
//   return    executed -> resumed on the connection's loop (hop only)
//   render    executed (or resumed) -> reply queued
//   write     queued -> sent
//   total     wake -> sent: what the stages add up to
// A stage that an engine does not have (queue and return on an inline
// engine, or on an owner's local batch) is not recorded: absent, not zero.
//
// Sampling: every `sample_every`-th read of each I/O thread (0: off). Off,
// a read costs one relaxed load and one predictable branch.
//
// Thread-safe: Record() from any I/O thread; the rest from any thread.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engines/engine.h"
#include "server/stage_histogram.h"
#include "server/stage_sample.h"

namespace kvlab {

enum class Stage : uint8_t {
  kRead,
  kParse,
  kDispatch,
  kQueue,
  kExecute,
  kReturn,
  kRender,
  kWrite,
  kTotal,
  kCount
};
inline constexpr size_t kStageCount = static_cast<size_t>(Stage::kCount);

// "read", "parse", ... "total": INFO's names (stage_<name>).
std::string_view StageName(Stage stage);

// Every-Nth-read sampling by default: about 0.1% of the requests pay the
// ten clock readings, which keeps the throughput cost within noise while a
// 100k requests/s point still gets a hundred samples a second.
inline constexpr uint32_t kDefaultStageSample = 1000;

class StageStats {
 public:
  // Every Nth read of each I/O thread is sampled; 0 turns sampling off.
  std::atomic<uint32_t> sample_every{0};
  // Test-only known answers (--stage-spin): nanoseconds spun inside the
  // parse and execute stages of every sampled request. Set before the
  // first connection.
  int64_t spin_parse_ns = 0;
  int64_t spin_execute_ns = 0;

  // Sets the rate and tells the engine to time its threads while it is on.
  void SetSampleEvery(uint32_t every, Engine& engine);

  // The connection's thread, once the sampled request's reply is sent.
  void Record(const StageSample& sample);
  void Reset();

  const StageHistogram& histogram(Stage stage) const {
    return histograms_[static_cast<size_t>(stage)];
  }

  // INFO stages' fields: the rate, the sample count, one line per stage
  // recorded at least once (calls, usec, usec_per_call, p50, p99, p99.9)
  // and one per thread of `threads` (busy_usec, wait_usec).
  std::vector<std::pair<std::string, std::string>> InfoFields(
      const std::vector<std::pair<std::string, BusyWaitTotals>>& threads) const;

 private:
  void Add(Stage stage, int64_t from, int64_t to) {
    histograms_[static_cast<size_t>(stage)].Record(to - from);
  }

  std::array<StageHistogram, kStageCount> histograms_;
};

}  // namespace kvlab
