// Instructions and cycles retired by another process's threads, counted with
// perf_event_open (one counter pair per thread present when counting began;
// user and kernel mode). Where the kernel refuses (perf_event_paranoid, no
// PMU in the VM, another user's process) Open fails and the caller reports
// n/a: never an estimate.
//
// Thread safety: not thread-safe; one owner.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "harness/status.h"

namespace kvlab::harness {

struct CounterReading {
  uint64_t instructions = 0;
  uint64_t cycles = 0;
};

class HardwareCounters {
 public:
  // Starts counting every thread of `pid`. Fails when any counter cannot be
  // opened (so a figure never covers only some threads).
  static Status Open(pid_t pid, std::unique_ptr<HardwareCounters>* out);
  ~HardwareCounters();
  HardwareCounters(const HardwareCounters&) = delete;
  HardwareCounters& operator=(const HardwareCounters&) = delete;

  // The counts so far, summed over the threads (scaled when the kernel
  // multiplexed the counters). Fails when a counter cannot be read.
  Status Read(CounterReading* out) const;

 private:
  HardwareCounters() = default;
  std::vector<int> instruction_fds_;
  std::vector<int> cycle_fds_;
};

}  // namespace kvlab::harness
