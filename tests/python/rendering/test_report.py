"""report.md from a fixed small run (tests/python/fixtures/small-run)."""

import json
import math
import warnings

import pytest

from kvlab.rendering.report import point_table, render_report, write_report
from kvlab.rendering.run_plots import write_plots
from kvlab.running.results import load_points
from kvlab.measures.stats import summarize, t_quantile_975


def test_summary_is_median_with_a_t_interval_of_the_mean():
    s = summarize([50000, 55000, 60000])
    assert s.median == 55000 and s.n == 3
    half = t_quantile_975(2) * 5000 / math.sqrt(3)
    assert math.isclose(s.low, 55000 - half) and math.isclose(s.high, 55000 + half)
    single = summarize([7.0])
    assert single.n == 1 and math.isnan(single.low)
    assert summarize([]).n == 0


def test_an_interval_of_nonnegative_values_stops_at_zero() -> None:
    # Two rounds 1 M and 3 M ops/s: mean 2 M, half-width 12.706 x 1 M = 12.7 M.
    s = summarize([1e6, 3e6])
    assert s.low == 0.0
    assert abs(s.high - (2e6 + 12.706e6)) < 1.0
    # Values that can be negative keep the whole interval.
    assert summarize([-1.0, 1.0]).low < -1.0


def test_point_table_folds_repetitions_and_keeps_unmeasured_points(small_run):
    table = point_table(load_points(small_run))
    concurrent = table[(table["server"] == "concurrent") & (table["threads"] == 2)].iloc[0]
    assert concurrent["median"] == 151000 and concurrent["client_bound"]
    skipped = table[table["transport"] == "remote"]
    assert list(skipped["status"]) == ["skipped", "skipped"] and list(skipped["n"]) == [0, 0]


def test_ember_table_shows_ours_beside_the_seed_with_ratios(small_run):
    report = render_report(small_run)
    assert "| SET | concurrent | 110,000 ±22.6% | 151,000 ±1.6%† | 1,867,045 (T=8) [seed: 8 vCPU server; here 1] |" in report
    assert "| SET | sharded-hop-command | 55,000 ±22.6% | 71,000 ±3.5% | 896,276 (T=8) [seed: 8 vCPU server; here 1] |" in report
    # concurrent/sharded: medians 110k/55k and 151k/71k, seed 1867045/896276 and PR summary
    assert "| SET | concurrent / sharded-hop-command | 2.00 | 2.13 | 2.08 (PR summary 1.13) [seed: 8 vCPU server; here 1] |" in report
    assert "| SET | concurrent / redis | 1.36 | 1.66 | 1.82 [seed: 8 vCPU server; here 1] |" in report


def test_lettuce_table_has_seed_numbers_ratios_and_skipped_rows(small_run):
    report = render_report(small_run)
    assert "| 1 | pooled | 31,000 ±8.0% [35,390] | 30,000 ±82.8% [32,076] | skipped [3,883] |" in report
    # tcp: shared 30,000 vs pooled 30,000 with overlapping intervals -> "~"
    assert "| 1 | 1.18 [1.11] | ~1.00 [1.07] | – [1.01] |" in report
    assert "| skipped | 2 | redis | remote link unavailable: not root |" in report


def test_report_has_the_machine_header_and_client_bound_marks(small_run):
    report = render_report(small_run)
    assert "- CPU: Test CPU, 2 cores; kernel 6.1.0-test" in report
    assert "- server CPUs: 0 (1 CPUs); load generator CPUs: 1" in report
    assert "151,000†" in report and "† client-bound" in report


def test_write_report_and_plots_create_files(small_run):
    assert write_report(small_run).read_text().startswith("# kvlab run: small")
    written = write_plots(small_run)
    names = {p.name for p in written}
    assert {"p16-throughput.png", "p16-throughput.svg", "lettuce-latency.svg"} <= names
    assert all(p.stat().st_size > 1000 for p in written)


def test_both_instruments_stand_side_by_side_on_the_same_point(small_run):
    report = render_report(small_run)
    assert "| redis | tcp | SET | 1 | 16 | 50 | 1 | 81,000 | 90,000 | 1.00 | 0.90 |" in report


