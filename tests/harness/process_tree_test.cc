// ProcessTreeOf: a server's processes found from the kernel's per-thread
// children lists and from a scan of /proc agree, children of a second thread
// included; ProcessesCpuSeconds counts only live processes.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "harness/measurement/process_readings.h"

namespace kvlab::harness {
namespace {

// Forks a child that forks one grandchild from its main thread and one from a
// second thread, then waits to be killed; returns {child, grandchildren...}
// once all three exist.
std::vector<pid_t> StartFamily() {
  int ready[2];
  if (::pipe(ready) != 0) return {};
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(ready[0]);
    auto grandchild = [] {
      const pid_t pid = ::fork();
      if (pid == 0) {
        ::pause();
        ::_exit(0);
      }
      return pid;
    };
    pid_t born[2] = {grandchild(), -1};
    std::thread other([&] { born[1] = grandchild(); });
    other.join();  // the thread is gone; its child stays listed under the process
    if (::write(ready[1], born, sizeof(born)) != sizeof(born)) ::_exit(1);
    ::pause();
    ::_exit(0);
  }
  ::close(ready[1]);
  pid_t born[2] = {-1, -1};
  const bool read_all = ::read(ready[0], born, sizeof(born)) == sizeof(born);
  ::close(ready[0]);
  if (child < 0 || !read_all) return {};
  return {child, born[0], born[1]};
}

void EndFamily(const std::vector<pid_t>& family) {
  for (pid_t pid : family) ::kill(pid, SIGKILL);
  ::waitpid(family[0], nullptr, 0);  // the grandchildren are reaped by init
}

std::vector<pid_t> Sorted(std::vector<pid_t> pids) {
  std::sort(pids.begin(), pids.end());
  return pids;
}

TEST(ProcessTree, TheScanFindsChildrenAndGrandchildren) {
  const std::vector<pid_t> family = StartFamily();
  ASSERT_EQ(family.size(), 3u);
  const std::vector<pid_t> tree = ProcessTreeOf({family[0]}, ChildrenFrom::kProcScan);
  EndFamily(family);
  ASSERT_FALSE(tree.empty());
  EXPECT_EQ(tree[0], family[0]) << "the root comes first";
  EXPECT_EQ(Sorted(tree), Sorted(family));
}

TEST(ProcessTree, TheThreadListsFindWhatTheScanFinds) {
  const std::vector<pid_t> family = StartFamily();
  ASSERT_EQ(family.size(), 3u);
  const std::vector<pid_t> listed = ProcessTreeOf({family[0]}, ChildrenFrom::kThreadLists);
  const std::vector<pid_t> scanned = ProcessTreeOf({family[0]}, ChildrenFrom::kProcScan);
  const std::vector<pid_t> best = ProcessTreeOf({family[0]});
  EndFamily(family);
  EXPECT_EQ(Sorted(scanned), Sorted(family));
  EXPECT_EQ(Sorted(best), Sorted(family)) << "the default finds the whole tree either way";
  if (KernelListsChildren()) {
    EXPECT_EQ(Sorted(listed), Sorted(family));
  } else {  // no children files: the lists find the root alone, and the default scans
    EXPECT_EQ(listed, std::vector<pid_t>{family[0]});
  }
}

TEST(ProcessTree, AGoneRootIsLeftOutAndItsCpuIsUnreadable) {
  const std::vector<pid_t> family = StartFamily();
  ASSERT_EQ(family.size(), 3u);
  EXPECT_GE(ProcessesCpuSeconds(family), 0);
  EndFamily(family);
  EXPECT_TRUE(ProcessTreeOf({family[0]}).empty());
  EXPECT_LT(ProcessesCpuSeconds({family[0]}), 0);
  // a live process beside a gone one: the live one's CPU
  EXPECT_GE(ProcessesCpuSeconds({family[0], ::getpid()}), 0);
}

}  // namespace
}  // namespace kvlab::harness
