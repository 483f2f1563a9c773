// Alternation: the two sides of a comparison measured within milliseconds of
// each other. Both sides are up at once — two servers, or two client setups
// against one server — each with its connections open and its application
// threads parked; the offered load moves between them in slices (nominally
// 100 ms) in ABBA order (A B B A A B B A ...), so a drift that is linear over
// four slices cancels in every pair of adjacent pairs. At each switch the
// side being left stops sending and its in-flight requests drain (their
// replies are counted as `drain_ops`, not measured); the side being loaded
// starts from idle and its first `ramp_s` are dropped (`ramp_ops`) while its
// pipelines fill. What remains of a slice — its ops, errors, latency
// histogram, the client's CPU and (when the server runs here) that side's
// server CPU, read from the kernel's per-process CPU clock to the
// nanosecond — belongs to one side.
//
// Open loop (--rate, the same for both sides): each slice starts a fresh
// arrival schedule at the offered rate on the side being loaded; at the
// switch every request due by the slice's end is still sent and answered,
// and belongs to the slice (as a sweep window's backlog does), its latency
// counted from its intended send time. So a slice's histogram is the latency
// of the requests scheduled in it; a queue longer than a slice shows as a
// long `drain_s`, and a slice cannot hold a stall longer than itself, so the
// slice bounds the tail this measures (make slices long against the stalls
// a comparison is about). The ramp drops the replies that arrive in it.
//
// Only one side is ever loaded: the idle side's server waits in epoll. The
// machine's drift between seconds therefore hits both sides' slices alike,
// and a ratio of adjacent slices keeps little of it (analysis/kvlab/
// alternation.py turns slices into pairs and an interval).
//
// Thread safety: RunAlternation is called from one thread; it starts and
// joins its own workers. Several may run in one process.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/measurement/latency_histogram.h"
#include "harness/status.h"
#include "harness/sweep.h"
#include "harness/measurement/window_watch.h"

namespace kvlab::harness {

constexpr double kDefaultRampSeconds = 0.01;

struct AlternationConfig {
  LoadConfig a;  // side A's load (its threads' first value)
  LoadConfig b;  // side B's; may differ from A in the target or the client setup, not the rate
  double slice_s = kSliceSeconds;       // one slice, ramp included
  double ramp_s = kDefaultRampSeconds;  // dropped at the start of every slice
  double duration_s = 10;               // slices measured, over both sides (slice_s each)
  double warmup_s = 1;                  // alternating slices first, not recorded
};

// Checks each side's LoadConfig and the alternation's own ranges.
Status ValidateAlternation(const AlternationConfig& config);

// The ABBA order: the side (0 = A, 1 = B) loaded in slice `index`.
inline int SideOfSlice(int index) { return (index % 4 == 1 || index % 4 == 2) ? 1 : 0; }

struct AlternatingSlice {
  int index = 0;       // 0-based, in time order
  int side = 0;        // 0 = A, 1 = B
  double start_s = 0;  // when the measured part began, from the first slice's start
  double seconds = 0;  // the measured part: the slice after its ramp, up to the switch
  uint64_t ops = 0;    // replies of the expected kind in the measured part
  uint64_t errors = 0;
  uint64_t ramp_ops = 0;     // replies in the dropped ramp
  uint64_t drain_ops = 0;    // closed loop: replies that drained after the switch (not measured)
  double drain_s = 0;        // from the slice's end until its side had nothing in flight
  double client_cpu_s = 0;   // the harness process's CPU time in the measured part
  double server_cpu_s = -1;  // that side's server's CPU time in it; < 0: not readable
  // Others' CPU and the hypervisor's steal on the measured CPUs in the measured
  // part, in cores (as window_watch.h reads them). /proc/stat counts 10 ms
  // ticks, so one slice's figure is good to a few tenths of a core and the
  // foreign one scatters around zero when nothing else runs (negative too):
  // enough to find the stretch of slices a compiler or a burst of steal landed
  // in (analysis/kvlab/measures/alternation.py), not to judge one quiet slice. Both 0
  // and meaningless when no --measured-cpus were given (measured_cpus false).
  double foreign_cores = 0;
  double steal_cores = 0;
  LatencyHistogram latency;  // of `ops`; open loop: from each request's intended send time
};

struct AlternationSide {
  pid_t server_pid = 0;    // 0: the server does not run here (no server CPU)
  int64_t incrby_sum = 0;  // INCRBY increments this side's server acknowledged
};

struct AlternationResult {
  std::vector<AlternatingSlice> slices;
  bool measured_cpus = false;  // the slices' foreign and steal figures were read
  AlternationSide sides[2];
  double seconds = 0;    // from the first measured slice's start to the last's end
  int usable_cores = 0;  // the harness's
  double allowed_cores = 0;
  WindowFigures watched;  // interference over the whole measured time
};

// A server's CPU time in seconds, read from the kernel's CPU-time clock of
// the process (all its threads, to the nanosecond); < 0 when unreadable.
double ServerCpuClockSeconds(pid_t pid);

// Warms both sides up, then measures duration_s / slice_s slices. `cancel`
// (may be null) stops it early: the slices measured so far are kept and
// Cancelled is returned. A failed connection fails the run, naming the side.
Status RunAlternation(const AlternationConfig& config, const std::atomic<bool>* cancel,
                      AlternationResult* out);

// The JSON document of a run (kvlab-load --alternate-with --json): both
// sides' configuration, the run's figures and one object per slice (open
// loop: with its latency histogram, as result_files.h writes one).
// `status`: complete | cancelled | failed, with `error` saying why.
std::string AlternationJson(const AlternationConfig& config, const AlternationResult& result,
                            const std::string& status, const std::string& error);

}  // namespace kvlab::harness