def test_points_with_error_replies_are_marked(small_run):
    points = small_run / "points.csv"
    lines = points.read_text().splitlines()
    header = lines[0].split(",")
    first = lines[1].split(",")
    first[header.index("errors")] = "17"
    points.write_text("\n".join([lines[0], ",".join(first)] + lines[2:]) + "\n")
    report = render_report(small_run)
    assert "| SET | sharded-hop-command | 55,000 ±22.6% ‼ | 71,000 ±3.5% |" in report
    assert "| 101.0 | 201.0 | 400.0 | 17 | 0.50 | 0.90 |" in report


def test_disturbed_measurements_are_called_out_in_the_header(small_run):
    import pandas as pd
    points = pd.read_csv(small_run / "points.csv", dtype=str, keep_default_na=False)
    points["foreign_cpu"] = "0.010"
    points.loc[0, ["status", "foreign_cpu"]] = ["disturbed", "0.400"]
    points.to_csv(small_run / "points.csv", index=False)
    measured = int(points["status"].isin(["ok", "disturbed"]).sum())
    report = render_report(small_run)
    assert (f"- disturbance: 1 of {measured} measurements had other work on the measured "
            "CPUs above the threshold and were run again; foreign CPU median 0.010 cores, "
            "worst 0.40") in report


@pytest.mark.parametrize("idle,cost,said", [
    ({"held": True}, {"wake_cost_us": 0.6354, "windows": 3},
     "; idle CPUs polled (held for the run); 0.64 µs charged to each sleep of ours"),
    ({"held": False, "why": "/dev/cpu_dma_latency: Permission denied"},
     {"wake_cost_us": 0, "windows": 0},
     "; idle CPUs free to halt (/dev/cpu_dma_latency: Permission denied); the wake-up cost "
     "was not measured"),
])
def test_the_header_says_how_idle_cpus_waited_and_what_sleeps_were_charged(small_run, idle,
                                                                            cost, said):
    import pandas as pd
    points = pd.read_csv(small_run / "points.csv", dtype=str, keep_default_na=False)
    points["foreign_cpu"] = "0.010"
    points.to_csv(small_run / "points.csv", index=False)
    meta_path = small_run / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta.update(cpu_idle=idle, wake_cost=cost)
    meta_path.write_text(json.dumps(meta))
    assert said in render_report(small_run)


def test_the_report_leads_with_the_declared_comparisons(small_run):
    meta_path = small_run / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta.update(precision=0.02, comparisons=[{"name": "concurrent/redis", "seed_ratio": 1.82}],
                rounds={"stopped": {"local": "every declared ratio met ±2.0%"}})
    meta_path.write_text(json.dumps(meta))
    (small_run / "ratios.csv").write_text(
        "comparison,test,point,ratio,low,high,rounds,status\n"
        "concurrent/redis,set,p16: tcp dedicated P16 T1 keys=1,1.1,1.08,1.12,5,resolved\n"
        "concurrent/redis,get,p16: tcp dedicated P16 T1 keys=1,1.0,0.8,1.25,40,inconclusive\n")
    report = render_report(small_run)
    assert report.index("## Declared comparisons") < report.index("## Seed 1")
    assert "Target half-width ±2.0%. Rounds stopped: local: every declared ratio met ±2.0%." \
        in report
    assert ("| concurrent/redis | SET | p16: tcp dedicated P16 T1 keys=1 | "
            "1.100 [1.080, 1.120] ±1.8% | 5 | resolved | 1.82 |") in report
    assert "| 1.000 [0.800, 1.250] ±25.0% | 40 | inconclusive |" in report
    assert "1 of 2 declared ratios did not reach the target" in report


