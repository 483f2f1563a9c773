"""The two load generators a point can be measured with, behind one call shape.

- kvlab-load (the project's harness): one invocation per point; it writes the
  points.csv rows themselves, one per repetition: the point's variables (passed
  as `--label name=value`) and then its measured columns, whose names, kinds and
  meanings only kvlab-load declares (`kvlab-load --schema`, harness/point_record.h).
  It also watches the measured CPUs for interference and the server's costs per
  operation, and says `disturbed` in the row's status (and writes a JSON file with
  the latency histograms).
- redis-benchmark (Debian's): one invocation per repetition, covering all the
  commands of a point group at once (`-t set,get`), with `-n` sized so that
  each test lasts about the point's duration (a first, calibrating run is the
  warm-up). Its CSV gives ops/s, p50, p99 and max; p90 and p99.9 are left
  blank, and errors are unknown (blank): nothing is made up.

Both return rows keyed by the point record's column names (strings, "" for unknown)
and an error message when the run failed (the rows that completed are still returned).
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import io
import json
import os
import resource
import shutil
import subprocess
import time
from pathlib import Path

from .experiment import Point
from .servers import launch_prefix

CLIENT_BOUND_FRACTION = 0.9


@dataclasses.dataclass
class LoadResult:
    rows: list[dict[str, str]]
    error: str | None = None


class LoadgenMissing(Exception):
    """kvlab-load is not built: no point can be measured and no row header is known."""


@functools.lru_cache(maxsize=8)
def point_schema(build_dir: Path) -> dict:
    """`kvlab-load --schema`: {"format": version, "columns": [{name, kind, meaning}]}."""
    binary = Path(build_dir) / "kvlab-load"
    if not binary.exists():
        raise LoadgenMissing(f"{binary} not found (build it: make build)")
    done = subprocess.run([str(binary), "--schema"], capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        raise LoadgenMissing(f"{binary} --schema exited with status {done.returncode}: "
                             f"{_tail(done.stderr)}")
    return json.loads(done.stdout)


def row_columns(schema: dict, labels) -> list[str]:
    """A row's columns as kvlab-load writes them: the labels', then the measured ones
    no label took."""
    labels = list(labels)
    return labels + [c["name"] for c in schema["columns"] if c["name"] not in labels]


def label_arguments(labels: dict) -> list[str]:
    """kvlab-load arguments that make `labels` a row's leading columns."""
    arguments = []
    for name, value in labels.items():
        arguments += ["--label", f"{name}={value}"]
    return arguments


@dataclasses.dataclass(frozen=True)
class Watch:
    """What kvlab-load watches besides the load: the CPUs whose other users make a
    measurement disturbed, our own helper processes there, and the threshold."""
    measured_cpus: tuple[int, ...] = ()
    own_pids: tuple[int, ...] = ()
    disturbed_above: float | None = None

    def arguments(self) -> list[str]:
        arguments = []
        if self.measured_cpus:
            arguments += ["--measured-cpus", ",".join(str(c) for c in self.measured_cpus)]
        if self.own_pids:
            arguments += ["--own-pids", ",".join(str(p) for p in self.own_pids)]
        if self.disturbed_above is not None:
            arguments += ["--disturbed-above", f"{self.disturbed_above:g}"]
        return arguments


def cpu_count_of(cpus: str | None) -> int:
    if not cpus:
        return len(os.sched_getaffinity(0))
    count = 0
    for part in cpus.split(","):
        low, _, high = part.partition("-")
        count += int(high or low) - int(low) + 1
    return count


def _tail(text: str, lines: int = 4) -> str:
    return " | ".join(text.strip().splitlines()[-lines:])


