"""Where a request's time goes (report_stages.py, plots_stages.py) on a synthetic run whose
INFO stages figures are written here, so every number the report states follows from them:
sharded-hop-command's queue + return is exactly 20 µs, concurrent serves 4× its throughput
at a 100 µs round trip (so 300 µs longer a request on sharded), single 1.1× at 200 µs (20
µs longer: the crossings are all of it); striped has too few samples and redis-server has
no INFO stages, only its own INFO commandstats (1.0, 1.5, 9.0 µs per call over the rounds:
median 1.5). kvlab-server's threads: sharded-hop-command's I/O threads busy 50, 60, 70% of
the rounds (median 60%), its shard threads 20%, 4.0, 4.5, 3.5 busy µs per op (median 4.0);
the inline engines' I/O threads 90%, 0.60 µs per op, no shard threads; redis none."""

import json
import math

import pandas as pd
import pytest

from kvlab.rendering import palette
from kvlab.rendering.plots_stages import pairs_figure
from kvlab.rendering.report import point_table, render_report
from kvlab.rendering.report_stages import (BUSY_COLUMNS, CLIENT_PHASES, MIN_SAMPLES,
                                           OWN_ACCOUNT_ONLY, STAGES, client_figures,
                                           commandstats_figures, comparison_pairs,
                                           stage_figures)
from kvlab.rendering.run_plots import write_plots
from kvlab.running.results import load_meta, load_points

SERVERS = {"concurrent": {"kind": "kvlab", "engine": "concurrent"},
           "sharded-hop-command": {"kind": "kvlab", "engine": "sharded", "hop": "command"},
           "single": {"kind": "kvlab", "engine": "single"},
           "striped": {"kind": "kvlab", "engine": "striped"},
           "redis": {"kind": "redis"}}
# Per server: ops/s, client mean round trip µs, samples per round, stage -> µs per round
# (three rounds; a stage absent from the engine is left blank).
HOP = {"read": 10, "parse": 1, "dispatch": 2, "queue": 12.5, "execute": 3, "return": 7.5,
       "render": 1, "write": 5}
INLINE = {"read": (19, 20, 30), "parse": 1, "dispatch": 2, "execute": 10, "render": 1,
          "write": 6}
FIGURES = {"sharded-hop-command": (100000.0, 1000.0, 30, HOP),
           "concurrent": (400000.0, 100.0, 300, INLINE),
           "single": (110000.0, 200.0, 100, INLINE),
           "striped": (300000.0, 150.0, 5, INLINE),
           "redis": (90000.0, 1100.0, None, {})}
# redis-server's INFO commandstats per round (kvlab-load's server_calls, server_usec_per_call).
OWN_CALLS = (90000, 90000, 45000)
OWN_USEC = (1.0, 1.5, 9.0)
# kvlab-load's phases per server (µs per op, every round); sharded's and redis's were
# measured by a strategy without phases (blank).
CLIENT_US = {"concurrent": (0.25, 0.5, 1.0, 0.75), "single": (0.1, 0.2, 1.5, 0.2),
             "striped": (0.3, 0.3, 0.3, 0.1)}
# kvlab-server's thread busy figures per round: I/O share, shard share, busy µs per op.
HOP_BUSY = ((0.5, 0.6, 0.7), (0.2, 0.2, 0.2), (4.0, 4.5, 3.5))
INLINE_BUSY = ((0.9,) * 3, ("",) * 3, (0.6,) * 3)
COMPARISONS = [("concurrent/sharded", "concurrent", "sharded-hop-command"),
               ("single/redis", "single", "redis"),
               ("striped/concurrent", "striped", "concurrent")]