def test_lettuce_tables_split_by_io_model_with_switches_and_the_measured_rtt(small_run):
    import pandas as pd
    points = pd.read_csv(small_run / "points.csv", dtype=str, keep_default_na=False)
    lettuce = points[points["sweep"] == "lettuce"].copy()
    lettuce["io"] = "event-loop"
    lettuce["client_cs_per_op"] = "3.25"
    lettuce.loc[lettuce["transport"] == "remote", ["status", "ops_per_s"]] = ["ok", "4000"]
    points["io"] = "direct"
    points["client_cs_per_op"] = "1.00"
    pd.concat([points, lettuce]).to_csv(small_run / "points.csv", index=False)
    meta_path = small_run / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["remote_link"] = {"configured_rtt_us": 250, "measured_p50_us": 251.0,
                           "measured_p99_us": 300.0, "base_p50_us": 40.0}
    meta_path.write_text(json.dumps(meta))
    report = render_report(small_run)
    assert "### redis, kvlab-load, incrby, io=direct" in report
    assert "### redis, kvlab-load, incrby, io=event-loop" in report
    assert "| remote (251 µs measured) |" in report
    assert "31,000 ±8.0% cs 1.00 [35,390]" in report
    # 4,000 ops/s over a 251 µs round trip: about one request in flight
    assert "4,000 ±0.0% cs 3.25 ×RTT 1.00 [3,883]" in report
    assert "measured p50 251 µs, p99 300 µs, base (no delay) p50 40 µs" in report


def test_memory_table_leaves_out_key_spaces_too_small_for_a_per_key_figure(tmp_path):
    from kvlab.rendering.report_memory import memory_section
    (tmp_path / "memory.csv").write_text(
        "server,round,keys,value_size,used_memory_per_key,rss_per_key\n"
        "a,1,1,64,2893072,34734080\n"
        "redis,1,1,64,74424,6905856\n"
        "a,1,1000000,64,140,\n"
        "redis,1,1000000,64,152,\n")
    meta = {"servers": {"a": {"kind": "kvlab"}, "redis": {"kind": "redis"}}}
    text = memory_section(tmp_path, meta)
    assert "| 1,000,000 | 64 B | a | 140 | – | 0.92 | 1 |" in text
    assert "2,893,072" not in text
    assert "under 10,000 keys (1) are left out" in text


def test_memory_table_has_a_row_per_container_shape_beside_redis(tmp_path):
    from kvlab.rendering.report_memory import memory_section
    (tmp_path / "memory.csv").write_text(
        "server,transport,round,keys,value_size,used_memory_per_key,rss_per_key,shape\n"
        "a,tcp,1,20000,16,400,,hash:10\n"
        "redis,tcp,1,20000,16,200,,hash:10\n"
        "a,tcp,1,20000,16,3000,,list:100\n"
        "redis,tcp,1,20000,16,2000,,list:100\n"
        "a,tcp,1,1000000,64,140,,string\n"
        "redis,tcp,1,1000000,64,152,,string\n")
    meta = {"servers": {"a": {"kind": "kvlab"}, "redis": {"kind": "redis"}}}
    text = memory_section(tmp_path, meta)
    assert "| 20,000 | hash: 10 fields of 16 B | a | 400 | – | 2.00 | 1 |" in text
    assert "| 20,000 | list: 100 elements of 16 B | a | 3,000 | – | 1.50 | 1 |" in text
    assert "| 1,000,000 | 64 B | redis | 152 | – | 1.00 | 1 |" in text


def test_columns_no_round_measured_fold_to_blank_without_numpy_warnings(small_run):
    """A cost column `n/a` in every round and a percentile blank in every round (what
    redis-benchmark and command rows leave) fold to NaN, and rendering says nothing on
    stderr: make bench used to print dozens of "Mean of empty slice" warnings."""
    points = small_run / "points.csv"
    text = points.read_text().splitlines()
    header = text[0].split(",")
    header.append("server_ctx_switches_per_op")
    rows = [line.split(",") + ["n/a"] for line in text[1:]]
    p999 = header.index("p999_us")
    for row in rows:
        row[p999] = ""
    points.write_text("\n".join(",".join(r) for r in [header] + rows) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        table = point_table(load_points(small_run), small_run)
        render_report(small_run)
    assert table["server_ctx_switches_per_op"].isna().all()
    assert table["p999_us"].isna().all()
