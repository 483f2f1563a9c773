"""Summary statistics over the repetitions of one point.

A point is measured a few times (3..5). We report the median (robust to one
disturbed repetition) and a 95% confidence interval for the mean throughput
from Student's t distribution: mean ± t(0.975, n-1) · s / sqrt(n). With one
repetition there is no interval (NaN), and readers are told so.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from typing import Iterable

# Two-sided 95% quantiles of Student's t, by degrees of freedom (1..30): the table of
# harness/output/summary_table.cc (kStudentT975), which kvlab-load's summary uses; test_stats.py
# checks that both say the same.
_T_975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
          2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
          2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)
_Z_975 = 1.959963984540054


def t_quantile_975(degrees_of_freedom: int) -> float:
    """t(0.975, df): the table up to 30, then the Cornish-Fisher expansion of t around the
    normal quantile (error < 1e-4 beyond 30), so the value falls smoothly towards 1.96
    instead of jumping to it."""
    if degrees_of_freedom < 1:
        raise ValueError("needs at least one degree of freedom")
    if degrees_of_freedom <= len(_T_975):
        return _T_975[degrees_of_freedom - 1]
    z, n = _Z_975, float(degrees_of_freedom)
    return (z + (z ** 3 + z) / (4 * n) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * n ** 2)
            + (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / (384 * n ** 3))


@dataclasses.dataclass(frozen=True)
class Summary:
    n: int
    median: float
    mean: float
    low: float       # 95% CI of the mean; NaN when n < 2
    high: float

    @property
    def half_width(self) -> float:
        # The t half-width: the upper side, which the clip at zero never shortens.
        return self.high - self.mean

    @property
    def relative_half_width(self) -> float:
        return self.half_width / self.mean if self.mean else math.nan


def summarize(values: Iterable[float | None]) -> Summary:
    data = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    if not data:
        return Summary(0, math.nan, math.nan, math.nan, math.nan)
    mean = statistics.fmean(data)
    median = statistics.median(data)
    if len(data) < 2:
        return Summary(1, median, mean, math.nan, math.nan)
    half = t_quantile_975(len(data) - 1) * statistics.stdev(data) / math.sqrt(len(data))
    low = mean - half
    if low < 0 <= min(data):
        # Rates and latencies are never negative: an interval reaching below zero (two
        # rounds that differ, t = 12.7) knows nothing below, and says 0, not a negative rate.
        low = 0.0
    return Summary(len(data), median, mean, low, mean + half)


def larger_side(ratio: float, low: float, high: float) -> float:
    """An interval's larger distance from its ratio, as a fraction of the ratio: the
    half-width a ratio's precision is judged on (a two-level interval with the skewness
    correction is not symmetric in log)."""
    return max(high / ratio - 1, 1 - low / ratio)


@dataclasses.dataclass(frozen=True)
class RatioSummary:
    """A ratio A/B measured in n paired rounds: geometric mean and its 95% interval."""
    n: int
    ratio: float
    low: float       # NaN when n < 2
    high: float

    @property
    def half_width(self) -> float:
        """The interval's larger distance from the ratio, as a fraction of it."""
        if self.n < 2 or math.isnan(self.low):
            return math.inf
        return larger_side(self.ratio, self.low, self.high)


