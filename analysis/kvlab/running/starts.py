"""`python3 -m kvlab starts`: how much one configuration's throughput depends on its
process start, against redis-server as the machine's control.

N rounds; in each, every named server is started afresh (in a shuffled order, so the
servers' starts interleave and a drift of the machine hits all of them alike), with
its layout randomized (layout.py: ASLR, a random environment padding), pinned to one
CPU, and loaded by kvlab-load on the other CPUs for a short window (P16 SET of one key
over the Unix socket, by default: the sharded engine's bimodal case). Each start
records its rate, what an operation cost the server (CPU µs, context switches) and its
layout's fingerprint. Then, per server (for ops/s, and for ops per second of server
CPU, which a busy machine moves less): the sorted per-start
rates, the largest gap between neighbours over the median, the slowest-to-fastest
spread, the modes found (measures/modes.py), and whether the engine's starts are as
steady as redis-server's: no gap above 5% of the median or above redis-server's own
largest gap plus 2 points, and a spread at most 5 points above redis-server's (the
issue's bar for "fast in every layout"; the exit status follows ops/s, and the same bar
is printed for ops per server CPU second).

`--no-aslr` starts every process under `setarch -R` (no randomization), `--pad N`
fixes the padding and `--mmap-shift-pages N` moves the mmap base (libraries, thread
stacks, malloc arenas) by a random number of pages, to tell apart what moves a start's
mode. (Linux 6.x places mappings of 2 MiB or more at 2 MiB boundaries: libstdc++, the
thread stacks and the arenas then move in 2 MiB steps, and the small libraries with
them.)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..measures import modes
from ..schema.specs import ServerSpec
from . import cpu_idle
from .cpus import parse_cpu_list
from .layout import fingerprint, maps_bases
from .loadgens import LoadgenMissing, Watch, wake_cost
from .servers import ServerError, ServerProcess, info_unix

REFERENCE = "redis"
# name -> the server's spec (one I/O thread, one shard: the whole server on one CPU)
SERVERS = {
    "sharded-hop-command": ServerSpec("sharded-hop-command", "kvlab", "sharded", shards=1,
                                      hop="command", io_threads=1),
    "sharded-hop-batch": ServerSpec("sharded-hop-batch", "kvlab", "sharded", shards=1,
                                    hop="batch", io_threads=1),
    "single": ServerSpec("single", "kvlab", "single"),
    "concurrent": ServerSpec("concurrent", "kvlab", "concurrent", io_threads=1),
    "striped": ServerSpec("striped", "kvlab", "striped", io_threads=1),
    "owner": ServerSpec("owner", "kvlab", "owner", io_threads=1),
    REFERENCE: ServerSpec(REFERENCE, "redis"),
}
# A server name with this suffix starts under setarch -R: both in one run, interleaved.
NO_ASLR = "@R"
DEFAULT_SERVERS = ("sharded-hop-command", "single", "concurrent", "striped", "owner")
# The bar: a gap between neighbouring starts and the slowest-to-fastest spread.
# The kernel's least gap between the stack's top and the mmap base (mm/util.c MIN_GAP).
MMAP_GAP_MIN_BYTES = 128 * 1024 * 1024
GAP_LIMIT = 0.05
GAP_ALLOWANCE = 0.02
SPREAD_ALLOWANCE = 0.05


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--servers", default=",".join(DEFAULT_SERVERS),
                        help=f"comma-separated, of {', '.join(SERVERS)} (redis-server, the "
                             f"control, is always added); NAME{NO_ASLR}: NAME under setarch -R, "
                             "interleaved with the others")
    parser.add_argument("--starts", type=int, default=16, help="fresh starts per server")
    parser.add_argument("--seconds", type=float, default=1.0, help="measured per start")
    parser.add_argument("--warmup", type=float, default=0.3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--connections", type=int, default=50, help="in all (the seed's 50)")
    parser.add_argument("--pipeline", type=int, default=16)
    parser.add_argument("--command", default="set")
    parser.add_argument("--keys", type=int, default=1)
    parser.add_argument("--server-cpu", default=None,
                        help="the server's CPU (default: the last this process may use)")
    parser.add_argument("--client-cpus", default=None,
                        help="kvlab-load's CPUs (default: the others)")
    parser.add_argument("--no-aslr", action="store_true",
                        help="start servers under `setarch -R` (no address randomization)")
    parser.add_argument("--pad", type=int, default=None,
                        help="a fixed environment padding in bytes (default: random per start)")
    parser.add_argument("--disturbed-above", type=float, default=0.1,
                        help="a start whose measured CPUs others used more than this many "
                             "cores of is measured again")
    parser.add_argument("--cpu-idle", choices=cpu_idle.MODES, default=cpu_idle.DEFAULT_MODE,
                        help="poll: idle CPUs poll for the whole run (a PM QoS request; "
                             "running/cpu_idle.py) | kernel: the kernel's choice (a virtual "
                             "CPU halts, and waking it costs a trip through the hypervisor)")
    parser.add_argument("--retries", type=int, default=2,
                        help="how often a disturbed start is measured again")
    parser.add_argument("--mmap-shift-pages", type=int, default=0,
                        help="move the mmap base (libraries, thread stacks, arenas) by a "
                             "random 0..N pages per start, through the stack limit (with "
                             "--no-aslr: that placement alone varies)")
    parser.add_argument("--json", type=Path, default=None,
                        help="write every start's rate and fingerprint here")
    parser.add_argument("--seed", type=int, default=None, help="the order's random seed")
    parser.add_argument("--build", type=Path, default=None,
                        help="kvlab's build folder (default: $KVLAB_BUILD_DIR, else build)")


def _cpus(args: argparse.Namespace) -> tuple[str, str]:
    allowed = sorted(os.sched_getaffinity(0))
    server = args.server_cpu or str(allowed[-1])
    client = args.client_cpus or ",".join(str(c) for c in allowed if str(c) != server) or server
    return server, client


def with_levers(command: list[str], no_aslr: bool, mmap_shift_pages: int | None) -> list[str]:
    """`command` under the layout levers: without address randomization (setarch -R),
    and with the mmap base (libraries, thread stacks, malloc's thread arenas) moved down
    by whole pages (mappings of 2 MiB or more snap to 2 MiB boundaries below it). The kernel puts the mmap base a stack limit below the stack's top,
    at least MMAP_GAP_MIN_BYTES: a limit above that moves it, and nothing else."""
    if mmap_shift_pages is not None:
        limit = MMAP_GAP_MIN_BYTES + mmap_shift_pages * 4096
        command = ["prlimit", f"--stack={limit}:{limit}"] + command
    if no_aslr:
        command = ["setarch", platform.machine(), "-R"] + command
    return command


def measure_start(name: str, build: Path, work: Path, args: argparse.Namespace,
                  server_cpu: str, client_cpus: str, index: int) -> dict:
    """One fresh start of server `name` (with NO_ASLR: under setarch -R): its rate
    (ops/s), its cost per operation and its fingerprint."""
    spec = SERVERS[name.removesuffix(NO_ASLR)]
    measured = parse_cpu_list(f"{server_cpu},{client_cpus}")
    log = work / f"{spec.name}.log"
    server = ServerProcess(spec, build, work, log, server_cpu)
    shift = random.randrange(args.mmap_shift_pages + 1) if args.mmap_shift_pages else None
    server.command = with_levers(server.command, args.no_aslr or name.endswith(NO_ASLR),
                                 shift)
    server.fixed_pad = args.pad
    server.start()
    try:
        info = info_unix(server.control, "kvlab") if spec.kind == "kvlab" else {}
        record = {"server": name, "start": index, "pad": server.env_pad,
                  "mmap_shift_pages": shift,
                  **fingerprint(server.pid, info), "bases": maps_bases(server.pid)}
        csv_path = work / f"{spec.name}-{index}.csv"
        command = ["taskset", "-c", client_cpus, str(build / "kvlab-load"),
                   "--target", f"unix://{server.unix_socket}", "--client", "dedicated",
                   "--threads", str(args.threads), "--connections", str(args.connections),
                   "--pipeline", str(args.pipeline), "--command", args.command,
                   "--keys", str(args.keys), "--duration", f"{args.seconds:g}",
                   "--warmup", f"{args.warmup:g}", "--repeat", "1", "--csv", str(csv_path),
                   "--json", str(work / f"{spec.name}-{index}.json")] + Watch(
                       measured_cpus=tuple(measured),
                       own_pids=tuple(server.pids), wake_cost_us=getattr(args, "wake_cost_us", None)).arguments()
        idle_before = cpu_idle.idle_states(measured)
        began = time.monotonic()
        done = subprocess.run(command, capture_output=True, text=True,
                              timeout=args.seconds + args.warmup + 60)
        halted = cpu_idle.halts(idle_before, cpu_idle.idle_states(measured))
        # Halts of the measured CPUs a second over the whole kvlab-load (its warm-up
        # too): each costs a wake-up through the hypervisor on a VM (cpu_idle.py).
        record["cpu_halts_per_s"] = (halted / (time.monotonic() - began)
                                     if halted is not None else math.nan)
        if done.returncode != 0:
            raise ServerError(f"kvlab-load against {spec.name} exited with status "
                              f"{done.returncode}: {(done.stderr or done.stdout).strip()[-300:]}")
        lines = csv_path.read_text().splitlines()
        row = dict(zip(lines[0].split(","), lines[1].split(",")))
        record["ops_per_s"] = float(row["ops_per_s"])
        for name in ("server_cpu_us_per_op", "server_ctx_switches_per_op", "foreign_cpu"):
            record[name] = _number(row.get(name))
        # what an operation costs the server: moves less than ops/s with other work
        # competing for the CPU (a busy machine takes time, not cycles per operation)
        cost = record["server_cpu_us_per_op"]
        record["ops_per_server_cpu_s"] = 1e6 / cost if cost > 0 else math.nan
        record["cpu_halts_per_op"] = record["cpu_halts_per_s"] / record["ops_per_s"] \
            if record["ops_per_s"] > 0 else math.nan
        return record
    finally:
        server.stop()


def _number(text: str | None) -> float:
    try:
        return float(text) if text not in (None, "", "n/a") else math.nan
    except ValueError:
        return math.nan


def summary(rates: list[float]) -> dict:
    """Sorted rates, median, largest gap over the median, spread, and the modes."""
    found = modes.find_modes(rates)
    return {"rates": sorted(rates), "median": statistics.median(rates),
            "largest_gap": modes.largest_gap(rates), "spread": modes.spread(rates),
            "modes": found.text()}


def steady(engine: dict, reference: dict) -> tuple[bool, str]:
    """The issue's bar for an engine's starts against redis-server's."""
    gap_bar = max(GAP_LIMIT, reference["largest_gap"] + GAP_ALLOWANCE)
    spread_bar = reference["spread"] + SPREAD_ALLOWANCE
    ok = engine["largest_gap"] <= gap_bar and engine["spread"] <= spread_bar
    return ok, (f"largest gap {engine['largest_gap']:.1%} (bar {gap_bar:.1%}), spread "
                f"{engine['spread']:.1%} (bar {spread_bar:.1%})")


def _short(rate: float) -> str:
    return f"{rate / 1e6:.3f}M" if rate >= 1e6 else f"{rate / 1e3:.0f}k"


def main(args: argparse.Namespace) -> int:
    build = Path(args.build or os.environ.get("KVLAB_BUILD_DIR") or "build").resolve()
    names = [n.strip() for n in args.servers.split(",") if n.strip()]
    unknown = [n for n in names if n.removesuffix(NO_ASLR) not in SERVERS]
    if unknown:
        print(f"kvlab starts: unknown server(s) {', '.join(unknown)}; known: "
              f"{', '.join(SERVERS)}", file=sys.stderr)
        return 2
    if REFERENCE not in names:
        names.append(REFERENCE)
    server_cpu, client_cpus = _cpus(args)
    measured = parse_cpu_list(f"{server_cpu},{client_cpus}")
    hold = cpu_idle.IdleHold(args.cpu_idle)
    hold.take()  # released when this process ends
    # Measured once (cached per boot), not by each start's kvlab-load (3 s each).
    try:
        args.wake_cost_us = wake_cost(build, measured,
                                      idle=hold.regime())["wake_cost_us"]
    except (LoadgenMissing, OSError, ValueError, subprocess.TimeoutExpired) as error:
        print(f"kvlab starts: {error}", file=sys.stderr)
        return 1
    order = random.Random(args.seed)
    records: list[dict] = []
    disturbed = 0   # starts measured again because others used the measured CPUs
    began = time.monotonic()
    print(f"{args.starts} starts each of {', '.join(names)}: server on CPU {server_cpu}, "
          f"kvlab-load on {client_cpus}, {args.command.upper()} P{args.pipeline} keys="
          f"{args.keys}, {args.seconds:g} s after {args.warmup:g} s; "
          f"{'ASLR off (setarch -R)' if args.no_aslr else 'ASLR on'}, padding "
          f"{args.pad if args.pad is not None else 'random'}; wake-up cost "
          f"{args.wake_cost_us:.2f} us per sleep; {hold.why}; load average "
          f"{os.getloadavg()[0]:.2f}", flush=True)
    with tempfile.TemporaryDirectory(prefix="kvlab-starts-") as folder:
        for index in range(args.starts):
            for name in order.sample(names, len(names)):
                for attempt in range(args.retries + 1):
                    try:
                        record = measure_start(name, build, Path(folder), args,
                                               server_cpu, client_cpus, index)
                    except (ServerError, OSError, subprocess.TimeoutExpired) as error:
                        print(f"kvlab starts: {name} start {index}: {error}", file=sys.stderr)
                        return 1
                    record["disturbed"] = not record["foreign_cpu"] <= args.disturbed_above
                    if not record["disturbed"]:
                        break
                    disturbed += 1
                records.append(record)
    results = {name: summary([r["ops_per_s"] for r in records if r["server"] == name])
               for name in names}
    per_cpu = {}
    for name in names:
        costs = [r["ops_per_server_cpu_s"] for r in records if r["server"] == name]
        if costs and all(math.isfinite(c) for c in costs):
            per_cpu[name] = summary(costs)
    for name in names:
        for title, table in (("ops/s", results), ("ops per server CPU second", per_cpu)):
            if name not in table:
                continue
            s = table[name]
            print(f"\n{name}, {title}: median {_short(s['median'])}, largest gap "
                  f"{s['largest_gap']:.1%} of the median, spread {s['spread']:.1%}, "
                  f"{s['modes']}")
            print("  sorted: " + " ".join(_short(r) for r in s["rates"]))
    print()
    failed = False
    for name in names:
        if name.removesuffix(NO_ASLR) == REFERENCE:
            continue
        ok, text = steady(results[name], results[REFERENCE])
        failed = failed or not ok
        print(f"{name}: {'steady' if ok else 'NOT steady'} against {REFERENCE}: {text}")
        if name in per_cpu and REFERENCE in per_cpu:
            cpu_ok, cpu_text = steady(per_cpu[name], per_cpu[REFERENCE])
            print(f"  per server CPU second: {'steady' if cpu_ok else 'NOT steady'}: "
                  f"{cpu_text}")
    for name in names:
        halts = [r["cpu_halts_per_op"] for r in records
                 if r["server"] == name and math.isfinite(r.get("cpu_halts_per_op", math.nan))]
        if halts:
            print(f"{name}: halts of the measured CPUs per operation, median "
                  f"{statistics.median(halts):.3f} (from {min(halts):.3f} to {max(halts):.3f})")
    kept_disturbed = sum(r["disturbed"] for r in records)
    foreign = statistics.median([r["foreign_cpu"] for r in records
                                 if math.isfinite(r["foreign_cpu"])] or [math.nan])
    print(f"\n{len(records)} starts in {time.monotonic() - began:.0f} s; load average "
          f"{os.getloadavg()[0]:.2f}; others used a median {foreign:.2f} cores of the measured "
          f"CPUs; {disturbed} starts measured again for it, {kept_disturbed} still above "
          f"{args.disturbed_above:g} cores after {args.retries} retries (kept, counted)")
    if args.json:
        args.json.write_text(json.dumps({"arguments": {k: str(v) for k, v in vars(args).items()},
                                         "cpu_idle": hold.describe(
                                             measured),
                                         "starts": records, "summary": results,
                                         "summary_per_server_cpu": per_cpu}, indent=1))
    return 1 if failed else 0
