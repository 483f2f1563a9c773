"""compare: per-point ratios and noise-aware verdicts."""

import csv
import subprocess
import sys

from conftest import python_env
from kvlab.compare import render_comparison, verdict
from kvlab.stats import summarize


def test_verdict_needs_non_overlapping_intervals():
    base = summarize([100, 101, 99])
    assert verdict(base, summarize([120, 121, 119])) == "better"
    assert verdict(base, summarize([80, 81, 79])) == "worse"
    assert verdict(base, summarize([100, 102, 98])) == "same"
    # a big median change with a wide spread overlaps: within noise
    assert verdict(base, summarize([60, 150, 200])) == "same"


def test_verdict_ignores_significant_but_negligible_changes():
    base = summarize([1000.0, 1000.1, 999.9])
    assert verdict(base, summarize([1010.0, 1010.1, 1009.9])) == "same"   # +1% < 2%
    assert verdict(base, summarize([1030.0, 1030.1, 1029.9])) == "better"


def test_single_repetitions_use_a_fixed_threshold():
    assert verdict(summarize([100]), summarize([105])) == "same"
    assert verdict(summarize([100]), summarize([115])) == "better"
    assert verdict(summarize([100]), summarize([85])) == "worse"


def _scaled_copy(source, target, server, factor):
    target.mkdir()
    (target / "meta.json").write_text((source / "meta.json").read_text())
    with (source / "points.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        if row["server"] == server and row["ops_per_s"]:
            row["ops_per_s"] = str(float(row["ops_per_s"]) * factor)
    with (target / "points.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def test_compare_runs_matches_points_and_counts_verdicts(small_run, tmp_path):
    new = tmp_path / "new"
    _scaled_copy(small_run, new, "redis", 0.5)
    text, counts = render_comparison(small_run, new)
    # 11 measured points (skipped ones are not compared); redis has 7 and every one
    # halves, but its tcp pooled point (20k..40k) is so noisy that even 0.5x is "same".
    assert counts == {"worse": 6, "same": 5, "better": 0}
    assert "redis p16 kvlab-load tcp dedicated set keys=1 P=16 c=50 nodelay=on T=1 | 81,000 | 40,500 | 0.500 | worse" in text


def test_compare_cli_fails_on_worse_only_when_asked(small_run, tmp_path):
    new = tmp_path / "new"
    _scaled_copy(small_run, new, "concurrent", 0.5)
    command = [sys.executable, "-m", "kvlab", "compare", str(small_run), str(new)]
    plain = subprocess.run(command, capture_output=True, text=True, env=python_env(), timeout=60)
    assert plain.returncode == 0 and "worse" in plain.stdout
    strict = subprocess.run(command + ["--fail-on-worse"], capture_output=True, text=True,
                            env=python_env(), timeout=60)
    assert strict.returncode == 1
    missing = subprocess.run([sys.executable, "-m", "kvlab", "compare", str(tmp_path / "nope"),
                              str(new)], capture_output=True, text=True, env=python_env(), timeout=60)
    assert missing.returncode == 2 and "not a run folder" in missing.stderr
