"""The fit of per-start ratios on the host probe (kvlab.measures.host_sensitivity): a
known slope recovered, its false alarms when the host drifts and the ratio does not
follow it, its power on a known elasticity, and the `host-sensitive` verdict it leads
to. Known-answer synthetic data with fixed seeds."""

import math

import numpy as np
import pytest

from kvlab.measures.host_sensitivity import (MIN_ROUNDS_FOR_FIT, TIME, host_fit,
                                            moves_with_host, state_fit)
from kvlab.measures.ratio_verdicts import (HOST_SENSITIVE, NOT_RESOLVED_BUDGET, SEED_OUTSIDE,
                                           decide_row)

TRIALS = 400
PERMUTATIONS = 400


def ar1(rng, n, phi, sd):
    """AR(1) noise of stationary standard deviation `sd`."""
    noise = np.empty(n)
    noise[0] = rng.normal(0, sd)
    for i in range(1, n):
        noise[i] = phi * noise[i - 1] + rng.normal(0, sd * math.sqrt(1 - phi * phi))
    return noise


def host_walk(rng, n, step=0.06):
    """A host whose speed wanders from round to round (a random walk in log)."""
    return np.exp(np.cumsum(rng.normal(0, step, n)))


def test_a_known_elasticity_is_recovered_exactly():
    # ratio = 4 / sqrt(host): slope -0.5; ends at the 10th and 90th percentile host speeds
    host = np.linspace(1.0, 2.0, 20)
    ratios = 4.0 / np.sqrt(host)
    fit = host_fit(ratios, host, permutations=200)
    assert fit.slope == pytest.approx(-0.5, abs=1e-9)
    slow_host, fast_host = np.quantile(np.log(host), [0.1, 0.9])
    assert fit.slow_ratio == pytest.approx(4.0 / math.exp(slow_host / 2), rel=1e-6)
    assert fit.fast_ratio == pytest.approx(4.0 / math.exp(fast_host / 2), rel=1e-6)
    assert fit.host_spread == pytest.approx(math.exp(fast_host - slow_host))
    assert fit.p_value < 0.01 and fit.moves(0.02)


def test_too_few_rounds_or_a_still_host_give_no_fit():
    assert host_fit([4.0] * (MIN_ROUNDS_FOR_FIT - 1),
                    np.linspace(1, 2, MIN_ROUNDS_FOR_FIT - 1)) is None
    assert host_fit([4.0, 4.1] * 10, [3.0] * 20) is None
    # a round with no probe is left out, not counted
    host = list(np.linspace(1, 2, MIN_ROUNDS_FOR_FIT))
    assert host_fit([4.0] * MIN_ROUNDS_FOR_FIT, host[:-1] + [math.nan]) is None


@pytest.mark.parametrize("rounds", [10, 20, 40])
@pytest.mark.parametrize("phi", [0.0, 0.5, 0.8])
def test_false_alarms_when_the_host_drifts_and_the_ratio_does_not(rounds, phi):
    # The host wanders, the ratio's own noise (3% a start) is autocorrelated: the two
    # series drift independently, the case a regression on levels calls related far too
    # often (28% of trials at 40 rounds, phi 0.8, in a trial of this design). Measured
    # with these seeds: 0.25-1.25% of trials on each of the nine.
    rng = np.random.default_rng(1000 * rounds + int(phi * 10))
    alarms = 0
    for trial in range(TRIALS):
        ratios = 4.4 * np.exp(ar1(rng, rounds, phi, 0.03))
        fit = host_fit(ratios, host_walk(rng, rounds), permutations=PERMUTATIONS, seed=trial)
        alarms += fit is not None and fit.moves(0.02)
    assert alarms / TRIALS <= 0.05, alarms / TRIALS


@pytest.mark.parametrize("rounds,power", [(20, 0.85), (40, 0.97)])
def test_power_on_a_known_elasticity(rounds, power):
    # the ratio falls 0.6% per 1% of host speed (one default run's SET pair: 3.8 when the
    # host was fast, 5.1 when it was 35% slower), beside 3% autocorrelated noise; found
    # in 91.5% of trials at 20 rounds and in all at 40, with these seeds
    rng = np.random.default_rng(rounds)
    found = 0
    for trial in range(200):
        host = host_walk(rng, rounds)
        ratios = 4.4 * host ** -0.6 * np.exp(ar1(rng, rounds, 0.5, 0.03))
        fit = host_fit(ratios, host, permutations=PERMUTATIONS, seed=trial)
        found += fit is not None and fit.moves(0.02) and fit.slope < 0
    assert found / 200 >= power, found / 200


def test_a_significant_but_small_slope_is_not_reported():
    # 0.5% between the ends is below a 2% target: significant, not host-sensitive
    host = np.linspace(1.0, 2.0, 30)
    ratios = 4.0 * host ** 0.008
    fit = host_fit(ratios, host, permutations=200)
    assert fit.p_value < 0.01
    assert not fit.moves(0.02) and fit.moves(0.002)
    assert not moves_with_host(0.02, 3.8, 5.1, 0.02)  # not significant at HOST_ALPHA
    assert not moves_with_host(math.nan, 3.8, 5.1, 0.02)


def row(status="inconclusive", low=4.3, high=4.6, p=0.001, slow=5.0, fast=3.9, **extra):
    return {"status": status, "ratio": math.sqrt(low * high), "low": low, "high": high,
            "metric": "ops_per_s", "rounds": 38, "modes_between": 1.0,
            "budget_needed_s": 30, "host_p": p, "host_slow": slow, "host_fast": fast,
            **extra}


