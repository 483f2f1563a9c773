"""What a run's time can decide: the plan of rounds (fresh starts) per declared ratio.

A ratio's interval after n starts is about t(n - 1) * sqrt(v / n) wide in log (stats.
two_level_interval), where v is the variance of one start's mean log ratio: the
between-start variance plus the slices' variance over one start's pairs
(`start_variance`). v is known from the A/A pair once it has its rounds (the machine's
noise: a server against a copy of itself) and from a ratio's own rounds once it has
MIN_ROUNDS_FOR_SPREAD of them; a ratio that varies more than the A/A (modes of its own)
is planned again on its own figure as soon as it has one.

`plan` spends the seconds left in this order:
1. a ratio already started first gets what it needs to reach min_rounds (its starts
   are spent whatever happens next, and the plan is made again after every round as
   the estimates move); where the time cannot finish every started ratio, the cheapest
   to finish are kept (seed claims first) and the rest dropped at once; then ratios that carry a seed's claim (a seed_ratio), then
   those already started, then the rest, cheapest first inside each group, so the
   budget decides as many ratios as it can;
2. each gets the rounds that reach the target half-width (at least min_rounds, at most
   max_rounds) where that fits; else as many rounds as fit, when that is min_rounds or
   more (a ratio to a lesser precision, its predicted half-width said up front);
3. else none: `not measured (budget)`, with the seconds it would have needed. A ratio is
   never given fewer than min_rounds starts by the plan: that would buy a verdict from
   too few starts.

Pure functions; no I/O. Tested on known variances in tests/python/measures/test_budget_plan.py.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Hashable, Iterable

from .ratio_verdicts import NOT_MEASURED_BUDGET
from .stats import MIN_ROUNDS_FOR_SPREAD, PairedSummary, best_start_seconds, t_quantile_975

__all__ = ["NOT_MEASURED_BUDGET", "PlanInput", "Planned", "plan", "predicted_half_width",
           "rounds_for", "seconds_to_target", "start_seconds", "start_variance"]

# rounds_for()'s ceiling where no max_rounds applies (what a ratio would need, not what a
# run gives it)
UNBOUNDED_ROUNDS = 10_000


@dataclasses.dataclass(frozen=True)
class PlanInput:
    """One ratio as the plan sees it."""
    key: Hashable
    seed_claim: bool        # the ratio carries a seed's published claim
    rounds: int             # starts measured so far
    round_s: float          # wall seconds one more start costs
    start_var: float        # variance of one start's mean log ratio; NaN: not known


@dataclasses.dataclass(frozen=True)
class Planned:
    """What the plan gives one ratio."""
    key: Hashable
    rounds: int               # starts in all (those measured included); 0: not measured
    predicted_half: float     # the half-width expected after `rounds` (inf: none)
    cost_s: float             # seconds the rounds still to measure take
    needed_s: float           # seconds the target half-width would take from here
    measured: bool            # False: not measured (budget)
    # predicted_half is within the target: not so for a ratio cut short by the budget,
    # nor one that max_rounds keeps from it, nor one whose variance is not known
    reaches_target: bool = False


def start_variance(summary: PairedSummary, pairs_per_start: float | None = None) -> float:
    """v of a ratio's own starts: between-start variance plus one start's share of the
    slices' (pair_var over the pairs of a start: `pairs_per_start` for starts of another
    length than those measured, else their mean); NaN below MIN_ROUNDS_FOR_SPREAD."""
    if summary.n < MIN_ROUNDS_FOR_SPREAD or not summary.pairs:
        return math.nan
    if math.isnan(summary.between_var) or math.isnan(summary.pair_var):
        return math.nan
    pairs = pairs_per_start if pairs_per_start else summary.pairs / summary.n
    return summary.between_var + summary.pair_var / pairs


def start_seconds(between_var: float, pair_var: float, pairs_per_s: float, overhead_s: float,
                  target: float, min_rounds: int, shortest: float, longest: float) -> float:
    """Seconds of alternating for a ratio's next starts, from its own variance components
    (between starts; one pair of slices) and what a start costs beyond its alternating.

    Where the target needs more than min_rounds starts, the length that buys the narrowest
    interval per second spent (stats.best_start_seconds: short starts where starts
    differ, long ones where the slices are the noise). Where min_rounds starts of some
    shorter length already reach it, that length: min_rounds are run anyway, so a longer
    start buys nothing the ratio needs. Clamped to [shortest, longest]; NaN where the
    components are not known (the caller keeps its length)."""
    best = best_start_seconds(between_var, pair_var, pairs_per_s, overhead_s)
    if math.isnan(best) or min_rounds < MIN_ROUNDS_FOR_SPREAD:
        return math.nan
    # v(L) = between + within / L must be at most what min_rounds starts allow
    allowed = min_rounds * (math.log1p(target) / t_quantile_975(min_rounds - 1)) ** 2
    within = pair_var / pairs_per_s
    enough = within / (allowed - between_var) if allowed > between_var else math.inf
    return min(max(min(best, enough), shortest), longest)


def predicted_half_width(start_var: float, rounds: int) -> float:
    """The half-width (a fraction, the larger side of a log-symmetric interval) of a
    ratio over `rounds` starts whose start means have variance start_var."""
    if rounds < MIN_ROUNDS_FOR_SPREAD or math.isnan(start_var):
        return math.inf
    return math.exp(t_quantile_975(rounds - 1) * math.sqrt(max(start_var, 0.0) / rounds)) - 1


def rounds_for(start_var: float, target: float, min_rounds: int, max_rounds: int) -> int:
    """The fewest starts, from min_rounds to max_rounds, whose predicted half-width is
    within `target`; max_rounds when none is; min_rounds when the variance is unknown
    (the plan is made again once the ratio has its own)."""
    if math.isnan(start_var):
        return min_rounds
    for rounds in range(min_rounds, max_rounds + 1):
        if predicted_half_width(start_var, rounds) <= target:
            return rounds
    return max_rounds


def seconds_to_target(summary: PairedSummary, target: float, min_rounds: int,
                      round_s: float) -> float:
    """The seconds of further starts a measured ratio still needs to reach `target`: the
    starts rounds_for() gives its own start variance, at least one more and at least
    min_rounds in all, at `round_s` each; NaN where its variance is not known yet."""
    var = start_variance(summary)
    if math.isnan(var) or not math.isfinite(round_s):
        return math.nan
    wanted = rounds_for(var, target, min_rounds, UNBOUNDED_ROUNDS)
    return max(1, wanted - summary.n) * round_s


def plan(ratios: Iterable[PlanInput], seconds_left: float, target: float, min_rounds: int,
         max_rounds: int, prior_var: float = math.nan) -> dict[Hashable, Planned]:
    """The rounds each ratio gets from `seconds_left` (math.inf: no budget). `prior_var`:
    the start variance of a ratio without its own (the A/A's; NaN: unknown)."""
    ratios = list(ratios)
    needs, hopeless = {}, set()
    for r in ratios:
        var = r.start_var if not math.isnan(r.start_var) else prior_var
        wanted = max(rounds_for(var, target, min_rounds, max_rounds), r.rounds)
        if not r.seed_claim and not math.isnan(r.start_var) and \
                predicted_half_width(r.start_var, max_rounds) > target:
            # Its own starts say max_rounds cannot bring it to the target (a side with
            # modes, say): min_rounds conclude it, and more starts are better spent on
            # ratios that can resolve (a default run gave one such ratio 17 starts, ±5.3%,
            # while 11 others that needed 25 s each went unmeasured).
            hopeless.add(r.key)
            wanted = max(min_rounds, r.rounds)
        needs[r.key] = (var, wanted, max(0, wanted - r.rounds) * r.round_s)
    # A ratio already started keeps what it takes to reach min_rounds, whatever comes
    # first: the plan is made again as estimates change, and dropping a started ratio
    # would throw its starts away. When the time left cannot finish them all, the
    # cheapest to finish are kept (seed claims first): the most ratios reach min_rounds,
    # and the others are dropped now rather than each left a few starts short.
    started = sorted((r for r in ratios if 0 < r.rounds < min_rounds),
                     key=lambda r: (not r.seed_claim, (min_rounds - r.rounds) * r.round_s))
    committed, left = {}, seconds_left
    for r in started:
        cost = (min_rounds - r.rounds) * r.round_s
        if cost <= left:
            committed[r.key] = cost
            left -= cost
    dropped = {r.key for r in started if r.key not in committed}
    # Every seed claim not yet started has its min_rounds set aside next, cheapest first,
    # before a started one takes rounds past its own: run O of a default run gave one SET
    # claim 28 starts and another 32 while its plan, which served started claims whole
    # first, left the other five claims unmeasured.
    floors = {}
    for r in sorted((r for r in ratios if r.seed_claim and r.rounds == 0),
                    key=lambda r: min_rounds * r.round_s):
        cost = min_rounds * r.round_s
        if cost <= left:
            floors[r.key] = cost
            left -= cost
    order = sorted(ratios, key=lambda r: (not r.seed_claim, r.key in hopeless, r.rounds == 0,
                                          needs[r.key][2]))
    out = {}
    for r in order:
        var, wanted, needed_s = needs[r.key]
        if r.key in dropped:
            out[r.key] = Planned(r.key, 0, math.inf, 0.0, needed_s, False)
            continue
        left += committed.get(r.key, 0.0) + floors.get(r.key, 0.0)
        if needed_s <= left:
            rounds, cost = wanted, needed_s
        else:
            affordable = int(left // r.round_s) if r.round_s > 0 and math.isfinite(left) else 0
            rounds = r.rounds + min(affordable, max(0, wanted - r.rounds))
            cost = (rounds - r.rounds) * r.round_s
        if rounds < min_rounds:
            out[r.key] = Planned(r.key, 0, math.inf, 0.0, needed_s, False)
            continue
        left -= cost
        predicted = predicted_half_width(var, rounds)
        out[r.key] = Planned(r.key, rounds, predicted, cost, needed_s, True, predicted <= target)
    return out
