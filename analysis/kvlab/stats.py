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

# Two-sided 95% quantiles of Student's t, by degrees of freedom (1..30).
_T_975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
          2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
          2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)
_Z_975 = 1.959964


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


def summarize(values) -> Summary:
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


def ratio_interval(ratios) -> RatioSummary:
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
