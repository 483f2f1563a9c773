#include "harness/window_marks.h"

#include <algorithm>
#include <utility>

#include "harness/measurement/load_clock.h"

namespace kvlab::harness {

WindowMark WindowMarks::Take() {
  WindowMark mark;
  mark.counters = sources_.TakeCounters(&mark.at_ns);
  // First after the counters: the commands the server runs between the two
  // count in calls but not in ops, so the shorter that gap the better.
  mark.commands = sources_.ServerCommandStats();
  mark.process_cpu_s = ProcessCpuSeconds();
  mark.threads = CurrentThreadCpuTimes();
  mark.watch = watch_.Mark();
  mark.context_switches = ProcessContextSwitches();
  mark.loop_wakeups = sources_.LoopWakeups();
  mark.moved = sources_.Moved();
  if (rate_ > 0) mark.backlog = sources_.Backlog(mark.at_ns);
  mark.server_cpu_s = sources_.ServerCpuSeconds();
  mark.server_cpu_at_ns = NowNs();
  mark.stages = sources_.ServerStages();
  return mark;
}

RepetitionResult WindowMarks::Between(const WindowMark& start, WindowMark& end) const {
  const ThreadCounters& counters = end.counters;
  RepetitionResult r;
  r.ops = counters.ops;
  r.errors = counters.errors;
  r.wrong_type = counters.wrong_type;
  r.misses = counters.misses;
  r.seconds = (end.at_ns - start.at_ns) / 1e9;
  r.ops_per_s = counters.ops / r.seconds;
  if (rate_ > 0) SetOpenLoop(start, end, &r);
  SetCosts(start, end, &r);
  r.watched = watch_.Between(start.watch, end.watch);
  r.stages = StagesBetween(start.stages, end.stages, counters.ops);
  r.commands = CommandStatsBetween(start.commands, start.at_ns, end.commands, end.at_ns);
  if (counters.phases_measured && counters.ops > 0) {
    for (size_t i = 0; i < kClientPhaseCount; ++i) {
      r.client_phase_us[i] = counters.phase_ns[i] / 1e3 / static_cast<double>(counters.ops);
    }
  }
  r.latency = std::move(end.counters.latency);
  return r;
}

void WindowMarks::SetOpenLoop(const WindowMark& start, const WindowMark& end,
                              RepetitionResult* r) const {
  // What the schedule made due in this window: answered, or owed at its end
  // and not already owed at its start. For uniform arrivals that is rate x
  // seconds; for Poisson the realised count, so chance alone never marks a
  // window behind.
  const uint64_t answers = end.counters.ops + end.counters.errors;
  r->offered_rate = rate_;
  r->achieved_rate = answers / r->seconds;
  const double due_in_window = static_cast<double>(answers) + static_cast<double>(end.backlog) -
                               static_cast<double>(start.backlog);
  r->behind = static_cast<double>(answers) < kBehindFraction * due_in_window;
  r->backlog = end.backlog;
}

void WindowMarks::SetCosts(const WindowMark& start, const WindowMark& end,
                           RepetitionResult* r) const {
  r->client_cpu = (end.process_cpu_s - start.process_cpu_s) / r->seconds;
  r->busiest_thread_cpu = BusiestThreadCores(start.threads, end.threads, r->seconds);
  r->usable_cores = usable_cores_;
  r->allowed_cores = allowed_cores_;
  r->client_bound = IsClientBound(r->client_cpu, allowed_cores_, r->busiest_thread_cpu);
  if (start.server_cpu_s >= 0 && end.server_cpu_s >= 0) {
    r->server_cpu = (end.server_cpu_s - start.server_cpu_s) /
                    ((end.server_cpu_at_ns - start.server_cpu_at_ns) / 1e9);
  }
  const double ops = static_cast<double>(std::max<uint64_t>(end.counters.ops, 1));
  r->client_cs_per_op = static_cast<double>(end.context_switches - start.context_switches) / ops;
  if (start.loop_wakeups >= 0) {
    r->loop_wakeups_per_op = static_cast<double>(end.loop_wakeups - start.loop_wakeups) / ops;
  }
  if (start.moved >= 0) r->moved = end.moved - start.moved;
}

}  // namespace kvlab::harness
