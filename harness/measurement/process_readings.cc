#include "harness/measurement/process_readings.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include "harness/measurement/irq_accounting.h"

namespace kvlab::harness {
namespace {

bool ParseUnsigned(std::string_view text, uint64_t* value) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return error == std::errc() && end == text.data() + text.size();
}

// The whitespace-separated fields after the command name's closing ')' of a
// /proc/PID/stat line (the name may hold spaces and parentheses): field 0 is
// the state, 11 utime, 12 stime, 19 starttime.
std::vector<std::string_view> StatFieldsAfterName(std::string_view text) {
  std::vector<std::string_view> fields;
  const size_t close = text.rfind(')');
  if (close == std::string_view::npos) return fields;
  std::string_view rest = text.substr(close + 1);
  while (!rest.empty()) {
    const size_t start = rest.find_first_not_of(" \n");
    if (start == std::string_view::npos) break;
    rest = rest.substr(start);
    const size_t end = rest.find_first_of(" \n");
    fields.push_back(rest.substr(0, end));
    if (end == std::string_view::npos) break;
    rest = rest.substr(end);
  }
  return fields;
}

}  // namespace

std::string ReadTextFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return {};
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

double ProcTicksPerSecond() { return static_cast<double>(::sysconf(_SC_CLK_TCK)); }

CpuTicks ParseProcStat(std::string_view text, const std::vector<int>& cpus,
                       bool irq_charged_to_tasks) {
  std::set<std::string> wanted;
  for (int cpu : cpus) wanted.insert("cpu" + std::to_string(cpu));
  CpuTicks ticks;
  std::istringstream lines{std::string(text)};
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string name;
    fields >> name;
    if (name == "processes") fields >> ticks.forks;
    if (!wanted.contains(name)) continue;
    // user nice system idle iowait irq softirq steal ...
    uint64_t values[8] = {};
    for (uint64_t& value : values) fields >> value;
    ticks.ticked += values[0] + values[1] + values[2];
    ticks.irq += values[5] + values[6];
    ticks.idle += values[3] + values[4];
    ticks.steal += values[7];
    ++ticks.cpus;
  }
  ticks.irq_charged_to_tasks = irq_charged_to_tasks;
  return ticks;
}

double BusySeconds(const CpuTicks& before, const CpuTicks& after, double seconds,
                   double ticks_per_second) {
  auto delta = [&](uint64_t CpuTicks::*field) {
    return static_cast<double>(after.*field - before.*field) / ticks_per_second;
  };
  double busy = after.cpus * seconds - delta(&CpuTicks::idle) - delta(&CpuTicks::steal);
  if (!after.irq_charged_to_tasks) busy -= delta(&CpuTicks::irq);
  return busy;
}

CpuTicks ReadCpuTicks(const std::vector<int>& cpus) {
  return ParseProcStat(ReadTextFile("/proc/stat"), cpus,
                       ThisKernelIrqAccounting().charged_to_tasks);
}

int64_t ParseProcessStatTicks(std::string_view text) {
  const std::vector<std::string_view> fields = StatFieldsAfterName(text);
  uint64_t user = 0, system = 0;
  if (fields.size() < 13 || !ParseUnsigned(fields[11], &user) ||
      !ParseUnsigned(fields[12], &system)) {
    return -1;
  }
  return static_cast<int64_t>(user + system);
}

double ProcessCpuSecondsOf(pid_t pid) {
  const int64_t ticks =
      ParseProcessStatTicks(ReadTextFile("/proc/" + std::to_string(pid) + "/stat"));
  return ticks < 0 ? -1 : static_cast<double>(ticks) / ProcTicksPerSecond();
}

double ProcessAgeSeconds(pid_t pid) {
  // The text outlives `fields`, which point into it.
  const std::string stat = ReadTextFile("/proc/" + std::to_string(pid) + "/stat");
  const std::vector<std::string_view> fields = StatFieldsAfterName(stat);
  uint64_t start_ticks = 0;
  if (fields.size() < 20 || !ParseUnsigned(fields[19], &start_ticks)) return -1;
  double uptime = -1;
  std::istringstream(ReadTextFile("/proc/uptime")) >> uptime;
  if (uptime < 0) return -1;
  return uptime - static_cast<double>(start_ticks) / ProcTicksPerSecond();
}

pid_t ParseProcessParent(std::string_view text) {
  const std::vector<std::string_view> fields = StatFieldsAfterName(text);
  uint64_t parent = 0;
  if (fields.size() < 2 || !ParseUnsigned(fields[1], &parent)) return -1;
  return static_cast<pid_t>(parent);
}

bool KernelListsChildren() {
  static const bool lists =
      std::filesystem::exists("/proc/self/task/" + std::to_string(::getpid()) + "/children");
  return lists;
}

namespace {

// parent -> child for every process on the machine: one pass over /proc/*/stat.
std::multimap<pid_t, pid_t> AllChildren() {
  std::multimap<pid_t, pid_t> children;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    uint64_t pid = 0;
    if (!ParseUnsigned(entry.path().filename().string(), &pid)) continue;
    const pid_t parent = ParseProcessParent(ReadTextFile(entry.path().string() + "/stat"));
    if (parent > 0) children.emplace(parent, static_cast<pid_t>(pid));
  }
  return children;
}

