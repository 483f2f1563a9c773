"""The plan of a run: what each server and the load generator get on this machine.

`resolve(experiment, topology)` splits the CPUs (cpus.allocate), then replaces
every "auto" of the experiment with a number:

- `shards = "auto"`, `io_threads = "auto"` (kvlab): the server set's CPU count
  (the `single` engine is single-threaded by definition and stays at one);
- `io_threads = "auto"` on a redis server: Redis 7's io-threads = the server
  set's CPU count; that row exists only where the server has more than one CPU
  (with one CPU it would be the plain redis row again) and is otherwise dropped
  with a note;
- `nodes = "auto"` on a redis-cluster or command-cluster server: one process per server CPU;
- `io_threads = "auto"` on a command server: the server set's CPU count (its {io_threads});
- `threads = "auto"`: 1, 2, 4, ... up to twice the harness set's CPUs, with the
  seed's 8 whenever the harness has at least 4 CPUs (cpus.thread_counts).

`python3 -m kvlab plan FILE` prints the result without running anything;
`--cpus` / `--siblings` / `--nodes` plan for another machine.

The duration estimate is the sum over points of what the runner spends on
each (warm-up, every round's measured window, a fixed per-measurement cost for
process start and connections) plus a per-server-start cost; see
`estimated_seconds`. Pure functions; nothing here starts a process.
"""

from __future__ import annotations

import dataclasses
import json

from ..schema import kinds
from ..schema.specs import CLUSTER_KINDS, Experiment, Point, ServerSpec, point_fill
from ..schema.toml_checker import AUTO
from ..measures.declared_ratios import point_label
from .alternated_points import pair_points, point_identity
from .alternating import declared_pairs
from .cpus import Allocation, Topology, allocate, format_cpu_list, thread_counts

# Seconds a measurement costs beyond its window: starting kvlab-load or redis-benchmark,
# opening connections, the runner's bookkeeping (checked against real runs: see
# docs/experiments.md, "Where it runs").
MEASUREMENT_OVERHEAD_S = 0.3
# Seconds to start a server, wait for it and stop it.
SERVER_START_S = 0.5
# Keys a prefill writes per second (pipelined SETs; a conservative figure for 2 cores).
PREFILL_OPS_PER_S = 400_000
# The seeds measured on a GCP c2-standard-8: 8 vCPUs.
SEED_SERVER_CPUS = 8


@dataclasses.dataclass(frozen=True)
class Plan:
    experiment: Experiment        # every "auto" replaced
    topology: Topology
    allocation: Allocation
    dropped: tuple[str, ...]      # rows left out on this machine, with the reason

    @property
    def points(self) -> list[Point]:
        return self.experiment.points()

    def alternated_points(self) -> list[Point]:
        """The points measured by their declared ratio's alternation, not in rounds
        (alternated_points.py; measurement = "alternate")."""
        if self.experiment.measurement != "alternate" or not self.experiment.comparisons \
                or self.experiment.placement is not None:  # several hosts measure in rounds
            return []
        pairs = declared_pairs([p for p in self.points if p.loadgen == "kvlab-load"],
                               self.experiment.comparisons, point_label)
        return pair_points(pairs, self.experiment)

    def rounds_points(self) -> list[Point]:
        """The points the sweeps' rounds measure."""
        alternated = {point_identity(p) for p in self.alternated_points()}
        return [p for p in self.points if point_identity(p) not in alternated]

    @property
    def server_cpu_count(self) -> int:
        return len(self.allocation.server)

    def harness_threads(self) -> list[int]:
        return sorted({p.threads for p in self.points})

    def estimated_s(self) -> float:
        return estimated_seconds(self.rounds_points(), len(self.experiment.servers))

    def as_json(self) -> dict:
        server_cpus = self.allocation.server_list
        return {
            "servers": [{"name": s.name, "cpus": server_cpus,
                         "shards": s.shards if s.engine and "shards" in kinds.engine_options(s.engine)
                         else None,
                         "io_threads": _io_threads(s),
                         "nodes": s.nodes if s.kind in CLUSTER_KINDS else None,
                         "route": "slots" if s.routes_by_slots else None}
                        for s in self.experiment.servers],
            "harness": {"cpus": self.allocation.harness_list, "threads": self.harness_threads()},
            "points": len(self.points),
            "alternated_points": len(self.alternated_points()),
            "estimated_s": round(self.estimated_s()),
            # With a precision target, rounds go on up to the time budget.
            "budget_s": self.experiment.budget_s if self.experiment.precision else None,
            "rule": self.allocation.rule,
            "dropped": list(self.dropped),
        }

    def render(self) -> str:
        data = self.as_json()
        lines = [f"plan for {self.experiment.name} ({self.experiment.path})",
                 f"usable CPUs: {format_cpu_list(self.topology.cpus)} "
                 f"({len(self.topology.cores)} cores, {len(self.topology.nodes)} NUMA node(s)"
                 + (f", cgroup quota {self.topology.quota_cpus:g} CPUs"
                    if self.topology.quota_cpus else "") + ")",
                 f"rule: {self.allocation.rule}"]
        if self.allocation.shared:
            lines.append("WARNING: one usable CPU: server and load generator share it")
        lines.append(f"harness: CPUs {data['harness']['cpus']}, client threads "
                     f"{data['harness']['threads']}")
        for server in data["servers"]:
            extra = "".join(f", {k} {server[k]}" for k in ("shards", "io_threads", "nodes",
                                                          "route")
                            if server[k] is not None)
            lines.append(f"server {server['name']}: CPUs {server['cpus']}{extra}")
        for note in self.dropped:
            lines.append(f"dropped: {note}")
        if self.server_cpu_count < SEED_SERVER_CPUS:
            lines.append(f"note: the server has {self.server_cpu_count} CPU(s), the seeds' "
                         f"server had {SEED_SERVER_CPUS} vCPUs; seed comparisons are labelled so")
        minutes, seconds = divmod(data["estimated_s"], 60)
        line = f"{data['points']} points" + (
            f" ({data['alternated_points']} measured by their declared ratio's alternation)"
            if data["alternated_points"] else "") + \
            f", estimated {minutes} min {seconds:02d} s"
        if self.experiment.precision:
            line += (f" for the sweeps' rounds; more rounds until every declared ratio is "
                     f"within ±{self.experiment.precision:.1%}")
            if data["budget_s"]:
                line += f", at most {data['budget_s']:.0f} s in all"
        lines.append(line)
        return "\n".join(lines)


