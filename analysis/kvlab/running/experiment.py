"""Experiment files (workloads/*.toml): parsing and strict validation into the types of
kvlab.schema.specs (Experiment, ServerSpec, SweepSpec, CompareSpec; Experiment.points()
expands them into points).

An experiment names the servers to measure, and one or more sweeps. Every sweep
is a cartesian product of its variables; each combination is one *point*, which
the runner measures `repetitions` times. Unknown keys and bad values raise
ExperimentError naming the file, the key and what is allowed.

    [experiment]
    name = "quick"                   # required; letters, digits, '-', '_', '.'
    description = "..."              # optional
    server_cpus = "auto"             # auto (default) | a count ("4") | a CPU list ("0-3")
    harness_cpus = "auto"            # the same for the load generator; see cpus.py for the rule
    remote_rtt_us = 250              # round trip of the emulated link (transport "remote")
    remote_rate_mbit = 0             # optional bandwidth limit of that link (0 = none)

    precision = 0.02                 # optional: target half-width of each declared ratio's
                                     # 95% interval; rounds are added until it is met
    budget_s = 360                   # optional: with precision, stop adding rounds when the
                                     # next would end the run later than this (seconds)
    max_rounds = 40                  # optional: never more rounds than this (default 40)
    min_rounds = 10                  # optional: a ratio counts as resolved only over at
                                     # least this many rounds (default 10, or max_rounds
                                     # if that is smaller; why: declared_ratios.py)
    disturbance_cores = 0.05         # optional: foreign CPU (cores' worth) on the measured
                                     # CPUs above which a measurement is disturbed and re-run
    measurement = "alternate"        # optional: how declared comparisons are measured:
                                     # alternate (both sides up, the load switched between
                                     # them in ABBA slices; running/alternating.py) | rounds
                                     # (each side in its own window, one after the other)
    alternation_s = 2.0              # optional, alternate: seconds measured per round
    slice_s = 0.1                    # optional, alternate: seconds per slice
    cpu_idle = "poll"                # optional: poll (default: idle CPUs poll for the
                                     # run, a PM QoS request; a halted virtual CPU's
                                     # wake-up made modes) | kernel (the kernel's choice);
                                     # see running/cpu_idle.py

    [[compare]]                      # optional: a ratio the experiment exists for
    a = "concurrent"                 # the numerator: a value of `by`
    b = "sharded-hop-command"        # the denominator
    by = "server"                    # the point variable a and b are values of (default server)
    sweep = "p16"                    # optional: only this sweep's points
    tests = ["set", "get"]           # optional: only these commands
    where = { threads = 2 }          # optional: only points with these values
    seed_ratio = 1.13                # optional: the seed's figure, shown beside ours
    metric = "ops_per_s"             # optional: ops_per_s (default) | ops_per_server_cpu_s
                                     # (ops per second of server CPU: what a request costs
                                     # the server; see declared_ratios.py) | p50_us | p99_us
                                     # (latency percentiles, open loop at `rate`, lower is
                                     # better; measured by alternation only)
    rate = 10000                     # p50_us/p99_us only, required there: ops/s offered to
                                     # both sides (the same load, one side at a time)
    name = "concurrent/sharded"      # optional (default "A/B", "A/B per server CPU" for
                                     # ops_per_server_cpu_s)

    [[server]]
    name = "sharded-hop-command"     # required, unique
    kind = "kvlab"                   # kvlab | redis (Debian's redis-server) | redis-cluster
                                     # (N redis-servers with cluster-enabled, one pinned per
                                     # server CPU, the 16384 slots split evenly; driven with
                                     # kvlab-load --route slots, tcp only) | command (any
                                     # RESP server, from `command`) | command-cluster (N of
                                     # them in cluster mode, as redis-cluster)
    command = "valkey-server --port {port} --unixsocket {unix} --save ''"
                                     # command, command-cluster: the command line, a template
                                     # (placeholders: running/commands.py; docs/servers.md)
    version = "8.0.1"                # command*, optional: the build's label (else INFO
                                     # server's version, else --version); history series
                                     # of one label are one line (docs/servers.md)
    binary = "/opt/valkey/bin/valkey-server"  # command*, optional: the file that identifies
                                     # the build (default: the command's first word)
    start_timeout = 15               # command*, optional: seconds to answer PING
    engine = "sharded"               # kvlab only: single | sharded | concurrent | striped | owner
    shards = "auto"                  # sharded only; "auto" = the server's CPU count
    hop = "command"                  # sharded only: command | batch
    stripes = 64                     # striped only
    route = "slots"                  # owner only: none (default: the server hops for keys of
                                     # other threads) | slots (--shard-ports; kvlab-load reads
                                     # CLUSTER SLOTS and sends each key to its owner's port);
                                     # command: slots when the server answers CLUSTER SLOTS
                                     # itself (Dragonfly's emulated cluster)
    nodes = "auto"                   # redis-cluster, command-cluster: processes; "auto" =
                                     # the server's CPUs
    io_threads = "auto"              # kvlab: I/O threads; redis: Redis 7 io-threads (a second
                                     # reference row, dropped where the server has one CPU);
                                     # "auto" = the server's CPU count
    seed_engine = "sharded"          # optional: the seed table's engine this row stands beside
    multikey = "atomic"              # kvlab only: atomic (default, as Redis) | split (multi-key
                                     # commands torn into single-key operations: the price of
                                     # the promise, measured)
    stage_sample = 1000              # kvlab only: --stage-sample, every Nth read timed stage
                                     # by stage (INFO stages); 0 = off; default: the server's
    appendfsync = "everysec"         # kvlab, redis: keep an append-only log (--appendonly yes
                                     # --appendfsync always|everysec|no), in a folder of its
                                     # own inside the run folder, emptied at every start;
                                     # absent: no log. Each point's fsyncs and log bytes per
                                     # operation go to points.csv (running/durability.py)
    log_on_tmpfs = false             # with appendfsync: allow a log folder on tmpfs (where
                                     # fsync costs nothing); refused by default

    [[sweep]]
    name = "p16"                     # required, unique
    seed = "ember-pr50"              # optional: ember-pr50 | lettuce-threads (seed-shaped table)
    servers = ["sharded-hop-command"]  # optional; default: every server
    # each of the following takes one value or a list
    loadgen = "kvlab-load"           # kvlab-load | redis-benchmark
    transport = "tcp"                # unix | tcp | remote
    client = "dedicated"             # dedicated | pooled | shared
    io = "direct"                    # pooled/shared: direct | event-loop (Lettuce over Netty)
    threads = [1, 2, 4, 8]           # or "auto": 1, 2, 4, ... up to 2 x the harness's CPUs
    command = ["set", "get"]         # get | set | incrby | ping | mix | mset:N | mget:N |
                                     # multi-incr:N (MULTI, N INCRBYs, EXEC; needs dedicated
                                     # with one connection per thread) | ycsb:W (YCSB's core
                                     # workload W = load, A..F: keys is its recordcount,
                                     # value_size its field length, key_dist zipf:THETA its
                                     # zipfian, latest for D, or uniform; harness/workloads/ycsb.h)
    keys = [1, 1000000]
    key_dist = "uniform"             # uniform | sequential | zipf:THETA
    value_size = 64
    pipeline = 16
    connections = 50                 # or "auto": dedicated 50 in total (>= 1 per thread),
                                     # pooled 8 (commons-pool2's maxTotal), shared 1
    nodelay = "on"                   # on | off
    # scalars
    ratio = "1:10"                   # SET:GET, command "mix" only
    duration = 1.0                   # seconds per repetition
    warmup = 0.25                    # seconds before each point
    repetitions = 3                  # rounds (runner.py)
    loop_threads = 2                 # event-loop only (default: kvlab-load's cores)
    io_flush = "command"             # event-loop only: command (Lettuce's autoFlush) | batch
    latency_curve = [0.1, 0.5, 0.9]  # open loop at these fractions of each server's
                                     # closed-loop maximum (latency.py), after the point
    latency_slo_us = 1000            # the p99 a latency-capped throughput must stay under
    syscalls = true                  # after the rounds: each server's system calls per op
                                     # (kernel tracepoints via perf, else strace; a count, not a speed)

A point records what is run: a `shared` client always uses one connection, and
only `dedicated` clients pipeline (others run with pipeline 1).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from ..schema import kinds
from ..schema.specs import (CLUSTER_KINDS, COMMAND_KINDS, COMPARE_BY, COMPARE_METRICS,
                            DEFAULT_DISTURBANCE_CORES, DEFAULT_LATENCY_SLO_US,
                            DEFAULT_MAX_ROUNDS, DEFAULT_MEASUREMENT, DEFAULT_MIN_ROUNDS,
                            DEFAULT_START_TIMEOUT_S, LATENCY_QUANTILES, MEASUREMENTS,
                            POINT_VARIABLES, SEEDS, SERVER_KINDS, TRANSPORTS, CompareSpec,
                            Experiment, ServerSpec, SweepSpec, is_ycsb)
from ..schema.toml_checker import (AUTO, Checker, ExperimentError, at_least_two,
                                   non_negative, positive, positive_or_auto, valid_name)
from . import commands
from .cpu_idle import DEFAULT_MODE as DEFAULT_CPU_IDLE, MODES as CPU_IDLE_MODES
from .hosts import parse_hosts

# kvlab-load's commands (its --kinds: commands) are a single-key NAME, a multi-key
# NAME:N, ycsb:W (YCSB's load phase and workloads) or rb:TEST (redis-benchmark's own).
VALUE_SHAPE_PATTERN = re.compile(r"^(hash|list|set|zset):[1-9][0-9]{0,5}$")
REDIS_BENCHMARK_COMMANDS = ("get", "set", "ping")
CPU_LIST_PATTERN = re.compile(r"^\d+(-\d+)?(,\d+(-\d+)?)*$")
ZIPF_PATTERN = re.compile(r"^zipf:(\d+(\.\d*)?|\.\d+)$")
RATIO_PATTERN = re.compile(r"^\d+:\d+$")


def _fraction(value: float) -> str | None:
    return None if 0 < value <= 1 else "must be a fraction of the closed-loop maximum in (0, 1]"


def _slice(value: float) -> str | None:
    return None if 0.01 <= value <= 10 else "must be from 0.01 to 10 seconds"


def _cpu_spec(value: str | int) -> str | None:
    """"auto"; a count (an integer, or digits alone: "4" is four CPUs); or a CPU list with a
    '-' or ',' ("0-3", "1,5"; one CPU alone is "5-5")."""
    text = str(value)
    if text == AUTO or (text.isdigit() and int(text) >= 1) or (
            CPU_LIST_PATTERN.match(text) and not text.isdigit()):
        return None
    if text.isdigit():
        return "is a count of CPUs and must be >= 1 (CPU 0 alone is the list \"0-0\")"
    return ("must be \"auto\", a CPU count like \"4\" or a CPU list like \"0-3\" or \"1,5\" "
            "(one CPU alone: \"5-5\")")


def _is_multi_key(value: str) -> bool:
    name, _, count = value.partition(":")
    return (name in kinds.multi_key_commands() and count.isdigit() and count[0] != "0"
            and 1 <= int(count) <= kinds.max_keys_per_command())


def is_redis_benchmark_test(value: str) -> bool:
    """rb:TEST, TEST one of redis-benchmark's own tests that kvlab-load knows."""
    return value.startswith("rb:") and value[3:] in kinds.redis_benchmark_tests()


