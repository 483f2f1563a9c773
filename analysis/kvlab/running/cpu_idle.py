"""How the measured CPUs wait when they have nothing to run, held for a run.

On a virtual machine an idle CPU halts, which leaves the guest; waking a thread on it
then costs a trip through the hypervisor, and which trips a measurement pays depends on
whether its CPUs happened to be halted (on a quiet machine they are, beside other work
they are not). On one 2-vCPU VM with guest halt polling off, shared INCRBY from 2
threads served about 25k ops/s with the CPUs free to halt and 86-102k with them polling;
dedicated 38k against 193k. A CPU burner beside the run made the same point run faster,
not slower. That is the source of the two modes redis-server's rows showed from round
to round (issue 36): the server and its clients woke halted CPUs in some rounds and
running ones in others.

The kernel's own lever is a PM QoS request: while a process holds /dev/cpu_dma_latency
open with 0 written to it, cpuidle picks only states with no exit latency (polling); the
request ends when the file is closed, also when the process is killed. `cpu_idle =
"poll"` (the default) holds it for the whole run, so every row and every round waits the
same way; `"kernel"` leaves the kernel's choice. Either way the run records what the
CPUs' idle states are and whether the hold was taken (meta.json `cpu_idle`); without the
right to open the file the run goes on unheld and says so.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

MODES = ("poll", "kernel")
DEFAULT_MODE = "poll"
QOS_PATH = Path("/dev/cpu_dma_latency")
CPU_SYSFS = Path("/sys/devices/system/cpu")
HALTPOLL_NS = Path("/sys/module/haltpoll/parameters/guest_halt_poll_ns")


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def idle_states(cpus: list[int], root: Path = CPU_SYSFS) -> dict:
    """The cpuidle driver and governor, and each measured CPU's idle states: name, exit
    latency (us), disabled, and entries so far ("usage")."""
    described = {"driver": _read(root / "cpuidle" / "current_driver"),
                 "governor": _read(root / "cpuidle" / "current_governor_ro")
                 or _read(root / "cpuidle" / "current_governor"),
                 "cpus": {}}
    for cpu in cpus:
        states = []
        folder = root / f"cpu{cpu}" / "cpuidle"
        for state in sorted(folder.glob("state*"), key=lambda p: int(p.name[5:])):
            usage = _read(state / "usage")
            latency = _read(state / "latency")
            states.append({"name": _read(state / "name"),
                           "latency_us": int(latency) if latency and latency.isdigit() else None,
                           "disabled": _read(state / "disable") == "1",
                           "usage": int(usage) if usage and usage.isdigit() else None})
        described["cpus"][str(cpu)] = states
    return described


def halts(before: dict, after: dict) -> int | None:
    """Entries into idle states with an exit latency (halts, not polls) between two
    idle_states readings; None when the machine has no such states to read."""
    total, seen = 0, False
    for cpu, states in after["cpus"].items():
        earlier = before["cpus"].get(cpu, [])
        for index, state in enumerate(states):
            if not state["latency_us"] or state["usage"] is None or index >= len(earlier) \
                    or earlier[index]["usage"] is None:
                continue
            total += state["usage"] - earlier[index]["usage"]
            seen = True
    return total if seen else None


class IdleHold:
    """Holds the measured CPUs to polling (mode "poll") from `take()` until `release()`
    or the process's end. Not thread-safe; one owner (the runner)."""

    def __init__(self, mode: str = DEFAULT_MODE, qos_path: Path = QOS_PATH) -> None:
        if mode not in MODES:
            raise ValueError(f"cpu_idle: {mode!r} is not one of {', '.join(MODES)}")
        self.mode = mode
        self.qos_path = qos_path
        self.fd: int | None = None
        self.why = ""

    def take(self) -> bool:
        """True when the request is held; otherwise `why` says what stopped it."""
        if self.mode == "kernel":
            self.why = "cpu_idle = \"kernel\": the kernel chooses how idle CPUs wait"
            return False
        try:
            fd = os.open(self.qos_path, os.O_WRONLY)
        except OSError as error:
            self.why = f"{self.qos_path}: {error.strerror} (the CPUs idle as the kernel chooses)"
            return False
        try:
            os.write(fd, struct.pack("i", 0))
        except OSError as error:
            os.close(fd)
            self.why = f"{self.qos_path}: {error.strerror} (the CPUs idle as the kernel chooses)"
            return False
        self.fd = fd
        self.why = "idle CPUs poll: a 0 us PM QoS request held for the run"
        return True

    def regime(self) -> str:
        """How the CPUs wait now: "poll" while held, else "kernel" (what a cached
        measurement made under it is keyed by)."""
        return "poll" if self.held else "kernel"

    @property
    def held(self) -> bool:
        return self.fd is not None

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def describe(self, cpus: list[int]) -> dict:
        """What meta.json keeps: the mode, whether it is held and why, the idle states."""
        return {"mode": self.mode, "held": self.held, "why": self.why,
                "guest_halt_poll_ns": _read(HALTPOLL_NS), **idle_states(cpus)}


def current_request_us(qos_path: Path = QOS_PATH) -> int | None:
    """The system's current latency target (what reading the device returns)."""
    try:
        with open(qos_path, "rb") as device:
            data = device.read(4)
    except OSError:
        return None
    return struct.unpack("i", data)[0] if len(data) == 4 else None
