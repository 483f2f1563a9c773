// Known answers for the readings of /proc and the window figures, and one
// real busy process pinned on a measured CPU that must be seen.
#include "harness/measurement/window_watch.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "harness/measurement/process_readings.h"
#include "tests/harness/cpu_burner.h"

namespace kvlab::harness {
namespace {

TEST(ProcessReadingsTest, ProcStatSumsBusyAndStealOfTheChosenCpusOnly) {
  const std::string text =
      "cpu  900 90 900 9000 9 9 9 90 0 0\n"
      "cpu0 100 10 50 5000 1 7 8 3 0 0\n"
      "cpu1 200 20 60 4000 2 7 8 4 0 0\n"
      "cpu12 1000 0 0 0 0 0 0 50 0 0\n"
      "intr 1 2 3\n";
  const CpuTicks one = ParseProcStat(text, {1});
  EXPECT_EQ(one.busy, 280u);  // user + nice + system; irq, softirq and iowait left out
  EXPECT_EQ(one.steal, 4u);
  const CpuTicks both = ParseProcStat(text, {0, 1});
  EXPECT_EQ(both.busy, 440u);
  EXPECT_EQ(both.steal, 7u);
  EXPECT_EQ(ParseProcStat(text, {2}).busy, 0u);  // "cpu12" is not cpu 1 or 2
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

WatchMark MarkAt(double seconds, uint64_t busy, uint64_t steal, double own, int64_t switches) {
  WatchMark mark;
  mark.ns = static_cast<uint64_t>(seconds * 1e9);
  mark.ticks = {busy, steal};
  mark.own_seconds = own;
  mark.server_switches = switches;
  return mark;
}

TEST(WindowFiguresTest, ForeignIsBusyTimeMinusOursPerSecond) {
  // 2 s; 300 ticks (3 s at 100/s) busy on the measured CPUs, 2.5 s of it ours.
  const WatchMark before = MarkAt(10, 1000, 5, 4.0, 100);
  const WatchMark after = MarkAt(12, 1300, 25, 6.5, 2100);
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
      FiguresBetween(MarkAt(0, 0, 0, 0, -1), MarkAt(1, 100, 0, 1.02, -1), true, 100, 0.05);
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

}  // namespace
}  // namespace kvlab::harness
