#include "harness/alternation.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <string>
#include <thread>

#include "base/mutex.h"
#include "harness/measurement/cpu_usage.h"
#include "harness/output/json_writer.h"
#include "harness/measurement/load_clock.h"
#include "harness/measurement/process_readings.h"
#include "harness/output/result_files.h"
#include "harness/clients/server_control.h"
#include "harness/measurement/thread_recorder.h"
#include "harness/measurement/irq_accounting.h"

namespace kvlab::harness {
namespace {

constexpr uint64_t kDrainGraceNs = 2'000'000'000;  // in-flight requests get this long at a switch

const char* SideName(int side) { return side == 0 ? "side A" : "side B"; }

// One side's client: its strategy's connections stay open for the whole
// run; its application threads park between the slices that load it.
class SideRun {
 public:
  SideRun(const LoadConfig& config, int side) : config_(config), side_(side) {}
  SideRun(const SideRun&) = delete;
  SideRun& operator=(const SideRun&) = delete;
  ~SideRun() { Shutdown(); }

  Status Start() {
    threads_ = config_.threads.front();
    strategy_ = MakeClientStrategy(config_.client, StrategyOptionsOf(config_, threads_));
    Status connected = strategy_->Connect();
    if (!connected.ok()) return connected.WithContext(SideName(side_));
    const auto ycsb_sequences = MakeYcsbSequences(config_.workload);  // one per side
    for (int i = 0; i < threads_; ++i) {
      recorders_.push_back(std::make_unique<ThreadRecorder>());
      // Each side its own streams, so A and B never send the same key sequence.
      const uint64_t stream = (static_cast<uint64_t>(side_ + 1) << 40) | static_cast<uint64_t>(i);
      const uint64_t sequential_start = config_.workload.keys / static_cast<uint64_t>(threads_) * i;
      generators_.push_back(std::make_unique<WorkloadGenerator>(config_.workload, stream,
                                                                sequential_start, ycsb_sequences));
    }
    {
      MutexLock lock(mutex_);  // no worker yet: only for the analysis
      statuses_.resize(static_cast<size_t>(threads_));
    }
    for (int i = 0; i < threads_; ++i) workers_.emplace_back([this, i] { Work(i); });
    return Status::Ok();
  }

  // Lets the parked threads run their closed loops.
  void Activate() {
    {
      MutexLock lock(mutex_);
      stop_.store(false, std::memory_order_release);
      returned_ = 0;
      ++generation_;
    }
    wake_.notify_all();
  }

  // Stops sending and waits until every thread's in-flight requests are
  // answered (the threads then park); open loop: after sending every request
  // due by `send_until_ns`. False when that took longer than the grace or a
  // thread failed: the connections are interrupted.
  bool Deactivate(uint64_t send_until_ns) {
    stop_at_ns_.store(send_until_ns, std::memory_order_release);
    stop_.store(true, std::memory_order_release);
    MutexLock lock(mutex_);
    const bool drained = lock.WaitFor(done_, std::chrono::nanoseconds(kDrainGraceNs),
                                      [this]() REQUIRES(mutex_) { return returned_ == threads_; });
    if (!drained) {
      lock.Unlock();
      strategy_->Interrupt();
    }
    return drained && !failed();
  }

  ThreadCounters TakeAll(uint64_t* at_ns) {
    if (at_ns != nullptr) *at_ns = NowNs();
    ThreadCounters total;
    for (auto& recorder : recorders_) total.Merge(recorder->Take());
    return total;
  }

  bool failed() const { return failed_.load(std::memory_order_acquire); }
  Status FirstFailure() const {
    MutexLock lock(mutex_);
    for (const Status& status : statuses_) {
      if (!status.ok()) return status.WithContext(SideName(side_));
    }
    return Status::Ok();
  }
  int64_t IncrbySum() const {
    int64_t sum = 0;
    for (const auto& recorder : recorders_) sum += recorder->incrby_sum();
    return sum;
  }

