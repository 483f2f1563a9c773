"""Time series of a window: its steadiness and the warm-up check, on known slices."""

import json
import math

import pytest

from kvlab.measures.slices import point_steadiness, slice_rates, variation, warmed_up


def _file(path, windows):
    path.write_text(json.dumps({"points": [{"repetitions": [
        {"slices": {"nominal_s": 0.1, "columns": ["start_s", "seconds", "ops"],
                    "rows": [[i * 0.1, 0.1, ops] for i, ops in enumerate(window)]}}
        for window in windows]}]}))


def test_a_steady_window_has_no_variation_and_a_cold_start_is_caught(tmp_path):
    _file(tmp_path / "a.json", [[1000] * 10, [500, 600] + [1000] * 8])
    steady, cold = slice_rates(tmp_path / "a.json")
    assert steady == [10000.0] * 10
    assert variation(steady) == 0 and warmed_up(steady) is True
    assert warmed_up(cold) is False
    cv, cold_windows, windows = point_steadiness(tmp_path, ["a.json", "missing.json"])
    assert (cold_windows, windows) == (1, 2)
    assert cv == pytest.approx(variation(cold) / 2)  # the median of 0 and the cold one's


def test_the_window_tail_is_left_out_and_short_windows_are_not_judged(tmp_path):
    path = tmp_path / "b.json"
    path.write_text(json.dumps({"points": [{"repetitions": [{"slices": {
        "nominal_s": 0.1, "rows": [[0, 0.1, 100], [0.1, 0.1, 100], [0.2, 0.01, 90]]}}]}]}))
    (rates,) = slice_rates(path)
    assert rates == [1000.0, 1000.0]  # the 10 ms tail would read 9,000 ops/s
    assert warmed_up(rates) is None and math.isnan(variation([5.0]))