def _row(server: str, repetition: int) -> dict:
    ops, mean_us, samples, stages = FIGURES[server]
    row = {"sweep": "p16", "server": server, "loadgen": "kvlab-load", "transport": "tcp",
           "client": "dedicated", "io": "direct", "command": "set", "ratio": "",
           "keys": 1000000, "key_dist": "uniform", "value_size": 64, "pipeline": 16,
           "connections": 50, "nodelay": "on", "threads": 8, "repetition": repetition,
           "ops": int(ops), "seconds": 1.0, "ops_per_s": ops, "errors": 0, "p50_us": 90.0,
           "p90_us": 95.0, "p99_us": 120.0, "p999_us": 150.0, "max_us": 300.0,
           "mean_us": mean_us, "client_cpu": 0.5, "client_bound": "false",
           "server_cpu": 0.9, "status": "ok", "note": "",
           "stage_samples": "" if samples is None else samples,
           "server_calls": OWN_CALLS[repetition - 1] if server == "redis" else "",
           "server_usec_per_call": OWN_USEC[repetition - 1] if server == "redis" else ""}
    for phase, us in zip(CLIENT_PHASES, CLIENT_US.get(server, ("",) * 4)):
        row[f"client_{phase}_us"] = us
    busy = {"redis": (("",) * 3,) * 3, "sharded-hop-command": HOP_BUSY}.get(server, INLINE_BUSY)
    for column, per_round in zip(BUSY_COLUMNS, busy):
        row[column] = per_round[repetition - 1]
    total = 0.0
    for stage in STAGES:
        value = stages.get(stage)
        if isinstance(value, tuple):
            value = value[repetition - 1]
        row[f"stage_{stage}_us"] = "" if value is None else value
        total += value or 0
    row["stage_total_us"] = total if stages else ""
    return row


@pytest.fixture
def stage_run(tmp_path):
    folder = tmp_path / "stage-run"
    folder.mkdir()
    rows = [_row(server, r) for server in FIGURES for r in (1, 2, 3)]
    pd.DataFrame(rows).to_csv(folder / "points.csv", index=False)
    meta = {"experiment": "stages", "servers": SERVERS,
            "sweeps": {"p16": {"seed": "ember-pr50", "duration": 1.0, "warmup": 0.25,
                               "repetitions": 3}},
            "comparisons": [{"name": n, "by": "server", "a": a, "b": b, "sweep": "p16",
                             "tests": ["set"], "where": [], "seed_ratio": None,
                             "metric": "ops_per_s", "rate": None} for n, a, b in COMPARISONS]}
    (folder / "meta.json").write_text(json.dumps(meta))
    return folder


def _pairs(run):
    points = load_points(run)
    return {p.comparisons[0]: p for p in comparison_pairs(points, point_table(points, run),
                                                          load_meta(run))}


def test_point_table_folds_stages_into_medians_and_summed_samples(stage_run):
    table = point_table(load_points(stage_run), stage_run)
    concurrent = table[table["server"] == "concurrent"].iloc[0]
    assert concurrent["stage_read_us"] == 20  # median of 19, 20, 30
    assert concurrent["stage_samples"] == 900 and concurrent["stage_rows"] == 3
    assert math.isnan(concurrent["stage_queue_us"])  # absent, not zero
    assert stage_figures(pd.DataFrame({"ops": [1]})) == {}  # no stage columns: nothing


def test_each_side_of_a_comparison_has_its_stages_and_shares_sum_to_one(stage_run):
    pairs = _pairs(stage_run)
    assert list(pairs) == ["concurrent/sharded", "single/redis", "striped/concurrent"]
    hop = pairs["concurrent/sharded"].b
    assert hop.shown and hop.samples == 90 and hop.crossings_us == 20
    assert hop.sum_us == 42
    for side in (hop, pairs["concurrent/sharded"].a):
        assert math.isclose(sum(side.share(s) for s in side.us), 1.0)
    assert math.isnan(pairs["concurrent/sharded"].a.crossings_us)


def test_the_table_states_the_crossings_the_samples_and_what_has_none(stage_run):
    report = render_report(stage_run)
    section = report[report.index("## Where a request's time goes"):]
    assert "### concurrent/sharded (SET, p16: tcp dedicated P16 T8 keys=1000000)" in section
    # 90 samples over 300,000 requests; queue 12.5 of 42 = 30%; queue + return = 20
    assert ("| sharded-hop-command | 3 | 90 | 300 | 10.0 (24%) | 1.0 (2%) | 2.0 (5%) | "
            "12.5 (30%) | 3.0 (7%) | 7.5 (18%) | 1.0 (2%) | 5.0 (12%) | 42.0 | 20.0 | – | 60% | "
            "20% | 4.00 |  |"
            ) in section
    assert "| concurrent | 3 | 900 | 750 | 20.0 (50%) |" in section
    empty = "– | " * 10
    # redis-server has no stages, but its own account of a command stands beside them.
    assert f"| redis | – | – | – | {empty}1.50 | – | – | – | {OWN_ACCOUNT_ONLY} |" in section
    # The threads' figures stand whether or not the stages do.
    assert (f"| striped | 3 | 15 | 17 | {empty}– | 90% | – | 0.60 | too few samples: 15 over 3 rounds (fewer "
            f"than {MIN_SAMPLES}); no figure from noise |"
            ) in section


