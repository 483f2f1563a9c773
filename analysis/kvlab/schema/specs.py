"""The experiment's types and the words it may use, below every other room: a server row
(ServerSpec), a sweep (SweepSpec), a declared comparison (CompareSpec), one measured
configuration (Point), a whole experiment and its expansion into points (Experiment), and
the constants they are built from (POINT_VARIABLES, COMPARE_METRICS, the defaults).

The file they are read from, its keys and what each allows: kvlab.running.experiment,
which parses and checks a workloads/*.toml into these types. measures/, tracking/ and
rendering/ use the types and constants without importing the runner.
"""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path
from typing import Any

from . import kinds
from .toml_checker import AUTO

SEEDS = ("ember-pr50", "lettuce-threads")
SERVER_KINDS = ("kvlab", "redis", "redis-cluster", "command", "command-cluster")
COMMAND_KINDS = ("command", "command-cluster")
CLUSTER_KINDS = ("redis-cluster", "command-cluster")
DEFAULT_START_TIMEOUT_S = 15.0
TRANSPORTS = ("unix", "tcp", "remote")
# The p99 (µs) a latency-capped throughput stays under unless a sweep says otherwise.
DEFAULT_LATENCY_SLO_US = 1000.0
# The latency metrics a declared comparison may divide (open loop): metric -> quantile.
LATENCY_QUANTILES = {"p50_us": 0.50, "p99_us": 0.99}

# The variables of a point, in the order they appear in points.csv.
POINT_VARIABLES = ("sweep", "server", "loadgen", "transport", "client", "io", "command",
                   "ratio", "keys", "key_dist", "value_size", "pipeline",
                   "connections", "nodelay", "threads")


@dataclasses.dataclass(frozen=True)
class ServerSpec:
    name: str
    kind: str                      # one of SERVER_KINDS
    engine: str | None = None
    shards: int | str | None = None      # an int, or AUTO until the plan resolves it
    hop: str | None = None
    stripes: int | None = None
    io_threads: int | str | None = None  # an int, or AUTO until the plan resolves it
    seed_engine: str | None = None
    multikey: str | None = None    # kvlab only: atomic (the default) | split
    route: str | None = None       # kvlab owner only: none (the default) | slots
    stage_sample: int | None = None  # kvlab only: --stage-sample N (0 = off); None: the default
    nodes: int | str | None = None  # *-cluster: processes, or AUTO until the plan resolves it
    command: str | None = None     # command*: the command line template (running/commands.py)
    version: str | None = None     # command*: the build's label
    binary: str | None = None      # command*: the file that identifies the build
    start_timeout: float = DEFAULT_START_TIMEOUT_S  # command*: seconds to answer PING
    appendfsync: str | None = None  # kvlab, redis: the log's fsync policy; None: no log
    log_on_tmpfs: bool = False     # with appendfsync: a log folder on tmpfs is allowed

    @property
    def routes_by_slots(self) -> bool:
        """Whether kvlab-load drives it with --route slots (a cluster's every key to its owner)."""
        return self.kind in CLUSTER_KINDS or self.route == "slots"

    @property
    def is_command(self) -> bool:
        """A server given by a command line (kind command or command-cluster)."""
        return self.kind in COMMAND_KINDS

    def describe(self) -> str:
        if self.kind == "redis-cluster":
            return f"Redis Cluster of {self.nodes} redis-server (Debian) nodes, one per CPU"
        if self.kind == "command-cluster":
            return f"cluster of {self.nodes} nodes, one per CPU: {self.command}"
        if self.kind == "command":
            return f"command: {self.command}" + (" (route slots)" if self.route == "slots"
                                                 else "")
        if self.kind == "redis":
            threads = f" io-threads={self.io_threads}" if self.io_threads else ""
            log = f" appendfsync={self.appendfsync}" if self.appendfsync else ""
            return f"redis-server (Debian){threads}{log}"
        parts = [f"engine={self.engine}"]
        for field in ("shards", "hop", "stripes", "io_threads", "multikey", "route",
                      "stage_sample", "appendfsync"):
            value = getattr(self, field)
            if value is not None:
                parts.append(f"{field}={value}")
        return "kvlab-server " + " ".join(parts)


