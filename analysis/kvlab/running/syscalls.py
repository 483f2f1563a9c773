"""Per-operation cost of a running server: system calls per operation and bytes per key.

Two measurements the runner can take of any RESP server it started (kvlab-server or
redis-server), so that the two are compared by what they cost, not only by ops/s:

- `syscalls_per_op(pid, load)`: counts the system calls the server (all its threads)
  makes while `load` runs (a callable that drives the server and returns how many
  operations it completed), and divides them by those operations. Two counters:
  - "perf" (preferred): the kernel's syscall tracepoints, counted in the kernel by
    `perf stat` (raw_syscalls:sys_enter for the total, syscalls:sys_enter_<name> for
    the calls a server makes; the rest is "other"). It adds a little to each call and
    never stops the server, which keeps most of its untraced speed (on the 2-core
    development VM, redis-server at P1 lost about a tenth; under strace it ran 5-15x
    slower), so the count is of nearly the regime the throughput rounds measure.
  - "strace" (the fallback where perf cannot count tracepoints): `strace -c -f`. It
    stops the server at every call and slows it several-fold, and a slowed server
    finds more work per wake-up: more requests per epoll_wait, and reads that find
    data where a fast server's find none. At P1 it under-counts, by as much as half
    (measure both on your machine: `method=`). Its counts describe a slow server.
  The count says which counter made it (`SyscallCount.method`).
- `bytes_per_key(info_after, keys, info_before=...)`: the growth of INFO's
  `used_memory` (allocator level in both servers) or `used_memory_rss` per key.

Not thread-safe: one caller per traced server.
"""

from __future__ import annotations

import os
import re
import select
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


# The calls an event-loop server makes on its hot path, counted one by one by the perf
# counter (anything else is counted in the total and shown as "other").
SERVER_SYSCALLS = ("read", "write", "readv", "writev", "recvfrom", "sendto", "recvmsg",
                   "sendmsg", "epoll_wait", "epoll_pwait", "epoll_ctl", "poll", "select",
                   "futex", "accept4", "close", "sched_yield", "ioctl")
TRACEPOINTS = Path("/sys/kernel/tracing/events")
TOTAL_EVENT = "raw_syscalls:sys_enter"  # every system call, whatever its name
OTHER = "other"


class SyscallCountError(Exception):
    """Neither counter could count the server's calls; the message says why."""


@dataclass(frozen=True)
class SyscallCount:
    """System calls a server made while a load ran, and the operations that load did."""

    operations: int
    calls_by_name: dict[str, int] = field(default_factory=dict)
    errors_by_name: dict[str, int] = field(default_factory=dict)  # strace only
    method: str = "strace"  # which counter: "perf" (tracepoints) or "strace"

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


def syscalls_per_op(pid: int, load: Callable[[], int], *, method: str = "auto",
                    names: tuple[str, ...] = SERVER_SYSCALLS, strace: str | None = None,
                    perf: str | None = None, cpu: int | None = None) -> SyscallCount:
    """Counts the system calls of process `pid` and all its threads while `load()` runs.

    `load` drives the server and returns the number of operations it completed.
    `method`: "perf", "strace", or "auto" (perf where it can count tracepoints, else
    strace). `names`: the calls the perf counter counts by name. `cpu` pins the counter
    itself (taskset) so it stays off the server's and the client's cores. Returns a
    SyscallCount; `.per_op` is the headline figure. Raises SyscallCountError when the
    chosen counter cannot count (missing, not permitted, no summary).
    """
    if method not in ("auto", "perf", "strace"):
        raise ValueError(f"method must be auto, perf or strace, not {method!r}")
    if method == "auto":
        method = "perf" if perf_can_count(perf) else "strace"
    if method == "perf":
        return _count_with_perf(pid, load, names, perf, cpu)
    return _count_with_strace(pid, load, strace, cpu)


def perf_can_count(perf: str | None = None) -> bool:
    """Whether `perf` is installed and the kernel's syscall tracepoints are readable
    (tracefs mounted, and this user may open them)."""
    binary = perf or shutil.which("perf")
    if binary is None or not (TRACEPOINTS / TOTAL_EVENT.replace(":", "/")).is_dir():
        return False
    probe = subprocess.run([binary, "stat", "-x", ",", "-e", TOTAL_EVENT, "--", "true"],
                           capture_output=True, text=True)
    return probe.returncode == 0 and TOTAL_EVENT in probe.stderr


def count_named_calls(pid: int, load: Callable[[], int], names: tuple[str, ...],
                      perf: str | None = None, cpu: int | None = None) -> SyscallCount:
    """Only the calls `names` of process `pid` (all its threads) while `load()` runs, by
    their tracepoints alone (perf): a task with a syscall tracepoint enabled takes the
    slow path on every call, but no other call is an event. Cheaper than
    syscalls_per_op, which counts every call (raw_syscalls:sys_enter) too. A name whose
    tracepoint is missing counts 0; SyscallCountError when perf cannot count any."""
    if not perf_can_count(perf):
        raise SyscallCountError("perf cannot count the kernel's syscall tracepoints here "
                                "(not installed, tracefs not mounted, or not permitted)")
    return _count_with_perf(pid, load, names, perf, cpu, total=False)