def test_the_seed_section_says_how_much_the_crossings_are_and_what_they_explain(stage_run):
    report = render_report(stage_run)
    seed = report[report.index("## Seed 1"):report.index("## Where a request's time goes")]
    assert ("sharded-hop-command's sampled requests spend **20.0 µs in the two crossings** "
            "(queue 12.5: handed to the shard thread; return 7.5: back on the I/O thread) of "
            "42.0 µs inside the server (90 samples over 3 rounds).") in seed
    # concurrent: 4x at a 100 µs round trip -> 300 µs longer; 20 of 300 = 6.7%
    assert ("concurrent spends 40.0 µs inside the server, no crossings, and serves 4.00× "
            "the throughput") in seed
    assert ("round trip 300 µs longer than concurrent's 100 µs (Little's law); the "
            "crossings are 20.0 µs of it (6.7%) and the whole in-server difference +2.0 µs: "
            "**the crossings do not account for the ratio**") in seed
    # single: 1.1x at 200 µs -> 20 µs longer, all of it the crossings
    assert ("round trip 20 µs longer than single's 200 µs (Little's law); the crossings "
            "are 20.0 µs of it (100.0%)") in seed
    assert "**the crossings account for most of the ratio**" in seed
    assert "not CPU time" in seed and "Pipelined points compare different units" in seed
    # 90 samples of 300,000 requests against concurrent's 900 of 1,200,000: under half
    assert ("sharded-hop-command was sampled 300 times per million requests against 750 for "
            "concurrent") in seed


def test_a_client_bound_point_says_the_ratio_is_partly_the_clients(stage_run):
    points = pd.read_csv(stage_run / "points.csv", dtype=str, keep_default_na=False)
    points.loc[points["server"].isin(["sharded-hop-command", "single"])
               & (points["repetition"] == "2"), "client_bound"] = "true"
    points.to_csv(stage_run / "points.csv", index=False)
    report = render_report(stage_run)
    assert ("Its point is client-bound† (the load generator was saturated in some round): "
            "its round trip includes the client's own time") in report
    assert "single (client-bound†) spends 40.0 µs inside the server" in report
    assert "longer than single's 200 µs" in report
    assert "concurrent (client-bound" not in report


def test_too_few_samples_on_the_hop_side_gives_no_statement(stage_run):
    points = pd.read_csv(stage_run / "points.csv", dtype=str, keep_default_na=False)
    points.loc[points["server"] == "sharded-hop-command", "stage_samples"] = "6"
    points.to_csv(stage_run / "points.csv", index=False)
    report = render_report(stage_run)
    assert ("- SET, 1,000,000 keys, P16 T8 (tcp, 50 connections): sharded-hop-command: too "
            "few samples: 18 over 3 rounds (fewer than 20); no figure from noise.") in report
    assert "in the two crossings" not in report


def test_the_bars_use_one_colour_per_stage_and_skip_sides_without_figures(stage_run):
    pairs = list(_pairs(stage_run).values())
    figure = pairs_figure(pairs)
    gids = {}
    for axis in figure.axes:
        for patch in axis.patches:
            if patch.get_gid():
                gids.setdefault(patch.get_gid(), set()).add(patch.get_facecolor())
    # 2 bars (µs, shares) per shown side: concurrent twice, sharded, single, striped none
    assert set(gids) == {f"stage:{s}" for s in STAGES}
    assert all(len(colours) == 1 for colours in gids.values())
    assert len({palette.stage(s).colour for s in STAGES}) == len(STAGES)
    texts = [t.get_text().replace("\n", " ") for a in figure.axes for t in a.texts]
    assert any(t == f"{OWN_ACCOUNT_ONLY}: 1.50 µs" for t in texts)  # redis-server's own
    assert any(t.startswith("too few samples: 15") for t in texts)
    names = {p.name for p in write_plots(stage_run)}
    assert {"stages.png", "stages.svg"} <= names


