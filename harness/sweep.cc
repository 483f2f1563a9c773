#include "harness/sweep.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <thread>

#include "harness/clients/server_control.h"
#include "harness/measurement/cpu_usage.h"
#include "harness/measurement/load_clock.h"
#include "harness/measurement/process_readings.h"
#include "harness/measurement/thread_recorder.h"
#include "harness/window_marks.h"

namespace kvlab::harness {
namespace {

constexpr uint64_t kTickNs = 20'000'000;  // how often the runner checks for faults
constexpr uint64_t kProgressNs = 1'000'000'000;
constexpr uint64_t kStopGraceNs = 2'000'000'000;  // in-flight requests get this long

std::string PointName(const LoadConfig& config, int threads) {
  return "point threads=" + std::to_string(threads) + " client=" + ClientKindName(config.client);
}

// One point's application threads, running until told to stop; the
// sources of its windows' marks.
class PointRun final : public WindowSources {
 public:
  PointRun(const LoadConfig& config, int point_index, int threads, ServerControl& control)
      : config_(config), point_index_(point_index), threads_(threads), control_(control) {}
  ~PointRun() override { Stop(); }

  Status Start() {
    strategy_ = MakeClientStrategy(config_.client, StrategyOptionsOf(config_, threads_));
    Status connected = strategy_->Connect();
    if (!connected.ok()) return connected;
    recorders_.reserve(static_cast<size_t>(threads_));
    generators_.reserve(static_cast<size_t>(threads_));
    const auto ycsb_sequences = MakeYcsbSequences(config_.workload);  // one per point
    for (int i = 0; i < threads_; ++i) {
      recorders_.push_back(std::make_unique<ThreadRecorder>());
      const uint64_t stream =
          (static_cast<uint64_t>(point_index_) << 32) | static_cast<uint64_t>(i);
      const uint64_t sequential_start = config_.workload.keys / static_cast<uint64_t>(threads_) * i;
      generators_.push_back(std::make_unique<WorkloadGenerator>(config_.workload, stream,
                                                                sequential_start, ycsb_sequences));
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
  ThreadCounters TakeCounters(uint64_t* at_ns) override {
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
  uint64_t Backlog(uint64_t at_ns) const override {
    uint64_t owed = 0;
    for (const auto& recorder : recorders_)
      owed += recorder->Backlog(at_ns, config_.rate / threads_);
    return owed;
  }
  void PeekAll(LatencyHistogram* latency, uint64_t* ops) {
    for (auto& recorder : recorders_) recorder->Peek(latency, ops);
  }
  double ServerCpuSeconds() override {
    if (!config_.server_pids.empty()) return ProcessTreeCpuSeconds(config_.server_pids);
    return control_.CpuSeconds();
  }
  // The entry node's INFO stages (of a cluster: that node's only).
  StageTotals ServerStages() override {
    std::string text;
    if (!control_.Info("stages", &text).ok()) return {};
    return ParseStageTotals(text);
  }
  // The entry node's INFO commandstats (redis-server's; of a cluster: that
  // node's only).
  CommandStatTotals ServerCommandStats() override {
    std::string text;
    if (!control_.Info("commandstats", &text).ok()) return {};
    CommandStatTotals totals = ParseCommandStatTotals(text);
    totals.read_at_ns = NowNs();
    return totals;
  }
  int64_t LoopWakeups() const override { return strategy_->loop_wakeups(); }
  int64_t Moved() const override { return strategy_->moved(); }
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
      // Distinct per point and thread, so every schedule has its own phase.
      ThreadLoad load =
          ThreadLoadOf(config_, threads_, index, generators_[static_cast<size_t>(index)].get(),
                       recorders_[static_cast<size_t>(index)].get(), &stop_, &stop_at_ns_,
                       static_cast<uint64_t>(point_index_) << 32);
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
  ServerControl& control_;
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
    const ConnectionOptions control_options = ConnectionOptionsOf(config_, /*control=*/true);
    Status opened = ServerControl::Open(config_.target, control_options, &control_);
    if (!opened.ok()) return opened;
    if (config_.route_slots) {
      Status routed = control_->RouteBySlots(config_.target, control_options);
      if (!routed.ok()) return routed;
    }
    server_pid_ =
        config_.server_pids.empty() ? LocalServerPid(*control_) : config_.server_pids.front();
    const int point_count = static_cast<int>(config_.threads.size());
    for (int index = 0; index < point_count; ++index) {
      if (Cancelled())
        return Status::Cancelled("cancelled before " + PointName(config_, config_.threads[index]));
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
  // the last slice at the window's true end (its mark).
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

  Status RunPoint(int index, PointResult* point) {
    const std::string name = PointName(config_, point->threads);
    Status prepared = PrepareKeyspace(index);
    if (!prepared.ok()) return prepared.WithContext(name);
    PointRun run(config_, index, point->threads, *control_);
    Status started = run.Start();
    if (!started.ok()) return started.WithContext(name);
    const WindowWatch watch(config_.watch, server_pid_);
    WindowMarks marks(run, watch, config_.rate, UsableCoreCount(config_.cpus),
                      AllowedCores(config_.cpus));
    bool healthy = Measure(run, *point, 0, NowNs(), config_.warmup_s, 0, nullptr);
    // The warm-up's counts are not measurements; its end starts window 1.
    WindowMark start = marks.Take();
    for (int repetition = 1; healthy && repetition <= config_.repetitions; ++repetition) {
      healthy = MeasureRepetition(run, marks, repetition, &start, point);
    }
    return FinishPoint(run, name, point);
  }

  // Measures the window that begins at *start and records it in *point;
  // its end becomes *start. False when the window was interrupted (a
  // thread failed, the sweep was cancelled): that is not a measurement.
  bool MeasureRepetition(PointRun& run, WindowMarks& marks, int repetition, WindowMark* start,
                         PointResult* point) {
    std::vector<ThroughputSlice> slices;
    if (!Measure(run, *point, repetition, start->at_ns, config_.duration_s,
                 start->counters.ops_total, &slices)) {
      return false;
    }
    WindowMark end = marks.Take();
    RepetitionResult result = marks.Between(*start, end);
    result.repetition = repetition;
    result.slices = std::move(slices);
    const uint64_t ops_total = end.counters.ops_total;
    result.slices.push_back({(slice_start_.ns - start->at_ns) / 1e9,
                             (end.at_ns - slice_start_.ns) / 1e9,
                             ops_total - std::min(ops_total, slice_start_.ops)});
    *start = std::move(end);
    if (repetition == config_.repetitions && config_.rate > 0) {
      // Drain the last window's backlog: the threads send what was due by
      // its end, and those replies' latencies belong to this repetition.
      run.Stop(start->at_ns);
      uint64_t drained_at = 0;
      result.latency.Merge(run.TakeCounters(&drained_at).latency);
    }
    SetPercentiles(&result);
    point->repetitions.push_back(std::move(result));
    point->incrby_sum = run.IncrbySum();
    if (callbacks_.on_repetition) callbacks_.on_repetition(*point, point->repetitions.back());
    return true;
  }

  // Stops the point's threads; the first failure or the cancellation, named
  // by the repetition it interrupted.
  Status FinishPoint(PointRun& run, const std::string& name, PointResult* point) {
    run.Stop();
    point->incrby_sum = run.IncrbySum();
    const Status failure = run.FirstFailure();
    const std::string where = name + " repetition " +
                              std::to_string(point->repetitions.size() + 1) + "/" +
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
    if (threads < 1 || threads > kMaxThreads)
      return invalid("--threads values must be in " + range(1, kMaxThreads));
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
    return invalid(
        "--key-dist sequential does not apply to YCSB (allowed: zipf:THETA, its "
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

ConnectionOptions ConnectionOptionsOf(const LoadConfig& config, bool control) {
  ConnectionOptions options;
  options.tcp_nodelay = control || config.tcp_nodelay;
  options.connect_timeout_s = config.connect_timeout_s;
  options.reply_timeout_s = config.reply_timeout_s;
  options.user = config.user;
  options.password = config.password;
  return options;
}

StrategyOptions StrategyOptionsOf(const LoadConfig& config, int threads) {
  StrategyOptions options;
  options.target = config.target;
  options.connection = ConnectionOptionsOf(config);
  options.threads = threads;
  options.connections = EffectiveConnections(config, threads);
  options.pipeline = config.pipeline;
  options.refill = config.refill;
  options.cpus = config.cpus;
  options.io = config.io;
  options.route_slots = config.route_slots;
  return options;
}

ThreadLoad ThreadLoadOf(const LoadConfig& config, int threads, int index,
                        WorkloadGenerator* generator, ThreadRecorder* recorder,
                        const std::atomic<bool>* stop, const std::atomic<uint64_t>* stop_at_ns,
                        uint64_t schedule_salt) {
  return {.thread_index = index,
          .generator = generator,
          .recorder = recorder,
          .stop = stop,
          .stop_at_ns = stop_at_ns,
          .rate_per_thread = config.rate / threads,
          .arrival = config.arrival,
          .arrival_seed = config.workload.seed * 0x9E3779B97F4A7C15ULL + schedule_salt +
                          static_cast<uint64_t>(index) + 1};
}

int EffectiveConnections(const LoadConfig& config, int threads) {
  return ConnectionsOf(config.client, config.connections, threads);
}

ClientOptionUse ClientOptionUseOf(const LoadConfig& config) {
  ClientOptionUse use;
  use.client = config.client;
  use.connections = config.connections;
  use.fewest_threads =
      config.threads.empty() ? 1 : *std::min_element(config.threads.begin(), config.threads.end());
  use.pipeline = config.pipeline;
  use.refill = config.refill != RefillMode::kSteady;
  use.event_loop = config.io.model == IoModel::kEventLoop;
  if (NeedsOwnConnection(config.workload.command))
    use.own_connection_command = CommandLabel(config.workload);
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
