// A child process that spins on one CPU until killed: known foreign CPU for
// the interference tests (window_watch_test.cc, alternation_test.cc).
// Header-only; call from the test's main thread, before it starts threads of
// its own (fork copies only the caller).
#pragma once

#include <sched.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

namespace kvlab::harness::testing {

// The lowest CPU this process may run on.
inline int FirstAllowedCpu() {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return 0;
  int cpu = 0;
  while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &allowed)) ++cpu;
  return cpu;
}

// Every CPU this process may run on.
inline std::vector<int> AllowedCpus() {
  cpu_set_t allowed;
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) cpus.push_back(cpu);
  }
  return cpus;
}

// The burner's pid (<= 0: fork failed); the caller kills and reaps it.
inline pid_t StartBurner(int cpu) {
  const pid_t pid = fork();
  if (pid == 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof(set), &set);
    volatile uint64_t spins = 0;
    while (true) spins = spins + 1;
  }
  return pid;
}

}  // namespace kvlab::harness::testing
