"""End to end: tiny experiments through `python3 -m kvlab run` (a few seconds each)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, experiment_head, kvlab_binaries_or_fail, python_env
from kvlab.running.experiment import parse_experiment_text
from kvlab.measures.histograms import merged_percentiles
from kvlab.running.results import load_points
from kvlab.running.cpus import this_machine
from kvlab.running.plan import resolve
from kvlab.running.runner import Runner


def _plan(experiment):
    return resolve(experiment, this_machine())

# These tests check the run folder, not the machine's quiet: other work beside them must
# not turn their measurements into re-runs (tests/harness/window_watch_test.cc tests the
# detector).
TINY = """
[experiment]
name = "tiny"
disturbance_cores = 64

[[server]]
name = "concurrent"
kind = "kvlab"
engine = "concurrent"
io_threads = 1
seed_engine = "concurrent"

[[sweep]]
name = "p4"
seed = "ember-pr50"
command = "get"
keys = 100
pipeline = 4
connections = 2
threads = 1
duration = 0.2
warmup = 0.05
repetitions = 2

# key:0 now holds a 64-byte string; INCRBY points must start from an integer
[[sweep]]
name = "incr"
client = "shared"
command = "incrby"
keys = 1
threads = 1
duration = 0.2
warmup = 0.05
repetitions = 1
"""


def run_cli(experiment_file, build, out):
    return subprocess.run([sys.executable, "-m", "kvlab", "run", str(experiment_file),
                           "--build", str(build), "--out", str(out)],
                          capture_output=True, text=True, env=python_env(), timeout=120)


def run_ok(experiment_file: Path, build: Path, out: Path) -> Path:
    """`kvlab run` that must succeed; its run folder, the only one in `out`."""
    done = run_cli(experiment_file, build, out)
    assert done.returncode == 0, done.stderr
    (run_dir,) = Path(out).glob("*")
    return run_dir


def test_a_tiny_experiment_writes_a_complete_run_folder(build_dir, tmp_path):
    kvlab_binaries_or_fail(build_dir)
    experiment = tmp_path / "tiny.toml"
    experiment.write_text(TINY)
    done = run_cli(experiment, build_dir, tmp_path / "runs")
    assert done.returncode == 0, done.stderr
    (run_dir,) = (tmp_path / "runs").glob("*-tiny")
    points = load_points(run_dir)
    # round 1 measures both points, round 2 the one with two repetitions
    assert list(points["repetition"]) == [1, 1, 2]
    assert list(points["command"]) == ["get", "incrby", "get"]
    assert list(points["keys"]) == [100, 1, 100]
    assert set(points["status"]) == {"ok"} and set(points["server"]) == {"concurrent"}
    assert (points["ops"] > 0).all() and (points["errors"] == 0).all()
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["experiment_text"] == TINY and meta["finished_utc"]
    assert meta["machine"]["cores"] >= 1 and "redis-server" in meta["machine"]["packages"]
    histogram = json.loads(next((run_dir / "histograms").glob("*.json")).read_text())
    assert histogram  # kvlab-load's JSON, kept as written
    # One round's merged histogram gives kvlab-load's own percentiles back.
    for _, row in points.iterrows():
        merged = merged_percentiles(run_dir, [row["histogram"]])
        for column in ("p50_us", "p99_us", "max_us"):
            assert merged[column] == pytest.approx(row[column], rel=1e-3, abs=0.01), column
    report = (run_dir / "report.md").read_text()
    assert report in done.stdout  # printed at the end, too
    assert "| GET | concurrent |" in report
    assert (run_dir / "plots" / "p4-throughput.png").stat().st_size > 0
    assert "[1/3 33%] concurrent p4 kvlab-load tcp dedicated get" in done.stderr


def test_redis_benchmark_points_record_its_figures_and_leave_the_rest_blank(tmp_path,
                                                                          load_only_build):
    experiment = tmp_path / "rb.toml"
    experiment.write_text(experiment_head("rb") + """
