"""CPU allocation: which CPUs the server gets, which the load generator gets.

An experiment's `server_cpus` / `harness_cpus` are "auto" (the default), a count
("4") or a CPU list ("0-3,8"). `allocate()` turns them into two disjoint sets
from the CPUs this process may use (`usable_cpus()`).

The rule for "auto", and why:
- Start from the usable CPUs: this process's affinity, intersected with the
  cgroup's cpuset, and cut to as many CPUs as the cgroup's CPU quota pays for
  (a quota of 4 CPUs on a 16-CPU cpuset would otherwise time-slice 16 threads
  on 4 CPUs' worth of time and measure the throttling, not the server).
- Group them by physical core (hyper-thread siblings, from
  /sys/devices/system/cpu/cpu*/topology/thread_siblings_list). Siblings share
  a core's execution units and caches: a server thread and a client thread on
  two siblings would slow each other, so a core goes whole to one side. Only
  when there is a single core are its siblings split (there is no other way
  to give each side a CPU).
- The server gets half the cores (rounded down, at least one), the harness the
  rest: a load generator needs at least as much CPU as the server it drives
  (Dragonfly's benchmark guide asks for a client node at least as large as
  the server), and a client-bound point measures the client.
- Where there are several NUMA nodes, the server's cores come from one node
  (the one with the most usable cores), so its threads never share data across
  the interconnect; the harness gets what is left, its own node first.
On 2 CPUs (two cores, or one core with two siblings) "auto" gives 1 + 1.

A count takes that many CPUs for the server by the same rule (whole cores
first), the harness "auto" then gets the rest. An explicit list is used as
given; the other side's "auto" is the usable CPUs minus it. The two sets never
overlap unless the machine has a single usable CPU (then both share it and the
plan says so).

`Topology` carries the facts (usable CPUs, sibling groups, NUMA nodes) so that
`python3 -m kvlab plan --cpus ... --siblings ...` can plan for another machine.
Pure functions; nothing here starts a process.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
from pathlib import Path
from typing import Iterable, Sequence

CPU_LIST_PATTERN = re.compile(r"^\d+(-\d+)?(,\d+(-\d+)?)*$")
SYS_CPU = Path("/sys/devices/system/cpu")
SYS_NODE = Path("/sys/devices/system/node")
CGROUP = Path("/sys/fs/cgroup")


class CpuError(ValueError):
    """A CPU specification that cannot be satisfied; the message says why."""


def parse_cpu_list(text: str) -> tuple[int, ...]:
    """"0-3,8" -> (0, 1, 2, 3, 8); sorted, without duplicates."""
    text = text.strip()
    if not CPU_LIST_PATTERN.match(text):
        raise CpuError(f"{text!r} is not a CPU list like \"0\" or \"1-3,5\"")
    cpus: set[int] = set()
    for part in text.split(","):
        low, _, high = part.partition("-")
        first, last = int(low), int(high or low)
        if last < first:
            raise CpuError(f"{part!r} counts down; write the lower CPU first")
        cpus.update(range(first, last + 1))
    return tuple(sorted(cpus))


def format_cpu_list(cpus: Iterable[int]) -> str:
    """(0, 1, 2, 3, 8) -> "0-3,8"."""
    ordered = sorted(set(cpus))
    parts = []
    start = previous = None
    for cpu in ordered:
        if start is None:
            start = previous = cpu
        elif cpu == previous + 1:
            previous = cpu
        else:
            parts.append(f"{start}" if start == previous else f"{start}-{previous}")
            start = previous = cpu
    if start is not None:
        parts.append(f"{start}" if start == previous else f"{start}-{previous}")
    return ",".join(parts)


def parse_groups(text: str) -> tuple[tuple[int, ...], ...]:
    """"0,4;1,5" -> ((0, 4), (1, 5)): CPU groups (cores or nodes) separated by ';'."""
    groups = tuple(parse_cpu_list(part) for part in text.split(";") if part.strip())
    seen: set[int] = set()
    for group in groups:
        if seen & set(group):
            raise CpuError(f"{text!r}: CPU {min(seen & set(group))} is in two groups")
        seen.update(group)
    return groups


@dataclasses.dataclass(frozen=True)
class Topology:
    """The CPUs a run may use, grouped by physical core and by NUMA node."""
    cpus: tuple[int, ...]
    cores: tuple[tuple[int, ...], ...]  # sibling groups, restricted to `cpus`
    nodes: tuple[tuple[int, ...], ...]  # NUMA nodes, restricted to `cpus`
    quota_cpus: float | None = None     # the cgroup quota, in CPUs, when one was applied

    @staticmethod
    def of(cpus: Iterable[int], siblings: Sequence[Sequence[int]] = (),
           nodes: Sequence[Sequence[int]] = (), quota_cpus: float | None = None) -> "Topology":
        """Restricts sibling groups and nodes to `cpus`; a CPU in no group is its own core,
        and with no node information all CPUs are one node."""
        usable = tuple(sorted(set(cpus)))
        if not usable:
            raise CpuError("no usable CPUs")
        if quota_cpus is not None:
            limit = max(1, math.ceil(quota_cpus - 1e-9))
            usable = _first_whole_cores(usable, siblings, limit)
        return Topology(cpus=usable, cores=_restrict(usable, siblings),
                        nodes=_restrict(usable, nodes, singletons=False), quota_cpus=quota_cpus)


def _restrict(cpus: Sequence[int], groups: Iterable[Sequence[int]],
              singletons: bool = True) -> tuple[tuple[int, ...], ...]:
    wanted = set(cpus)
    result = [tuple(c for c in group if c in wanted) for group in groups]
    result = [g for g in result if g]
    covered = {c for g in result for c in g}
    rest = [c for c in cpus if c not in covered]
    if singletons:
        result += [(c,) for c in rest]
    elif rest:
        result.append(tuple(rest))
    return tuple(sorted(result))


def _first_whole_cores(cpus: Sequence[int], siblings: Iterable[Sequence[int]],
                       limit: int) -> tuple[int, ...]:
    """At most `limit` CPUs of `cpus`, whole cores first (so a quota never splits a core
    unless the quota itself is odd)."""
    chosen: list[int] = []
    for core in _restrict(cpus, siblings):
        if len(chosen) >= limit:
            break
        chosen.extend(core[: limit - len(chosen)])
    return tuple(sorted(chosen))


# ---- reading this machine ------------------------------------------------------------

def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def cgroup_cpuset() -> tuple[int, ...] | None:
    """The cgroup v2 effective cpuset of this process, when there is one."""
    for candidate in (CGROUP / "cpuset.cpus.effective", CGROUP / "cpuset.cpus"):
        text = _read(candidate)
        if text:
            try:
                return parse_cpu_list(text)
            except CpuError:
                return None
    return None


def parse_cpu_max(text: str | None) -> float | None:
    """CPUs' worth of a cgroup v2 cpu.max ("QUOTA PERIOD"; "max" = unlimited -> None)."""
    quota, _, period = (text or "").strip().partition(" ")
    try:
        cpus = float(quota) / float(period) if quota != "max" else 0
    except (ValueError, ZeroDivisionError):
        return None
    return cpus if cpus > 0 else None