def _io_threads(server: ServerSpec) -> int | None:
    if server.kind in CLUSTER_KINDS:
        return None
    if server.kind in ("redis", "command"):
        return server.io_threads
    return 1 if server.engine in kinds.single_threaded_engines() else server.io_threads


def _resolve_server(server: ServerSpec, cpus: int) -> ServerSpec | None:
    def value(v: int | str | None) -> int | str | None:
        return cpus if v == AUTO else v
    if server.kind in CLUSTER_KINDS:
        return dataclasses.replace(server, nodes=value(server.nodes),
                                   io_threads=value(server.io_threads))
    if server.kind == "command":
        return dataclasses.replace(server, io_threads=value(server.io_threads))
    if server.kind == "redis":
        threads = value(server.io_threads)
        if server.io_threads == AUTO and threads <= 1:
            return None
        return dataclasses.replace(server, io_threads=threads)
    io_threads = 1 if server.engine in kinds.single_threaded_engines() and server.io_threads == AUTO \
        else value(server.io_threads)
    return dataclasses.replace(server, shards=value(server.shards), io_threads=io_threads)


def resolve(experiment: Experiment, topology: Topology) -> Plan:
    allocation = allocate(topology, experiment.server_cpus, experiment.harness_cpus)
    server_count = len(allocation.server)
    harness_count = len(allocation.harness)
    servers, dropped = [], []
    for server in experiment.servers:
        resolved = _resolve_server(server, server_count)
        if resolved is None:
            dropped.append(f"{server.name}: io_threads \"auto\" with one server CPU is the "
                           "single-threaded redis row again")
        else:
            servers.append(resolved)
    names = {s.name for s in servers}
    sweeps = []
    for sweep in experiment.sweeps:
        threads = sweep.values["threads"]
        if AUTO in threads:
            threads = tuple(sorted({t for t in threads if t != AUTO}
                                   | set(thread_counts(harness_count))))
        kept = tuple(n for n in sweep.servers if n in names)
        sweeps.append(dataclasses.replace(sweep, servers=kept,
                                          values={**sweep.values, "threads": threads}))
    comparisons = tuple(c for c in experiment.comparisons
                        if c.by != "server" or {c.a, c.b} <= names)
    dropped += [f"comparison {c.name}: a server it needs was left out"
                for c in experiment.comparisons if c not in comparisons]
    resolved = dataclasses.replace(
        experiment, servers=tuple(servers), sweeps=tuple(sweeps), comparisons=comparisons,
        server_cpus=allocation.server_list, harness_cpus=allocation.harness_list)
    return Plan(experiment=resolved, topology=topology, allocation=allocation,
                dropped=tuple(dropped))


def point_seconds(point: Point) -> float:
    """What the runner spends on one point: the warm-up and every repetition's window,
    each measurement with its fixed overhead."""
    per_repetition = point.duration + (MEASUREMENT_OVERHEAD_S
                                       if point.loadgen == "redis-benchmark" else 0)
    return point.warmup + point.repetitions * per_repetition + MEASUREMENT_OVERHEAD_S


def estimated_seconds(points: list[Point], server_count: int) -> float:
    """Every point's rounds, plus per round: each server's start and its prefills (a GET or
    mix key space is filled once per fresh server process)."""
    total = sum(point_seconds(p) for p in points)
    for phase in (False, True):
        mine = [p for p in points if (p.transport == "remote") == phase]
        if not mine:
            continue
        rounds = max(p.repetitions for p in mine)
        servers = len({p.server for p in mine})
        fills = {(p.server, point_fill(p), p.keys, p.value_size) for p in mine
                 if point_fill(p) and p.loadgen == "kvlab-load"}
        total += rounds * (servers * SERVER_START_S
                           + sum(keys / PREFILL_OPS_PER_S + MEASUREMENT_OVERHEAD_S
                                 for _, _, keys, _ in fills))
    return total


def to_json_text(plan: Plan) -> str:
    return json.dumps(plan.as_json(), indent=2)
