#include "harness/measurement/window_watch.h"

#include <unistd.h>

#include <algorithm>
#include <set>

#include "harness/measurement/cpu_usage.h"
#include "harness/measurement/load_clock.h"

namespace kvlab::harness {

double ForeignSecondsBetween(const WatchMark& before, const WatchMark& after,
                             double ticks_per_second, double wake_cost_seconds) {
  const double seconds = std::max(static_cast<double>(after.ns - before.ns) / 1e9, 1e-9);
  const double busy = BusySeconds(before.ticks, after.ticks, seconds, ticks_per_second);
  const double own = after.own_seconds - before.own_seconds;
  const double sleeps =
      static_cast<double>(std::max<int64_t>(0, after.own_sleeps - before.own_sleeps));
  return busy - own - std::max(0.0, wake_cost_seconds) * sleeps;
}

WindowFigures FiguresBetween(const WatchMark& before, const WatchMark& after, bool measured,
                             double ticks_per_second, double disturbed_above_cores,
                             double wake_cost_seconds) {
  WindowFigures figures;
  const double seconds = std::max(static_cast<double>(after.ns - before.ns) / 1e9, 1e-9);
  if (measured) {
    figures.foreign_cores =
        std::max(0.0, ForeignSecondsBetween(before, after, ticks_per_second, wake_cost_seconds)) /
        seconds;
    figures.steal_cores =
        static_cast<double>(after.ticks.steal - before.ticks.steal) / ticks_per_second / seconds;
    figures.disturbed = figures.foreign_cores > disturbed_above_cores ||
                        figures.steal_cores > disturbed_above_cores;
  }
  if (before.server_switches >= 0 && after.server_switches >= 0) {
    figures.server_context_switches =
        std::max<int64_t>(0, after.server_switches - before.server_switches);
  }
  if (before.counted && after.counted) {
    figures.server_instructions =
        static_cast<int64_t>(after.counters.instructions - before.counters.instructions);
    figures.server_cycles = static_cast<int64_t>(after.counters.cycles - before.counters.cycles);
  }
  return figures;
}

WindowWatch::WindowWatch(WatchOptions options, pid_t server_pid)
    : options_(std::move(options)), server_pid_(server_pid) {
  if (server_pid_ > 0 && !HardwareCounters::Open(server_pid_, &counters_).ok()) counters_.reset();
}

std::vector<pid_t> WindowWatch::OwnProcesses() const {
  // Only interference needs them: without measured CPUs, no reading of /proc.
  if (options_.measured_cpus.empty()) return {};
  // Each process once: a caller may name the server among its own pids too
  // (the runner names every server it started; an alternation adds side B's).
  std::set<pid_t> ours(options_.own_pids.begin(), options_.own_pids.end());
  if (server_pid_ > 0) ours.insert(server_pid_);
  if (options_.trees) {
    const std::vector<pid_t> tree = ProcessTreeOf({ours.begin(), ours.end()});
    ours = std::set<pid_t>(tree.begin(), tree.end());
  }
  ours.erase(::getpid());  // Mark's ProcessCpuSeconds() counts this process
  return {ours.begin(), ours.end()};
}

WatchMark WindowWatch::Mark(const std::vector<pid_t>& own) const {
  WatchMark mark;
  if (!options_.measured_cpus.empty()) {
    mark.ticks = ReadCpuTicks(options_.measured_cpus);
    // The CPUs' busy time is their time since the last mark less their idle
    // time (BusySeconds): the clock is read with /proc/stat.
    mark.ns = NowNs();
    mark.own_seconds =
        ProcessCpuSeconds() + ChildrenCpuSeconds();  // a redis-benchmark child is ours
    mark.own_sleeps = static_cast<int64_t>(VoluntarySwitchesWithChildren());
    for (pid_t pid : own) {
      mark.own_seconds += std::max(0.0, ProcessCpuSecondsOf(pid));
      mark.own_sleeps += std::max<int64_t>(0, ProcessVoluntarySwitchesOf(pid));
    }
  }
  if (server_pid_ > 0) mark.server_switches = ProcessContextSwitchesOf(server_pid_);
  if (counters_) mark.counted = counters_->Read(&mark.counters).ok();
  if (options_.measured_cpus.empty()) mark.ns = NowNs();
  return mark;
}

WindowFigures WindowWatch::Between(const WatchMark& before, const WatchMark& after) const {
  return FiguresBetween(before, after, !options_.measured_cpus.empty(), ProcTicksPerSecond(),
                        options_.disturbed_above_cores, options_.wake_cost_seconds);
}

}  // namespace kvlab::harness
