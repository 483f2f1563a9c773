"""Runs an experiment: one server at a time, every point of its sweeps, results on disk.

For each [[server]] in order: start it pinned to the server CPUs (inside the
emulated link's server namespace for `remote` points), wait until it answers,
measure its points (prefilling the key space before the first GET/mix point
of each key count), stop it. Each completed point is appended to points.csv
before the next one starts. A server that fails to start or dies is reported
and its remaining points are recorded as failed; the run goes on with the next
server. Remote points are recorded as skipped, with the reason, when the link
cannot come up.
"""

from __future__ import annotations

import datetime
import itertools
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import TextIO

from . import loadgens, machine
from .experiment import Experiment, Point
from .remote import CLIENT_NAMESPACE, SERVER_NAMESPACE, LinkUnavailable, RemoteLink
from .results import PointsWriter
from .servers import ServerError, ServerProcess

# Seconds a point costs beyond its measured time (process start, connections).
POINT_OVERHEAD_S = 0.3
# GET/mix need their keys to exist: prefilled once per key count and value size
# while a server runs. INCRBY needs an integer: its key is set to 0 before every
# INCRBY point (as the seed did), since a SET point may have left a string there.
PREFILL_ONCE_COMMANDS = ("get", "mix")


def default_cpus() -> tuple[str | None, str | None]:
    """Server on the first allowed CPU, harness on the others; unpinned on one CPU."""
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2:
        return None, None
    rest = ",".join(str(c) for c in allowed[1:])
    return str(allowed[0]), rest


def estimated_seconds(point: Point) -> float:
    per_repetition = point.duration
    if point.loadgen == "redis-benchmark":
        per_repetition += POINT_OVERHEAD_S
    return point.warmup + point.repetitions * per_repetition + POINT_OVERHEAD_S