  void Shutdown() {
    if (workers_.empty()) return;
    {
      MutexLock lock(mutex_);
      quit_ = true;
      stop_.store(true, std::memory_order_release);
    }
    wake_.notify_all();
    for (std::thread& worker : workers_) worker.join();
    workers_.clear();
  }

 private:
  void Work(int index) {
    Status pinned = PinCurrentThread(config_.cpus);
    uint64_t seen = 0;
    for (;;) {
      {
        MutexLock lock(mutex_);
        lock.Wait(wake_, [&]() REQUIRES(mutex_) { return quit_ || generation_ != seen; });
        if (quit_) return;
        seen = generation_;
      }
      Status status = pinned;
      if (status.ok()) {
        // Each side, slice and thread its own schedule (a fresh phase every slice).
        ThreadLoad load =
            ThreadLoadOf(config_, threads_, index, generators_[static_cast<size_t>(index)].get(),
                         recorders_[static_cast<size_t>(index)].get(), &stop_, &stop_at_ns_,
                         (static_cast<uint64_t>(side_ + 1) << 48) + (seen << 20));
        status = strategy_->RunThread(load);
      }
      {
        MutexLock lock(mutex_);
        if (!status.ok() && !quit_ && statuses_[static_cast<size_t>(index)].ok()) {
          statuses_[static_cast<size_t>(index)] = status;
          failed_.store(true, std::memory_order_release);
        }
        ++returned_;
      }
      done_.notify_all();
    }
  }

