#include "harness/measurement/wake_cost.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <thread>

#include "harness/measurement/cpu_usage.h"
#include "harness/measurement/load_clock.h"
#include "harness/measurement/process_readings.h"
#include "harness/measurement/window_watch.h"

namespace kvlab::harness {

std::string WakeCost::Describe() const {
  char text[160];
  if (windows == 0) {
    std::snprintf(text, sizeof(text),
                  "not measured: other processes came or kept the CPUs busy in each of %d "
                  "windows; none subtracted",
                  rejected);
    return text;
  }
  std::snprintf(text, sizeof(text), "%.3f us per sleep (%d windows, %lld sleeps, %d left out)",
                seconds_per_sleep * 1e6, windows, static_cast<long long>(sleeps), rejected);
  return text;
}

double CostPerSleep(double busy_seconds, double own_seconds, double others_seconds,
                    int64_t sleeps) {
  if (sleeps <= 0) return 0;
  return std::max(0.0, busy_seconds - own_seconds - others_seconds) / static_cast<double>(sleeps);
}

std::vector<std::pair<pid_t, double>> OtherProcessClocks() {
  std::vector<std::pair<pid_t, double>> clocks;
  const pid_t self = ::getpid();
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(name));
    if (pid == self) continue;
    const double seconds = ProcessClockSecondsOf(pid);
    if (seconds >= 0) clocks.emplace_back(pid, seconds);
  }
  std::sort(clocks.begin(), clocks.end());
  return clocks;
}

double CpuSecondsBetween(const std::vector<std::pair<pid_t, double>>& before,
                         const std::vector<std::pair<pid_t, double>>& after) {
  double total = 0;
  auto earlier = before.begin();
  for (const auto& [pid, seconds] : after) {
    while (earlier != before.end() && earlier->first < pid) ++earlier;
    if (earlier != before.end() && earlier->first == pid) {
      total += std::max(0.0, seconds - earlier->second);  // a reused pid reads lower: nothing
    }
  }
  return total;
}

namespace {

// One window of the ping-pong: the pinned threads run it; this thread reads.
struct PingPong {
  int to_echo[2] = {-1, -1};
  int to_ping[2] = {-1, -1};
  std::atomic<bool> stop{false};
  std::thread echo;
  std::thread ping;

  bool Start(const std::vector<int>& cpus) {
    if (::pipe(to_echo) != 0) return false;
    if (::pipe(to_ping) != 0) return false;
    const int first = cpus.front();
    const int second = cpus.size() > 1 ? cpus[1] : cpus.front();
    echo = std::thread([this, second] {
      (void)PinCurrentThread({second});
      char byte;
      while (::read(to_echo[0], &byte, 1) == 1 && ::write(to_ping[1], &byte, 1) == 1) {
      }
    });
    ping = std::thread([this, first] {
      (void)PinCurrentThread({first});
      char byte = 'x';
      while (!stop.load(std::memory_order_relaxed) && ::write(to_echo[1], &byte, 1) == 1 &&
             ::read(to_ping[0], &byte, 1) == 1) {
      }
    });
    return true;
  }

  ~PingPong() {
    stop.store(true);
    if (ping.joinable()) ping.join();          // it stops after its round trip ends
    if (to_echo[1] >= 0) ::close(to_echo[1]);  // the echo thread reads end of file
    if (echo.joinable()) echo.join();
    for (int fd : {to_echo[0], to_ping[0], to_ping[1]}) {
      if (fd >= 0) ::close(fd);
    }
  }
};

}  // namespace

WakeCost CalibrateWakeCost(const std::vector<int>& cpus, int window_ms, int windows) {
  WakeCost cost;
  if (cpus.empty() || windows <= 0) return cost;
  PingPong traffic;
  if (!traffic.Start(cpus)) return cost;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // both threads in their loops
  double best = std::numeric_limits<double>::infinity();
  int busy_windows = 0;
  for (int attempt = 0; attempt < 3 * windows && cost.windows < windows; ++attempt) {
    const auto others_before = OtherProcessClocks();
    const CpuTicks ticks_before = ReadCpuTicks(cpus);
    const uint64_t start_ns = NowNs();
    const double own_before = ProcessCpuSeconds();
    const uint64_t sleeps_before = VoluntarySwitchesWithChildren();
    std::this_thread::sleep_for(std::chrono::milliseconds(window_ms));
    const CpuTicks ticks_after = ReadCpuTicks(cpus);
    const uint64_t end_ns = NowNs();
    const double own = ProcessCpuSeconds() - own_before;
    const int64_t sleeps = static_cast<int64_t>(VoluntarySwitchesWithChildren() - sleeps_before);
    const double others = CpuSecondsBetween(others_before, OtherProcessClocks());
    const double seconds = static_cast<double>(end_ns - start_ns) / 1e9;
    const double busy = BusySeconds(ticks_before, ticks_after, seconds, ProcTicksPerSecond());
    // A window in which a process was created, or in which other processes
    // kept the CPUs busy, is left out. The second because our sleeps then
    // take no CPU through idle and back, which is the cost measured: beside
    // a test suite using 1.64 cores of two, one window read 0.126 us a sleep
    // against 1.57 quiet, and as the least figure it was the one kept. Busy
    // CPUs last longer than a process's start: after `windows` such windows
    // the calibration stops rather than spend 3 x `windows` on a busy moment.
    const bool others_busy = others / seconds > kDefaultDisturbedAboveCores;
    const bool process_created = ticks_after.forks != ticks_before.forks;
    if (process_created || others_busy) {
      ++cost.rejected;
      if (process_created) ++cost.rejected_for_processes;
      if (others_busy && ++busy_windows == windows) break;
      continue;
    }
    const double figure = CostPerSleep(busy, own, others, sleeps);
    ++cost.windows;
    if (figure < best) {
      best = figure;
      cost.sleeps = sleeps;
      cost.others_cores = others / seconds;
    }
  }
  cost.seconds_per_sleep = std::isfinite(best) ? best : 0;
  return cost;
}

}  // namespace kvlab::harness
