"""Whether a ratio moves with the host's speed: a fit of each start's ratio on a probe.

Every round of an alternation is bracketed by a host probe (running/host_probe.py): the
same fixed work, timed on the measured CPUs before the servers start and after they
stop, whose speed does not come from the two servers being compared. On a shared VM the
host's speed changes for minutes at a time, and two engines need not slow alike (one
run: a SET ratio went from 3.8 on its fast rounds to 5.1 on its slow ones). More starts
then do not narrow the ratio's interval: the quantity itself moves.

The fit: ordinary least squares of each round's log ratio on the log of its host speed
(the geometric mean of the two probes around it). Its slope is the ratio's elasticity
to host speed. It counts only when two things hold:

- a permutation test of the slope (PERMUTATIONS shuffles of the host speeds against the
  ratios, a fixed seed) gives p <= HOST_ALPHA, and
- the fitted ratio at the slowest rounds' host speed (the 10th percentile of the
  rounds' speeds) and at the fastest (the 90th) differ by more than the run's target:
  a slope too small to matter is not reported, however significant.

A ratio for which both hold is `host-sensitive` (ratio_verdicts.decide_row) when its
interval did not reach the target: the report gives the fitted ratio at the slow and
the fast host speed instead of a verdict from a pooled mean, and names a side only
where both ends and the interval agree on it. Because both series drift in time (the
host slowly, the ratio's own noise sometimes too), the permutation p-value alone would
alarm too often; the effect-size bar is what keeps false alarms down (the test's own
figure: tests/python/measures/test_host_sensitivity.py).

The probe only sees what slows its own work. A host state it does not see still shows in
the order of the starts: a state that lasts minutes makes consecutive starts' ratios
alike. In two default runs on a 2-core VM the probe read the same speed throughout while
both servers of a one-key SET ratio served 25-37% less for ten starts in a row, the ratio
11.5 there and 9.7 in the thirty starts after; every ratio that ran to 40 starts without
reaching ±2% had a lag-1 autocorrelation of its per-start ratios of +0.41 to +0.80, those
that resolved in 10 starts about 0. `state_fit` is that evidence: the lag-1
autocorrelation of the per-start log ratios in the order they were measured, a one-sided
permutation test of it (shuffled orders: exact where starts are exchangeable, whatever
their distribution, modes of layout included), and the ratio's low and high ends: the
10th and 90th percentiles of its running means over STATE_WINDOW consecutive starts. A
ratio is host-sensitive on it under the same two conditions as on the probe (p <=
HOST_ALPHA and ends further apart than the target).

Pure functions; no I/O.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

from .stats import DEFAULT_PRECISION

HOST_ALPHA = 0.01
PERMUTATIONS = 2000
# Rounds before a fit is tried: below this, a slope and its test mean little.
MIN_ROUNDS_FOR_FIT = 8
SLOW_QUANTILE, FAST_QUANTILE = 0.10, 0.90
# Consecutive starts a state fit averages for its ends: a state lasts minutes, a start
# seconds, and one start's own noise would otherwise set the ends.
STATE_WINDOW = 3
PROBE, TIME = "probe", "time"   # HostFit.by: what the ratio was seen to move with


@dataclasses.dataclass(frozen=True)
class HostFit:
    slope: float          # d log(ratio) / d log(host speed)
    p_value: float        # permutation test of the slope against 0
    slow_ratio: float     # the fitted ratio at the slow end of the rounds' host speeds
    fast_ratio: float     # ... and at the fast end
    host_spread: float    # the fast end's host speed over the slow end's (NaN: by TIME)
    rounds: int
    # PROBE: slope and ends against the host probe's speed; TIME: `slope` is the lag-1
    # autocorrelation of the starts in measured order and the ends are the ratio's low
    # and high state (state_fit), the host's speed in each not known
    by: str = PROBE

    def moves(self, target: float | None) -> bool:
        """Whether the ratio moves with the host by more than `target` across the host
        speeds seen, significantly (moves_with_host)."""
        return moves_with_host(self.p_value, self.slow_ratio, self.fast_ratio, target)


def moves_with_host(p_value: float, slow: float, fast: float, target: float | None) -> bool:
    """Whether a fit's p-value and fitted ends (as ratios.csv's host_p, host_slow and
    host_fast hold them) say the ratio moves with the host by more than `target`
    (None or NaN: DEFAULT_PRECISION), significantly."""
    target = DEFAULT_PRECISION if target is None or math.isnan(target) else target
    values = (p_value, slow, fast)
    if any(v is None or not math.isfinite(v) for v in values) or slow <= 0 or fast <= 0:
        return False
    return p_value <= HOST_ALPHA and abs(math.log(fast / slow)) > math.log1p(target)


def host_fit(ratios: Sequence[float], host_speeds: Sequence[float],
             permutations: int = PERMUTATIONS, seed: int = 0) -> HostFit | None:
    """The fit of per-round ratios on per-round host speeds (paired by position; a pair
    with a missing or non-positive value is left out); None with fewer than
    MIN_ROUNDS_FOR_FIT usable rounds or when the host's steps from round to round did not
    vary (a host that only drifts steadily is not told apart from a ratio that drifts)."""
    pairs = [(math.log(r), math.log(h)) for r, h in zip(ratios, host_speeds)
             if r is not None and h is not None and math.isfinite(r) and math.isfinite(h)
             and r > 0 and h > 0]
    if len(pairs) < MIN_ROUNDS_FOR_FIT:
        return None
    y = np.array([p[0] for p in pairs])
    x = np.array([p[1] for p in pairs])
    # the slope from one round to the next: differences leave out what drifts slowly in
    # both series, which would otherwise correlate by chance (a spurious regression)
    dx, dy = np.diff(x), np.diff(y)
    dxc = dx - dx.mean()
    sxx = float(dxc @ dxc)
    if sxx <= len(dx) * 1e-12:  # the host's steps did not vary: nothing to fit on
        return None
    dyc = dy - dy.mean()
    slope = float(dxc @ dyc) / sxx
    generator = np.random.default_rng(seed)
    shuffled = np.array([generator.permutation(dxc) for _ in range(permutations)])
    slopes = shuffled @ dyc / sxx
    p_value = (1 + int(np.sum(np.abs(slopes) >= abs(slope) - 1e-15))) / (1 + permutations)
    slow_x, fast_x = np.quantile(x, SLOW_QUANTILE), np.quantile(x, FAST_QUANTILE)
    centre = float(y.mean())
    slow = math.exp(centre + slope * (slow_x - x.mean()))
    fast = math.exp(centre + slope * (fast_x - x.mean()))
    return HostFit(slope, p_value, slow, fast, math.exp(fast_x - slow_x), len(pairs))


def state_fit(ratios: Sequence[float], permutations: int = PERMUTATIONS,
              seed: int = 0) -> HostFit | None:
    """Whether per-start ratios, in the order they were measured, stay alike for longer
    than chance (a host state lasting many starts): their lag-1 autocorrelation, its
    one-sided permutation p-value, and the low and high ends of their running means over
    STATE_WINDOW starts (the module's docstring). None with fewer than
    MIN_ROUNDS_FOR_FIT usable starts or none that differ."""
    logs = [math.log(r) for r in ratios
            if r is not None and math.isfinite(r) and r > 0]
    if len(logs) < MIN_ROUNDS_FOR_FIT:
        return None
    y = np.array(logs)
    centred = y - y.mean()
    total = float(centred @ centred)
    if total <= len(y) * 1e-18:
        return None
    lag1 = float(centred[:-1] @ centred[1:]) / total
    generator = np.random.default_rng(seed)
    shuffled = np.array([generator.permutation(centred) for _ in range(permutations)])
    lags = np.einsum("ij,ij->i", shuffled[:, :-1], shuffled[:, 1:]) / total
    p_value = (1 + int(np.sum(lags >= lag1 - 1e-15))) / (1 + permutations)
    window = min(STATE_WINDOW, len(y))
    means = np.convolve(y, np.ones(window) / window, mode="valid")
    low = math.exp(float(np.quantile(means, SLOW_QUANTILE)))
    high = math.exp(float(np.quantile(means, FAST_QUANTILE)))
    return HostFit(lag1, p_value, low, high, math.nan, len(logs), TIME)