def _command(value: str) -> str | None:
    if (value in kinds.single_key_commands() or _is_multi_key(value) or is_ycsb(value)
            or is_redis_benchmark_test(value)):
        return None
    multi = ", ".join(f"{name}:N" for name in kinds.multi_key_commands())
    return (f"is not allowed; allowed: {', '.join(kinds.single_key_commands())}, "
            f"{multi} (N from 1 to {kinds.max_keys_per_command()}), "
            f"ycsb:W (W: {', '.join(kinds.ycsb_workloads())}), "
            f"rb:TEST (redis-benchmark's own tests, with loadgen redis-benchmark; TEST: "
            f"{', '.join(kinds.redis_benchmark_tests())})")


def _key_dist(value: str) -> str | None:
    if value in ("uniform", "sequential") or ZIPF_PATTERN.match(value):
        return None
    return "is not allowed; allowed: uniform, sequential, zipf:THETA (e.g. zipf:0.99)"


def _ratio(value: str) -> str | None:
    return None if RATIO_PATTERN.match(value) else "must be SET:GET, e.g. \"1:10\""


def _parse_server(path: Path, index: int, table: Any) -> ServerSpec:
    c = Checker(path, f"server[{index}]", table)
    name = c.get("name", str, required=True, check=valid_name)
    kind = c.get("kind", str, required=True, allowed=SERVER_KINDS)
    seed_engine = c.get("seed_engine", str, allowed=("sharded", "concurrent", "redis"))
    if kind in COMMAND_KINDS:
        return _parse_command_server(c, name, kind, seed_engine)
    if kind == "redis-cluster":
        nodes = c.get("nodes", (int, str), AUTO, check=positive_or_auto)
        c.finish()
        return ServerSpec(name=name, kind=kind, nodes=nodes, seed_engine=seed_engine)
    io_threads = c.get("io_threads", (int, str), check=positive_or_auto)
    appendfsync, log_on_tmpfs = _parse_log(c, name)
    if kind == "redis":
        c.finish()
        return ServerSpec(name=name, kind=kind, io_threads=io_threads, seed_engine=seed_engine,
                          appendfsync=appendfsync, log_on_tmpfs=log_on_tmpfs)
    engine = c.get("engine", str, required=True, allowed=kinds.engines())
    options = kinds.engine_options(engine)
    shards = hop = stripes = route = None
    if "shards" in options:
        shards = c.get("shards", (int, str), check=positive_or_auto)
    if "hop" in options:
        hop = c.get("hop", str, allowed=kinds.hops())
    if "stripes" in options:
        stripes = c.get("stripes", int, check=positive)
    if "route" in options:
        route = c.get("route", str, allowed=kinds.routes())
    multikey = c.get("multikey", str, allowed=kinds.multikey_modes())
    stage_sample = c.get("stage_sample", int, check=non_negative)
    c.finish()
    return ServerSpec(name=name, kind=kind, engine=engine, shards=shards, hop=hop,
                      stripes=stripes, io_threads=io_threads, seed_engine=seed_engine,
                      multikey=multikey, route=route, stage_sample=stage_sample,
                      appendfsync=appendfsync, log_on_tmpfs=log_on_tmpfs)


