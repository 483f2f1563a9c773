// WakeCost: the CPU time each sleep of one of our threads costs the
// measured CPUs without being charged to any process — the kernel's way
// out of idle and back into it, and the wake-up's interrupt work done in
// idle context. The disturbance watch takes the CPUs' busy time (all but
// idle, iowait and steal) less the CPU time of our processes as others'
// work; a benchmark that exchanges small requests puts its threads to
// sleep tens of thousands of times a second, and this uncharged time then
// reads as others' work (a loopback ping-pong between two of our threads:
// 0.025-0.044 cores over 1.5 s on a 2-CPU VM, at about 19,000 round
// trips a second). The watch subtracts cost x our sleeps in a window.
//
// The cost is a property of this kernel and machine, so it is measured at
// run time (CalibrateWakeCost) and recorded with the results, never
// written in as a constant.
//
// Thread safety: CalibrateWakeCost starts and joins its own threads; call
// it from one thread at a time, with nothing else of ours running on the
// CPUs it measures.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kvlab::harness {

struct WakeCost {
  double seconds_per_sleep = 0;    // >= 0; what the watch subtracts per sleep of ours
  int windows = 0;                 // clean calibration windows measured (0: not measured)
  int rejected = 0;                // windows left out: a process created, or others busy
  int rejected_for_processes = 0;  // of those, the ones in which a process was created
  int64_t sleeps = 0;              // our sleeps in the window chosen
  double others_cores = 0;         // other processes' CPU in that window (left out)
  std::string Describe() const;    // "1.02 us per sleep (3 windows, 2,841 sleeps)"
};

// One calibration window's figures -> the cost per sleep: the CPUs' busy
// seconds less ours and less the other processes' (each process's own CPU
// clock), per sleep of ours; 0 when there were no sleeps or the rest is
// negative. Pure: the known-answer tests call it.
double CostPerSleep(double busy_seconds, double own_seconds, double others_seconds, int64_t sleeps);

// Measures the cost on `cpus` (empty: not measured, cost 0): two threads,
// pinned to the first two of them (both to the only one), pass a byte back
// and forth over two pipes for `window_ms`, `windows` times. Others' work
// only adds to a window's figure, so the least of the windows' figures is
// the cost; other processes' CPU time in a window (a scan of /proc) is left
// out, so a CPU burner running beside the calibration does not make the
// cost large enough to hide it later. Two kinds of window are left out and
// another is tried, at most 3 x `windows` in all: one in which /proc/stat's
// `processes` moved (a process that starts and ends inside a window
// escapes the scan: a busy test suite starts dozens a second and read
// 15.7 us a sleep against 0.6 quiet), and one in which other processes
// used more than the watch's own threshold (kDefaultDisturbedAboveCores):
// with the CPUs kept busy our sleeps take no CPU through idle, and that
// low figure (0.126 us against 1.57 quiet, beside a test suite), kept for
// the boot, let a later quiet run read its own wake-ups as others' work
// (0.08-0.10 cores: most of a default run's client-sweep points disturbed
// and run again); after `windows` windows of busy CPUs it stops there.
// With no clean window the cost is 0 and `windows` 0:
// nothing is subtracted, which can only call more windows disturbed.
// /proc/stat counts idle time in 10 ms ticks and the cost is a few
// hundredths of a core: windows of a second resolve it to about half.
WakeCost CalibrateWakeCost(const std::vector<int>& cpus, int window_ms = 1000, int windows = 3);

// The CPU seconds, each from its own CPU clock, of every process but this
// one (a scan of /proc), by pid.
std::vector<std::pair<pid_t, double>> OtherProcessClocks();
// What the processes present at both readings used between them (sorted
// by pid, as OtherProcessClocks returns them); a process that started or
// ended in between is missed (a short-lived job's time is lost).
double CpuSecondsBetween(const std::vector<std::pair<pid_t, double>>& before,
                         const std::vector<std::pair<pid_t, double>>& after);

}  // namespace kvlab::harness
