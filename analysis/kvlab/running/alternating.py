"""Declared comparisons measured by alternation (measurement = "alternate", the default):
both sides up at once, the load moving between them in ABBA slices (kvlab-load
--alternate-with, harness/alternation.h), fresh processes every round.

A round of one pair of points: its servers are started afresh and pinned to the server
CPUs (two servers for a comparison along the server, and for the A/A calibration, a
server against a second copy of itself; one server for client setups, nodelay, io
models ...), their keys prefilled, then one kvlab-load alternates between the two sides
for `alternation_s` seconds after a warm-up. Every slice becomes a row of
alternation.csv. The ABBA cycles in which other work used the measured CPUs are left
out of the round (alternation.clean_round, `left_out` in alternation.csv); a round
whose remainder is still above `disturbance_cores`, or that lost more than half its
cycles, is written but left out of the interval, and the pair is measured again: both
sides share a disturbance in time, but not in effect. In one headline run on a 2-core
VM with builds beside it, the ratios of disturbed rounds moved with the machine's speed
(their round means spread about three times their noise inside a round), while
undisturbed rounds agreed to within that noise.

Where the rounds go (AlternatingPhase.run): the A/A pair gets the experiment's
`min_rounds` rounds first (the one stopping rule of declared_ratios.py, default 10), the
machine's noise; then each declared ratio the rounds kvlab.measures.budget_plan gives it
from the time left (none: `not measured (budget)`), planned again after every round;
then each further round goes to the declared comparison cheapest to finish within the
time left, else the one furthest from its precision target per second of its round
(kvlab.measures.alternation.next_to_measure), until every one is within it over at
least min_rounds, its pair reached max_rounds, or no round fits before the phase's
deadline.

A pair whose sides were client-bound in most rounds (kvlab-load saturated its cores) is
judged on ops per second of server CPU instead of ops/s, and says so.

A latency comparison (metric p50_us or p99_us, `rate` ops/s) alternates open loop: both
sides are offered the same rate, one at a time, and each slice's latency histogram
belongs to its side (alternation.latency_interval); latency_pairs.csv keeps each side's
percentiles beside the ratio.

Every server start of a measured round is written to starts.csv with its layout's
fingerprint (start_records.py); a side whose starts have modes says which fingerprint
field they follow, if one does (measures.mode_layouts), in ratios.csv's modes_a/modes_b.
"""

from __future__ import annotations

import csv
import dataclasses
import math
import os
import random
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Callable, Protocol, Sequence

from ..measures import alternation, budget_plan
from ..measures.declared_ratios import RatioResult, median_of, meets_target
from ..measures.host_sensitivity import HostFit, host_fit, state_fit
from ..measures.mode_layouts import layout_text
from ..measures.modes import Modes, ratio_modes
from ..measures.stats import MIN_ROUNDS_FOR_SPREAD, PairedSummary, paired_interval
from ..schema.specs import POINT_VARIABLES, CompareSpec, Experiment, Point, point_fill
from .host_probe import HostProbe
from .loadgens import Watch, alternation_command
from .server_starter import ServerStarter
from .alternated_points import pair_points, point_identity
from .start_records import append_starts, mode_fields, start_fingerprint, start_row
from .servers import RedisClusterProcess, ServerError, ServerProcess


# Seconds a round costs beyond its measured alternation: starting the servers, prefills,
# kvlab-load's connections (measured as the run goes; this is the first guess).
ROUND_OVERHEAD_S = 1.5

# The plan aims a little inside the target: it predicts a log-symmetric half-width, while
# a ratio resolves on its two-level interval's larger side, which the skewness
# correction makes up to 18% wider (a default run: 5 ratios planned to ±2.0% ended at
# ±1.8-1.9% symmetric, ±2.2% on the larger side, `not resolved` for 7-14 s each).
PLAN_AIM = 0.85

# A declared ratio's starts are as long as its own variance components say
# (budget_plan.start_seconds, after MIN_ROUNDS_FOR_SPREAD starts at the experiment's
# alternation_s): at least this many ABBA cycles (two: four pairs of slices, two batches),
# at most alternation_s. A default run's million-key SET claims varied about 7% from
# start to start while their slices varied 1% over a second: 2 s starts (3 s a start
# with its processes) bought 11 starts where 0.8 s ones buy about 18. Never longer: a
# longer start pays only where starts do not differ, and a few starts cannot show that
# (run R: one ratio's between-start estimate read 0 to 2.3% from one start to the next,
# its length 0.8, 1.6, 2, 1.6 then 4 s).
SHORTEST_START_CYCLES = 2
ALTERNATION_COLUMNS = ("comparison", "test", "point", "calibration", "round", "index", "side",
                       "start_s", "seconds", "ops", "server_cpu_s", "client_cpu_s", "mean_us",
                       "p99_us", "foreign_cpu", "steal_cpu", "disturbed", "client_bound",
                       "slice_foreign_cpu", "slice_steal_cpu", "left_out")

# host_probes.csv: each round's host probe before its servers start and after they stop
# (millions of probe reads per second, and microseconds per page fault of its fresh
# buffer: host_probe.py), and whether the round was kept.
HOST_PROBE_COLUMNS = ("comparison", "test", "point", "calibration", "round", "before",
                      "after", "before_fault_us", "after_fault_us", "kept")


