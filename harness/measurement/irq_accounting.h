// IrqAccounting: whether this kernel charges the time it spends in hard and
// soft interrupts to the task it interrupted, which decides what the
// disturbance watch may call busy (process_readings.h).
//
// With tick-based CPU accounting (CONFIG_IRQ_TIME_ACCOUNTING not set, the
// kernel's default) a tick that lands in irq or softirq is added to the
// interrupted task's stime as well as to /proc/stat's irq/softirq columns:
// the benchmark's own loopback traffic is then in its processes' ticks, and
// busy must count irq + softirq for busy minus ours to be others' work.
// With CONFIG_IRQ_TIME_ACCOUNTING=y interrupt time is kept out of task time,
// so busy must leave it out too. Read from the kernel's configuration
// (/proc/config.gz, else /boot/config-<release>); where neither is readable
// the kernel's default is assumed, and `source` says so.
//
// Thread safety: pure functions, and a reader whose result is computed once
// (thread-safe).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kvlab::harness {

struct IrqAccounting {
  bool charged_to_tasks = true;
  std::string source;  // where it was read ("/proc/config.gz"), or "assumed (...)"
  // For a result file: "charged to tasks (/proc/config.gz)".
  std::string Describe() const;
};

// The answer a kernel configuration's text gives; nullopt when it says
// nothing about CPU time accounting.
std::optional<bool> IrqTimeChargedToTasks(std::string_view kernel_config);

// This kernel's, read once.
const IrqAccounting& ThisKernelIrqAccounting();

}  // namespace kvlab::harness
