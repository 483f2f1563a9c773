"""Hardware counters of the server during a measurement: instructions and cycles.

`perf stat -e instructions,cycles -x, -p PID` attached around the load run
(every thread of the server, inherited), stopped with SIGINT, its CSV parsed.
Where perf_event_open is refused or the CPU exposes no counters (many VMs),
perf prints `<not supported>`: then the figures are None and the report says
n/a — never an estimate. Not thread-safe: one runner thread uses it.
"""

from __future__ import annotations

import functools
import shutil
import signal
import subprocess

EVENTS = ("instructions", "cycles")


def parse_perf_csv(text: str) -> dict[str, int | None]:
    """perf stat -x, output -> {event: count or None when not supported/counted}."""
    figures: dict[str, int | None] = {event: None for event in EVENTS}
    for line in text.splitlines():
        fields = line.split(",")
        if len(fields) < 3:
            continue
        value, event = fields[0], fields[2].split(":")[0]
        if event in figures:
            figures[event] = int(value) if value.strip().isdigit() else None
    return figures


@functools.lru_cache(maxsize=1)
def available() -> bool:
    """True where perf can count this machine's instructions (checked once)."""
    perf = shutil.which("perf")
    if not perf:
        return False
    try:
        done = subprocess.run([perf, "stat", "-x,", "-e", ",".join(EVENTS), "true"],
                              capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0 and parse_perf_csv(done.stderr)["instructions"] is not None


class ServerCounters:
    """Counts a process's instructions and cycles between __enter__ and __exit__."""

    def __init__(self, pid: int | None):
        self.pid = pid
        self.figures: dict[str, int | None] = {event: None for event in EVENTS}
        self._perf: subprocess.Popen | None = None

    def __enter__(self) -> "ServerCounters":
        if self.pid and available():
            self._perf = subprocess.Popen(
                ["perf", "stat", "-x,", "-e", ",".join(EVENTS), "-p", str(self.pid)],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        return self

    def __exit__(self, *exc) -> None:
        if self._perf is None:
            return
        self._perf.send_signal(signal.SIGINT)
        try:
            _, errors = self._perf.communicate(timeout=10)
            self.figures = parse_perf_csv(errors)
        except subprocess.TimeoutExpired:
            self._perf.kill()
            self._perf.communicate()
