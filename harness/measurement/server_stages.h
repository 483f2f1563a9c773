// ServerStages: where the server says a request's time went — its `INFO
// stages` totals (kvlab-server's per-stage time of sampled requests,
// docs/server.md) read at both edges of a window, as INFO cpu is, and
// turned into the window's microseconds per sampled request, stage by
// stage. The harness speaks RESP only: the stage names are the server's
// INFO field names, written here once (ServerStageNames()).
//
// A stage the server did not report in the window (an inline engine has no
// queue or return stage) is absent (NaN), not zero. A server without INFO
// stages (redis-server, kvlab with --stage-sample 0) reports nothing.
//
// Thread safety: pure functions over values; thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace kvlab::harness {

inline constexpr size_t kServerStageCount = 9;
// read, parse, dispatch, queue, execute, return, render, write, total.
const std::array<const char*, kServerStageCount>& ServerStageNames();

// The running totals INFO stages gave at one instant.
struct StageTotals {
  bool reported = false;  // the reply had stage fields
  std::array<uint64_t, kServerStageCount> calls{};
  std::array<double, kServerStageCount> usec{};
};

// Parses INFO stages' text ("stage_<name>:calls=N,usec=U,..." lines).
StageTotals ParseStageTotals(std::string_view info);

// One window's figures: the sampled requests (the total stage's calls) and
// each stage's microseconds per sampled request, which add up to the
// total's; NaN where the stage was not recorded in the window. samples 0
// and every figure NaN when either edge was not reported or nothing was
// sampled.
struct StageFigures {
  uint64_t samples = 0;
  std::array<double, kServerStageCount> us_per_request;
  StageFigures();
};

StageFigures StagesBetween(const StageTotals& start, const StageTotals& end);

}  // namespace kvlab::harness