  const LoadConfig& config_;
  const int side_;
  int threads_ = 1;
  std::unique_ptr<ClientStrategy> strategy_;
  std::vector<std::unique_ptr<ThreadRecorder>> recorders_;
  std::vector<std::unique_ptr<WorkloadGenerator>> generators_;
  std::vector<Status> statuses_ GUARDED_BY(mutex_);
  std::vector<std::thread> workers_;
  mutable Mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  uint64_t generation_ GUARDED_BY(mutex_) = 0;  // bumped by every Activate
  int returned_ GUARDED_BY(mutex_) = 0;         // threads parked since the last Activate
  bool quit_ GUARDED_BY(mutex_) = false;
  std::atomic<bool> stop_{true};
  std::atomic<uint64_t> stop_at_ns_{0};  // open loop: requests due by then are still sent
  std::atomic<bool> failed_{false};
};

// Prefills (or flushes) a target once; shared by both sides when they name it.
Status PrepareTarget(const LoadConfig& config, ServerControl& control) {
  if (config.flush) {
    Status flushed = control.FlushAll();
    if (!flushed.ok()) return flushed;
  }
  if (config.prefill) {
    uint64_t written = 0;
    return control.Prefill(config.workload, &written);
  }
  return Status::Ok();
}

}  // namespace

double ServerCpuClockSeconds(pid_t pid) {
  if (pid <= 0) return -1;
  clockid_t clock;
  if (::clock_getcpuclockid(pid, &clock) != 0) return -1;
  timespec now{};
  if (::clock_gettime(clock, &now) != 0) return -1;
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
}

namespace {

// A side's server CPU so far: the processes of its --server-pids' trees
// (`tree`, found before the slice), else its process's CPU clock.
double SideServerCpuSeconds(const LoadConfig& config, const std::vector<pid_t>& tree,
                            pid_t server_pid) {
  if (!config.server_pids.empty()) return ProcessesCpuSeconds(tree);
  return ServerCpuClockSeconds(server_pid);
}

}  // namespace

Status ValidateAlternation(const AlternationConfig& config) {
  for (const LoadConfig* side : {&config.a, &config.b}) {
    Status valid = ValidateConfig(*side);
    if (!valid.ok()) return valid;
    if (side->threads.size() != 1) {
      return Status::InvalidArgument("alternation measures one point: give --threads one value");
    }
  }
  if (config.a.rate != config.b.rate || config.a.arrival != config.b.arrival) {
    return Status::InvalidArgument(
        "both sides of an alternation are offered the same load: "
        "--alternate-with cannot change --rate or --arrival");
  }
  if (!(config.slice_s >= 0.005 && config.slice_s <= 60)) {
    return Status::InvalidArgument("--slice must be in 0.005..60 seconds");
  }
  if (!(config.ramp_s >= 0 && config.ramp_s < config.slice_s / 2)) {
    return Status::InvalidArgument("--ramp must be >= 0 and under half the slice");
  }
  if (!(config.duration_s >= 4 * config.slice_s)) {
    return Status::InvalidArgument(
        "alternation needs --duration of at least 4 slices (one ABBA cycle)");
  }
  if (!(config.warmup_s >= 0)) return Status::InvalidArgument("--warmup must be >= 0 seconds");
  return Status::Ok();
}

Status RunAlternation(const AlternationConfig& config, const std::atomic<bool>* cancel,
                      AlternationResult* out) {
  Status valid = ValidateAlternation(config);
  if (!valid.ok()) return valid;
  const LoadConfig* configs[2] = {&config.a, &config.b};
  const bool one_target = config.a.target.ToUrl() == config.b.target.ToUrl();
  std::unique_ptr<ServerControl> controls[2];
  for (int side = 0; side < 2; ++side) {
    const LoadConfig& load = *configs[side];
    if (side == 1 && one_target) {
      out->sides[1].server_pid = out->sides[0].server_pid;
      break;
    }
    const ConnectionOptions options = ConnectionOptionsOf(load, /*control=*/true);
    Status opened = ServerControl::Open(load.target, options, &controls[side]);
    if (!opened.ok()) return opened.WithContext(SideName(side));
    out->sides[side].server_pid =
        load.server_pids.empty() ? LocalServerPid(*controls[side]) : load.server_pids.front();
    Status prepared = PrepareTarget(load, *controls[side]);
    if (!prepared.ok()) return prepared.WithContext(SideName(side));
  }

  SideRun a(config.a, 0), b(config.b, 1);
  SideRun* runs[2] = {&a, &b};
  for (SideRun* run : runs) {
    Status started = run->Start();
    if (!started.ok()) return started;
  }
  // Both servers are ours: only others' CPU on the measured CPUs is interference.
  WatchOptions watch_options = config.a.watch;
  if (!one_target && out->sides[1].server_pid > 0) {
    watch_options.own_pids.push_back(out->sides[1].server_pid);
  }
  // A side of several processes: every one of them, and their children, are ours.
  for (const LoadConfig* side : configs) {
    watch_options.own_pids.insert(watch_options.own_pids.end(), side->server_pids.begin(),
                                  side->server_pids.end());
    watch_options.trees = watch_options.trees || side->watch.trees;
  }
  const WindowWatch watch(watch_options, out->sides[0].server_pid);
  out->usable_cores = UsableCoreCount(config.a.cpus);
  out->allowed_cores = AllowedCores(config.a.cpus);

  auto cancelled = [cancel] {
    return cancel != nullptr && cancel->load(std::memory_order_relaxed);
  };
  const uint64_t slice_ns = static_cast<uint64_t>(config.slice_s * 1e9);
  const uint64_t ramp_ns = static_cast<uint64_t>(config.ramp_s * 1e9);
  // Warm-up slices keep the ABBA order and a whole number of cycles.
  const int warmup_slices = 4 * static_cast<int>((config.warmup_s / config.slice_s + 3) / 4);
  const int measured_slices = static_cast<int>(config.duration_s / config.slice_s + 1e-9);
  const bool open_loop = config.a.rate > 0;
  const bool measured_cpus = !watch_options.measured_cpus.empty();
  out->measured_cpus = measured_cpus;
  uint64_t first_start_ns = 0;
  WatchMark watch_start;
  Status failure;
  for (int i = 0; i < warmup_slices + measured_slices; ++i) {
    const bool measured = i >= warmup_slices;
    const int index = i - warmup_slices;
    const int side = SideOfSlice(measured ? index : i);
    SideRun& run = *runs[side];
    const pid_t server_pid = out->sides[side].server_pid;
    if (measured && index == 0) watch_start = watch.Mark();
    // The processes to read, found while no side runs: finding a tree reads
    // /proc, which inside the slice took the load's CPU from one side only.
    // Found inside, a command row served 0.95 [0.92, 0.97] of its native
    // row's SET/s (12 starts alternated); found here, 1.01 [0.99, 1.04].
    const std::vector<pid_t> server_tree = configs[side]->server_pids.empty()
                                               ? std::vector<pid_t>()
                                               : ProcessTreeOf(configs[side]->server_pids);
    const std::vector<pid_t> own = measured ? watch.OwnProcesses() : std::vector<pid_t>();

    const uint64_t begin_ns = NowNs();
    run.Activate();
    SleepUntilNs(begin_ns + ramp_ns);
    uint64_t start_ns = 0;
    const ThreadCounters ramp = run.TakeAll(&start_ns);
    const double client_cpu_start = ProcessCpuSeconds();
    const double server_cpu_start = SideServerCpuSeconds(*configs[side], server_tree, server_pid);
    const WatchMark slice_start = measured ? watch.Mark(own) : WatchMark();
    SleepUntilNs(begin_ns + slice_ns);
    uint64_t end_ns = 0;
    ThreadCounters counters = run.TakeAll(&end_ns);
    double client_cpu_end = ProcessCpuSeconds();
    double server_cpu_end = SideServerCpuSeconds(*configs[side], server_tree, server_pid);
    const WatchMark slice_end = measured ? watch.Mark(own) : WatchMark();
    const bool drained = run.Deactivate(end_ns);
    ThreadCounters drain = run.TakeAll(nullptr);
    const uint64_t drained_ns = NowNs();
    if (open_loop) {
      // Requests scheduled in the slice and answered after its end are its own:
      // their latency, their server's and client's work.
      counters.Merge(drain);
      drain = ThreadCounters();
      client_cpu_end = ProcessCpuSeconds();
      server_cpu_end = SideServerCpuSeconds(*configs[side], server_tree, server_pid);
    }
    if (!drained) {
      failure = run.FirstFailure();
      if (failure.ok())
        failure = Status::IoError(std::string(SideName(side)) +
                                  ": in-flight requests did not drain within 2 s");
      break;
    }
    if (measured) {
      if (index == 0) first_start_ns = start_ns;
      AlternatingSlice slice;
      slice.index = index;
      slice.side = side;
      slice.start_s = (start_ns - first_start_ns) / 1e9;
      slice.seconds = (end_ns - start_ns) / 1e9;
      slice.ops = counters.ops;
      slice.errors = counters.errors;
      slice.ramp_ops = ramp.ops + ramp.errors;
      slice.drain_ops = drain.ops + drain.errors;
      slice.drain_s = (drained_ns - end_ns) / 1e9;
      slice.client_cpu_s = client_cpu_end - client_cpu_start;
      if (server_cpu_start >= 0 && server_cpu_end >= 0) {
        slice.server_cpu_s = server_cpu_end - server_cpu_start;
      }
      slice.latency = std::move(counters.latency);
      if (measured_cpus) {
        // Not clamped at zero (WindowWatch's window figure is): /proc/stat's tick
        // rounding makes a quiet slice's figure scatter around zero, and only an
        // unclamped figure averages back to it over many slices.
        const double tick_s = 1.0 / ProcTicksPerSecond();
        const double seconds = std::max((slice_end.ns - slice_start.ns) / 1e9, 1e-9);
        slice.foreign_cores = ForeignSecondsBetween(slice_start, slice_end, ProcTicksPerSecond(),
                                                    watch_options.wake_cost_seconds) /
                              seconds;
        slice.steal_cores =
            static_cast<double>(slice_end.ticks.steal - slice_start.ticks.steal) * tick_s / seconds;
      }
      out->seconds = (end_ns - first_start_ns) / 1e9;
      out->slices.push_back(std::move(slice));
    }
    if (cancelled()) {
      failure =
          Status::Cancelled("cancelled after " + std::to_string(out->slices.size()) + " slices");
      break;
    }
  }
  if (!out->slices.empty()) out->watched = watch.Between(watch_start, watch.Mark());
  for (int side = 0; side < 2; ++side) {
    runs[side]->Shutdown();
    out->sides[side].incrby_sum = runs[side]->IncrbySum();
  }
  return failure;
}

namespace {

void SideJson(JsonWriter& json, const LoadConfig& config, const AlternationSide& side) {
  json.BeginObject();
  json.Key("target").String(config.target.ToUrl());
  json.Key("client").String(ClientKindName(config.client));
  json.Key("io").String(IoModelName(config.io.model));
  json.Key("threads").Integer(config.threads.front());
  json.Key("connections").Integer(EffectiveConnections(config, config.threads.front()));
  json.Key("pipeline").Integer(config.pipeline);
  json.Key("nodelay").Bool(config.tcp_nodelay);
  json.Key("server_pid").Integer(side.server_pid);
  json.Key("incrby_sum").Integer(side.incrby_sum);
  json.EndObject();
}

}  // namespace

std::string AlternationJson(const AlternationConfig& config, const AlternationResult& result,
                            const std::string& status, const std::string& error) {
  JsonWriter json;
  json.BeginObject();
  json.Key("format").String("kvlab-load alternation 1");
  json.Key("status").String(status);
  json.Key("error").String(error);
  json.Key("slice_s").Number(config.slice_s);
  json.Key("ramp_s").Number(config.ramp_s);
  json.Key("warmup_s").Number(config.warmup_s);
  json.Key("rate").Number(config.a.rate);  // 0: closed loop
  json.Key("arrival").String(ArrivalKindName(config.a.arrival));
  json.Key("seconds").Number(result.seconds);
  json.Key("usable_cores").Integer(result.usable_cores);
  json.Key("allowed_cores").Number(result.allowed_cores);
  json.Key("foreign_cpu").Number(result.watched.foreign_cores);
  json.Key("steal_cpu").Number(result.watched.steal_cores);
  json.Key("disturbed").Bool(result.watched.disturbed);
  json.Key("slices_measure_cpus").Bool(result.measured_cpus);  // per-slice foreign/steal read
  json.Key("irq_time").String(ThisKernelIrqAccounting().Describe());  // what busy counts
  // What foreign_cpu left out per sleep of ours (wake_cost.h); < 0: not measured.
  json.Key("wake_cost_us").Number(config.a.watch.wake_cost_seconds * 1e6);
  json.Key("sides").BeginArray();
  SideJson(json, config.a, result.sides[0]);
  SideJson(json, config.b, result.sides[1]);
  json.EndArray();
  json.Key("slices").BeginArray();
  for (const AlternatingSlice& slice : result.slices) {
    json.BeginObject();
    json.Key("index").Integer(slice.index);
    json.Key("side").Integer(slice.side);
    json.Key("start_s").Number(slice.start_s);
    json.Key("seconds").Number(slice.seconds);
    json.Key("ops").Unsigned(slice.ops);
    json.Key("errors").Unsigned(slice.errors);
    json.Key("ramp_ops").Unsigned(slice.ramp_ops);
    json.Key("drain_ops").Unsigned(slice.drain_ops);
    json.Key("drain_s").Number(slice.drain_s);
    json.Key("client_cpu_s").Number(slice.client_cpu_s);
    json.Key("server_cpu_s").Number(slice.server_cpu_s);
    json.Key("foreign_cpu").Number(slice.foreign_cores);
    json.Key("steal_cpu").Number(slice.steal_cores);
    json.Key("mean_us").Number(slice.latency.mean_ns() / 1000.0);
    json.Key("p50_us").Number(Micros(slice.latency.ValueAtQuantile(0.50)));
    json.Key("p99_us").Number(Micros(slice.latency.ValueAtQuantile(0.99)));
    if (config.a.rate > 0) {
      json.Key("histogram");
      WriteHistogram(json, slice.latency);
    }
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
  return json.text() + "\n";
}

}  // namespace kvlab::harness
