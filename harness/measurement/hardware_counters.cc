#include "harness/measurement/hardware_counters.h"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "harness/measurement/process_readings.h"

namespace kvlab::harness {
namespace {

int OpenCounter(pid_t tid, uint64_t config) {
  perf_event_attr attr{};
  attr.type = PERF_TYPE_HARDWARE;
  attr.size = sizeof(attr);
  attr.config = config;
  attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  return static_cast<int>(::syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC));
}

// One counter's value, scaled up for the time it was multiplexed out.
bool ReadCounter(int fd, uint64_t* value) {
  uint64_t figures[3] = {};  // value, time enabled, time running
  if (::read(fd, figures, sizeof(figures)) != static_cast<ssize_t>(sizeof(figures))) return false;
  if (figures[2] == 0) {
    *value = 0;
    return true;
  }
  *value = figures[1] == figures[2]
               ? figures[0]
               : static_cast<uint64_t>(static_cast<double>(figures[0]) * figures[1] / figures[2]);
  return true;
}

}  // namespace

Status HardwareCounters::Open(pid_t pid, std::unique_ptr<HardwareCounters>* out) {
  const std::vector<pid_t> threads = ThreadsOf(pid);
  if (threads.empty())
    return Status::IoError("no threads readable for process " + std::to_string(pid));
  std::unique_ptr<HardwareCounters> counters(new HardwareCounters());
  for (pid_t tid : threads) {
    const int instructions = OpenCounter(tid, PERF_COUNT_HW_INSTRUCTIONS);
    if (instructions < 0)
      return Status::IoError(std::string("perf_event_open: ") + std::strerror(errno));
    counters->instruction_fds_.push_back(instructions);
    const int cycles = OpenCounter(tid, PERF_COUNT_HW_CPU_CYCLES);
    if (cycles < 0) return Status::IoError(std::string("perf_event_open: ") + std::strerror(errno));
    counters->cycle_fds_.push_back(cycles);
  }
  *out = std::move(counters);
  return Status::Ok();
}

HardwareCounters::~HardwareCounters() {
  for (int fd : instruction_fds_) ::close(fd);
  for (int fd : cycle_fds_) ::close(fd);
}

Status HardwareCounters::Read(CounterReading* out) const {
  CounterReading total;
  for (size_t i = 0; i < instruction_fds_.size(); ++i) {
    uint64_t instructions = 0, cycles = 0;
    if (!ReadCounter(instruction_fds_[i], &instructions) || !ReadCounter(cycle_fds_[i], &cycles)) {
      return Status::IoError(std::string("reading a hardware counter: ") + std::strerror(errno));
    }
    total.instructions += instructions;
    total.cycles += cycles;
  }
  *out = total;
  return Status::Ok();
}

}  // namespace kvlab::harness