def kvlab_load_arguments(point: Point, target: str, csv_path: Path | str,
                         json_path: Path | str, labels: dict | None = None) -> list[str]:
    """kvlab-load's arguments (after the program) that measure `point` against `target`;
    its rows lead with the point's variables and then `labels`."""
    arguments = label_arguments({**point.variables(), **(labels or {})}) + [
        "--target", target, "--client", point.client,
        "--threads", str(point.threads), "--command", point.command,
        "--keys", str(point.keys), "--key-dist", point.key_dist,
        "--value-size", str(point.value_size), "--nodelay", point.nodelay,
        "--duration", f"{point.duration:g}", "--warmup", f"{point.warmup:g}",
        "--repeat", str(point.repetitions), "--csv", str(csv_path), "--json", str(json_path)]
    if point.client == "dedicated":
        arguments += ["--pipeline", str(point.pipeline)]
    if point.client != "shared":  # shared always uses exactly one connection
        arguments += ["--connections", str(point.connections)]
    if point.command == "mix":
        arguments += ["--ratio", point.ratio]
    if point.client != "dedicated":
        arguments += ["--io", point.io]
        if point.io == "event-loop":
            arguments += ["--io-flush", point.io_flush]
            if point.loop_threads:
                arguments += ["--loop-threads", str(point.loop_threads)]
    return arguments


def read_kvlab_load_rows(csv_text: str) -> list[dict[str, str]]:
    """kvlab-load's CSV as rows keyed by its header."""
    return [{column: value or "" for column, value in record.items()}
            for record in csv.DictReader(io.StringIO(csv_text))]


def kvlab_load_command(point: Point, binary: Path, target: str, cpus: str | None,
                       netns: str | None, csv_path: Path, json_path: Path, prefill: bool,
                       rate: float = 0, arrival: str = "uniform", labels: dict | None = None,
                       watch: Watch = Watch()) -> list[str]:
    """The kvlab-load command line of a point; rate > 0: open loop at that many ops/s."""
    command = launch_prefix(cpus, netns) + [str(binary)] + kvlab_load_arguments(
        point, target, csv_path, json_path, labels) + watch.arguments()
    if prefill:
        command.append("--prefill")
    if rate > 0:
        command += ["--rate", f"{rate:.0f}", "--arrival", arrival]
    return command


def run_kvlab_load(point: Point, build_dir: Path, target: str, cpus: str | None,
                   netns: str | None, csv_path: Path, json_path: Path,
                   prefill: bool, rate: float = 0, arrival: str = "uniform",
                   labels: dict | None = None, watch: Watch = Watch(),
                   cwd: Path | None = None) -> LoadResult:
    """Runs kvlab-load in `cwd` (relative csv/json paths are relative to it; the rows
    name the JSON file as given)."""
    binary = Path(build_dir).resolve() / "kvlab-load"
    if not binary.exists():
        return LoadResult([], f"{binary} not found (build it: make build)")
    command = kvlab_load_command(point, binary, target, cpus, netns, csv_path, json_path,
                                 prefill, rate, arrival, labels, watch)
    csv_file = Path(cwd or ".") / csv_path
    budget = point.repetitions * point.duration + point.warmup + 120
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=budget, cwd=cwd)
        output = done.stderr or done.stdout
        # A usage error (2) says what is wrong on its first line; a failed run at its end.
        detail = output.strip().splitlines()[0] if done.returncode == 2 and output.strip() \
            else _tail(output, 2)
        error = None if done.returncode == 0 else (
            f"kvlab-load exited with status {done.returncode}: {detail}")
    except subprocess.TimeoutExpired:
        error = f"kvlab-load did not finish within {budget:.0f} s"
    rows = read_kvlab_load_rows(csv_file.read_text()) if csv_file.exists() else []
    if error is None and len(rows) != point.repetitions:
        error = f"kvlab-load wrote {len(rows)} rows, expected {point.repetitions}"
    return LoadResult(rows, error)


def _redis_benchmark_args(points: list[Point], target: str, requests: int) -> list[str]:
    point = points[0]
    if target.startswith("unix://"):
        where = ["-s", target[len("unix://"):]]
    else:
        host, _, port = target[len("tcp://"):].rpartition(":")
        where = ["-h", host, "-p", port]
    args = where + ["--threads", str(point.threads), "-c", str(point.connections),
                    "-P", str(point.pipeline), "-d", str(point.value_size),
                    "-t", ",".join(p.command for p in points), "--csv", "-n", str(requests)]
    if point.keys > 1:
        # Without -r every request uses the one literal key "key:__rand_int__".
        args += ["-r", str(point.keys)]
    return args