// The children of one process, from its threads' children files: a few reads
// for a server of a few threads, where the pass over /proc reads every
// process's stat (hundreds on a busy machine, milliseconds inside a 50 ms slice).
std::vector<pid_t> ListedChildrenOf(pid_t pid) {
  std::vector<pid_t> children;
  for (pid_t tid : ThreadsOf(pid)) {
    std::istringstream listed(ReadTextFile("/proc/" + std::to_string(pid) + "/task/" +
                                           std::to_string(tid) + "/children"));
    for (pid_t child = 0; listed >> child;) children.push_back(child);
  }
  return children;
}

}  // namespace

std::vector<pid_t> ProcessTreeOf(const std::vector<pid_t>& roots, ChildrenFrom from) {
  std::vector<pid_t> tree;
  for (pid_t root : roots) {
    if (root > 0 && std::find(tree.begin(), tree.end(), root) == tree.end() &&
        std::filesystem::exists("/proc/" + std::to_string(root))) {
      tree.push_back(root);
    }
  }
  if (tree.empty()) return tree;
  const bool listed =
      from == ChildrenFrom::kThreadLists || (from == ChildrenFrom::kBest && KernelListsChildren());
  const std::multimap<pid_t, pid_t> all = listed ? std::multimap<pid_t, pid_t>() : AllChildren();
  for (size_t i = 0; i < tree.size(); ++i) {  // breadth first; `tree` grows as it goes
    std::vector<pid_t> children;
    if (listed) {
      children = ListedChildrenOf(tree[i]);
    } else {
      const auto [first, last] = all.equal_range(tree[i]);
      for (auto it = first; it != last; ++it) children.push_back(it->second);
    }
    for (pid_t child : children) {
      if (std::find(tree.begin(), tree.end(), child) == tree.end()) tree.push_back(child);
    }
  }
  return tree;
}

double ProcessClockSecondsOf(pid_t pid) {
  if (pid <= 0) return -1;
  clockid_t clock;
  timespec now{};
  if (::clock_getcpuclockid(pid, &clock) == 0 && ::clock_gettime(clock, &now) == 0) {
    return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
  }
  return ProcessCpuSecondsOf(pid);
}

double ProcessesCpuSeconds(const std::vector<pid_t>& processes) {
  double total = 0;
  bool any = false;
  for (pid_t pid : processes) {
    const double seconds = ProcessClockSecondsOf(pid);
    if (seconds < 0) continue;  // ended since the tree was read
    total += seconds;
    any = true;
  }
  return any ? total : -1;
}

double ProcessTreeCpuSeconds(const std::vector<pid_t>& roots) {
  return ProcessesCpuSeconds(ProcessTreeOf(roots));
}

namespace {

// The sum of the named counters' lines; < 0 when none is there.
int64_t SumStatusCounters(std::string_view text, std::initializer_list<std::string_view> names) {
  int64_t total = 0;
  bool found = false;
  std::istringstream lines{std::string(text)};
  for (std::string line; std::getline(lines, line);) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string_view name = std::string_view(line).substr(0, colon);
    if (std::find(names.begin(), names.end(), name) == names.end()) continue;
    std::istringstream value(line.substr(colon + 1));
    int64_t count = 0;
    if (value >> count) {
      total += count;
      found = true;
    }
  }
  return found ? total : -1;
}

// Summed over the process's live threads' status files; < 0 when it cannot be read.
int64_t SumOverThreads(pid_t pid, int64_t (*parse)(std::string_view)) {
  const std::vector<pid_t> threads = ThreadsOf(pid);
  if (threads.empty()) return -1;
  int64_t total = 0;
  for (pid_t tid : threads) {
    const int64_t switches = parse(
        ReadTextFile("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/status"));
    if (switches > 0) total += switches;  // a thread that exited meanwhile counts nothing
  }
  return total;
}

}  // namespace

int64_t ParseTaskContextSwitches(std::string_view text) {
  return SumStatusCounters(text, {"voluntary_ctxt_switches", "nonvoluntary_ctxt_switches"});
}

int64_t ParseTaskVoluntarySwitches(std::string_view text) {
  return SumStatusCounters(text, {"voluntary_ctxt_switches"});
}

std::vector<pid_t> ThreadsOf(pid_t pid) {
  std::vector<pid_t> threads;
  std::error_code error;
  for (const auto& entry :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", error)) {
    uint64_t tid = 0;
    if (ParseUnsigned(entry.path().filename().string(), &tid))
      threads.push_back(static_cast<pid_t>(tid));
  }
  return threads;
}

int64_t ProcessContextSwitchesOf(pid_t pid) {
  return SumOverThreads(pid, ParseTaskContextSwitches);
}

int64_t ProcessVoluntarySwitchesOf(pid_t pid) {
  return SumOverThreads(pid, ParseTaskVoluntarySwitches);
}

}  // namespace kvlab::harness
