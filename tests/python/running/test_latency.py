"""Latency versus load: rates at fractions of the maximum, kvlab-load command lines,
curve rows from kvlab-load's JSON (merged histograms), latency-capped throughput, and
the plot (rendering/plots_latency.py)."""

import math
import statistics
import subprocess
import time
from pathlib import Path

import pytest

from conftest import BUILD_DIR, kvlab_binaries_or_fail
from kvlab.schema.specs import Point
from kvlab.rendering.plots_latency import write_latency_curve
from kvlab.measures.latency_curves import latency_capped_throughput, load_curve_rows
from kvlab.running.latency import (DEFAULT_FRACTIONS, append_curve_rows, closed_loop_maximum,
                                   curve_row, measure_curve, open_loop_commands, open_loop_rates)


def point(**overrides) -> Point:
    values = dict(sweep="latency", server="redis", loadgen="kvlab-load", transport="unix",
                  client="dedicated", io="direct", command="get", ratio="1:10", keys=1000,
                  key_dist="uniform", value_size=64, pipeline=1, connections=4,
                  nodelay="on", threads=1, duration=0.3, warmup=0.1, repetitions=2)
    values.update(overrides)
    return Point(**values)


def row(server, achieved, p99, behind=False, fraction=0.5):
    return {"server": server, "fraction": fraction, "closed_loop_max": 100000.0,
            "offered_rate": achieved, "achieved_rate": achieved, "p50_us": p99 / 3,
            "p90_us": p99 / 2, "p99_us": p99, "p999_us": p99 * 2, "max_us": p99 * 4,
            "behind": behind, "backlog": 0, "requests": 1000}


def test_rates_are_the_fractions_of_the_closed_loop_maximum():
    rates = open_loop_rates(200000, DEFAULT_FRACTIONS)
    assert rates == [(0.1, 20000), (0.25, 50000), (0.5, 100000), (0.75, 150000),
                     (0.9, 180000), (0.95, 190000)]
    with pytest.raises(ValueError, match="closed-loop maximum"):
        open_loop_rates(0)
    with pytest.raises(ValueError, match="fractions"):
        open_loop_rates(1000, [0.5, 1.5])


def test_closed_loop_maximum_is_the_median_repetition():
    assert closed_loop_maximum([{"ops_per_s": "300"}, {"ops_per_s": "100"}, {"ops_per_s": "200"},
                                {"ops_per_s": ""}]) == 200
    with pytest.raises(ValueError):
        closed_loop_maximum([{"ops_per_s": ""}])


def test_commands_run_the_point_open_loop_at_each_rate(tmp_path):
    runs = open_loop_commands(point(), Path("/b/kvlab-load"), "unix:///tmp/s.sock", 40000,
                              tmp_path, fractions=[0.25, 0.5], arrival="poisson")
    assert [r["rate"] for r in runs] == [10000, 20000]
    argv = runs[1]["argv"]
    assert argv[argv.index("--rate") + 1] == "20000"
    assert argv[argv.index("--arrival") + 1] == "poisson"
    assert argv[argv.index("--json") + 1] == str(runs[1]["json"])
    assert "--prefill" not in argv  # the closed-loop point before it filled the keys


def test_capped_throughput_is_the_highest_load_under_the_slo_not_behind():
    rows = [row("redis", 10000, 120), row("redis", 50000, 400), row("redis", 90000, 2500),
            row("single", 20000, 300), row("single", 80000, 900, behind=True),
            row("slow", 5000, 1500)]
    capped = latency_capped_throughput(rows, slo_us=1000)
    assert capped["redis"]["capped"] == 50000
    assert capped["single"]["capped"] == 20000  # the 80k row fell behind its schedule
    assert capped["slow"]["capped"] is None      # never under the SLO
    assert capped["redis"]["closed_loop_max"] == 100000.0
    assert latency_capped_throughput(rows, slo_us=3000)["redis"]["capped"] == 90000


def test_capped_throughput_has_the_range_its_p99_intervals_allow():
    rows = [dict(row("redis", 10000, 300), p99_low=200, p99_high=500),
            dict(row("redis", 50000, 800), p99_low=600, p99_high=1400),
            dict(row("redis", 90000, 1500), p99_low=900, p99_high=2500),
            row("single", 20000, 300)]  # one repetition: no interval
    capped = latency_capped_throughput(rows, slo_us=1000)
    assert capped["redis"]["capped"] == 50000
    assert capped["redis"]["capped_low"] == 10000   # the 50k row's interval reaches past 1 ms
    assert capped["redis"]["capped_high"] == 90000  # the 90k row's reaches under it
    assert capped["single"]["capped_low"] == capped["single"]["capped_high"] == 20000


def test_curve_row_takes_percentiles_from_the_merged_histogram():
    document = {"config": {"rate": 5000.0}, "points": [{
        "repetitions": [
            {"ops": 1000, "errors": 0, "seconds": 0.5, "behind": False, "backlog": 3, "p99_us": 10},
            {"ops": 900, "errors": 100, "seconds": 0.5, "behind": True, "backlog": 7, "p99_us": 10}],
        "merged": {"p50_us": 50.0, "p90_us": 80.0, "p99_us": 900.0, "p999_us": 1200.0,
                   "max_us": 1500.0, "histogram": {"count": 1900}}}]}
    result = curve_row("redis", 0.5, 10000, document)
    assert result["p99_us"] == 900.0  # not the repetitions' 10
    assert result["achieved_rate"] == 2000
    assert result["behind"] is True and result["backlog"] == 10 and result["requests"] == 1900


