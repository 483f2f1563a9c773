// CPU accounting and placement for the harness: which CPUs it may run on,
// pinning its threads there, and how much CPU time the process has used.
// This is what decides whether a point was client-bound (the seed's first
// numbers were wrong because the client, not the server, was saturated).
//
// Thread safety: all functions are thread-safe.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "harness/status.h"

namespace kvlab::harness {

// Parses a CPU list such as "0,2-3" into sorted, distinct CPU numbers.
Status ParseCpuList(std::string_view text, std::vector<int>* out);

// Restricts the calling thread to `cpus` (no-op when empty).
Status PinCurrentThread(const std::vector<int>& cpus);

// How many cores the harness may run on: |cpus| when given, otherwise the
// process's affinity mask (sched_getaffinity).
int UsableCoreCount(const std::vector<int>& cpus);

// User + system CPU seconds used so far by the whole process (getrusage).
double ProcessCpuSeconds();

// The same for this process's waited-for children (RUSAGE_CHILDREN): a load
// generator it ran, such as redis-benchmark.
double ChildrenCpuSeconds();
uint64_t ChildrenContextSwitches();

// Voluntary + involuntary context switches of the whole process so far
// (getrusage): each blocked hand-off between threads costs about two.
uint64_t ProcessContextSwitches();
// Voluntary switches alone (sleeps) of this process and its waited-for
// children: what a wake-up costs the CPUs is charged per sleep (wake_cost.h).
uint64_t VoluntarySwitchesWithChildren();

// The CPU bandwidth a cgroup quota allows, in cores ("150000 100000" in
// cgroup v2's cpu.max is 1.5 cores); 0 when unlimited ("max ...") or unreadable.
double ParseCgroupCpuMax(std::string_view cpu_max_text);

// The tightest CPU quota on the path of the cgroup this process is in, in
// cores; 0 when there is none. `cgroup_root` is where the cgroup file systems
// are mounted (/sys/fs/cgroup) and `proc_self_cgroup` the text of
// /proc/self/cgroup. Reads cgroup v2's cpu.max and cgroup v1's
// cpu.cfs_quota_us / cpu.cfs_period_us, for the cgroup and each ancestor.
double CgroupCpuQuota(const std::string& cgroup_root, const std::string& proc_self_cgroup);
// The same for this process, from the real files.
double CgroupCpuQuota();

// How many cores' worth of CPU the harness may use: the usable cores
// (--cpus or the affinity mask), or the cgroup quota when that is smaller.
double AllowedCores(const std::vector<int>& cpus);

// CPU time used so far by each thread of this process (nanoseconds, from
// each thread's CPU clock), keyed by thread id.
using ThreadCpuTimes = std::map<pid_t, uint64_t>;
ThreadCpuTimes CurrentThreadCpuTimes();

// The largest share of one core any single thread used between two
// snapshots `seconds` apart (threads present in both).
double BusiestThreadCores(const ThreadCpuTimes& before, const ThreadCpuTimes& after,
                          double seconds);

// A point is client-bound when one harness thread kept >= 90% of a core busy
// (a saturated shared writer or reader, a single application thread) or the
// whole process used >= 90% of the cores it is allowed (affinity and cgroup
// quota).
constexpr double kClientBoundFraction = 0.9;
inline bool IsClientBound(double process_cores, double allowed_cores, double busiest_thread_cores) {
  return busiest_thread_cores >= kClientBoundFraction ||
         process_cores >= kClientBoundFraction * allowed_cores;
}

}  // namespace kvlab::harness
