#include "harness/sweep.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <thread>

#include "harness/measurement/cpu_usage.h"
#include "harness/measurement/load_clock.h"
#include "harness/clients/server_control.h"
#include "harness/measurement/thread_recorder.h"

namespace kvlab::harness {
namespace {

constexpr uint64_t kTickNs = 20'000'000;   // how often the runner checks for faults
constexpr uint64_t kProgressNs = 1'000'000'000;
constexpr uint64_t kStopGraceNs = 2'000'000'000;  // in-flight requests get this long

std::string PointName(const LoadConfig& config, int threads) {
  return "point threads=" + std::to_string(threads) + " client=" + ClientKindName(config.client);
}

double Micros(uint64_t nanoseconds) { return static_cast<double>(nanoseconds) / 1000.0; }

// One point's application threads, running until told to stop.
class PointRun {
 public:
  PointRun(const LoadConfig& config, int point_index, int threads)
      : config_(config), point_index_(point_index), threads_(threads) {}
  ~PointRun() { Stop(); }

  Status Start() {
    strategy_ = MakeClientStrategy(config_.client, StrategyOptionsOf(config_, threads_));
    Status connected = strategy_->Connect();
    if (!connected.ok()) return connected;
    recorders_.reserve(static_cast<size_t>(threads_));
    generators_.reserve(static_cast<size_t>(threads_));
    const auto ycsb_sequences = MakeYcsbSequences(config_.workload);  // one per point
    for (int i = 0; i < threads_; ++i) {
      recorders_.push_back(std::make_unique<ThreadRecorder>());
      const uint64_t stream = (static_cast<uint64_t>(point_index_) << 32) | static_cast<uint64_t>(i);
      const uint64_t sequential_start = config_.workload.keys / static_cast<uint64_t>(threads_) * i;
      generators_.push_back(
          std::make_unique<WorkloadGenerator>(config_.workload, stream, sequential_start,
                                              ycsb_sequences));
    }
    statuses_.resize(static_cast<size_t>(threads_));
    for (int i = 0; i < threads_; ++i) {
      workers_.emplace_back([this, i] { RunWorker(i); });
    }
    return Status::Ok();
  }

  // The first thread's error, if any thread has failed.
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  Status FirstFailure() const {
    for (const Status& status : statuses_) {
      if (!status.ok()) return status;
    }
    return Status::Ok();
  }

  // Collects every thread's counters since the last call; *at_ns is the
  // boundary between that window and the next.
  ThreadCounters TakeAll(uint64_t* at_ns) {
    *at_ns = NowNs();
    ThreadCounters total;
    for (auto& recorder : recorders_) total.Merge(recorder->Take());
    return total;
  }
  // Ops completed since the threads started (for throughput slices).
  uint64_t CompletedOps() const {
    uint64_t ops = 0;
    for (const auto& recorder : recorders_) ops += recorder->completed_ops();
    return ops;
  }
  // Open loop: requests due by at_ns and not answered yet, over all threads.
  uint64_t Backlog(uint64_t at_ns) const {
    uint64_t owed = 0;
    for (const auto& recorder : recorders_) owed += recorder->Backlog(at_ns, config_.rate / threads_);
    return owed;
  }
  void PeekAll(LatencyHistogram* latency, uint64_t* ops) {
    for (auto& recorder : recorders_) recorder->Peek(latency, ops);
  }
  int64_t LoopWakeups() const { return strategy_->loop_wakeups(); }
  int64_t Moved() const { return strategy_->moved(); }
  int64_t IncrbySum() const {
    int64_t sum = 0;
    for (const auto& recorder : recorders_) sum += recorder->incrby_sum();
    return sum;
  }

