"""Experiment files (workloads/*.toml): parsing, strict validation, expansion into points.

An experiment names the servers to measure, and one or more sweeps. Every sweep
is a cartesian product of its variables; each combination is one *point*, which
the runner measures `repetitions` times. Unknown keys and bad values raise
ExperimentError naming the file, the key and what is allowed.

    [experiment]
    name = "quick"                   # required; letters, digits, '-', '_', '.'
    description = "..."              # optional
    server_cpus = "0"                # optional; taskset list for the server
    harness_cpus = "1"               # optional; taskset list for the load generator
    remote_rtt_us = 250              # round trip of the emulated link (transport "remote")
    remote_rate_mbit = 0             # optional bandwidth limit of that link (0 = none)

    [[server]]
    name = "sharded-hop-command"     # required, unique
    kind = "kvlab"                   # kvlab | redis (Debian's redis-server)
    engine = "sharded"               # kvlab only: single | sharded | concurrent | striped
    shards = 1                       # sharded only
    hop = "command"                  # sharded only: command | batch
    stripes = 64                     # striped only
    io_threads = 1                   # kvlab only
    seed_engine = "sharded"          # optional: the seed table's engine this row stands beside

    [[sweep]]
    name = "p16"                     # required, unique
    seed = "ember-pr50"              # optional: ember-pr50 | lettuce-threads (seed-shaped table)
    servers = ["sharded-hop-command"]  # optional; default: every server
    # each of the following takes one value or a list
    loadgen = "kvlab-load"           # kvlab-load | redis-benchmark
    transport = "tcp"                # unix | tcp | remote
    client = "dedicated"             # dedicated | pooled | shared
    threads = [1, 2, 4, 8]
    command = ["set", "get"]         # get | set | incrby | ping | mix
    keys = [1, 1000000]
    key_dist = "uniform"             # uniform | sequential | zipf:THETA
    value_size = 64
    pipeline = 16
    connections = 50
    nodelay = "on"                   # on | off
    # scalars
    ratio = "1:10"                   # SET:GET, command "mix" only
    duration = 1.0                   # seconds per repetition
    warmup = 0.25                    # seconds before each point
    repetitions = 3

A point records what is run: a `shared` client always uses one connection, and
only `dedicated` clients pipeline (others run with pipeline 1).
"""

from __future__ import annotations

import dataclasses
import itertools
import re
import tomllib
from pathlib import Path
from typing import Any, Callable

SEEDS = ("ember-pr50", "lettuce-threads")
ENGINES = ("single", "sharded", "concurrent", "striped")
LOADGENS = ("kvlab-load", "redis-benchmark")
TRANSPORTS = ("unix", "tcp", "remote")
CLIENTS = ("dedicated", "pooled", "shared")
COMMANDS = ("get", "set", "incrby", "ping", "mix")
REDIS_BENCHMARK_COMMANDS = ("get", "set", "ping")
NAME_PATTERN = re.compile(r"^[A-Za-z0-9_.-]+$")
CPU_LIST_PATTERN = re.compile(r"^\d+(-\d+)?(,\d+(-\d+)?)*$")
ZIPF_PATTERN = re.compile(r"^zipf:(\d+(\.\d*)?|\.\d+)$")
RATIO_PATTERN = re.compile(r"^\d+:\d+$")

# The variables of a point, in the order they appear in points.csv.
POINT_VARIABLES = ("sweep", "server", "loadgen", "transport", "client", "command",
                   "ratio", "keys", "key_dist", "value_size", "pipeline",
                   "connections", "nodelay", "threads")


class ExperimentError(Exception):
    """A file that is not a valid experiment; the message names file, key and what is allowed."""


@dataclasses.dataclass(frozen=True)
class ServerSpec:
    name: str
    kind: str                      # "kvlab" or "redis"
    engine: str | None = None
    shards: int | None = None
    hop: str | None = None
    stripes: int | None = None
    io_threads: int | None = None
    seed_engine: str | None = None

    def describe(self) -> str:
        if self.kind == "redis":
            return "redis-server (Debian)"
        parts = [f"engine={self.engine}"]
        for field in ("shards", "hop", "stripes", "io_threads"):
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


@dataclasses.dataclass(frozen=True)
class Experiment:
    path: Path
    text: str
    name: str
    description: str
    server_cpus: str | None
    harness_cpus: str | None
    remote_rtt_us: int
    remote_rate_mbit: int
    servers: tuple[ServerSpec, ...]
    sweeps: tuple[SweepSpec, ...]
    # [[host]] and [placement] (kvlab.hosts); without them everything runs on this machine.
    hosts: tuple = ()
    placement: Any = None

    def server(self, name: str) -> ServerSpec:
        return next(s for s in self.servers if s.name == name)

    def points(self) -> list[Point]:
        """Every point, grouped by server in the order of [[server]], then by sweep."""
        result = []
        for server in self.servers:
            for sweep in self.sweeps:
                if server.name not in sweep.servers:
                    continue
                v = sweep.values
                for (loadgen, transport, client, command, keys, key_dist, value_size,
                     pipeline, connections, nodelay, threads) in itertools.product(
                        v["loadgen"], v["transport"], v["client"], v["command"], v["keys"],
                        v["key_dist"], v["value_size"], v["pipeline"], v["connections"],
                        v["nodelay"], v["threads"]):
                    # Shared uses one connection; only dedicated clients pipeline.
                    if client == "shared":
                        connections = 1
                    if client != "dedicated":
                        pipeline = 1
                    result.append(Point(
                        sweep=sweep.name, server=server.name, loadgen=loadgen,
                        transport=transport, client=client, command=command,
                        ratio=sweep.ratio if command == "mix" else "",
                        keys=keys, key_dist=key_dist, value_size=value_size,
                        pipeline=pipeline, connections=connections, nodelay=nodelay,
                        threads=threads, duration=sweep.duration, warmup=sweep.warmup,
                        repetitions=sweep.repetitions))
        return list(dict.fromkeys(result))


