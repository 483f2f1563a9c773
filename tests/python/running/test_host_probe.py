"""The host probe between rounds (kvlab.running.host_probe) and what an alternation does
with it: each kept round's host speed, host_probes.csv, and a ratio that moves with the
host found `host-sensitive` and given no more starts. kvlab-load and the probe are faked
with known rates: no timing is asserted."""

import csv
import itertools
import json
import math
import os
import types
from pathlib import Path

import numpy as np
import pytest

from fake_alternation import fake_host
from kvlab.running import alternating
from kvlab.running.host_probe import PROBE_BYTES, PROBE_READS, HostProbe
from kvlab.schema.specs import CompareSpec, Point


def test_the_probe_speed_is_reads_over_the_clocks_seconds():
    ticks = itertools.count(step=0.004)  # every timing lasts 4 ms on this clock
    probe = HostProbe(clock=lambda: next(ticks) * 1.0, repeats=3)
    assert math.isnan(probe.fault_us)
    assert probe.speed() == PROBE_READS / 0.004 / 1e6
    # the fresh buffer's 16,384 pages were faulted in within one 4 ms tick
    assert probe.fault_us == 0.004 / (PROBE_BYTES // 4096) * 1e6


def test_the_probe_pins_itself_to_its_cpus_and_gives_the_thread_its_own_back():
    before = os.sched_getaffinity(0)
    seen = []
    cpu = min(before)
    probe = HostProbe(cpus=[cpu], repeats=1,
                      clock=lambda: (seen.append(os.sched_getaffinity(0)), len(seen))[1])
    assert probe.speed() > 0
    assert seen and all(cpus == {cpu} for cpus in seen)
    assert os.sched_getaffinity(0) == before


POINT = Point("s", "r", "kvlab-load", "tcp", "dedicated", "direct", "set", "", 10,
              "uniform", 64, 16, 50, "on", 1, 0.3, 0.1, 1)


def fake_kvlab_load(host_speed, elasticity):
    """kvlab-load's alternation whose side A serves 1000 ops a slice and side B
    1000 / 4.4 times the host's speed to the power `elasticity`, so the round's ratio is
    4.4 * speed ** -elasticity, with ±0.2% of alternating noise."""
    calls = []

    def run(command, **kwargs):
        calls.append(command)
        b_ops = 1000 / 4.4 * host_speed() ** elasticity * (1.002 if len(calls) % 2 else 0.998)
        slices = [{"index": i, "side": 0 if i % 4 in (0, 3) else 1, "start_s": 0.1 * i,
                   "seconds": 0.09, "ops": 1000 if i % 4 in (0, 3) else round(b_ops),
                   "server_cpu_s": 0.08, "client_cpu_s": 0.02, "mean_us": 10,
                   "p99_us": 20} for i in range(8)]
        Path(command[command.index("--json") + 1]).write_text(json.dumps(
            {"status": "complete", "disturbed": False, "foreign_cpu": 0.0, "steal_cpu": 0.0,
             "allowed_cores": 1, "slices": slices}))
        return types.SimpleNamespace(returncode=0, stdout="", stderr="")
    return run, calls


def run_phase(tmp_path, monkeypatch, elasticity):
    # the host's speed takes a step of up to 8% either way between rounds (at the probe
    # before each round; the one after it sees the same speed)
    steps = iter(np.random.default_rng(7).uniform(0.92, 1.08, 200))
    now = {"speed": 1.0, "probes": 0}

    def probe():
        now["probes"] += 1
        if now["probes"] % 2:
            now["speed"] *= next(steps)
        return now["speed"]
    run, calls = fake_kvlab_load(lambda: now["speed"], elasticity)
    monkeypatch.setattr(alternating.subprocess, "run", run)
    pair = alternating.Pair(CompareSpec("x/y", "server", "x", "y"), "set", "p", POINT,
                            POINT)
    phase = alternating.AlternatingPhase(fake_host(tmp_path), [pair], tmp_path,
                                         host_speed=probe)
    why = phase.run(math.inf, 0.002, 30, 10)
    return pair, why, calls


def test_a_ratio_that_moves_with_the_host_is_host_sensitive_and_stops(tmp_path, monkeypatch):
    pair, why, calls = run_phase(tmp_path, monkeypatch, 1.0)
    # ±0.2% is out of reach while the ratio moves 3% a round; it stops at min_rounds
    assert len(pair.rounds) == 10 == len(pair.host_speeds) == len(calls)
    assert "moves with the host's speed or state (1)" in why
    result = alternating.pair_result(pair, 0.002, 10, 1.0)
    assert result.status == "inconclusive"
    assert result.host_slope == pytest.approx(-1.0, rel=0.05) and result.host_p <= 0.01
    assert result.host_slow > result.host_fast  # B slows more than A when the host does
    verdict = result.verdict()
    assert verdict.direction == "host-sensitive" and verdict.ahead == "a"
    assert result.row()["host_slow"] and result.row()["host_p"]
    with (tmp_path / "host_probes.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 10 and {r["kept"] for r in rows} == {"true"}
    # a round's host speed is the geometric mean of the probes before and after it
    before, after = float(rows[1]["before"]), float(rows[1]["after"])
    assert pair.host_speeds[1] == pytest.approx(math.sqrt(before * after), rel=1e-3)


def test_a_ratio_that_ignores_the_host_is_not_host_sensitive(tmp_path, monkeypatch):
    pair, why, _ = run_phase(tmp_path, monkeypatch, 0.0)
    result = alternating.pair_result(pair, 0.002, 10, 1.0)
    assert "moves with the host" not in why
    assert not (result.host_p <= 0.01 and abs(math.log(result.host_slow / result.host_fast))
                > math.log1p(0.002))
    assert result.verdict().direction != "host-sensitive"


def test_a_host_state_the_probe_does_not_see_still_stops_the_ratio_and_says_so(
        tmp_path, monkeypatch):
    # Run Y: the probe read one speed throughout while both servers served 25-37% less
    # for ten starts and the one-key SET ratio was 11.5 there, 9.7 after; it ran to 40
    # starts. Here the host is slow for five rounds, fast for the next five, and so on,
    # the probe reading 1.0 throughout: at min_rounds (10) the order of the starts says
    # it, and the ratio gets no more.
    rounds = {"n": 0}

    def host_state():
        rounds["n"] += 1
        return 1.0 if (rounds["n"] - 1) // 5 % 2 == 0 else 1.2
    run, _ = fake_kvlab_load(host_state, 1.0)
    monkeypatch.setattr(alternating.subprocess, "run", run)
    pair = alternating.Pair(CompareSpec("x/y", "server", "x", "y"), "set", "p", POINT,
                            POINT)
    phase = alternating.AlternatingPhase(fake_host(tmp_path), [pair], tmp_path,
                                         host_speed=lambda: 1.0)
    why = phase.run(math.inf, 0.002, 40, 10)
    assert len(pair.rounds) == 10 and "moves with the host's speed or state (1)" in why
    result = alternating.pair_result(pair, 0.002, 10, 1.0)
    assert result.host_by == "time" and result.row()["host_by"] == "time"
    assert result.host_slow == pytest.approx(4.4 / 1.2, rel=0.01)
    assert result.host_fast == pytest.approx(4.4, rel=0.01)
    verdict = result.verdict()
    assert verdict.direction == "host-sensitive" and verdict.ahead == "a"
    assert "as the host's state moved" in verdict.text()