def ratio_interval(ratios: Iterable[float | None]) -> RatioSummary:
    """Per-round ratios -> geometric mean with a 95% interval from Student's t on the log
    ratios: exp(mean(log r) +- t(0.975, n-1) * sd(log r) / sqrt(n)). Logs make the interval
    symmetric in A/B vs B/A and multiplicative noise additive; pairing inside a round
    removes the drift both servers saw. Its coverage is tested on synthetic data."""
    logs = [math.log(r) for r in ratios if r is not None and r > 0 and math.isfinite(r)]
    if not logs:
        return RatioSummary(0, math.nan, math.nan, math.nan)
    centre = statistics.fmean(logs)
    if len(logs) < 2:
        return RatioSummary(1, math.exp(centre), math.nan, math.nan)
    half = t_quantile_975(len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    return RatioSummary(len(logs), math.exp(centre), math.exp(centre - half),
                        math.exp(centre + half))


# A declared ratio's target half-width when the experiment sets no `precision`; also the
# margin within which a seed's size counts as reproduced (ratio_verdicts.decide).
DEFAULT_PRECISION = 0.05

# Alternation (harness/alternation.h): pairs of adjacent slices.
# A batch holds whole ABBA cycles (an even number of pairs), so a drift that is
# linear over a cycle cancels inside every batch.
MIN_PAIRS_PER_BATCH = 2
# Fewer rounds than this say nothing about the spread between fresh processes.
MIN_ROUNDS_FOR_SPREAD = 3


@dataclasses.dataclass(frozen=True)
class PairedSummary:
    """A ratio A/B from alternating slices: over `pairs` pairs of adjacent slices in `n`
    rounds (fresh processes each), with its 95% interval and how it was obtained."""
    n: int            # rounds
    pairs: int
    ratio: float
    low: float        # NaN: too few batches
    high: float
    batches: int
    method: str       # "two-level" (two_level_interval), "batch means" (the slices alone:
                      # between_rounds=False) or "too few starts" (no interval)
    # two_level_interval's variance components of the log ratio: between starts, and
    # of one pair of slices as batch means see it (NaN where not estimated)
    between_var: float = math.nan
    pair_var: float = math.nan

    @property
    def half_width(self) -> float:
        if math.isnan(self.low) or self.ratio <= 0:
            return math.inf
        return larger_side(self.ratio, self.low, self.high)


def batch_size(pairs: int) -> int:
    """Pairs per batch for a round of `pairs` pairs: about sqrt(pairs), even, at least
    MIN_PAIRS_PER_BATCH (the usual batch-means choice: batches grow with the series, so
    their means decorrelate, and their number grows too)."""
    size = max(MIN_PAIRS_PER_BATCH, int(math.ceil(math.sqrt(max(pairs, 1)))))
    return size + size % 2


def _t_half(values: list[float]) -> float:
    return t_quantile_975(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))


def paired_interval(rounds: Iterable[Iterable[float | None]],
                    between_rounds: bool = True, symmetric: bool = False) -> PairedSummary:
    """Per round (a fresh start of both sides' processes), the log ratios of its pairs in
    time order -> the geometric mean ratio and a 95% interval with two levels of
    variance: between starts, and between slices within a start (two_level_interval).

    between_rounds=False: batch means alone (each round's pairs cut into batches of
    consecutive pairs, batch_size; Student's t over the batch means), what the slices'
    own noise allows: a calibration figure, never a verdict. symmetric=True: the two
    sides are exchangeable (an A/A), so the start means' skewness is noise and is not
    corrected for (two_level_interval). With fewer than
    MIN_ROUNDS_FOR_SPREAD rounds the spread between starts cannot be estimated and there
    is no interval (NaN, method "too few starts"). Coverage is tested on synthetic drift
    + AR(1) data with unimodal and bimodal start effects
    (tests/python/running/test_alternation.py, test_two_level.py)."""
    rounds = [[float(v) for v in r if v is not None and math.isfinite(v)] for r in rounds]
    rounds = [r for r in rounds if r]
    pairs = sum(len(r) for r in rounds)
    if not pairs:
        return PairedSummary(0, 0, math.nan, math.nan, math.nan, 0, "none")
    if between_rounds:
        return two_level_interval(rounds, symmetric)
    centre = statistics.fmean([v for r in rounds for v in r])
    batch_means = [m for values in rounds for m in _batch_means(values)]
    return batched_interval(centre, batch_means, [statistics.fmean(r) for r in rounds], pairs,
                            between_rounds=False)


def _batch_means(values: list[float]) -> list[float]:
    size = batch_size(len(values))
    return [statistics.fmean(values[i:i + size])
            for i in range(0, len(values) - size + 1, size)]


