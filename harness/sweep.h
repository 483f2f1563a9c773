// The sweep runner: the reusable core of kvlab-load, also called in-process
// by the Python bindings. For each value of `threads` (one point) it opens
// the client strategy's connections, runs a warm-up, then measures
// `repetitions` back-to-back windows of `duration_s` each with the steady
// clock while the application threads keep running. A window's boundaries
// are the moments its counters were taken, so nothing done between windows
// (INFO round trips, the on_repetition callback) inflates or shrinks it. Per
// repetition it records ops, errors, latency percentiles, throughput in
// 100 ms slices, client CPU (process and busiest thread; server CPU when the
// server reports INFO cpu), and whether the client was the bottleneck; what
// else ran on the measured CPUs and the server's context switches and
// hardware counts when it runs here (window_watch.h); in
// open loop also the achieved rate, whether it fell behind the offered rate,
// and the backlog owed at the window's end.
//
// Plain structs in, plain structs out; no globals. Several sweeps may run
// in one process at the same time (each with its own config and callbacks).
// Callbacks run on the thread that called RunSweep.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "harness/clients/client_strategy.h"
#include "harness/clients/connection.h"
#include "harness/measurement/client_phases.h"
#include "harness/measurement/latency_histogram.h"
#include "harness/measurement/server_command_stats.h"
#include "harness/measurement/server_stages.h"
#include "harness/status.h"
#include "harness/clients/target.h"
#include "harness/measurement/window_watch.h"
#include "harness/workloads/workload.h"

