// kvlab-load: the command-line front end of the load harness. Parses the
// arguments, runs the sweep (harness/sweep.h, or redis-benchmark through
// harness/redis_benchmark.h), writes CSV/JSON as each
// repetition completes, prints a live line per second and the final table.
// Exit status: 0 ok, 1 run failed, 2 usage error, 130 interrupted (SIGINT).
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "harness/alternation.h"
#include "harness/command_line.h"
#include "harness/clients/event_loop.h"
#include "harness/measurement/machine_info.h"
#include "harness/output/point_record.h"
#include "harness/redis_benchmark.h"
#include "harness/output/result_files.h"
#include "harness/clients/server_control.h"
#include "harness/measurement/start_instant.h"
#include "harness/measurement/wake_cost.h"
#include "harness/output/summary_table.h"
#include "harness/sweep.h"

namespace {

using namespace kvlab::harness;

// Set by SIGINT (a lock-free atomic store is async-signal-safe).
std::atomic<bool> g_interrupted{false};

void OnInterrupt(int) { g_interrupted.store(true); }

void InstallInterruptHandler() {
  struct sigaction action {};
  action.sa_handler = OnInterrupt;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND;  // a second Ctrl-C kills at once
  sigaction(SIGINT, &action, nullptr);
}

// INFO server of the target, for the JSON metadata; empty if unavailable.
std::map<std::string, std::string> FetchServerInfo(const LoadConfig& config, Status* status) {
  std::unique_ptr<ServerControl> control;
  const ConnectionOptions options = ConnectionOptionsOf(config, /*control=*/true);
  *status = ServerControl::Open(config.target, options, &control);
  if (!status->ok()) return {};
  std::string text;
  if (!control->Info("server", &text).ok()) return {};  // a server without INFO is still measurable
  return ParseInfo(text);
}

class FrontEnd {
 public:
  FrontEnd(CommandLineOptions options, std::vector<std::string> args)
      : options_(std::move(options)), args_(std::move(args)) {}

  int Run() {
    // Before anything is measured: the calibration runs its own threads on the measured CPUs.
    CalibrateWakeCostIfAsked(options_.alternate ? &options_.alternation.a.watch
                                                : &options_.config.watch);
    if (options_.alternate) return RunAlternationMode();
    const LoadConfig& config = options_.config;
    Status reachable;
    RunDescription description{RedactedArguments(args_), config, CollectMachineInfo(),
                               FetchServerInfo(config, &reachable)};
    if (!options_.json_path.empty()) {
      json_ = std::make_unique<JsonResultFile>(options_.json_path, description);
    }
    if (!options_.csv_path.empty()) {
      Status created = CsvResultFile::Create(options_.csv_path, config, options_.labels,
                                             options_.json_path, &csv_);
      if (!created.ok()) return Fail(created, {});
    }
    if (!reachable.ok()) return Fail(reachable, "failed");
    if (json_) {
      Status written = json_->Write({}, "running", "");
      if (!written.ok()) return Fail(written, {});
    }
    PrintPlan();
    if (options_.start_at_ns != 0 && !WaitForStart()) {
      std::fprintf(stderr, "kvlab-load: interrupted before --start-at\n");
      WriteJson("cancelled", "interrupted before --start-at");
      return kExitInterrupted;
    }

    SweepCallbacks callbacks;
    callbacks.cancel = &g_interrupted;
    callbacks.on_repetition = [this](const PointResult& point, const RepetitionResult& repetition) {
      OnRepetition(point, repetition);
    };
    if (!options_.quiet) {
      callbacks.on_progress = [](const SweepProgress& p) {
        std::printf("  [point %d/%d threads=%d %s] %.0f ops/s  p99 %.1f us  sweep ETA %.0f s\n",
                    p.point_index + 1, p.point_count, p.threads,
                    p.repetition == 0 ? "warm-up"
                                      : ("rep " + std::to_string(p.repetition) + "/" +
                                         std::to_string(p.repetitions))
                                            .c_str(),
                    p.ops_per_s, p.p99_us, p.eta_s);
        std::fflush(stdout);
      };
    }
    const Status swept =
        options_.loadgen == LoadGenerator::kRedisBenchmark
            ? RunRedisBenchmarkSweep(config, options_.requests, callbacks, &points_)
            : RunSweep(config, callbacks, &points_);
    std::printf("\n%s", RenderSummaryTable(config, points_).c_str());
    if (config.workload.command == CommandKind::kIncrby) {
      for (const PointResult& point : points_) {
        std::printf("incrby_sum threads=%d: %lld (increments the server acknowledged)\n",
                    point.threads, static_cast<long long>(point.incrby_sum));
      }
    }
    std::fflush(stdout);
    if (!write_error_.ok()) return Fail(write_error_, "failed");
    if (swept.code() == Status::Code::kCancelled) {
      std::fprintf(stderr, "kvlab-load: interrupted: %s; completed repetitions are saved\n",
                   swept.message().c_str());
      WriteJson("cancelled", swept.message());
      return kExitInterrupted;
    }
    if (!swept.ok()) return Fail(swept, "failed");
    WriteJson("complete", "");
    return write_error_.ok() ? kExitOk : Fail(write_error_, {});
  }

