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


def t_quantile_975(degrees_of_freedom: int) -> float:
    if degrees_of_freedom < 1:
        raise ValueError("needs at least one degree of freedom")
    if degrees_of_freedom <= len(_T_975):
        return _T_975[degrees_of_freedom - 1]
    return 1.960


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
