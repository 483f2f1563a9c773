"""How fast the measured CPUs are right now: a probe run between an alternation's rounds.

Why: on a shared VM the host itself changes speed for minutes at a time (another tenant
on the same cache and memory, a frequency change) without any steal or foreign CPU this
machine can see. One default run served the same SET pair at 155k/s for eight rounds and
at 75k/s for the next twelve, with one core of server CPU throughout; the two engines did
not slow alike (one lost 35%, the other 52%), so their ratio moved from 3.8 to 5.1 with
the host, and no number of starts could bring its interval to the target. A probe that
does the same fixed work before and after every round gives each round a host speed that
does not come from the servers being compared (measures.host_sensitivity fits each ratio
against it).

The work: a fresh 64 MiB buffer, written once (its page faults timed: `fault_us`, the
microseconds a 4 KiB page took), then independent random reads over it and a short
arithmetic loop, in numpy so that the interpreter's own overhead is a small part of the
time. Fresh on every call because the servers' memory is fresh on every start: a buffer
kept for the run would keep the backing its pages got once, while the state that moved
the servers in one run (both sides of a million-key SET ratio 40-65% apart between
minutes, no steal) is plausibly in how newly allocated memory is backed. The probe's
speed is the median of the read timings, in millions of reads per second.

Not thread-safe: one alternation owns one probe. It pins the calling thread to the
measured CPUs while it runs and restores the thread's CPU set after.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterable

import numpy as np

# 64 MiB of float64: larger than the L3 share of the 2-8 core VMs kvlab runs on.
PROBE_BYTES = 64 << 20
# Random reads per repeat: a few to 20 ms, depending on the machine.
PROBE_READS = 1 << 18
PROBE_REPEATS = 3
PAGE_BYTES = 4096


class HostProbe:
    """Times a fixed memory-and-arithmetic workload on `cpus` (None: where the caller
    runs). `clock` is injectable for tests. After speed(), `fault_us` holds the last
    call's microseconds per page fault (NaN before the first)."""

    def __init__(self, cpus: Iterable[int] | None = None, repeats: int = PROBE_REPEATS,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self.cpus = sorted(set(cpus)) if cpus else None
        self.repeats = max(1, repeats)
        self._clock = clock
        generator = np.random.default_rng(20261206)
        self._indexes = generator.integers(0, PROBE_BYTES // 8, PROBE_READS)
        self._numbers = np.arange(PROBE_READS, dtype=np.float64)
        self.fault_us = math.nan

    def _once(self, buffer: np.ndarray) -> float:
        begin = self._clock()
        total = float(buffer[self._indexes].sum())
        total += float(np.sqrt(self._numbers * 1.0001 + 1.0).sum())
        elapsed = self._clock() - begin
        if not math.isfinite(total) or elapsed <= 0:
            return math.nan
        return PROBE_READS / elapsed / 1e6

    def _measure(self) -> list[float]:
        begin = self._clock()
        buffer = np.empty(PROBE_BYTES // 8)
        buffer.fill(1.0)  # every page faulted in now, fresh
        faulted = self._clock() - begin
        self.fault_us = faulted / (PROBE_BYTES / PAGE_BYTES) * 1e6 if faulted > 0 else math.nan
        return sorted(self._once(buffer) for _ in range(self.repeats))

    def speed(self) -> float:
        """Millions of probe reads per second now: the median of `repeats` timings over a
        fresh buffer; NaN when the clock did not move."""
        previous = None
        if self.cpus is not None and hasattr(os, "sched_setaffinity"):
            try:
                previous = os.sched_getaffinity(0)
                os.sched_setaffinity(0, self.cpus)
            except OSError:  # a CPU set this process may not use: probe where it is
                previous = None
        try:
            timings = self._measure()
        finally:
            if previous is not None:
                os.sched_setaffinity(0, previous)
        finite = [t for t in timings if math.isfinite(t)]
        return finite[len(finite) // 2] if finite else math.nan