  // Lets in-flight requests finish (so INCRBY sums are exact), interrupting
  // the connections if that takes too long or something already failed.
  // `window_end_ns`: open-loop threads still send what was due by then.
  void Stop(uint64_t window_end_ns = 0) {
    if (workers_.empty()) return;
    stop_at_ns_.store(window_end_ns, std::memory_order_release);
    stop_.store(true, std::memory_order_release);
    if (failed()) {
      strategy_->Interrupt();
    } else {
      const uint64_t deadline = NowNs() + kStopGraceNs;
      while (finished_.load() < threads_ && NowNs() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      if (finished_.load() < threads_) strategy_->Interrupt();
    }
    for (std::thread& worker : workers_) worker.join();
    workers_.clear();
  }

 private:
  void RunWorker(int index) {
    Status status = PinCurrentThread(config_.cpus);
    if (status.ok()) {
      ThreadLoad load;
      load.thread_index = index;
      load.generator = generators_[static_cast<size_t>(index)].get();
      load.recorder = recorders_[static_cast<size_t>(index)].get();
      load.stop = &stop_;
      load.stop_at_ns = &stop_at_ns_;
      load.rate_per_thread = config_.rate / threads_;
      load.arrival = config_.arrival;
      // Distinct per point and thread, so every schedule has its own phase.
      load.arrival_seed = config_.workload.seed * 0x9E3779B97F4A7C15ULL +
                          (static_cast<uint64_t>(point_index_) << 32) + static_cast<uint64_t>(index) + 1;
      status = strategy_->RunThread(load);
    }
    // A failure after stop was requested is the Interrupt we caused.
    if (!status.ok() && !stop_.load()) {
      statuses_[static_cast<size_t>(index)] = status;
      failed_.store(true, std::memory_order_release);
    }
    finished_.fetch_add(1);
  }

  const LoadConfig& config_;
  const int point_index_;
  const int threads_;
  std::unique_ptr<ClientStrategy> strategy_;
  std::vector<std::unique_ptr<ThreadRecorder>> recorders_;
  std::vector<std::unique_ptr<WorkloadGenerator>> generators_;
  std::vector<Status> statuses_;  // statuses_[i] written by worker i before failed_ is set
  std::vector<std::thread> workers_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> stop_at_ns_{0};
  std::atomic<bool> failed_{false};
  std::atomic<int> finished_{0};
};

class SweepRunner {
 public:
  SweepRunner(const LoadConfig& config, const SweepCallbacks& callbacks)
      : config_(config), callbacks_(callbacks) {}

  Status Run(std::vector<PointResult>* out) {
    const ConnectionOptions control_options{true, config_.connect_timeout_s, config_.reply_timeout_s};
    Status opened = ServerControl::Open(config_.target, control_options, &control_);
    if (!opened.ok()) return opened;
    if (config_.route_slots) {
      Status routed = control_->RouteBySlots(config_.target, control_options);
      if (!routed.ok()) return routed;
    }
    server_pid_ = LocalServerPid(*control_);
    const int point_count = static_cast<int>(config_.threads.size());
    for (int index = 0; index < point_count; ++index) {
      if (Cancelled()) return Status::Cancelled("cancelled before " + PointName(config_, config_.threads[index]));
      const int threads = config_.threads[static_cast<size_t>(index)];
      out->push_back(PointResult{});
      PointResult& point = out->back();
      point.point_index = index;
      point.threads = threads;
      point.client = config_.client;
      point.connections = EffectiveConnections(config_, threads);
      point.pipeline = config_.pipeline;
      Status ran = RunPoint(index, &point);
      if (!ran.ok()) return ran;
      point.complete = true;
    }
    return Status::Ok();
  }

 private:
  bool Cancelled() const {
    return callbacks_.cancel != nullptr && callbacks_.cancel->load(std::memory_order_relaxed);
  }

  Status PrepareKeyspace(int index) {
    if (config_.flush) {
      Status flushed = control_->FlushAll();
      if (!flushed.ok()) return flushed;
    }
    if (config_.prefill && (config_.flush || index == 0)) {
      uint64_t written = 0;
      Status filled = control_->Prefill(config_.workload, &written);
      if (!filled.ok()) return filled;
    }
    return Status::Ok();
  }

  // Seconds the plan still has to go after the current phase.
  double PlannedSecondsAfter(int index, int repetition) const {
    const double per_point = config_.warmup_s + config_.duration_s * config_.repetitions;
    const int points_after = static_cast<int>(config_.threads.size()) - index - 1;
    return points_after * per_point + (config_.repetitions - repetition) * config_.duration_s;
  }