def test_a_run_without_stage_columns_has_no_stage_section(small_run):
    report = render_report(small_run)
    assert "## Where a request's time goes" not in report
    assert "the two crossings" not in report


def test_commandstats_fold_to_the_median_per_call_and_the_summed_calls(stage_run):
    table = point_table(load_points(stage_run), stage_run)
    redis = table[table["server"] == "redis"].iloc[0]
    assert redis["server_usec_per_call"] == 1.5 and redis["server_calls"] == sum(OWN_CALLS)
    concurrent = table[table["server"] == "concurrent"].iloc[0]
    assert math.isnan(concurrent["server_usec_per_call"])  # kvlab-server: not reported
    assert math.isnan(concurrent["server_calls"])
    assert commandstats_figures(pd.DataFrame({"ops": [1]})) == {}  # no such columns
    pairs = _pairs(stage_run)
    assert pairs["single/redis"].b.usec_per_call == 1.5
    assert not pairs["single/redis"].b.shown  # no stages: the figure stands alone
    assert math.isnan(pairs["single/redis"].a.usec_per_call)


def test_the_clients_phases_stand_under_each_pair_where_measured(stage_run):
    table = point_table(load_points(stage_run), stage_run)
    concurrent = table[table["server"] == "concurrent"].iloc[0]
    assert concurrent["client_wait_us"] == 1.0
    assert math.isnan(table[table["server"] == "redis"].iloc[0]["client_wait_us"])
    assert client_figures(pd.DataFrame({"ops": [1]})) == {}
    report = render_report(stage_run)
    section = report[report.index("### concurrent/sharded"):report.index("### single/redis")]
    # concurrent: 0.25 + 0.5 + 1.0 + 0.75 = 2.5 µs per op; wait is 40% of it
    assert "| concurrent | 0.25 (10%) | 0.50 (20%) | 1.00 (40%) | 0.75 (30%) | 2.50 |  |" \
        in section
    assert "| sharded-hop-command | – | – | – | – | – | not measured by this client strategy |" \
        in section
    assert "kvlab-load's side of the same points" in section


def test_every_server_measured_at_a_declared_point_gets_its_row(stage_run):
    """Issue 39's "the stage breakdown for every engine": the pairs show two servers at a
    time; at their point a table then lists every server measured there, in the run's
    order of servers, with the same cells as the pairs' tables."""
    report = render_report(stage_run)
    start = report.index("### Every server at SET, p16: tcp dedicated P16 T8 keys=1000000")
    end = report.find("\n## ", start)
    section = report[start:end if end >= 0 else len(report)]
    assert section.count("### Every server at") == 1  # three pairs, one point
    rows = [line.split(" | ")[0].lstrip("| ") for line in section.splitlines()
            if line.startswith("| ") and not line.startswith("| server")
            and not line.startswith("| ---")]
    assert rows == ["concurrent", "sharded-hop-command", "single", "striped", "redis"]
    assert ("| sharded-hop-command | 3 | 90 | 300 | 10.0 (24%) | 1.0 (2%) | 2.0 (5%) | "
            "12.5 (30%) | 3.0 (7%) | 7.5 (18%) | 1.0 (2%) | 5.0 (12%) | 42.0 | 20.0 | – | 60% | "
            "20% | 4.00 |  |"
            ) in section


def test_a_point_with_only_the_pairs_two_servers_gets_no_second_table(stage_run):
    points = pd.read_csv(stage_run / "points.csv", dtype=str, keep_default_na=False)
    points = points[points["server"].isin(["concurrent", "sharded-hop-command"])]
    points.to_csv(stage_run / "points.csv", index=False)
    report = render_report(stage_run)
    assert "### concurrent/sharded (SET" in report
    assert "### Every server at" not in report
