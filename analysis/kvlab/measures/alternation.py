"""Alternating measurement's slices (kvlab-load --alternate-with, harness/alternation.h):
pairs, ratios, the machine's noise, and where the next round buys most.

A run alternates the load between side A and side B in ABBA slices. Each pair of
adjacent slices (0-1: A then B, 2-3: B then A, ...) gives one ratio A/B of a metric:

- `ops_per_s`: the slice's ops over its measured seconds;
- `ops_per_server_cpu_s`: ops over the side's server CPU seconds in the slice (what a
  request costs the server; the measure that still tells servers apart when the client
  is the bottleneck, and which a client-bound comparison is judged on).

Per round (fresh processes) the pairs' log ratios go to stats.paired_interval.

Open loop (a latency comparison: both sides offered the same rate), the metric is a
percentile of latency (`p50_us`, `p99_us`; lower is better). A percentile of one 100 ms
slice holds few requests and is no mean of anything, so it is not taken per pair: the
slices of a batch of consecutive pairs (stats.batch_size, whole ABBA cycles, inside one
round) merge into one histogram per side, and each batch gives log(pA/pB); the round's
merged histograms give its own; stats.batched_interval turns those into the interval
(`latency_interval`).

A stall (a slice in which its side served no operation) is not left out: dropping the
pair would favour the side that stalls and shift the ABBA order of every later pair.
It counts against its side: as STALL_OPS (half an operation) over the slice's seconds
or server CPU, and in a latency batch as many requests as the other side's slice of
the pair answered, each waiting the whole slice (a lower bound: none was answered in
it). `stalls` counts them per side, and the run says so.

Calibration figures of an A/A run (a server against a copy of itself):
- slice CV: the standard deviation of log ops/s between slices of one side;
- drift: the same side's throughput from the first to the last fifth of a round, as
  a percentage (median over rounds of its absolute value);
- the precision the budget buys: the half-width one second of alternating reaches,
  scaled as 1/sqrt(seconds) (the A/A interval's half-width times sqrt of its seconds).

Disturbance, per cycle (`clean_round`): each slice carries the foreign CPU (others' work
on the measured CPUs) and steal in it, to /proc/stat's 10 ms ticks, so one slice's figure
scatters by about 0.13 cores around zero when nothing else runs, and a mean over one ABBA
cycle of four slices by about 0.07 (measured on the 2-core VM). A cycle whose mean is
above CYCLE_DISTURBED_CORES (or four times the run's disturbance_cores, where that is
more) is left out with the cycles on either side of it (a burst's
edges fall in them): a busy loop pinned on the server CPU for 2 s of a 10 s alternation
put its cycles at 0.29-0.57 cores and every quiet one within +-0.2. What is left must be
quiet as a whole (its mean foreign CPU and steal at most the run's disturbance_cores) and
hold at least half the round's cycles; otherwise the whole round is disturbed. So a
compiler that runs for two seconds of a round costs those seconds, not the round.

Pure functions; `read_alternation` reads kvlab-load's JSON.
"""

from __future__ import annotations

import dataclasses
import json
import math
import statistics
from pathlib import Path
from typing import Hashable

from ..schema.specs import LATENCY_QUANTILES
from .histograms import Histogram
from .stats import PairedSummary, batch_size, batched_interval

# A comparison whose client used this share of its cores is client-bound.
CLIENT_BOUND_SHARE = 0.9
# An ABBA cycle with more foreign CPU (or steal) than this, in cores, is left out: four
# times the run's disturbance_cores (0.05 by default), never below what /proc's tick
# rounding leaves a quiet cycle (within +-0.2 here); a run that raises disturbance_cores
# to ignore other work raises this with it.
CYCLE_DISTURBED_CORES = 0.2
CYCLE_DISTURBED_FACTOR = 4
SLICES_PER_CYCLE = 4
# What a slice that served nothing counts as: half an operation (see the docstring).
STALL_OPS = 0.5


