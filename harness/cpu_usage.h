// CPU accounting and placement for the harness: which CPUs it may run on,
// pinning its threads there, and how much CPU time the process has used.
// This is what decides whether a point was client-bound (the seed's first
// numbers were wrong because the client, not the server, was saturated).
//
// Thread safety: all functions are thread-safe.
#pragma once

#include <cstdint>
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

// Voluntary + involuntary context switches of the whole process so far
// (getrusage): each blocked hand-off between threads costs about two.
uint64_t ProcessContextSwitches();

// A point is client-bound when the harness kept >= 90% of its usable cores busy.
constexpr double kClientBoundFraction = 0.9;
inline bool IsClientBound(double cores_used, int usable_cores) {
  return cores_used >= kClientBoundFraction * usable_cores;
}

}  // namespace kvlab::harness
