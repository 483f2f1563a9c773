// Readings of /proc that tell who used which CPU: the busy and steal time of
// chosen CPUs (/proc/stat), a process's CPU time over all its threads
// (/proc/PID/stat) and its context switches (/proc/PID/task/*/status).
// The parsers take the files' text, so known answers can be tested; the
// readers open the real files and return a negative figure when the process
// is gone or not ours to read.
//
// Thread safety: pure functions; thread-safe.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kvlab::harness {

// The whole text of a (small) file; "" when it cannot be read.
std::string ReadTextFile(const std::string& path);

// Clock ticks per second of /proc's figures (sysconf(_SC_CLK_TCK), usually 100).
double ProcTicksPerSecond();

// The time of `cpus` by state, summed over them, in clock ticks, as
// /proc/stat counts it: `ticked` (user + nice + system), `irq` (irq +
// softirq), `idle` (idle + iowait) and `steal`; `cpus`, how many of them
// /proc/stat listed; `irq_charged_to_tasks` as the parser was told
// (irq_accounting.h).
struct CpuTicks {
  uint64_t ticked = 0;
  uint64_t irq = 0;
  uint64_t idle = 0;
  uint64_t steal = 0;
  int cpus = 0;
  bool irq_charged_to_tasks = true;
  // /proc/stat's `processes`: processes and threads created since boot (a
  // window in which it moved had work that may have come and gone unseen).
  uint64_t forks = 0;
};
CpuTicks ParseProcStat(std::string_view proc_stat_text, const std::vector<int>& cpus,
                       bool irq_charged_to_tasks);
// The seconds the CPUs were busy between two readings `seconds` apart:
// all of their time but idle, iowait and steal — and but irq and softirq
// where the kernel keeps those out of task time, so that what is left is
// comparable with processes' CPU time. Not from user + nice + system: on a
// tickless kernel those are sampled at ticks that an idle CPU does not
// take, and a CPU busy in short bursts (a server answering small requests)
// is mostly missed — our own loopback ping-pong read 0.31 s of them and
// 0.60 s of irq against 1.44 s of its threads' CPU time over 2 s, while
// idle (timed exactly at each idle exit) left 1.48 s. Not clamped at zero.
double BusySeconds(const CpuTicks& before, const CpuTicks& after, double seconds,
                   double ticks_per_second);
// With this kernel's accounting (ThisKernelIrqAccounting()).
CpuTicks ReadCpuTicks(const std::vector<int>& cpus);

// utime + stime in clock ticks from the text of /proc/PID/stat (all threads,
// exited ones included); < 0 when the text is not such a line.
int64_t ParseProcessStatTicks(std::string_view proc_pid_stat_text);
// The same in seconds for a live process; < 0 when it cannot be read.
double ProcessCpuSecondsOf(pid_t pid);
// Seconds since the process started (from /proc/PID/stat's start time and
// the system's uptime); < 0 when it cannot be read.
double ProcessAgeSeconds(pid_t pid);

// The parent's pid from the text of /proc/PID/stat; < 0 when it is not such a line.
pid_t ParseProcessParent(std::string_view proc_pid_stat_text);
// `roots` and every live descendant of theirs (children, grandchildren, ...),
// each once, roots first: a server started through a wrapper or one that
// forks workers is its whole tree. Found from each member's threads'
// /proc/PID/task/TID/children where the kernel has them (a few reads), else by
// one pass over /proc/*/stat (every process's). A root that is gone is left out.
enum class ChildrenFrom {
  kBest,         // the threads' lists where the kernel has them, else the scan
  kThreadLists,  // /proc/PID/task/TID/children (finds none where the kernel lacks them)
  kProcScan,     // one pass over /proc/*/stat
};
std::vector<pid_t> ProcessTreeOf(const std::vector<pid_t>& roots,
                                 ChildrenFrom from = ChildrenFrom::kBest);
// Whether this kernel lists a thread's children (CONFIG_PROC_CHILDREN).
bool KernelListsChildren();
// CPU seconds of a live process over all its threads, from its CPU clock
// (nanoseconds; /proc's ticks as a fallback); < 0 when it cannot be read.
double ProcessClockSecondsOf(pid_t pid);
// CPU seconds of ProcessTreeOf(roots), summed: what a server of several
// processes used so far (exited children are not counted: a server's
// workers live as long as it does). < 0 when no root can be read.
double ProcessTreeCpuSeconds(const std::vector<pid_t>& roots);
// CPU seconds of the given processes (a tree found earlier), summed; a
// process that has ended counts nothing; < 0 when none can be read.
double ProcessesCpuSeconds(const std::vector<pid_t>& processes);

// voluntary_ctxt_switches + nonvoluntary_ctxt_switches of one
// /proc/PID/task/TID/status text; < 0 when neither line is there.
int64_t ParseTaskContextSwitches(std::string_view task_status_text);
// voluntary_ctxt_switches alone: the times a thread went to sleep (each
// wakes later, often a CPU out of idle); < 0 when the line is not there.
int64_t ParseTaskVoluntarySwitches(std::string_view task_status_text);
// Summed over the process's live threads; < 0 when it cannot be read.
int64_t ProcessContextSwitchesOf(pid_t pid);
int64_t ProcessVoluntarySwitchesOf(pid_t pid);
// The ids of the process's live threads (empty when it cannot be read).
std::vector<pid_t> ThreadsOf(pid_t pid);

}  // namespace kvlab::harness
