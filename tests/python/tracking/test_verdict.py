"""kvlab.tracking.verdict: the one noise-aware rule behind compare and the dashboard, on synthetic
series whose right answer is known."""

import pytest

from kvlab.tracking.history import Estimate
from kvlab.tracking.verdict import MIN_EFFECT, judge


def around(value, half_width=0.01, flaw=""):
    """An estimate with a relative 95% interval of ±half_width."""
    return Estimate(value, value * (1 - half_width), value * (1 + half_width), flaw)


QUIET = [around(v) for v in (100.0, 100.5, 99.6, 100.2, 99.9)]
NOISY = [around(v, 0.10) for v in (100.0, 85.0, 115.0, 90.0, 110.0)]


def test_a_ten_percent_drop_against_a_quiet_history_is_regressed():
    result = judge(QUIET, around(90.0))
    assert result.verdict == "regressed"
    assert result.change == pytest.approx(-0.10, abs=0.005)
    assert result.threshold == pytest.approx(MIN_EFFECT)


def test_a_ten_percent_rise_is_improved_and_direction_flips_for_costs():
    assert judge(QUIET, around(110.0)).verdict == "improved"
    # For a cost column lower is better: 10% more CPU per op is the regression.
    assert judge(QUIET, around(110.0), higher_is_better=False).verdict == "regressed"
    assert judge(QUIET, around(90.0), higher_is_better=False).verdict == "improved"


def test_the_same_drop_against_a_noisy_history_is_not_called_a_regression():
    result = judge(NOISY, around(90.0))
    assert result.verdict in ("unstable", "inconclusive")
    assert result.verdict == "unstable"   # five runs spread ±10%: the series itself is noisy
    assert result.threshold > 0.10


def test_a_drop_beyond_a_noisy_series_own_spread_is_still_regressed():
    assert judge(NOISY, around(50.0, 0.05)).verdict == "regressed"


def test_identical_runs_are_not_flagged():
    assert judge(QUIET, QUIET[-1]).verdict == "same"
    assert judge([QUIET[0]], QUIET[0]).verdict == "same"
    assert judge(NOISY, NOISY[-1]).verdict not in ("regressed", "improved")


def test_a_halving_measured_with_wide_intervals_is_inconclusive_not_same():
    # The audited defect: the old rule called any overlap "same", so a 50% drop with
    # wide intervals passed. One base run, intervals of ±60%: too wide to decide.
    result = judge([around(100.0, 0.6)], around(50.0, 0.6))
    assert result.verdict == "inconclusive"
    assert "too wide" in result.why


def test_same_needs_the_whole_new_interval_within_the_minimum_effect():
    # Centred on the history but ±8% wide: a 5% change could hide in it.
    assert judge(QUIET, around(100.0, 0.08)).verdict == "inconclusive"
    # 3% down with tight intervals: a real change, but smaller than what counts.
    assert judge(QUIET, around(97.0)).verdict == "same"


def test_a_large_change_whose_intervals_overlap_the_history_is_inconclusive():
    result = judge(QUIET, around(90.0, 0.12))
    assert result.verdict == "inconclusive"
    assert "overlap" in result.why


@pytest.mark.parametrize("flaw", ["client-bound: the load generator, not the server, set the pace",
                                  "12 error replies", "disturbed"])
def test_a_flawed_new_figure_is_never_judged(flaw):
    result = judge(QUIET, around(50.0, flaw=flaw))
    assert result.verdict == "inconclusive" and flaw in result.why


def test_flawed_history_runs_are_left_out():
    # The client-bound 50 would drag the median down and widen the spread if it counted.
    history = QUIET + [around(50.0, flaw="client-bound")]
    result = judge(history, around(100.0))
    assert result.verdict == "same" and result.runs == len(QUIET)


def test_missing_intervals_or_history_are_inconclusive():
    assert judge([], around(100.0)).verdict == "inconclusive"
    assert judge(QUIET, Estimate(90.0)).verdict == "inconclusive"        # one repetition
    assert judge([Estimate(100.0)], around(50.0)).verdict == "inconclusive"


def test_only_the_last_window_of_history_counts():
    # An old regime at 50 followed by ten quiet runs at 100: the old runs are out of the window.
    history = [around(50.0)] * 5 + QUIET * 2
    assert judge(history, around(100.0), window=10).verdict == "same"
    assert judge(history, around(100.0), window=15).verdict == "unstable"
