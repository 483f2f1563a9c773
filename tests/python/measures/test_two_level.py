"""The two-level interval (stats.two_level_interval): starts, then slices within a start.
Its coverage on synthetic alternations whose starts carry an effect of their own
(unimodal, and bimodal as an address layout makes it), with the machine's drift and
AR(1) noise inside every start, and starts of unequal length (disturbed cycles left
out). Data are generated for all trials at once (numpy), the interval runs per trial."""

import math

import numpy as np
import pytest

from kvlab.measures.stats import (best_start_seconds, paired_interval, t_quantile_975,
                                  two_level_interval)

from conftest import check_coverage

TRIALS = 1000
TRUE_RATIO = 1.2


def ar1(rng, shape, phi, sigma):
    """AR(1) series along the last axis, stationary from its first value."""
    noise = rng.normal(0.0, sigma, shape)
    out = np.empty(shape)
    level = rng.normal(0.0, sigma / math.sqrt(1 - phi * phi), shape[:-1])
    for i in range(shape[-1]):
        level = phi * level + noise[..., i]
        out[..., i] = level
    return out


def synthetic_starts(rng, trials, starts, slices, start_effect):
    """trials x starts x pairs of log(A/B): in every start, both sides ride the machine
    (a linear drift, a slow wave, a shared AR(1) with phi 0.9), each side adds its own
    AR(1) (phi 0.6), slices alternate ABBA, and side A's start moves by
    start_effect(rng, (trials, starts)) for the whole start."""
    t = np.arange(slices)
    machine = (0.002 * t + 0.05 * np.sin(2 * math.pi * t / rng.uniform(20, 200, (trials, starts, 1)))
               + ar1(rng, (trials, starts, slices), 0.9, 0.04))
    own_a, own_b = (ar1(rng, (trials, starts, slices), 0.6, 0.05) for _ in range(2))
    side_a = np.array([i % 4 in (0, 3) for i in range(slices)])
    effect = start_effect(rng, (trials, starts))[..., None]
    value = machine + np.where(side_a, own_a + effect + math.log(TRUE_RATIO), own_b)
    first_is_a = side_a[0::2]
    a = np.where(first_is_a, value[..., 0::2], value[..., 1::2])
    b = np.where(first_is_a, value[..., 1::2], value[..., 0::2])
    return a - b


def unimodal(sd):
    return lambda rng, shape: rng.normal(0.0, sd, shape)


def bimodal(share, distance):
    """A share of starts in a second mode `distance` (log) above the first, as the
    sharded engine's fast layouts are above its slow ones."""
    return lambda rng, shape: distance * (rng.random(shape) < share)


SCENARIOS = {
    # name: starts, pairs per start, start effect, its mean (the estimand's offset)
    "no start effect, 6 starts": (6, 30, unimodal(0.0), 0.0),
    "unimodal starts (sd 3%), 10 starts": (10, 20, unimodal(0.03), 0.0),
    "bimodal 50/50, 35% apart, 10 starts": (10, 20, bimodal(0.5, 0.35), 0.5 * 0.35),
    "bimodal 70/30, 35% apart, 16 starts": (16, 20, bimodal(0.3, 0.35), 0.3 * 0.35),
}


def test_an_a_over_a_is_not_corrected_for_a_skewness_it_cannot_have():
    # A server against a copy of itself: each side 20% of its starts in a mode 8% slower,
    # so a start's log ratio is symmetric about 0 and heavy-tailed; the skewness of ten
    # start means is noise, and the A/A's interval (symmetric=True) is plain t.
    def both_sides_modes(rng, shape):
        return 0.08 * ((rng.random(shape) < 0.2).astype(float)
                       - (rng.random(shape) < 0.2).astype(float))
    rng = np.random.default_rng(11)
    data = synthetic_starts(rng, TRIALS, 10, 20, both_sides_modes)
    summaries = [paired_interval([list(data[k, i]) for i in range(10)], symmetric=True)
                 for k in range(TRIALS)]
    check_coverage([s.low for s in summaries], [s.high for s in summaries],
                   [s.ratio for s in summaries], TRUE_RATIO, band=(0.93, 0.97))
    # symmetric about its centre in log, unlike the corrected interval of the same starts
    first = [list(data[0, i]) for i in range(10)]
    plain = paired_interval(first, symmetric=True)
    assert math.log(plain.ratio / plain.low) == pytest.approx(math.log(plain.high / plain.ratio))


