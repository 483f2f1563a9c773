"""Precise comparisons: ratio intervals with known coverage, declared comparisons and
adaptive stopping. (kvlab-load detects interference; its test against a real busy
process is tests/harness/window_watch_test.cc.)"""

import math
import random
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest

from conftest import REPO, check_coverage
from kvlab.measures.declared_ratios import compute, unresolved_points
from kvlab.running.cpus import this_machine
from kvlab.running.experiment import parse_experiment_text
from kvlab.schema.specs import CompareSpec
from kvlab.running.loadgens import LoadResult
from kvlab.running.plan import resolve
from kvlab.running.results import load_points
from kvlab.measures.stats import ratio_interval, t_quantile_975


def test_t_quantile_falls_smoothly_past_thirty_degrees_of_freedom():
    assert t_quantile_975(30) == 2.042
    assert 1.96 < t_quantile_975(31) < 2.042
    assert t_quantile_975(40) == pytest.approx(2.0211, abs=2e-4)
    assert t_quantile_975(120) == pytest.approx(1.9799, abs=2e-4)
    assert t_quantile_975(10 ** 6) == pytest.approx(1.96, abs=1e-3)


@pytest.mark.parametrize("rounds", [5, 12])
def test_ratio_interval_covers_a_known_ratio_95_percent_of_the_time(rounds):
    # Synthetic rounds: a drift both servers see (large), then each its own noise (5%).
    generator = random.Random(20261201 + rounds)
    true_ratio, summaries = 1.07, []
    for _ in range(2000):
        ratios = []
        for _ in range(rounds):
            drift = math.exp(generator.gauss(0, 0.3))
            a = 1e6 * true_ratio * drift * math.exp(generator.gauss(0, 0.05))
            b = 1e6 * drift * math.exp(generator.gauss(0, 0.05))
            ratios.append(a / b)
        summaries.append(ratio_interval(ratios))
    # At 2,000 trials chance moves a 95% coverage by 0.5%. An exact t interval's mean
    # half-width is t(0.975, n-1) * E[s] / sqrt(n) against the centres' 1.96 * sigma /
    # sqrt(n): 2.776 * 0.940 / 1.96 = 1.33 times at 5 rounds, 2.201 * 0.977 / 1.96 = 1.10
    # at 12 (E[s] = c4(n) * sigma).
    check_coverage([s.low for s in summaries], [s.high for s in summaries],
                   [s.ratio for s in summaries], true_ratio, band=(0.935, 0.965),
                   width={5: 1.45, 12: 1.2}[rounds])


def test_ratio_interval_is_symmetric_in_a_and_b_and_empty_for_one_round():
    forward = ratio_interval([1.1, 1.2, 1.15])
    backward = ratio_interval([1 / 1.1, 1 / 1.2, 1 / 1.15])
    assert forward.ratio == pytest.approx(1 / backward.ratio)
    assert forward.low == pytest.approx(1 / backward.high)
    one = ratio_interval([1.1])
    assert one.n == 1 and math.isnan(one.low) and one.half_width == math.inf


def _rows(server, ops_by_round, status="ok", **variables):
    base = {"sweep": "s", "server": server, "loadgen": "kvlab-load", "transport": "tcp",
            "client": "dedicated", "io": "direct", "command": "set", "ratio": "", "keys": 10, "key_dist":
            "uniform", "value_size": 64, "pipeline": 16, "connections": 50, "nodelay": "on",
            "threads": 1}
    base.update(variables)
    return [dict(base, repetition=r, ops_per_s=ops, status=status)
            for r, ops in enumerate(ops_by_round, start=1)]


def test_a_declared_comparison_pairs_points_inside_each_round():
    # b drifts by 2x between rounds; a is always 10% faster in the same round
    frame = pd.DataFrame(_rows("a", [110, 220, 165, 330]) + _rows("b", [100, 200, 150, 300]))
    (result,) = compute(frame, [CompareSpec("a/b", "server", "a", "b")], precision=0.02,
                        min_rounds=4)
    assert result.summary.ratio == pytest.approx(1.1)
    assert result.summary.n == 4 and result.status == "resolved"
    assert result.row()["point"] == "s: tcp dedicated P16 T1 keys=10"
    # each side's median over its rounds: which side moved when two runs differ
    assert result.median_a == pytest.approx(192.5) and result.median_b == pytest.approx(175)
    assert result.row()["median_a"] == "192.5" and result.row()["median_b"] == "175"