def _v1_quota(directory: Path) -> float | None:
    """CPUs' worth of a cgroup v1 cpu.cfs_quota_us / cpu.cfs_period_us (-1 = unlimited)."""
    try:
        quota = float(_read(directory / "cpu.cfs_quota_us") or "")
        period = float(_read(directory / "cpu.cfs_period_us") or "")
    except ValueError:
        return None
    return quota / period if quota > 0 and period > 0 else None


def cgroup_quota_cpus(root: Path = CGROUP, proc_self_cgroup: str | None = None) -> float | None:
    """CPUs' worth of time this process's cgroups allow, None when unlimited: the tightest
    quota of its cgroup and every ancestor, in the v2 hierarchy (cpu.max) and in a v1
    hierarchy with the cpu controller (cpu.cfs_quota_us), as harness/measurement/cpu_usage.cc's
    CgroupCpuQuota reads them. `proc_self_cgroup`: /proc/self/cgroup's text."""
    if proc_self_cgroup is None:
        proc_self_cgroup = _read(Path("/proc/self/cgroup")) or ""
    limits = []
    for line in proc_self_cgroup.splitlines():
        parts = line.split(":", 2)  # hierarchy-id:controllers:path
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers:
            if "cpu" not in controllers.split(","):
                continue
            mounts = (root / "cpu", root / controllers)
        else:
            mounts = (root, root / "unified")
        while True:
            for mount in mounts:
                directory = mount / path.lstrip("/") if path not in ("", "/") else mount
                limits.append(_v1_quota(directory) if controllers
                              else parse_cpu_max(_read(directory / "cpu.max")))
            if path in ("", "/"):
                break
            path = path.rsplit("/", 1)[0] or "/"
    known = [limit for limit in limits if limit is not None]
    return min(known) if known else None


def _cpu_lists(paths: Iterable[Path]) -> list[tuple[int, ...]]:
    """The CPU lists these files hold, in order; unreadable or malformed ones left out."""
    lists = []
    for path in paths:
        text = _read(path)
        if text:
            try:
                lists.append(parse_cpu_list(text))
            except CpuError:
                continue
    return lists


def sibling_groups() -> tuple[tuple[int, ...], ...]:
    return tuple(sorted(set(_cpu_lists(SYS_CPU.glob("cpu[0-9]*/topology/thread_siblings_list")))))


def numa_nodes() -> tuple[tuple[int, ...], ...]:
    return tuple(_cpu_lists(sorted(SYS_NODE.glob("node[0-9]*/cpulist"))))


def usable_cpus() -> tuple[int, ...]:
    """This process's affinity intersected with the cgroup's cpuset (before the quota)."""
    allowed = set(os.sched_getaffinity(0))
    cpuset = cgroup_cpuset()
    if cpuset:
        allowed &= set(cpuset)
    return tuple(sorted(allowed))


