// ThreadCpu: the CPU time one thread of this process has used, split into
// user and system time, as INFO's per-thread figures report it.
//
// Threads record their own kernel thread id (CurrentThreadId()) when they
// start; anyone may later read that thread's figures from
// /proc/self/task/<tid>/stat, which the kernel keeps per thread (clock ticks,
// so the resolution is 1/sysconf(_SC_CLK_TCK) s). Thread-safe.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

namespace kvlab {

struct ThreadCpuSeconds {
  double user = 0;
  double system = 0;
};

// The calling thread's kernel id (gettid()).
pid_t CurrentThreadId();

// The figures of thread `tid` of this process; nullopt when it has exited
// or /proc cannot be read.
std::optional<ThreadCpuSeconds> ReadThreadCpu(pid_t tid);

// Seconds as INFO cpu prints them: six decimals, like Redis's "%ld.%06ld".
std::string FormatCpuSeconds(double seconds);

}  // namespace kvlab