def _parse_log(c: Checker, name: str) -> tuple[str | None, bool]:
    """A kvlab or redis row's append-only log: its appendfsync policy (None: no log) and
    whether its folder may be on tmpfs. A bad value is refused naming the row."""
    policies = kinds.appendfsync_policies()

    def policy(value: str) -> str | None:
        return None if value in policies else (
            f"is not allowed for server {name!r}; allowed: {', '.join(policies)}")
    appendfsync = c.get("appendfsync", str, check=policy)
    log_on_tmpfs = c.get("log_on_tmpfs", bool, False)
    if log_on_tmpfs and appendfsync is None:
        c.fail(c.key("log_on_tmpfs"), f"server {name!r} keeps no log: log_on_tmpfs goes "
               "with appendfsync")
    return appendfsync, log_on_tmpfs


def _parse_command_server(c: Checker, name: str, kind: str,
                          seed_engine: str | None) -> ServerSpec:
    cluster = kind == "command-cluster"

    def template(value: str) -> str | None:
        problem = commands.template_problem(value, cluster)
        return f"(server {name!r}) {problem}" if problem else None
    command = c.get("command", str, required=True, check=template)
    version = c.get("version", str, check=lambda v: None if v.strip() else "must not be empty")
    binary = c.get("binary", str)
    start_timeout = float(c.get("start_timeout", (int, float), DEFAULT_START_TIMEOUT_S,
                                check=positive))
    io_threads = c.get("io_threads", (int, str), check=positive_or_auto)
    nodes = route = None
    if cluster:
        nodes = c.get("nodes", (int, str), AUTO, check=positive_or_auto)
    else:
        route = c.get("route", str, allowed=kinds.routes())
    c.finish()
    if cluster and "unix" not in commands.placeholders_of(command):
        c.fail(c.key("command"), f"(server {name!r}) a command-cluster node is joined and "
               "given its slots over its Unix socket: put {unix} in the command")
    if io_threads is None and "io_threads" in commands.placeholders_of(command):
        io_threads = AUTO
    return ServerSpec(name=name, kind=kind, command=command, version=version, binary=binary,
                      start_timeout=start_timeout, io_threads=io_threads, nodes=nodes,
                      route=route, seed_engine=seed_engine)