def noisy_moments(rng, trials, starts, pairs, start_effect, share, factor):
    """synthetic_starts whose slice noise is `factor` times as large in a `share` of the
    starts (a moment when the machine was noisy), the start effect unchanged."""
    noise = synthetic_starts(rng, trials, starts, pairs, unimodal(0.0)) - math.log(TRUE_RATIO)
    scale = np.where(rng.random((trials, starts)) < share, factor, 1.0)
    effect = start_effect(rng, (trials, starts))
    return math.log(TRUE_RATIO) + effect[..., None] + noise * scale[..., None]


def test_an_a_over_a_weighs_a_start_by_its_own_noise_and_still_covers():
    # A server against a copy of itself, a layout mode on both sides, and 40% of the
    # starts caught in a noisy moment (3 times the slice noise), 10 pairs a start (2 s of
    # 0.1 s slices, as default.toml's starts). Each start weighs by its own noise: 95-96%
    # coverage, and narrower than Student's t over the plain start means (which covers
    # as well: the weights buy width, not coverage).
    def both_sides_modes(rng, shape):
        return 0.08 * ((rng.random(shape) < 0.2).astype(float)
                       - (rng.random(shape) < 0.2).astype(float))
    rng = np.random.default_rng(7)
    data = noisy_moments(rng, TRIALS, 10, 20, both_sides_modes, 0.4, 3.0)
    summaries = [two_level_interval([list(data[k, i]) for i in range(10)], symmetric=True)
                 for k in range(TRIALS)]
    check_coverage([s.low for s in summaries], [s.high for s in summaries],
                   [s.ratio for s in summaries], TRUE_RATIO, band=(0.93, 0.97))
    means = data.mean(axis=2)
    plain_width = 2 * t_quantile_975(9) * means.std(axis=1, ddof=1) / math.sqrt(10)
    width = np.array([math.log(s.high / s.low) for s in summaries])
    assert width.mean() < 0.95 * plain_width.mean()


