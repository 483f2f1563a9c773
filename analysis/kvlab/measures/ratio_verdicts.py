"""What a declared ratio's interval decides: which side is ahead, and the seed.

A ratio A/B with a 95% interval [low, high] decides a direction only when the
interval leaves 1.0 out: `A ahead` when low > 1, `B ahead` when high < 1,
otherwise `undecided` (the data cannot tell the two sides apart at this
precision). Where a seed document publishes a ratio for the same claim, the
interval also says whether the seed's size was reproduced and whether the seed's
direction agrees with ours (both above 1, both below, or undecided when ours is):

- `seed outside`: the seed's ratio lies outside [low, high]: its size was not
  reproduced, however wide the interval;
- `seed inside`: it lies inside an interval narrow enough to have excluded another
  size: the interval's half-width (sqrt(high/low) - 1, the larger side of a log-
  symmetric interval) is at most the experiment's precision (`margin`, default
  DEFAULT_PRECISION, ±5%). Only this verdict claims reproduction;
- `seed not tested`: it lies inside a wider interval. A ±63% interval holds every
  seed from 0.37 to 1.6, so containing the seed says nothing about its size; the
  cell says how wide the interval was against the margin.

For a ratio of latencies (lower is better: `lower_is_better`), the side ahead
is the one with the smaller figure: `A ahead` when high < 1, `B ahead` when
low > 1.

A ratio measured over fewer than MIN_ROUNDS_FOR_SPREAD fresh starts of its
processes (`starts`) is `undecided (too few starts)` whatever its interval: the
spread between starts is the variance that decides a comparison (one binary's
speed can move 45% from one start to the next), and two starts cannot estimate it.

A ratio whose per-start values fell into modes (kvlab.measures.modes: groups with a
gap between them; each side's own rates say which side has them) is
`layout-sensitive` when the ratio lies within the distance between the modes
(`modes_between`, the highest mode's median over the lowest's): |log ratio| <=
log(modes_between). Which side is ahead then depends on where each process's code and
data landed, not on the architecture; the report gives each mode's share and median
instead of a verdict from the pooled mean. A difference larger than the modes'
distance still decides on its interval.

A measured ratio that did not reach the run's target (its status `inconclusive`: wider
than the experiment's precision, or over fewer starts than its min_rounds, when time ran
out) is `not resolved (budget)`: no side, however far its interval lies from 1.0, and
the cell says how wide it got over how many starts and the seconds it would still need.
Its interval is printed beside it; a verdict is only claimed at the precision the run
set out to reach. A layout-sensitive ratio or one over too few starts keeps that verdict.

Such a ratio is `host-sensitive` instead when its per-start values move with the host's
speed (kvlab.measures.host_sensitivity: the fit on the host probe is significant and
its fitted ratio at the slow and the fast end of the host speeds seen differ by more
than the target), or with a host state the probe does not see (consecutive starts
alike beyond chance, and the ratio's low and high state further apart than the target): more starts would not narrow it, the quantity itself moves. The cell
gives the ratio at both ends, and names a side only where both ends and the interval
agree on it ("concurrent ahead at every host speed seen").

The one owner of this rule: the report's verdict tables and the forest plot
call decide(); neither writes its own comparison against 1.0.

Pure functions; no I/O.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping

from .host_sensitivity import PROBE, TIME, moves_with_host
from .stats import DEFAULT_PRECISION, MIN_ROUNDS_FOR_SPREAD, larger_side

UNDECIDED = "undecided"
TOO_FEW_STARTS = "undecided (too few starts)"
LAYOUT_SENSITIVE = "layout-sensitive"
# The run's plan (budget_plan.py) gave the ratio no starts: its budget could not buy
# min_rounds of them; `why` says the seconds it would have needed.
NOT_MEASURED_BUDGET = "not measured (budget)"
# Measured, but the budget ran out before the interval reached the target precision.
NOT_RESOLVED_BUDGET = "not resolved (budget)"
# Measured, short of the target, and moving with the host's speed (host_sensitivity.py).
HOST_SENSITIVE = "host-sensitive"
SEED_INSIDE = "seed inside"
SEED_OUTSIDE = "seed outside"
SEED_NOT_TESTED = "seed not tested"


@dataclasses.dataclass(frozen=True)
class RatioVerdict:
    direction: str                  # "<a> ahead", "<b> ahead" or "undecided"
    ahead: str | None               # "a", "b" or None (undecided)
    seed: str | None                # SEED_INSIDE, SEED_OUTSIDE, SEED_NOT_TESTED; None without a seed
    seed_direction_agrees: bool | None  # None without a seed or when ours is undecided
    why: str = ""                   # why the seed was not tested ("interval ±41% > ±5%")
    # what the direction rests on, where it is not a side ("±3.1% over 11 starts, ...")
    detail: str = ""

    def text(self) -> str:
        """One cell: 'concurrent ahead; seed outside, direction agrees'."""
        detail = self.detail or (self.why if self.seed is None else "")
        parts = [self.direction + (f" ({detail})" if detail else "")]
        if self.seed is not None:
            seed = self.seed + (f" ({self.why})" if self.why else "")
            if self.seed_direction_agrees is True:
                seed += ", direction agrees"
            elif self.seed_direction_agrees is False:
                seed += ", direction disagrees"
            parts.append(seed)
        return "; ".join(parts)


def _finite(value: float | None) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def lower_is_better(metric: str | None) -> bool:
    """A ratio of this metric favours its smaller side (a latency percentile, `*_us`)."""
    return str(metric or "").endswith("_us")


def half_width(low: float, high: float) -> float:
    """The larger side of a log-symmetric interval [low, high] as a fraction of its centre."""
    return math.sqrt(high / low) - 1 if low > 0 else math.inf


def decide(low: float, high: float, seed: float | None = None,
           a: str = "A", b: str = "B", lower_better: bool = False,
           margin: float | None = None, starts: int | None = None,
           modes_between: float | None = None) -> RatioVerdict:
    """The verdict of a ratio a/b whose interval is [low, high]; lower_better for a
    ratio of latencies; `margin`: the half-width within which a seed inside the
    interval counts as reproduced (the experiment's precision; default
    DEFAULT_PRECISION); `starts`: the fresh starts (rounds) behind the ratio, where
    known; `modes_between`: where the per-start ratios have modes, the highest mode's
    median over the lowest's (1.0 or None: no modes).

    A missing interval (NaN) is undecided and says nothing about the seed; so is
    a ratio over fewer than MIN_ROUNDS_FOR_SPREAD starts. REQUIRES low <= high
    when both are finite.
    """
    if starts is not None and _finite(starts) and starts < MIN_ROUNDS_FOR_SPREAD:
        return RatioVerdict(direction=TOO_FEW_STARTS, ahead=None, seed=None,
                            seed_direction_agrees=None)
    if (_finite(modes_between) and modes_between > 1.0 and _finite(low) and _finite(high)
            and low > 0 and abs(math.log(low * high) / 2) <= math.log(modes_between)):
        return RatioVerdict(direction=LAYOUT_SENSITIVE, ahead=None, seed=None,
                            seed_direction_agrees=None)
    if not (_finite(low) and _finite(high)):
        return RatioVerdict(direction=UNDECIDED, ahead=None, seed=None,
                            seed_direction_agrees=None)
    if low > high:
        raise ValueError(f"interval [{low}, {high}] is reversed")
    above, below = ("b", "a") if lower_better else ("a", "b")
    names = {"a": a, "b": b}
    if low > 1.0:
        ahead = above
    elif high < 1.0:
        ahead = below
    else:
        ahead = None
    direction = f"{names[ahead]} ahead" if ahead else UNDECIDED
    if not _finite(seed):
        return RatioVerdict(direction, ahead, None, None)
    margin = DEFAULT_PRECISION if margin is None or not _finite(margin) else margin
    why = ""
    if not low <= seed <= high:
        seed_verdict = SEED_OUTSIDE
    elif half_width(low, high) <= margin:
        seed_verdict = SEED_INSIDE
    else:
        seed_verdict = SEED_NOT_TESTED
        why = f"interval ±{half_width(low, high):.1%} wider than ±{margin:.1%}"
    if ahead is None or seed == 1.0:
        agrees = None
    else:
        agrees = (seed > 1.0) == (ahead == above)
    return RatioVerdict(direction, ahead, seed_verdict, agrees, why)


def _float(value: object) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def not_measured(needed_s: float) -> RatioVerdict:
    """The verdict of a ratio the run's budget left out: none, and what it would need."""
    why = f"needs about {needed_s:.0f} s more" if _finite(needed_s) else ""
    return RatioVerdict(direction=NOT_MEASURED_BUDGET, ahead=None, seed=None,
                        seed_direction_agrees=None, why=why)


