"""Runs an experiment in rounds: every server of a comparison measured close together.

A point's repetitions are rounds. In each round the runner starts every server
the round needs afresh (a new process: new allocator state, hash seeds, thread
placement and connections, so run-to-run variance is sampled, not hidden by
back-to-back windows on one process), all pinned to the server CPUs; it then
walks the points slot by slot (a slot = the points that differ only in their
server), in the experiment's order except that the two slots of a declared
comparison along another variable come next to each other (paired_slots),
and measures each
server's point once, in a shuffled order that puts the two sides of each
declared comparison next to each other (paired_order),
one at a time (the others sit idle: no load reaches them). Ratios between servers are
computed inside each round (declared_ratios.py). At the end of the round every
server is stopped. Keys are prefilled once per server process, before the
first GET/mix point that needs them, in a load run of its own so that its cost
never lands in a measurement.

Each measurement is watched by the load generator itself (kvlab-load
--measured-cpus): CPU used on the measured CPUs by anything but our processes,
steal, and the server's costs per operation. A measurement with foreign CPU
above the threshold comes back with status `disturbed` and is run again (at
most MAX_RETRIES times). kvlab-load writes the rows; their columns are its
(`kvlab-load --schema`), led by the point's variables.

With `precision` set and [[compare]] tables declared, rounds go on after the
sweeps' `repetitions` until every declared ratio's interval is within the
target, or `max_rounds`, or the time `budget_s` would be passed; later rounds
measure only the points of unresolved ratios. Local points come first, then
the remote ones (the link's forwarder exists only while they run). Each
completed measurement is appended to points.csv before the next one starts.
A server that fails to start or dies is reported and its points in that round
recorded as failed; the run goes on. So is a `command` row that refuses a command a
point needs (servers.check_point probes each once before its first point).

Every server's build (commands.Identity: binary path, SHA-256, version) is asked of it
at its first start; meta.json keeps it under servers.NAME.identity and machine.servers,
and each points.csv row names it in `server_build`.
"""


from __future__ import annotations

import dataclasses
import datetime
import json
import math
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Sequence, TextIO

import pandas as pd

from ..tracking import machine
from . import alternated_points, alternating, cpu_idle, durability, latency, loadgens, syscalls
from .alternated_points import point_identity
from ..measures.declared_ratios import (DEFAULT_PRECISION, FOLLOW_THE_CLIENT, RatioResult, compute,
                                        point_label, unresolved_points, write_ratios)
from .commands import BUILD_COLUMN
from ..schema.specs import CONTAINER_WRITES, POINT_VARIABLES, CompareSpec, Point, point_fill
from .plan import SERVER_START_S, Plan, point_seconds
from .remote import CLIENT_NAMESPACE, LinkUnavailable, RemoteLink
from .results import PointsWriter
from .server_starter import ServerStarter
from .servers import RedisClusterProcess, ServerError, ServerProcess

# GET/mix need their keys to exist, YCSB's workloads their records: prefilled once per
# fill (schema/specs.py's fill_of), key count and value size while a server runs. INCRBY needs
# an integer: its key is set to 0 before every INCRBY point (as the seed did), since a
# SET point may have left a string there.
# Requests of a redis-benchmark run traced for its system calls (a fixed load, no calibration).
SYSCALL_REQUESTS = 50_000
# A disturbed measurement is run again at most this many times.
MAX_RETRIES = 2
# memory.csv: what each prefill cost each server, per key; `shape` is what each key held
# (string, or a container such as hash:10 of value_size-byte elements); pss_per_key: a
# command row's /proc PSS (its used_memory_per_key is blank where INFO reports none).
MEMORY_COLUMNS = ("server", "transport", "round", "keys", "value_size", "used_memory_per_key",
                  "rss_per_key", "shape", "pss_per_key")
# The points.csv column that names the build of the row's server (commands.Identity.build).


