#include "harness/measurement/machine_info.h"

#include <hiredis/hiredis.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>

#include "harness/measurement/cpu_usage.h"
#include "harness/measurement/irq_accounting.h"

namespace kvlab::harness {

MachineInfo CollectMachineInfo() {
  MachineInfo info;
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos)
        info.cpu_model = line.substr(line.find_first_not_of(' ', colon + 1));
      break;
    }
  }
  info.cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  info.usable_cores = UsableCoreCount({});
  utsname names{};
  if (uname(&names) == 0) {
    info.kernel = std::string(names.sysname) + " " + names.release;
    info.hostname = names.nodename;
  }
#if defined(__clang__)
  info.compiler = "clang " __clang_version__;
#elif defined(__GNUC__)
  info.compiler = "gcc " __VERSION__;
#endif
  info.hiredis_version = std::to_string(HIREDIS_MAJOR) + "." + std::to_string(HIREDIS_MINOR) + "." +
                         std::to_string(HIREDIS_PATCH);
  info.irq_time = ThisKernelIrqAccounting().Describe();
  return info;
}

}  // namespace kvlab::harness
