"""The sweep points of the declared ratios, measured from the alternation's own starts.

A point that is a side of a declared ratio is measured by alternation anyway (at least
min_rounds fresh starts, each serving that side for about alternation_s / 2 seconds of
0.1 s slices). Measuring it again in the sweeps' rounds cost a default run about a
fifth of its budget, the time its declared ratios then lacked. So the runner leaves
these points out of the rounds and writes one points.csv row per kept start and side
(`start_rows`), and the seed-shaped tables read them as they read a round's row. A
point whose ratio the budget plan left out has no start: it gets its sweep rounds after
the alternation (`unmeasured_points`), so the tables keep it.

What a start's row has: its side's operations over its slices' seconds (the ratio's own
rate), the CPUs over the same slices, the ops-weighted mean latency, and whether the
client was the bottleneck in that round. No percentiles: a slice's p99 is not a start's,
and the slices' histograms are not kept. Pure functions; the runner writes the rows.
"""

from __future__ import annotations

import math
from typing import Iterable, Protocol

from ..measures.alternation import Slice
from ..schema.specs import CompareSpec, Point, point_fill, is_ycsb

# points.csv's note on a row measured as one start of an alternated ratio
START_NOTE = "alternation start"


class AlternatedPair(Protocol):
    """What these functions read of an alternating.Pair (a protocol: alternating imports
    this module)."""
    spec: CompareSpec
    calibration: bool
    point_a: Point
    point_b: Point
    rounds: list[list[Slice]]
    round_bound: list[bool]


class Servers(Protocol):
    """What these functions read of the experiment: a server's settings by name."""
    def server(self, name: str) -> object: ...


def point_identity(point: Point) -> tuple:
    """A point as points.csv's variables spell it (repetitions and durations aside)."""
    return tuple(str(v) for v in point.variables().values())


def measured_by_starts(point: Point, servers: Servers) -> bool:
    """Whether a start's rows hold all that the point's rounds would: a closed-loop
    throughput point with nothing measured beside it. Not: a point with a prefill (its
    fill's bytes per key are measured in rounds, memory.csv), YCSB (misses and wrong
    types are counted per round), latency curves or system calls (measured after a
    round's points), or a server that keeps a log (fsyncs per operation)."""
    return (point.loadgen == "kvlab-load" and not point_fill(point) and not is_ycsb(point.command)
            and not point.latency_curve and not point.syscalls
            and not getattr(servers.server(point.server), "appendfsync", None))


def _throughput_pairs(pairs: Iterable[AlternatedPair]) -> list[AlternatedPair]:
    """The declared pairs whose starts measure each side's throughput: closed loop (a
    latency comparison offers both sides one rate), the A/A's copy aside."""
    return [p for p in pairs if not p.calibration and not p.spec.rate
            and p.spec.metric == "ops_per_s"]


def pair_points(pairs: Iterable[AlternatedPair], servers: Servers) -> list[Point]:
    """The points the declared pairs' starts measure in place of rounds, each once."""
    seen: dict[tuple, Point] = {}
    for pair in _throughput_pairs(pairs):
        for point in (pair.point_a, pair.point_b):
            if measured_by_starts(point, servers):
                seen.setdefault(point_identity(point), point)
    return list(seen.values())


def unmeasured_points(pairs: Iterable[AlternatedPair], servers: Servers) -> list[Point]:
    """The pair points no kept start measured (their ratios were left out by the budget
    plan, failed or were disturbed in every round): they need their sweep rounds."""
    pairs = _throughput_pairs(pairs)
    measured = {point_identity(point) for pair in pairs if pair.rounds
                for point in (pair.point_a, pair.point_b)}
    return [p for p in pair_points(pairs, servers) if point_identity(p) not in measured]


def start_rows(pair: AlternatedPair, servers: Servers) -> list[tuple[Point, dict]]:
    """One row per kept start of `pair` and side whose point is measured by starts
    (pair_points): (the side's point, its points.csv values). The caller adds the
    repetition number and the server's build."""
    if not _throughput_pairs([pair]):
        return []
    rows = []
    for index, slices in enumerate(pair.rounds):
        bound = pair.round_bound[index] if index < len(pair.round_bound) else False
        for side, point in ((0, pair.point_a), (1, pair.point_b)):
            if not measured_by_starts(point, servers):
                continue
            mine = [s for s in slices if s.side == side]
            ops = sum(s.ops for s in mine)
            seconds = sum(s.seconds for s in mine)
            if seconds <= 0:
                continue
            row = {**point.variables(), "status": "ok", "note": START_NOTE, "ops": ops,
                   "seconds": round(seconds, 6), "ops_per_s": round(ops / seconds, 1),
                   "errors": 0, "client_bound": "true" if bound else "false",
                   "client_cpu": _cores([s.client_cpu_s for s in mine], seconds),
                   "server_cpu": _cores([s.server_cpu_s for s in mine], seconds),
                   "client_cpu_us_per_op": _per_op([s.client_cpu_s for s in mine], ops),
                   "server_cpu_us_per_op": _per_op([s.server_cpu_s for s in mine], ops)}
            if ops > 0 and all(math.isfinite(s.mean_us) for s in mine if s.ops):
                row["mean_us"] = round(sum(s.mean_us * s.ops for s in mine) / ops, 2)
            rows.append((point, row))
    return rows


def _cores(cpu_seconds: list[float], seconds: float) -> str:
    """CPU seconds over wall seconds; '' where a slice's CPU was not read (< 0)."""
    if not cpu_seconds or any(c < 0 for c in cpu_seconds):
        return ""
    return f"{sum(cpu_seconds) / seconds:.4f}"


def _per_op(cpu_seconds: list[float], ops: int) -> str:
    if not cpu_seconds or ops <= 0 or any(c < 0 for c in cpu_seconds):
        return ""
    return f"{sum(cpu_seconds) / ops * 1e6:.4f}"
