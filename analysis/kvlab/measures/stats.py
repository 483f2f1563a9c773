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
        return (self.high - self.low) / 2

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
    return Summary(len(data), median, mean, mean - half, mean + half)


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
        return max(self.high / self.ratio - 1, 1 - self.low / self.ratio)


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
    method: str       # "batch means", "round means" (the wider, see paired_interval) or
                      # "too few starts" (no interval)

    @property
    def half_width(self) -> float:
        if math.isnan(self.low) or self.ratio <= 0:
            return math.inf
        return max(self.high / self.ratio - 1, 1 - self.low / self.ratio)


def batch_size(pairs: int) -> int:
    """Pairs per batch for a round of `pairs` pairs: about sqrt(pairs), even, at least
    MIN_PAIRS_PER_BATCH (the usual batch-means choice: batches grow with the series, so
    their means decorrelate, and their number grows too)."""
    size = max(MIN_PAIRS_PER_BATCH, int(math.ceil(math.sqrt(max(pairs, 1)))))
    return size + size % 2


def _t_half(values: list[float]) -> float:
    return t_quantile_975(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))


def paired_interval(rounds: Iterable[Iterable[float | None]],
                    between_rounds: bool = True) -> PairedSummary:
    """Per round, the log ratios of its pairs in time order -> the geometric mean ratio and
    a 95% interval that allows for correlation between neighbouring pairs.

    Batch means: each round's pairs are cut into batches of consecutive pairs
    (batch_size; a tail shorter than a batch is left out of the interval, not of the
    mean), batches never cross rounds, and Student's t runs over the batch means. Pairs
    next to each other are correlated (the machine's slow noise, and ABBA's alternating
    AB/BA sign of a linear drift); means of long enough batches are nearly independent.
    Batches inside one round share that round's processes, so the t interval over the
    rounds' means is computed too and the wider of the two is kept (`method` says
    which): each alone is valid under its own assumption, and the wider one covers at
    least as often as either. With fewer than MIN_ROUNDS_FOR_SPREAD rounds the spread
    between starts cannot be estimated, and there is no interval (NaN, method "too few
    starts"): batches of one or two starts would hide it. between_rounds=False: batch
    means alone, what the slices' own noise allows (a calibration figure, never a
    verdict). Coverage is tested on synthetic drift + AR(1) data
    (tests/python/test_alternation.py)."""
    rounds = [[float(v) for v in r if v is not None and math.isfinite(v)] for r in rounds]
    rounds = [r for r in rounds if r]
    pairs = sum(len(r) for r in rounds)
    if not pairs:
        return PairedSummary(0, 0, math.nan, math.nan, math.nan, 0, "none")
    centre = statistics.fmean([v for r in rounds for v in r])
    batch_means = []
    for values in rounds:
        size = batch_size(len(values))
        batch_means += [statistics.fmean(values[i:i + size])
                        for i in range(0, len(values) - size + 1, size)]
    return batched_interval(centre, batch_means, [statistics.fmean(r) for r in rounds], pairs,
                            between_rounds)


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