@dataclasses.dataclass(frozen=True)
class Slice:
    side: int            # 0 = A, 1 = B
    start_s: float
    seconds: float
    ops: int
    server_cpu_s: float  # < 0: not read
    client_cpu_s: float
    mean_us: float
    p99_us: float
    histogram: dict | None = dataclasses.field(default=None, compare=False)  # open loop
    drain_s: float = 0.0  # from the slice's end until its side had nothing in flight
    foreign_cores: float = math.nan  # others' CPU on the measured CPUs; NaN: not read
    steal_cores: float = math.nan

    @property
    def stalled(self) -> bool:
        """Its side served no operation in a slice that ran."""
        return self.ops == 0 and self.seconds > 0

    def value(self, metric: str) -> float:
        ops = STALL_OPS if self.stalled else self.ops
        if metric == "ops_per_server_cpu_s":
            return ops / self.server_cpu_s if self.server_cpu_s > 0 else math.nan
        return ops / self.seconds if self.seconds > 0 else math.nan


def read_alternation(path: Path) -> tuple[dict, list[Slice]]:
    """kvlab-load's alternation JSON: the document and its slices in time order."""
    document = json.loads(Path(path).read_text())
    watched = bool(document.get("slices_measure_cpus"))
    slices = [Slice(int(s["side"]), float(s["start_s"]), float(s["seconds"]), int(s["ops"]),
                    _number(s.get("server_cpu_s")), _number(s.get("client_cpu_s")),
                    _number(s.get("mean_us")), _number(s.get("p99_us")), s.get("histogram"),
                    float(s.get("drain_s") or 0),
                    float(s["foreign_cpu"]) if watched else math.nan,
                    float(s["steal_cpu"]) if watched else math.nan)
              for s in document.get("slices", [])]
    return document, slices


def _number(value: float | None) -> float:
    return -1.0 if value is None else float(value)


def pair_log_ratios(slices: list[Slice], metric: str = "ops_per_s") -> list[float]:
    """log(A/B) of every adjacent pair of slices, in time order; a stalled side counts as
    STALL_OPS; a pair missing the metric (no server CPU read, no seconds) is left out."""
    ratios = []
    for first, second in zip(slices[0::2], slices[1::2]):
        if {first.side, second.side} != {0, 1}:
            raise ValueError("slices are not in alternating pairs")
        a, b = (first, second) if first.side == 0 else (second, first)
        va, vb = a.value(metric), b.value(metric)
        if va > 0 and vb > 0 and math.isfinite(va) and math.isfinite(vb):
            ratios.append(math.log(va / vb))
    return ratios


def clean_round(slices: list[Slice], disturbance_cores: float,
                limit: float | None = None) -> tuple[list[Slice] | None, int]:
    """The round's slices without its disturbed ABBA cycles (see the module's docstring),
    and how many cycles were left out; None instead of slices when the round as a whole
    is disturbed. `limit`: a cycle's limit in cores (default: CYCLE_DISTURBED_FACTOR times
    disturbance_cores, at least CYCLE_DISTURBED_CORES). Slices without foreign figures
    (NaN) are kept as they are."""
    if limit is None:
        limit = max(CYCLE_DISTURBED_CORES, CYCLE_DISTURBED_FACTOR * disturbance_cores)
    cycles = [slices[i:i + SLICES_PER_CYCLE] for i in range(0, len(slices), SLICES_PER_CYCLE)]

    def level(group: list[Slice], name: str) -> float:
        values = [getattr(s, name) for s in group]
        return statistics.fmean(values) if values and all(math.isfinite(v) for v in values) \
            else math.nan

    busy = [max(level(c, "foreign_cores"), level(c, "steal_cores")) > limit for c in cycles]
    dropped = [any(busy[j] for j in (i - 1, i, i + 1) if 0 <= j < len(busy))
               for i in range(len(cycles))]
    kept = [s for cycle, drop in zip(cycles, dropped) if not drop for s in cycle]
    left_out = sum(dropped)
    if 2 * left_out > len(cycles):
        return None, left_out
    for name in ("foreign_cores", "steal_cores"):
        if level(kept, name) > disturbance_cores:
            return None, left_out
    return kept, left_out


