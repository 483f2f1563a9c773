#include "harness/measurement/cpu_usage.h"

#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "harness/measurement/process_readings.h"

namespace kvlab::harness {
namespace {

bool ParseInt(std::string_view text, int* out) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return error == std::errc() && end == text.data() + text.size();
}

// The CPU clock of thread `tid` of this process (the kernel's encoding of a
// per-thread CPUCLOCK_SCHED clock, as glibc's pthread_getcpuclockid builds it).
clockid_t ThreadCpuClock(pid_t tid) {
  constexpr clockid_t kCpuClockSched = 2;
  constexpr clockid_t kCpuClockPerThread = 4;
  return static_cast<clockid_t>((~static_cast<unsigned>(tid)) << 3) | kCpuClockSched |
         kCpuClockPerThread;
}

// Cores allowed by the cgroup v1 quota in `directory`; 0 when unlimited.
double CgroupV1Quota(const std::string& directory) {
  const std::string quota = ReadTextFile(directory + "/cpu.cfs_quota_us");
  const std::string period = ReadTextFile(directory + "/cpu.cfs_period_us");
  if (quota.empty() || period.empty()) return 0;
  const double quota_us = std::strtod(quota.c_str(), nullptr);
  const double period_us = std::strtod(period.c_str(), nullptr);
  return quota_us > 0 && period_us > 0 ? quota_us / period_us : 0;
}

// The smallest non-zero of a and b (0 = no limit).
double TighterLimit(double a, double b) {
  if (a <= 0) return b;
  if (b <= 0) return a;
  return std::min(a, b);
}

}  // namespace

Status ParseCpuList(std::string_view text, std::vector<int>* out) {
  std::vector<int> cpus;
  const Status invalid = Status::InvalidArgument("bad --cpus '" + std::string(text) +
                                                 "' (allowed: a list like 0,2-3 of CPU numbers)");
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    const size_t dash = item.find('-');
    int first = 0;
    int last = 0;
    if (dash == std::string_view::npos) {
      if (!ParseInt(item, &first)) return invalid;
      last = first;
    } else if (!ParseInt(item.substr(0, dash), &first) || !ParseInt(item.substr(dash + 1), &last)) {
      return invalid;
    }
    if (first < 0 || last < first || last >= CPU_SETSIZE) return invalid;
    for (int cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
  }
  if (cpus.empty()) return invalid;
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  *out = std::move(cpus);
  return Status::Ok();
}

Status PinCurrentThread(const std::vector<int>& cpus) {
  if (cpus.empty()) return Status::Ok();
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus) CPU_SET(cpu, &set);
  const int error = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  if (error != 0) {
    return Status::InvalidArgument(std::string("cannot pin to --cpus: ") + std::strerror(error));
  }
  return Status::Ok();
}

int UsableCoreCount(const std::vector<int>& cpus) {
  if (!cpus.empty()) return static_cast<int>(cpus.size());
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

namespace {
double CpuSecondsOf(int who) {
  rusage usage{};
  getrusage(who, &usage);
  auto seconds = [](const timeval& tv) { return tv.tv_sec + tv.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}
uint64_t ContextSwitchesOf(int who) {
  rusage usage{};
  getrusage(who, &usage);
  return static_cast<uint64_t>(usage.ru_nvcsw) + static_cast<uint64_t>(usage.ru_nivcsw);
}
uint64_t VoluntarySwitchesOf(int who) {
  rusage usage{};
  getrusage(who, &usage);
  return static_cast<uint64_t>(usage.ru_nvcsw);
}
}  // namespace

double ProcessCpuSeconds() { return CpuSecondsOf(RUSAGE_SELF); }
uint64_t ProcessContextSwitches() { return ContextSwitchesOf(RUSAGE_SELF); }
double ChildrenCpuSeconds() { return CpuSecondsOf(RUSAGE_CHILDREN); }
uint64_t ChildrenContextSwitches() { return ContextSwitchesOf(RUSAGE_CHILDREN); }
uint64_t VoluntarySwitchesWithChildren() {
  return VoluntarySwitchesOf(RUSAGE_SELF) + VoluntarySwitchesOf(RUSAGE_CHILDREN);
}

}  // namespace kvlab::harness

namespace kvlab::harness {

double ParseCgroupCpuMax(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::string quota;
  double period = 0;
  if (!(in >> quota >> period) || quota == "max" || period <= 0) return 0;
  const double quota_us = std::strtod(quota.c_str(), nullptr);
  return quota_us > 0 ? quota_us / period : 0;
}

double CgroupCpuQuota(const std::string& cgroup_root, const std::string& proc_self_cgroup) {
  double limit = 0;
  std::istringstream lines(proc_self_cgroup);
  std::string line;
  while (std::getline(lines, line)) {
    // hierarchy-id:controllers:path
    const size_t first = line.find(':');
    const size_t second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    std::string path = line.substr(second + 1);
    std::vector<std::string> mounts;  // where this hierarchy may be mounted
    if (controllers.empty()) {
      mounts = {cgroup_root, cgroup_root + "/unified"};
    } else {
      std::istringstream names(controllers);
      std::string name;
      bool has_cpu = false;
      while (std::getline(names, name, ',')) has_cpu |= name == "cpu";
      if (!has_cpu) continue;
      mounts = {cgroup_root + "/cpu", cgroup_root + "/" + controllers};
    }
    // The cgroup and every ancestor up to the root: the tightest one binds.
    for (;;) {
      for (const std::string& mount : mounts) {
        const std::string directory = mount + (path == "/" ? "" : path);
        limit = TighterLimit(limit, controllers.empty()
                                        ? ParseCgroupCpuMax(ReadTextFile(directory + "/cpu.max"))
                                        : CgroupV1Quota(directory));
      }
      if (path.empty() || path == "/") break;
      const size_t slash = path.rfind('/');
      path = slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
    }
  }
  return limit;
}

double CgroupCpuQuota() {
  return CgroupCpuQuota("/sys/fs/cgroup", ReadTextFile("/proc/self/cgroup"));
}

double AllowedCores(const std::vector<int>& cpus) {
  const double usable = UsableCoreCount(cpus);
  const double quota = CgroupCpuQuota();
  return quota > 0 ? std::min(usable, quota) : usable;
}

ThreadCpuTimes CurrentThreadCpuTimes() {
  ThreadCpuTimes times;
  DIR* tasks = ::opendir("/proc/self/task");
  if (tasks == nullptr) return times;
  while (const dirent* entry = ::readdir(tasks)) {
    int tid = 0;
    const char* name = entry->d_name;
    const auto [end, error] = std::from_chars(name, name + std::strlen(name), tid);
    if (error != std::errc() || *end != '\0' || tid <= 0) continue;
    timespec used{};
    if (::clock_gettime(ThreadCpuClock(tid), &used) != 0) continue;  // the thread has exited
    times[tid] =
        static_cast<uint64_t>(used.tv_sec) * 1'000'000'000 + static_cast<uint64_t>(used.tv_nsec);
  }
  ::closedir(tasks);
  return times;
}

double BusiestThreadCores(const ThreadCpuTimes& before, const ThreadCpuTimes& after,
                          double seconds) {
  if (!(seconds > 0)) return 0;
  uint64_t busiest = 0;
  for (const auto& [tid, used] : after) {
    const auto earlier = before.find(tid);
    if (earlier != before.end() && used > earlier->second) {
      busiest = std::max(busiest, used - earlier->second);
    }
  }
  return static_cast<double>(busiest) / 1e9 / seconds;
}

}  // namespace kvlab::harness
