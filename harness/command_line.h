// The kvlab-load command line: parsing into a LoadConfig plus the front
// end's own options, and the usage text. Exit statuses of kvlab-load:
//   0 the sweep completed; 1 the run failed (server unreachable or gone,
//   connection reset, results not writable); 2 usage error; 130 SIGINT.
//
// Thread safety: pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/alternation.h"
#include "harness/output/point_record.h"
#include "harness/status.h"
#include "harness/sweep.h"

namespace kvlab::harness {

constexpr int kExitOk = 0;
constexpr int kExitRunFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitInterrupted = 130;

// Who generates the load: kvlab-load's own client strategies, or
// redis-benchmark run as a child (harness/redis_benchmark.h).
enum class LoadGenerator { kKvlabLoad, kRedisBenchmark };

struct CommandLineOptions {
  LoadGenerator loadgen = LoadGenerator::kKvlabLoad;
  uint64_t requests =
      0;  // redis-benchmark: fixed requests per repetition; 0: calibrate to --duration
  LoadConfig config;
  std::string csv_path;       // empty: no CSV
  std::vector<Label> labels;  // --label: the CSV rows' leading columns
  std::string json_path;      // empty: no JSON
  bool quiet = false;         // no live line per second
  // CLOCK_REALTIME ns at which the measured run (warm-up included) begins:
  // kvlab-load connects first, then waits until then. 0: begin at once.
  uint64_t start_at_ns = 0;
  // --alternate-with: two sides measured alternately (harness/alternation.h);
  // `config` is then side A's, `alternation` holds both.
  bool alternate = false;
  AlternationConfig alternation;
  bool help = false;
  bool schema = false;  // --schema: print the point record's columns, measure nothing
  bool kinds = false;   // --kinds: print KindsJson(), measure nothing
  bool calibrate_wake_cost =
      false;  // --calibrate-wake-cost: print WakeCost as JSON, measure nothing
};

// Parses argv (argv[0] is the program). InvalidArgument names the option
// that is wrong and what it allows.
Status ParseCommandLine(const std::vector<std::string>& args, CommandLineOptions* out);

std::string UsageText();

// What stands for a password in anything kvlab-load writes.
constexpr const char* kRedacted = "(redacted)";
// `args` with every --password's value (alone, as --password=..., or inside
// --alternate-with's one argument) replaced by kRedacted: the command line
// that --json records.
std::vector<std::string> RedactedArguments(const std::vector<std::string>& args);

// `kvlab-load --kinds`: the client-kind table (client_kind.h, whose header
// gives the schema) and the grammar of the options and commands that Python
// checks experiments against.
std::string KindsJson();

}  // namespace kvlab::harness