 private:
  // The watch's cost per sleep of ours (wake_cost.h), measured here unless
  // --wake-cost-us gave it; without measured CPUs nothing is subtracted.
  static void CalibrateWakeCostIfAsked(WatchOptions* watch) {
    if (watch->wake_cost_seconds >= 0) return;
    if (watch->measured_cpus.empty()) {
      watch->wake_cost_seconds = 0;
      return;
    }
    const WakeCost cost = CalibrateWakeCost(watch->measured_cpus);
    watch->wake_cost_seconds = cost.seconds_per_sleep;
    std::printf("kvlab-load: wake-up cost on the measured CPUs: %s\n", cost.Describe().c_str());
    std::fflush(stdout);
  }

  // --alternate-with: one alternation of two sides; every slice goes to --json.
  int RunAlternationMode() {
    const AlternationConfig& config = options_.alternation;
    std::printf(
        "kvlab-load: alternating %s (A) and %s (B), %s: slices of %g s, ramp %g s "
        "dropped, %g s measured after %g s of warm-up\n",
        config.a.target.ToUrl().c_str(), config.b.target.ToUrl().c_str(),
        config.a.target.ToUrl() == config.b.target.ToUrl() ? "one server, two client setups"
                                                           : "two servers",
        config.slice_s, config.ramp_s, config.duration_s, config.warmup_s);
    std::fflush(stdout);
    AlternationResult result;
    const Status ran = RunAlternation(config, &g_interrupted, &result);
    uint64_t ops[2] = {0, 0};
    double seconds[2] = {0, 0};
    LatencyHistogram latency[2];
    for (const AlternatingSlice& slice : result.slices) {
      ops[slice.side] += slice.ops;
      seconds[slice.side] += slice.seconds;
      latency[slice.side].Merge(slice.latency);
    }
    for (int side = 0; side < 2; ++side) {
      std::printf("side %c: %zu slices, %.0f ops/s", side == 0 ? 'A' : 'B',
                  result.slices.size() / 2, seconds[side] > 0 ? ops[side] / seconds[side] : 0.0);
      if (config.a.rate > 0) {  // open loop: the side's latency over all its slices
        std::printf(", p50 %.1f us, p99 %.1f us", Micros(latency[side].ValueAtQuantile(0.5)),
                    Micros(latency[side].ValueAtQuantile(0.99)));
      }
      std::printf("\n");
    }
    const std::string status = ran.ok()                                 ? "complete"
                               : ran.code() == Status::Code::kCancelled ? "cancelled"
                                                                        : "failed";
    if (!options_.json_path.empty()) {
      const std::string temporary = options_.json_path + ".tmp";
      {
        std::ofstream file(temporary, std::ios::trunc);
        file << AlternationJson(config, result, status, ran.ok() ? "" : ran.message());
        if (!file.good()) {
          std::fprintf(stderr, "kvlab-load: cannot write %s\n", options_.json_path.c_str());
          return kExitRunFailed;
        }
      }
      if (std::rename(temporary.c_str(), options_.json_path.c_str()) != 0) {
        std::fprintf(stderr, "kvlab-load: cannot write %s\n", options_.json_path.c_str());
        return kExitRunFailed;
      }
    }
    if (ran.code() == Status::Code::kCancelled) return kExitInterrupted;
    if (!ran.ok()) {
      std::fprintf(stderr, "kvlab-load: %s\n", ran.message().c_str());
      return kExitRunFailed;
    }
    return kExitOk;
  }

  void PrintPlan() const {
    const LoadConfig& c = options_.config;
    std::string io;
    if (InfoOf(c.client).event_loop) {
      io = std::string(" io=") + IoModelName(c.io.model);
      if (c.io.model == IoModel::kEventLoop) {
        io += " loop-threads=" + std::to_string(EffectiveLoopThreads(c.io.loop_threads, c.cpus)) +
              " io-flush=" + FlushModeName(c.io.flush);
      }
    }
    std::printf(
        "kvlab-load: %s client=%s%s command=%s keys=%llu key-dist=%s value-size=%s "
        "pipeline=%d refill=%s duration=%gs warmup=%gs repeat=%d%s\n",
        c.target.ToUrl().c_str(), ClientKindName(c.client), io.c_str(),
        CommandLabel(c.workload).c_str(), static_cast<unsigned long long>(c.workload.keys),
        KeyDistributionName(c.workload).c_str(), ValueSizeName(c.workload).c_str(), c.pipeline,
        RefillModeName(c.refill), c.duration_s, c.warmup_s, c.repetitions,
        c.rate > 0 ? (" rate=" + std::to_string(static_cast<long long>(c.rate)) +
                      " arrival=" + ArrivalKindName(c.arrival))
                         .c_str()
                   : "");
    std::fflush(stdout);
  }

