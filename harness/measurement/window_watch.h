// WindowWatch: what the server and the measured CPUs did during one
// measured window, read at the window's edges beside the harness's own
// counters:
//   - interference: CPU time others used on the measured CPUs (their busy
//     time from /proc/stat minus the server's, kvlab-load's (children
//     included) and the given
//     helper processes' CPU time, less what their sleeps cost the CPUs
//     uncharged: wake_cost.h) and the hypervisor's steal time; the load
//     average cannot say this (the benchmark itself raises it);
//   - the server's context switches, summed over its threads (/proc), and
//     its instructions and cycles (perf_event_open), when the server runs on
//     this machine and the kernel allows it.
// /proc/stat counts in clock ticks (usually 10 ms): over a window of about a
// second the interference figures are good to a few hundredths of a core.
//
// Thread safety: not thread-safe; one owner (the sweep runner's thread).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "harness/measurement/hardware_counters.h"
#include "harness/measurement/process_readings.h"

namespace kvlab::harness {

// 5% of one core: five clock ticks in a second, above /proc/stat's rounding.
constexpr double kDefaultDisturbedAboveCores = 0.05;

struct WatchOptions {
  std::vector<int> measured_cpus;  // --measured-cpus; empty: interference not measured
  std::vector<pid_t> own_pids;     // --own-pids: helpers whose CPU is ours (a link forwarder)
  double disturbed_above_cores = kDefaultDisturbedAboveCores;  // --disturbed-above
  // CPU time per sleep of ours that no process is charged with (wake_cost.h),
  // subtracted from others' work; < 0: calibrate before measuring (the front
  // end does, --wake-cost-us gives it).
  double wake_cost_seconds = -1;
  // --server-pids given: the children of ours (the server's, the own pids')
  // are ours too (a server of several processes; ProcessTreeOf).
  bool trees = false;
};

// The readings at one window edge.
struct WatchMark {
  uint64_t ns = 0;         // steady clock
  CpuTicks ticks;          // of the measured CPUs
  double own_seconds = 0;  // CPU time of kvlab-load (and its children), the server, the own pids
  int64_t own_sleeps = 0;  // their voluntary context switches
  int64_t server_switches = -1;  // < 0: not readable
  bool counted = false;          // counters holds a reading
  CounterReading counters;
};

// A window's figures; negative: not measured (the cell says n/a).
struct WindowFigures {
  double foreign_cores = -1;
  double steal_cores = -1;
  int64_t server_context_switches = -1;
  int64_t server_instructions = -1;
  int64_t server_cycles = -1;
  bool disturbed = false;  // foreign or steal above the threshold
};

// Others' CPU seconds on the measured CPUs between two marks: the CPUs'
// busy time less ours and less the uncharged cost of our sleeps. Not
// clamped at zero (/proc/stat's rounding scatters a quiet window around it).
double ForeignSecondsBetween(const WatchMark& before, const WatchMark& after,
                             double ticks_per_second, double wake_cost_seconds);

// The figures between two marks; `measured` says whether marks hold CPU
// ticks. Pure: the known-answer tests call it with made-up marks.
WindowFigures FiguresBetween(const WatchMark& before, const WatchMark& after, bool measured,
                             double ticks_per_second, double disturbed_above_cores,
                             double wake_cost_seconds = 0);

class WindowWatch {
 public:
  // `server_pid`: the measured server's process when it runs on this
  // machine, else 0 (its context switches and counters are then n/a).
  WindowWatch(WatchOptions options, pid_t server_pid);

  // The processes whose CPU is ours besides this one: the server, the own
  // pids, and with `trees` their descendants; none without measured CPUs. Finding descendants reads
  // /proc, so a caller with a short window finds them before it opens
  // (Mark(own)) rather than at its edges.
  std::vector<pid_t> OwnProcesses() const;
  WatchMark Mark() const { return Mark(OwnProcesses()); }
  // `own`: OwnProcesses(), read earlier.
  WatchMark Mark(const std::vector<pid_t>& own) const;
  WindowFigures Between(const WatchMark& before, const WatchMark& after) const;

 private:
  const WatchOptions options_;
  const pid_t server_pid_;
  std::unique_ptr<HardwareCounters> counters_;  // null where perf_event_open is refused
};

}  // namespace kvlab::harness