def _check_command_transports(path: Path, servers: tuple[ServerSpec, ...],
                              sweeps: tuple[SweepSpec, ...]) -> None:
    """A command row without {unix} has no Unix socket: a sweep that measures it over
    transport unix is refused, naming both."""
    for index, server in enumerate(servers):
        if not server.is_command or "unix" in commands.placeholders_of(server.command):
            continue
        for sweep in sweeps:
            if server.name in sweep.servers and "unix" in sweep.values["transport"]:
                raise ExperimentError(
                    f"{path}: server[{index}].command: server {server.name!r} has no {{unix}} "
                    f"in its command, and sweep {sweep.name!r} measures it over transport "
                    "unix: add --unixsocket {unix} (or the server's own option), or leave "
                    "unix out of that sweep")


def _parse_sweep(path: Path, index: int, table: Any, server_names: tuple[str, ...]) -> SweepSpec:
    c = Checker(path, f"sweep[{index}]", table)
    name = c.get("name", str, required=True, check=valid_name)
    seed = c.get("seed", str, allowed=SEEDS)
    servers = c.get_list("servers", str, server_names, allowed=server_names)
    values = {
        "loadgen": c.get_list("loadgen", str, ("kvlab-load",), allowed=kinds.choices("loadgen")),
        "transport": c.get_list("transport", str, ("tcp",), allowed=TRANSPORTS),
        "client": c.get_list("client", str, ("dedicated",), allowed=kinds.clients()),
        "io": c.get_list("io", str, ("direct",), allowed=kinds.choices("io")),
        "command": c.get_list("command", str, ("set", "get"), check=_command),
        "keys": c.get_list("keys", int, (100000,), check=positive),
        "key_dist": c.get_list("key_dist", str, ("uniform",), check=_key_dist),
        "value_size": c.get_list("value_size", int, (64,), check=positive),
        "pipeline": c.get_list("pipeline", int, (1,), check=positive),
        "connections": c.get_list("connections", (int, str), (8,), check=positive_or_auto),
        "nodelay": c.get_list("nodelay", str, ("on",), allowed=("on", "off")),
        "threads": c.get_list("threads", (int, str), (1,), check=positive_or_auto),
    }
    ratio = c.get("ratio", str, "1:10", check=_ratio)
    duration = float(c.get("duration", (int, float), 1.0, check=positive))
    warmup = float(c.get("warmup", (int, float), 0.25, check=non_negative))
    repetitions = c.get("repetitions", int, 3, check=positive)
    loop_threads = c.get("loop_threads", int, check=positive)
    io_flush = c.get("io_flush", str, "command", allowed=kinds.choices("io_flush"))
    latency_curve = tuple(float(f) for f in c.get_list(
        "latency_curve", (int, float), (), check=_fraction))
    latency_slo_us = float(c.get("latency_slo_us", (int, float), DEFAULT_LATENCY_SLO_US, check=positive))
    syscalls = c.get("syscalls", bool, False)
    value_shape = c.get("value_shape", str, "string")
    c.finish()
    if value_shape != "string":
        where = f"sweep[{index}]"
        if not VALUE_SHAPE_PATTERN.match(value_shape):
            c.fail(f"{where}.value_shape", f"{value_shape!r} is not allowed; allowed: string, "
                   "hash:N, list:N, set:N, zset:N")
        if values["command"] != ("ping",) or values["loadgen"] != ("kvlab-load",):
            c.fail(f"{where}.value_shape", "a container fill is measured for its memory: "
                   "allowed with command = \"ping\" and loadgen kvlab-load only")
    if "redis-benchmark" in values["loadgen"]:
        where = f"sweep[{index}]"
        own = kinds.redis_benchmark_clients()
        if any(client not in own for client in values["client"]):
            c.fail(f"{where}.client", f"redis-benchmark only has the {' and '.join(own)} "
                   f"strategy; allowed with loadgen redis-benchmark: {', '.join(own)}")
        bad = [x for x in values["command"]
               if x not in REDIS_BENCHMARK_COMMANDS and not is_redis_benchmark_test(x)]
        if bad:
            c.fail(f"{where}.command", f"{bad[0]!r} is not allowed with loadgen redis-benchmark; "
                   f"allowed: {', '.join(REDIS_BENCHMARK_COMMANDS)}, rb:TEST")
        if values["key_dist"] != ("uniform",):
            c.fail(f"{where}.key_dist", "redis-benchmark draws keys uniformly; "
                   "allowed with loadgen redis-benchmark: uniform")
        if values["nodelay"] != ("on",):
            c.fail(f"{where}.nodelay", "redis-benchmark always sets TCP_NODELAY; "
                   "allowed with loadgen redis-benchmark: on")
    if "kvlab-load" in values["loadgen"] and any(is_redis_benchmark_test(x)
                                                 for x in values["command"]):
        c.fail(f"sweep[{index}].command", "rb:TEST is one of redis-benchmark's own tests; "
               "allowed with loadgen redis-benchmark only")
    if any(is_ycsb(x) for x in values["command"]) and "sequential" in values["key_dist"]:
        c.fail(f"sweep[{index}].key_dist", "YCSB draws its own keys; allowed with ycsb:W: "
               "zipf:THETA (its zipfian, latest for D) or uniform")
    if latency_curve and values["loadgen"] != ("kvlab-load",):
        c.fail(f"sweep[{index}].latency_curve", "needs loadgen kvlab-load (open loop)")
    return SweepSpec(name=name, seed=seed, servers=servers, values=values, ratio=ratio,
                     duration=duration, warmup=warmup, repetitions=repetitions,
                     loop_threads=loop_threads, io_flush=io_flush, latency_curve=latency_curve,
                     latency_slo_us=latency_slo_us, syscalls=syscalls, value_shape=value_shape)


