// MachineInfo: where a run happened (CPU model, cores, kernel, compiler,
// hiredis version), recorded next to the numbers so that a result file
// explains itself. Thread-safe (reads /proc and uname).
#pragma once

#include <string>

namespace kvlab::harness {

struct MachineInfo {
  std::string cpu_model;
  int cores = 0;         // online CPUs
  int usable_cores = 0;  // in this process's affinity mask
  std::string kernel;    // uname -sr
  std::string hostname;
  std::string compiler;
  std::string hiredis_version;
  std::string irq_time;  // IrqAccounting::Describe(): what the disturbance watch counts busy
};

MachineInfo CollectMachineInfo();

}  // namespace kvlab::harness
