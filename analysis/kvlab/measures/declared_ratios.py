"""Declared comparisons ([[compare]]): per-round ratios, their intervals, ratios.csv.

A comparison A/B along a variable (`by`, usually the server) pairs every point
whose `by` is A with the point that differs from it only in `by` (= B). In each
round both were measured once, close together in time (runner.py), so the
round's ratio ops/s(A) / ops/s(B) carries little of the drift that moves both.
A comparison's `metric` says what is divided: `ops_per_s` (throughput, the
default) or `ops_per_server_cpu_s` (operations per second of the server's CPU
time, ops/s over server_cpu: what a request costs the server, the measure
that still tells servers apart when the load generator is the bottleneck and
both serve the rate it can drive).
Across rounds the ratios are summarised as a geometric mean with a 95%
interval (stats.ratio_interval: Student's t on the log ratios).

Status of a ratio:
- `resolved`: the interval's half-width (its larger side, as a fraction of the
  ratio) is at most the target precision (the experiment's `precision`, else
  DEFAULT_PRECISION), over at least `min_rounds` rounds (the experiment's, else
  DEFAULT_MIN_ROUNDS), and never fewer than 3 (stats.MIN_ROUNDS_FOR_SPREAD).
  Rounds are added until a ratio resolves, so a run that stopped at the first
  narrow interval would favour the rounds whose spread
  happened to look small: over 3 rounds the spread itself is that uncertain.
  This is the one stopping rule, for rounds and for alternation
  (running/alternating.py) alike. Simulated (log-normal rounds, 3.5% noise,
  target 2%: runs stop near the minimum, median 14 rounds), stopping from
  round 4 on covered the true ratio 91.6% of the time, from round 10 on 94.0%
  (tests/python/running/test_rounds.py, 2,000 runs each);
- `disturbed`: fewer than two rounds with both sides undisturbed, while some
  rounds were lost to disturbance (runner.py re-runs a disturbed measurement a
  bounded number of times);
- `inconclusive`: otherwise (too few rounds, or too much noise for the target).

A throughput ratio whose rounds were mostly client-bound on either side (the
load generator saturated its CPUs) is flagged `client_bound`: it measures the
client as much as the servers.

Pure functions over a points table; no I/O except `write_ratios`.
"""

from __future__ import annotations

import csv
import dataclasses
import math
import statistics
from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from ..schema.specs import DEFAULT_MIN_ROUNDS, POINT_VARIABLES, CompareSpec
from .modes import ratio_modes
from .ratio_verdicts import RatioVerdict, decide_row
from .stats import DEFAULT_PRECISION, MIN_ROUNDS_FOR_SPREAD, RatioSummary, ratio_interval

RATIO_COLUMNS = ("comparison", "test", "point", "ratio", "low", "high", "rounds", "status",
                 "metric", "client_bound", "method", "pairs", "seconds", "verdict",
                 "modes_a", "modes_b", "modes_between", "budget_needed_s",
                 "median_a", "median_b", "host_slope", "host_p", "host_slow", "host_fast",
                 "host_by")
# Point variables that follow from the client strategy rather than being chosen.
FOLLOW_THE_CLIENT = ("connections", "pipeline")


