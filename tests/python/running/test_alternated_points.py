"""The declared ratios' points measured from their alternation's starts: a start's row
per side, the points no start measured, the time the plan keeps for their rounds, and a
real run whose ratio the budget left out measuring its points in rounds."""

import csv
import dataclasses
import math
import types

import pytest

from kvlab.measures.alternation import Slice
from kvlab.running import alternated_points, alternating
from kvlab.schema.specs import CompareSpec, Point, ServerSpec

from conftest import experiment_head, run_experiment
from fake_alternation import fake_host, shared_pooled_incr


def point(server: str, threads: int = 1, command: str = "set") -> Point:
    return Point("s", server, "kvlab-load", "tcp", "dedicated", "direct", command, "", 10,
                 "uniform", 64, 16, 50, "on", threads, 0.3, 0.1, 3)


# the experiment's servers: "logged" keeps an append-only log
SERVERS = types.SimpleNamespace(server=lambda name: ServerSpec(
    name, "kvlab", engine="single", appendfsync="always" if name == "logged" else None))


def pair(a: str, b: str, threads: int = 1, calibration: bool = False) -> alternating.Pair:
    return alternating.Pair(CompareSpec(f"{a}/{b}", "server", a, b), "set", f"T{threads}",
                            point(a, threads), point(b, threads), calibration=calibration)


def test_a_start_row_is_its_sides_ops_over_its_slices_seconds():
    measured = pair("c", "s")
    # side a: 300 + 100 ops in 0.1 + 0.1 s; side b: 50 ops in 0.1 s, CPU not read
    measured.rounds = [[Slice(0, 0.0, 0.1, 300, 0.05, 0.02, 10.0, 20.0),
                        Slice(1, 0.1, 0.1, 50, -1.0, 0.01, 40.0, 80.0),
                        Slice(0, 0.2, 0.1, 100, 0.05, 0.02, 30.0, 60.0)]]
    measured.round_bound = [True]
    rows = alternated_points.start_rows(measured, SERVERS)
    assert [p.server for p, _ in rows] == ["c", "s"]
    a, b = rows[0][1], rows[1][1]
    assert a["ops"] == 400 and a["seconds"] == pytest.approx(0.2)
    assert a["ops_per_s"] == pytest.approx(2000.0)
    assert a["mean_us"] == pytest.approx((300 * 10 + 100 * 30) / 400)  # weighted by ops
    assert a["server_cpu"] == "0.5000" and a["client_cpu"] == "0.2000"
    assert float(a["server_cpu_us_per_op"]) == pytest.approx(0.1 / 400 * 1e6)
    assert a["client_bound"] == "true" and a["note"] == alternated_points.START_NOTE
    assert b["ops_per_s"] == pytest.approx(500.0) and b["server_cpu"] == ""
    assert "p99_us" not in a, "a slice's p99 is not a start's"
    assert a["server"] == "c" and a["threads"] == 1
    # the A/A compares a server with its copy: its starts are not the point's rows
    calibration = pair("s", "s", calibration=True)
    calibration.rounds = measured.rounds
    assert alternated_points.start_rows(calibration, SERVERS) == []


def test_the_points_no_start_measured_are_those_of_unmeasured_pairs_only():
    measured, shares, alone = pair("c", "s"), pair("o", "s"), pair("x", "y", threads=2)
    measured.rounds = [[Slice(0, 0, 0.1, 1, 0, 0, 1, 1), Slice(1, 0, 0.1, 1, 0, 0, 1, 1)]]
    got = alternated_points.unmeasured_points([measured, shares, alone], SERVERS)
    # "s" at T1 is a side of the measured pair: only o, x and y need rounds
    assert [p.server for p in got] == ["o", "x", "y"]
    assert [p.server for p in alternated_points.pair_points([measured, shares], SERVERS)] == \
        ["c", "s", "o"]


def test_only_what_a_start_measures_in_full_leaves_the_rounds():
    # A GET's prefill (memory.csv), YCSB's misses, latency curves, system calls, a logged
    # server's fsyncs are measured in rounds; so is a latency comparison's point (its
    # starts run open loop at one rate, not the point's closed-loop rate).
    assert alternated_points.measured_by_starts(point("c"), SERVERS)
    assert not alternated_points.measured_by_starts(point("c", command="get"), SERVERS)
    assert not alternated_points.measured_by_starts(point("logged"), SERVERS)
    curved = dataclasses.replace(point("c"), latency_curve=(0.5,))
    assert not alternated_points.measured_by_starts(curved, SERVERS)
    traced = dataclasses.replace(point("c"), syscalls=True)
    assert not alternated_points.measured_by_starts(traced, SERVERS)
    gets = alternating.Pair(CompareSpec("c/s GET", "server", "c", "s"), "get", "p",
                            point("c", command="get"), point("s", command="get"))
    latency = alternating.Pair(CompareSpec("c/s p99", "server", "c", "s", metric="p99_us",
                                           rate=1000.0), "set", "p", point("c"), point("s"))
    assert alternated_points.pair_points([gets, latency], SERVERS) == []
    latency.rounds = [[Slice(0, 0, 0.1, 1, 0, 0, 1, 1), Slice(1, 0, 0.1, 1, 0, 0, 1, 1)]]
    assert alternated_points.start_rows(latency, SERVERS) == []


def test_the_plan_keeps_the_rounds_of_the_points_it_leaves_out(tmp_path):
    costs = []

    def rounds_cost(points):
        costs.append([p.server for p in points])
        return 10.0 * len(points)

    aa, first, second = pair("s", "s", calibration=True), pair("c", "s"), pair("o", "p")
    phase = alternating.AlternatingPhase(fake_host(tmp_path), [aa, first, second], tmp_path,
                                         rounds_cost=rounds_cost)
    # before a plan, every pair's points: c, s, o and p
    assert phase._rounds_reserve(None) == 40.0
    planned = {first.key: types.SimpleNamespace(measured=True),
               second.key: types.SimpleNamespace(measured=False)}
    assert phase._rounds_reserve(planned) == 20.0 and costs[-1] == ["o", "p"]
    # a pair with a kept start has its rows whatever the plan says now
    second.rounds = [[]]
    assert phase._rounds_reserve(planned) == 0.0


def test_a_ratio_the_budget_leaves_out_has_its_points_measured_in_rounds(build_dir,
                                                                          tmp_path):
    # A budget too short for even the A/A: no start measures the ratio's two points, so
    # they get the sweep's rounds after the alternation and the tables keep them.
    text = experiment_head("left-out", precision=0.5, max_rounds=4, alternation_s=0.4,
                           slice_s=0.05, budget_s=1) + shared_pooled_incr(2)
    run_dir, said = run_experiment(text, tmp_path, build_dir)
    with (run_dir / "points.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert sorted((r["client"], r["repetition"], r["status"]) for r in rows) == [
        ("pooled", "1", "ok"), ("pooled", "2", "ok"), ("shared", "1", "ok"),
        ("shared", "2", "ok")], said
    assert all(r["note"] != alternated_points.START_NOTE for r in rows)
    with (run_dir / "ratios.csv").open() as handle:
        ratio = next(csv.DictReader(handle))
    assert ratio["status"] != "resolved" and math.isnan(float(ratio["ratio"] or "nan"))