def _parse_compare(path: Path, index: int, table: Any, servers: tuple[ServerSpec, ...],
                   sweeps: tuple[SweepSpec, ...]) -> CompareSpec:
    c = Checker(path, f"compare[{index}]", table)
    by = c.get("by", str, "server", allowed=COMPARE_BY)
    allowed = {"server": tuple(s.name for s in servers), "client": kinds.clients(),
               "io": kinds.choices("io"),
               "transport": TRANSPORTS, "nodelay": ("on", "off"), "loadgen": kinds.choices("loadgen"),
               "command": None}[by]
    check = _command if by == "command" else None
    a = c.get("a", str, required=True, allowed=allowed, check=check)
    b = c.get("b", str, required=True, allowed=allowed, check=check)
    if a == b:
        c.fail(c.key("b"), f"{b!r} is also a: a comparison needs two different values")
    sweep = c.get("sweep", str, allowed=tuple(s.name for s in sweeps))
    tests = c.get_list("tests", str, (), check=_command)
    metric = c.get("metric", str, "ops_per_s", allowed=tuple(COMPARE_METRICS))
    rate = c.get("rate", (int, float), check=positive)
    if metric in LATENCY_QUANTILES and rate is None:
        c.fail(c.key("rate"), f"metric {metric} needs the ops/s offered to both sides "
               "(open loop), e.g. rate = 10000")
    if rate is not None and metric not in LATENCY_QUANTILES:
        c.fail(c.key("rate"), "applies to the latency metrics only ("
               + ", ".join(LATENCY_QUANTILES) + ")")
    suffix = {"ops_per_s": "", "ops_per_server_cpu_s": " per server CPU"}.get(
        metric, f" {metric.removesuffix('_us')} at {rate or 0:g} ops/s")
    name = c.get("name", str, f"{a}/{b}{suffix}")
    seed_ratio = c.get("seed_ratio", (int, float), check=positive)
    raw_where = c.get("where", dict, {})
    where = []
    for variable, value in raw_where.items():
        if variable not in POINT_VARIABLES or variable == by:
            c.fail(c.key(f"where.{variable}"), "unknown key; allowed here: "
                   + ", ".join(v for v in POINT_VARIABLES if v != by))
        values = value if isinstance(value, list) else [value]
        where.append((variable, tuple(values)))
    c.finish()
    return CompareSpec(name=name, by=by, a=a, b=b, sweep=sweep, tests=tests,
                       where=tuple(where),
                       seed_ratio=float(seed_ratio) if seed_ratio is not None else None,
                       metric=metric, rate=float(rate) if rate is not None else None)


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
    try:
        return _parse_experiment(data, text, path)
    except kinds.KindsUnavailable as error:
        raise ExperimentError(f"{path}: cannot be checked without kvlab's binaries, "
                              f"which own the engine and client kinds: {error}") from None


