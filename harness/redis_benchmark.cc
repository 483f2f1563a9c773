#include "harness/redis_benchmark.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>

#include "harness/measurement/cpu_usage.h"
#include "harness/measurement/load_clock.h"
#include "harness/measurement/process_readings.h"
#include "harness/clients/server_control.h"
#include "harness/clients/slot_map.h"

namespace kvlab::harness {
namespace {

constexpr const char* kProgram = "redis-benchmark";
constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

// redis-benchmark's test name (-t) for a workload; empty when it has none.
std::string TestName(const WorkloadSpec& workload) {
  switch (workload.command) {
    case CommandKind::kGet:
      return "get";
    case CommandKind::kSet:
      return "set";
    case CommandKind::kPing:
      return "ping_mbulk";  // a RESP array, as kvlab-load sends it
    case CommandKind::kRedisBenchmark:
      return workload.redis_benchmark_test;
    default:
      return {};
  }
}

// The CSV's test column: the -t name in capitals, then, for some tests, a
// note ("LRANGE_100 (first 100 elements)", "MSET (10 keys)").
bool IsTestRow(std::string_view column, std::string_view wanted) {
  return column == wanted || (column.size() > wanted.size() && column.starts_with(wanted) &&
                              column[wanted.size()] == ' ');
}

std::vector<std::string> SplitCsvLine(const std::string& line) {
  std::vector<std::string> fields(1);
  for (char c : line) {
    if (c == ',')
      fields.emplace_back();
    else if (c != '"' && c != '\r')
      fields.back() += c;
  }
  return fields;
}

struct ChildUsage {
  double cpu_seconds = 0;
  uint64_t context_switches = 0;
};
ChildUsage ChildrenUsage() { return {ChildrenCpuSeconds(), ChildrenContextSwitches()}; }

// Runs `program args` pinned to `cpus` (when given); its standard output in
// *output. Fails with the end of its standard error when it exits non-zero.
Status RunChild(const std::vector<std::string>& args, const std::vector<int>& cpus,
                std::string* output) {
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0)
    return Status::IoError(std::string("pipe: ") + std::strerror(errno));
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return Status::IoError(std::string("pipe: ") + std::strerror(errno));
  }
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(kProgram));
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    if (!PinCurrentThread(cpus).ok()) _exit(126);
    execvp(kProgram, argv.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (pid < 0) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    return Status::IoError(std::string("fork: ") + std::strerror(errno));
  }
  std::string errors;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {output, &errors};
  int open_fds = 2;
  while (open_fds > 0) {
    if (poll(fds, 2, -1) < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buffer[4096];
      const ssize_t got = read(fds[i].fd, buffer, sizeof(buffer));
      if (got > 0) {
        sinks[i]->append(buffer, static_cast<size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status::Ok();
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
    return Status::IoError(std::string(kProgram) + " not found (apt-get install redis-tools)");
  }
  const std::string tail = errors.size() > 300 ? errors.substr(errors.size() - 300) : errors;
  return Status::IoError(
      std::string(kProgram) + " exited with status " +
      std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)) +
      (tail.empty() ? "" : ": " + tail));
}

class RedisBenchmarkRunner {
 public:
  RedisBenchmarkRunner(const LoadConfig& config, uint64_t requests, const SweepCallbacks& callbacks)
      : config_(config), fixed_requests_(requests), callbacks_(callbacks) {}

  Status Run(std::vector<PointResult>* out) {
    const ConnectionOptions options = ConnectionOptionsOf(config_, /*control=*/true);
    Status opened = ServerControl::Open(config_.target, options, &control_);
    if (!opened.ok()) return opened;
    const pid_t server_pid =
        config_.server_pids.empty() ? LocalServerPid(*control_) : config_.server_pids.front();
    for (size_t index = 0; index < config_.threads.size(); ++index) {
      const int threads = config_.threads[index];
      out->push_back(PointResult{});
      PointResult& point = out->back();
      point.point_index = static_cast<int>(index);
      point.threads = threads;
      point.connections = EffectiveConnections(config_, threads);
      point.pipeline = config_.pipeline;
      Status ran = RunPoint(server_pid, &point);
      if (!ran.ok()) return ran.WithContext("threads=" + std::to_string(threads));
      point.complete = true;
    }
    return Status::Ok();
  }

 private:
  // --server-pids: their process trees' CPU (/proc); else INFO cpu.
  double ServerCpuSeconds() {
    if (!config_.server_pids.empty()) return ProcessTreeCpuSeconds(config_.server_pids);
    return control_->CpuSeconds();
  }
  bool Cancelled() const { return callbacks_.cancel != nullptr && callbacks_.cancel->load(); }

