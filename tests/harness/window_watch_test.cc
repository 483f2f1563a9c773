// Known answers for the readings of /proc and the window figures, and one
// real busy process pinned on a measured CPU that must be seen.
#include "harness/measurement/window_watch.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "harness/measurement/irq_accounting.h"
#include "harness/measurement/process_readings.h"
#include "tests/harness/cpu_burner.h"

namespace kvlab::harness {
namespace {

TEST(ProcessReadingsTest, ProcStatSumsEachStateOfTheChosenCpusOnly) {
  const std::string text =
      "cpu  900 90 900 9000 9 9 9 90 0 0\n"
      "cpu0 100 10 50 5000 1 7 8 3 0 0\n"
      "cpu1 200 20 60 4000 2 7 8 4 0 0\n"
      "cpu12 1000 0 0 0 0 0 0 50 0 0\n"
      "intr 1 2 3\n"
      "processes 98765\n";
  const CpuTicks one = ParseProcStat(text, {1}, true);
  EXPECT_EQ(one.ticked, 280u);  // user + nice + system
  EXPECT_EQ(one.irq, 15u);      // irq + softirq
  EXPECT_EQ(one.idle, 4002u);   // idle + iowait
  EXPECT_EQ(one.steal, 4u);
  EXPECT_EQ(one.cpus, 1);
  EXPECT_EQ(one.forks, 98765u);  // processes and threads created since boot
  const CpuTicks both = ParseProcStat(text, {0, 1}, false);
  EXPECT_EQ(both.ticked, 440u);
  EXPECT_EQ(both.idle, 9003u);
  EXPECT_EQ(both.steal, 7u);
  EXPECT_EQ(both.cpus, 2);
  EXPECT_FALSE(both.irq_charged_to_tasks);
  EXPECT_EQ(ParseProcStat(text, {2}, true).cpus, 0);  // "cpu12" is not cpu 1 or 2
}

// Busy is the CPUs' time less idle, iowait and steal — and less irq and softirq where
// the kernel keeps those out of task time.
TEST(ProcessReadingsTest, BusySecondsIsTheTimeNotIdleNotStolen) {
  CpuTicks before{.ticked = 0, .irq = 10, .idle = 100, .steal = 5, .cpus = 2};
  CpuTicks after{.ticked = 7, .irq = 30, .idle = 180, .steal = 25, .cpus = 2};
  // 2 s of 2 CPUs: 4 s, less 0.8 s idle and 0.2 s stolen; the ticked 0.07 s play no part.
  EXPECT_DOUBLE_EQ(BusySeconds(before, after, 2.0, 100), 3.0);
  before.irq_charged_to_tasks = after.irq_charged_to_tasks = false;
  EXPECT_DOUBLE_EQ(BusySeconds(before, after, 2.0, 100), 2.8);  // and 0.2 s of irq
}

TEST(ProcessReadingsTest, ProcessStatTicksSurviveANameWithSpacesAndParentheses) {
  // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
  // ...
  const std::string text =
      "42 (a (b) c) S 1 42 42 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 3 0 777\n";
  EXPECT_EQ(ParseProcessStatTicks(text), 300);
  EXPECT_LT(ParseProcessStatTicks("garbage"), 0);
}

TEST(ProcessReadingsTest, TaskContextSwitchesAddVoluntaryAndInvoluntary) {
  const std::string text =
      "Name:\tkvlab-server\nvoluntary_ctxt_switches:\t120\nnonvoluntary_ctxt_switches:\t7\n";
  EXPECT_EQ(ParseTaskContextSwitches(text), 127);
  EXPECT_LT(ParseTaskContextSwitches("Name:\tx\n"), 0);
}

TEST(ProcessReadingsTest, ThisProcessCanBeRead) {
  EXPECT_GE(ProcessCpuSecondsOf(getpid()), 0);
  EXPECT_GE(ProcessContextSwitchesOf(getpid()), 0);
  EXPECT_GE(ProcessAgeSeconds(getpid()), 0);
  EXPECT_FALSE(ThreadsOf(getpid()).empty());
}

// A mark of `cpus` CPUs that have been idle (idle + iowait) `idle` ticks.
WatchMark MarkAt(double seconds, uint64_t idle, uint64_t steal, double own, int64_t switches,
                 int cpus = 2) {
  WatchMark mark;
  mark.ns = static_cast<uint64_t>(seconds * 1e9);
  mark.ticks.idle = idle;
  mark.ticks.steal = steal;
  mark.ticks.cpus = cpus;
  mark.own_seconds = own;
  mark.server_switches = switches;
  return mark;
}

TEST(WindowFiguresTest, ForeignIsBusyTimeMinusOursPerSecond) {
  // 2 s of 2 CPUs: 4 s, of which 0.8 s idle and 0.2 s stolen leave 3 s busy, 2.5 s of
  // it ours.
  const WatchMark before = MarkAt(10, 1000, 5, 4.0, 100);
  const WatchMark after = MarkAt(12, 1080, 25, 6.5, 2100);
  const WindowFigures f = FiguresBetween(before, after, true, 100, 0.05);
  EXPECT_DOUBLE_EQ(f.foreign_cores, 0.25);
  EXPECT_DOUBLE_EQ(f.steal_cores, 0.1);
  EXPECT_EQ(f.server_context_switches, 2000);
  EXPECT_TRUE(f.disturbed);
  EXPECT_LT(f.server_instructions, 0);  // no counters: n/a, never 0
  EXPECT_FALSE(FiguresBetween(before, after, true, 100, 0.3).disturbed);
}

TEST(WindowFiguresTest, OursAboveTheTicksIsNoNegativeForeignAndUnmeasuredSaysSo) {
  const WindowFigures rounded =
      FiguresBetween(MarkAt(0, 0, 0, 0, -1, 1), MarkAt(1, 0, 0, 1.02, -1, 1), true, 100, 0.05);
  EXPECT_DOUBLE_EQ(rounded.foreign_cores, 0);
  EXPECT_LT(rounded.server_context_switches, 0);
  const WindowFigures unmeasured =
      FiguresBetween(MarkAt(0, 0, 0, 0, 1), MarkAt(1, 0, 0, 0, 3), false, 100, 0.05);
  EXPECT_LT(unmeasured.foreign_cores, 0);
  EXPECT_LT(unmeasured.steal_cores, 0);
  EXPECT_FALSE(unmeasured.disturbed);
  EXPECT_EQ(unmeasured.server_context_switches, 2);
}

TEST(WindowFiguresTest, CountersGiveInstructionsAndCycles) {
  WatchMark before = MarkAt(0, 0, 0, 0, -1), after = MarkAt(1, 0, 0, 0, -1);
  before.counted = after.counted = true;
  before.counters = {1000, 500};
  after.counters = {5000, 2500};
  const WindowFigures f = FiguresBetween(before, after, false, 100, 0.05);
  EXPECT_EQ(f.server_instructions, 4000);
  EXPECT_EQ(f.server_cycles, 2000);
}

using testing::FirstAllowedCpu;
using testing::StartBurner;

TEST(WindowWatchTest, SeesABusyProcessOnAMeasuredCpuUnlessItIsOurs) {
  const int cpu = FirstAllowedCpu();
  const pid_t burner = StartBurner(cpu);
  ASSERT_GT(burner, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // running before the window opens
  const WindowWatch foreign({{cpu}, {}, 0.05}, 0);
  const WindowWatch ours({{cpu}, {burner}, 0.05}, 0);
  const double burned_before = ProcessCpuSecondsOf(burner);
  const WatchMark foreign_start = foreign.Mark(), ours_start = ours.Mark();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const WatchMark foreign_end = foreign.Mark(), ours_end = ours.Mark();
  const double burned = ProcessCpuSecondsOf(burner) - burned_before;
  kill(burner, SIGKILL);
  waitpid(burner, nullptr, 0);

  const WindowFigures seen = foreign.Between(foreign_start, foreign_end);
  const WindowFigures own = ours.Between(ours_start, ours_end);
  const double seconds = (foreign_end.ns - foreign_start.ns) / 1e9;
  const double burner_cores = burned / seconds;
  const double tick_cores = 3 / ProcTicksPerSecond() / seconds;  // /proc's rounding, a few ticks
  // The burner ran on the measured CPU (it may share it with other work on a busy machine).
  ASSERT_GT(burner_cores, 0.05);
  EXPECT_GE(seen.foreign_cores, burner_cores - tick_cores);
  EXPECT_TRUE(seen.disturbed);
  // Naming it ours removes its share, whatever else ran there.
  EXPECT_NEAR(seen.foreign_cores - own.foreign_cores, burner_cores, 2 * tick_cores);
}

// A process named twice (as the server and among the own pids, as an
// alternation names side B) counts once: counted twice, its CPU hid a
// burner's from the foreign figure.
TEST(WindowWatchTest, AProcessNamedTwiceCountsOnce) {
  const int cpu = FirstAllowedCpu();
  const pid_t burner = StartBurner(cpu);
  ASSERT_GT(burner, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  kill(burner, SIGSTOP);  // its CPU time stays what it is now
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const double burned = ProcessCpuSecondsOf(burner);
  const WindowWatch once({{cpu}, {burner}, 0.05}, 0);
  const WindowWatch twice({{cpu}, {burner, burner}, 0.05}, burner);
  const WatchMark one = once.Mark(), two = twice.Mark();
  kill(burner, SIGKILL);
  waitpid(burner, nullptr, 0);
  ASSERT_GT(burned, 0.05);
  // This process's own CPU between the two marks is all that may differ.
  EXPECT_NEAR(two.own_seconds - one.own_seconds, 0.0, 0.01) << "the burner used " << burned << " s";
}

// What a kernel configuration says about interrupt time.
TEST(IrqAccountingTest, TheKernelConfigurationSaysWhetherIrqTimeIsChargedToTasks) {
  EXPECT_EQ(IrqTimeChargedToTasks("CONFIG_A=y\nCONFIG_IRQ_TIME_ACCOUNTING=y\nCONFIG_B=m\n"), false);
  EXPECT_EQ(IrqTimeChargedToTasks("CONFIG_TICK_CPU_ACCOUNTING=y\n"
                                  "# CONFIG_IRQ_TIME_ACCOUNTING is not set\n"),
            true);
  EXPECT_EQ(IrqTimeChargedToTasks("CONFIG_TICK_CPU_ACCOUNTING=y"), true);
  EXPECT_EQ(IrqTimeChargedToTasks(""), std::nullopt);
  EXPECT_EQ(IrqTimeChargedToTasks("CONFIG_IRQ_TIME_ACCOUNTING=yes\n"), std::nullopt);
  EXPECT_EQ(IrqTimeChargedToTasks("XCONFIG_IRQ_TIME_ACCOUNTING=y\n"), std::nullopt);
  EXPECT_FALSE(ThisKernelIrqAccounting().source.empty());
}

using testing::AllowedCpus;

// Loopback TCP traffic between two threads of this process, on every CPU
// it may use: all of it is ours, so the watch must read no foreign work —
// in particular not a negative share from the softirq ticks the kernel
// files under softirq in /proc/stat and also charges to our threads (the
// watch read about -0.5 cores so before it counted them as busy, which
// hid a burner of less than that). Raw, before the clamp at zero.
TEST(WindowWatchTest, OurOwnLoopbackTrafficIsNotReadAsNegativeForeignWork) {
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length), 0);
  ASSERT_EQ(listen(listener, 1), 0);
  std::atomic<bool> stop{false};
  std::thread echo([&] {
    const int conn = accept(listener, nullptr, nullptr);
    char byte;
    while (conn >= 0 && read(conn, &byte, 1) == 1 && write(conn, &byte, 1) == 1) {
    }
    if (conn >= 0) close(conn);
  });
  const int client = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(connect(client, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  const int one = 1;
  setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  std::atomic<uint64_t> round_trips{0};
  std::thread ping([&] {
    char byte = 'x';
    while (!stop.load(std::memory_order_relaxed) && write(client, &byte, 1) == 1 &&
           read(client, &byte, 1) == 1) {
      round_trips.fetch_add(1, std::memory_order_relaxed);
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const WindowWatch watch({AllowedCpus(), {}, 0.05}, 0);
  const WatchMark start = watch.Mark();
  const uint64_t trips_before = round_trips.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const WatchMark end = watch.Mark();
  const uint64_t trips = round_trips.load() - trips_before;
  stop.store(true);
  shutdown(client, SHUT_RDWR);
  ping.join();
  echo.join();
  close(client);
  close(listener);

  ASSERT_GT(trips, 1000u) << "no traffic to measure";
  const double seconds = (end.ns - start.ns) / 1e9;
  const double busy = BusySeconds(start.ticks, end.ticks, seconds, ProcTicksPerSecond());
  const double ours = end.own_seconds - start.own_seconds;
  const double foreign = (busy - ours) / seconds;
  // /proc's rounding: a few ticks on each side of each reading.
  const double tick_cores = 4 / ProcTicksPerSecond() / seconds;
  EXPECT_GE(foreign, -tick_cores) << "busy " << busy << " s, ours " << ours << " s over " << seconds
                                  << " s (" << trips << " round trips); irq time "
                                  << ThisKernelIrqAccounting().Describe();
}

}  // namespace
}  // namespace kvlab::harness