def not_resolved(low: float, high: float, starts: int | None, target: float | None,
                 needed_s: float, seed_verdict: RatioVerdict | None = None,
                 ratio: float | None = None) -> RatioVerdict:
    """The verdict of a measured ratio that ended short of the run's target: its width
    and starts, and the seconds it would still need (NaN: not known). What its interval
    says of a seed (`seed_verdict`: decide()'s) stands: a seed outside the interval is
    outside whatever the width; no side is claimed, so no direction agrees. With the
    `ratio`, the width is its interval's larger side from it, as the report's column
    and the run's stopping rule measure it (a two-level interval is not symmetric in
    log); without, the log-symmetric half_width()."""
    target = DEFAULT_PRECISION if target is None or not _finite(target) else target
    parts = []
    if _finite(low) and _finite(high) and low > 0:
        half = (larger_side(ratio, low, high) if _finite(ratio) and ratio > 0
                else half_width(low, high))
        parts.append(f"±{half:.1%}"
                     + (f" over {starts} starts" if starts else "")
                     + f", the target ±{target:.1%}")
    if _finite(needed_s):
        parts.append(f"needs about {needed_s:.0f} s more")
    seed = seed_verdict.seed if seed_verdict is not None else None
    return RatioVerdict(direction=NOT_RESOLVED_BUDGET, ahead=None, seed=seed,
                        seed_direction_agrees=None,
                        why=seed_verdict.why if seed_verdict is not None else "",
                        detail="; ".join(parts))


