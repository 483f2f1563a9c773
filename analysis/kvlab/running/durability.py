"""The cost of durability, per point: fsyncs and log bytes per operation of a server row
that keeps an append-only log (`appendfsync` in its [[server]] row; experiment.py).

Such a row is started with `--appendonly yes --appendfsync POLICY --dir FOLDER`, FOLDER
its own inside the run folder (`aof/NAME/`, emptied at every start: servers.py), which
must be on a real disk: fsync on tmpfs writes nothing, so `check_log_folders` refuses a
folder there (naming the row) unless the row says `log_on_tmpfs = true`; meta.json keeps
each folder's device and filesystem (`log_folders`).

Per measurement the runner reads the server before and after kvlab-load's run
(`LogReading`) and writes three columns into points.csv (`COLUMNS`):

- `aof_fsyncs_per_op`: fsyncs over the operations the server processed in between.
  kvlab-server counts its own (INFO persistence `aof_fsyncs`); redis-server counts none
  in INFO, so its fdatasync and fsync calls (every thread: under everysec a background
  thread makes them) are counted by their kernel tracepoints with perf while the point
  runs (syscalls.count_named_calls; a task with a syscall tracepoint on takes the slow
  path on every call, a cost on redis-server's side alone that was not resolved on the
  development VM: docs/server.md; the column `aof_fsync_counter` names the counter:
  `info` or `perf`).
- `aof_bytes_per_op`: the growth of INFO persistence `aof_current_size` (both servers)
  over the same operations.
- `aof_fsyncs`, `aof_bytes`, `server_commands`: the counts those two divide.

The operations are INFO stats `total_commands_processed`'s growth over the whole
kvlab-load run, warm-up included (an INCRBY point's keys are set to 0 by a kvlab-load run
of their own before the first reading: server_starter.zero_counters), and kvlab-load's few
commands of its own (INFO at a window's edges) with them, which lower a figure by a few
percent at most at the smallest points (an fsync-bound P1 window of a few hundred writes).
A figure is therefore per command processed, not per window.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Callable, Iterable

from ..tracking import machine
from . import syscalls
from ..schema.specs import ServerSpec
from .servers import info_unix

COLUMNS = ("aof_fsyncs_per_op", "aof_bytes_per_op", "aof_fsync_counter", "aof_fsyncs",
           "aof_bytes", "server_commands")
# redis-server's fsync calls (redis_fsync is fdatasync on Linux; fsync where it is not).
FSYNC_CALLS = ("fdatasync", "fsync")
LOG_FOLDERS = "aof"  # inside the run folder: one folder per logged server row


class LogFolderError(Exception):
    """A log folder that would not measure fsync (tmpfs); the message names the row."""


def log_root(run_dir: Path) -> Path:
    return run_dir / LOG_FOLDERS


def log_folder(root: Path, server: str) -> Path:
    """The folder of server row `server`'s log (an A/A copy has its own)."""
    return root / server


def check_log_folders(servers: Iterable[ServerSpec], root: Path) -> dict[str, dict[str, str]]:
    """Where each logged row's folder is stored (machine.folder_disk), by row name. Raises
    LogFolderError naming the first row whose folder is on tmpfs (or ramfs) unless it says
    log_on_tmpfs = true."""
    disks = {}
    for spec in servers:
        if not spec.appendfsync:
            continue
        disk = machine.folder_disk(log_folder(root, spec.name))
        if disk["fstype"] in machine.MEMORY_FILESYSTEMS and not spec.log_on_tmpfs:
            raise LogFolderError(
                f"server {spec.name!r}: its log folder {disk['folder']} is on "
                f"{disk['fstype']} ({disk['mount_point']}), where fsync writes nothing to "
                f"a disk: run with the results folder on a real disk (kvlab run --out DIR), or say "
                f"log_on_tmpfs = true in the row to measure it there anyway")
        disks[spec.name] = disk
    return disks


@dataclasses.dataclass(frozen=True)
class LogReading:
    """One server's log counters at one instant (INFO persistence and stats)."""
    commands: int          # total_commands_processed
    log_bytes: int         # aof_current_size
    fsyncs: int | None     # aof_fsyncs (kvlab-server); None where INFO has none

    @staticmethod
    def read(control: str | tuple[str, int]) -> "LogReading | None":
        """The reading of the server at `control`; None when INFO does not answer or the
        server keeps no log (aof_enabled is not 1)."""
        persistence = info_unix(control, "persistence")
        stats = info_unix(control, "stats")
        try:
            if persistence.get("aof_enabled") != "1":
                return None
            fsyncs = persistence.get("aof_fsyncs")
            return LogReading(commands=int(stats["total_commands_processed"]),
                              log_bytes=int(persistence["aof_current_size"]),
                              fsyncs=int(fsyncs) if fsyncs is not None else None)
        except (KeyError, ValueError):
            return None


def per_op(before: LogReading | None, after: LogReading | None,
           counted_fsyncs: int | None = None) -> dict[str, str]:
    """The columns of one measurement: fsyncs and log bytes per operation between two
    readings. `counted_fsyncs`: the fsyncs perf counted (redis-server), used where the
    readings have none. Blank cells for what was not read."""
    if before is None or after is None or after.commands <= before.commands:
        return {name: "" for name in COLUMNS}
    operations = after.commands - before.commands
    if after.fsyncs is not None and before.fsyncs is not None:
        fsyncs, counter = after.fsyncs - before.fsyncs, "info"
    elif counted_fsyncs is not None:
        fsyncs, counter = counted_fsyncs, "perf"
    else:
        fsyncs, counter = None, ""
    grown = after.log_bytes - before.log_bytes
    return {"aof_fsyncs_per_op": "" if fsyncs is None else f"{fsyncs / operations:.6f}",
            "aof_bytes_per_op": f"{grown / operations:.2f}", "aof_fsync_counter": counter,
            "aof_fsyncs": "" if fsyncs is None else str(fsyncs), "aof_bytes": str(grown),
            "server_commands": str(operations)}


def measure(control: str | tuple[str, int], pid: int | None, load: Callable[[], None],
            problems: list[str], label: str) -> dict[str, str]:
    """Runs `load` between two readings of the server at `control` and returns per_op's
    columns. Where INFO counts no fsyncs (redis-server) the fsync calls of process `pid`
    are counted by perf while `load` runs; where perf cannot count, `load` runs alone and
    the fsyncs cell stays blank (the problem is noted once in `problems`)."""
    before = LogReading.read(control)
    if before is None or before.fsyncs is not None or not pid:
        load()
        return per_op(before, LogReading.read(control))
    ran = []

    def counted_load() -> int:
        load()
        ran.append(True)
        return 0
    counted = None
    try:
        counted = syscalls.count_named_calls(pid, counted_load, FSYNC_CALLS)
    except syscalls.SyscallCountError as error:
        note = f"{label}: fsyncs not counted: {error}"
        if note not in problems:
            problems.append(note)
        if not ran:
            load()
    return per_op(before, LogReading.read(control),
                  counted.total_calls if counted is not None else None)
