// WindowMarks: the readings a measured window needs at each of its two
// boundaries — the threads' counters and the boundary's instant, the open
// loop's backlog, the harness's CPU (process and per thread) and context
// switches, the watched CPUs (window_watch.h), the server's CPU from INFO,
// the event loops' wake-ups, the routed client's -MOVED count, the
// server's per-stage time of sampled requests (INFO stages) and its own
// time per command (INFO commandstats, redis-server's) — taken
// together by Take() and turned into one repetition's figures by Between().
// The sweep takes a mark after the warm-up and one at the end of every
// window; each end is the next window's start.
//
// Thread safety: not thread-safe; one per point, on the sweep's thread.
#pragma once

#include <cstdint>

#include "harness/measurement/cpu_usage.h"
#include "harness/measurement/thread_recorder.h"
#include "harness/measurement/window_watch.h"
#include "harness/sweep.h"

namespace kvlab::harness {

// Where a mark's readings come from, besides this process (PointRun in
// sweep.cc; a fake in tests).
class WindowSources {
 public:
  virtual ~WindowSources() = default;
  // Every thread's counters since the last call; *at_ns the boundary.
  virtual ThreadCounters TakeCounters(uint64_t* at_ns) = 0;
  // Open loop: requests due by at_ns and not answered yet.
  virtual uint64_t Backlog(uint64_t at_ns) const = 0;
  // The server's CPU seconds so far; < 0: not reported.
  virtual double ServerCpuSeconds() = 0;
  virtual int64_t LoopWakeups() const = 0;  // < 0: no event loop
  virtual int64_t Moved() const = 0;        // < 0: not routed
  // The server's INFO stages totals; not reported when it has none.
  virtual StageTotals ServerStages() = 0;
  // Its INFO commandstats totals, with the instant the reply came back;
  // not reported when it has none.
  virtual CommandStatTotals ServerCommandStats() = 0;
};

// The readings at one window boundary.
struct WindowMark {
  uint64_t at_ns = 0;
  ThreadCounters counters;  // of the window this mark ends (empty for the first)
  uint64_t backlog = 0;     // open loop only
  double process_cpu_s = 0;
  ThreadCpuTimes threads;
  WatchMark watch;
  double server_cpu_s = -1;
  uint64_t server_cpu_at_ns = 0;
  uint64_t context_switches = 0;
  int64_t loop_wakeups = -1;
  int64_t moved = -1;
  StageTotals stages;
  CommandStatTotals commands;
};

class WindowMarks {
 public:
  // `rate`: the offered ops/s (0: closed loop); the cores: the client's
  // (UsableCoreCount, AllowedCores of cpu_usage.h).
  WindowMarks(WindowSources& sources, const WindowWatch& watch, double rate, int usable_cores,
              double allowed_cores)
      : sources_(sources),
        watch_(watch),
        rate_(rate),
        usable_cores_(usable_cores),
        allowed_cores_(allowed_cores) {}

  WindowMark Take();

  // The repetition's counts, rates, CPU and watched figures for the window
  // from `start` to `end` (its latency histogram moved out of end.counters).
  // Leaves repetition, slices and percentiles to the caller.
  RepetitionResult Between(const WindowMark& start, WindowMark& end) const;

 private:
  void SetOpenLoop(const WindowMark& start, const WindowMark& end, RepetitionResult* r) const;
  void SetCosts(const WindowMark& start, const WindowMark& end, RepetitionResult* r) const;

  WindowSources& sources_;
  const WindowWatch& watch_;
  const double rate_;
  const int usable_cores_;
  const double allowed_cores_;
};

}  // namespace kvlab::harness