def stalls(slices: list[Slice]) -> tuple[int, int]:
    """How many slices of side A and of side B served no operation."""
    return (sum(s.stalled for s in slices if s.side == 0),
            sum(s.stalled for s in slices if s.side == 1))


def _stall_histogram(stalled: Slice, partner: Slice) -> dict:
    """A stalled open-loop slice's requests: as many as its partner answered in the same
    length of time, each waiting at least the whole slice."""
    wait = max(1, int(stalled.seconds * 1e9))
    return {"count": partner.ops, "min": wait, "max": wait, "buckets": [[wait, wait, partner.ops]]}


def _merged(slices: list[Slice]) -> Histogram:
    merged = Histogram()
    for s in slices:
        if s.histogram:
            merged.add(s.histogram)
    return merged


def _side_histograms(slices: list[Slice]) -> list[Histogram]:
    """Side A's and side B's merged histograms over these slices, stalled slices counted
    against their side (paired as the slices come: 0-1, 2-3, ...)."""
    sides = [_merged([s for s in slices if s.side == side]) for side in (0, 1)]
    for first, second in zip(slices[0::2], slices[1::2]):
        for stalled, partner in ((first, second), (second, first)):
            if stalled.stalled and partner.ops > 0:
                sides[stalled.side].add(_stall_histogram(stalled, partner))
    return sides


def _sum_of(parts: list[list[Histogram]]) -> list[Histogram]:
    """Per side, the merge of already merged histograms."""
    sides = [Histogram(), Histogram()]
    for part in parts:
        for side in (0, 1):
            sides[side].add_histogram(part[side])
    return sides


def _log_ratio(sides: list[Histogram], quantile: float) -> float:
    """log(A's quantile / B's); NaN when a side is empty."""
    a, b = (h.value_at_quantile(quantile) for h in sides)
    return math.log(a / b) if a > 0 and b > 0 else math.nan


