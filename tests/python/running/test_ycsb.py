"""YCSB in the analysis package: experiment files naming ycsb:W, what a YCSB point needs
filled first, workloads/ycsb.toml, the report's YCSB section and plots/ycsb.png on
synthetic runs (the figures chosen here, so every cell the tests expect follows from them),
and a tiny run against redis-server through `python3 -m kvlab run`."""

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from conftest import BUILD_DIR, REPO, experiment_head, kvlab_binaries_or_fail, python_env
from kvlab.measures.declared_ratios import point_label
from kvlab.rendering.plots_ycsb import write_ycsb_plot
from kvlab.rendering.report import point_table, render_report
from kvlab.rendering.report_ycsb import ycsb_section
from kvlab.running import loadgens
from kvlab.running.experiment import ExperimentError, load_experiment, parse_experiment_text
from kvlab.schema.specs import fill_of, is_ycsb
from kvlab.running.results import load_points
from synthetic_runs import point_row, ratio_row, write_run

WORKLOADS = ("load", "A", "B", "C", "D", "E", "F")


def _parse(text: str):
    return parse_experiment_text(text, Path("ycsb-test.toml"))


def _experiment(sweep: str) -> str:
    return f"""
[experiment]
name = "y"
[[server]]
name = "redis"
kind = "redis"
[[sweep]]
name = "ycsb"
{sweep}
"""


def test_sweeps_accept_every_ycsb_workload_and_refuse_others():
    experiment = _parse(_experiment(
        'command = ["ycsb:load", "ycsb:A", "ycsb:B", "ycsb:C", "ycsb:D", "ycsb:E", "ycsb:F"]\n'
        'key_dist = ["zipf:0.99", "uniform"]\nvalue_size = 100'))
    commands = {p.command for p in experiment.points()}
    assert commands == {f"ycsb:{w}" for w in WORKLOADS}
    for bad in ("ycsb:G", "ycsb:a", "ycsb", "ycsb:"):
        with pytest.raises(ExperimentError, match="ycsb:W"):
            _parse(_experiment(f'command = "{bad}"'))
    with pytest.raises(ExperimentError, match="YCSB draws its own keys"):
        _parse(_experiment('command = "ycsb:A"\nkey_dist = "sequential"'))
    with pytest.raises(ExperimentError, match="redis-benchmark"):
        _parse(_experiment('command = "ycsb:A"\nloadgen = "redis-benchmark"'))


def test_what_each_command_needs_filled_first():
    assert fill_of("get") == fill_of("mix") == "strings"
    for workload in "ABCDEF":
        assert fill_of(f"ycsb:{workload}") == "ycsb"
        assert is_ycsb(f"ycsb:{workload}")
    # The load phase writes its own records; SET and INCRBY need nothing loaded.
    assert fill_of("ycsb:load") is None and is_ycsb("ycsb:load")
    assert fill_of("set") is None and fill_of("incrby") is None and not is_ycsb("set")


def test_a_ycsb_point_reaches_kvlab_load_as_its_command():
    experiment = _parse(_experiment(
        'command = "ycsb:E"\nkeys = 5000\nkey_dist = "zipf:0.99"\nvalue_size = 100'))
    (point,) = experiment.points()
    arguments = loadgens.load_arguments(point, "tcp://127.0.0.1:1")
    assert arguments[arguments.index("--command") + 1] == "ycsb:E"
    assert arguments[arguments.index("--keys") + 1] == "5000"
    assert arguments[arguments.index("--key-dist") + 1] == "zipf:0.99"
    assert arguments[arguments.index("--value-size") + 1] == "100"


def test_the_ycsb_experiment_file_puts_every_engine_beside_redis_on_a_to_f():
    experiment = load_experiment(REPO / "workloads" / "ycsb.toml")
    engines = {s.engine for s in experiment.servers if s.kind == "kvlab"}
    # every engine the server has, read from it (a pinned list forgot owner)
    table = json.loads(subprocess.run([str(BUILD_DIR / "kvlab-server"), "--kinds"],
                                      capture_output=True, text=True, check=True).stdout)
    assert engines == {engine["name"] for engine in table["engines"]}
    assert [s.name for s in experiment.servers if s.kind == "redis"] == ["redis"]
    points = experiment.points()
    assert {p.command for p in points} == {f"ycsb:{w}" for w in WORKLOADS}
    assert {p.value_size for p in points} == {100} and {p.key_dist for p in points} == {"zipf:0.99"}
    assert len(points) == len(experiment.servers) * len(WORKLOADS)
    declared = {(c.a, c.b, c.metric) for c in experiment.comparisons}
    for server in experiment.servers:
        if server.kind == "kvlab":
            assert (server.name, "redis", "ops_per_s") in declared
            assert (server.name, "redis", "ops_per_server_cpu_s") in declared