def _count_with_perf(pid: int, load: Callable[[], int], names: tuple[str, ...],
                     perf: str | None, cpu: int | None, total: bool = True) -> SyscallCount:
    """perf stat attached to every thread of `pid`, its events enabled only while `load`
    runs (perf's control fifo, acknowledged both ways); with `total`, every call counted
    too (the rest shown as "other")."""
    binary = perf or shutil.which("perf")
    if binary is None:
        raise SyscallCountError("perf is not installed (apt-get install linux-perf)")
    counted = [name for name in names
               if (TRACEPOINTS / "syscalls" / f"sys_enter_{name}").is_dir()]
    if not counted and not total:
        raise SyscallCountError(f"no tracepoint for {', '.join(names)} under {TRACEPOINTS}")
    events = ([TOTAL_EVENT] if total else []) + [f"syscalls:sys_enter_{n}" for n in counted]
    with tempfile.TemporaryDirectory(prefix="kvlab-perf-") as scratch:
        control, ack, output = (Path(scratch) / name for name in ("control", "ack", "out.csv"))
        os.mkfifo(control)
        os.mkfifo(ack)
        command = [binary, "stat", "-x", ",", "-D", "-1",
                   "--control", f"fifo:{control},{ack}", "-o", str(output), "-p", str(pid)]
        for event in events:
            command += ["-e", event]
        counter = subprocess.Popen(_pinned(command, cpu), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                   text=True)
        acks = os.open(ack, os.O_RDWR)  # read-write: never an end-of-file before perf writes
        commands = None
        try:
            commands = _open_control(control, counter)
            _command(commands, acks, "enable", counter)
            operations = int(load())
            _command(commands, acks, "disable", counter)
        finally:
            if commands is not None:
                os.close(commands)
            os.close(acks)
            counter.send_signal(signal.SIGINT)
            try:
                _, stderr = counter.communicate(timeout=ATTACH_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                counter.kill()
                _, stderr = counter.communicate()
        text = output.read_text() if output.exists() else ""
    calls = parse_perf_counts(text, stderr, required=events[0])
    every = calls.pop(TOTAL_EVENT) if total else 0
    by_name = {event.removeprefix("syscalls:sys_enter_"): count
               for event, count in calls.items() if count > 0}
    other = every - sum(by_name.values())
    if other > 0:
        by_name[OTHER] = other
    return SyscallCount(operations=operations, calls_by_name=by_name, method="perf")


def _pinned(command: list[str], cpu: int | None) -> list[str]:
    """`command`, run on CPU `cpu` (taskset) when one is given."""
    return command if cpu is None else ["taskset", "-c", str(cpu)] + command


def _open_control(control: Path, counter: subprocess.Popen) -> int:
    """The write end of perf's control fifo, once perf has opened its read end."""
    deadline = time.monotonic() + ATTACH_TIMEOUT_S
    while True:
        try:  # a non-blocking writer fails with ENXIO until a reader has the fifo open
            return os.open(control, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            _fail_if_gone(counter)
            if time.monotonic() > deadline:
                raise SyscallCountError("perf did not open its control fifo") from None
            time.sleep(0.01)


def _command(commands: int, acks: int, word: str, counter: subprocess.Popen) -> None:
    """Sends perf one control command and waits for its acknowledgement."""
    os.write(commands, (word + "\n").encode())
    deadline = time.monotonic() + ATTACH_TIMEOUT_S
    reply = b""
    while b"\n" not in reply:  # perf writes "ack\n" and a NUL
        ready, _, _ = select.select([acks], [], [], 0.1)
        if ready:
            reply += os.read(acks, 64)
            continue
        _fail_if_gone(counter)
        if time.monotonic() > deadline:
            raise SyscallCountError(f"perf did not acknowledge {word!r}")
    if reply.replace(b"\0", b"").strip() != b"ack":
        raise SyscallCountError(f"perf did not acknowledge {word!r} (got {reply!r})")


def _fail_if_gone(counter: subprocess.Popen) -> None:
    if counter.poll() is not None:
        raise SyscallCountError(f"perf exited (status {counter.returncode}): "
                                f"{counter.stderr.read().strip()}")


def parse_perf_counts(text: str, stderr: str = "", required: str = TOTAL_EVENT) -> dict[str, int]:
    """Counts per event from `perf stat -x ,` output ("<not counted>" is 0). Raises
    SyscallCountError when the `required` event (the total) is missing: perf could not
    count."""
    counts: dict[str, int] = {}
    for line in text.splitlines():
        fields = line.split(",")
        if line.startswith("#") or len(fields) < 3 or not fields[2]:
            continue
        value = fields[0].strip()
        counts[fields[2]] = int(value) if value.isdigit() else 0
    if required not in counts:
        raise SyscallCountError(f"perf stat printed no count for {required}: "
                                + (stderr.strip() or text.strip())[-2000:])
    return counts


def _count_with_strace(pid: int, load: Callable[[], int], strace: str | None,
                       cpu: int | None) -> SyscallCount:
    """strace -c -f: stops the server at every call (see the module's note)."""
    binary = strace or shutil.which("strace")
    if binary is None:
        raise SyscallCountError("strace is not installed (apt-get install strace)")
    with tempfile.TemporaryDirectory(prefix="kvlab-strace-") as scratch:
        summary_path = Path(scratch) / "summary.txt"
        command = [binary, "-c", "-f", "-p", str(pid), "-o", str(summary_path)]
        tracer = subprocess.Popen(_pinned(command, cpu), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
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
    return SyscallCount(operations=operations, calls_by_name=calls, errors_by_name=errors,
                        method="strace")


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