def test_a_ratio_over_two_rounds_is_undecided_in_its_row():
    # a is 10% ahead in both rounds to 0.1%, but two starts of the processes decide nothing
    frame = pd.DataFrame(_rows("a", [1100, 1101]) + _rows("b", [1000, 1000]))
    (result,) = compute(frame, [CompareSpec("a/b", "server", "a", "b")], precision=0.02,
                        min_rounds=2)
    assert result.row()["verdict"] == "undecided (too few starts)"
    # and its status does not say otherwise, though the two rounds agree to 0.1%
    assert result.status == "inconclusive"
    frame = pd.DataFrame(_rows("a", [1100, 1101, 1099]) + _rows("b", [1000] * 3))
    (result,) = compute(frame, [CompareSpec("a/b", "server", "a", "b")], precision=0.02,
                        min_rounds=3)
    assert result.row()["verdict"] == "a ahead"
    # short of the experiment's min_rounds, the same three rounds claim no side
    (result,) = compute(frame, [CompareSpec("a/b", "server", "a", "b")], precision=0.02,
                        min_rounds=10)
    assert result.status == "inconclusive"
    assert result.row()["verdict"] == "not resolved (budget)"


def test_noise_leaves_a_ratio_inconclusive_and_disturbance_is_said():
    noisy = pd.DataFrame(_rows("a", [100, 150, 90]) + _rows("b", [100, 100, 100]))
    (result,) = compute(noisy, [CompareSpec("a/b", "server", "a", "b")], precision=0.02)
    assert result.status == "inconclusive"
    assert unresolved_points([result]) == {result.key_a, result.key_b}
    disturbed = pd.DataFrame(_rows("a", [100, 100], status="disturbed")
                             + _rows("b", [100, 100]))
    (result,) = compute(disturbed, [CompareSpec("a/b", "server", "a", "b")], precision=0.02)
    assert result.status == "disturbed" and result.disturbed_rounds == 2


def test_a_comparison_along_the_client_with_filters():
    # A shared client always has one connection, a pool eight: still a pair.
    frame = pd.DataFrame(
        _rows("r", [50, 52], client="shared", threads=2, command="incrby", connections=1)
        + _rows("r", [100, 104], client="pooled", threads=2, command="incrby", connections=8)
        + _rows("r", [10, 10], client="shared", threads=4, command="incrby")
        + _rows("r", [10, 10], client="pooled", threads=4, command="incrby"))
    spec = CompareSpec("shared/pooled", "client", "shared", "pooled", tests=("incrby",),
                       where=(("threads", (2,)),))
    (result,) = compute(frame, [spec])
    assert result.summary.ratio == pytest.approx(0.5)
    assert result.test == "incrby" and "T2" in result.point


ADAPTIVE = """
[experiment]
name = "adaptive"
measurement = "rounds"
precision = 0.02
max_rounds = {max_rounds}
{budget}
disturbance_cores = 64
[[server]]
name = "fast"
kind = "redis"
[[server]]
name = "slow"
kind = "redis"
[[sweep]]
name = "s"
command = "set"
keys = 10
threads = 1
duration = 0.05
warmup = 0.0
repetitions = 3
[[compare]]
a = "fast"
b = "slow"
"""


def _fake_load(noise):
    """A load generator whose ops/s are known: fast = 1.2 x slow, times noise."""
    generator = random.Random(7)

    def run(point, build_dir, target, cpus, netns, csv_path, json_path, prefill, labels,
            **_):
        rate = 1e5 * (1.2 if point.server == "fast" else 1.0) * math.exp(
            generator.gauss(0, noise))
        return LoadResult([{**point.variables(), **labels, "ops": str(int(rate * 0.05)),
                            "seconds": "0.05", "ops_per_s": f"{rate:.1f}", "client_cpu": "0.5",
                            "client_bound": "false", "errors": "0", "status": "ok"}])
    return run