@dataclasses.dataclass(frozen=True)
class RatioResult:
    spec: CompareSpec
    test: str
    point: str                    # a short label of the pair's other variables
    summary: RatioSummary
    disturbed_rounds: int         # rounds lost because a side was disturbed
    status: str
    client_bound: bool            # most rounds had the load generator saturated (either side)
    key_a: tuple                  # the two points' variables, in POINT_VARIABLES order
    key_b: tuple
    # "rounds" (each side in its own window, one after the other), or "alternation:
    # two-level" (starts, then slices: running/alternating.py; stats.two_level_interval)
    method: str = "rounds"
    pairs: int = 0                # alternation: pairs of slices behind the interval
    seconds: float = math.nan     # wall time spent measuring the ratio, where known
    # modes across starts (kvlab.measures.modes.ratio_modes): each side's, as text, and
    # the distance between the per-start ratios' modes (1.0: none)
    modes_a: str = ""
    modes_b: str = ""
    modes_between: float = math.nan
    # status `not measured (budget)`: the seconds the ratio would have needed; status
    # `inconclusive`: the seconds it would still need to reach `target` (NaN: not known)
    budget_needed_s: float = math.nan
    target: float = math.nan      # the half-width the run set out to reach
    # each side's median rate over its starts, in the metric's units (NaN: none): which
    # side moved when the same ratio differs between two runs
    median_a: float = math.nan
    median_b: float = math.nan
    # the per-start ratios fitted on the host probe's speed (host_sensitivity.host_fit):
    # the slope, its permutation p-value, and the fitted ratio at the slow and the fast
    # end of the host speeds seen (NaN: no fit)
    host_slope: float = math.nan
    host_p: float = math.nan
    host_slow: float = math.nan
    host_fast: float = math.nan
    # what the fit is on (HostFit.by): "probe" (the columns above as said), "time" (the
    # starts in measured order: host_slope is their lag-1 autocorrelation, host_slow and
    # host_fast the ratio's low and high state); "": no fit
    host_by: str = ""

    def row(self) -> dict:
        s = self.summary
        return {"comparison": self.spec.name, "test": self.test, "point": self.point,
                "ratio": _fmt(s.ratio), "low": _fmt(s.low), "high": _fmt(s.high),
                "rounds": s.n, "status": self.status, "metric": self.spec.metric,
                "client_bound": "true" if self.client_bound else "false",
                "method": self.method, "pairs": self.pairs or "",
                "seconds": "" if math.isnan(self.seconds) else f"{self.seconds:.1f}",
                "verdict": self.verdict().direction, "modes_a": self.modes_a,
                "modes_b": self.modes_b,
                "modes_between": "" if math.isnan(self.modes_between)
                else f"{self.modes_between:.4f}",
                "budget_needed_s": "" if math.isnan(self.budget_needed_s)
                else f"{self.budget_needed_s:.0f}",
                "median_a": _rate(self.median_a), "median_b": _rate(self.median_b),
                "host_slope": _fmt(self.host_slope), "host_p": _fmt(self.host_p),
                "host_slow": _fmt(self.host_slow), "host_fast": _fmt(self.host_fast),
                "host_by": self.host_by}

    def verdict(self) -> RatioVerdict:
        """What the interval decides (ratio_verdicts.decide_row, the report's rule),
        without a seed."""
        s = self.summary
        return decide_row({"status": self.status, "ratio": s.ratio, "low": s.low,
                           "high": s.high,
                           "metric": self.spec.metric, "rounds": s.n,
                           "modes_between": self.modes_between,
                           "budget_needed_s": self.budget_needed_s,
                           "host_p": self.host_p, "host_slow": self.host_slow,
                           "host_fast": self.host_fast, "host_by": self.host_by},
                          None, self.spec.a, self.spec.b,
                          None if math.isnan(self.target) else self.target)


def _fmt(value: float) -> str:
    return "" if value is None or math.isnan(value) else f"{value:.4f}"


def _rate(value: float) -> str:
    return "" if value is None or math.isnan(value) else f"{value:.6g}"


def median_of(values: Sequence[float]) -> float:
    """The median of a side's per-start rates, NaNs left out (NaN: none)."""
    finite = [v for v in values if not math.isnan(v)]
    return statistics.median(finite) if finite else math.nan


def point_label(variables: dict, by: str) -> str:
    """What identifies the pair besides `by` and the command, shortly."""
    parts = [f"{variables['sweep']}:", variables["transport"], variables["client"],
             f"P{variables['pipeline']}", f"T{variables['threads']}",
             f"keys={variables['keys']}"]
    if by != "server":
        parts.insert(1, variables["server"])
    if variables.get("io", "direct") != "direct":
        parts.append(f"io={variables['io']}")
    if str(variables.get("nodelay")) == "off":
        parts.append("nodelay=off")
    return " ".join(str(p) for p in parts if p != variables.get(by))


def _matches(spec: CompareSpec, variables: dict) -> bool:
    if spec.sweep is not None and variables["sweep"] != spec.sweep:
        return False
    if spec.tests and variables["command"] not in spec.tests:
        return False
    return all(variables[name] in {_text(v) for v in values} for name, values in spec.where)


def _text(value: Any) -> str:
    """One spelling per value whether the table came from memory or from CSV (16 == 16.0)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def point_key(values: Any) -> tuple:
    """A point's variables as the key a RatioResult's key_a and key_b hold: a points row
    or a point table's row (a mapping or a Series) finds its ratio by it."""
    return tuple(_text(values[v]) for v in POINT_VARIABLES)


def specs_of(meta: dict) -> list[CompareSpec]:
    """The declared comparisons meta.json records (runner.py: dataclasses.asdict), back
    as CompareSpecs; an entry without its two sides is left out."""
    specs = []
    fields = {f.name for f in dataclasses.fields(CompareSpec)}
    for entry in meta.get("comparisons") or []:
        if not entry.get("a") or not entry.get("b") or not entry.get("name"):
            continue
        known = {k: v for k, v in entry.items() if k in fields}
        known["tests"] = tuple(known.get("tests") or ())
        known["where"] = tuple((name, tuple(values)) for name, values in known.get("where") or ())
        known.setdefault("by", "server")
        specs.append(CompareSpec(**known))
    return specs


def _metric_values(frame: pd.DataFrame, metric: str) -> pd.Series:
    """Each row's value of `metric`; NaN where it was not measured (empty, n/a)."""
    ops = pd.to_numeric(frame["ops_per_s"], errors="coerce")
    if metric == "ops_per_s":
        return ops
    if "server_cpu" not in frame:
        return ops * math.nan
    server_cpu = pd.to_numeric(frame["server_cpu"], errors="coerce")
    return ops / server_cpu.where(server_cpu > 0)