# ---- the report section and the figure, on synthetic runs -------------------------------

SERVERS = {"single": {"kind": "kvlab"}, "concurrent": {"kind": "kvlab"},
           "redis": {"kind": "redis"}}
COMPARISONS = [
    {"name": "single/redis", "by": "server", "a": "single", "b": "redis", "metric": "ops_per_s"},
    {"name": "single/redis per server CPU", "by": "server", "a": "single", "b": "redis",
     "metric": "ops_per_server_cpu_s"},
]
# ops/s per (server, workload): single 1.2x redis on A; E two orders of magnitude fewer ops.
RATES = {"redis": {"A": 50000.0, "C": 60000.0, "E": 600.0},
         "single": {"A": 60000.0, "C": 60000.0, "E": 650.0},
         "concurrent": {"A": 40000.0, "C": 66000.0, "E": 500.0}}
YCSB_POINT = dict(sweep="ycsb", keys=100000, key_dist="zipf:0.99", value_size=100, pipeline=1,
                  connections=4, threads=4)
LATENCIES = dict(p50_us=50.0, p99_us=200.0, p999_us=400.0, max_us=1000.0)


def _ycsb_run(folder, ratios=()):
    rows = []
    for server, rates in RATES.items():
        for workload, rate in rates.items():
            for repetition, factor in enumerate((0.99, 1.0, 1.01)):
                rows.append(point_row(server=server, command=f"ycsb:{workload}",
                                      repetition=repetition + 1, ops_per_s=rate * factor,
                                      **YCSB_POINT))
    run = write_run(folder, rows, ratios=ratios, experiment="ycsb")
    # points.csv with the latency columns the report reads (synthetic_runs leaves them out).
    pd.DataFrame([{**row, **LATENCIES} for row in rows]).to_csv(run / "points.csv", index=False)
    meta = json.loads((run / "meta.json").read_text())
    meta.update(servers=SERVERS, comparisons=COMPARISONS)
    (run / "meta.json").write_text(json.dumps(meta))
    return run, meta


def _label(command: str, server: str = "single") -> str:
    return point_label({**YCSB_POINT, "transport": "tcp", "client": "dedicated", "io": "direct",
                        "nodelay": "on", "server": server, "command": command}, "server")


def test_the_section_tables_every_server_by_workload_and_sets_each_against_redis(tmp_path):
    declared = [ratio_row(comparison="single/redis", test="ycsb:A", point=_label("ycsb:A"),
                          ratio=1.2, half_width=0.02, rounds=12, status="resolved"),
                ratio_row(comparison="single/redis per server CPU", test="ycsb:A",
                          point=_label("ycsb:A"), ratio=1.1, half_width=0.01, rounds=12,
                          status="resolved")]
    run, meta = _ycsb_run(tmp_path / "run", declared)
    text = ycsb_section(point_table(load_points(run), run), run, meta)
    lines = text.splitlines()
    assert lines[0] == "## YCSB core workloads"
    header = next(line for line in lines if line.startswith("| workload | operations"))
    assert header.split(" | ")[3:] == ["single ops/s", "concurrent ops/s", "redis ops/s |"]
    row_a = next(line for line in lines if line.startswith("| A | 50% read, 50% update"))
    assert "60,000" in row_a and "50,000" in row_a and "40,000" in row_a
    assert any(line.startswith("| E | 95% scan") and "600" in line for line in lines)
    # Declared: the interval and its status; undeclared: the medians' ratio, said so.
    single_a = next(line for line in lines if line.startswith("| A | single |"))
    assert "1.200 [1.176, 1.224] resolved" in single_a
    assert "1.100 [1.089, 1.111] resolved" in single_a
    concurrent_a = next(line for line in lines if line.startswith("| A | concurrent |"))
    assert "0.80 (medians)" in concurrent_a
    concurrent_c = next(line for line in lines if line.startswith("| C | concurrent |"))
    assert "1.10 (medians)" in concurrent_c
    single_c = next(line for line in lines if line.startswith("| C | single |"))
    assert "~1.00 (medians)" in single_c   # equal medians, overlapping intervals
    # Per server CPU from the points' costs (server_cpu_us_per_op = 0.9 s / ops): 650/600.
    single_e = next(line for line in lines if line.startswith("| E | single |"))
    assert single_e.split(" | ")[2:4] == ["1.08 (medians)", "1.08 (medians)"]
    assert not any(line.startswith("| A | redis |") for line in lines)


