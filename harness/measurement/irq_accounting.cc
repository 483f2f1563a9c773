#include "harness/measurement/irq_accounting.h"

#include <sys/utsname.h>
#include <zlib.h>

#include <fstream>
#include <iterator>

namespace kvlab::harness {
namespace {

std::string ReadGzipText(const char* path) {
  gzFile file = gzopen(path, "rb");
  if (file == nullptr) return "";
  std::string text;
  char buffer[1 << 14];
  int got;
  while ((got = gzread(file, buffer, sizeof(buffer))) > 0) text.append(buffer, got);
  gzclose(file);
  return text;
}

bool HasLine(std::string_view text, std::string_view line) {
  for (size_t at = text.find(line); at != std::string_view::npos; at = text.find(line, at + 1)) {
    const bool starts = at == 0 || text[at - 1] == '\n';
    const size_t end = at + line.size();
    if (starts && (end == text.size() || text[end] == '\n')) return true;
  }
  return false;
}

IrqAccounting Read() {
  const std::string proc = ReadGzipText("/proc/config.gz");
  if (const std::optional<bool> charged = IrqTimeChargedToTasks(proc)) {
    return {*charged, "/proc/config.gz"};
  }
  utsname names{};
  if (uname(&names) == 0) {
    const std::string path = std::string("/boot/config-") + names.release;
    std::ifstream file(path);
    const std::string text{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
    if (const std::optional<bool> charged = IrqTimeChargedToTasks(text)) return {*charged, path};
  }
  return {true, "assumed (no kernel configuration readable; the kernel's default)"};
}

}  // namespace

std::string IrqAccounting::Describe() const {
  return std::string(charged_to_tasks ? "charged to tasks" : "kept apart") + " (" + source + ")";
}

std::optional<bool> IrqTimeChargedToTasks(std::string_view kernel_config) {
  if (HasLine(kernel_config, "CONFIG_IRQ_TIME_ACCOUNTING=y")) return false;
  if (HasLine(kernel_config, "# CONFIG_IRQ_TIME_ACCOUNTING is not set") ||
      HasLine(kernel_config, "CONFIG_TICK_CPU_ACCOUNTING=y")) {
    return true;
  }
  return std::nullopt;
}

const IrqAccounting& ThisKernelIrqAccounting() {
  static const IrqAccounting accounting = Read();
  return accounting;
}

}  // namespace kvlab::harness
