// The redis-benchmark adapter: `kvlab-load --loadgen redis-benchmark` runs
// Debian's redis-benchmark as a child process, one run per repetition, and
// measures around each run what the harness measures around its own windows
// (the server's CPU from INFO cpu, interference and the server's costs
// through WindowWatch, the child's CPU and context switches), so its rows are
// the same point record (point_record.h) as kvlab-load's own.
//
// Each point (one value of --threads) starts with a calibration run (also
// its warm-up) that finds how many requests (-n) last --duration. The row's
// ops/s, p50, p99, max and mean latency are redis-benchmark's own CSV
// figures (seconds = requests / its ops/s); what it does not report (p90,
// p99.9, error replies, per-thread CPU, a latency histogram) is left blank,
// never made up. Its threaded mode rounds run time to 250 ms ticks, which
// its ops/s inherit: say so when comparing.
//
// Thread safety: not thread-safe; RunRedisBenchmarkSweep runs on one thread
// and forks, so call it before starting other threads.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "harness/status.h"
#include "harness/sweep.h"

namespace kvlab::harness {

// One test's line of `redis-benchmark --csv`, latencies in milliseconds.
struct RedisBenchmarkFigures {
  double rps = 0;
  double avg_ms = 0, p50_ms = 0, p99_ms = 0, max_ms = 0;
};

// Checks that redis-benchmark can run `config` (dedicated, closed loop, a
// fixed value size, get | set | ping); InvalidArgument names what cannot.
Status ValidateRedisBenchmarkConfig(const LoadConfig& config);

// redis-benchmark's arguments (after the program) for a run of `requests`
// requests of the point with `threads` threads.
std::vector<std::string> RedisBenchmarkArguments(const LoadConfig& config, int threads,
                                                 uint64_t requests);

// The figures of the test that `command` runs, from redis-benchmark's CSV.
Status ParseRedisBenchmarkCsv(std::string_view csv, const WorkloadSpec& workload,
                              RedisBenchmarkFigures* out);

// The sweep with redis-benchmark as the load generator; the same contract as
// RunSweep (sweep.h): *out receives every point started, on_repetition is
// called after each repetition, `cancel` stops between runs. `requests` > 0:
// every repetition runs exactly that many requests, with no calibration
// run (a fixed load, e.g. for counting system calls per request).
Status RunRedisBenchmarkSweep(const LoadConfig& config, uint64_t requests,
                              const SweepCallbacks& callbacks, std::vector<PointResult>* out);

}  // namespace kvlab::harness
