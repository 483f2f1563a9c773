// Known answers for the command fuzzers' watchdog (command_fuzz.h): a
// command that burns CPU past the bound is a hang, one that waits without
// CPU is a deadlock only after ten bounds, and one that is slow in wall time
// but light on CPU (a large allocation on a loaded machine) is neither.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "tests/fuzz/command_fuzz.h"

namespace kvlab::fuzz {
namespace {

using std::chrono::milliseconds;

// Burns this thread's CPU for `length` of it.
void BurnCpu(std::chrono::nanoseconds length) {
  const auto start = ProcessCpuTime();
  volatile uint64_t sink = 0;
  while (ProcessCpuTime() - start < length) sink = sink + 1;
}

TEST(CommandWatchdogDeathTest, ACommandThatBurnsCpuPastTheBoundIsAHang) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        CommandWatchdog watchdog{milliseconds(100)};
        watchdog.Arm("single", {"keys", "*a*a*a*a*"});
        BurnCpu(std::chrono::seconds(30));
      },
      "a command used more than 100 ms of CPU \\(a hang\\):\n  single: \"keys\"");
}

TEST(CommandWatchdogDeathTest, ACommandThatWaitsWithoutCpuIsADeadlockAfterTenBounds) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        CommandWatchdog watchdog{milliseconds(50)};
        watchdog.Arm("sharded", {"get", "k"});
        std::this_thread::sleep_for(std::chrono::seconds(30));
      },
      "a command has not finished after 500 ms \\(a deadlock\\):\n  sharded: \"get\"");
}

TEST(CommandWatchdogTest, ASlowCommandLightOnCpuIsNeitherAHangNorADeadlock) {
  CommandWatchdog watchdog{milliseconds(300)};
  // Three bounds of waiting with a sixth of a bound of CPU: what a large
  // allocation does beside other tests. The process must still be here
  // (ten bounds, 3 s, leave two seconds for a loaded machine's delays).
  watchdog.Arm("single", {"setbit", "k", "4294967295", "1"});
  BurnCpu(milliseconds(50));
  std::this_thread::sleep_for(milliseconds(900));
  watchdog.Disarm();
  // Disarmed, no wait is too long: 3.15 s after Arm() is past ten bounds.
  std::this_thread::sleep_for(milliseconds(2200));
  SUCCEED();
}

}  // namespace
}  // namespace kvlab::fuzz