def _adaptive_run(tmp_path, build, monkeypatch, noise, max_rounds=40, budget=""):
    import kvlab.running.runner as runner_module
    monkeypatch.setattr(runner_module.loadgens, "run_kvlab_load", _fake_load(noise))
    experiment = parse_experiment_text(ADAPTIVE.format(max_rounds=max_rounds, budget=budget),
                                       tmp_path / "adaptive.toml")
    with (tmp_path / "log.txt").open("w") as stream:
        runner = runner_module.Runner(resolve(experiment, this_machine()), REPO,
                                      build, tmp_path / "runs", stream)
        run_dir = runner.run()
    ratios = pd.read_csv(run_dir / "ratios.csv")
    return runner, load_points(run_dir), ratios


def test_adaptive_stopping_stops_at_the_target(tmp_path, load_only_build, monkeypatch):
    runner, points, ratios = _adaptive_run(tmp_path, load_only_build, monkeypatch, noise=0.01)
    assert list(ratios.columns) == ["comparison", "test", "point", "ratio", "low", "high",
                                    "rounds", "status", "metric", "client_bound", "method",
                                    "pairs", "seconds", "verdict", "modes_a", "modes_b",
                                    "modes_between", "budget_needed_s", "median_a",
                                    "median_b", "host_slope", "host_p", "host_slow",
                                    "host_fast", "host_by"]
    (row,) = ratios.itertuples()
    assert row.status == "resolved" and row.ratio == pytest.approx(1.2, rel=0.02)
    # never before min_rounds (10), however tight the first rounds look
    assert (row.high / row.ratio - 1) <= 0.02 and 10 <= row.rounds < 40
    assert "met" in runner.stops["local"]
    assert points["repetition"].max() == row.rounds  # no round beyond the one that met it


def test_adaptive_stopping_stops_at_max_rounds_and_says_so(tmp_path, load_only_build, monkeypatch):
    runner, _, ratios = _adaptive_run(tmp_path, load_only_build, monkeypatch, noise=0.3, max_rounds=5)
    (row,) = ratios.itertuples()
    assert row.status == "inconclusive" and row.rounds == 5
    assert "max_rounds" in runner.stops["local"]


def test_adaptive_stopping_stops_at_the_time_budget(tmp_path, load_only_build, monkeypatch):
    runner, _, ratios = _adaptive_run(tmp_path, load_only_build, monkeypatch, noise=0.3, budget="budget_s = 6")
    (row,) = ratios.itertuples()
    assert row.status == "inconclusive" and row.rounds >= 3
    assert "budget" in runner.stops["local"]


def test_our_own_helper_processes_are_found_by_name():
    from kvlab.running.runner import pids_named
    sleeper = subprocess.Popen(["sleep", "5"])
    try:
        # Until the child has exec'd, its command name is still Python's.
        comm = Path(f"/proc/{sleeper.pid}/comm")
        deadline = time.monotonic() + 5
        while comm.read_text().strip() != "sleep" and time.monotonic() < deadline:
            time.sleep(0.01)
        assert sleeper.pid in pids_named("sleep")
        assert pids_named("no-such-command-name") == []
    finally:
        sleeper.kill()
        sleeper.wait()


def test_the_two_sides_of_a_declared_comparison_are_measured_next_to_each_other():
    from types import SimpleNamespace
    from kvlab.running.runner import paired_order
    slot = [SimpleNamespace(sweep="p16", command="set")]
    servers = ["w", "x", "redis", "y", "concurrent", "z"]
    comparisons = [CompareSpec("c/r", "server", "concurrent", "redis", sweep="p16"),
                   CompareSpec("y/x", "server", "y", "x", tests=("set",)),
                   CompareSpec("w/z GET", "server", "w", "z", tests=("get",)),  # not this slot
                   CompareSpec("shared/pooled", "client", "shared", "pooled")]
    rng = random.Random(7)
    firsts, spread_w_z = set(), 0
    for _ in range(400):
        order = paired_order(servers, slot, comparisons, rng)
        assert sorted(order) == sorted(servers)
        assert abs(order.index("concurrent") - order.index("redis")) == 1
        assert abs(order.index("y") - order.index("x")) == 1
        firsts.add(order[0])
        spread_w_z += abs(order.index("w") - order.index("z")) > 1
    assert firsts == set(servers)   # still shuffled: any server may come first
    assert spread_w_z > 0           # a GET-only comparison does not pair a SET slot