_KIND_NAMES = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}


class _Checker:
    """Reads one table of the file, remembering which keys were consumed."""

    def __init__(self, path: Path, where: str, table: Any):
        self.path = path
        self.where = where
        if not isinstance(table, dict):
            self.fail(where, f"must be a table, not {type(table).__name__}")
        self.table = table
        self.seen: set[str] = set()

    def fail(self, key: str, what: str):
        raise ExperimentError(f"{self.path}: {key}: {what}")

    def key(self, name: str) -> str:
        return f"{self.where}.{name}" if self.where else name

    def get(self, name: str, kind: type | tuple, default: Any = None, required: bool = False,
            allowed: tuple | None = None, check: Callable[[Any], str | None] | None = None):
        self.seen.add(name)
        if name not in self.table:
            if required:
                self.fail(self.key(name), "is required")
            return default
        return self._value(self.key(name), self.table[name], kind, allowed, check)

    def get_list(self, name: str, kind: type | tuple, default: tuple,
                 allowed: tuple | None = None, check: Callable[[Any], str | None] | None = None):
        """A variable that takes one value or a non-empty list of distinct values."""
        self.seen.add(name)
        if name not in self.table:
            return default
        raw = self.table[name]
        items = raw if isinstance(raw, list) else [raw]
        if not items:
            self.fail(self.key(name), "must not be an empty list")
        values = tuple(self._value(f"{self.key(name)}", item, kind, allowed, check)
                       for item in items)
        if len(set(values)) != len(values):
            self.fail(self.key(name), f"lists a value twice: {list(values)}")
        return values

    def _value(self, key, value, kind, allowed, check):
        kinds = kind if isinstance(kind, tuple) else (kind,)
        # TOML booleans are ints in Python; never accept one for a number.
        if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
            names = " or ".join(_KIND_NAMES[k] for k in kinds)
            self.fail(key, f"must be {names}, not {value!r}")
        if allowed is not None and value not in allowed:
            self.fail(key, f"{value!r} is not allowed; allowed: {', '.join(map(str, allowed))}")
        if check is not None:
            problem = check(value)
            if problem:
                self.fail(key, f"{value!r} {problem}")
        return value

    def finish(self):
        unknown = sorted(set(self.table) - self.seen)
        if unknown:
            self.fail(self.key(unknown[0]),
                      f"unknown key; allowed here: {', '.join(sorted(self.seen))}")


def _positive(value) -> str | None:
    return None if value > 0 else "must be > 0"


def _non_negative(value) -> str | None:
    return None if value >= 0 else "must be >= 0"


def _name(value: str) -> str | None:
    return None if NAME_PATTERN.match(value) else "must use only letters, digits, '-', '_', '.'"


def _cpu_list(value: str) -> str | None:
    return None if CPU_LIST_PATTERN.match(value) else "must be a CPU list like \"0\" or \"1-3,5\""


def _key_dist(value: str) -> str | None:
    if value in ("uniform", "sequential") or ZIPF_PATTERN.match(value):
        return None
    return "is not allowed; allowed: uniform, sequential, zipf:THETA (e.g. zipf:0.99)"


def _ratio(value: str) -> str | None:
    return None if RATIO_PATTERN.match(value) else "must be SET:GET, e.g. \"1:10\""


def _parse_server(path: Path, index: int, table: Any) -> ServerSpec:
    c = _Checker(path, f"server[{index}]", table)
    name = c.get("name", str, required=True, check=_name)
    kind = c.get("kind", str, required=True, allowed=("kvlab", "redis"))
    seed_engine = c.get("seed_engine", str, allowed=("sharded", "concurrent", "redis"))
    if kind == "redis":
        c.finish()
        return ServerSpec(name=name, kind=kind, seed_engine=seed_engine)
    engine = c.get("engine", str, required=True, allowed=ENGINES)
    io_threads = c.get("io_threads", int, check=_positive)
    shards = hop = stripes = None
    if engine == "sharded":
        shards = c.get("shards", int, check=_positive)
        hop = c.get("hop", str, allowed=("command", "batch"))
    if engine == "striped":
        stripes = c.get("stripes", int, check=_positive)
    c.finish()
    return ServerSpec(name=name, kind=kind, engine=engine, shards=shards, hop=hop,
                      stripes=stripes, io_threads=io_threads, seed_engine=seed_engine)