def test_only_an_a_over_a_weighs_a_start_by_its_own_noise():
    rng = np.random.default_rng(2)

    def start(mean, sd):
        values = rng.normal(0.0, sd, 10)
        return list(values - values.mean() + mean)
    # five quiet starts at 0 and one noisy start at 0.05, well within its own noise
    starts = [start(0.0, 0.01) for _ in range(5)] + [start(0.05, 0.10)]
    equal = 0.05 / 6
    # the A/A: the noisy start counts for about a quarter of a quiet one (its own
    # variance is 100 times theirs, but the spread between starts weighs on all alike)
    aa = two_level_interval(starts, symmetric=True)
    assert abs(math.log(aa.ratio)) < 0.4 * equal
    # a declared ratio: its starts are alike in length, so they count alike
    declared = two_level_interval(starts)
    assert math.log(declared.ratio) == pytest.approx(equal, abs=1e-9)


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_two_level_interval_covers_with_a_start_effect(name):
    starts, pairs, effect, offset = SCENARIOS[name]
    rng = np.random.default_rng(36)
    data = synthetic_starts(rng, TRIALS, starts, pairs, effect)
    # each start keeps between half and all of its pairs (cycles left out as disturbed)
    kept = rng.integers(pairs // 2, pairs + 1, (TRIALS, starts))
    summaries = [two_level_interval([list(data[k, i, :kept[k, i]]) for i in range(starts)])
                 for k in range(TRIALS)]
    assert {s.method for s in summaries} == {"two-level"}
    check_coverage([s.low for s in summaries], [s.high for s in summaries],
                   [s.ratio for s in summaries], TRUE_RATIO * math.exp(offset),
                   band=(0.93, 0.97))


def test_slices_alone_miss_when_starts_differ():
    # The test above can fail: the batch means alone (every slice of every start as if
    # the starts were one process) cover under 90% when starts differ (86% here).
    starts, pairs, effect, offset = SCENARIOS["bimodal 50/50, 35% apart, 10 starts"]
    rng = np.random.default_rng(5)
    data = synthetic_starts(rng, 300, starts, pairs, effect)
    truth = math.log(TRUE_RATIO) + offset
    covered = 0
    for trial in data:
        s = paired_interval([list(r) for r in trial], between_rounds=False)
        covered += math.log(s.low) <= truth <= math.log(s.high)
    assert covered / 300 < 0.90


def test_two_starts_give_no_interval_and_the_longer_start_weighs_more():
    assert math.isnan(two_level_interval([[0.1] * 8, [0.2] * 8]).low)
    rng = np.random.default_rng(1)
    # no start effect: a start twice as long (slice noise only) counts about twice
    short = [list(rng.normal(0.0, 0.05, 8)) for _ in range(4)]
    long_start = list(rng.normal(0.3, 0.05, 64))
    s = two_level_interval(short + [long_start])
    equal = np.mean([np.mean(x) for x in short + [long_start]])
    assert math.log(s.ratio) > equal
    # a start effect far above the slices' noise: every start counts alike
    spread = [list(rng.normal(v, 0.001, n)) for v, n in
              ((0.0, 8), (0.4, 8), (0.1, 64), (0.3, 8), (0.2, 8))]
    s = two_level_interval(spread)
    assert math.log(s.ratio) == pytest.approx(0.2, abs=0.01)
    # and the interval is Student's t over the five start means (2.776 * 0.158 / sqrt 5)
    assert math.log(s.high / s.ratio) == pytest.approx(0.196, abs=0.005)


def test_the_variance_components_and_the_best_start_length():
    rng = np.random.default_rng(9)
    # 40 starts, start effect sd 0.03, independent pair noise sd 0.05 (20 pairs a start)
    starts = [list(rng.normal(0.0, 0.03) + rng.normal(0.0, 0.05, 20)) for _ in range(40)]
    s = two_level_interval(starts)
    assert math.sqrt(s.between_var) == pytest.approx(0.03, rel=0.3)
    assert math.sqrt(s.pair_var) == pytest.approx(0.05, rel=0.2)
    # a start costing 1.5 s, 5 pairs a second (0.1 s slices): the slices' variance over
    # one second is 0.05^2 / 5, so t = sqrt(1.5 * 0.0005 / 0.0009) = 0.91 s
    assert best_start_seconds(0.03 ** 2, 0.05 ** 2, 5.0, 1.5) == pytest.approx(0.913, abs=0.001)
    # starts that do not differ: as few and as long as the interval allows
    assert best_start_seconds(0.0, 0.05 ** 2, 5.0, 1.5) == math.inf
    # starts that differ much: short ones
    assert best_start_seconds(0.3 ** 2, 0.05 ** 2, 5.0, 1.5) < 0.1


def test_the_report_says_what_a_start_costs_and_its_best_length():
    from kvlab.rendering.report_ratios import _start_length_line
    rng = np.random.default_rng(4)
    rounds = [list(rng.normal(0.0, 0.03) + rng.normal(0.0, 0.05, 10)) for _ in range(30)]
    meta = {"alternation": {"slice_s": 0.1, "alternation_s": 2.0, "pairs": [
        {"calibration": True, "rounds": 30, "failed": 0, "disturbed": 0, "spent_s": 105.0}]}}
    line = _start_length_line(rounds, meta)
    summary = two_level_interval(rounds)
    best = best_start_seconds(summary.between_var, summary.pair_var, 5.0, 1.5)
    assert "costs 1.5 s beyond its 2 s of alternating" in line
    assert f"{best:.1f} s of alternating per start" in line
    # no spread between starts (every start the same slices): fewer, longer starts
    still = [list(rng.normal(0.0, 0.05, 10))] * 30
    assert two_level_interval(still).between_var == 0
    assert "fewer and longer starts" in _start_length_line(still, meta)