def two_level_interval(starts: list[list[float]], symmetric: bool = False) -> PairedSummary:
    """The two-level interval of a log ratio: starts (fresh processes), then slices within
    a start. The model is the one-way random-effects (mixed) model
    y_ij = mu + u_i + e_ij, u_i the start's effect (any distribution: a layout's mode is
    one), e_ij the slices' noise, correlated in time within a start.

    - Each start's mean, and the variance of that mean from its slices alone: batch means
      (whole ABBA cycles, batch_size) pooled over starts, so AR(1) noise and drift within
      a start are allowed for.
    - The between-start variance sigma_b^2 by moments: the start means' variance less the
      mean within-start part (at least 0).
    - mu is the start means weighted by 1 / (sigma_b^2 + within_i): equal weights when
      starts are alike in length or the start effect dominates; the longer start counts
      more when it is mostly slice noise (a start that lost disturbed cycles is shorter).
    - Its variance is the weighted start means' own spread (a sandwich estimate: it is
      right whatever the shape of the start effect), with Student's t on n - 1 degrees of
      freedom. With equal weights this is the t interval over start means, which for
      balanced starts is the mixed model's REML interval for mu.

    The starts, not the slices, are the unit: a thousand slices from three starts give
    2 degrees of freedom. Fewer than MIN_ROUNDS_FOR_SPREAD starts: no interval.

    symmetric=True (an A/A: a server against a copy of itself): the per-start log ratio
    is symmetric about 0 by exchange of the sides, so any skewness of its start means is
    noise, and the skewness correction (_skew_corrected) is left out: on 10 starts of
    symmetric, heavy-tailed ratios (a layout mode on both sides, 3,000 trials) the
    correction's own noise took coverage from 94.9% to 93.4%. And each start's within
    part is its own (_own_within_parts): a start caught in a noisy moment of the machine
    weighs less. Exchangeable sides make that safe whatever the weights (the estimate
    stays symmetric about 0); Student's t then has Kish's effective number of starts
    less one degrees of freedom. Declared ratios keep the pooled within part: where one
    side's mode is also its noisier one, weights from a start's own noise would favour
    the quieter mode (synthetic, 16 starts, a 30% mode 8% or 35% away and 3 times as
    noisy: a bias of -0.8% or -1.3%, coverage 90% or 88%)."""
    starts = [list(s) for s in starts if s]
    n = len(starts)
    pairs = sum(len(s) for s in starts)
    means = [statistics.fmean(s) for s in starts]
    batches = [_batch_means(s) for s in starts]
    n_batches = sum(len(b) for b in batches)
    if n < MIN_ROUNDS_FOR_SPREAD:
        centre = statistics.fmean([v for s in starts for v in s])
        return PairedSummary(n, pairs, math.exp(centre), math.nan, math.nan, n_batches,
                             "too few starts")
    # pooled within-start variance of one batch mean, then of each start's mean
    squares = sum(batch_size(len(s)) * sum((m - statistics.fmean(b)) ** 2 for m in b)
                  for s, b in zip(starts, batches) if len(b) > 1)
    df = sum(len(b) - 1 for b in batches if len(b) > 1)
    between = per_pair = math.nan
    if df > 0:
        per_pair = squares / df    # a pair's variance, as far as batch means see it
        within = (_own_within_parts(starts, per_pair) if symmetric
                  else [per_pair / len(s) for s in starts])
        between = max(0.0, statistics.variance(means) - statistics.fmean(within))
        raw = [1.0 / (between + w) if between + w > 0 else 1.0 for w in within]
    else:
        raw = [1.0] * n
    total = sum(raw)
    weights = [w / total for w in raw]
    centre = sum(w * m for w, m in zip(weights, means))
    variance = n / (n - 1) * sum((w * (m - centre)) ** 2 for w, m in zip(weights, means))
    if symmetric:
        effective = 1.0 / sum(w * w for w in weights)  # Kish: n when the weights are equal
        degrees = max(1, int(math.floor(effective + 1e-9)) - 1)
        half = t_quantile_975(degrees) * math.sqrt(variance)
        low, high = centre - half, centre + half
    else:
        low, high = _skew_corrected(centre, variance, weights, means)
    return PairedSummary(n, pairs, math.exp(centre), math.exp(low), math.exp(high),
                         n_batches, "two-level", between, per_pair)


# A start's own pair variance is shrunk towards the pooled one as if the pooled one were
# this many more pairs: a start whose few pairs happen to agree must not take the weight
# of all the others.
OWN_VARIANCE_PRIOR_PAIRS = 2.0


def _own_within_parts(starts: list[list[float]], per_pair: float) -> list[float]:
    """Each start's variance of its mean from its own pairs: the variance of its pairs
    (shrunk towards the pooled one, OWN_VARIANCE_PRIOR_PAIRS) times the ratio of the
    batch-means variance `per_pair` to the plain pooled variance of pairs (what AR(1)
    noise and drift add, as batch means see it over all starts), over its pairs."""
    own = [statistics.variance(s) if len(s) > 1 else math.nan for s in starts]
    known = [v for v in own if not math.isnan(v)]
    pooled = statistics.fmean(known) if known else 0.0
    # no spread in any start's pairs: their batch means have none either (per_pair is 0)
    inflation = per_pair / pooled if pooled > 0 else 0.0
    parts = []
    for values, variance in zip(starts, own):
        shrunk = pooled
        if not math.isnan(variance):
            pairs_df = len(values) - 1
            shrunk = ((pairs_df * variance + OWN_VARIANCE_PRIOR_PAIRS * pooled)
                      / (pairs_df + OWN_VARIANCE_PRIOR_PAIRS))
        parts.append(inflation * shrunk / len(values))
    return parts