def _parse_experiment(data: dict, text: str, path: Path) -> Experiment:
    top = Checker(path, "", data)
    top.seen.update({"experiment", "server", "sweep", "compare", "host", "placement"})
    top.finish()
    c = Checker(path, "experiment", data.get("experiment", {}))
    name = c.get("name", str, required=True, check=valid_name)
    description = c.get("description", str, "")
    server_cpus = str(c.get("server_cpus", (str, int), AUTO, check=_cpu_spec))
    harness_cpus = str(c.get("harness_cpus", (str, int), AUTO, check=_cpu_spec))
    remote_rtt_us = c.get("remote_rtt_us", int, 250, check=positive)
    remote_rate_mbit = c.get("remote_rate_mbit", int, 0, check=non_negative)
    precision = c.get("precision", float, check=positive)
    budget_s = c.get("budget_s", (int, float), check=positive)
    max_rounds = c.get("max_rounds", int, DEFAULT_MAX_ROUNDS, check=positive)
    min_rounds = c.get("min_rounds", int, check=at_least_two)
    if min_rounds is None:
        min_rounds = min(DEFAULT_MIN_ROUNDS, max_rounds)
    elif min_rounds > max_rounds:
        raise ExperimentError(f"{path}: experiment.min_rounds: {min_rounds} is more than "
                              f"max_rounds ({max_rounds})")
    disturbance_cores = float(c.get("disturbance_cores", (int, float),
                                    DEFAULT_DISTURBANCE_CORES, check=positive))
    measurement = c.get("measurement", str, DEFAULT_MEASUREMENT, allowed=MEASUREMENTS)
    slice_s = float(c.get("slice_s", (int, float), 0.1, check=_slice))
    alternation_s = float(c.get("alternation_s", (int, float), 2.0, check=positive))
    cpu_idle = c.get("cpu_idle", str, DEFAULT_CPU_IDLE, allowed=CPU_IDLE_MODES)
    if alternation_s < 4 * slice_s:
        raise ExperimentError(f"{path}: experiment.alternation_s: {alternation_s:g} is less "
                              f"than one ABBA cycle of 4 slices ({4 * slice_s:g} s)")
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
    _check_command_transports(path, servers, sweeps)
    hosts, placement = parse_hosts(path, data, sweeps)
    clustered = next((i for i, spec in enumerate(servers) if spec.kind in CLUSTER_KINDS), None)
    logged = next((i for i, spec in enumerate(servers) if spec.appendfsync), None)
    if placement is not None and logged is not None:
        raise ExperimentError(f"{path}: server[{logged}].appendfsync: server "
                              f"{servers[logged].name!r}: a log is kept on this machine only "
                              "(its folder is inside the run folder); not with [placement]")
    if placement is not None and clustered is not None:
        raise ExperimentError(f"{path}: server[{clustered}].kind: {servers[clustered].kind!r} "
                              "cannot be placed on hosts (one process per node here only); "
                              "allowed with [placement]: kvlab, redis, command")
    compare_tables = data.get("compare", [])
    if not isinstance(compare_tables, list):
        raise ExperimentError(f"{path}: compare: must be [[compare]] tables")
    comparisons = tuple(_parse_compare(path, i, t, servers, sweeps)
                        for i, t in enumerate(compare_tables))
    latency = next((i for i, spec in enumerate(comparisons) if spec.latency), None)
    if latency is not None and measurement != "alternate":
        raise ExperimentError(f"{path}: compare[{latency}].metric: latency comparisons are "
                              "measured by alternation only (measurement = \"alternate\")")
    return Experiment(path=path, text=text, name=name, description=description,
                      server_cpus=server_cpus, harness_cpus=harness_cpus,
                      remote_rtt_us=remote_rtt_us, remote_rate_mbit=remote_rate_mbit,
                      servers=servers, sweeps=sweeps, comparisons=comparisons,
                      precision=precision, budget_s=budget_s, max_rounds=max_rounds,
                      min_rounds=min_rounds,
                      disturbance_cores=disturbance_cores, measurement=measurement,
                      alternation_s=alternation_s, slice_s=slice_s, cpu_idle=cpu_idle,
                      hosts=hosts, placement=placement)


def load_experiment(path: str | Path) -> Experiment:
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as error:
        raise ExperimentError(f"{path}: cannot read: {error.strerror}") from None
    return parse_experiment_text(text, path)