def host_sensitive(verdict: RatioVerdict, slow: float, fast: float, a: str, b: str,
                   lower_better: bool = False, by: str = PROBE) -> RatioVerdict:
    """The verdict of a ratio that moves with the host: its fitted ratio at the slow and
    the fast host speed (by PROBE), or its low and high state over the run's starts (by
    TIME: consecutive starts alike, the probe not seeing why); a side only where both
    ends and the interval's verdict (`verdict`, decide()'s) agree on it; what the
    interval says of a seed stands."""
    above, below = ("b", "a") if lower_better else ("a", "b")
    ends = above if min(slow, fast) > 1.0 else below if max(slow, fast) < 1.0 else None
    ahead = verdict.ahead if verdict.ahead == ends else None
    if by == TIME:
        seen = "host state seen"
        detail = (f"from {slow:.4g} to {fast:.4g} as the host's state moved: consecutive "
                  "starts alike")
    else:
        seen = "host speed seen"
        detail = f"{slow:.4g} at the slow host speed, {fast:.4g} at the fast"
    if ahead is not None:
        detail = f"{(a if ahead == 'a' else b)} ahead at every {seen}; {detail}"
    return RatioVerdict(direction=HOST_SENSITIVE, ahead=ahead, seed=verdict.seed,
                        seed_direction_agrees=verdict.seed_direction_agrees if ahead else None,
                        why=verdict.why, detail=detail)


def _fit_by(value: object) -> str:
    # ratios.csv's host_by; blank (NaN in a pandas row) in runs before it: the probe's
    return value if isinstance(value, str) and value else PROBE


def decide_row(row: Mapping[str, object], seed: float | None, a: str, b: str,
               margin: float | None = None) -> RatioVerdict:
    """decide() for one row of ratios.csv (a dict or a pandas row: low, high, metric,
    rounds, modes_between, status, budget_needed_s, host_p, host_slow, host_fast,
    host_by), the way the report's tables and the forest plot read it."""
    if row.get("status") == NOT_MEASURED_BUDGET:
        return not_measured(_float(row.get("budget_needed_s")))
    rounds = _float(row.get("rounds"))
    starts = int(rounds) if math.isfinite(rounds) else None
    low, high = _float(row.get("low")), _float(row.get("high"))
    verdict = decide(low, high, seed, a, b, lower_is_better(row.get("metric")), margin,
                     starts, _float(row.get("modes_between")))
    if row.get("status") == "inconclusive" and verdict.direction not in (
            LAYOUT_SENSITIVE, TOO_FEW_STARTS):
        slow, fast = _float(row.get("host_slow")), _float(row.get("host_fast"))
        if moves_with_host(_float(row.get("host_p")), slow, fast, margin):
            return host_sensitive(verdict, slow, fast, a, b,
                                  lower_is_better(row.get("metric")),
                                  _fit_by(row.get("host_by")))
        return not_resolved(low, high, starts, margin, _float(row.get("budget_needed_s")),
                            verdict, _float(row.get("ratio")))
    return verdict
