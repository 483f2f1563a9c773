"""Per-operation cost of a running server: system calls per operation and bytes per key.

Two measurements the runner can take of any RESP server it started (kvlab-server or
redis-server), so that the two are compared by what they cost, not only by ops/s:

- `syscalls_per_op(pid, load)`: attaches `strace -c -f` to the server, runs `load`
  (a callable that drives the server and returns how many operations it completed),
  detaches, and divides the system calls the server made by those operations.
  strace slows the traced process several-fold, so the figure is a count, not a
  speed: measure throughput in a separate, untraced run.
- `bytes_per_key(info_after, keys, info_before=...)`: the growth of INFO's
  `used_memory` (allocator level in both servers) or `used_memory_rss` per key.

Not thread-safe: one caller per traced server.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

# strace -c's table: "% time  seconds  usecs/call  calls  errors  syscall"; the
# errors column is blank when a call never failed.
_SUMMARY_ROW = re.compile(
    r"^\s*(?P<percent>[\d.]+)\s+(?P<seconds>[\d.]+)\s+(?P<usecs>\d+)\s+(?P<calls>\d+)"
    r"\s+(?:(?P<errors>\d+)\s+)?(?P<name>\S+)\s*$")
ATTACH_TIMEOUT_S = 10.0


class SyscallCountError(Exception):
    """strace could not attach or its summary could not be read; the message says why."""


@dataclass(frozen=True)
class SyscallCount:
    """System calls a server made while a load ran, and the operations that load did."""

    operations: int
    calls_by_name: dict[str, int] = field(default_factory=dict)
    errors_by_name: dict[str, int] = field(default_factory=dict)

    @property
    def total_calls(self) -> int:
        return sum(self.calls_by_name.values())

    @property
    def per_op(self) -> float:
        """System calls per operation (all names together)."""
        if self.operations <= 0:
            raise ValueError("the load reported no operations")
        return self.total_calls / self.operations

    def per_op_by_name(self) -> dict[str, float]:
        if self.operations <= 0:
            raise ValueError("the load reported no operations")
        return {name: calls / self.operations for name, calls in self.calls_by_name.items()}


def parse_strace_summary(text: str) -> tuple[dict[str, int], dict[str, int]]:
    """Calls and errors per system call name from `strace -c` output (its `total` row
    is left out). Raises SyscallCountError when the text holds no summary table."""
    calls: dict[str, int] = {}
    errors: dict[str, int] = {}
    seen_table = False
    for line in text.splitlines():
        if line.lstrip().startswith("% time"):
            seen_table = True
            continue
        if not seen_table:
            continue
        row = _SUMMARY_ROW.match(line)
        if row is None or row["name"] == "total":
            continue
        name = row["name"]
        calls[name] = calls.get(name, 0) + int(row["calls"])
        if row["errors"]:
            errors[name] = errors.get(name, 0) + int(row["errors"])
    if not seen_table:
        raise SyscallCountError("no strace -c summary table in the output:\n" + text[-2000:])
    return calls, errors


def syscalls_per_op(pid: int, load: Callable[[], int], *, strace: str | None = None,
                    cpu: int | None = None) -> SyscallCount:
    """Counts the system calls of process `pid` and all its threads while `load()` runs.

    `load` drives the server and returns the number of operations it completed. `cpu`
    pins strace itself (taskset) so it stays off the server's and the client's cores.
    Returns a SyscallCount; `.per_op` is the headline figure. Raises SyscallCountError
    when strace is missing, cannot attach (ptrace not permitted) or prints no summary.
    """
    binary = strace or shutil.which("strace")
    if binary is None:
        raise SyscallCountError("strace is not installed (apt-get install strace)")
    with tempfile.TemporaryDirectory(prefix="kvlab-strace-") as scratch:
        summary_path = Path(scratch) / "summary.txt"
        command = [binary, "-c", "-f", "-p", str(pid), "-o", str(summary_path)]
        if cpu is not None:
            command = ["taskset", "-c", str(cpu)] + command
        tracer = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  text=True)
        try:
            _wait_until_attached(tracer, pid)
            operations = int(load())
        finally:
            # SIGINT makes strace detach and write its summary.
            tracer.send_signal(signal.SIGINT)
            _, stderr = tracer.communicate(timeout=ATTACH_TIMEOUT_S)
        text = summary_path.read_text() if summary_path.exists() else ""
        if not text:
            raise SyscallCountError(f"strace wrote no summary (exit {tracer.returncode}): "
                                    f"{stderr.strip()}")
    calls, errors = parse_strace_summary(text)
    return SyscallCount(operations=operations, calls_by_name=calls, errors_by_name=errors)


def _wait_until_attached(tracer: subprocess.Popen, pid: int) -> None:
    """Returns once every thread of `pid` is traced (its TracerPid is strace's)."""
    deadline = time.monotonic() + ATTACH_TIMEOUT_S
    tasks = Path(f"/proc/{pid}/task")
    while time.monotonic() < deadline:
        if tracer.poll() is not None:
            raise SyscallCountError(f"strace exited at once: {tracer.stderr.read().strip()}")
        try:
            tracers = {_tracer_pid(task) for task in tasks.iterdir()}
        except FileNotFoundError as gone:
            raise SyscallCountError(f"process {pid} is gone") from gone
        if tracers == {tracer.pid}:
            return
        time.sleep(0.01)
    raise SyscallCountError(f"strace did not attach to every thread of {pid} within "
                            f"{ATTACH_TIMEOUT_S:.0f} s")


def _tracer_pid(task: Path) -> int:
    for line in (task / "status").read_text().splitlines():
        if line.startswith("TracerPid:"):
            return int(line.split()[1])
    return 0


def parse_info(text: str) -> dict[str, str]:
    """INFO's reply as one flat mapping of field name to value (sections merged;
    a name repeated in two sections keeps the later value). Accepts CRLF or LF."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, colon, value = line.partition(":")
        if colon:
            fields[name] = value
    return fields


def bytes_per_key(info_after: str, keys: int, *, info_before: str | None = None,
                  field_name: str = "used_memory") -> float:
    """Bytes each key costs by INFO's `field_name` (used_memory: what the allocator
    handed out; used_memory_rss: resident pages): the field's value in `info_after`,
    less its value in `info_before` (the same server empty) when given, divided by
    `keys`. Raises ValueError when keys <= 0 or the field is missing."""
    if keys <= 0:
        raise ValueError(f"keys must be positive, not {keys}")
    after = parse_info(info_after)
    if field_name not in after:
        raise ValueError(f"INFO has no {field_name} field")
    used = int(after[field_name])
    if info_before is not None:
        before = parse_info(info_before)
        if field_name not in before:
            raise ValueError(f"the INFO before loading has no {field_name} field")
        used -= int(before[field_name])
    return used / keys


def rss_bytes(pid: int) -> int:
    """The resident set of process `pid` from /proc/<pid>/statm (the cross-check for
    INFO's figures, readable for any server)."""
    resident_pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
    return resident_pages * os.sysconf("SC_PAGE_SIZE")