def _run_redis_benchmark(points, target, requests, cpus, netns, timeout):
    binary = shutil.which("redis-benchmark") or "/usr/bin/redis-benchmark"
    command = launch_prefix(cpus, netns) + [binary] + _redis_benchmark_args(points, target, requests)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        raise RuntimeError(f"redis-benchmark exited with status {done.returncode}: "
                           f"{_tail(done.stderr or done.stdout)}")
    figures = {}
    for record in csv.DictReader(io.StringIO(done.stdout)):
        figures[record["test"].lower()] = record
    missing = [p.command for p in points if p.command not in figures]
    if missing:
        raise RuntimeError(f"redis-benchmark printed no figures for {', '.join(missing)}: "
                           f"{_tail(done.stdout + done.stderr)}")
    return figures, cpu / wall if wall > 0 else 0.0


def run_redis_benchmark_requests(point: Point, target: str, requests: int, cpus: str | None,
                                 netns: str | None) -> int:
    """One redis-benchmark run of exactly `requests` requests of the point; returns them."""
    _run_redis_benchmark([point], target, requests, cpus, netns,
                         timeout=60 + 10 * point.duration)
    return requests


def _microseconds(record: dict, field: str) -> str:
    value = record.get(field, "")
    return f"{float(value) * 1000:.1f}" if value not in ("", None) else ""


def run_redis_benchmark(points: list[Point], target: str, cpus: str | None,
                        netns: str | None) -> list[LoadResult]:
    """Measures a group of points that differ only in their command; one result per point."""
    point = points[0]
    cores = cpu_count_of(cpus)
    timeout = 60 + 10 * point.duration * len(points)
    try:
        # Calibration run (also the warm-up): how many requests last `duration`?
        calibration_requests = max(10000, 2000 * point.connections)
        figures, _ = _run_redis_benchmark(points, target, calibration_requests, cpus, netns,
                                          timeout)
        rates = sorted(float(figures[p.command]["rps"]) for p in points)
        requests = max(1000, int(rates[len(rates) // 2] * point.duration))
    except (RuntimeError, subprocess.TimeoutExpired, ValueError, KeyError) as error:
        return [LoadResult([], f"redis-benchmark calibration failed: {error}") for _ in points]
    rows: dict[str, list[dict[str, str]]] = {p.command: [] for p in points}
    for repetition in range(1, point.repetitions + 1):
        try:
            figures, cpu_fraction = _run_redis_benchmark(points, target, requests, cpus, netns,
                                                         timeout)
        except (RuntimeError, subprocess.TimeoutExpired) as error:
            return [LoadResult(rows[p.command], str(error)) for p in points]
        client_cpu = cpu_fraction  # cores' worth, as kvlab-load reports it
        for p in points:
            record = figures[p.command]
            rps = float(record["rps"])
            rows[p.command].append({
                "threads": str(p.threads), "client": "dedicated", "transport": p.transport,
                "pipeline": str(p.pipeline), "connections": str(p.connections),
                "repetition": str(repetition), "ops": str(requests),
                "seconds": f"{requests / rps:.6f}" if rps > 0 else "",
                "ops_per_s": f"{rps:.2f}", "errors": "",
                "p50_us": _microseconds(record, "p50_latency_ms"), "p90_us": "",
                "p99_us": _microseconds(record, "p99_latency_ms"), "p999_us": "",
                "max_us": _microseconds(record, "max_latency_ms"),
                "client_cpu": f"{client_cpu:.3f}",
                "client_bound": ("true" if client_cpu >= CLIENT_BOUND_FRACTION * cores
                                 else "false"),
            })
    return [LoadResult(rows[p.command]) for p in points]

