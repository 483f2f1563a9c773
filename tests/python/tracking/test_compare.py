"""compare: every series of a new run judged against a base with kvlab.tracking.verdict's rule."""

import csv
import subprocess
import sys

import pytest

from conftest import python_env
from kvlab.tracking.base_vs_new import CompareError, compare, render_comparison
from kvlab.tracking.history import SeriesKey, point_label, record_from_run, write_record
from synthetic_runs import MACHINE_B, point_row, ratio_row, repetitions, write_run

QUIET = (100000.0, 100500.0, 99600.0, 100200.0, 99900.0)


def _verdicts(base, new, **options):
    return {v.key: v.judgement for v in compare(base, new, **options)[2]}


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


def test_halving_is_never_called_same(small_run, tmp_path):
    # The audited defect: the old test accepted "same" for redis's tcp pooled point
    # (20k..40k over three repetitions) although every repetition had halved.
    new = tmp_path / "new"
    _scaled_copy(small_run, new, "redis", 0.5)
    verdicts = _verdicts(small_run, new)
    redis = {k: j for k, j in verdicts.items() if k.kind == "ops/s" and k.name.startswith("redis ")}
    assert len(redis) == 9    # 7 measured, 2 skipped (remote)
    assert all(j.verdict in ("regressed", "inconclusive") for j in redis.values()), redis
    assert sum(j.verdict == "regressed" for j in redis.values()) == 6
    assert sum("not measured (skipped)" in j.why for j in redis.values()) == 2
    pooled = next(j for k, j in redis.items() if " pooled " in k.name and " tcp " in k.name)
    assert pooled.verdict == "inconclusive" and "too wide" in pooled.why
    untouched = [j for k, j in verdicts.items() if not k.name.startswith("redis ")]
    assert not [j for j in untouched if j.verdict in ("regressed", "improved")]


def test_client_bound_points_errors_and_disturbance_are_not_judged(tmp_path):
    point = dict(server="concurrent", command="get")
    base = write_run(tmp_path / "base", repetitions(QUIET[:3], **point)
                     + repetitions(QUIET[:3], server="redis", command="get")
                     + repetitions(QUIET[:3], server="single", command="get"),
                     ratios=[ratio_row(ratio=1.10)])
    halved = [v / 2 for v in QUIET[:3]]
    new = write_run(tmp_path / "new",
                    repetitions(halved, client_bound="true", **point)
                    + repetitions(halved, errors=500, server="redis", command="get")
                    + repetitions(halved, status="disturbed", server="single", command="get"),
                    ratios=[ratio_row(ratio=0.5, status="disturbed")],
                    started="2026-11-30T11:00:00+00:00")
    verdicts = _verdicts(base, new)
    why = {k.name.split()[0]: j.why for k, j in verdicts.items() if k.kind == "ops/s"}
    assert all(j.verdict == "inconclusive" for j in verdicts.values()), verdicts
    assert "client-bound" in why["concurrent"]
    assert "1500 error replies" in why["redis"]
    assert "not measured (disturbed)" in why["single"]
    assert "disturbed" in verdicts[SeriesKey("ratio", "concurrent/redis set p16 tcp dedicated T1")].why


def test_declared_ratios_and_costs_are_judged(tmp_path):
    rows = repetitions(QUIET[:3])
    base = write_run(tmp_path / "base", rows, ratios=[ratio_row(ratio=1.10)])
    # Same ops/s, the ratio down 10%, server CPU per op up 20%.
    costly = [dict(r, server_cpu_us_per_op=float(r["server_cpu_us_per_op"]) * 1.2) for r in rows]
    new = write_run(tmp_path / "new", costly, ratios=[ratio_row(ratio=0.99)],
                    started="2026-11-30T11:00:00+00:00")
    verdicts = _verdicts(base, new)
    label = point_label(rows[0])
    assert verdicts[SeriesKey("ratio", "concurrent/redis set p16 tcp dedicated T1")].verdict \
        == "regressed"
    assert verdicts[SeriesKey("server_cpu_us_per_op", label)].verdict == "regressed"
    assert verdicts[SeriesKey("ops/s", label)].verdict == "same"
    # "n/a" instructions are absent, never a number.
    assert SeriesKey("server_instructions_per_op", label) not in verdicts