def latency_interval(rounds: list[list[Slice]], metric: str,
                     between_rounds: bool = True) -> PairedSummary:
    """A/B of a latency percentile (`metric` in LATENCY_QUANTILES) over rounds of open-loop
    slices with histograms: per batch of consecutive pairs, per round and over all rounds,
    from merged histograms (see the module's docstring). Each slice's histogram is merged
    once, into its batch (or its round, past the last whole batch); a round's histograms
    are the merge of its batches', the centre's of its rounds': the same counts as merging
    every slice at each level, a third of the work (the coverage tests merge 100,000). A
    stalled slice's partner is always the other slice of its pair inside its own round."""
    quantile = LATENCY_QUANTILES[metric]
    rounds = [r for r in rounds if len(r) >= 2]
    batches, by_round, round_sides = [], [], []
    for slices in rounds:
        pairs = len(slices) // 2
        size = batch_size(pairs)
        whole = pairs - pairs % size  # pairs in whole batches
        parts = []
        for first in range(0, whole, size):
            parts.append(_side_histograms(slices[2 * first:2 * (first + size)]))
            value = _log_ratio(parts[-1], quantile)
            if math.isfinite(value):
                batches.append(value)
        parts.append(_side_histograms(slices[2 * whole:]))  # the rest, an odd slice too
        round_sides.append(_sum_of(parts))
        value = _log_ratio(round_sides[-1], quantile)
        if math.isfinite(value):
            by_round.append(value)
    pairs = sum(len(r) // 2 for r in rounds)
    if not by_round:
        return PairedSummary(0, 0, math.nan, math.nan, math.nan, 0, "none")
    centre = _log_ratio(_sum_of(round_sides), quantile)
    return batched_interval(centre, batches, by_round, pairs, between_rounds)


def side_latency_us(rounds: list[list[Slice]], side: int, quantile: float) -> float:
    """One side's latency percentile in µs over every slice of these rounds."""
    return _merged([s for r in rounds for s in r if s.side == side]).value_at_quantile(
        quantile) / 1000.0


def slice_cv(slices: list[Slice], side: int = 0) -> float:
    """The standard deviation of log ops/s between one side's slices."""
    logs = [math.log(s.value("ops_per_s")) for s in slices if s.side == side and s.ops > 0]
    return statistics.stdev(logs) if len(logs) >= 2 else math.nan


def drift(slices: list[Slice], side: int = 0) -> float:
    """One side's mean ops/s in the last fifth of the round over the first fifth, minus 1."""
    mine = [s.value("ops_per_s") for s in slices if s.side == side and s.ops > 0]
    fifth = len(mine) // 5
    if fifth < 1:
        return math.nan
    return statistics.fmean(mine[-fifth:]) / statistics.fmean(mine[:fifth]) - 1


def client_bound(slices: list[Slice], allowed_cores: float, threads: int | None) -> bool:
    """On either side, the client used at least CLIENT_BOUND_SHARE of the cores it could
    (a dedicated client's threads at most one core each) in that side's median slice:
    then the throughput ratio measures the client as much as the servers (as in
    declared_ratios.py, where either side's rounds count)."""
    if allowed_cores <= 0:
        return False
    limit = min(allowed_cores, threads) if threads else allowed_cores
    for side in (0, 1):
        cores = [s.client_cpu_s / s.seconds for s in slices if s.side == side and s.seconds > 0]
        if cores and statistics.median(cores) >= CLIENT_BOUND_SHARE * limit:
            return True
    return False


def seconds_for(half_width: float, seconds: float, target: float) -> float:
    """Seconds of alternating a ratio needs to reach `target`, if its half-width
    after `seconds` was `half_width` (half-widths fall as 1/sqrt(time))."""
    if not (half_width > 0 and math.isfinite(half_width)) or seconds <= 0:
        return math.inf
    return seconds * (half_width / target) ** 2


def next_to_measure(states: dict, target: float, min_rounds: int,
                    seconds_left: float = math.inf,
                    last_started: dict | None = None) -> Hashable | None:
    """The comparison the next round should go to, or None when every one is resolved
    or no round fits in `seconds_left`.

    `states`: name -> (rounds, half_width, seconds per round[, attempts[, needed_s]]). A
    comparison with fewer than min_rounds rounds comes first, the one tried least first
    (attempts: rounds plus those lost to disturbance or failure, default its rounds, so
    one that keeps being disturbed does not starve the others). Then the one cheapest to
    finish: the smallest needed_s (the seconds its own starts say it still needs to reach
    the target) among those whose needed_s fits in seconds_left, so that the time left
    resolves as many comparisons as it can. Two default runs gave their last minutes to
    the ratio furthest from its target (a million-key GET needing 382 s more) while three
    others ended 2-14 s short, `not resolved (budget)`. Where every one that can finish
    fits in seconds_left together, they take turns instead, the one started longest ago
    first (`last_started`: name -> its latest start's time.monotonic(); never started
    first): all of them finish either way, and no ratio's last starts fall in one block of
    the host's states (a default run gave one seed claim its last eight starts back to
    back, all in one low state). Only where none can finish, the
    one furthest from its target per second of measuring: the largest
    (half_width / target - 1) over its round's seconds, among those whose round fits. A
    comparison within its target after min_rounds gets no more."""
    def fits(state: tuple) -> bool:
        return state[2] <= seconds_left

    short = [(state[3] if len(state) > 3 else state[0], name)
             for name, state in states.items() if state[0] < min_rounds and fits(state)]
    if short:
        return min(short)[1]
    open_ = {name: state for name, state in states.items()
             if state[1] > target and state[0] >= min_rounds and fits(state)}
    finishable = [(state[4], name) for name, state in open_.items()
                  if len(state) > 4 and math.isfinite(state[4]) and state[4] <= seconds_left]
    if finishable:
        if last_started is not None and sum(needed for needed, _ in finishable) <= seconds_left:
            return min(finishable,
                       key=lambda item: (last_started.get(item[1], -math.inf), item[0]))[1]
        return min(finishable, key=lambda item: item[0])[1]
    best, best_score = None, 0.0
    for name, (rounds, half_width, seconds, *_) in open_.items():
        score = (min(half_width, 1e6) / target - 1) / max(seconds, 1e-9)
        if score > best_score:
            best, best_score = name, score
    return best