  Status Measure(int threads, uint64_t requests, RedisBenchmarkFigures* figures) {
    std::string csv;
    Status ran = RunChild(RedisBenchmarkArguments(config_, threads, requests), config_.cpus, &csv);
    if (!ran.ok()) return ran;
    return ParseRedisBenchmarkCsv(csv, config_.workload, figures);
  }

  Status RunPoint(pid_t server_pid, PointResult* point) {
    if (config_.flush) {
      Status flushed = control_->FlushAll();
      if (!flushed.ok()) return flushed;
    }
    if (config_.prefill) {
      uint64_t written = 0;
      Status filled = control_->Prefill(config_.workload, &written);
      if (!filled.ok()) return filled;
    }
    uint64_t requests = fixed_requests_;
    if (requests == 0) {
      // Calibration, also the warm-up: how many requests last --duration?
      RedisBenchmarkFigures calibration;
      const uint64_t probe_requests =
          std::max<uint64_t>(10000, 2000 * static_cast<uint64_t>(point->connections));
      Status calibrated = Measure(point->threads, probe_requests, &calibration);
      if (!calibrated.ok()) return calibrated.WithContext("calibration");
      requests =
          std::max<uint64_t>(1000, static_cast<uint64_t>(calibration.rps * config_.duration_s));
    }
    const WindowWatch watch(config_.watch, server_pid);
    const double allowed_cores = AllowedCores(config_.cpus);
    for (int repetition = 1; repetition <= config_.repetitions; ++repetition) {
      if (Cancelled())
        return Status::Cancelled("cancelled before repetition " + std::to_string(repetition));
      const WatchMark watch_start = watch.Mark();
      const ChildUsage child_start = ChildrenUsage();
      const double server_start = ServerCpuSeconds();
      const uint64_t start_ns = NowNs();
      RedisBenchmarkFigures figures;
      Status measured = Measure(point->threads, requests, &figures);
      const uint64_t end_ns = NowNs();
      const double server_end = ServerCpuSeconds();
      const ChildUsage child_end = ChildrenUsage();
      const WatchMark watch_end = watch.Mark();
      if (!measured.ok()) return measured.WithContext("repetition " + std::to_string(repetition));
      const double wall = std::max((end_ns - start_ns) / 1e9, 1e-9);

      RepetitionResult r;
      r.repetition = repetition;
      r.ops = requests;
      r.errors_counted = false;
      r.ops_per_s = figures.rps;
      r.seconds = figures.rps > 0 ? static_cast<double>(requests) / figures.rps : wall;
      r.p50_us = figures.p50_ms * 1000;
      r.p90_us = kUnknown;
      r.p99_us = figures.p99_ms * 1000;
      r.p999_us = kUnknown;
      r.max_us = figures.max_ms * 1000;
      r.mean_us = figures.avg_ms * 1000;
      r.client_cpu = (child_end.cpu_seconds - child_start.cpu_seconds) / wall;
      r.busiest_thread_cpu = kUnknown;
      r.usable_cores = UsableCoreCount(config_.cpus);
      r.allowed_cores = allowed_cores;
      r.client_bound = r.client_cpu >= kClientBoundFraction * allowed_cores;
      if (server_start >= 0 && server_end >= 0) r.server_cpu = (server_end - server_start) / wall;
      r.client_cs_per_op =
          static_cast<double>(child_end.context_switches - child_start.context_switches) /
          static_cast<double>(requests);
      r.watched = watch.Between(watch_start, watch_end);
      point->repetitions.push_back(std::move(r));
      if (callbacks_.on_repetition) callbacks_.on_repetition(*point, point->repetitions.back());
    }
    return Status::Ok();
  }

  const LoadConfig& config_;
  const uint64_t fixed_requests_;  // 0: calibrate per point
  const SweepCallbacks& callbacks_;
  std::unique_ptr<ServerControl> control_;
};

}  // namespace

Status ValidateRedisBenchmarkConfig(const LoadConfig& config) {
  Status valid = ValidateCommonConfig(config, /*redis_benchmark=*/true);
  if (!valid.ok()) return valid;
  auto refuse = [](const std::string& what) {
    return Status::InvalidArgument(std::string("--loadgen redis-benchmark: ") + what);
  };
  if (TestName(config.workload).empty()) {
    return refuse("--command must be get, set, ping or rb:TEST (one of redis-benchmark's tests)");
  }
  if (config.rate > 0) return refuse("no open loop (--rate)");
  if (config.workload.value_size_min != config.workload.value_size_max) {
    return refuse("--value-size must be one size");
  }
  if (config.workload.distribution != KeyDistribution::kUniform)
    return refuse("--key-dist must be uniform");
  return Status::Ok();
}