[[sweep]]
name = "rb"
loadgen = "redis-benchmark"
command = ["set", "get"]
keys = 50
pipeline = 2
connections = 2
threads = 1
duration = 0.3
repetitions = 2
""")
    run_dir = run_ok(experiment, load_only_build, tmp_path / "runs")
    points = load_points(run_dir)
    assert list(points["command"]) == ["set", "get", "set", "get"]  # each round runs both
    assert list(points["repetition"]) == [1, 1, 2, 2]
    assert set(points["status"]) == {"ok"} and (points["ops_per_s"] > 0).all()
    assert points["p50_us"].notna().all() and points["p99_us"].notna().all()
    # redis-benchmark does not report these: blank, never made up
    assert points["p90_us"].isna().all() and points["p999_us"].isna().all()
    assert points["errors"].isna().all()
    # measured around it by kvlab-load like its own runs: redis answers INFO cpu
    assert (points["server_cpu"] > 0).all() and (points["server_cpu_us_per_op"] > 0).all()


def test_failed_servers_and_an_unavailable_link_are_reported_and_the_run_goes_on(
        tmp_path, load_only_build):
    text = """
[experiment]
name = "faults"
disturbance_cores = 64
[[server]]
name = "unbuilt"
kind = "kvlab"
engine = "single"
[[server]]
name = "redis"
kind = "redis"
[[sweep]]
name = "rb"
loadgen = "redis-benchmark"
transport = ["tcp", "remote"]
command = "set"
keys = 10
threads = 1
duration = 0.2
repetitions = 1
"""
    experiment = parse_experiment_text(text, tmp_path / "faults.toml")
    # a repository without scripts/remote-link: the link cannot come up
    log = tmp_path / "log.txt"
    with log.open("w") as stream:
        runner = Runner(_plan(experiment), tmp_path, load_only_build, tmp_path / "runs", stream)
        run_dir = runner.run()
    points = load_points(run_dir).set_index(["server", "transport"])
    assert points.loc[("unbuilt", "tcp"), "status"] == "failed"
    assert "kvlab-server not found" in points.loc[("unbuilt", "tcp"), "note"]
    assert points.loc[("redis", "tcp"), "status"] == "ok"
    for server in ("unbuilt", "redis"):
        assert points.loc[(server, "remote"), "status"] == "skipped"
        assert "remote link unavailable" in points.loc[(server, "remote"), "note"]
    assert "server unbuilt failed to start" in log.read_text()
    assert len(runner.problems) == 2


def test_points_are_on_disk_before_the_next_point_starts(tmp_path, load_only_build, monkeypatch):
    import kvlab.running.runner as runner_module
    experiment = parse_experiment_text(experiment_head("order") + """
[[sweep]]
name = "rb"
loadgen = "redis-benchmark"
command = "ping"
threads = [1, 2]
duration = 0.2
repetitions = 1
""", tmp_path / "order.toml")
    rows_on_disk = []
    real = runner_module.loadgens.run_kvlab_load

    def spy(point, *args, **kwargs):
        csv_files = list((tmp_path / "runs").glob("*/points.csv"))
        rows_on_disk.append(len(csv_files[0].read_text().splitlines()) - 1)
        return real(point, *args, **kwargs)

    monkeypatch.setattr(runner_module.loadgens, "run_kvlab_load", spy)
    with (tmp_path / "log.txt").open("w") as stream:
        Runner(_plan(experiment), REPO, load_only_build, tmp_path / "runs", stream).run()
    assert rows_on_disk == [0, 1]


def test_prefill_records_bytes_per_key_for_redis(build_dir, tmp_path):
    kvlab_binaries_or_fail(build_dir)
    experiment = tmp_path / "memory.toml"
    experiment.write_text(experiment_head("memory") + """
[[sweep]]
name = "fill"
command = "get"
keys = 20000
value_size = [16, 256]
threads = 1
duration = 0.1
warmup = 0.0
repetitions = 1
""")
    run_dir = run_ok(experiment, build_dir, tmp_path / "runs")
    import pandas as pd
    memory = pd.read_csv(run_dir / "memory.csv").set_index("value_size")
    assert list(memory["keys"]) == [20000, 20000]
    # A key with a 256-byte value costs at least 240 bytes more than one with 16 bytes.
    assert memory.loc[256, "used_memory_per_key"] - memory.loc[16, "used_memory_per_key"] >= 240
    assert memory.loc[16, "used_memory_per_key"] > 16
    assert "## Memory per key" in (run_dir / "report.md").read_text()


def test_container_fills_record_bytes_per_key_by_shape(build_dir, tmp_path):
    """A known answer: a hash of 10 fields of 64 bytes holds at least 640 bytes of values
    and costs more than the one 64-byte string; a list of 100 more than a hash of 10."""
    kvlab_binaries_or_fail(build_dir)
    experiment = tmp_path / "shapes.toml"
    sweep = """