@dataclasses.dataclass
class Pair:
    """Two points to alternate between, and what was learnt of them so far."""
    spec: CompareSpec
    test: str
    label: str
    point_a: Point
    point_b: Point
    calibration: bool = False
    rounds: list[list[alternation.Slice]] = dataclasses.field(default_factory=list)
    bound: int = 0          # rounds in which the client was the bottleneck
    disturbed: int = 0      # rounds with foreign CPU above the threshold (left out)
    failed: int = 0
    cycles_left_out: int = 0  # disturbed ABBA cycles left out of kept rounds
    # slices of kept rounds in which side a / b served nothing (counted against that side)
    stalled: list[int] = dataclasses.field(default_factory=lambda: [0, 0])
    # per kept round, side a's and side b's start fingerprints (start_records.py; {}: none)
    prints: list[tuple[dict, dict]] = dataclasses.field(default_factory=list)
    # per kept round, whether kvlab-load was the bottleneck in it
    round_bound: list[bool] = dataclasses.field(default_factory=list)
    # per kept round, the host probe's speed around it (host_probe.py; NaN: not probed)
    host_speeds: list[float] = dataclasses.field(default_factory=list)

    @property
    def attempts(self) -> int:
        return len(self.rounds) + self.failed + self.disturbed
    seconds: list[float] = dataclasses.field(default_factory=list)  # wall time per round
    # seconds of alternating asked of each round (as `seconds`), and of the next one
    # (None: the experiment's alternation_s)
    lengths: list[float] = dataclasses.field(default_factory=list)
    next_length: float | None = None
    # time.monotonic() when its latest start (kept or not) began; None: never started
    last_started: float | None = None

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def key(self) -> tuple:
        return (self.spec.name, self.test, self.label)

    @property
    def client_bound(self) -> bool:
        return self.bound * 2 > len(self.rounds)

    @property
    def metric(self) -> str:
        """What the pair is judged on: the declared metric, or ops per server CPU second
        when a throughput comparison was client-bound."""
        if self.client_bound and self.spec.metric == "ops_per_s":
            return "ops_per_server_cpu_s"
        return self.spec.metric

    def summary(self, metric: str | None = None) -> PairedSummary:
        metric = metric or self.metric
        if metric in alternation.LATENCY_QUANTILES:
            return alternation.latency_interval(self.rounds, metric)
        # an A/A's sides are exchangeable: its interval is not corrected for skewness
        return paired_interval([alternation.pair_log_ratios(r, metric) for r in self.rounds],
                               symmetric=self.calibration)

    def start_values(self, metric: str | None = None) -> tuple[list[float], list[float],
                                                                 list[float]]:
        """Per start (round): side A's rate, side B's, and the start's ratio (geometric
        mean of its pairs); a rate is its side's ops over its slices' seconds (or server
        CPU seconds, for ops_per_server_cpu_s). Latency metrics: ratios only."""
        metric = metric or self.metric
        a, b, ratios = [], [], []
        for slices in self.rounds:
            logs = alternation.pair_log_ratios(slices, metric) \
                if metric not in alternation.LATENCY_QUANTILES else []
            if logs:
                ratios.append(math.exp(sum(logs) / len(logs)))
            if metric in alternation.LATENCY_QUANTILES:
                continue
            for side, out in ((0, a), (1, b)):
                rate = _side_rate(slices, side, metric)
                if rate is not None:
                    out.append(rate)
        return a, b, ratios

    def start_layouts(self, modes_a: Modes, modes_b: Modes) -> tuple[str, str]:
        """For each side with modes, which fingerprint field its starts' modes follow
        (measures.mode_layouts.layout_text); '' for a side without modes or fingerprints."""
        if self.metric in alternation.LATENCY_QUANTILES:  # no per-side rates, no modes
            return "", ""
        texts = []
        for side, modes in ((0, modes_a), (1, modes_b)):
            values, prints = [], []
            for slices, round_prints in zip(self.rounds, self.prints):
                rate = _side_rate(slices, side, self.metric)
                if rate is not None:
                    values.append(rate)
                    prints.append(mode_fields(round_prints[side]))
            texts.append(layout_text(values, prints, modes))
        return texts[0], texts[1]

    def modes(self) -> tuple[Modes, Modes, float]:
        """The modes of each side's per-start rates, and the distance between the modes
        of the per-start ratios (1.0: none found): measures.modes.ratio_modes."""
        return ratio_modes(*self.start_values())

    def host_fit(self, target: float | None = None) -> HostFit | None:
        """Each kept round's ratio fitted on its host speed, and in the order the rounds
        were measured (measures.host_sensitivity: host_fit, state_fit): the probe's fit
        where it moves by more than `target`, else the state fit where that does, else
        the probe's fit (the state fit without probes); None for a latency metric or
        with too few rounds."""
        if self.metric in alternation.LATENCY_QUANTILES:
            return None
        ratios = []
        for slices in self.rounds:
            logs = alternation.pair_log_ratios(slices, self.metric)
            ratios.append(math.exp(sum(logs) / len(logs)) if logs else math.nan)
        probe = host_fit(ratios, self.host_speeds) \
            if len(self.host_speeds) == len(self.rounds) else None
        if probe is not None and probe.moves(target):
            return probe
        in_time = state_fit(ratios)
        if in_time is not None and (in_time.moves(target) or probe is None):
            return in_time
        return probe

    def host_sensitive(self, target: float) -> HostFit | None:
        """The host fit, where the ratio moves with the host by more than `target`."""
        fit = self.host_fit(target)
        return fit if fit is not None and fit.moves(target) else None

    def round_seconds(self, guess: float | None = None) -> float:
        """The median wall time of this pair's rounds (once its starts' length changed:
        the median of what a round cost beyond its alternating, plus the next length);
        before it has one, `guess` (another pair's on this machine), else its warm-up plus
        ROUND_OVERHEAD_S."""
        if self.seconds and self.next_length is not None and \
                len(self.lengths) == len(self.seconds):
            return self.start_overhead() + self.next_length
        if self.seconds:
            return sorted(self.seconds)[len(self.seconds) // 2]
        return guess if guess is not None else self.point_a.warmup + ROUND_OVERHEAD_S

    def start_overhead(self) -> float:
        """The median seconds a round cost beyond its alternating (processes, prefill,
        connections, probes); NaN before a round with a recorded length."""
        return median_of([s - n for s, n in zip(self.seconds, self.lengths)])

    def length(self, default: float) -> float:
        """Seconds of alternating for this pair's next round."""
        return self.next_length if self.next_length is not None else default


def _side_rate(slices: list[alternation.Slice], side: int, metric: str) -> float | None:
    """One side's rate over a round: its ops over its slices' seconds (or server CPU
    seconds, for ops_per_server_cpu_s); None when it had no time."""
    mine = [s for s in slices if s.side == side]
    ops = sum(s.ops for s in mine)
    time_s = sum(s.server_cpu_s if metric == "ops_per_server_cpu_s" else s.seconds
                 for s in mine)
    return ops / time_s if time_s > 0 else None


def _modes_text(modes: Modes, layout: str) -> str:
    if not modes.modes:
        return ""
    return modes.text() + (f"; {layout}" if layout else "")


def pair_result(pair: Pair, target: float, min_rounds: int, spent_s: float,
                planned: budget_plan.Planned | None = None) -> RatioResult:
    """A pair's ratio as declared_ratios.py reports one; a client-bound throughput comparison
    carries the metric it was judged on (ops per server CPU second). `planned`: the last
    budget plan's entry for it; one the plan left out, short of min_rounds, is `not
    measured (budget)` with the seconds it needed, whatever its few rounds say."""
    summary = pair.summary()
    needed_s = math.nan
    if planned is not None and not planned.measured and len(pair.rounds) < min_rounds \
            and not pair.failed:
        status, needed_s = budget_plan.NOT_MEASURED_BUDGET, planned.needed_s
    elif not pair.rounds:
        status = "failed" if pair.failed else "disturbed" if pair.disturbed else "inconclusive"
    elif meets_target(summary, target, min_rounds):
        status = "resolved"
    else:
        # short of its target when time ran out: what the plan's own rule says it still
        # needs, on its own start variance, aimed as the plan aims
        status = "inconclusive"
        needed_s = budget_plan.seconds_to_target(summary, target * PLAN_AIM, min_rounds,
                                                 pair.round_seconds())
    spec = dataclasses.replace(pair.spec, metric=pair.metric)
    modes_a, modes_b, between = pair.modes()
    rates_a, rates_b, _ = pair.start_values()
    layout_a, layout_b = pair.start_layouts(modes_a, modes_b)
    fit = pair.host_fit(target)
    host = (fit.slope, fit.p_value, fit.slow_ratio, fit.fast_ratio) if fit is not None \
        else (math.nan,) * 4
    return RatioResult(spec, pair.test, pair.label, summary, pair.disturbed, status,
                       pair.client_bound, point_key(pair.point_a), point_key(pair.point_b),
                       method=f"alternation: {summary.method}", pairs=summary.pairs,
                       seconds=spent_s, modes_a=_modes_text(modes_a, layout_a),
                       modes_b=_modes_text(modes_b, layout_b),
                       modes_between=between, budget_needed_s=needed_s, target=target,
                       median_a=median_of(rates_a), median_b=median_of(rates_b),
                       host_slope=host[0], host_p=host[1], host_slow=host[2],
                       host_fast=host[3], host_by=fit.by if fit is not None else "")


def plan_text(plan: dict, pairs: list[Pair], target: float, prior_var: float) -> str:
    """What the budget can decide, said once the A/A has measured the machine's noise:
    how many ratios reach the target, how many only a lesser precision, how many are
    left out and the seconds they would need."""
    declared = [p for p in pairs if not p.calibration]
    reach = [p for p in declared if plan[p.key].reaches_target]
    lesser = [p for p in declared if plan[p.key].measured and not plan[p.key].reaches_target]
    left_out = [p for p in declared if not plan[p.key].measured]
    seeds = [p for p in declared if p.spec.seed_ratio is not None]
    noise = (f"a start's ratio varies ±{math.expm1(math.sqrt(prior_var)):.1%} (A/A)"
             if not math.isnan(prior_var) else "the A/A gave no start variance")
    text = (f"plan: {noise}; of {len(declared)} declared ratios {len(reach)} can reach "
            f"±{target:.1%} in the time left"
            + (f" ({sum(p in reach for p in seeds)} of {len(seeds)} seed claims)" if seeds
               else ""))
    if lesser:
        widest = max(plan[p.key].predicted_half for p in lesser)
        text += f", {len(lesser)} only a lesser precision (up to ±{widest:.1%})"
    if left_out:
        need = sum(plan[p.key].needed_s for p in left_out)
        text += (f", {len(left_out)} not measured (budget): they would need about "
                 f"{need:.0f} s more")
    return text


def plan_rows(plan: dict | None, pairs: list[Pair]) -> list[dict]:
    """meta.json's record of a plan: per declared ratio, its planned starts, the predicted
    half-width, and the seconds it still cost and would have needed."""
    if not plan:
        return []
    rows = []
    for p in pairs:
        if p.calibration or p.key not in plan:
            continue
        planned = plan[p.key]
        rows.append({"comparison": p.name, "test": p.test, "point": p.label,
                     "seed_claim": p.spec.seed_ratio is not None, "rounds": planned.rounds,
                     "predicted_half_width": None if math.isinf(planned.predicted_half)
                     else round(planned.predicted_half, 4),
                     "cost_s": round(planned.cost_s, 1), "needed_s": round(planned.needed_s, 1),
                     "measured": planned.measured, "reaches_target": planned.reaches_target})
    return rows


def calibration_pair(pairs: list[Pair],
                     reference: Callable[[str], bool] = lambda server: False) -> Pair | None:
    """The A/A pair: the reference side (b) of the first comparison along the server whose
    b is a `reference` server (redis-server), else of the first along the server, against
    a copy of itself at that comparison's point; else the first pair's a side."""
    if not pairs:
        return None
    by_server = [p for p in pairs if p.spec.by == "server"]
    by_server.sort(key=lambda p: not reference(p.point_b.server))
    source = by_server[0] if by_server else pairs[0]
    point = source.point_b if by_server else source.point_a
    spec = CompareSpec(name=f"A/A {point.server}", by="server", a=point.server,
                       b=point.server)
    return Pair(spec, point.command, source.label, point, point, calibration=True)


def _partner_key(point: Point, spec: CompareSpec) -> tuple:
    loose = {"connections", "pipeline"} if spec.by == "client" else set()
    return tuple(v for k, v in point.variables().items() if k != spec.by and k not in loose)


def declared_pairs(points: list[Point], comparisons: Sequence[CompareSpec],
                   label: Callable[[dict[str, str], str], str]) -> list[Pair]:
    """Every (a, b) pair of points the declared comparisons name (the pairing rule of
    declared_ratios.py); `label(variables, by)` names the pair."""
    pairs = []
    for spec in comparisons:
        partners = {}
        for point in points:
            if str(getattr(point, spec.by)) == spec.b:
                partners.setdefault(_partner_key(point, spec), point)
        for point in points:
            if str(getattr(point, spec.by)) != spec.a or not spec.matches(point):
                continue
            partner = partners.get(_partner_key(point, spec))
            if partner is not None:
                variables = {k: str(v) for k, v in point.variables().items()}
                pairs.append(Pair(spec, point.command, label(variables, spec.by), point, partner))
    return pairs


class AlternationHost(Protocol):
    """What alternation needs of the run that hosts it (runner.Runner is one): its
    experiment, folder and CPUs, the starter of its servers, and where problems and
    messages go. A protocol, so that this module need not import the runner that
    imports it."""
    experiment: Experiment
    run_dir: Path
    build_dir: Path
    harness_cpus: str | None
    measured_cpus: list[int]
    helper_pids: list[int]
    problems: list[str]
    interrupted: bool
    starter: ServerStarter

    def identify(self, process: ServerProcess | RedisClusterProcess) -> None: ...

    def say(self, text: str) -> None: ...


class AlternatingPhase:
    """Measures pairs by alternation; `runner` provides the run's folder, CPUs, servers'
    starter, the watch and the messages."""

    def __init__(self, runner: AlternationHost, pairs: list[Pair], work: Path, bind: str | None = None,
                 netns: str | None = None, carried_var: float = math.nan,
                 later: list[Pair] | None = None,
                 rounds_cost: Callable[[list[Point]], float] = lambda points: 0.0,
                 before_start: Callable[[], str | None] | None = None,
                 host_speed: Callable[[], float] | None = None) -> None:
        self.runner = runner
        # the host's speed now (host_probe.py), timed before and after every round;
        # injectable for tests (default: a HostProbe on the measured CPUs, made at first use)
        self._host_speed = host_speed
        self._probe: HostProbe | None = None
        # called before each round's servers start (the remote phase: a fresh link
        # forwarder); a message it returns fails the round
        self.before_start = before_start
        self.pairs = pairs
        # what the sweeps' rounds of some points cost: a ratio the plan leaves out has its
        # points measured in rounds after this phase (alternated_points.py), kept in time
        self.rounds_cost = rounds_cost
        # a later phase's pairs (the remote ones, after the local): this phase leaves
        # them min_rounds each, at what a round costs here once the A/A has measured one
        self.later = later or []
        self.work = work
        self.bind = bind
        self.netns = netns
        self.path = runner.run_dir / "alternation.csv"
        self.spent_s = {p.key: 0.0 for p in pairs}
        # budget_plan's plans: the one made when the A/A had its rounds (said up front),
        # and the latest; `carried_var`: an earlier phase's A/A start variance
        self.first_plan: dict | None = None
        self.plan: dict | None = None
        self.carried_var = carried_var
        self.calibration = next((p for p in pairs if p.calibration), None)
        # the order of the seed claims within each cycle of their interleaved starts: a
        # fresh random permutation per cycle (Abedi & Brecht's randomized multiple
        # interleaved trials), drawn lazily by (ratio, starts so far); injectable
        self.order_rng = random.Random()
        self._cycle_rank: dict[tuple, float] = {}

    def run(self, deadline: float, target: float, max_rounds: int, min_rounds: int) -> str:
        """The A/A pair's rounds first (the machine's noise), then the rounds that
        budget_plan gives each declared ratio from the time left, planned again after
        every round on what the rounds so far say; then, while time is left, rounds for
        the ratio cheapest to finish, else the one furthest from its target per second.
        Stops when every planned ratio is
        resolved, at max_rounds, or when the next round would pass `deadline`
        (time.monotonic()); returns why it stopped."""
        calibration = self.calibration
        base_deadline = deadline
        while True:
            deadline = base_deadline - self._later_reserve(min_rounds, base_deadline, target,
                                                           max_rounds)
            if calibration is not None and len(calibration.rounds) < min_rounds and \
                    calibration.attempts < 2 * max_rounds:
                pair = calibration
                deadline -= self._rounds_reserve(None)
            else:
                self.plan = self._plan_with_rounds_kept(deadline, target, min_rounds,
                                                        max_rounds)
                deadline -= self._rounds_reserve(self.plan)
                if self.first_plan is None:
                    self.first_plan = self.plan
                    self.runner.say(plan_text(self.plan, self.pairs, target, self.prior_var()))
                pair = self._next_pair(target, max_rounds, min_rounds,
                                       deadline - time.monotonic())
                if pair is None and self._next_pair(target, max_rounds, min_rounds) is not None:
                    return "time budget reached"
                if pair is None:
                    if any(p.attempts >= max_rounds and p.summary().half_width > target
                           for p in self.pairs if not p.calibration and self._planned(p)):
                        return f"max_rounds ({max_rounds}) reached"
                    if any(not self._planned(p) for p in self.pairs if not p.calibration):
                        return "time budget reached: the plan left ratios out"
                    moving = sum(1 for p in self.pairs
                                 if not p.calibration and p.host_sensitive(target))
                    return (f"every declared ratio met ±{target:.1%} over at least "
                            f"{min_rounds} rounds"
                            + (f" or moves with the host's speed or state ({moving})"
                               if moving else ""))
            if time.monotonic() + pair.round_seconds(self._round_guess()) > deadline:
                return "time budget reached"
            started = time.monotonic()
            pair.last_started = started
            length = pair.length(self.runner.experiment.alternation_s)
            self.measure_round(pair)
            took = time.monotonic() - started
            pair.seconds.append(took)
            pair.lengths.append(length)
            self.spent_s[pair.key] += took
            self._choose_length(pair, target, min_rounds)
            if self.runner.interrupted:
                return "interrupted"

    def _choose_length(self, pair: Pair, target: float, min_rounds: int) -> None:
        """Sets the length of the pair's next starts from its own starts so far
        (budget_plan.start_seconds, whole ABBA cycles), and says so when it changes. The
        A/A keeps the experiment's: it is the machine's noise at that length."""
        experiment = self.runner.experiment
        if pair.calibration or pair.metric in alternation.LATENCY_QUANTILES or \
                len(pair.rounds) < MIN_ROUNDS_FOR_SPREAD or \
                len(pair.lengths) != len(pair.seconds) or math.isnan(target):
            return
        summary = pair.summary()
        overhead = max(0.0, pair.start_overhead())
        cycle = 4 * experiment.slice_s
        shortest = SHORTEST_START_CYCLES * cycle
        # no ratio's starts differ less than a server's against its own copy's: the A/A's
        # between-start variance is the floor of a ratio's, whose own estimate from a few
        # starts often reads 0 (then min_rounds of short starts were planned to reach
        # the target and a run R claim took 30)
        between = max(summary.between_var, self._machine_between_var())
        length = budget_plan.start_seconds(
            between, summary.pair_var, 1 / (2 * experiment.slice_s), overhead,
            target * PLAN_AIM, min_rounds, shortest, experiment.alternation_s)
        if math.isnan(length):
            return
        length = round(max(shortest, round(length / cycle) * cycle), 6)
        if abs(length - pair.length(experiment.alternation_s)) < cycle / 2:
            return
        pair.next_length = length
        self.runner.say(
            f"alternation {pair.name} {pair.test} {pair.label}: starts of {length:g} s from "
            f"now (between starts ±{math.sqrt(between):.1%}, its slices "
            f"±{math.sqrt(summary.pair_var * 2 * experiment.slice_s):.1%} over a second, "
            f"{overhead:.1f} s a start beyond its alternating)")

    def _machine_between_var(self) -> float:
        """The A/A's between-start variance once it has starts enough (0: none)."""
        aa = self.calibration
        if aa is None or len(aa.rounds) < MIN_ROUNDS_FOR_SPREAD:
            return 0.0
        between = aa.summary().between_var
        return between if between > 0 else 0.0

    def _rounds_reserve(self, plan: dict | None) -> float:
        """What the sweeps' rounds of the points that no start will measure cost: those of
        the ratios `plan` leaves out (all, before a plan) that have no kept start, less the
        points a measured ratio shares."""
        left_out = [p for p in self.pairs if not p.calibration and not p.rounds
                    and (plan is None or p.key not in plan or not plan[p.key].measured)]
        out = {id(p) for p in left_out}
        measured = {point_identity(point) for p in self.pairs
                    if not p.calibration and id(p) not in out
                    for point in (p.point_a, p.point_b)}
        rounds = pair_points(left_out, self.runner.experiment)
        return self.rounds_cost([point for point in rounds
                                 if point_identity(point) not in measured])

    def _plan_with_rounds_kept(self, deadline: float, target: float, min_rounds: int,
                               max_rounds: int) -> dict:
        """The budget plan inside the time that also leaves the left-out ratios' points
        their rounds: which ratios are left out depends on the time, so the plan is made
        again with the reserve of the last one, until the two agree (3 times at most)."""
        plan = self.plan
        for _ in range(3):
            new = self.make_plan(deadline - self._rounds_reserve(plan), target, min_rounds,
                                 max_rounds)
            if plan is not None and {k: v.measured for k, v in new.items()} == \
                    {k: v.measured for k, v in plan.items()}:
                return new
            plan = new
        return plan

    def _later_reserve(self, min_rounds: int, deadline: float = math.inf,
                       target: float = math.nan, max_rounds: int = 0) -> float:
        """Seconds kept for the later phase's pairs: min_rounds each at this machine's
        round cost (the A/A's measured round, before it the first guess), less what this
        phase's seed claims still need of the time to `deadline`. A guess that is too
        high leaves the later phase time it can only spend on its own widest ratio while
        this phase's ratios go unmeasured. Seed claims come first: in four default runs
        the remote ratios' 10 starts each (about 180 s) were kept while 1-4 seed claims
        went unmeasured or ended a start short of the target. What is always kept: the
        sweeps' rounds of the later pairs' points, which they get if none is measured."""
        full = sum(min_rounds * p.round_seconds(self._round_guess()) for p in self.later)
        if not full or not math.isfinite(deadline):
            return full
        floor = min(full, self.rounds_cost(pair_points(self.later, self.runner.experiment)))
        left = deadline - time.monotonic()
        seed_need = self._seed_claims_need(target, min_rounds, max_rounds)
        return max(floor, min(full, left - seed_need))

    def _seed_claims_need(self, target: float, min_rounds: int, max_rounds: int) -> float:
        """Seconds this phase's seed-claim ratios still need: the rounds budget_plan gives
        them with no limit on time (their own variance once they have it, else the
        A/A's; min_rounds while neither is known)."""
        inputs = [self._plan_input(p) for p in self.pairs
                  if not p.calibration and p.spec.seed_ratio is not None
                  and p.attempts < 2 * max_rounds]
        if not inputs or math.isnan(target):
            return 0.0
        wanted = budget_plan.plan(inputs, math.inf, target * PLAN_AIM, min_rounds, max_rounds,
                                  self.prior_var())
        return sum(planned.cost_s for planned in wanted.values())

    def prior_var(self) -> float:
        """The start variance of a ratio without its own: this phase's A/A's, else the
        one the runner carried over from an earlier phase (NaN: none)."""
        if self.calibration is not None:
            own = budget_plan.start_variance(self.calibration.summary())
            if not math.isnan(own):
                return own
        return self.carried_var

    def _round_guess(self) -> float:
        """A round's seconds before a pair has one of its own: the A/A's, else the
        experiment's alternation plus ROUND_OVERHEAD_S."""
        if self.calibration is not None and self.calibration.seconds:
            return self.calibration.round_seconds()
        return self.runner.experiment.alternation_s + ROUND_OVERHEAD_S

    def make_plan(self, deadline: float, target: float, min_rounds: int,
                  max_rounds: int) -> dict:
        inputs = [self._plan_input(p) for p in self.pairs
                  if not p.calibration and p.attempts < 2 * max_rounds]
        left = deadline - time.monotonic() if math.isfinite(deadline) else math.inf
        return budget_plan.plan(inputs, left, target * PLAN_AIM, min_rounds, max_rounds,
                                self.prior_var())

    def _plan_input(self, pair: Pair) -> budget_plan.PlanInput:
        # a start of the next length has that length's pairs of slices
        pairs = pair.next_length / (2 * self.runner.experiment.slice_s) \
            if pair.next_length is not None else None
        return budget_plan.PlanInput(pair.key, pair.spec.seed_ratio is not None,
                                     len(pair.rounds), pair.round_seconds(self._round_guess()),
                                     budget_plan.start_variance(pair.summary(), pairs))

    def _planned(self, pair: Pair) -> bool:
        planned = self.plan.get(pair.key) if self.plan is not None else None
        return planned is None or planned.measured

    def _next_pair(self, target: float, max_rounds: int, min_rounds: int,
                   seconds_left: float = math.inf) -> Pair | None:
        """Among the pairs whose next round fits in `seconds_left`: a planned ratio short
        of its planned rounds (seed claims first, taking turns: the one with the fewest
        starts, ties in a random order drawn afresh each cycle; then, among the others,
        one short of min_rounds, then a started one, the most started first, then the
        one with the fewest attempts); then
        the one cheapest to finish (in turns where all of them fit), else the widest one
        per second (next_to_measure). A
        round that does not fit no longer ends the phase while a cheaper one would.
        For the other ratios, finishing what is started before starting
        another means a ratio the plan drops later, as its estimates change, has rarely
        been started (a default run started four redis-cluster ratios once each, at 5 s a
        start, and then dropped all four). Every planned ratio gets its min_rounds before
        one goes past them: two default runs gave one SET seed claim 40 starts (its plan
        grew with its spread) and the four GET seed claims none, `not measured (budget)`,
        each needing about 28 s. A ratio found host-sensitive at a multiple of min_rounds
        starts gets no more (its interval cannot reach the target while the host moves)."""
        def open_(p: Pair) -> bool:
            # a ratio that moves with the host's speed is not narrowed by more starts;
            # looked at every min_rounds starts only, so that a ratio gets a few looks
            # rather than one after every start (each a chance of a false alarm)
            n = len(p.rounds)
            return not p.calibration and n < max_rounds and \
                p.attempts < 2 * max_rounds and self._planned(p) and \
                not (n >= min_rounds and n % max(min_rounds, 1) == 0
                     and p.host_sensitive(target))
        # a ratio already within its target is done, whatever its plan said: the plan
        # predicts from its start variance, which can be wider than its interval (run P:
        # a seed claim at ±0.9% after 10 starts was planned 32 and given them)
        guess = self._round_guess()
        short = [p for p in self.pairs if open_(p) and self.plan is not None
                 and len(p.rounds) < self.plan[p.key].rounds
                 and p.round_seconds(guess) <= seconds_left
                 and not meets_target(p.summary(), target, min_rounds)]
        seeds = [p for p in short if p.spec.seed_ratio is not None]
        if seeds:
            # Seed claims take turns, one start each per cycle in a random order, so that
            # each one's starts spread over the host's states across the phase instead of
            # one block of them falling in a single state: in a default run one claim's
            # ten back-to-back starts sat 14-19% above its next thirty, and over 21 runs
            # one claim's values ranged 9.5-12.2 with intervals of ±0.4-2.9% (median 1.4%).
            return min(seeds, key=lambda p: (len(p.rounds), self._rank_in_cycle(p)))
        if short:
            return min(short, key=lambda p: (len(p.rounds) >= min_rounds, not p.rounds,
                                             -len(p.rounds), p.attempts))
        states = {}
        for p in self.pairs:
            if not open_(p):
                continue
            summary, round_s = p.summary(), p.round_seconds(guess)
            # what the plan's own rule says it still needs, aimed as the plan aims
            needed = budget_plan.seconds_to_target(summary, target * PLAN_AIM, min_rounds,
                                                   round_s)
            states[p.key] = (len(p.rounds), summary.half_width, round_s, p.attempts,
                             needed if not math.isnan(needed) else math.inf)
        key = alternation.next_to_measure(states, target, min_rounds, seconds_left,
                                          {p.key: p.last_started for p in self.pairs
                                           if p.last_started is not None})
        return next((p for p in self.pairs if p.key == key), None)

    def _rank_in_cycle(self, pair: Pair) -> float:
        """The pair's place in its current cycle of interleaved starts: random, drawn
        once per (pair, starts so far), so that a pair whose start failed keeps its
        place and each cycle gets a fresh permutation."""
        key = (pair.key, len(pair.rounds))
        if key not in self._cycle_rank:
            self._cycle_rank[key] = self.order_rng.random()
        return self._cycle_rank[key]

    def host_speed(self) -> tuple[float, float]:
        """The host probe's speed now, and its microseconds per page fault (NaN from an
        injected probe)."""
        if self._host_speed is None:
            self._probe = HostProbe(self.runner.measured_cpus)
            self._host_speed = self._probe.speed
        speed = self._host_speed()
        return speed, self._probe.fault_us if self._probe is not None else math.nan

    def measure_round(self, pair: Pair) -> None:
        """One round, bracketed by host probes whose geometric mean the round keeps."""
        kept = len(pair.rounds)
        round_no = pair.attempts + 1
        before, before_fault = self.host_speed()
        self._measure_round(pair)
        after, after_fault = self.host_speed()
        if len(pair.rounds) > kept:
            pair.host_speeds.append(math.sqrt(before * after)
                                    if before > 0 and after > 0 else math.nan)
        path = self.runner.run_dir / "host_probes.csv"
        new = not path.exists()
        with path.open("a", newline="") as handle:
            writer = csv.writer(handle)
            if new:
                writer.writerow(HOST_PROBE_COLUMNS)
            writer.writerow([pair.name, pair.test, pair.label,
                             "true" if pair.calibration else "false", round_no,
                             _cell(before), _cell(after), _cell(before_fault),
                             _cell(after_fault),
                             "true" if len(pair.rounds) > kept else "false"])

    def _measure_round(self, pair: Pair) -> None:
        runner = self.runner
        round_no = pair.attempts + 1
        problem = self.before_start() if self.before_start is not None else None
        if problem:
            pair.failed += 1
            runner.problems.append(f"alternation {pair.name} {pair.label} round {round_no}: "
                                   f"{problem}")
            runner.say(f"alternation {pair.name} round {round_no}: FAILED: {problem}")
            return
        two_servers = pair.calibration or pair.spec.by == "server"
        specs = [runner.experiment.server(pair.point_a.server)]
        if two_servers:
            second = runner.experiment.server(pair.point_b.server)
            if pair.calibration:
                second = dataclasses.replace(second, name=f"{second.name}-copy")
            specs.append(second)
        processes = [runner.starter.process(spec, self.work, self.bind) for spec in specs]
        problem = None
        # Which server is launched first, and which is stopped first, is drawn afresh for
        # every start: side a launched and stopped first every time would give it the same
        # place in whatever the kernel hands out in order (pids, the pages the last start
        # freed, the first wake-ups) in all of a run's starts, a difference that repeats
        # rather than averages. The order is part of each start's fingerprint (`launched`).
        launch = self.order_rng.sample(range(len(processes)), len(processes))
        try:
            for index in launch:
                processes[index].start()
                runner.identify(processes[index])
            prints = [start_fingerprint(process) for process in processes]
            if len(processes) > 1:
                for position, index in enumerate(launch, start=1):
                    prints[index]["launched"] = position
            for process, point in zip(processes, (pair.point_a, pair.point_b)):
                process.check_point(point.command, point.value_shape)
            targets = [processes[0].target(pair.point_a.transport),
                       processes[-1].target(pair.point_b.transport)]
            if point_fill(pair.point_a):
                for process, point, target in zip(processes, (pair.point_a, pair.point_b), targets):
                    problem = runner.starter.prefill(point, target, self.netns)
                    if problem:
                        break
            if problem is None:
                problem = self._alternate(pair, round_no, targets, processes,
                                          (prints[0], prints[-1]))
        except ServerError as error:
            problem = f"server failed: {error}"
        except (ValueError, OSError) as error:  # a pair kvlab-load cannot alternate, a lost file
            problem = str(error)
        finally:
            for index in self.order_rng.sample(range(len(processes)), len(processes)):
                processes[index].stop()
        if problem:
            pair.failed += 1
            runner.problems.append(f"alternation {pair.name} {pair.label} round {round_no}: "
                                   f"{problem}")
            runner.say(f"alternation {pair.name} round {round_no}: FAILED: {problem}")

    def _alternate(self, pair: Pair, round_no: int, targets: list[str],
                   processes: list[ServerProcess | RedisClusterProcess],
                   prints: tuple[dict, dict]) -> str | None:
        runner = self.runner
        experiment = runner.experiment
        own = tuple([pid for p in processes for pid in p.pids]
                    + runner.helper_pids + [os.getpid()])
        # A command row's CPU is its process tree's (/proc): kvlab-load --server-pids.
        server_pids = (processes[0].pids if processes[0].spec.is_command else None,
                       processes[-1].pids if processes[-1].spec.is_command else None)
        watch = Watch(tuple(runner.measured_cpus), own, experiment.disturbance_cores,
                      runner.wake_cost_us())
        length = pair.length(experiment.alternation_s)
        with tempfile.TemporaryDirectory(prefix="kvlab-alternation-") as folder:
            json_path = Path(folder) / "alternation.json"
            command = alternation_command(
                pair.point_a, targets[0], pair.point_b, targets[1], runner.build_dir,
                runner.harness_cpus, self.netns, json_path, length,
                experiment.slice_s, watch, prefill=pair.point_a.command == "incrby",
                rate=pair.spec.rate or 0, server_pids=server_pids)
            budget = length + pair.point_a.warmup + 60
            try:
                done = subprocess.run(command, capture_output=True, text=True, timeout=budget)
            except subprocess.TimeoutExpired:
                return f"kvlab-load did not finish within {budget:.0f} s"
            if done.returncode != 0 or not json_path.exists():
                tail = " | ".join((done.stderr or done.stdout).strip().splitlines()[-2:])
                return f"kvlab-load exited with status {done.returncode}: {tail}"
            document, slices = alternation.read_alternation(json_path)
        if len(slices) < 4:
            return f"only {len(slices)} slices measured"
        threads = pair.point_a.threads if pair.point_a.client == "dedicated" else None
        bound = alternation.client_bound(slices, float(document.get("allowed_cores") or 0),
                                         threads)
        if document.get("slices_measure_cpus"):
            kept, left_out = alternation.clean_round(slices, experiment.disturbance_cores)
        else:  # no figures per slice: the round's own decides
            kept, left_out = (None if document.get("disturbed") else slices), 0
        disturbed = kept is None
        stalled = alternation.stalls(kept) if kept else (0, 0)
        if disturbed:
            pair.disturbed += 1
        else:
            pair.rounds.append(kept)
            pair.prints.append(prints)
            pair.bound += bound
            pair.round_bound.append(bool(bound))
            pair.cycles_left_out += left_out
            pair.stalled = [n + m for n, m in zip(pair.stalled, stalled)]
        self._write(pair, round_no, slices, document, bound, set(map(id, kept or [])))
        names = (pair.name, pair.test, pair.label, "true" if pair.calibration else "false")
        append_starts(runner.run_dir / "starts.csv",
                      [start_row(names, round_no, side, process.spec.name, not disturbed, p)
                       for side, process, p in zip("ab", (processes[0], processes[-1]),
                                                   prints)])
        summary = pair.summary()
        runner.say(f"alternation {pair.name} {pair.test} {pair.label} round {round_no}: "
                   f"{len(slices)} slices, ratio {summary.ratio:.3f}"
                   + (f" [{summary.low:.3f}, {summary.high:.3f}]" if not math.isnan(summary.low)
                      else "")
                   + (" (client-bound: judged per server CPU)" if pair.client_bound else "")
                   + (f", {left_out} disturbed cycles left out" if left_out and not disturbed
                      else "")
                   + (f", stalled slices: {stalled[0]} of a, {stalled[1]} of b, counted "
                      "against their side" if any(stalled) else "")
                   + (" DISTURBED: left out, measured again" if disturbed else ""))
        return None

    def _write(self, pair: Pair, round_no: int, slices: list[alternation.Slice], document: dict,
               bound: bool, kept: set) -> None:
        new = not self.path.exists()
        with self.path.open("a", newline="") as handle:
            writer = csv.writer(handle)
            if new:
                writer.writerow(ALTERNATION_COLUMNS)
            for index, s in enumerate(slices):
                writer.writerow([pair.name, pair.test, pair.label,
                                 "true" if pair.calibration else "false", round_no, index,
                                 "ab"[s.side], f"{s.start_s:.6f}", f"{s.seconds:.6f}", s.ops,
                                 f"{s.server_cpu_s:.6f}", f"{s.client_cpu_s:.6f}",
                                 f"{s.mean_us:.2f}", f"{s.p99_us:.2f}",
                                 _cell(document.get("foreign_cpu")),
                                 _cell(document.get("steal_cpu")),
                                 "true" if document.get("disturbed") else "false",
                                 "true" if bound else "false",
                                 _cell(s.foreign_cores), _cell(s.steal_cores),
                                 "false" if id(s) in kept else "true"])


LATENCY_PAIR_COLUMNS = ("comparison", "test", "point", "rate", "rounds", "a", "b",
                        "a_p50_us", "b_p50_us", "a_p99_us", "b_p99_us", "a_requests",
                        "b_requests", "max_drain_s")


def write_latency_pairs(path: Path, pairs: list[Pair]) -> None:
    """latency_pairs.csv: each latency comparison's sides, their p50 and p99 over every
    undisturbed round's slices, the requests behind them, and the longest drain after a
    switch (a queue that outlived its slice)."""
    latency = [p for p in pairs if p.spec.latency and not p.calibration]
    if not latency:
        return
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(LATENCY_PAIR_COLUMNS)
        for pair in latency:
            requests = [sum(s.ops for r in pair.rounds for s in r if s.side == side)
                        for side in (0, 1)]
            drains = [s.drain_s for r in pair.rounds for s in r]
            figures = [alternation.side_latency_us(pair.rounds, side, q)
                       for q in (0.5, 0.99) for side in (0, 1)] if pair.rounds else [math.nan] * 4
            writer.writerow([pair.name, pair.test, pair.label, f"{pair.spec.rate:g}",
                             len(pair.rounds), pair.spec.a, pair.spec.b]
                            + [f"{v:.1f}" for v in figures] + requests
                            + [f"{max(drains):.4f}" if drains else ""])


def _cell(value: float | None) -> str:
    return "" if value is None or value != value else f"{float(value):.4f}"


def point_key(point: Point) -> tuple:
    return tuple(str(getattr(point, v)) for v in POINT_VARIABLES)