def _parse_sweep(path: Path, index: int, table: Any, server_names: tuple[str, ...]) -> SweepSpec:
    c = _Checker(path, f"sweep[{index}]", table)
    name = c.get("name", str, required=True, check=_name)
    seed = c.get("seed", str, allowed=SEEDS)
    servers = c.get_list("servers", str, server_names, allowed=server_names)
    values = {
        "loadgen": c.get_list("loadgen", str, ("kvlab-load",), allowed=LOADGENS),
        "transport": c.get_list("transport", str, ("tcp",), allowed=TRANSPORTS),
        "client": c.get_list("client", str, ("dedicated",), allowed=CLIENTS),
        "command": c.get_list("command", str, ("set", "get"), allowed=COMMANDS),
        "keys": c.get_list("keys", int, (100000,), check=_positive),
        "key_dist": c.get_list("key_dist", str, ("uniform",), check=_key_dist),
        "value_size": c.get_list("value_size", int, (64,), check=_positive),
        "pipeline": c.get_list("pipeline", int, (1,), check=_positive),
        "connections": c.get_list("connections", int, (8,), check=_positive),
        "nodelay": c.get_list("nodelay", str, ("on",), allowed=("on", "off")),
        "threads": c.get_list("threads", int, (1,), check=_positive),
    }
    ratio = c.get("ratio", str, "1:10", check=_ratio)
    duration = float(c.get("duration", (int, float), 1.0, check=_positive))
    warmup = float(c.get("warmup", (int, float), 0.25, check=_non_negative))
    repetitions = c.get("repetitions", int, 3, check=_positive)
    c.finish()
    if "redis-benchmark" in values["loadgen"]:
        where = f"sweep[{index}]"
        if values["client"] != ("dedicated",):
            c.fail(f"{where}.client", "redis-benchmark only has the dedicated strategy; "
                   "allowed with loadgen redis-benchmark: dedicated")
        bad = [x for x in values["command"] if x not in REDIS_BENCHMARK_COMMANDS]
        if bad:
            c.fail(f"{where}.command", f"{bad[0]!r} is not allowed with loadgen redis-benchmark; "
                   f"allowed: {', '.join(REDIS_BENCHMARK_COMMANDS)}")
        if values["key_dist"] != ("uniform",):
            c.fail(f"{where}.key_dist", "redis-benchmark draws keys uniformly; "
                   "allowed with loadgen redis-benchmark: uniform")
        if values["nodelay"] != ("on",):
            c.fail(f"{where}.nodelay", "redis-benchmark always sets TCP_NODELAY; "
                   "allowed with loadgen redis-benchmark: on")
    return SweepSpec(name=name, seed=seed, servers=servers, values=values, ratio=ratio,
                     duration=duration, warmup=warmup, repetitions=repetitions)


def _table_list(path: Path, data: dict, name: str) -> list:
    tables = data.get(name, [])
    if not isinstance(tables, list) or not tables:
        raise ExperimentError(f"{path}: {name}: at least one [[{name}]] table is required")
    return tables


def parse_experiment_text(text: str, path: Path) -> Experiment:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ExperimentError(f"{path}: not valid TOML: {error}") from None
    top = _Checker(path, "", data)
    top.seen.update({"experiment", "server", "sweep", "host", "placement"})
    top.finish()
    from .hosts import parse_hosts  # hosts builds on this module's checker
    hosts, placement = parse_hosts(path, data)
    c = _Checker(path, "experiment", data.get("experiment", {}))
    name = c.get("name", str, required=True, check=_name)
    description = c.get("description", str, "")
    server_cpus = c.get("server_cpus", str, check=_cpu_list)
    harness_cpus = c.get("harness_cpus", str, check=_cpu_list)
    remote_rtt_us = c.get("remote_rtt_us", int, 250, check=_positive)
    remote_rate_mbit = c.get("remote_rate_mbit", int, 0, check=_non_negative)
    c.finish()

    servers = tuple(_parse_server(path, i, t) for i, t in enumerate(_table_list(path, data, "server")))
    names = tuple(s.name for s in servers)
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate:
        raise ExperimentError(f"{path}: server.name: {duplicate!r} is used by two servers")
    sweeps = tuple(_parse_sweep(path, i, t, names)
                   for i, t in enumerate(_table_list(path, data, "sweep")))
    sweep_names = [s.name for s in sweeps]
    duplicate = next((n for n in sweep_names if sweep_names.count(n) > 1), None)
    if duplicate:
        raise ExperimentError(f"{path}: sweep.name: {duplicate!r} is used by two sweeps")
    return Experiment(path=path, text=text, name=name, description=description,
                      server_cpus=server_cpus, harness_cpus=harness_cpus,
                      remote_rtt_us=remote_rtt_us, remote_rate_mbit=remote_rate_mbit,
                      servers=servers, sweeps=sweeps, hosts=hosts, placement=placement)


def load_experiment(path: str | Path) -> Experiment:
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as error:
        raise ExperimentError(f"{path}: cannot read: {error.strerror}") from None
    return parse_experiment_text(text, path)
