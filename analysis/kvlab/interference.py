"""Who else used the measured CPUs: interference detection for one measurement.

A `Probe` is read before and after a measurement. From /proc/stat it takes the
measured CPUs' busy time (user + nice + system: what processes ran; irq and
softirq are left out because the benchmark's own network traffic lands there)
and their steal time; from /proc it takes the CPU time of our own processes
(every resident server, all threads; the load generator and anything else the
runner waited for, via RUSAGE_CHILDREN; the runner itself). Foreign CPU is the
difference: time the measured CPUs spent on somebody else. The load average
cannot say this: the benchmark's own server and client push it to about 2 on
a 2-core machine.

It also reads the measured server's context switches (voluntary and
involuntary, summed over its threads), a cost per operation that survives a
noisy neighbour far better than ops/s.

/proc/stat counts in clock ticks (usually 10 ms), so figures over a
measurement of about a second are good to a few hundredths of a core.
Not thread-safe: one runner thread uses it.
"""

from __future__ import annotations

import dataclasses
import os
import resource
import time
from pathlib import Path

TICKS_PER_S = os.sysconf("SC_CLK_TCK")


def cpu_ticks(cpus) -> tuple[int, int]:
    """(busy, steal) clock ticks summed over `cpus`, from /proc/stat."""
    wanted = {f"cpu{c}" for c in cpus}
    busy = steal = 0
    with open("/proc/stat") as handle:
        for line in handle:
            fields = line.split()
            if fields and fields[0] in wanted:
                values = [int(v) for v in fields[1:]]
                busy += values[0] + values[1] + values[2]  # user, nice, system
                steal += values[7] if len(values) > 7 else 0
    return busy, steal


def process_cpu_seconds(pid: int) -> float:
    """utime + stime of a whole process (all threads, exited ones included)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS_PER_S


def context_switches(pid: int) -> int:
    """Voluntary + involuntary context switches summed over a process's threads."""
    total = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0
    for task in tasks:
        try:
            for line in Path(f"/proc/{pid}/task/{task}/status").read_text().splitlines():
                if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                    total += int(line.split()[1])
        except (OSError, ValueError):
            continue
    return total


def _own_seconds() -> float:
    self_usage = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (self_usage.ru_utime + self_usage.ru_stime + children.ru_utime
            + children.ru_stime)


@dataclasses.dataclass(frozen=True)
class Interference:
    seconds: float           # wall time between the two readings
    foreign_cores: float     # cores' worth of CPU others used on the measured CPUs
    steal_cores: float       # cores' worth the hypervisor took from the measured CPUs
    server_cpu_seconds: float
    server_context_switches: int

    def disturbed(self, threshold_cores: float) -> bool:
        return self.foreign_cores > threshold_cores or self.steal_cores > threshold_cores


class Probe:
    """Readings around one measurement. `own_pids`: every process of ours that may run on
    the measured CPUs (the resident servers); `server_pid`: the one being measured."""

    def __init__(self, cpus, own_pids, server_pid: int | None):
        self.cpus = tuple(cpus)
        self.own_pids = tuple(own_pids)
        self.server_pid = server_pid

    def _read(self):
        busy, steal = cpu_ticks(self.cpus)
        own = _own_seconds() + sum(process_cpu_seconds(p) for p in self.own_pids)
        server = process_cpu_seconds(self.server_pid) if self.server_pid else 0.0
        switches = context_switches(self.server_pid) if self.server_pid else 0
        return time.monotonic(), busy, steal, own, server, switches

    def __enter__(self) -> "Probe":
        self._before = self._read()
        return self

    def __exit__(self, *exc) -> None:
        self._after = self._read()

    def result(self) -> Interference:
        (t0, busy0, steal0, own0, server0, sw0) = self._before
        (t1, busy1, steal1, own1, server1, sw1) = self._after
        wall = max(t1 - t0, 1e-9)
        foreign = (busy1 - busy0) / TICKS_PER_S - (own1 - own0)
        return Interference(
            seconds=wall, foreign_cores=max(0.0, foreign) / wall,
            steal_cores=(steal1 - steal0) / TICKS_PER_S / wall,
            server_cpu_seconds=server1 - server0, server_context_switches=sw1 - sw0)