def this_machine() -> Topology:
    return Topology.of(usable_cpus(), sibling_groups(), numa_nodes(), cgroup_quota_cpus())


# ---- allocation ----------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Allocation:
    server: tuple[int, ...]
    harness: tuple[int, ...]
    rule: str  # one line saying how the sets were chosen

    @property
    def server_list(self) -> str:
        return format_cpu_list(self.server)

    @property
    def harness_list(self) -> str:
        return format_cpu_list(self.harness)

    @property
    def shared(self) -> bool:
        return bool(set(self.server) & set(self.harness))


def _take_cores(topology: Topology, count: int) -> tuple[int, ...]:
    """`count` CPUs for the server: whole cores, from the node with the most usable cores
    (then the next nodes, only if one node is too small)."""
    nodes = sorted(topology.nodes, key=lambda n: (-len(n), n))
    chosen: list[int] = []
    for node in nodes:
        for core in _restrict(node, topology.cores):
            if len(chosen) >= count:
                break
            chosen.extend(core[: count - len(chosen)])
    return tuple(sorted(chosen))


def _resolve(spec: str | None, topology: Topology, what: str) -> tuple[int, ...] | None:
    """None for "auto"; the CPUs of a count or a list."""
    if spec is None or spec == "auto":
        return None
    if spec.isdigit():  # digits alone are a count; a one-CPU list is written "5-5"
        count = int(spec)
        if count < 1:
            raise CpuError(f"{what}: a count must be at least 1")
        if count >= len(topology.cpus) and len(topology.cpus) > 1:
            raise CpuError(f"{what}: {count} CPUs leave none for the other side "
                           f"({len(topology.cpus)} usable: {format_cpu_list(topology.cpus)})")
        return count  # type: ignore[return-value]  # a count, resolved by the caller
    cpus = parse_cpu_list(spec)
    outside = sorted(set(cpus) - set(topology.cpus))
    if outside:
        raise CpuError(f"{what}: CPU {outside[0]} is not usable here "
                       f"(usable: {format_cpu_list(topology.cpus)})")
    return cpus


def allocate(topology: Topology, server_spec: str | None = "auto",
             harness_spec: str | None = "auto") -> Allocation:
    """The server's and the harness's CPUs by the rule in the module docstring."""
    if len(topology.cpus) == 1:
        only = topology.cpus
        return Allocation(only, only, "one usable CPU: server and harness share it")
    server = _resolve(server_spec, topology, "server_cpus")
    harness = _resolve(harness_spec, topology, "harness_cpus")
    if isinstance(harness, int):
        # A harness count is served from the end, the server's half from the front.
        rest = _take_cores(Topology.of(topology.cpus, topology.cores), len(topology.cpus))
        harness = tuple(sorted(rest[-harness:]))
    if isinstance(server, int):
        server = _take_cores(_without(topology, harness or ()), server)
        rule = f"server: {len(server)} CPUs as asked, whole cores from one node"
    elif server is None:
        pool = _without(topology, harness or ())
        if len(pool.cores) >= 2 or harness:
            count = max(1, len(pool.cores) // 2) if not harness else len(pool.cores)
            cores = sorted(pool.nodes, key=lambda n: (-len(n), n))[0]
            node_cores = _restrict(cores, pool.cores)
            server = tuple(sorted(c for core in node_cores[:count] for c in core))
            rule = "server: half the cores (siblings kept together), from one NUMA node"
        else:
            server = pool.cores[0][: max(1, len(pool.cores[0]) // 2)]
            rule = "server: one hyper-thread of the only core (siblings split: no other core)"
    else:
        rule = "server: the CPUs listed"
    if harness is None:
        harness = tuple(c for c in topology.cpus if c not in set(server))
        rule += "; harness: the rest"
    else:
        rule += "; harness: as given"
    if not harness:
        raise CpuError("the server's CPUs leave none for the harness")
    if set(server) & set(harness):
        raise CpuError(f"server_cpus {format_cpu_list(server)} and harness_cpus "
                       f"{format_cpu_list(harness)} overlap")
    return Allocation(tuple(server), tuple(harness), rule)


def _without(topology: Topology, cpus: Iterable[int]) -> Topology:
    removed = set(cpus)
    left = tuple(c for c in topology.cpus if c not in removed)
    if not left:
        raise CpuError("no CPUs left for the server")
    return Topology.of(left, topology.cores, topology.nodes)


def thread_counts(harness_cpus: int) -> tuple[int, ...]:
    """threads = "auto": 1, 2, 4, ... up to twice the harness's CPUs, with the seed's 8
    whenever the harness has at least 4 CPUs."""
    limit = max(1, 2 * harness_cpus)
    counts = []
    n = 1
    while n <= limit:
        counts.append(n)
        n *= 2
    if harness_cpus >= 4 and 8 not in counts:
        counts.append(8)
    return tuple(sorted(counts))
