"""The noise-aware verdict: is a run's figure different from the history of its series?

The one rule used by `python3 -m kvlab compare` and by the dashboard. Inputs: the
newest run's Estimate (value and 95% interval) and the Estimates of the same series in
earlier runs on the same machine fingerprint (the last HISTORY_WINDOW usable ones; a
flawed one — client-bound, error replies, disturbed, not measured — is left out).

    center     median of the history's values
    band       [min(median of the history's lows, center - sd),
                max(median of the history's highs, center + sd)]
               sd: standard deviation of the history's values (0 with one run);
               with one run the band is that run's own interval
    spread     the band's half-width relative to the center
    threshold  max(min_effect, spread)                  min_effect: MIN_EFFECT = 5%
    change     new value / center - 1

    regressed / improved   |change| > threshold and the new interval does not overlap
                           the band (worse direction: down for ops/s and ratios, up
                           for cost columns)
    unstable               otherwise, when the history has >= 2 runs and spread > min_effect:
                           the series' own noise is larger than the effect it should catch
    same                   otherwise, when spread <= min_effect and the whole new interval
                           lies within center * (1 ± min_effect): a change as large as
                           min_effect would have been seen, and none was
    inconclusive           everything else: intervals too wide to tell, a missing interval
                           (one repetition), no usable history, or a flawed new figure

So a 50% drop measured with ±60% intervals is `inconclusive`, never `same`; and a
series is only called `same` when the measurement could have shown otherwise.
Pure functions; thread-safe.
"""

from __future__ import annotations

import dataclasses
import statistics

from .history import Estimate, SeriesKey, series_of

MIN_EFFECT = 0.05
HISTORY_WINDOW = 10
VERDICTS = ("regressed", "improved", "unstable", "inconclusive", "same")


@dataclasses.dataclass(frozen=True)
class Judgement:
    verdict: str
    why: str
    runs: int = 0                    # usable history runs
    center: float | None = None
    band_low: float | None = None
    band_high: float | None = None
    spread: float | None = None
    threshold: float | None = None
    change: float | None = None


def judge(history: list[Estimate], new: Estimate, higher_is_better: bool = True,
          min_effect: float = MIN_EFFECT, window: int = HISTORY_WINDOW) -> Judgement:
    """The verdict on `new` against `history` (oldest first) — see the module docstring."""
    if new.flaw:
        return Judgement("inconclusive", f"new run: {new.flaw}")
    if new.value is None:
        return Judgement("inconclusive", "new run has no value")
    usable = [h for h in history if not h.flaw and h.value is not None][-window:]
    if not usable:
        return Judgement("inconclusive", "no usable earlier run of this series"
                         + (f" ({len(history)} flawed)" if history else ""))
    values = [h.value for h in usable]
    center = statistics.median(values)
    if center <= 0:
        return Judgement("inconclusive", "history's median is not positive", len(usable))
    lows = [h.low for h in usable if h.has_interval]
    highs = [h.high for h in usable if h.has_interval]
    if not lows and len(usable) < 2:
        return Judgement("inconclusive", "the one earlier run has no interval", 1, center)
    sd = statistics.stdev(values) if len(values) >= 2 else 0.0
    band_low = min(statistics.median(lows), center - sd) if lows else center - sd
    band_high = max(statistics.median(highs), center + sd) if highs else center + sd
    spread = (band_high - band_low) / (2 * center)
    threshold = max(min_effect, spread)
    change = new.value / center - 1
    facts = dict(runs=len(usable), center=center, band_low=band_low, band_high=band_high,
                 spread=spread, threshold=threshold, change=change)
    if not new.has_interval:
        return Judgement("inconclusive", "new run has no interval (one repetition)", **facts)
    overlaps = new.low <= band_high and new.high >= band_low
    if abs(change) > threshold and not overlaps:
        worse = change < 0 if higher_is_better else change > 0
        return Judgement("regressed" if worse else "improved",
                         f"{100 * change:+.1f}% beyond ±{100 * threshold:.1f}%, intervals apart",
                         **facts)
    if len(usable) >= 2 and spread > min_effect:
        return Judgement("unstable", f"history spread ±{100 * spread:.1f}% exceeds "
                         f"±{100 * min_effect:.0f}%", **facts)
    if spread <= min_effect and center * (1 - min_effect) <= new.low \
            and new.high <= center * (1 + min_effect):
        return Judgement("same", f"new interval within ±{100 * min_effect:.0f}% of history",
                         **facts)
    if spread > min_effect:
        why = f"earlier run's interval ±{100 * spread:.1f}% too wide to tell"
    elif abs(change) > threshold:
        why = f"{100 * change:+.1f}% but the intervals overlap"
    else:
        why = f"new interval reaches beyond ±{100 * min_effect:.0f}% of history"
    return Judgement("inconclusive", why, **facts)


@dataclasses.dataclass(frozen=True)
class SeriesVerdict:
    key: SeriesKey
    new: Estimate
    judgement: Judgement


def judge_record(history: list[dict], new: dict, min_effect: float = MIN_EFFECT) \
        -> list[SeriesVerdict]:
    """A verdict for every series of the record `new` against the records `history`
    (oldest first), ratios first. The caller passes records of one fingerprint only."""
    earlier = [series_of(r) for r in history]
    verdicts = []
    for key, estimate in series_of(new).items():
        past = [s[key] for s in earlier if key in s]
        verdicts.append(SeriesVerdict(key, estimate,
                                      judge(past, estimate, key.higher_is_better, min_effect)))
    return verdicts


def count(verdicts: list[SeriesVerdict]) -> dict[str, int]:
    counts = dict.fromkeys(VERDICTS, 0)
    for v in verdicts:
        counts[v.judgement.verdict] += 1
    return counts