def test_the_report_carries_the_section_only_for_runs_with_ycsb(tmp_path):
    run, _ = _ycsb_run(tmp_path / "ycsb")
    assert "## YCSB core workloads" in render_report(run)
    strings = write_run(tmp_path / "strings", [point_row(server="redis", command="set")])
    pd.DataFrame([{**point_row(server="redis", command="set"), **LATENCIES}]).to_csv(
        strings / "points.csv", index=False)
    assert "## YCSB" not in render_report(strings)
    assert ycsb_section(point_table(load_points(strings), strings), strings, {}) == ""


def test_the_figure_is_written_for_ycsb_runs_only(tmp_path):
    declared = [ratio_row(comparison="single/redis per server CPU", test="ycsb:A",
                          point=_label("ycsb:A"), ratio=1.1)]
    run, _ = _ycsb_run(tmp_path / "ycsb", declared)
    written = write_ycsb_plot(run)
    assert sorted(p.name for p in written) == ["ycsb.png", "ycsb.svg"]
    assert all(p.stat().st_size > 1000 for p in written)
    strings = write_run(tmp_path / "strings", [point_row(server="redis", command="set")])
    pd.DataFrame([{**point_row(server="redis", command="set"), **LATENCIES}]).to_csv(
        strings / "points.csv", index=False)
    assert write_ycsb_plot(strings) == []
    assert not (strings / "plots" / "ycsb.png").exists()


# ---- end to end against redis-server ----------------------------------------------------

@pytest.mark.timed
def test_a_tiny_ycsb_run_loads_the_records_once_and_reads_them(build_dir, tmp_path):
    kvlab_binaries_or_fail(build_dir)
    experiment = tmp_path / "ycsb.toml"
    experiment.write_text(experiment_head("ycsb-tiny", ("redis", "redis-b"),
                                          measurement="rounds") + """
[[sweep]]
name = "ycsb"
command = ["ycsb:load", "ycsb:C", "ycsb:D", "ycsb:E"]
keys = 12000
key_dist = "zipf:0.99"
value_size = 100
pipeline = 2
connections = 2
threads = 2
duration = 0.2
warmup = 0.05
repetitions = 2
[[compare]]
a = "redis-b"
b = "redis"
metric = "ops_per_server_cpu_s"
""")
    done = subprocess.run([sys.executable, "-m", "kvlab", "run", str(experiment), "--build",
                           str(build_dir), "--out", str(tmp_path / "runs")],
                          capture_output=True, text=True, env=python_env(), timeout=240)
    assert done.returncode == 0, done.stderr
    (run,) = (tmp_path / "runs").glob("*-ycsb-tiny")
    points = pd.read_csv(run / "points.csv")
    assert set(points["status"]) == {"ok"}
    assert (points["errors"] == 0).all()
    # The records were loaded before C, D and E: every read found its record.
    assert (points["misses"] == 0).all()
    assert (points["ops"] > 0).all()
    memory = pd.read_csv(run / "memory.csv")
    assert set(memory["keys"]) == {12001}  # the records and _indices
    assert memory["used_memory_per_key"].min() > 10 * 100  # ten 100-byte fields a record
    report = (run / "report.md").read_text()
    assert "## YCSB core workloads" in report
    assert "redis-b/redis per server CPU" in (run / "ratios.csv").read_text()
    assert (run / "plots" / "ycsb.png").exists()


@pytest.mark.timed
def test_an_alternating_run_loads_both_sides_and_alternates_a_ycsb_pair(build_dir, tmp_path):
    kvlab_binaries_or_fail(build_dir)
    import io
    from kvlab.running.cpus import this_machine
    from kvlab.running.plan import resolve
    from kvlab.running.runner import Runner
    experiment = _parse(experiment_head("ycsb-alternating", ("redis", "redis-b"), precision=0.5,
                                        max_rounds=2, min_rounds=2, alternation_s=0.4,
                                        slice_s=0.05) + """
[[sweep]]
name = "ycsb"
command = "ycsb:F"
keys = 5000
key_dist = "zipf:0.99"
value_size = 100
connections = 2
threads = 2
duration = 0.1
warmup = 0.05
repetitions = 1
[[compare]]
a = "redis-b"
b = "redis"
""")
    stream = io.StringIO()
    run = Runner(resolve(experiment, this_machine()), REPO, build_dir, tmp_path / "runs",
                 stream).run()
    ratios = pd.read_csv(run / "ratios.csv")
    row = ratios[ratios["comparison"] == "redis-b/redis"].iloc[0]
    assert row["test"] == "ycsb:F" and row["method"].startswith("alternation"), stream.getvalue()
    slices = pd.read_csv(run / "alternation.csv")
    mine = slices[slices["comparison"] == "redis-b/redis"]
    assert len(mine) == 2 * 8 and (mine["ops"] > 0).all()
    points = pd.read_csv(run / "points.csv")
    assert (points["misses"] == 0).all() and (points["errors"] == 0).all()