def _per_round(frame: pd.DataFrame, metric: str) -> dict[tuple, dict[int, tuple[str, float, bool]]]:
    """point key -> round -> (status, metric value, client-bound); an ok row wins over a
    disturbed one."""
    table: dict[tuple, dict[int, tuple[str, float, bool]]] = {}
    for row, value in zip(frame.itertuples(index=False), _metric_values(frame, metric)):
        values = row._asdict()
        key = point_key(values)
        round_no = int(values["repetition"])
        status = values["status"]
        if status not in ("ok", "disturbed"):
            continue
        rounds = table.setdefault(key, {})
        if rounds.get(round_no, ("",))[0] != "ok":
            bound = str(values.get("client_bound", "")).lower() == "true"
            rounds[round_no] = (status, float(value), bound)
    return table


def meets_target(summary: RatioSummary, target: float,
                 min_rounds: int = DEFAULT_MIN_ROUNDS) -> bool:
    """Whether a ratio's interval counts as resolved (see the module's docstring). Never
    from fewer than MIN_ROUNDS_FOR_SPREAD rounds, whatever min_rounds says: below that
    the spread between starts is not estimated and the verdict is `undecided (too few
    starts)`, which a `resolved` status beside it would contradict."""
    return (summary.n >= max(min_rounds, MIN_ROUNDS_FOR_SPREAD)
            and summary.half_width <= target)


def compute(frame: pd.DataFrame, comparisons: Sequence[CompareSpec],
            precision: float | None = None,
            min_rounds: int = DEFAULT_MIN_ROUNDS) -> list[RatioResult]:
    """Every declared comparison's ratios over the rows of a points table."""
    if frame.empty or not comparisons:
        return []
    frame = frame.copy()
    frame["repetition"] = pd.to_numeric(frame["repetition"], errors="coerce")
    frame = frame[frame["repetition"].notna()]
    target = precision or DEFAULT_PRECISION
    tables = {}
    results = []
    index = {name: i for i, name in enumerate(POINT_VARIABLES)}
    for spec in comparisons:
        if spec.metric not in tables:
            tables[spec.metric] = _per_round(frame, spec.metric)
        table = tables[spec.metric]
        by = index[spec.by]
        # A client decides its own connections and pipeline (shared: one connection,
        # only dedicated pipelines): pair client strategies without them.
        loose = {index[v] for v in FOLLOW_THE_CLIENT} if spec.by == "client" else set()

        def partner_key(key: tuple) -> tuple:
            return tuple(v for i, v in enumerate(key) if i != by and i not in loose)
        partners = {}
        for key, rounds in table.items():
            if key[by] == spec.b:
                partners.setdefault(partner_key(key), (key, rounds))
        for key_a, rounds_a in table.items():
            variables = dict(zip(POINT_VARIABLES, key_a))
            if key_a[by] != spec.a or not _matches(spec, variables):
                continue
            if partner_key(key_a) not in partners:
                continue
            key_b, rounds_b = partners[partner_key(key_a)]
            ratios, lost, bound, values_a, values_b = [], 0, 0, [], []
            for round_no in sorted(set(rounds_a) | set(rounds_b)):
                a, b = rounds_a.get(round_no), rounds_b.get(round_no)
                if a is None or b is None:
                    continue
                if a[0] != "ok" or b[0] != "ok":
                    lost += 1
                elif a[1] > 0 and b[1] > 0:  # NaN (not measured) compares False: skipped
                    ratios.append(a[1] / b[1])
                    values_a.append(a[1])
                    values_b.append(b[1])
                    bound += a[2] or b[2]
            summary = ratio_interval(ratios)
            if meets_target(summary, target, min_rounds):
                status = "resolved"
            elif summary.n < 2 and lost:
                status = "disturbed"
            else:
                status = "inconclusive"
            client_bound = spec.metric == "ops_per_s" and bound * 2 > len(ratios)
            # every round starts both sides afresh: their rounds are starts
            modes_a, modes_b, between = ratio_modes(values_a, values_b, ratios)
            results.append(RatioResult(spec, variables["command"],
                                       point_label(variables, spec.by), summary, lost, status,
                                       client_bound, key_a, key_b,
                                       modes_a=modes_a.text() if modes_a.modes else "",
                                       modes_b=modes_b.text() if modes_b.modes else "",
                                       modes_between=between, target=target,
                                       median_a=median_of(values_a),
                                       median_b=median_of(values_b)))
    return results


def unresolved_points(results: list[RatioResult]) -> set[tuple]:
    """The point keys (both sides) of every ratio that has not met its target."""
    keys = set()
    for result in results:
        if result.status != "resolved":
            keys.update((result.key_a, result.key_b))
    return keys


def write_ratios(path: Path, results: list[RatioResult]) -> None:
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=RATIO_COLUMNS)
        writer.writeheader()
        for result in results:
            writer.writerow(result.row())