@dataclasses.dataclass(frozen=True)
class Point:
    """One measured configuration; the runner measures it `repetitions` times."""
    sweep: str
    server: str
    loadgen: str
    transport: str
    client: str
    io: str                          # direct | event-loop (pooled and shared; dedicated: direct)
    command: str
    ratio: str
    keys: int
    key_dist: str
    value_size: int
    pipeline: int
    connections: int
    nodelay: str
    threads: int
    duration: float
    warmup: float
    repetitions: int
    loop_threads: int | None = None  # event-loop only; None = kvlab-load's default (its cores)
    io_flush: str = "command"        # event-loop only: a send per command or per batch
    latency_curve: tuple[float, ...] = ()  # open-loop fractions of the closed-loop maximum
    latency_slo_us: float = DEFAULT_LATENCY_SLO_US
    syscalls: bool = False                 # count the server's system calls per op (perf, else strace)
    # What the fill stores per key: "string", or a container ("hash:10", "list:100", ...)
    # for the memory table (kvlab-load --value-shape); such a sweep measures PING.
    value_shape: str = "string"
    route: str = "none"                    # slots: kvlab-load --route slots (from the server)

    def variables(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in POINT_VARIABLES}


@dataclasses.dataclass(frozen=True)
class SweepSpec:
    name: str
    seed: str | None
    servers: tuple[str, ...]
    values: dict[str, tuple]       # variable -> the values it sweeps over
    ratio: str
    duration: float
    warmup: float
    repetitions: int
    loop_threads: int | None = None
    io_flush: str = "command"
    latency_curve: tuple[float, ...] = ()
    latency_slo_us: float = DEFAULT_LATENCY_SLO_US
    syscalls: bool = False
    value_shape: str = "string"


# Point variables a comparison may be declared along (a and b are two of their values).
COMPARE_BY = ("server", "client", "io", "transport", "nodelay", "loadgen", "command")
# What a comparison may divide (measures/declared_ratios.py): metric -> what it is, in words.
COMPARE_METRICS = {"ops_per_s": "ops/s",
                   "ops_per_server_cpu_s": "ops per second of server CPU time",
                   "p50_us": "median latency, open loop",
                   "p99_us": "p99 latency, open loop"}
assert set(LATENCY_QUANTILES) <= set(COMPARE_METRICS)
DEFAULT_MAX_ROUNDS = 40
MEASUREMENTS = ("alternate", "rounds")
DEFAULT_MEASUREMENT = "alternate"
DEFAULT_MIN_ROUNDS = 10  # why: measures/declared_ratios.py
# 5% of one core: five clock ticks in a second, above /proc/stat's rounding.
DEFAULT_DISTURBANCE_CORES = 0.05


@dataclasses.dataclass(frozen=True)
class CompareSpec:
    """A declared comparison: the ratio of `a` to `b` along the variable `by`, for every
    pair of points that differ only in it (and pass the filters)."""
    name: str
    by: str
    a: str
    b: str
    sweep: str | None = None
    tests: tuple[str, ...] = ()
    where: tuple[tuple[str, tuple], ...] = ()  # (variable, allowed values)
    seed_ratio: float | None = None
    metric: str = "ops_per_s"          # a key of COMPARE_METRICS
    rate: float | None = None          # latency metrics: ops/s offered to both sides

    @property
    def latency(self) -> bool:
        """A latency percentile (lower is better), measured open loop at `rate`."""
        return self.metric in LATENCY_QUANTILES

    def matches(self, point: "Point") -> bool:
        if self.sweep is not None and point.sweep != self.sweep:
            return False
        if self.tests and point.command not in self.tests:
            return False
        return all(getattr(point, name) in values for name, values in self.where)