std::vector<std::string> RedisBenchmarkArguments(const LoadConfig& config, int threads,
                                                 uint64_t requests) {
  std::vector<std::string> args;
  if (config.target.transport == Transport::kUnix) {
    args = {"-s", config.target.path};
  } else {
    args = {"-h", config.target.host, "-p", std::to_string(config.target.port)};
  }
  const std::vector<std::string> rest = {
      "--threads", std::to_string(threads),
      "-c",        std::to_string(EffectiveConnections(config, threads)),
      "-P",        std::to_string(config.pipeline),
      "-d",        std::to_string(config.workload.value_size_min),
      "-t",        TestName(config.workload),
      "-n",        std::to_string(requests),
      "--csv"};
  args.insert(args.end(), rest.begin(), rest.end());
  // --route slots: redis-benchmark's own cluster mode (it tags each node's keys).
  if (config.route_slots) args.push_back("--cluster");
  // Its AUTH on every connection (redis-benchmark's --user needs -a).
  if (!config.password.empty()) {
    args.insert(args.end(), {"-a", config.password});
    if (!config.user.empty()) args.insert(args.end(), {"--user", config.user});
  }
  // Without -r every request uses the one literal key "key:__rand_int__".
  if (config.workload.keys > 1) {
    args.push_back("-r");
    args.push_back(std::to_string(config.workload.keys));
  }
  return args;
}

Status ParseRedisBenchmarkCsv(std::string_view csv, const WorkloadSpec& workload,
                              RedisBenchmarkFigures* out) {
  std::string wanted = TestName(workload);
  for (char& c : wanted) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::istringstream lines{std::string(csv)};
  std::string line;
  std::vector<std::string> header;
  // In cluster mode it names the masters first ("Cluster has 2 master nodes:",
  // "Master 0: ..."): the CSV starts at its header line.
  std::string first;
  while (std::getline(lines, line)) {
    if (first.empty()) first = line;
    header = SplitCsvLine(line);
    if (!header.empty() && header[0] == "test") break;
    header.clear();
  }
  if (header.empty()) {
    return Status::IoError(first.empty() ? "redis-benchmark printed nothing"
                                         : "redis-benchmark's CSV header lacks a column: " + first);
  }
  auto column = [&](const char* name) {
    for (size_t i = 0; i < header.size(); ++i) {
      if (header[i] == name) return static_cast<int>(i);
    }
    return -1;
  };
  const int test = column("test"), rps = column("rps"), avg = column("avg_latency_ms"),
            p50 = column("p50_latency_ms"), p99 = column("p99_latency_ms"),
            max = column("max_latency_ms");
  if (test < 0 || rps < 0 || avg < 0 || p50 < 0 || p99 < 0 || max < 0) {
    return Status::IoError("redis-benchmark's CSV header lacks a column: " + line);
  }
  while (std::getline(lines, line)) {
    const std::vector<std::string> fields = SplitCsvLine(line);
    if (fields.size() != header.size() || !IsTestRow(fields[static_cast<size_t>(test)], wanted)) {
      continue;
    }
    auto number = [&](int index) {
      return std::strtod(fields[static_cast<size_t>(index)].c_str(), nullptr);
    };
    *out = {number(rps), number(avg), number(p50), number(p99), number(max)};
    return Status::Ok();
  }
  return Status::IoError("redis-benchmark printed no figures for " + wanted);
}

Status RunRedisBenchmarkSweep(const LoadConfig& config, uint64_t requests,
                              const SweepCallbacks& callbacks, std::vector<PointResult>* out) {
  Status valid = ValidateRedisBenchmarkConfig(config);
  if (!valid.ok()) return valid;
  // redis-benchmark --cluster refuses a cluster of one node ("Invalid cluster:
  // 1 node(s)"); there every slot is that node's and no request can be
  // MOVED, so plain redis-benchmark sends exactly what --cluster would.
  LoadConfig routed = config;
  if (config.route_slots) {
    std::unique_ptr<SlotMap> slots;
    const ConnectionOptions options = ConnectionOptionsOf(config, /*control=*/true);
    Status fetched = SlotMap::Fetch(config.target, options, &slots);
    if (!fetched.ok()) return fetched.WithContext("--route slots");
    if (slots->nodes().size() == 1) routed.route_slots = false;
  }
  RedisBenchmarkRunner runner(routed, requests, callbacks);
  return runner.Run(out);
}

}  // namespace kvlab::harness