namespace kvlab::harness {

struct LoadConfig {
  Target target;
  ClientKind client = ClientKind::kDedicated;
  std::vector<int> threads = {1};  // one point per value
  // 0 = the strategy's default (client_kind.h): dedicated one per thread,
  // pooled commons-pool2's maxTotal, shared always 1.
  int connections = 0;
  int pipeline = 1;  // dedicated only
  WorkloadSpec workload;
  double duration_s = 10;
  double warmup_s = 2;
  int repetitions = 3;
  double rate = 0;  // open loop: total ops/s over all threads; 0 = closed loop
  ArrivalKind arrival = ArrivalKind::kUniform;  // open loop
  RefillMode refill = RefillMode::kSteady;      // closed loop, dedicated with pipeline > 1
  bool tcp_nodelay = true;
  IoOptions io;              // --io, --loop-threads, --flush (pooled and shared)
  bool route_slots = false;  // --route slots: each request to its key's owner (slot_map.h)
  std::vector<int> cpus;     // pin harness threads here; empty = wherever allowed
  bool prefill = false;      // SET every key once before measuring
  bool flush = false;        // FLUSHALL before each point (then prefill again)
  double connect_timeout_s = kDefaultConnectTimeoutS;
  double reply_timeout_s =
      kDefaultReplyTimeoutS;  // a connection waiting longer for a reply fails the point
  // --user, --password: AUTH on every connection (measured, control, prefill,
  // cluster nodes) and redis-benchmark's --user/-a. Never written to a record.
  std::string user;
  std::string password;
  // --server-pids: the server's processes here; its CPU is their process trees'
  // (/proc), not INFO cpu's. Empty: INFO cpu, and the pid INFO server names.
  std::vector<pid_t> server_pids;
  WatchOptions watch;  // interference on the measured CPUs, the server's own costs
};

// Checks ranges and combinations for kvlab-load's own clients;
// InvalidArgument names what is wrong.
Status ValidateConfig(const LoadConfig& config);
// The checks every load generator shares (ValidateConfig() without the
// commands only redis-benchmark sends); `redis_benchmark`: it plays the
// client (CheckClientOptions, client_kind.h).
Status ValidateCommonConfig(const LoadConfig& config, bool redis_benchmark = false);
// The number of connections a point with `threads` threads uses.
int EffectiveConnections(const LoadConfig& config, int threads);
// What `config` asks of its client kind, for CheckClientOptions (client_kind.h).
ClientOptionUse ClientOptionUseOf(const LoadConfig& config);
// How every connection of `config` is made: its timeouts and AUTH; a control
// connection (INFO, CONFIG, prefill, slot map) always with TCP_NODELAY.
ConnectionOptions ConnectionOptionsOf(const LoadConfig& config, bool control = false);
// What the client strategy of a point with `threads` threads is made with.
StrategyOptions StrategyOptionsOf(const LoadConfig& config, int threads);
// The load of application thread `index` of `threads` under `config`,
// stopped by *stop (owing what was due by *stop_at_ns); `schedule_salt`
// gives each point, side or slice its own arrival schedules (one per thread).
ThreadLoad ThreadLoadOf(const LoadConfig& config, int threads, int index,
                        WorkloadGenerator* generator, ThreadRecorder* recorder,
                        const std::atomic<bool>* stop, const std::atomic<uint64_t>* stop_at_ns,
                        uint64_t schedule_salt);

// The throughput of one slice of a window (nominally 100 ms; the last one
// ends at the window's end). Slices tile the window: their ops sum to the
// window's ops.
struct ThroughputSlice {
  double start_s = 0;  // from the window's start
  double seconds = 0;
  uint64_t ops = 0;
};
constexpr double kSliceSeconds = 0.1;

// Open loop: a window in which fewer than this fraction of the requests the
// schedule made due were answered (the backlog grew by more than 5% of
// them) is `behind`: the server or the client could not keep up. For
// uniform arrivals that is an achieved rate below 95% of the offered rate.
constexpr double kBehindFraction = 0.95;

// Every phase NaN: not measured.
inline std::array<double, kClientPhaseCount> NanPhases() {
  std::array<double, kClientPhaseCount> phases;
  phases.fill(std::numeric_limits<double>::quiet_NaN());
  return phases;
}

struct RepetitionResult {
  int repetition = 0;          // 1-based
  uint64_t ops = 0;            // replies of the expected kind (GET misses included)
  uint64_t errors = 0;         // error replies + replies of the wrong type
  bool errors_counted = true;  // false: the load generator does not report them (redis-benchmark)
  uint64_t wrong_type = 0;
  uint64_t misses = 0;
  double seconds = 0;  // steady-clock length of the measured window
  double ops_per_s = 0;
  // Open loop (rate > 0): every answer (ops + errors) per second, against
  // the offered rate; behind: see kBehindFraction; backlog: the
  // requests due by the window's end and not answered then (they are
  // answered later and measured from their intended times; the last
  // window's backlog is drained after the window and its latencies added to
  // this repetition's histogram).
  double offered_rate = 0;
  double achieved_rate = 0;
  bool behind = false;
  uint64_t backlog = 0;
  // Latencies: of ops only (error replies excluded); open loop from each
  // request's intended send time. NaN: the load generator does not report it.
  double p50_us = 0, p90_us = 0, p99_us = 0, p999_us = 0, max_us = 0, mean_us = 0;
  double client_cpu = 0;            // cores' worth of CPU the harness process used
  double busiest_thread_cpu = 0;    // the largest share of a core one harness thread used
  int usable_cores = 0;             // cores it may run on (affinity / --cpus)
  double allowed_cores = 0;         // usable_cores, or the cgroup CPU quota when smaller
  bool client_bound = false;        // see IsClientBound (cpu_usage.h)
  double server_cpu = -1;           // cores' worth the server used; < 0: not reported
  double client_cs_per_op = 0;      // the harness's context switches per op
  double loop_wakeups_per_op = -1;  // event loops woken per op; < 0: no event loop
  int64_t moved = -1;               // --route slots: -MOVED replies followed; < 0: not routed
  WindowFigures watched;            // interference and the server's costs (window_watch.h)
  StageFigures stages;              // the server's INFO stages over the window (server_stages.h)
  CommandStatFigures commands;  // its INFO commandstats over the window (server_command_stats.h)
  // kvlab-load's own threads: µs per op in each phase (client_phases.h),
  // summed over threads; NaN where the strategy does not measure them.
  std::array<double, kClientPhaseCount> client_phase_us = NanPhases();
  LatencyHistogram latency;
  std::vector<ThroughputSlice> slices;
};

// Fills the p50..max and mean fields of *r from r->latency.
void SetPercentiles(RepetitionResult* r);

struct PointResult {
  int point_index = 0;
  int threads = 0;
  ClientKind client = ClientKind::kDedicated;
  int connections = 0;
  int pipeline = 1;
  std::vector<RepetitionResult> repetitions;  // the completed ones
  int64_t incrby_sum = 0;  // INCRBY increments answered with an integer, warm-up included
  bool complete = false;   // all repetitions measured
};

// The point's latency over all its repetitions: their histograms merged
// (a point's percentiles come from this, never from a median of
// per-repetition percentiles).
LatencyHistogram MergedLatency(const PointResult& point);

struct SweepProgress {
  int point_index = 0;
  int point_count = 0;
  int threads = 0;
  int repetition = 0;  // 0 during warm-up
  int repetitions = 0;
  double ops_per_s = 0;  // over the last interval
  double p99_us = 0;     // of the current repetition (or warm-up) so far
  double eta_s = 0;      // until the whole sweep ends, by the plan
};

struct SweepCallbacks {
  // After each repetition: the point so far and the repetition just measured.
  std::function<void(const PointResult&, const RepetitionResult&)> on_repetition;
  // About once a second while a point runs.
  std::function<void(const SweepProgress&)> on_progress;
  // Set (from any thread, or a signal handler) to stop: the repetition in
  // progress is dropped and RunSweep returns Cancelled.
  const std::atomic<bool>* cancel = nullptr;
};

// Runs the sweep. *out receives every point started, with its completed
// repetitions (also when the sweep fails or is cancelled). On failure the
// message names the point and repetition.
Status RunSweep(const LoadConfig& config, const SweepCallbacks& callbacks,
                std::vector<PointResult>* out);

}  // namespace kvlab::harness
