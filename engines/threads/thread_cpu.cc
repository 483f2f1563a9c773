#include "engines/threads/thread_cpu.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace kvlab {

pid_t CurrentThreadId() { return static_cast<pid_t>(::syscall(SYS_gettid)); }

std::optional<ThreadCpuSeconds> ReadThreadCpu(pid_t tid) {
  const std::string path = "/proc/self/task/" + std::to_string(tid) + "/stat";
  std::FILE* file = std::fopen(path.c_str(), "r");
  if (file == nullptr) return std::nullopt;
  char line[1024];
  const size_t length = std::fread(line, 1, sizeof line - 1, file);
  std::fclose(file);
  line[length] = '\0';
  // The command name (field 2) may hold spaces and parentheses: the fields
  // that follow start after its last ')'. utime and stime are fields 14, 15.
  const char* rest = std::strrchr(line, ')');
  if (rest == nullptr) return std::nullopt;
  unsigned long long user_ticks = 0;
  unsigned long long system_ticks = 0;
  if (std::sscanf(rest + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &user_ticks,
                  &system_ticks) != 2) {
    return std::nullopt;
  }
  const double ticks_per_second = static_cast<double>(::sysconf(_SC_CLK_TCK));
  return ThreadCpuSeconds{static_cast<double>(user_ticks) / ticks_per_second,
                          static_cast<double>(system_ticks) / ticks_per_second};
}

std::string FormatCpuSeconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6f", seconds);
  return text;
}

}  // namespace kvlab
