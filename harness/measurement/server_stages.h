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
// The same reply's thread_<name> lines (busy_usec, wait_usec: each I/O,
// shard or owner thread's time working versus waiting for work, while
// sampling is on) give the window's busy share of the I/O threads
// (thread_io*; on `owner` the owners) and of the others (`sharded`'s shard
// threads), and the busy microseconds of all of them per operation: CPU%
// cannot tell a thread that polls from one that works. A thread adds a span
// when it ends, so one asleep through a whole window adds its wait to the
// window it wakes in; under load every thread wakes many times a window.
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

// Busy and waiting microseconds summed over a group of threads.
struct ThreadTimeTotals {
  int threads = 0;  // thread_<name> lines in the group
  double busy_usec = 0;
  double wait_usec = 0;
};

// The running totals INFO stages gave at one instant.
struct StageTotals {
  bool reported = false;  // the reply had stage fields
  std::array<uint64_t, kServerStageCount> calls{};
  std::array<double, kServerStageCount> usec{};
  ThreadTimeTotals io_threads;     // thread_io*
  ThreadTimeTotals other_threads;  // every other thread_<name> (shard threads)
};

// Parses INFO stages' text ("stage_<name>:calls=N,usec=U,..." and
// "thread_<name>:busy_usec=B,wait_usec=W" lines).
StageTotals ParseStageTotals(std::string_view info);

// One window's figures: the sampled requests (the total stage's calls) and
// each stage's microseconds per sampled request, which add up to the
// total's; NaN where the stage was not recorded in the window. samples 0
// and every figure NaN when either edge was not reported or nothing was
// sampled.
//
// The thread figures are NaN when either edge had no thread lines, the
// group's threads changed, its totals went back (CONFIG RESETSTAT in the
// window) or it added no time (sampling off).
struct StageFigures {
  uint64_t samples = 0;
  std::array<double, kServerStageCount> us_per_request;
  double io_busy_share;     // I/O threads' busy / (busy + waiting), 0..1
  double other_busy_share;  // the other threads' (shard threads'), 0..1
  double busy_us_per_op;    // every thread's busy microseconds per operation
  StageFigures();
};

// `ops`: the operations the window completed (for busy_us_per_op).
StageFigures StagesBetween(const StageTotals& start, const StageTotals& end, uint64_t ops);

}  // namespace kvlab::harness