def _clock(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"


class Progress:
    """One line per point: where the sweep is, what it measured, and when it will end."""

    def __init__(self, points: list[Point], stream: TextIO):
        self.total = len(points)
        self.remaining_estimate = sum(estimated_seconds(p) for p in points)
        self.done = 0
        self.started = time.monotonic()
        self.spent_estimate = 0.0
        self.stream = stream

    def point_done(self, point: Point, summary: str) -> None:
        self.done += 1
        estimate = estimated_seconds(point)
        self.spent_estimate += estimate
        self.remaining_estimate -= estimate
        elapsed = time.monotonic() - self.started
        # Scale the remaining estimate by how far reality has been from estimates so far.
        pace = elapsed / self.spent_estimate if self.spent_estimate else 1.0
        eta = self.remaining_estimate * pace
        label = (f"{point.server} {point.sweep} {point.loadgen} {point.transport} {point.client} "
                 f"{point.command} keys={point.keys} P={point.pipeline} T={point.threads}")
        self.stream.write(f"[{self.done}/{self.total} {100 * self.done // self.total}%] "
                          f"{label}: {summary}  elapsed {_clock(elapsed)} ETA {_clock(eta)}\n")
        self.stream.flush()


def _row(point: Point, figures: dict, status: str, note: str = "",
         server_cpu: str = "") -> dict:
    row = dict(figures)
    row.update(point.variables())
    row.update(status=status, note=note, server_cpu=server_cpu)
    return row


def _unmeasured_rows(point: Point, status: str, note: str) -> list[dict]:
    return [_row(point, {"repetition": str(r)}, status, note)
            for r in range(1, point.repetitions + 1)]


def _summary(rows: list[dict], error: str | None) -> str:
    rates = sorted(float(r["ops_per_s"]) for r in rows if r.get("ops_per_s"))
    text = f"median {rates[len(rates) // 2]:,.0f} ops/s" if rates else "no figures"
    errors = sum(int(float(r["errors"])) for r in rows if r.get("errors"))
    if errors:
        text += f", {errors:,} ERROR REPLIES"
    if any(r.get("client_bound") == "true" for r in rows):
        text += " (client-bound)"
    return text + (f"; FAILED: {error}" if error else "")


class Runner:
    def __init__(self, experiment: Experiment, repo: Path, build_dir: Path, runs_root: Path,
                 stream: TextIO = sys.stderr):
        self.experiment = experiment
        self.repo = repo
        self.build_dir = build_dir
        self.stream = stream
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        self.run_dir = runs_root / f"{stamp}-{experiment.name}"
        default_server, default_harness = default_cpus()
        self.server_cpus = experiment.server_cpus or default_server
        self.harness_cpus = experiment.harness_cpus or default_harness
        self.problems: list[str] = []
        self.interrupted = False
        self._histogram_count = 0

    def say(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()

    def run(self) -> Path:
        for sub in ("histograms", "logs"):
            (self.run_dir / sub).mkdir(parents=True, exist_ok=True)
        meta = self._meta()
        self._write_meta(meta)
        points = self.experiment.points()
        self.say(f"kvlab run {self.experiment.name}: {len(points)} points, "
                 f"server CPUs {self.server_cpus or 'any'}, harness CPUs "
                 f"{self.harness_cpus or 'any'} -> {self.run_dir}")
        progress = Progress(points, self.stream)
        writer = PointsWriter(self.run_dir / "points.csv")
        try:
            if self.experiment.placement is not None:
                from .multihost import MultiHostMeasurement
                MultiHostMeasurement(self.experiment, self.repo, self.build_dir, self.run_dir,
                                     self.say, self.problems).measure(
                    points, writer.write, progress.point_done)
                return self.run_dir
            with tempfile.TemporaryDirectory(prefix="kvlab-run-") as work:
                # Local points first, for every server; then the remote ones, so the
                # link's forwarder exists only while remote points are measured.
                for server in self.experiment.servers:
                    local = [p for p in points if p.server == server.name
                             and p.transport != "remote"]
                    if local:
                        self._measure_server(server, local, Path(work), writer, progress)
                remote = [p for p in points if p.transport == "remote"]
                if remote:
                    self._measure_remote(remote, Path(work), writer, progress)
        except KeyboardInterrupt:
            self.interrupted = True
            self.problems.append("interrupted: the points after the last one shown were not run")
        finally:
            writer.close()
            meta["finished_utc"] = datetime.datetime.now(datetime.timezone.utc).isoformat()
            meta["load_average_end"] = os.getloadavg()
            meta["problems"] = self.problems
            self._write_meta(meta)
        return self.run_dir

    def _measure_remote(self, points, work: Path, writer, progress) -> None:
        link = RemoteLink(self.repo, self.build_dir, self.experiment.remote_rtt_us,
                          self.experiment.remote_rate_mbit)
        try:
            link.up()
        except LinkUnavailable as error:
            self._give_up(points, "skipped", f"remote link unavailable: {error}", writer,
                          progress)
            return
        try:
            self.say(f"remote link up: server at {link.server_address}, "
                     f"RTT {self.experiment.remote_rtt_us} us")
            for server in self.experiment.servers:
                mine = [p for p in points if p.server == server.name]
                if mine:
                    self._measure_server(server, mine, work, writer, progress,
                                         bind=link.server_address)
        finally:
            link.down()

    def _measure_server(self, server, points, work: Path, writer, progress, bind=None) -> None:
        remote = bind is not None
        log = self.run_dir / "logs" / f"{server.name}{'-remote' if remote else ''}.log"
        process = ServerProcess(server, self.build_dir, work, log, self.server_cpus,
                                netns=SERVER_NAMESPACE if remote else None,
                                bind=bind or "127.0.0.1")
        try:
            process.start()
        except ServerError as error:
            self._give_up(points, "failed", f"server {server.name} failed to start: {error}",
                          writer, progress)
            return
        prefilled: set[tuple[int, int]] = set()
        try:
            for group in self._groups(points):
                if not process.alive():
                    self._give_up(group, "failed",
                                  f"server {server.name} died: {process.log_tail()}",
                                  writer, progress)
                    continue
                self._measure_group(group, process, prefilled, writer, progress,
                                    netns=CLIENT_NAMESPACE if remote else None)
        finally:
            process.stop()

    def _give_up(self, points, status, problem, writer, progress, announce=True) -> None:
        """Records points that cannot be measured, with the reason, and moves on."""
        if announce:
            self.say(problem)
            self.problems.append(problem)
        for point in points:
            writer.write(_unmeasured_rows(point, status, problem))
            progress.point_done(point, status)

    @staticmethod
    def _groups(points: list[Point]) -> list[list[Point]]:
        """redis-benchmark measures the commands of otherwise equal points in one run."""
        groups = []
        for _, members in itertools.groupby(
                points, key=lambda p: (p.loadgen, p.sweep, p.transport, p.keys, p.value_size,
                                       p.pipeline, p.connections, p.threads)
                if p.loadgen == "redis-benchmark" else id(p)):
            groups.append(list(members))
        return groups

    def _measure_group(self, group, process, prefilled, writer, progress, netns) -> None:
        first = group[0]
        target = process.target(first.transport)
        cpu_before = process.cpu_seconds()
        started = time.monotonic()
        if first.loadgen == "redis-benchmark":
            results = loadgens.run_redis_benchmark(group, target, self.harness_cpus, netns)
        else:
            self._histogram_count += 1
            slug = (f"{self._histogram_count:04d}-{first.server}-{first.sweep}-{first.transport}-{first.client}-"
                    f"{first.command}-k{first.keys}-p{first.pipeline}-t{first.threads}")
            needs_prefill = first.command == "incrby" or (
                first.command in PREFILL_ONCE_COMMANDS
                and (first.keys, first.value_size) not in prefilled)
            with tempfile.NamedTemporaryFile(suffix=".csv") as raw:
                results = [loadgens.run_kvlab_load(
                    first, self.build_dir, target, self.harness_cpus, netns, Path(raw.name),
                    self.run_dir / "histograms" / f"{slug}.json", prefill=needs_prefill)]
            if first.command in PREFILL_ONCE_COMMANDS and results[0].error is None:
                prefilled.add((first.keys, first.value_size))
        wall = time.monotonic() - started
        cpu_after = process.cpu_seconds()
        server_cpu = ""
        if cpu_before is not None and cpu_after is not None and wall > 0:
            server_cpu = f"{(cpu_after - cpu_before) / wall:.3f}"
        for point, result in zip(group, results):
            rows = [_row(point, figures, "ok", "", figures.get("server_cpu") or server_cpu)
                    for figures in result.rows]
            if result.error:
                problem = f"{point.loadgen}: {result.error}"
                self.problems.append(f"{point.server}/{point.sweep}: {problem}")
                done = {r["repetition"] for r in rows}
                rows += [row for row in _unmeasured_rows(point, "failed", problem)
                         if row["repetition"] not in done]
            writer.write(rows)
            progress.point_done(point, _summary(result.rows, result.error))

    def _meta(self) -> dict:
        return {
            "experiment": self.experiment.name,
            "experiment_file": str(self.experiment.path),
            "experiment_text": self.experiment.text,
            "started_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(),
            # Other work on the machine disturbs every figure; say how busy it was.
            "load_average_start": os.getloadavg(),
            "server_cpus": self.server_cpus,
            "harness_cpus": self.harness_cpus,
            "remote_rtt_us": self.experiment.remote_rtt_us,
            "servers": {s.name: {"describe": s.describe(), "kind": s.kind, "engine": s.engine,
                                 "shards": s.shards, "hop": s.hop, "stripes": s.stripes,
                                 "io_threads": s.io_threads, "seed_engine": s.seed_engine}
                        for s in self.experiment.servers},
            "sweeps": {s.name: {"seed": s.seed, "duration": s.duration, "warmup": s.warmup,
                                "repetitions": s.repetitions}
                       for s in self.experiment.sweeps},
            "machine": machine.describe_machine(self.repo),
            "command": " ".join(sys.argv),
        }

    def _write_meta(self, meta: dict) -> None:
        path = self.run_dir / "meta.json"
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(meta, indent=2) + "\n")
        temporary.replace(path)