[[sweep]]
name = "{name}"
command = "ping"
value_shape = "{shape}"
keys = 10000
value_size = 64
threads = 1
duration = 0.05
warmup = 0.0
repetitions = 1
"""
    experiment.write_text(experiment_head("shapes", ("redis", "single")) + """
[[sweep]]
name = "strings"
command = "get"
keys = 10000
value_size = 64
threads = 1
duration = 0.05
warmup = 0.0
repetitions = 1
""" + sweep.format(name="hash", shape="hash:10") + sweep.format(name="list", shape="list:100"))
    done = run_cli(experiment, build_dir, tmp_path / "runs")
    (run_dir,) = (tmp_path / "runs").glob("*-shapes")
    import pandas as pd
    memory = pd.read_csv(run_dir / "memory.csv")
    text = (run_dir / "report.md").read_text()
    for server in ("redis", "single"):
        mine = memory[memory["server"] == server].set_index("shape")["used_memory_per_key"]
        assert mine["hash:10"] >= 640 and mine["hash:10"] > mine["string"], (server, mine)
        assert mine["list:100"] > mine["hash:10"], (server, mine)
    assert "| 10,000 | hash: 10 fields of 64 B | single |" in text
    assert done.returncode == 0, done.stderr


def test_a_latency_curve_runs_open_loop_at_fractions_of_the_closed_loop_maximum(build_dir,
                                                                                tmp_path):
    kvlab_binaries_or_fail(build_dir)
    experiment = tmp_path / "curve.toml"
    experiment.write_text(experiment_head("curve") + """
[[sweep]]
name = "p1"
command = "get"
keys = 100
connections = 2
threads = 1
transport = "unix"
duration = 0.2
warmup = 0.05
repetitions = 2
latency_curve = [0.2, 0.5]
latency_slo_us = 100000
""")
    run_dir = run_ok(experiment, build_dir, tmp_path / "runs")
    from kvlab.measures.latency_curves import load_curve_rows
    rows = load_curve_rows(run_dir / "latency.csv")
    points = load_points(run_dir)
    maximum = sorted(points["ops_per_s"])[len(points) // 2 - 1:len(points) // 2 + 1]
    assert [r["fraction"] for r in rows] == [0.2, 0.5]
    assert rows[0]["closed_loop_max"] == pytest.approx(sum(maximum) / 2, rel=1e-6)
    for row in rows:
        assert row["offered_rate"] == pytest.approx(row["fraction"] * row["closed_loop_max"],
                                                    rel=0.01)
        assert row["requests"] > 0 and row["p50_us"] <= row["p99_us"] <= row["max_us"]
    report = (run_dir / "report.md").read_text()
    assert "## Latency versus load (open loop)" in report
    assert (run_dir / "plots" / "p1-get-latency-curve.png").stat().st_size > 0


def test_system_calls_per_operation_are_counted_for_every_server(build_dir, tmp_path):
    kvlab_binaries_or_fail(build_dir)
    experiment = tmp_path / "calls.toml"
    experiment.write_text(experiment_head("calls", ("redis", "single")) + """
[[sweep]]
name = "rb"
loadgen = "redis-benchmark"
command = "set"
keys = 100
pipeline = [1, 16]
connections = 4
threads = 1
duration = 0.2
repetitions = 1
syscalls = true
""")
    run_dir = run_ok(experiment, build_dir, tmp_path / "runs")
    import pandas as pd
    counts = pd.read_csv(run_dir / "syscalls.csv").set_index(["server", "pipeline"])
    assert len(counts) == 4 and (counts["operations"] == 50_000).all()
    assert (counts["method"] == "perf").all()  # the tracepoints, not the slowing strace
    for server in ("redis", "single"):
        # At P1 every request needs at least a read and a write of its own; a pipeline of
        # 16 shares them: fewer calls per operation.
        assert counts.loc[(server, 1), "syscalls_per_op"] >= 1.5
        assert counts.loc[(server, 16), "syscalls_per_op"] < counts.loc[(server, 1),
                                                                        "syscalls_per_op"]
    assert "## System calls per operation" in (run_dir / "report.md").read_text()