  // Runs the window [start_ns, start_ns + seconds) while the point runs,
  // sampling throughput into *slices every kSliceSeconds (from `ops_at_start`,
  // the ops completed at start_ns) and reporting progress; returns false
  // early if a thread failed or the sweep was cancelled. The caller closes
  // the last slice at the window's true end (its TakeAll).
  bool Measure(PointRun& run, const PointResult& point, int repetition, uint64_t start_ns,
               double seconds, uint64_t ops_at_start, std::vector<ThroughputSlice>* slices) {
    const uint64_t end = start_ns + static_cast<uint64_t>(seconds * 1e9);
    const uint64_t slice_ns = static_cast<uint64_t>(kSliceSeconds * 1e9);
    uint64_t last_report = NowNs();
    uint64_t ops_at_last_report = 0;
    uint64_t slice_start = start_ns;
    uint64_t ops_at_slice_start = ops_at_start;
    for (uint64_t now = NowNs(); now < end; now = NowNs()) {
      if (run.failed() || Cancelled()) return false;
      const uint64_t next_slice = slice_start + slice_ns;
      SleepUntilNs(std::min({now + kTickNs, next_slice, end}));
      const uint64_t after = NowNs();
      if (slices != nullptr && after >= next_slice && after < end) {
        const uint64_t ops = run.CompletedOps();
        slices->push_back({(slice_start - start_ns) / 1e9, (after - slice_start) / 1e9,
                           ops - std::min(ops, ops_at_slice_start)});
        slice_start = after;
        ops_at_slice_start = ops;
      }
      if (callbacks_.on_progress && after - last_report >= kProgressNs && after < end) {
        LatencyHistogram latency;
        uint64_t ops = 0;
        run.PeekAll(&latency, &ops);
        SweepProgress progress;
        progress.point_index = point.point_index;
        progress.point_count = static_cast<int>(config_.threads.size());
        progress.threads = point.threads;
        progress.repetition = repetition;
        progress.repetitions = config_.repetitions;
        progress.ops_per_s = static_cast<double>(ops - std::min(ops, ops_at_last_report)) /
                             ((after - last_report) / 1e9);
        progress.p99_us = Micros(latency.ValueAtQuantile(0.99));
        progress.eta_s = (end - after) / 1e9 + PlannedSecondsAfter(point.point_index, repetition);
        callbacks_.on_progress(progress);
        last_report = after;
        ops_at_last_report = ops;
      }
    }
    if (slices != nullptr) slice_start_ = {slice_start, ops_at_slice_start};
    return !run.failed() && !Cancelled();
  }

  // CPU readings at a window boundary.
  struct CpuMark {
    double process_seconds = 0;
    ThreadCpuTimes threads;
  };
  static CpuMark TakeCpuMark() { return {ProcessCpuSeconds(), CurrentThreadCpuTimes()}; }