  // The server answered above (FetchServerInfo), so the wait ends in the run
  // itself, not in connecting. False when interrupted first.
  bool WaitForStart() const {
    const int64_t late_ns = SleepUntilRealtime(options_.start_at_ns, &g_interrupted);
    if (late_ns < 0) return false;
    std::printf("kvlab-load: started at --start-at + %.3f ms\n", late_ns / 1e6);
    std::fflush(stdout);
    return true;
  }

  void OnRepetition(const PointResult& point, const RepetitionResult& r) {
    std::printf(
        "threads=%d %s rep %d/%d: %.0f ops/s  p50 %.1f us  p99 %.1f us  errors %llu  "
        "client cpu %.2f of %d cores%s  client cs/op %.2f%s\n",
        point.threads, ClientKindName(point.client), r.repetition, options_.config.repetitions,
        r.ops_per_s, r.p50_us, r.p99_us, static_cast<unsigned long long>(r.errors), r.client_cpu,
        r.usable_cores,
        r.server_cpu >= 0 ? (", server cpu " + std::to_string(r.server_cpu).substr(0, 4)).c_str()
                          : "",
        r.client_cs_per_op,
        r.loop_wakeups_per_op >= 0
            ? ("  loop wake-ups/op " + std::to_string(r.loop_wakeups_per_op).substr(0, 4)).c_str()
            : "");
    std::fflush(stdout);
    if (r.client_bound) {
      std::fprintf(stderr,
                   "kvlab-load: WARNING: client-bound: threads=%d rep %d used %.2f of %.2f allowed "
                   "cores, its busiest thread %.2f of a core; the harness, not the server, may "
                   "limit this number\n",
                   point.threads, r.repetition, r.client_cpu, r.allowed_cores,
                   r.busiest_thread_cpu);
    }
    if (r.behind) {
      std::fprintf(stderr,
                   "kvlab-load: WARNING: behind: threads=%d rep %d achieved %.0f ops/s of %.0f "
                   "offered (under %.0f%% of the requests due were answered); backlog at the "
                   "window's end %llu requests\n",
                   point.threads, r.repetition, r.achieved_rate, r.offered_rate,
                   kBehindFraction * 100, static_cast<unsigned long long>(r.backlog));
    }
    if (r.watched.disturbed) {
      std::fprintf(stderr,
                   "kvlab-load: WARNING: disturbed: threads=%d rep %d: others used %.2f cores of "
                   "the measured CPUs, steal %.2f (above %.2f)\n",
                   point.threads, r.repetition, r.watched.foreign_cores, r.watched.steal_cores,
                   options_.config.watch.disturbed_above_cores);
    }
    if (csv_ && write_error_.ok()) {
      Status appended = csv_->Append(point, r);
      if (!appended.ok()) FailWriting(appended);
    }
    WriteJson("running", "");
  }

  // Rewrites the JSON document. RunSweep fills points_ as it goes and calls
  // back on this thread, so points_ holds every repetition completed so far.
  void WriteJson(const std::string& status, const std::string& error) {
    if (!json_ || !write_error_.ok()) return;
    Status written = json_->Write(points_, status, error);
    if (!written.ok()) FailWriting(written);
  }

  void FailWriting(const Status& status) {
    write_error_ = status;
    g_interrupted.store(true);  // stop measuring what cannot be saved
  }

  int Fail(const Status& status, const std::string& json_status) {
    std::fprintf(stderr, "kvlab-load: %s\n", status.message().c_str());
    if (!json_status.empty()) WriteJson(json_status, status.message());
    if (!points_.empty()) std::fprintf(stderr, "kvlab-load: completed repetitions are saved\n");
    return kExitRunFailed;
  }

  CommandLineOptions options_;  // Run() fills in the calibrated wake-up cost
  const std::vector<std::string> args_;
  std::unique_ptr<CsvResultFile> csv_;
  std::unique_ptr<JsonResultFile> json_;
  std::vector<PointResult> points_;
  Status write_error_;
};

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv, argv + argc);
  CommandLineOptions options;
  const Status parsed = ParseCommandLine(args, &options);
  if (!parsed.ok()) {
    std::fprintf(stderr, "kvlab-load: %s\n\n%s", parsed.message().c_str(), UsageText().c_str());
    return kExitUsage;
  }
  if (options.help) {
    std::printf("%s", UsageText().c_str());
    return kExitOk;
  }
  if (options.schema) {
    std::printf("%s", SchemaJson().c_str());
    return kExitOk;
  }
  if (options.kinds) {
    std::printf("%s", KindsJson().c_str());
    return kExitOk;
  }
  if (options.calibrate_wake_cost) {
    const WakeCost cost = CalibrateWakeCost(options.config.watch.measured_cpus);
    std::printf(
        "{\"wake_cost_us\": %.6f, \"windows\": %d, \"rejected\": %d, \"sleeps\": %lld, "
        "\"others_cores\": %.4f}\n",
        cost.seconds_per_sleep * 1e6, cost.windows, cost.rejected,
        static_cast<long long>(cost.sleeps), cost.others_cores);
    return kExitOk;
  }
  InstallInterruptHandler();
  FrontEnd front_end(std::move(options), args);
  return front_end.Run();
}