def test_a_server_in_two_pairs_is_placed_once():
    from types import SimpleNamespace
    from kvlab.running.runner import paired_order
    slot = [SimpleNamespace(sweep="s", command="set")]
    comparisons = [CompareSpec("a/r", "server", "a", "r"), CompareSpec("b/r", "server", "b", "r")]
    rng = random.Random(3)
    for _ in range(100):
        order = paired_order(["a", "b", "r"], slot, comparisons, rng)
        assert sorted(order) == ["a", "b", "r"]
        assert min(abs(order.index(x) - order.index("r")) for x in "ab") == 1


def test_a_ratio_resolves_only_over_min_rounds():
    # Four rounds that agree to 0.1% look resolved but are too few to trust their spread.
    frame = pd.DataFrame(_rows("a", [1200, 1201, 1199, 1200]) + _rows("b", [1000] * 4))
    spec = [CompareSpec("a/b", "server", "a", "b")]
    (few,) = compute(frame, spec, precision=0.02)
    assert few.status == "inconclusive"
    (allowed,) = compute(frame, spec, precision=0.02, min_rounds=4)
    assert allowed.status == "resolved"


def _sequential_runs(noise, min_rounds, trials=2000, seed=20261203):
    """Runs that add a round and stop once meets_target (the runner's rule), on synthetic
    log-normal rounds of a true ratio 1.0: (coverage of 1.0 at the stop, median stop)."""
    from kvlab.measures.declared_ratios import meets_target
    generator = random.Random(seed)
    covered, stops = 0, []
    for _ in range(trials):
        ratios = []
        while True:
            ratios.append(math.exp(generator.gauss(0, noise)))
            summary = ratio_interval(ratios)
            if meets_target(summary, 0.02, min_rounds) or len(ratios) >= 200:
                break
        covered += summary.low <= 1.0 <= summary.high
        stops.append(len(ratios))
    return covered / trials, sorted(stops)[trials // 2], min(stops)


def test_the_stopping_rule_keeps_coverage_where_it_stops_near_the_minimum():
    # 3.5% noise per round against a ±2% target: the interval reaches the target near
    # the minimum of 10 rounds (a t interval over n rounds is about 2.2 * 3.5% / sqrt(n)
    # wide at n = 10..15), so early stops on a lucky spread are common, and coverage at
    # the stop is what the rule is worth. Over 2,000 runs chance moves it by about 0.5%.
    from kvlab.schema.specs import DEFAULT_MIN_ROUNDS
    coverage, median_stop, first_stop = _sequential_runs(0.035, DEFAULT_MIN_ROUNDS)
    assert first_stop == DEFAULT_MIN_ROUNDS and median_stop <= 16
    assert coverage >= 0.92, coverage
    # The test can fail: stopping from round 4 on, as alternation did, covers less.
    early, _, _ = _sequential_runs(0.035, 4)
    assert early < 0.92, early


def test_alternation_resolves_by_the_experiments_min_rounds():
    # One rule for both designs: the runner judges an alternated pair by the
    # experiment's min_rounds, not by a minimum of its own.
    from types import SimpleNamespace
    from kvlab.running import alternating
    from kvlab.schema.specs import Point
    from kvlab.running.runner import Runner
    from kvlab.measures.alternation import Slice
    point = Point("s", "c", "kvlab-load", "tcp", "dedicated", "direct", "set", "", 10,
                  "uniform", 64, 16, 50, "on", 1, 0.3, 0.1, 1)
    pair = alternating.Pair(CompareSpec("c/s", "server", "c", "s"), "set", "p", point, point)
    # 4 rounds in which A is 20% faster in every pair, to 0.1%
    pair.rounds = [[Slice(0 if i % 4 in (0, 3) else 1, 0.1 * i, 0.1,
                          1200 + (i % 3) if i % 4 in (0, 3) else 1000, 0.05, 0.03, 1.0, 2.0)
                    for i in range(40)] for _ in range(4)]
    runner = SimpleNamespace(experiment=SimpleNamespace(precision=0.02, min_rounds=10),
                             plans={}, alternation_spent_by_pair={})
    assert Runner._pair_result(runner, pair).status == "inconclusive"
    runner.experiment.min_rounds = 4
    assert Runner._pair_result(runner, pair).status == "resolved"


CLIENT_PAIRS = """
[experiment]
name = "pairs"
server_cpus = "0-0"
harness_cpus = "1-1"
[[server]]
name = "redis"
kind = "redis"
[[sweep]]
name = "lettuce"
client = ["pooled", "shared"]
transport = ["unix", "tcp"]
threads = [1, 2, 4]
command = "incrby"
keys = 1
connections = 8
[[compare]]
by = "client"
a = "shared"
b = "pooled"
"""


def test_the_two_slots_of_a_comparison_along_the_client_are_walked_next_to_each_other():
    from kvlab.running.cpus import Topology
    from kvlab.running.runner import _slots, paired_slots
    experiment = parse_experiment_text(CLIENT_PAIRS, Path("pairs.toml"))
    points = resolve(experiment, Topology.of(range(2))).points
    slots = _slots(points)
    assert len(slots) == 12
    rng = random.Random(11)
    firsts = set()
    for _ in range(200):
        order = paired_slots(slots, experiment.comparisons, rng)
        assert sorted(map(id, order)) == sorted(map(id, slots))
        for i, slot in enumerate(order):
            point = slot[0]
            neighbours = [order[j][0] for j in (i - 1, i + 1) if 0 <= j < len(order)]
            assert any(n.client != point.client and (n.transport, n.threads)
                       == (point.transport, point.threads) for n in neighbours)
        firsts.add(order[0][0].client)
        # otherwise the experiment's order: pairs come in the order of their first slot
        pair_keys = [(slot[0].transport, slot[0].threads) for slot in order[::2]]
        assert pair_keys == list(dict.fromkeys((s[0].transport, s[0].threads) for s in slots))
    assert firsts == {"pooled", "shared"}   # either side of a pair may come first


def test_a_per_server_cpu_comparison_divides_ops_per_cpu_second():
    # Client-bound: both servers serve the same 100 ops/s; a spends 0.5 of a core on it,
    # b 0.8. Throughput says 1.0; per server CPU a does 1.6x the work per CPU second.
    def rows(server, cpu):
        return [dict(row, server_cpu=cpu, client_bound="true")
                for row in _rows(server, [100, 100, 100, 100])]
    frame = pd.DataFrame(rows("a", 0.5) + rows("b", 0.8))
    throughput = CompareSpec("a/b", "server", "a", "b")
    per_cpu = CompareSpec("a/b per server CPU", "server", "a", "b", metric="ops_per_server_cpu_s")
    by_ops, by_cpu = compute(frame, [throughput, per_cpu], precision=0.02, min_rounds=4)
    assert by_ops.summary.ratio == pytest.approx(1.0) and by_ops.client_bound
    assert by_cpu.summary.ratio == pytest.approx(1.6) and by_cpu.status == "resolved"
    assert not by_cpu.client_bound  # only a throughput ratio is flagged
    assert by_ops.row()["client_bound"] == "true"
    assert by_cpu.row()["metric"] == "ops_per_server_cpu_s"


def test_rounds_without_a_server_cpu_reading_are_left_out_of_a_per_cpu_ratio():
    frame = pd.DataFrame([dict(r, server_cpu=c) for r, c in
                          zip(_rows("a", [100, 100, 100]), [0.5, "n/a", 0.5])]
                         + [dict(r, server_cpu=1.0) for r in _rows("b", [100, 100, 100])])
    (result,) = compute(frame, [CompareSpec("x", "server", "a", "b",
                                            metric="ops_per_server_cpu_s")], min_rounds=2)
    assert result.summary.n == 2 and result.summary.ratio == pytest.approx(2.0)
    assert result.disturbed_rounds == 0


def test_a_throughput_ratio_is_client_bound_only_when_most_rounds_were():
    def rows(server, bound):
        return [dict(row, client_bound=b) for row, b in zip(_rows(server, [100, 100, 100]), bound)]
    frame = pd.DataFrame(rows("a", ["true", "false", "false"]) + rows("b", ["false"] * 3))
    (result,) = compute(frame, [CompareSpec("a/b", "server", "a", "b")])
    assert not result.client_bound