  Status RunPoint(int index, PointResult* point) {
    const std::string name = PointName(config_, point->threads);
    Status prepared = PrepareKeyspace(index);
    if (!prepared.ok()) return prepared.WithContext(name);
    PointRun run(config_, index, point->threads);
    Status started = run.Start();
    if (!started.ok()) return started.WithContext(name);
    const int usable_cores = UsableCoreCount(config_.cpus);
    const double allowed_cores = AllowedCores(config_.cpus);
    const WindowWatch watch(config_.watch, server_pid_);

    bool healthy = Measure(run, *point, 0, NowNs(), config_.warmup_s, 0, nullptr);
    // The warm-up's counts are not measurements; its end starts window 1.
    uint64_t window_start_ns = 0;
    uint64_t ops_total = run.TakeAll(&window_start_ns).ops_total;
    uint64_t backlog_start = config_.rate > 0 ? run.Backlog(window_start_ns) : 0;
    CpuMark cpu_start = TakeCpuMark();
    WatchMark watch_start = watch.Mark();
    double server_cpu_start = control_->CpuSeconds();
    uint64_t server_cpu_start_ns = NowNs();
    uint64_t switches_start = ProcessContextSwitches();
    int64_t wakeups_start = run.LoopWakeups();
    int64_t moved_start = run.Moved();
    for (int repetition = 1; healthy && repetition <= config_.repetitions; ++repetition) {
      RepetitionResult result;
      healthy = Measure(run, *point, repetition, window_start_ns, config_.duration_s, ops_total,
                        &result.slices);
      uint64_t window_end_ns = 0;
      ThreadCounters counters = run.TakeAll(&window_end_ns);
      const CpuMark cpu_end = TakeCpuMark();
      const WatchMark watch_end = watch.Mark();
      const uint64_t switches_end = ProcessContextSwitches();
      const int64_t wakeups_end = run.LoopWakeups();
      const int64_t moved_end = run.Moved();
      if (!healthy) break;  // an interrupted repetition is not a measurement
      const uint64_t backlog = config_.rate > 0 ? run.Backlog(window_end_ns) : 0;
      const double server_cpu_end = control_->CpuSeconds();
      const uint64_t server_cpu_end_ns = NowNs();

      result.repetition = repetition;
      result.ops = counters.ops;
      result.errors = counters.errors;
      result.wrong_type = counters.wrong_type;
      result.misses = counters.misses;
      result.seconds = (window_end_ns - window_start_ns) / 1e9;
      result.ops_per_s = counters.ops / result.seconds;
      result.slices.push_back({(slice_start_.ns - window_start_ns) / 1e9,
                               (window_end_ns - slice_start_.ns) / 1e9,
                               counters.ops_total - std::min(counters.ops_total, slice_start_.ops)});
      if (config_.rate > 0) {
        // What the schedule made due in this window: answered, or owed at
        // its end and not already owed at its start. For uniform arrivals
        // that is rate x seconds; for Poisson the realised count, so chance
        // alone never marks a window behind.
        const uint64_t answers = counters.ops + counters.errors;
        result.offered_rate = config_.rate;
        result.achieved_rate = answers / result.seconds;
        const double due_in_window = static_cast<double>(answers) + static_cast<double>(backlog) -
                                     static_cast<double>(backlog_start);
        result.behind = static_cast<double>(answers) < kBehindFraction * due_in_window;
        result.backlog = backlog;
        backlog_start = backlog;
      }
      result.client_cpu = (cpu_end.process_seconds - cpu_start.process_seconds) / result.seconds;
      result.busiest_thread_cpu = BusiestThreadCores(cpu_start.threads, cpu_end.threads, result.seconds);
      result.usable_cores = usable_cores;
      result.allowed_cores = allowed_cores;
      result.client_bound = IsClientBound(result.client_cpu, allowed_cores, result.busiest_thread_cpu);
      if (server_cpu_start >= 0 && server_cpu_end >= 0) {
        result.server_cpu =
            (server_cpu_end - server_cpu_start) / ((server_cpu_end_ns - server_cpu_start_ns) / 1e9);
      }
      const double ops = static_cast<double>(std::max<uint64_t>(counters.ops, 1));
      result.client_cs_per_op = static_cast<double>(switches_end - switches_start) / ops;
      if (wakeups_start >= 0) result.loop_wakeups_per_op = static_cast<double>(wakeups_end - wakeups_start) / ops;
      if (moved_start >= 0) result.moved = moved_end - moved_start;
      result.watched = watch.Between(watch_start, watch_end);
      result.latency = std::move(counters.latency);
      window_start_ns = window_end_ns;
      watch_start = watch_end;
      ops_total = counters.ops_total;
      cpu_start = cpu_end;
      switches_start = switches_end;
      wakeups_start = wakeups_end;
      moved_start = moved_end;
      server_cpu_start = server_cpu_end;
      server_cpu_start_ns = server_cpu_end_ns;
      const bool last = repetition == config_.repetitions;
      if (last && config_.rate > 0) {
        // Drain the last window's backlog: the threads send what was due by
        // its end, and those replies' latencies belong to this repetition.
        run.Stop(window_end_ns);
        uint64_t drained_at = 0;
        result.latency.Merge(run.TakeAll(&drained_at).latency);
      }
      SetPercentiles(&result);
      point->repetitions.push_back(std::move(result));
      point->incrby_sum = run.IncrbySum();
      if (callbacks_.on_repetition) callbacks_.on_repetition(*point, point->repetitions.back());
    }
    run.Stop();
    point->incrby_sum = run.IncrbySum();
    const Status failure = run.FirstFailure();
    const std::string where =
        name + " repetition " + std::to_string(point->repetitions.size() + 1) + "/" +
        std::to_string(config_.repetitions);
    if (!failure.ok()) return failure.WithContext(where);
    if (Cancelled()) return Status::Cancelled("cancelled during " + where);
    return Status::Ok();
  }