def _clock(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"


def _one_round(point: Point) -> float:
    return point_seconds(dataclasses.replace(point, repetitions=1))


class Progress:
    """One line per measurement: where the run is, what it measured, when it will end."""

    def __init__(self, points: list[Point], stream: TextIO) -> None:
        self.total = sum(p.repetitions for p in points)
        self.remaining_estimate = sum(_one_round(p) * p.repetitions for p in points)
        self.done = 0
        self.started = time.monotonic()
        self.spent_estimate = 0.0
        self.stream = stream

    def add(self, points: list[Point]) -> None:
        """An extra round of these points (adaptive stopping)."""
        self.total += len(points)
        self.remaining_estimate += sum(_one_round(p) for p in points)

    def point_done(self, point: Point, summary: str) -> None:
        self.done += 1
        estimate = _one_round(point)
        self.spent_estimate += estimate
        self.remaining_estimate -= estimate
        elapsed = time.monotonic() - self.started
        # Scale the remaining estimate by how far reality has been from estimates so far.
        pace = elapsed / self.spent_estimate if self.spent_estimate else 1.0
        eta = self.remaining_estimate * pace
        label = (f"{point.server} {point.sweep} {point.loadgen} {point.transport} {point.client} "
                 f"{point.command} keys={point.keys} P={point.pipeline} T={point.threads}")
        self.stream.write(f"[{self.done}/{self.total} {100 * self.done // max(1, self.total)}%] "
                          f"{label}: {summary}  elapsed {_clock(elapsed)} ETA {_clock(eta)}\n")
        self.stream.flush()


def _unmeasured_row(point: Point, round_no: int, status: str, note: str) -> dict:
    """The row of a measurement that could not be made: the variables, the round, why."""
    return {**point.variables(), "repetition": str(round_no), "status": status, "note": note}


def pids_named(name: str) -> list[int]:
    """Running processes whose command name is `name` (from /proc/*/comm). Zombies are
    left out: a watch that counts a zombie's CPU as ours loses it when the zombie is
    reaped mid-window, and reads it as others' work (a restarted link forwarder's
    predecessor made every remote round after the first "disturbed" at 0.87 cores)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() != name:
                    continue
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if stat[stat.rindex(")") + 2:].split()[0] != "Z":
                pids.append(int(entry.name))
    return pids


def _key(point: Point) -> tuple:
    """A point's variables as declared_ratios.py spells them."""
    return tuple(str(v) for v in point.variables().values())


def _slots(points: list[Point]) -> list[list[Point]]:
    """Points that differ only in their server, in the experiment's order."""
    slots: dict[tuple, list[Point]] = {}
    for point in points:
        variables = point.variables()
        del variables["server"]
        slots.setdefault(tuple(variables.values()), []).append(point)
    return list(slots.values())


def paired_order(servers: list[str], slot: list[Point], comparisons: Sequence[CompareSpec],
                 rng: random.Random) -> list[str]:
    """The order a slot's servers are measured in: random, except that the two servers of
    each declared comparison (by = "server") that applies to the slot come one right after
    the other, in a random order of the two. The machine's speed drifts over seconds (a
    server measured in back-to-back windows varies about as much as fresh processes do),
    so a ratio's two sides measured next to each other share more of that drift than two
    sides with other servers' points between them. A server in several pairs sits next to
    its partner in the first pair drawn; the pairs and the unpaired servers come in
    random order."""
    pairs = [(c.a, c.b) for c in comparisons if c.by == "server" and c.a in servers
             and c.b in servers and any(c.matches(p) for p in slot)]
    rng.shuffle(pairs)
    blocks: list[list[str]] = []
    placed: set[str] = set()
    for pair in pairs:
        block = [name for name in dict.fromkeys(pair) if name not in placed]
        rng.shuffle(block)
        placed.update(block)
        if block:
            blocks.append(block)
    blocks += [[name] for name in servers if name not in placed]
    rng.shuffle(blocks)
    return [name for block in blocks for name in block]


def paired_slots(slots: list[list[Point]], comparisons: Sequence[CompareSpec],
                 rng: random.Random) -> list[list[Point]]:
    """The order a round walks its slots in: the experiment's, except that the two slots of
    each declared comparison along a variable other than the server (e.g. by = "client":
    pooled and shared are different slots) come one right after the other, in a random
    order of the two, for the reason paired_order gives. The pairing rule is
    declared_ratios.py's: the two slots differ only in `by` (and, along the client, in the
    connections and pipeline each client implies). The experiment's order is otherwise
    kept on purpose: a redis-benchmark GET point reads the keys its SET point wrote in the
    same round (its key names are not the prefill's)."""
    def variables(slot: list[Point]) -> dict[str, Any]:
        values = slot[0].variables()
        del values["server"]
        return values

    def partner_key(values: dict[str, Any], spec: CompareSpec) -> tuple:
        loose = set(FOLLOW_THE_CLIENT) if spec.by == "client" else set()
        return tuple(v for k, v in values.items() if k != spec.by and k not in loose)

    partner: dict[int, int] = {}
    for spec in comparisons:
        if spec.by == "server":
            continue
        b_slots = {}
        for index, slot in enumerate(slots):
            values = variables(slot)
            if values[spec.by] == spec.b:
                b_slots.setdefault(partner_key(values, spec), index)
        for index, slot in enumerate(slots):
            values = variables(slot)
            if values[spec.by] != spec.a or not any(spec.matches(p) for p in slot):
                continue
            other = b_slots.get(partner_key(values, spec))
            if other is not None and index not in partner and other not in partner:
                partner[index], partner[other] = other, index
    order: list[int] = []
    for index in range(len(slots)):
        if index in order:
            continue
        block = [index] + ([partner[index]] if index in partner
                           and partner[index] not in order else [])
        rng.shuffle(block)
        order += block
    return [slots[index] for index in order]


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
    def __init__(self, plan: Plan, repo: Path, build_dir: Path, runs_root: Path,
                 stream: TextIO = sys.stderr, seed: int | None = None) -> None:
        self.plan = plan
        self.experiment = experiment = plan.experiment
        self.repo = repo
        self.build_dir = build_dir
        self.stream = stream
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        self.run_dir = runs_root / f"{stamp}-{experiment.name}"
        # On a one-CPU machine both sets are that CPU: nothing to pin.
        shared = plan.allocation.shared
        self.server_cpus = None if shared else plan.allocation.server_list
        self.harness_cpus = None if shared else plan.allocation.harness_list
        self.starter = ServerStarter(build_dir, self.run_dir / "logs", self.server_cpus,
                                     self.harness_cpus, durability.log_root(self.run_dir))
        # Rows with an append-only log (appendfsync): where each keeps it (meta.json).
        self.log_folders: dict[str, dict[str, str]] = {}
        self.measured_cpus = sorted(set(plan.allocation.server) | set(plan.allocation.harness))
        self.seed = seed if seed is not None else random.SystemRandom().randrange(2 ** 32)
        self.random = random.Random(self.seed)
        self.problems: list[str] = []
        self.interrupted = False
        self.rows: list[dict] = []          # every row written, for the ratios
        self.remote_link: dict | None = None  # the link's measured figures, when it came up
        self.helper_pids: list[int] = []    # our other processes on the measured CPUs (the link)
        # The watch's uncharged cost per sleep of ours (loadgens.wake_cost); None: not read.
        self.wake_cost: dict | None = None
        self.idle_hold = cpu_idle.IdleHold(experiment.cpu_idle)
        self.reserve_s = 0.0                # time later phases need, kept out of the budget
        self.stops: dict[str, str] = {}     # phase -> why it stopped adding rounds
        # measurement = "alternate" (running/alternating.py): the pairs alternated, the A/A
        # one among them; the comparisons left to rounds.
        self.pairs: list = []
        self._link: RemoteLink | None = None  # up during the remote phase
        self._starts_written: dict[tuple, int] = {}  # points.csv rows per alternated point
        self.calibration = None
        self.rounds_comparisons = experiment.comparisons
        self.alternation_spent: dict[str, float] = {}
        self.alternation_spent_by_pair: dict[tuple, float] = {}
        self._alternation_phase: alternating.AlternatingPhase | None = None
        # phase -> (the budget plan said up front, the last one): budget_plan.py
        self.plans: dict[str, tuple[dict | None, dict | None]] = {}
        self.rounds_spent_s = 0.0
        self.started = time.monotonic()
        self._histogram_count = 0
        self.identities: dict[str, dict] = {}  # server name -> commands.Identity.as_json()

    def say(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()

    def run(self) -> Path:
        """Measures the experiment into a new run folder and returns it. Raises
        durability.LogFolderError, before anything is measured, when a row's log folder
        would be on tmpfs (its message names the row)."""
        self.log_folders = durability.check_log_folders(self.experiment.servers,
                                                        durability.log_root(self.run_dir))
        self.schema = loadgens.point_schema(self.build_dir)
        for sub in ("histograms", "logs"):
            (self.run_dir / sub).mkdir(parents=True, exist_ok=True)
        if self.experiment.placement is None:
            # How idle CPUs wait, held from here to the end of this process (cpu_idle.py);
            # the wake-up cost is measured under the same hold as everything after it.
            self.idle_hold.take()
            if self.measured_cpus:
                self.wake_cost = loadgens.wake_cost(self.build_dir, self.measured_cpus,
                                                    idle=self.idle_hold.regime())
        meta = self._meta()
        meta["points_schema"] = self.schema
        self._write_meta(meta)
        points = self.experiment.points()
        if self.experiment.placement is None:
            self._plan_alternation(points)
        # The declared ratios' points are measured by their alternation's starts, not in
        # rounds (alternated_points.py); a left-out ratio's points get rounds afterwards.
        alternated = {point_identity(p) for p in alternated_points.pair_points(self.pairs, self.experiment)}
        in_rounds = [p for p in points if point_identity(p) not in alternated]
        self.say(f"kvlab run {self.experiment.name}: {len(points)} points in rounds, "
                 f"server CPUs {self.server_cpus or 'any'}, harness CPUs "
                 f"{self.harness_cpus or 'any'} -> {self.run_dir}")
        progress = Progress(in_rounds, self.stream)
        labels = list(POINT_VARIABLES) + [BUILD_COLUMN] + (
            ["host"] if self.experiment.placement else []) + (
            list(durability.COLUMNS) if self.log_folders else [])
        writer = PointsWriter(self.run_dir / "points.csv",
                              loadgens.row_columns(self.schema, labels))
        try:
            if self.experiment.placement is not None:
                from .multihost import MultiHostMeasurement
                MultiHostMeasurement(self.experiment, self.repo, self.build_dir, self.run_dir,
                                     self.say, self.problems, self.identify,
                                     self.build_of).measure(
                    points, writer.write, progress.point_done)
                return self.run_dir
            with tempfile.TemporaryDirectory(prefix="kvlab-run-") as work:
                local = [p for p in in_rounds if p.transport != "remote"]
                remote = [p for p in in_rounds if p.transport == "remote"]
                # Adaptive local rounds leave the remote phase's own rounds, and every
                # alternated pair's first rounds, inside the budget.
                remote_rounds = sum(_one_round(p) * p.repetitions for p in remote)
                self.reserve_s = remote_rounds + self._alternation_reserve(self.pairs)
                if local or any(p.point_a.transport != "remote" for p in self.pairs):
                    self._run_rounds("local", local, Path(work), writer, progress)
                    self.reserve_s = remote_rounds
                    self._alternate("local", Path(work), writer, progress)
                self.reserve_s = 0.0
                if remote or any(p.point_a.transport == "remote" for p in self.pairs):
                    self._measure_remote(remote, Path(work), writer, progress)
        except KeyboardInterrupt:
            self.interrupted = True
            self.problems.append("interrupted: the points after the last one shown were not run")
        finally:
            writer.close()
            self.idle_hold.release()
            results = self._ratios()
            write_ratios(self.run_dir / "ratios.csv", results)
            if self.calibration is not None:
                write_ratios(self.run_dir / "calibration.csv", [self._pair_result(self.calibration)])
            if self.pairs:
                meta["alternation"] = self._alternation_meta()
                alternating.write_latency_pairs(self.run_dir / "latency_pairs.csv", self.pairs)
            for name, identity in self.identities.items():
                meta["servers"][name]["identity"] = identity
            meta["machine"]["servers"] = {name: identity["build"]
                                          for name, identity in self.identities.items()}
            meta["finished_utc"] = datetime.datetime.now(datetime.timezone.utc).isoformat()
            meta["load_average_end"] = os.getloadavg()
            meta["problems"] = self.problems
            if self.remote_link:
                meta["remote_link"] = self.remote_link
            meta["rounds"] = {"stopped": self.stops, "shuffle_seed": self.seed,
                              "measurements": len(self.rows),
                              "disturbed": sum(r.get("status") == "disturbed"
                                               for r in self.rows)}
            self._write_meta(meta)
        return self.run_dir

    def _ratios(self) -> list[RatioResult]:
        """Every declared ratio: those measured by alternation, then those by rounds."""
        return [self._pair_result(p) for p in self.pairs if not p.calibration] \
            + self._round_ratios()

    def _round_ratios(self) -> list[RatioResult]:
        if not self.rows:
            return []
        return compute(pd.DataFrame(self.rows), self.rounds_comparisons,
                       self.experiment.precision, self.experiment.min_rounds)

    # ---- alternation (running/alternating.py) ---------------------------------------

    def _plan_alternation(self, points: list[Point]) -> None:
        """With measurement = "alternate", the declared comparisons whose points kvlab-load
        measures are alternated, plus the A/A calibration; the rest stay with rounds."""
        comparisons = self.experiment.comparisons
        if self.experiment.measurement != "alternate" or not comparisons:
            return
        self.pairs = alternating.declared_pairs(
            [p for p in points if p.loadgen == "kvlab-load"], comparisons, point_label)
        alternated = [p.spec for p in self.pairs]
        # A latency comparison is open loop at its rate: rounds of closed-loop points
        # cannot measure it, so one with no kvlab-load pair is a problem, not a round ratio.
        for spec in comparisons:
            if spec.latency and spec not in alternated:
                self.problems.append(f"comparison {spec.name}: no pair of kvlab-load points "
                                     "to alternate (latency comparisons need kvlab-load)")
        self.rounds_comparisons = tuple(c for c in comparisons
                                        if c not in alternated and not c.latency)
        local = [p for p in self.pairs if p.point_a.transport != "remote"]
        self.calibration = alternating.calibration_pair(
            local or self.pairs, lambda name: self.experiment.server(name).kind == "redis")
        if self.calibration is not None:
            self.pairs.insert(0, self.calibration)

    def _alternation_reserve(self, pairs: list[alternating.Pair]) -> float:
        return sum(self.experiment.min_rounds
                   * (self.experiment.alternation_s + p.round_seconds()) for p in pairs)

    def _alternate(self, phase: str, work: Path, writer: PointsWriter, progress: Progress,
                   bind: str | None = None, netns: str | None = None) -> None:
        remote = phase == "remote"
        pairs = [p for p in self.pairs if (p.point_a.transport == "remote") == remote]
        if not pairs or self.interrupted:
            return
        try:
            self._alternate_pairs(phase, pairs, work, bind, netns)
        finally:
            self._write_start_rows(pairs, writer)
        left_out = alternated_points.unmeasured_points(pairs, self.experiment)
        if left_out and not self.interrupted:
            # cheap next to a ratio's starts: the seed-shaped tables keep these points
            progress.add([p for p in left_out for _ in range(p.repetitions)])
            self._run_rounds(f"{phase} (points of ratios not alternated)", left_out, work,
                             writer, progress, bind, adaptive_allowed=False)

    def _write_start_rows(self, pairs: list[alternating.Pair], writer: PointsWriter) -> None:
        """points.csv rows of the pairs' kept starts, numbered per point across pairs."""
        rows = []
        for pair in pairs:
            for point, row in alternated_points.start_rows(pair, self.experiment):
                identity = point_identity(point)
                self._starts_written[identity] = self._starts_written.get(identity, 0) + 1
                rows.append({**row, "repetition": str(self._starts_written[identity]),
                             BUILD_COLUMN: self.build_of(point.server)})
        if rows:
            writer.write(rows)

    def _fresh_forwarder(self) -> str | None:
        """Before each start of a remote ratio: a fresh forwarder (RemoteLink.
        restart_forwarder), so that its process is drawn anew with each start like the
        servers'. In runs at ee957cc every start of one run fell in one mode of
        shared/pooled INCRBY over the link and the next run's in the other (T4: 1.139
        ±0.5%, then 0.947): a factor that lived as long as the run."""
        try:
            self._link.restart_forwarder()
        except LinkUnavailable as error:
            return str(error)
        self.helper_pids = pids_named("kvlab-link")  # the watch counts it as ours
        return None

    def _rounds_cost(self, points: list[Point]) -> float:
        """What the sweeps' rounds of `points` cost: their measurements and each round's
        server starts."""
        if not points:
            return 0.0
        rounds = max(p.repetitions for p in points)
        return sum(_one_round(p) * p.repetitions for p in points) \
            + SERVER_START_S * rounds * len({p.server for p in points})

    def _alternate_pairs(self, phase: str, pairs: list[alternating.Pair], work: Path,
                         bind: str | None, netns: str | None) -> None:
        later = [] if phase == "remote" else [p for p in self.pairs if p.point_a.transport == "remote"]
        budget = self.experiment.budget_s
        # the later phase's pairs are reserved inside the phase (AlternatingPhase.
        # _later_reserve), at the round cost it measures
        deadline = math.inf if budget is None else self.started + budget - self.reserve_s
        self.say(f"alternation ({phase}): {len(pairs)} pairs, ABBA slices of "
                 f"{self.experiment.slice_s:g} s, {self.experiment.alternation_s:g} s a round")
        carried = self._alternation_phase.prior_var() if self._alternation_phase else math.nan
        fresh_link = self._fresh_forwarder if phase == "remote" and self._link else None
        self._alternation_phase = alternating.AlternatingPhase(self, pairs, work, bind, netns,
                                                               carried, later,
                                                               self._rounds_cost, fresh_link)
        started = time.monotonic()
        why = self._alternation_phase.run(
            deadline, self.experiment.precision or DEFAULT_PRECISION,
            self.experiment.max_rounds, self.experiment.min_rounds)
        self.stops[f"{phase} alternation"] = why
        self.alternation_spent[phase] = time.monotonic() - started
        self.alternation_spent_by_pair.update(self._alternation_phase.spent_s)
        self.plans[phase] = (self._alternation_phase.first_plan, self._alternation_phase.plan)

    def _pair_result(self, pair: alternating.Pair) -> RatioResult:
        planned = next((last[pair.key] for _, last in self.plans.values()
                        if last and pair.key in last), None)
        return alternating.pair_result(pair, self.experiment.precision or DEFAULT_PRECISION,
                                       self.experiment.min_rounds,
                                       self.alternation_spent_by_pair.get(pair.key, 0.0),
                                       planned)

    def _alternation_meta(self) -> dict:
        return {"slice_s": self.experiment.slice_s, "alternation_s": self.experiment.alternation_s,
                "min_rounds": self.experiment.min_rounds,
                "spent_s": {phase: round(s, 1) for phase, s in self.alternation_spent.items()},
                "rounds_spent_s": round(self.rounds_spent_s, 1),
                # points measured by their ratio's starts instead of rounds
                "points_from_starts": len(self._starts_written),
                "pairs": [{"comparison": p.name, "test": p.test, "point": p.label,
                           "calibration": p.calibration, "rounds": len(p.rounds),
                           "failed": p.failed, "disturbed": p.disturbed,
                           "cycles_left_out": p.cycles_left_out,
                           "stalled_slices": p.stalled,
                           "client_bound": p.client_bound, "metric": p.metric,
                           "spent_s": round(self.alternation_spent_by_pair.get(p.key, 0.0), 1),
                           # seconds of alternating asked of each attempt (a ratio's
                           # starts take the length its own variance says, after three)
                           "start_lengths_s": [round(n, 2) for n in p.lengths]}
                          for p in self.pairs],
                # budget_plan's plans per phase: the one said up front (after the A/A)
                # and the last one, made before the last round
                "plan": {phase: {"first": alternating.plan_rows(first, self.pairs),
                                 "last": alternating.plan_rows(last, self.pairs)}
                         for phase, (first, last) in self.plans.items()}}

    # ---- rounds ------------------------------------------------------------------------

    def _run_rounds(self, phase: str, points: list[Point], work: Path, writer: PointsWriter,
                    progress: Progress, bind: str | None = None,
                    adaptive_allowed: bool = True) -> None:
        keys = {p: _key(p) for p in points}
        adaptive = adaptive_allowed and self.experiment.precision is not None \
            and self.rounds_comparisons
        started = time.monotonic()
        try:
            self._rounds_loop(phase, points, work, writer, progress, bind, keys, adaptive)
        finally:
            self.rounds_spent_s += time.monotonic() - started

    def _rounds_loop(self, phase: str, points: list[Point], work: Path, writer: PointsWriter,
                     progress: Progress, bind: str | None, keys: dict[Point, tuple],
                     adaptive: bool | tuple[CompareSpec, ...]) -> None:
        round_no = 0
        while True:
            round_no += 1
            due = [p for p in points if round_no <= p.repetitions]
            if not due:
                if not adaptive:
                    self.stops[phase] = "the sweeps' rounds are done " + (
                        "(the declared ratios are alternated)" if self.pairs
                        else "(no precision target)")
                    break
                unresolved = unresolved_points(self._round_ratios())
                due = [p for p in points if keys[p] in unresolved]
                if not due:
                    self.stops[phase] = (f"every declared ratio met ±{self.experiment.precision:.1%}"
                                         f" over at least {self.experiment.min_rounds} rounds")
                    break
                if round_no > self.experiment.max_rounds:
                    self.stops[phase] = f"max_rounds ({self.experiment.max_rounds}) reached"
                    break
                next_round = sum(_one_round(p) for p in due) + SERVER_START_S * len({p.server for p in due})
                budget = self.experiment.budget_s
                if budget is not None and (time.monotonic() - self.started + next_round
                                           + self.reserve_s) > budget:
                    self.stops[phase] = (f"time budget ({budget:.0f} s) reached after "
                                         f"{round_no - 1} rounds")
                    break
                progress.add(due)
            self._round(round_no, due, work, writer, progress, bind)
        curves = [p for p in points if p.latency_curve]
        if curves and not self.interrupted:
            self._latency_curves(curves, work, bind)
        traced = [p for p in points if p.syscalls]
        if traced and not self.interrupted and bind is None:
            self._each_server_fresh(traced, work, None, self._count_syscalls)

    def _count_syscalls(self, point: Point, process: ServerProcess | RedisClusterProcess,
                        netns: str | None) -> None:
        """System calls per operation, counted on the server while a short, fixed load of
        the point runs: by the kernel's tracepoints (perf) where they can be read, else by
        strace, which slows the server and so counts a slow server's calls (see
        syscalls.py). The counter is recorded in the row."""
        target = process.target(point.transport)
        if point_fill(point) and point.loadgen == "kvlab-load":
            error = self.starter.prefill(point, target, netns)
            if error:
                self.problems.append(f"syscalls {point.server}/{point.sweep}: prefill: {error}")
                return
        single = dataclasses.replace(point, repetitions=1, warmup=0.0,
                                     duration=min(point.duration, 1.0))

        def load() -> int:
            requests = SYSCALL_REQUESTS if point.loadgen == "redis-benchmark" else 0
            with tempfile.TemporaryDirectory(prefix="kvlab-syscalls-") as folder:
                result = loadgens.run_kvlab_load(single, self.build_dir, target,
                                                 self.harness_cpus, netns,
                                                 Path(folder) / "s.csv", Path(folder) / "s.json",
                                                 prefill=point.command == "incrby",
                                                 requests=requests)
            if result.error or not result.rows:
                raise RuntimeError(result.error or "no rows")
            return int(float(result.rows[0]["ops"]))
        try:
            count = syscalls.syscalls_per_op(process.pid, load)
            per_op = count.per_op
        except (syscalls.SyscallCountError, RuntimeError, ValueError) as error:
            self.problems.append(f"syscalls {point.server}/{point.sweep}/{point.command}: {error}")
            return
        top = sorted(count.calls_by_name.items(), key=lambda item: -item[1])[:3]
        path = self.run_dir / "syscalls.csv"
        new = not path.exists()
        with path.open("a") as handle:
            if new:
                handle.write("sweep,server,loadgen,transport,command,pipeline,threads,"
                             "operations,syscalls_per_op,top,method\n")
            handle.write(f"{point.sweep},{point.server},{point.loadgen},{point.transport},"
                         f"{point.command},{point.pipeline},{point.threads},{count.operations},"
                         f"{per_op:.3f},"
                         + " ".join(f"{name}={calls / count.operations:.2f}"
                                    for name, calls in top) + f",{count.method}\n")

    def _latency_curves(self, points: list[Point], work: Path, bind: str | None) -> None:
        """Open loop at fractions of each server's closed-loop maximum (the median of the
        point's rounds), from a fresh server per server; rows go to latency.csv."""
        self._each_server_fresh(points, work, bind, self._latency_curve)

    def identify(self, process: ServerProcess | RedisClusterProcess) -> None:
        """Asks a just-started server its build, once per server of the experiment (an A/A
        copy is its original's build)."""
        name = process.spec.name
        if name in self.identities or name not in {s.name for s in self.experiment.servers}:
            return
        identity = process.identify()
        self.identities[name] = identity.as_json()
        self.say(f"server {name}: {identity.path}, version {identity.version or 'unknown'} "
                 f"({identity.version_source}), sha256 {identity.sha256 or 'unknown'}")

    def build_of(self, server: str) -> str:
        return self.identities.get(server.removesuffix("-copy"), {}).get("build", "")

    def _each_server_fresh(self, points: list[Point], work: Path, bind: str | None,
                           measure: Callable[[Point, ServerProcess | RedisClusterProcess,
                                              str | None], None]) -> None:
        """measure(point, process, netns) for each point, from one fresh server per server."""
        remote = bind is not None
        for server in self.experiment.servers:
            mine = [p for p in points if p.server == server.name]
            if not mine:
                continue
            process = self.starter.process(server, work, bind)
            try:
                process.start()
            except ServerError as error:
                self.problems.append(f"server {server.name} failed to start: {error}")
                continue
            self.identify(process)
            netns = CLIENT_NAMESPACE if remote else None
            try:
                for point in mine:
                    measure(point, process, netns)
            finally:
                process.stop()

    def _latency_curve(self, point: Point, process: ServerProcess | RedisClusterProcess,
                       netns: str | None) -> None:
        key = _key(point)
        measured = [r for r in self.rows if r.get("status") == "ok"
                    and tuple(str(r.get(v, "")) for v in point.variables()) == key]
        try:
            maximum = latency.closed_loop_maximum(measured)
        except ValueError as error:
            self.problems.append(f"latency curve {point.server}/{point.sweep}: {error}")
            return
        target = process.target(point.transport)
        if point_fill(point):
            error = self.starter.prefill(point, target, netns)
            if error:
                self.problems.append(f"latency curve {point.server}/{point.sweep}: prefill: {error}")
                return
        out_dir = self.run_dir / "latency"
        out_dir.mkdir(exist_ok=True)
        self.say(f"latency curve {point.server} {point.sweep} {point.command}: closed-loop "
                 f"maximum {maximum:,.0f} ops/s, open loop at {list(point.latency_curve)}")
        rows, problems = latency.measure_curve(point, maximum, self.build_dir, target, out_dir,
                                               point.latency_curve, self.harness_cpus, netns)
        self.problems.extend(problems)
        latency.append_curve_rows(self.run_dir / "latency.csv", point, rows)

    def _round(self, round_no: int, points: list[Point], work: Path, writer: PointsWriter,
               progress: Progress, bind: str | None) -> None:
        remote = bind is not None
        names = {p.server for p in points}
        processes: dict[str, ServerProcess | RedisClusterProcess] = {}
        try:
            for server in self.experiment.servers:
                if server.name not in names:
                    continue
                process = self.starter.process(server, work, bind)
                try:
                    process.start()
                    processes[server.name] = process
                    self.identify(process)
                except ServerError as error:
                    self._give_up([p for p in points if p.server == server.name], round_no,
                                  "failed", f"server {server.name} failed to start: {error}",
                                  writer, progress)
            prefilled: dict[str, set] = {name: set() for name in processes}
            for slot in paired_slots(_slots(points), self.experiment.comparisons, self.random):
                servers = sorted({p.server for p in slot}, key=[s.name for s in
                                 self.experiment.servers].index)
                order = paired_order(servers, slot, self.experiment.comparisons, self.random)
                for name in order:
                    process = processes.get(name)
                    if process is None:
                        continue
                    group = [p for p in slot if p.server == name]
                    if not process.alive():
                        self._give_up(group, round_no, "failed",
                                      f"server {name} died: {process.log_tail()}",
                                      writer, progress)
                        continue
                    self._measure_group(group, round_no, process, processes, prefilled[name],
                                        writer, progress,
                                        netns=CLIENT_NAMESPACE if remote else None)
        finally:
            for process in processes.values():
                process.stop()

    def _measure_remote(self, points: list[Point], work: Path, writer: PointsWriter,
                        progress: Progress) -> None:
        link = RemoteLink(self.repo, self.build_dir, self.experiment.remote_rtt_us,
                          self.experiment.remote_rate_mbit)
        try:
            link.up()
        except LinkUnavailable as error:
            problem = f"remote link unavailable: {error}"
            self.say(problem)
            self.problems.append(problem)
            pair_points = alternated_points.pair_points(
                [p for p in self.pairs if p.point_a.transport == "remote"], self.experiment)
            for point in points + pair_points:
                for round_no in range(1, point.repetitions + 1):
                    self._give_up([point], round_no, "skipped", problem, writer, progress,
                                  announce=False)
            return
        self._link = link
        try:
            measured = link.measured or {}
            self.remote_link = link.meta()
            # The link's forwarder carries every remote request: its CPU is ours, not foreign.
            self.helper_pids = pids_named("kvlab-link")
            self.say(f"remote link up: server at {link.server_address}, RTT configured "
                     f"{self.experiment.remote_rtt_us} us, measured p50 "
                     f"{measured.get('measured_p50_us', '?')} us")
            self._run_rounds("remote", points, work, writer, progress,
                             bind=link.server_address)
            self._alternate("remote", work, writer, progress, bind=link.server_address,
                            netns=CLIENT_NAMESPACE)
        finally:
            self.helper_pids = []
            self._link = None
            link.down()

    def _give_up(self, points: list[Point], round_no: int, status: str, problem: str,
                 writer: PointsWriter, progress: Progress, announce: bool = True) -> None:
        """Records measurements that cannot be made, with the reason, and moves on."""
        if announce:
            self.say(problem)
            self.problems.append(problem)
        for point in points:
            self._write(writer, [{**_unmeasured_row(point, round_no, status, problem),
                                  BUILD_COLUMN: self.build_of(point.server)}])
            progress.point_done(point, status)

    def _write(self, writer: PointsWriter, rows: list[dict]) -> None:
        writer.write(rows)
        self.rows.extend(rows)

    # ---- one measurement ---------------------------------------------------------------

    def _measure_group(self, group: list[Point], round_no: int,
                       process: ServerProcess | RedisClusterProcess,
                       processes: dict[str, ServerProcess | RedisClusterProcess],
                       prefilled: set, writer: PointsWriter, progress: Progress,
                       netns: str | None) -> None:
        first = group[0]
        try:
            target = process.target(first.transport)
            process.check_point(first.command, first.value_shape)
        except ServerError as error:
            self._give_up(group, round_no, "failed", str(error), writer, progress)
            return
        if first.loadgen == "kvlab-load" and first.command in CONTAINER_WRITES:
            # LPUSH on a key an earlier SET point left a string in is WRONGTYPE.
            process.flush()
            prefilled.clear()
        fill = (point_fill(first), first.keys, first.value_size)
        if first.loadgen == "kvlab-load" and fill[0] and fill not in prefilled:
            # An empty key space first (another size or a SET point may have filled it), so
            # the fill's memory is the key space's alone; the other fills are gone with it.
            current = process.memory()
            if current is not None and current[2] > 0:
                process.flush()
                prefilled.clear()
            error = self.starter.prefill(first, target, netns)
            if error:
                self._give_up(group, round_no, "failed", f"prefill: {error}", writer, progress)
                return
            prefilled.add(fill)
            self._record_memory(first, round_no, process.empty_memory, process.memory(),
                                first_fill=not process.filled)
            process.filled = True
        # Ours on the measured CPUs: the other resident servers, the link's forwarder, us.
        own_pids = tuple([pid for p in processes.values() for pid in p.pids]
                         + self.helper_pids + [os.getpid()])
        watch = loadgens.Watch(tuple(self.measured_cpus), own_pids,
                               self.experiment.disturbance_cores, self.wake_cost_us())
        for attempt in range(MAX_RETRIES + 1):
            server_pids = process.pids if process.spec.is_command else None
            results = [self._load(point, round_no, target, netns, watch, server_pids,
                                  process) for point in group]
            disturbed = any(r.get("status") == "disturbed" for result in results
                            for r in result.rows)
            last = attempt == MAX_RETRIES or not disturbed
            for point, result in zip(group, results):
                rows = result.rows
                for row in rows:
                    if row.get("status") == "disturbed":
                        row["note"] = f"{row.get('note', '')} (attempt {attempt + 1})"
                if result.error and last:
                    problem = f"{point.loadgen}: {result.error}"
                    self.problems.append(f"{point.server}/{point.sweep}: {problem}")
                    rows = rows or [_unmeasured_row(point, round_no, "failed", problem)]
                self._write(writer, rows)
                if last:
                    progress.point_done(point, _summary(rows, result.error if last else None)
                                        + (" DISTURBED" if disturbed else ""))
            if not disturbed or any(r.error for r in results):
                return

    def _record_memory(self, point: Point, round_no: int, before: tuple | None,
                       after: tuple | None, first_fill: bool) -> None:
        """Bytes per key of the filled key space over the empty server: INFO used_memory
        (allocator level, as Redis counts it; blank for a command row whose server reports
        none) and RSS as a cross-check, and a command row's PSS. RSS and PSS are only
        meaningful for a process's first fill (freed pages are not returned), so later fills
        leave them blank."""
        if before is None or after is None or after[2] <= 0:
            return
        used = "" if before[0] is None or after[0] is None else \
            f"{(after[0] - before[0]) / after[2]:.1f}"
        pss = f"{(after[3] - before[3]) / after[2]:.1f}" if first_fill and len(after) > 3 \
            and after[3] is not None and before[3] is not None else ""
        added = after[2]
        path = self.run_dir / "memory.csv"
        new = not path.exists()
        with path.open("a") as handle:
            if new:
                handle.write(",".join(MEMORY_COLUMNS) + "\n")
            handle.write(f"{point.server},{point.transport},{round_no},{added},"
                         f"{point.value_size},{used},"
                         + (f"{(after[1] - before[1]) / added:.1f}" if first_fill else "")
                         + f",{point.value_shape},{pss}\n")

    def _load(self, point: Point, round_no: int, target: str, netns: str | None,
              watch: loadgens.Watch, server_pids: list[int] | None = None,
              process: ServerProcess | RedisClusterProcess | None = None,
              prefill: bool = True) -> loadgens.LoadResult:
        """One kvlab-load run of one round of `point`; its rows are the points.csv rows.
        A server that keeps a log (`process`'s appendfsync) is read before and after it:
        its fsyncs and log bytes per operation join the rows (durability.py)."""
        if process is not None and process.spec.appendfsync:
            # INCRBY's keys are reset to 0 before the first reading, not inside the run.
            reset = point.command == "incrby"
            if reset:
                error = self.starter.zero_counters(point, target, netns)
                if error:
                    return loadgens.LoadResult([], f"INCRBY keys not reset: {error}")
            outcome: list[loadgens.LoadResult] = []
            columns = durability.measure(
                process.control, process.pid,
                lambda: outcome.append(self._load(point, round_no, target, netns, watch,
                                                  server_pids, prefill=not reset)),
                self.problems, f"{point.server}/{point.sweep}")
            for row in outcome[0].rows:
                row.update(columns)
            return outcome[0]
        self._histogram_count += 1
        slug = (f"{self._histogram_count:04d}-{point.server}-{point.sweep}-{point.transport}-"
                f"{point.client}-{point.command}-k{point.keys}-p{point.pipeline}-t{point.threads}")
        single = dataclasses.replace(point, repetitions=1)
        csv_path = Path("histograms") / f"{slug}.csv"
        # Relative to the run folder (kvlab-load runs there): the rows name the histogram so.
        result = loadgens.run_kvlab_load(
            single, self.build_dir, target, self.harness_cpus, netns, csv_path,
            Path("histograms") / f"{slug}.json", prefill=prefill and point.command == "incrby",
            labels={"repetition": str(round_no), BUILD_COLUMN: self.build_of(point.server)},
            watch=watch, cwd=self.run_dir, server_pids=server_pids)
        (self.run_dir / csv_path).unlink(missing_ok=True)
        return result

    def wake_cost_us(self) -> float | None:
        """What every kvlab-load of this run subtracts per sleep of ours (--wake-cost-us)."""
        return None if self.wake_cost is None else float(self.wake_cost["wake_cost_us"])

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
            "plan": self.plan.as_json(),
            "remote_rtt_us": self.experiment.remote_rtt_us,
            "servers": {s.name: {"describe": s.describe(), "kind": s.kind, "engine": s.engine,
                                 "shards": s.shards, "hop": s.hop, "stripes": s.stripes,
                                 "io_threads": s.io_threads, "seed_engine": s.seed_engine,
                                 "stage_sample": s.stage_sample,
                                 "appendfsync": s.appendfsync,
                                 **({"command": s.command, "version": s.version,
                                     "nodes": s.nodes, "route": s.route}
                                    if s.is_command else {})}
                        for s in self.experiment.servers},
            "sweeps": {s.name: {"seed": s.seed, "duration": s.duration, "warmup": s.warmup,
                                "repetitions": s.repetitions}
                       for s in self.experiment.sweeps},
            "comparisons": [dataclasses.asdict(c) for c in self.experiment.comparisons],
            "precision": self.experiment.precision,
            "measurement": self.experiment.measurement,
            "budget_s": self.experiment.budget_s,
            "disturbance_cores": self.experiment.disturbance_cores,
            # What the watch left out of others' work per sleep of ours, and when measured.
            "wake_cost": self.wake_cost,
            # How the measured CPUs waited when idle (cpu_idle.py): held to polling or not.
            "cpu_idle": self.idle_hold.describe(self.measured_cpus),
            "machine": machine.describe_machine(self.repo),
            # Each logged row's folder: the device and filesystem its fsyncs reached.
            "log_folders": self.log_folders,
            "command": " ".join(sys.argv),
        }

    def _write_meta(self, meta: dict) -> None:
        path = self.run_dir / "meta.json"
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(meta, indent=2) + "\n")
        temporary.replace(path)