def test_a_history_folder_is_a_base(tmp_path):
    history = tmp_path / "history"
    for i, value in enumerate(QUIET):
        run = write_run(tmp_path / f"run{i}", repetitions([value * 0.995, value, value * 1.005]),
                        started=f"2026-11-30T1{i}:00:00+00:00")
        write_record(record_from_run(run), history)
    new = write_run(tmp_path / "new", repetitions([90000.0, 90300.0, 89700.0]),
                    started="2026-11-30T20:00:00+00:00")
    (folder,) = history.iterdir()
    (judgement,) = [j for k, j in _verdicts(folder, new).items() if k.kind == "ops/s"]
    assert judgement.verdict == "regressed" and judgement.runs == 5


def test_a_run_whose_idle_cpus_polled_is_not_judged_against_halting_ones(tmp_path):
    history = tmp_path / "history"
    for i, value in enumerate(QUIET):
        run = write_run(tmp_path / f"run{i}", repetitions([value * 0.995, value, value * 1.005]),
                        started=f"2026-11-30T1{i}:00:00+00:00", experiment=f"e{i}")
        write_record(record_from_run(run), history)
    # Five times faster with the CPUs polling: not an improvement of the code.
    new = write_run(tmp_path / "new", repetitions([5e5, 5.01e5, 4.99e5]), polled=True,
                    started="2026-11-30T20:00:00+00:00", experiment="other")
    (folder,) = history.iterdir()
    judged = [j for k, j in _verdicts(folder, new).items() if k.kind == "ops/s"]
    assert all(j.runs == 0 and j.verdict != "improved" for j in judged), judged


def test_two_machines_are_not_compared_unless_asked(tmp_path):
    base = write_run(tmp_path / "base", repetitions(QUIET[:3]))
    new = write_run(tmp_path / "new", repetitions(QUIET[:3]), machine=MACHINE_B)
    with pytest.raises(CompareError, match="another machine"):
        compare(base, new)
    assert compare(base, new, across_machines=True)[2]


def test_identical_runs_are_not_flagged(small_run, tmp_path):
    copy = tmp_path / "copy"
    _scaled_copy(small_run, copy, "redis", 1.0)
    text, counts = render_comparison(small_run, copy)
    assert counts["regressed"] == counts["improved"] == 0
    assert counts["same"] > 0
    assert "| ops/s | redis set p16 kvlab-load tcp dedicated" in text


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "kvlab", "compare", *map(str, args)],
                          capture_output=True, text=True, env=python_env(), timeout=60)


def test_compare_cli_fails_on_regressed_only_when_asked(small_run, tmp_path):
    new = tmp_path / "new"
    _scaled_copy(small_run, new, "concurrent", 0.5)
    plain = _cli(small_run, new)
    assert plain.returncode == 0 and "regressed" in plain.stdout
    assert _cli(small_run, new, "--fail-on-worse").returncode == 1
    fewer = write_run(tmp_path / "fewer", [point_row(server="concurrent", command="get")],
                      machine={}, started="2026-01-02T00:00:00+00:00")
    dropped = _cli(small_run, fewer, "--across-machines")
    assert dropped.returncode == 0
    assert "In the newest base run but not in new (" in dropped.stdout
    same = tmp_path / "same"
    _scaled_copy(small_run, same, "concurrent", 1.0)
    assert _cli(small_run, same, "--fail-on-worse").returncode == 0
    missing = _cli(tmp_path / "nope", new)
    assert missing.returncode == 2 and "neither a run folder" in missing.stderr
    other = write_run(tmp_path / "other", [point_row()], machine=MACHINE_B)
    crossed = _cli(small_run, other)
    assert crossed.returncode == 2 and "another machine" in crossed.stderr