  const LoadConfig& config_;
  const SweepCallbacks& callbacks_;
  std::unique_ptr<ServerControl> control_;
  pid_t server_pid_ = 0;  // LocalServerPid(), 0: not here
  // Where the last Measure left its unfinished slice.
  struct SliceStart {
    uint64_t ns = 0;
    uint64_t ops = 0;
  } slice_start_;
};

}  // namespace

Status ValidateConfig(const LoadConfig& config) {
  if (config.workload.command == CommandKind::kRedisBenchmark) {
    return Status::InvalidArgument("--command rb:" + config.workload.redis_benchmark_test +
                                   " is one of redis-benchmark's own tests: it needs "
                                   "--loadgen redis-benchmark");
  }
  return ValidateCommonConfig(config);
}

Status ValidateCommonConfig(const LoadConfig& config, bool redis_benchmark) {
  auto invalid = [](const std::string& what) { return Status::InvalidArgument(what); };
  auto range = [](int low, int high) { return std::to_string(low) + ".." + std::to_string(high); };
  if (config.threads.empty()) return invalid("--threads needs at least one value");
  for (int threads : config.threads) {
    if (threads < 1 || threads > kMaxThreads) return invalid("--threads values must be in " + range(1, kMaxThreads));
  }
  if (config.connections < 0 || config.connections > kMaxConnections) {
    return invalid("--connections must be in " + range(1, kMaxConnections) +
                   " (0: the client strategy's default)");
  }
  Status io = ValidateIoOptions(config.io);
  if (!io.ok()) return io;
  if (config.pipeline < 1 || config.pipeline > kMaxPipeline) {
    return invalid("--pipeline must be in " + range(1, kMaxPipeline));
  }
  ClientOptionUse use = ClientOptionUseOf(config);
  use.redis_benchmark = redis_benchmark;
  Status applies = CheckClientOptions(use);
  if (!applies.ok()) return applies;
  if (!(config.duration_s > 0)) return invalid("--duration must be > 0 seconds");
  if (!(config.warmup_s >= 0)) return invalid("--warmup must be >= 0 seconds");
  if (config.repetitions < 1 || config.repetitions > kMaxRepetitions) {
    return invalid("--repeat must be in " + range(1, kMaxRepetitions));
  }
  if (!(config.rate >= 0)) return invalid("--rate must be >= 0 ops/s (0: closed loop)");
  if (config.workload.keys < 1) return invalid("--keys must be >= 1");
  if (config.workload.command == CommandKind::kYcsb &&
      config.workload.distribution == KeyDistribution::kSequential) {
    return invalid("--key-dist sequential does not apply to YCSB (allowed: zipf:THETA, its "
                   "zipfian or latest, or uniform)");
  }
  if (!(config.connect_timeout_s > 0) || !(config.reply_timeout_s > 0)) {
    return invalid("timeouts must be > 0 seconds");
  }
  return Status::Ok();
}

void SetPercentiles(RepetitionResult* r) {
  const LatencyHistogram& latency = r->latency;
  r->p50_us = Micros(latency.ValueAtQuantile(0.50));
  r->p90_us = Micros(latency.ValueAtQuantile(0.90));
  r->p99_us = Micros(latency.ValueAtQuantile(0.99));
  r->p999_us = Micros(latency.ValueAtQuantile(0.999));
  r->max_us = Micros(latency.max_ns());
  r->mean_us = latency.mean_ns() / 1000.0;
}

LatencyHistogram MergedLatency(const PointResult& point) {
  LatencyHistogram merged;
  for (const RepetitionResult& r : point.repetitions) merged.Merge(r.latency);
  return merged;
}

StrategyOptions StrategyOptionsOf(const LoadConfig& config, int threads) {
  StrategyOptions options;
  options.target = config.target;
  options.connection = {config.tcp_nodelay, config.connect_timeout_s, config.reply_timeout_s};
  options.threads = threads;
  options.connections = EffectiveConnections(config, threads);
  options.pipeline = config.pipeline;
  options.refill = config.refill;
  options.cpus = config.cpus;
  options.io = config.io;
  options.route_slots = config.route_slots;
  return options;
}

int EffectiveConnections(const LoadConfig& config, int threads) {
  return ConnectionsOf(config.client, config.connections, threads);
}

ClientOptionUse ClientOptionUseOf(const LoadConfig& config) {
  ClientOptionUse use;
  use.client = config.client;
  use.connections = config.connections;
  use.fewest_threads = config.threads.empty() ? 1 : *std::min_element(config.threads.begin(), config.threads.end());
  use.pipeline = config.pipeline;
  use.refill = config.refill != RefillMode::kSteady;
  use.event_loop = config.io.model == IoModel::kEventLoop;
  if (NeedsOwnConnection(config.workload.command)) use.own_connection_command = CommandLabel(config.workload);
  return use;
}

Status RunSweep(const LoadConfig& config, const SweepCallbacks& callbacks,
                std::vector<PointResult>* out) {
  Status valid = ValidateConfig(config);
  if (!valid.ok()) return valid;
  SweepRunner runner(config, callbacks);
  return runner.Run(out);
}

}  // namespace kvlab::harness