@dataclasses.dataclass(frozen=True)
class Experiment:
    path: Path
    text: str
    name: str
    description: str
    server_cpus: str                 # AUTO, a count or a CPU list (see running/cpus.py)
    harness_cpus: str
    remote_rtt_us: int
    remote_rate_mbit: int
    servers: tuple[ServerSpec, ...]
    sweeps: tuple[SweepSpec, ...]
    comparisons: tuple[CompareSpec, ...] = ()
    precision: float | None = None
    budget_s: float | None = None
    max_rounds: int = DEFAULT_MAX_ROUNDS
    min_rounds: int = DEFAULT_MIN_ROUNDS
    disturbance_cores: float = DEFAULT_DISTURBANCE_CORES
    measurement: str = DEFAULT_MEASUREMENT
    alternation_s: float = 2.0
    slice_s: float = 0.1
    cpu_idle: str = "poll"           # how idle CPUs wait during the run (running/cpu_idle.py)
    # [[host]] and [placement] (kvlab.running.hosts); without them everything runs on this machine.
    hosts: tuple = ()
    placement: Any = None

    def server(self, name: str) -> ServerSpec:
        return next(s for s in self.servers if s.name == name)

    def has_auto(self) -> bool:
        """True while some value is still AUTO (the plan resolves them; see running/plan.py)."""
        servers = any(AUTO in (s.shards, s.io_threads, s.nodes) for s in self.servers)
        sweeps = any(AUTO in sweep.values["threads"] for sweep in self.sweeps)
        return servers or sweeps

    def points(self) -> list[Point]:
        """Every point, grouped by server in the order of [[server]], then by sweep."""
        if self.has_auto():
            raise ValueError(f"{self.path}: resolve the experiment's \"auto\" values first "
                             "(plan.resolve)")
        result = []
        for server in self.servers:
            for sweep in self.sweeps:
                if server.name not in sweep.servers:
                    continue
                v = sweep.values
                for (loadgen, transport, client, io, command, keys, key_dist, value_size,
                     pipeline, connections, nodelay, threads) in itertools.product(
                        v["loadgen"], v["transport"], v["client"], v["io"], v["command"],
                        v["keys"], v["key_dist"], v["value_size"], v["pipeline"],
                        v["connections"], v["nodelay"], v["threads"]):
                    # Shared uses one connection; only dedicated clients pipeline.
                    if client in kinds.one_connection_clients():
                        connections = 1
                    elif connections == AUTO:
                        connections = kinds.auto_connections(client, threads)
                    if client not in kinds.pipelining_clients():
                        pipeline = 1
                    else:
                        io = "direct"  # a dedicated thread always does its own socket I/O
                    # A routed client reads the slot map over TCP, MULTI has no key to
                    # route by, YCSB and containers fill through one connection: those
                    # points do not exist for a routed server.
                    if server.routes_by_slots and (transport != "tcp"
                                                   or command.startswith("multi-incr")
                                                   or is_ycsb(command)
                                                   or sweep.value_shape != "string"):
                        continue
                    result.append(Point(
                        sweep=sweep.name, server=server.name, loadgen=loadgen,
                        transport=transport, client=client, io=io, command=command,
                        ratio=sweep.ratio if command == "mix" else "",
                        keys=keys, key_dist=key_dist, value_size=value_size,
                        pipeline=pipeline, connections=connections, nodelay=nodelay,
                        threads=threads, duration=sweep.duration, warmup=sweep.warmup,
                        repetitions=sweep.repetitions,
                        loop_threads=sweep.loop_threads if io == "event-loop" else None,
                        io_flush=sweep.io_flush if io == "event-loop" else "command",
                        latency_curve=sweep.latency_curve, value_shape=sweep.value_shape,
                        latency_slo_us=sweep.latency_slo_us, syscalls=sweep.syscalls,
                        route="slots" if server.routes_by_slots else "none"))
        return list(dict.fromkeys(result))


def is_ycsb(command: str) -> bool:
    """Whether a point's command is one of YCSB's workloads (ycsb:load, ycsb:A..F)."""
    return command.startswith("ycsb:") and command[5:] in kinds.ycsb_workloads()


# Commands that write a container into their keys: a point of one needs keys that no
# SET point of the same server process left a string in (the runner empties the key space
# first; WRONGTYPE otherwise).
CONTAINER_WRITES = ("lpush",)


def point_fill(point: "Point") -> str | None:
    """fill_of() for a whole point: a container shape is a fill of its own ("hash:10")."""
    if point.value_shape != "string":
        return point.value_shape
    return fill_of(point.command)


def fill_of(command: str) -> str | None:
    """What the key space must hold before a point of `command` is measured, filled once
    per server process and key space: "strings" (GET and mix: every key SET once), "ycsb"
    (a YCSB workload's records, loaded as YCSB's load phase does), or None (the point
    writes what it reads; INCRBY's key is set by kvlab-load itself)."""
    if command in ("get", "mix"):
        return "strings"
    if is_ycsb(command) and command != "ycsb:load":
        return "ycsb"
    return None
