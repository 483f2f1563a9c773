// CPU accounting: the usable cores follow the thread's affinity, cgroup CPU
// quotas (v1 and v2, the tightest on the path) bound the allowed cores, a
// thread that burns a core is seen as the busiest thread, and the
// client-bound rule fires on one saturated thread as well as on the process.
#include "harness/measurement/cpu_usage.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

namespace kvlab::harness {
namespace {

void WriteFile(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

TEST(CpuUsageTest, UsableCoresFollowTheAffinityMask) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
  int first_cpu = 0;
  while (!CPU_ISSET(first_cpu, &allowed)) ++first_cpu;
  EXPECT_EQ(UsableCoreCount({}), CPU_COUNT(&allowed));
  int pinned_count = 0;
  std::thread pinned([&] {
    ASSERT_TRUE(PinCurrentThread({first_cpu}).ok());
    pinned_count = UsableCoreCount({});
  });
  pinned.join();
  EXPECT_EQ(pinned_count, 1);
}

TEST(CpuUsageTest, ParsesCgroupV2CpuMax) {
  EXPECT_DOUBLE_EQ(ParseCgroupCpuMax("150000 100000\n"), 1.5);
  EXPECT_DOUBLE_EQ(ParseCgroupCpuMax("max 100000\n"), 0);
  EXPECT_DOUBLE_EQ(ParseCgroupCpuMax(""), 0);
}

TEST(CpuUsageTest, TheTightestQuotaOnTheCgroupPathBinds) {
  char pattern[] = "/tmp/kvlab-cgroup-test-XXXXXX";
  ASSERT_NE(::mkdtemp(pattern), nullptr);
  const std::filesystem::path root = pattern;
  // v2: the parent allows 1.5 cores, the process's own cgroup is unlimited.
  WriteFile(root / "cpu.max", "max 100000\n");
  WriteFile(root / "jobs" / "cpu.max", "150000 100000\n");
  WriteFile(root / "jobs" / "bench" / "cpu.max", "max 100000\n");
  EXPECT_DOUBLE_EQ(CgroupCpuQuota(root.string(), "0::/jobs/bench\n"), 1.5);
  EXPECT_DOUBLE_EQ(CgroupCpuQuota(root.string(), "0::/\n"), 0);
  // v1: cpu controller mounted at <root>/cpu; -1 is unlimited.
  WriteFile(root / "cpu" / "cpu.cfs_quota_us", "-1\n");
  WriteFile(root / "cpu" / "cpu.cfs_period_us", "100000\n");
  WriteFile(root / "cpu" / "box" / "cpu.cfs_quota_us", "50000\n");
  WriteFile(root / "cpu" / "box" / "cpu.cfs_period_us", "100000\n");
  EXPECT_DOUBLE_EQ(CgroupCpuQuota(root.string(), "4:memory:/x\n2:cpu,cpuacct:/box\n"), 0.5);
  EXPECT_DOUBLE_EQ(CgroupCpuQuota(root.string(), "2:cpu,cpuacct:/\n"), 0);
  std::filesystem::remove_all(root);
  EXPECT_GT(AllowedCores({}), 0);
  EXPECT_LE(AllowedCores({}), UsableCoreCount({}));
}

TEST(CpuUsageTest, SeesTheThreadThatBurnsACore) {
  const ThreadCpuTimes before = CurrentThreadCpuTimes();
  const auto wall_start = std::chrono::steady_clock::now();
  std::atomic<bool> burned{false};
  std::atomic<bool> stop{false};
  std::thread burner([&] {
    // Burn 0.2 s of this thread's own CPU time (not wall time), then keep
    // burning until the snapshot is taken, so the thread is alive for it.
    timespec used{};
    while (!stop.load()) {
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &used);
      if (used.tv_sec > 0 || used.tv_nsec >= 200'000'000) burned.store(true);
    }
  });
  while (!burned.load()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const ThreadCpuTimes during = CurrentThreadCpuTimes();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  stop.store(true);
  burner.join();
  // The burner started after `before`: count it from zero.
  ThreadCpuTimes zero_for_new = before;
  for (const auto& entry : during) zero_for_new.emplace(entry.first, 0);
  const double busiest = BusiestThreadCores(zero_for_new, during, seconds);
  EXPECT_GE(busiest * seconds, 0.2);  // CPU seconds of the busiest thread
  EXPECT_LE(busiest, 1.01);           // one thread never exceeds one core
}

TEST(CpuUsageTest, ClientBoundOnOneSaturatedThreadOrTheWholeAllowance) {
  EXPECT_TRUE(IsClientBound(0.95, 4, 0.95));  // one thread saturated, process far from 4 cores
  EXPECT_FALSE(IsClientBound(0.85, 4, 0.85));
  EXPECT_TRUE(IsClientBound(1.8, 2, 0.6));  // the process used 90% of what it may use
  EXPECT_FALSE(IsClientBound(1.7, 2, 0.6));
  EXPECT_TRUE(IsClientBound(0.5, 0.5, 0.3));  // a 0.5-core cgroup quota, used fully
}

}  // namespace
}  // namespace kvlab::harness
