"""What a declared ratio's interval decides: which side is ahead, and the seed.

A ratio A/B with a 95% interval [low, high] decides a direction only when the
interval leaves 1.0 out: `A ahead` when low > 1, `B ahead` when high < 1,
otherwise `undecided` (the data cannot tell the two sides apart at this
precision). Where a seed document publishes a ratio for the same claim, the
interval also says whether the seed's size was reproduced (`seed inside`: the
seed's ratio lies in [low, high]; `seed outside`: it does not) and whether the
seed's direction agrees with ours (both above 1, both below, or undecided
when ours is).

For a ratio of latencies (lower is better: `lower_is_better`), the side ahead
is the one with the smaller figure: `A ahead` when high < 1, `B ahead` when
low > 1.

The one owner of this rule: the report's verdict tables and the forest plot
call decide(); neither writes its own comparison against 1.0.

Pure functions; no I/O.
"""

from __future__ import annotations

import dataclasses
import math

UNDECIDED = "undecided"
SEED_INSIDE = "seed inside"
SEED_OUTSIDE = "seed outside"


@dataclasses.dataclass(frozen=True)
class RatioVerdict:
    direction: str                  # "<a> ahead", "<b> ahead" or "undecided"
    ahead: str | None               # "a", "b" or None (undecided)
    seed: str | None                # SEED_INSIDE, SEED_OUTSIDE, or None without a seed
    seed_direction_agrees: bool | None  # None without a seed or when ours is undecided

    def text(self) -> str:
        """One cell: 'concurrent ahead; seed outside, direction agrees'."""
        parts = [self.direction]
        if self.seed is not None:
            seed = self.seed
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


def decide(low: float, high: float, seed: float | None = None,
           a: str = "A", b: str = "B", lower_better: bool = False) -> RatioVerdict:
    """The verdict of a ratio a/b whose interval is [low, high]; lower_better for a
    ratio of latencies.

    A missing interval (NaN: fewer than two rounds) is undecided and says
    nothing about the seed. REQUIRES low <= high when both are finite.
    """
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
    seed_verdict = SEED_INSIDE if low <= seed <= high else SEED_OUTSIDE
    if ahead is None or seed == 1.0:
        agrees = None
    else:
        agrees = (seed > 1.0) == (ahead == above)
    return RatioVerdict(direction, ahead, seed_verdict, agrees)