def best_start_seconds(between_var: float, pair_var: float, pairs_per_s: float,
                       overhead_s: float) -> float:
    """The seconds of alternating per start that buy the narrowest two-level interval
    for the time spent. A start costs overhead_s (processes, prefill, connections)
    plus t seconds of alternating, and its mean carries between_var + w / t, where
    w = pair_var / pairs_per_s is the slices' variance over one second; over a budget
    B there are B / (overhead_s + t) starts, so the interval's variance is
    (between_var + w / t)(overhead_s + t) / B, least at t = sqrt(overhead_s * w /
    between_var): short starts where starts differ, long ones where slices are the
    noise. inf when no between-start variance was seen (then the fewest starts the
    interval allows, MIN_ROUNDS_FOR_SPREAD, of the longest length); NaN when the
    components are unknown."""
    if not (pair_var >= 0 and pairs_per_s > 0 and overhead_s >= 0 and between_var >= 0):
        return math.nan
    within = pair_var / pairs_per_s
    if between_var == 0:
        return math.inf
    return math.sqrt(overhead_s * within / between_var)


# Fewer start means than this estimate their skewness too loosely to correct for it
# (with 6 starts and none, the correction's own noise took coverage to 93%).
MIN_STARTS_FOR_SKEW = 10


def _skew_corrected(centre: float, variance: float, weights: list[float],
                    means: list[float]) -> tuple[float, float]:
    """centre +- t * sqrt(variance), with Johnson's (1978) correction for the skewness of
    the start means: a start effect with two modes of unequal shares is skewed, and a
    plain t interval over 10-16 such starts is too short on the minority mode's side
    (92-94% on the synthetic bimodal starts of test_two_level.py, 94-96% with the
    correction). Johnson's modified t, T = (d + b + a d^2) / se with d = mean - mu,
    a = mu3 / (3 s^4), b = mu3 / (6 s^2 n), is solved for mu at T = -t and T = +t."""
    n = len(means)
    t = t_quantile_975(n - 1)
    se = math.sqrt(variance)
    if se == 0 or n < MIN_STARTS_FOR_SKEW:
        return centre - t * se, centre + t * se
    s2 = variance * n
    mu3 = n * n / ((n - 1) * (n - 2)) * sum(w * (m - centre) ** 3 for w, m in zip(weights, means))
    a, b = mu3 / (3 * s2 * s2), mu3 / (6 * s2 * n)
    bounds = []
    for c in (-t * se, t * se):
        d = c - b
        disc = 1 - 4 * a * (b - c)
        if abs(a) > 1e-300 and disc >= 0:
            d = (-1 + math.sqrt(disc)) / (2 * a)
        bounds.append(centre - d)
    return min(bounds), max(bounds)


def batched_interval(centre: float, batch_values: list[float], round_values: list[float],
                     pairs: int, between_rounds: bool = True) -> PairedSummary:
    """The interval of paired_interval from its parts, for a log ratio that is not a mean
    of per-pair values (a latency percentile's: alternation.latency_interval): `centre`
    the log ratio over everything, `batch_values` one log ratio per batch (batches never
    cross rounds), `round_values` one per round. Student's t over the batches and over
    the rounds, and the wider is kept; no interval from fewer than
    MIN_ROUNDS_FOR_SPREAD rounds unless between_rounds is False."""
    half, method = math.nan, "batch means"
    if len(batch_values) >= 2:
        half = _t_half(batch_values)
    if between_rounds and len(round_values) < MIN_ROUNDS_FOR_SPREAD:
        half, method = math.nan, "too few starts"
    elif between_rounds:
        by_round = _t_half(round_values)
        if math.isnan(half) or by_round > half:
            half, method = by_round, "round means"
    if math.isnan(half) or not math.isfinite(centre):
        return PairedSummary(len(round_values), pairs, math.exp(centre), math.nan, math.nan,
                             len(batch_values), method)
    return PairedSummary(len(round_values), pairs, math.exp(centre), math.exp(centre - half),
                         math.exp(centre + half), len(batch_values), method)
