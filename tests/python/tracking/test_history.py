"""History records (python3 -m kvlab record) and machine fingerprints."""

import json
import subprocess
import sys

import pytest

from conftest import REPO, python_env
from kvlab.tracking.history import (HistoryError, SeriesKey, group_records, load_history, point_label,
                                    read_record, record_from_run, series_of, write_record)
from kvlab.tracking.machine import FINGERPRINT_FIELDS, fingerprint, vector_level
from synthetic_runs import MACHINE_A, MACHINE_B, point_row, ratio_row, repetitions, write_run


def test_fingerprint_is_stable_and_changes_with_every_field():
    fp = fingerprint({**MACHINE_A, "hostname": "one", "python": "3.11"})
    assert fp == fingerprint({**MACHINE_A, "hostname": "two"})    # hostname is not identity
    assert fp["id"].startswith("intel-xeon-2c-")
    assert {k: fp[k] for k in FINGERPRINT_FIELDS} == MACHINE_A
    ids = {fingerprint({**MACHINE_A, field: "other"})["id"] for field in FINGERPRINT_FIELDS}
    assert len(ids) == len(FINGERPRINT_FIELDS) and fp["id"] not in ids


def test_vector_level_is_the_widest_extension_listed():
    x86 = "processor\t: 0\nflags\t\t: fpu sse2 sse4_1 sse4_2 avx avx2 fma\nbogomips: 1\n"
    assert vector_level(x86) == "avx2"
    assert vector_level(x86.replace("avx2", "avx2 avx512f avx512bw")) == "avx512f"
    assert vector_level("processor\t: 0\nFeatures\t: fp asimd evtstrm crc32\n") == "asimd"
    assert vector_level("processor\t: 0\n") == "unknown"


def test_fingerprint_of_an_older_record_says_unknown():
    fp = fingerprint({k: v for k, v in MACHINE_A.items() if k != "vector_level"})
    assert fp["vector_level"] == "unknown"
    assert fp["id"] != fingerprint(MACHINE_A)["id"]


def test_record_summarises_points_costs_and_ratios(tmp_path):
    rows = repetitions([90000.0, 100000.0, 110000.0]) \
        + [point_row(repetition=4, ops_per_s=5000.0, status="disturbed")] \
        + [dict(point_row(server="single", repetition=i), ops_per_s="", status="failed")
           for i in (1, 2)]
    run = write_run(tmp_path / "run", rows, ratios=[ratio_row(ratio=1.1, half_width=0.02)])
    record = record_from_run(run)
    assert record["fingerprint"] == fingerprint(MACHINE_A)
    assert record["commit"] == "a" * 40 and record["experiment"] == "headline"
    (ratio,) = record["ratios"]
    assert ratio == {"comparison": "concurrent/redis", "test": "set",
                     "point": "p16 tcp dedicated T1", "ratio": 1.1, "low": pytest.approx(1.078),
                     "high": pytest.approx(1.122), "rounds": 8, "status": "resolved"}
    measured, failed = record["points"]
    assert measured["point"] == point_label(rows[0])
    assert (measured["n"], measured["median"], measured["disturbed"]) == (3, 100000.0, 1)
    assert measured["low"] == pytest.approx(100000 - 4.303 * 10000 / 3 ** 0.5)
    assert measured["costs"]["server_cpu_us_per_op"]["median"] == pytest.approx(9.0)
    assert "server_instructions_per_op" not in measured["costs"]   # n/a: absent, not 0
    assert failed["n"] == 0 and failed["status"] == "failed" and failed["median"] is None


def test_record_cli_writes_a_compact_file_per_run(tmp_path):
    run = write_run(tmp_path / "20261130T100000Z-headline", repetitions([1e5, 1e5, 1e5]))
    history = tmp_path / "history"
    command = [sys.executable, "-m", "kvlab", "record", str(run), "--history", str(history)]
    done = subprocess.run(command, capture_output=True, text=True, env=python_env(), timeout=60)
    assert done.returncode == 0, done.stderr
    path = history / fingerprint(MACHINE_A)["id"] / ("a" * 12 + "-headline-20261130T100000Z.json")
    assert done.stdout.strip() == str(path)
    record = read_record(path)
    assert record == json.loads(json.dumps(record_from_run(run)))
    bad = subprocess.run([sys.executable, "-m", "kvlab", "record", str(tmp_path)],
                         capture_output=True, text=True, env=python_env(), timeout=60)
    assert bad.returncode == 2 and "not a run folder" in bad.stderr


def test_two_fingerprints_never_share_a_series(tmp_path):
    results = tmp_path / "results"
    for i, machine in enumerate((MACHINE_A, MACHINE_B, MACHINE_A)):
        run = write_run(tmp_path / f"run{i}", repetitions([1e5, 1e5, 1e5]), machine=machine,
                        started=f"2026-11-30T1{i}:00:00+00:00")
        write_record(record_from_run(run), results / "history")
    groups = group_records(load_history(results))
    assert sorted(len(g) for g in groups.values()) == [1, 2]
    for (fingerprint_id, _), records in groups.items():
        assert {r["fingerprint"]["id"] for r in records} == {fingerprint_id}
    # Both machines measured the same point: same series name, two separate histories.
    names = [set(series_of(g[-1])) for g in groups.values()]
    assert names[0] == names[1] and SeriesKey("ops/s", point_label(
        repetitions([1.0])[0])) in names[0]


def test_runs_whose_idle_cpus_polled_are_a_series_of_their_own(tmp_path):
    results = tmp_path / "results"
    # Before the hold existed (no cpu_idle), not held, held, held.
    for i, polled in enumerate((None, False, True, True)):
        run = write_run(tmp_path / f"run{i}", repetitions([1e5, 1e5, 1e5]), polled=polled,
                        started=f"2026-11-30T1{i}:00:00+00:00")
        write_record(record_from_run(run), results / "history")
    groups = group_records(load_history(results))
    assert {name: len(g) for (_, name), g in groups.items()} == {
        "headline": 2, "headline (idle CPUs poll)": 2}


def test_local_runs_join_the_history_once(tmp_path):
    results = tmp_path / "results"
    run = write_run(results / "runs" / "20261130T100000Z-headline", repetitions([1e5, 1e5]))
    (only,) = load_history(results)
    assert only.get("local") is True
    write_record(record_from_run(run), results / "history")
    (recorded,) = load_history(results)
    assert "local" not in recorded


def test_a_broken_file_is_skipped_with_its_name(tmp_path, capsys):
    results = tmp_path / "results"
    write_run(results / "runs" / "good", repetitions([1e5, 1e5]))
    (write_run(results / "runs" / "broken", repetitions([1e5])) / "meta.json").write_text("{")
    (results / "history" / "x").mkdir(parents=True)
    (results / "history" / "x" / "bad.json").write_text("[]")
    (only,) = load_history(results)
    assert only["run"] == "good"
    err = capsys.readouterr().err
    assert "broken/meta.json: not JSON" in err and "bad.json: not a kvlab-history/1" in err


def test_unreadable_records_are_named():
    with pytest.raises(HistoryError, match="not a kvlab-history/1 record"):
        read_record(REPO / "results" / "baseline" / "opcost.json")


def test_committed_history_loads():
    records = load_history(REPO / "results")
    sample = [r for r in records if r["run"] == "sample" and not r.get("local")]
    assert sample, "results/history lacks the record of results/sample"
    assert sample[0]["fingerprint"]["cpu_model"] == "Intel(R) Xeon(R) Processor"