def test_curve_row_carries_the_repetitions_intervals():
    repetitions = [{"ops": ops, "errors": 0, "seconds": 1.0, "behind": False, "backlog": 0,
                    "p50_us": p50, "p99_us": p99, "p999_us": 2 * p99, "client_bound": bound}
                   for ops, p50, p99, bound in ((1000, 40, 200, False), (1100, 50, 400, True),
                                                (900, 60, 300, False))]
    document = {"config": {"rate": 1000.0}, "points": [{
        "repetitions": repetitions,
        "merged": {"p50_us": 50.0, "p90_us": 80.0, "p99_us": 390.0, "p999_us": 800.0,
                   "max_us": 900.0, "histogram": {"count": 3000}}}]}
    result = curve_row("redis", 0.5, 2000, document)
    # Throughput: Student's t over the rates 1000, 1100, 900 (sd 100, t(2) = 4.303).
    half = 4.303 * 100 / math.sqrt(3)
    assert result["achieved_low"] == pytest.approx(1000 - half)
    assert result["achieved_high"] == pytest.approx(1000 + half)
    # Latency: the same on the logs, so the interval is the geometric mean's, above zero.
    logs = [math.log(v) for v in (200, 400, 300)]
    centre, spread = statistics.fmean(logs), statistics.stdev(logs)
    assert result["p99_low"] == pytest.approx(math.exp(centre - 4.303 * spread / math.sqrt(3)))
    assert result["p99_high"] == pytest.approx(math.exp(centre + 4.303 * spread / math.sqrt(3)))
    assert 0 < result["p50_low"] < 50 < result["p50_high"]
    assert result["client_bound"] is True and result["repetitions"] == 3
    # One repetition: no interval, not a zero-width one.
    document["points"][0]["repetitions"] = repetitions[:1]
    single = curve_row("redis", 0.5, 2000, document)
    assert math.isnan(single["p99_low"]) and math.isnan(single["achieved_high"])


def test_latency_csv_round_trips_the_new_columns_and_reads_old_files(tmp_path):
    path = tmp_path / "latency.csv"
    rows = [dict(row("redis", 10000, 120), client_bound=True, histogram="latency/x.json",
                 repetitions=3, achieved_low=9900.0, achieved_high=10100.0, p99_low=100.0,
                 p99_high=150.0)]
    append_curve_rows(path, point(), rows)
    (back,) = load_curve_rows(path)
    assert back["client_bound"] is True and back["histogram"] == "latency/x.json"
    assert back["p99_low"] == 100.0 and math.isnan(back["p50_low"])
    # A latency.csv written before these columns existed still loads.
    old = tmp_path / "old.csv"
    old.write_text("sweep,command,transport,client,pipeline,threads,latency_slo_us,server,"
                   "fraction,closed_loop_max,offered_rate,achieved_rate,p50_us,p90_us,p99_us,"
                   "p999_us,max_us,behind,backlog,requests\n"
                   "s,get,unix,dedicated,1,1,1000,redis,0.5,100,50,50,1,2,3,4,5,False,0,10\n")
    (back,) = load_curve_rows(old)
    assert back["client_bound"] is False and back["histogram"] == ""
    assert math.isnan(back["p99_high"]) and math.isnan(back["repetitions"])


def test_plot_writes_a_figure(tmp_path):
    rows = [row("redis", 10000, 120, fraction=0.1), row("redis", 50000, 400),
            row("single", 20000, 300, fraction=0.1), row("single", 60000, 5000, behind=True)]
    path = write_latency_curve(rows, tmp_path / "curve.png")
    assert path.stat().st_size > 1000


@pytest.mark.timed
def test_a_real_open_loop_run_gives_a_curve_row(tmp_path):
    kvlab_binaries_or_fail(BUILD_DIR)
    socket = tmp_path / "redis.sock"
    server = subprocess.Popen(["redis-server", "--port", "0", "--unixsocket", str(socket),
                               "--save", "", "--appendonly", "no"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(500):
            if socket.exists():
                break
            time.sleep(0.01)
        rows, problems = measure_curve(point(command="set"), 4000, BUILD_DIR,
                                       f"unix://{socket}", tmp_path, fractions=[0.5])
    finally:
        server.terminate()
        server.wait()
    assert problems == []
    (result,) = rows
    assert result["offered_rate"] == 2000
    # 2000 ops/s of SET on an idle redis: achieved within 10% of offered.
    assert result["achieved_rate"] == pytest.approx(2000, rel=0.1)
    assert 0 < result["p50_us"] <= result["p99_us"] <= result["max_us"]
    assert result["requests"] >= 0.5 * 2000 * 0.3 * 2
    # The row names its kvlab-load file from the run folder (tmp_path's parent here).
    assert result["histogram"] == f"{tmp_path.name}/{Path(result['histogram']).name}"
    assert (tmp_path.parent / result["histogram"]).is_file()
    assert result["p99_low"] <= result["p99_high"]