def test_an_unresolved_ratio_that_moves_with_the_host_is_host_sensitive():
    verdict = decide_row(row(), 1.13, "concurrent", "sharded", 0.02)
    assert verdict.direction == HOST_SENSITIVE and verdict.ahead == "a"
    assert verdict.seed == SEED_OUTSIDE and verdict.seed_direction_agrees is True
    assert verdict.text() == ("host-sensitive (concurrent ahead at every host speed seen; "
                              "5 at the slow host speed, 3.9 at the fast); seed outside, "
                              "direction agrees")
    # ends on both sides of 1.0: no side, whatever the pooled interval says
    split = decide_row(row(low=1.05, high=1.10, slow=1.2, fast=0.95), None, "x", "y", 0.02)
    assert split.direction == HOST_SENSITIVE and split.ahead is None
    assert split.text() == "host-sensitive (1.2 at the slow host speed, 0.95 at the fast)"


def test_without_a_significant_fit_it_stays_not_resolved_and_a_resolved_one_keeps_its_side():
    assert decide_row(row(p=0.2), None, "x", "y", 0.02).direction == NOT_RESOLVED_BUDGET
    assert decide_row(row(slow="", fast=""), None, "x", "y", 0.02).direction == \
        NOT_RESOLVED_BUDGET
    assert decide_row(row(status="resolved"), None, "x", "y", 0.02).direction == "x ahead"


# ---- a host state the probe does not see: consecutive starts alike (state_fit) -------

def _moves(ratios, seed):
    fit = state_fit(ratios, permutations=PERMUTATIONS, seed=seed)
    return fit is not None and fit.moves(0.02)


def two_states(rng, n, run, step, sd):
    """Log ratios that sit in one host state for `run` starts, then `step` away for the
    next `run`, and so on, plus `sd` of each start's own noise."""
    levels = np.array([(i // run) % 2 * step for i in range(n)])
    return np.exp(levels + rng.normal(0, sd, n))


@pytest.mark.parametrize("rounds", [10, 20, 40])
@pytest.mark.parametrize("shape", ["normal", "bimodal"])
def test_state_fit_false_alarms_on_exchangeable_starts_are_at_most_2_percent(rounds, shape):
    # Starts that do not depend on their order: one mode (±5% a start), or two modes of
    # layout at random (30% of starts 15% faster): the shuffled orders are the null
    # exactly, HOST_ALPHA is 1%. Measured over 400 trials each: 0.5-1.75% (10, 20 and 40
    # starts).
    rng = np.random.default_rng(rounds)
    alarms = 0
    for trial in range(TRIALS):
        logs = rng.normal(0, 0.05, rounds)
        if shape == "bimodal":
            logs = rng.normal(0, 0.02, rounds) + np.where(rng.random(rounds) < 0.3, 0.15, 0)
        alarms += _moves(np.exp(logs), trial)
    assert alarms / TRIALS <= 0.02


@pytest.mark.parametrize("rounds, run, least", [(20, 10, 0.95), (40, 10, 0.95), (40, 5, 0.5)])
def test_state_fit_finds_a_host_state_lasting_many_starts(rounds, run, least):
    # Run Y's one-key SET ratio: 11.5 for ten starts, 9.7 for thirty (17% apart), each
    # start ±2% on its own. Two states of `run` starts each, 17% apart (6% for the shorter
    # ones, a smaller effect): found in at least `least` of the trials (measured: 100%,
    # 100%, 81%).
    rng = np.random.default_rng(run)
    step = 0.17 if run == 10 else 0.06
    found = sum(_moves(two_states(rng, rounds, run, step, 0.02), t) for t in range(TRIALS))
    assert found / TRIALS >= least


def test_state_fit_ends_are_the_two_states_and_a_drift_free_series_gives_none():
    # ten starts at 11.5 then thirty at 9.7, no noise: lag-1 autocorrelation high, ends
    # the two levels
    ratios = [11.5] * 10 + [9.7] * 30
    fit = state_fit(ratios, permutations=PERMUTATIONS)
    assert fit.by == TIME and fit.slope > 0.8 and fit.p_value < 0.01
    assert fit.slow_ratio == pytest.approx(9.7) and fit.fast_ratio == pytest.approx(11.5)
    assert fit.moves(0.02) and math.isnan(fit.host_spread)
    assert state_fit([4.0] * 20) is None
    assert state_fit([4.0, 4.1] * (MIN_ROUNDS_FOR_FIT // 2 - 1)) is None


def test_a_ratio_that_moved_with_a_host_state_says_so_and_names_a_side_only_at_both():
    verdict = decide_row(row(slow=9.7, fast=11.5, host_by=TIME), 1.13, "concurrent",
                         "sharded", 0.02)
    assert verdict.direction == HOST_SENSITIVE and verdict.ahead == "a"
    assert verdict.text() == (
        "host-sensitive (concurrent ahead at every host state seen; from 9.7 to 11.5 as "
        "the host's state moved: consecutive starts alike); seed outside, direction agrees")
    # a ratios.csv from before host_by (blank, NaN in pandas) reads as the probe's fit
    assert "at the slow host speed" in decide_row(row(host_by=math.nan), None, "x", "y",
                                                   0.02).text()
