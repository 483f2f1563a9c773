// Known answers for the wake-up cost (wake_cost.h): the arithmetic, the
// reading of other processes' CPU, and two real measurements — our own
// loopback traffic, once its sleeps are charged, reads as no foreign work;
// a CPU burner beside the calibration does not raise the cost.
#include "harness/measurement/wake_cost.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <optional>
#include <thread>
#include <vector>

#include "harness/measurement/process_readings.h"
#include "harness/measurement/window_watch.h"
#include "tests/harness/cpu_burner.h"

namespace kvlab::harness {
namespace {

using testing::AllowedCpus;

TEST(WakeCostTest, CostPerSleepIsTheBusyTimeNobodyIsChargedWithPerSleep) {
  // 1 s busy, 0.7 s ours, 0.2 s another process's: 0.1 s over 100,000 sleeps.
  EXPECT_NEAR(CostPerSleep(1.0, 0.7, 0.2, 100000), 1e-6, 1e-15);
  EXPECT_EQ(CostPerSleep(1.0, 1.2, 0, 1000), 0);  // ours read above busy: no cost
  EXPECT_EQ(CostPerSleep(1.0, 0.5, 0, 0), 0);     // no sleeps: nothing to charge
}

TEST(WakeCostTest, OthersCpuCountsOnlyProcessesReadBothTimes) {
  const std::vector<std::pair<pid_t, double>> before = {{10, 1.0}, {20, 5.0}, {30, 2.0}};
  // 10 used 0.5 s; 20 ended; 25 started (its 3 s are not in the window); 30
  // is a reused pid that reads lower: nothing.
  const std::vector<std::pair<pid_t, double>> after = {{10, 1.5}, {25, 3.0}, {30, 0.1}};
  EXPECT_DOUBLE_EQ(CpuSecondsBetween(before, after), 0.5);
  EXPECT_DOUBLE_EQ(CpuSecondsBetween({}, after), 0);
}

TEST(WakeCostTest, ProcessClocksListOthersSortedAndNotThisProcess) {
  const auto clocks = OtherProcessClocks();
  ASSERT_FALSE(clocks.empty());  // pid 1 at least
  EXPECT_TRUE(std::is_sorted(clocks.begin(), clocks.end()));
  for (const auto& [pid, seconds] : clocks) {
    EXPECT_NE(pid, getpid());
    EXPECT_GE(seconds, 0);
  }
}

TEST(WakeCostTest, VoluntarySwitchesAloneAreTheSleeps) {
  const std::string text =
      "Name:\tkvlab-server\nvoluntary_ctxt_switches:\t120\nnonvoluntary_ctxt_switches:\t7\n";
  EXPECT_EQ(ParseTaskVoluntarySwitches(text), 120);
  EXPECT_LT(ParseTaskVoluntarySwitches("Name:\tx\nnonvoluntary_ctxt_switches:\t7\n"), 0);
  EXPECT_GE(ProcessVoluntarySwitchesOf(getpid()), 0);
}

TEST(WakeCostTest, TheWatchChargesEachOfOurSleepsItsCost) {
  // 1 s of 2 CPUs, 0.5 s idle: 1.5 s busy, 1.3 s ours, 150,000 sleeps of ours.
  WatchMark before, after;
  before.ticks.cpus = after.ticks.cpus = 2;
  after.ns = 1'000'000'000;
  after.ticks.idle = 50;
  after.own_seconds = 1.3;
  after.own_sleeps = 150000;
  EXPECT_NEAR(ForeignSecondsBetween(before, after, 100, 0), 0.2, 1e-12);
  EXPECT_NEAR(ForeignSecondsBetween(before, after, 100, 1e-6), 0.05, 1e-12);
  // 0.05 cores left: disturbed above 0.04, not above 0.06.
  EXPECT_TRUE(FiguresBetween(before, after, true, 100, 0.04, 1e-6).disturbed);
  EXPECT_FALSE(FiguresBetween(before, after, true, 100, 0.06, 1e-6).disturbed);
  EXPECT_TRUE(FiguresBetween(before, after, true, 100, 0.06, 0).disturbed);
}

// Two threads of this process exchanging a byte over loopback TCP (not the
// calibration's pipes), sleeping on each read.
class LoopbackPingPong {
 public:
  LoopbackPingPong() {
    listener_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof(address));
    getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length);
    listen(listener_, 1);
    echo_ = std::thread([this] {
      const int conn = accept(listener_, nullptr, nullptr);
      char byte;
      while (conn >= 0 && read(conn, &byte, 1) == 1 && write(conn, &byte, 1) == 1) {
      }
      if (conn >= 0) close(conn);
    });
    client_ = socket(AF_INET, SOCK_STREAM, 0);
    connected_ = connect(client_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
    const int one = 1;
    setsockopt(client_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    ping_ = std::thread([this] {
      char byte = 'x';
      while (connected_ && !stop_.load(std::memory_order_relaxed)) {
        if (paused_.load(std::memory_order_relaxed)) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
          continue;
        }
        if (write(client_, &byte, 1) != 1 || read(client_, &byte, 1) != 1) break;
        trips_.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  ~LoopbackPingPong() {
    stop_.store(true);
    shutdown(client_, SHUT_RDWR);
    ping_.join();
    if (!connected_) shutdown(listener_, SHUT_RDWR);
    echo_.join();
    close(client_);
    close(listener_);
  }
  uint64_t trips() const { return trips_.load(); }
  void Pause() { paused_.store(true); }
  void Resume() { paused_.store(false); }

 private:
  int listener_ = -1;
  int client_ = -1;
  bool connected_ = false;
  std::atomic<bool> stop_{false};
  std::atomic<bool> paused_{false};
  std::atomic<uint64_t> trips_{0};
  std::thread echo_;
  std::thread ping_;
};

// Holds idle CPUs polling (a 0 us PM QoS request, as a run does:
// analysis/kvlab/running/cpu_idle.py) while it lives: the cost per sleep
// depends on whether a CPU halts, and a test running beside this one may
// take or drop such a request; with this one held, the calibration and the
// measurement see the same regime. Without the right to open the device
// (not root) both run as the kernel lets them.
class PollingHold {
 public:
  PollingHold() : fd_(open("/dev/cpu_dma_latency", O_WRONLY)) {
    const int32_t zero = 0;
    if (fd_ >= 0 && write(fd_, &zero, sizeof(zero)) != sizeof(zero)) {
      close(fd_);
      fd_ = -1;
    }
  }
  ~PollingHold() {
    if (fd_ >= 0) close(fd_);
  }

 private:
  int fd_;
};

// A test beside this one may start processes at any moment, and their CPU
// cannot be told from the sleeps' cost: windows in which a process was
// created are left out (as the calibration does) and the whole measurement
// is tried again, up to this many times.
constexpr int kAttempts = 10;

// Other processes' CPU per second of a 1 s window, charged and uncharged
// with `cost`, with or without `traffic`; nullopt when a process was created
// in it (its CPU cannot be told apart).
struct ForeignReading {
  double charged = 0;
  double uncharged = 0;
};
std::optional<ForeignReading> ReadForeign(LoopbackPingPong& traffic, bool running,
                                          const std::vector<int>& cpus, const WakeCost& cost) {
  if (running) {
    traffic.Resume();
  } else {
    traffic.Pause();
  }
  const WindowWatch watch({cpus, {}, 0.05, cost.seconds_per_sleep}, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const WatchMark start = watch.Mark();
  const uint64_t trips_before = traffic.trips();
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  const WatchMark end = watch.Mark();
  if (end.ticks.forks != start.ticks.forks) return std::nullopt;
  if (running) {
    EXPECT_GT(traffic.trips() - trips_before, 1000u) << "no traffic to measure";
  }
  const double seconds = (end.ns - start.ns) / 1e9;
  return ForeignReading{
      ForeignSecondsBetween(start, end, ProcTicksPerSecond(), cost.seconds_per_sleep) / seconds,
      ForeignSecondsBetween(start, end, ProcTicksPerSecond(), 0) / seconds};
}

TEST(WakeCostTest, OurLoopbackTrafficReadsNoForeignWorkOnceItsSleepsAreCharged) {
  const PollingHold polling;
  const std::vector<int> cpus = AllowedCpus();
  LoopbackPingPong traffic;
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  int clean = 0;
  // The traffic's part of a window is what it reads above the window just
  // before it with the traffic paused: make test runs another timed test
  // beside this one, whose work is foreign work the watch rightly reads (a
  // fresh-clone run read 0.0495 cores charged, all of it from the neighbour,
  // against a bar of 0.045 when the whole figure was counted as ours).
  double best_excess = 1e9, its_uncharged_excess = 0;
  ForeignReading its_paused, its_running;
  WakeCost its_cost, cost;
  for (int attempt = 0; attempt < kAttempts && std::abs(best_excess) >= 0.03; ++attempt) {
    // Calibrated beside the running TCP ping-pong would count its sleeps too:
    // the calibration's own pipe ping-pong runs while the TCP one waits.
    traffic.Pause();
    const WakeCost window = CalibrateWakeCost(cpus, 1000, 1);
    // Others' work only adds to a window's figure, so the least window so
    // far is the cost (CalibrateWakeCost's own rule, across attempts): one
    // window read 3.86 us a sleep against 1.6-1.8 in the others, and as the
    // only clean one it overcharged the traffic to -0.10 cores.
    if (window.windows > 0 &&
        (cost.windows == 0 || window.seconds_per_sleep < cost.seconds_per_sleep)) {
      cost = window;
    }
    if (cost.windows == 0) continue;
    const auto paused = ReadForeign(traffic, false, cpus, cost);
    const auto running = ReadForeign(traffic, true, cpus, cost);
    if (!paused || !running) continue;
    ++clean;
    const double excess = running->charged - paused->charged;
    if (std::abs(excess) < std::abs(best_excess)) {
      best_excess = excess;
      its_uncharged_excess = running->uncharged - paused->uncharged;
      its_paused = *paused;
      its_running = *running;
      its_cost = cost;
    }
  }
  ASSERT_GT(clean, 0) << "no two seconds without a process created in " << kAttempts << " attempts";
  std::printf(
      "wake cost %s; foreign cores uncharged/charged: paused %.4f/%.4f, loopback ping-pong "
      "%.4f/%.4f; the traffic's own %.4f uncharged, %.4f charged\n",
      its_cost.Describe().c_str(), its_paused.uncharged, its_paused.charged, its_running.uncharged,
      its_running.charged, its_uncharged_excess, best_excess);
  // What matters is the watch's verdict: charged, our own traffic must not
  // read as a disturbance at the default threshold (held polling, uncharged
  // reads 0.13-0.15 on two machines: the sleeps are 15 times as many; the TCP
  // stack's share per sleep is a little above the pipes'). And the charge
  // must remove most of it, not merely land under the line.
  EXPECT_LT(best_excess, kDefaultDisturbedAboveCores)
      << "the sleeps' cost still reads as others' work";
  EXPECT_GT(best_excess, -kDefaultDisturbedAboveCores) << "more charged than the sleeps cost";
  EXPECT_LT(std::abs(best_excess), its_uncharged_excess / 3) << "the charge removed too little";
}

// The least-figure calibration with a clean window, up to kAttempts tries.
WakeCost CleanCalibration(const std::vector<int>& cpus) {
  WakeCost cost;
  for (int attempt = 0; attempt < kAttempts && cost.windows == 0; ++attempt) {
    // Short windows: the comparison needs only the order of magnitude.
    cost = CalibrateWakeCost(cpus, 300, 2);
  }
  return cost;
}

TEST(WakeCostTest, ABurnerBesideTheCalibrationLeavesEveryWindowOut) {
  const std::vector<int> cpus = AllowedCpus();
  const WakeCost quiet = CleanCalibration(cpus);
  const pid_t burner = testing::StartBurner(cpus.front());
  ASSERT_GT(burner, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const WakeCost beside = CalibrateWakeCost(cpus, 300, 2);
  kill(burner, SIGKILL);
  waitpid(burner, nullptr, 0);
  std::printf("quiet %s; beside a burner %s\n", quiet.Describe().c_str(),
              beside.Describe().c_str());
  ASSERT_GT(quiet.windows, 0) << "no clean window in " << kAttempts << " attempts";
  EXPECT_GT(quiet.seconds_per_sleep, 0) << "our sleeps cost the CPUs nothing quiet";
  // Beside a burner our sleeps take its CPU through no idle: a window's
  // figure would be near 0 (or, with the burner's time not left out, tens
  // of microseconds), and as the least figure it would be kept for the boot.
  EXPECT_EQ(beside.windows, 0) << beside.Describe();
  EXPECT_EQ(beside.rejected, 2);  // stopped after `windows` busy windows
  EXPECT_EQ(beside.seconds_per_sleep, 0);
}

TEST(WakeCostTest, AWindowInWhichAProcessWasCreatedIsLeftOut) {
  const std::vector<int> cpus = AllowedCpus();
  std::atomic<bool> stop{false};
  // A child created and reaped every few milliseconds: no window is clean.
  std::thread forker([&] {
    while (!stop.load()) {
      const pid_t child = fork();
      if (child == 0) _exit(0);
      if (child > 0) waitpid(child, nullptr, 0);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  const WakeCost cost = CalibrateWakeCost(cpus, 100, 2);
  stop.store(true);
  forker.join();
  EXPECT_EQ(cost.windows, 0);
  // Every window tried saw a process created. Three times `windows` are tried, fewer
  // where `windows` of them were also busy with other work (a fresh clone's make test, beside
  // another timed test: 5), which stops the calibration early.
  EXPECT_EQ(cost.rejected_for_processes, cost.rejected);
  EXPECT_GE(cost.rejected, 2);
  EXPECT_LE(cost.rejected, 6);
  EXPECT_EQ(cost.seconds_per_sleep, 0);
  EXPECT_NE(cost.Describe().find("not measured"), std::string::npos) << cost.Describe();
}

}  // namespace
}  // namespace kvlab::harness
