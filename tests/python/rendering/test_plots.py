"""Every plot of a synthetic run: each server and client strategy keeps the palette's
colour in every figure, no line joins two points measured at the same x, a sweep with one
thread count is drawn as bars, client-bound points are hollow, axes carry plain units,
and the forest plot writes decide()'s verdict beside each declared ratio."""

import csv
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from kvlab.rendering import palette  # noqa: E402
from kvlab.rendering.run_plots import figures_of_run, write_plots  # noqa: E402
from kvlab.rendering.plots_latency import BEHIND_TEXT  # noqa: E402
from kvlab.measures.ratio_verdicts import NOT_RESOLVED_BUDGET, decide, not_resolved  # noqa: E402
from kvlab.measures.histograms import compress_documents  # noqa: E402
from kvlab.measures.latency_curves import CURVE_COLUMNS, CURVE_INTERVALS  # noqa: E402
from synthetic_runs import MACHINE_A, point_row  # noqa: E402

SERVERS = ("redis", "concurrent", "sharded-hop-command", "single", "mystery-engine")
SPEED = {"redis": 100e3, "concurrent": 150e3, "sharded-hop-command": 90e3, "single": 140e3,
         "mystery-engine": 120e3}


def _histogram(server_speed: float, seed: int) -> dict:
    """A kvlab-load histogram (ns buckets) whose latencies scale with 1/speed."""
    scale = 1e11 / server_speed
    buckets, count = [], 0
    for k, n in enumerate((500, 300, 150, 40, 8, 2)):
        low = int(scale * 2 ** k)
        buckets.append([low, low * 2, n + seed])
        count += n + seed
    return {"count": count, "min": buckets[0][0], "max": buckets[-1][1], "buckets": buckets}


def _point(folder: Path, histogram_name: str, histogram: dict | None, **values) -> dict:
    row = point_row(**values)
    row.setdefault("io", "direct")
    speed = row["ops_per_s"]
    row.update(p50_us=1e8 / speed, p99_us=4e8 / speed, p999_us=9e8 / speed,
               max_us=2e9 / speed, histogram="")
    if histogram is not None:
        (folder / "histograms").mkdir(exist_ok=True)
        (folder / "histograms" / histogram_name).write_text(json.dumps(
            {"points": [{"repetitions": [{"histogram": histogram}]}]}))
        row["histogram"] = f"histograms/{histogram_name}"
    return row


def _rows(folder: Path) -> list[dict]:
    rows = []
    # Seed 1's sweep: two thread counts, two tests; concurrent is client-bound at T=2.
    for server in SERVERS:
        for command in ("set", "get"):
            for threads in (1, 2):
                for rep in (1, 2, 3):
                    speed = SPEED[server] * threads * (1 + 0.01 * rep)
                    rows.append(_point(folder, f"{server}-{command}-{threads}-{rep}.json",
                                       _histogram(speed, rep), server=server, command=command,
                                       threads=threads, repetition=rep, ops_per_s=speed,
                                       client_bound="true" if server == "concurrent"
                                       and threads == 2 else "false"))
    # A sweep with one thread count: bars, not lines.
    for server in SERVERS:
        for rep in (1, 2, 3):
            rows.append(_point(folder, "", None, sweep="p1", server=server, pipeline=1,
                               threads=1, repetition=rep, ops_per_s=SPEED[server] / 10 + rep))
    # Seed 2's sweep: two I/O models at the same thread counts must never share a line.
    for transport in ("unix", "tcp", "remote"):
        for io in ("direct", "event-loop"):
            for client, connections in (("pooled", 8), ("shared", 1)):
                for threads in (1, 2, 4):
                    for rep in (1, 2, 3):
                        speed = (4e3 if transport == "remote" else 3e4) * threads \
                            * (1.1 if io == "event-loop" else 1.0) \
                            * (1.05 if client == "shared" else 1.0) + rep
                        rows.append(_point(folder, "", None, sweep="lettuce", server="redis",
                                           transport=transport, io=io, client=client,
                                           connections=connections, command="incrby",
                                           keys=1, pipeline=1, threads=threads,
                                           repetition=rep, ops_per_s=speed))
    return rows


RATIOS = [
    # comparison, test, point, ratio, low, high, rounds, status, metric, client_bound
    ("concurrent/sharded SET", "set", "p16: tcp dedicated P16 T1 keys=1000000", 1.66, 1.60, 1.72,
     12, "resolved", "ops_per_s", "false"),
    ("concurrent/sharded SET", "set", "p16: tcp dedicated P16 T2 keys=1000000", 1.12, 1.05, 1.19,
     12, "inconclusive", "ops_per_s", "true"),
    ("shared/pooled", "incrby", "lettuce: redis unix P1 T2 keys=1", 0.95, 0.90, 1.02, 10,
     "inconclusive", "ops_per_s", "false"),
    ("shared/pooled", "incrby", "lettuce: redis remote P1 T4 keys=1 io=event-loop", 0.80,
     0.75, 0.85, 10, "resolved", "ops_per_s", "false"),
]


def _curve_row(server: str, fraction: float) -> dict:
    """An open-loop curve row: latency grows as 1/(1 - fraction); redis at half its
    maximum is client-bound, every run at 90% fell behind; single at 10% had one
    repetition, so no interval."""
    rate = SPEED[server] * fraction
    row = {"sweep": "p16", "command": "get", "transport": "tcp", "client": "dedicated",
           "pipeline": 16, "threads": 1, "latency_slo_us": 1000.0, "server": server,
           "fraction": fraction, "closed_loop_max": SPEED[server], "offered_rate": rate,
           "achieved_rate": rate, "p50_us": 50 / (1 - fraction), "p90_us": 80 / (1 - fraction),
           "p99_us": 200 / (1 - fraction), "p999_us": 900 / (1 - fraction), "max_us": 5000,
           "behind": fraction > 0.8, "backlog": 0, "requests": 10000,
           "client_bound": server == "redis" and fraction == 0.5, "repetitions": 3,
           "histogram": f"latency/{server}-f{fraction:g}.json"}
    lone = server == "single" and fraction == 0.1
    for column, low, high in CURVE_INTERVALS:
        row[low] = "" if lone else row[column] * (0.98 if column == "achieved_rate" else 0.8)
        row[high] = "" if lone else row[column] * (1.02 if column == "achieved_rate" else 1.3)
    if lone:
        row["repetitions"] = 1
    if server == "redis" and fraction == 0.1:
        row["p999_high"] = 1e9   # three wild repetitions: an interval up to 1000 s
    return row


CURVE_ROWS = [_curve_row(server, fraction) for server in ("redis", "single")
              for fraction in (0.1, 0.5, 0.9)]


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("plots") / "run"
    folder.mkdir()
    rows = _rows(folder)
    columns = list(dict.fromkeys(k for r in rows for k in r))
    with (folder / "points.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    with (folder / "ratios.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["comparison", "test", "point", "ratio", "low", "high", "rounds",
                         "status", "metric", "client_bound"])
        writer.writerows(RATIOS)
    with (folder / "latency.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=CURVE_COLUMNS)
        writer.writeheader()
        writer.writerows(CURVE_ROWS)
    (folder / "latency").mkdir()
    for row in CURVE_ROWS:
        speed = row["achieved_rate"] / row["fraction"]
        (folder / row["histogram"]).write_text(json.dumps(
            {"points": [{"repetitions": [{"histogram": _histogram(speed * (1 - row["fraction"]),
                                                                  rep)}
                                         for rep in (1, 2, 3)]}]}))
    # A committed sample keeps them gzipped; the plots read them by their old names.
    compress_documents(folder / "latency")
    servers = {name: {"kind": "redis" if name == "redis" else "kvlab",
                      "engine": {"sharded-hop-command": "sharded"}.get(name, name),
                      "hop": "command" if name.startswith("sharded") else None,
                      "seed_engine": {"redis": "redis", "concurrent": "concurrent",
                                      "sharded-hop-command": "sharded"}.get(name)}
               for name in SERVERS}
    meta = {"experiment": "synthetic", "server_cpus": "0", "harness_cpus": "1",
            "machine": {**MACHINE_A, "git": {"commit": "a" * 40, "dirty": False}},
            "servers": servers,
            "sweeps": {"p16": {"seed": "ember-pr50", "latency_slo_us": 1000.0},
                       "p1": {"seed": "ember-pr50"}, "lettuce": {"seed": "lettuce-threads"}},
            "comparisons": [
                {"name": "concurrent/sharded SET", "by": "server", "a": "concurrent",
                 "b": "sharded-hop-command", "sweep": "p16", "seed_ratio": 1.13},
                {"name": "shared/pooled", "by": "client", "a": "shared", "b": "pooled",
                 "sweep": "lettuce", "seed_ratio": None}]}
    (folder / "meta.json").write_text(json.dumps(meta))
    return folder


@pytest.fixture(scope="module")
def figures(run):
    drawn = []
    for stem, figure in figures_of_run(run):
        figure.canvas.draw()
        drawn.append((stem, figure))
    yield dict(drawn)
    for _, figure in drawn:
        plt.close(figure)


def _artists(figure):
    for axis in figure.axes:
        yield from axis.get_children()


def _colours(artist) -> set[str]:
    found = set()
    if isinstance(artist, Line2D):
        for colour in (artist.get_color(), artist.get_markeredgecolor(),
                       artist.get_markerfacecolor()):
            found.add(to_hex(colour, keep_alpha=False))
    elif isinstance(artist, Patch):
        found |= {to_hex(artist.get_facecolor(), keep_alpha=False),
                  to_hex(artist.get_edgecolor(), keep_alpha=False)}
    else:
        for getter in ("get_color", "get_edgecolor", "get_facecolor"):
            values = getattr(artist, getter, lambda: [])()
            found |= {to_hex(c, keep_alpha=False) for c in (values if len(values) else [])}
    return {c.lower() for c in found}


def _joined(line) -> bool:
    """Whether a Line2D draws a line between its points (not markers alone)."""
    return line.get_linestyle() not in ("None", "none", "", " ")


def test_every_figure_of_the_run_is_drawn_and_written(run, figures):
    assert list(figures)[0] == "verdicts"
    assert {"seed1-ember-pr50", "seed2-lettuce", "p16-throughput", "p16-latency",
            "p16-percentiles", "p1-throughput", "p1-latency", "lettuce-throughput",
            "p16-get-latency-curve", "p16-get-open-loop-percentiles"} <= set(figures)
    written = write_plots(run)
    assert {p.name for p in written} >= {"verdicts.png", "seed2-lettuce.png", "p16-percentiles.svg"}
    assert all(p.stat().st_size > 1000 for p in written)


def test_each_server_and_strategy_keeps_its_colour_in_every_figure(figures):
    seen: dict[str, set[str]] = {}
    for stem, figure in figures.items():
        for artist in _artists(figure):
            gid = artist.get_gid() or ""
            kind, _, name = gid.partition(":")
            if kind not in ("server", "client"):
                continue
            expected = palette.style(kind, name).colour.lower()
            assert expected in _colours(artist), (stem, gid, _colours(artist))
            seen.setdefault(gid, set()).add(stem)
    # Every server is drawn in the seed figure and in at least three more.
    for server in SERVERS:
        assert len(seen.get(f"server:{server}", ())) >= 4, (server, seen.get(f"server:{server}"))
    for client in ("pooled", "shared"):
        assert {"seed2-lettuce", "lettuce-throughput"} <= seen[f"client:{client}"]


def test_no_line_joins_two_points_at_the_same_x(figures):
    checked = 0
    for stem, figure in figures.items():
        for axis in figure.axes:
            for line in axis.get_lines():
                if not _joined(line) or line.get_gid() == "reference":
                    continue
                xs = list(line.get_xdata())
                if len(xs) < 2:
                    continue
                checked += 1
                assert len(set(xs)) == len(xs), (stem, line.get_gid(), xs)
    assert checked > 20


def test_a_sweep_with_one_thread_count_is_bars_not_lines(figures):
    figure = figures["p1-throughput"]
    joined = [line for axis in figure.axes for line in axis.get_lines()
              if _joined(line) and len(line.get_xdata()) > 1]
    assert joined == []
    bars = [p for p in _artists(figure) if isinstance(p, Patch)
            and (p.get_gid() or "").startswith("server:")]
    assert len(bars) == len(SERVERS)


def test_client_bound_points_are_hollow_and_explained(figures):
    figure = figures["p16-throughput"]
    hollow = [line for axis in figure.axes for line in axis.get_lines()
              if line.get_gid() == "server:concurrent"
              and to_hex(line.get_markerfacecolor()) == "#ffffff"]
    filled = [line for axis in figure.axes for line in axis.get_lines()
              if line.get_gid() == "server:concurrent" and line.get_marker() not in ("None", "")
              and to_hex(line.get_markerfacecolor()) != "#ffffff"]
    assert hollow and filled
    # Only concurrent was client-bound: nobody else has a hollow marker.
    assert not [line for axis in figure.axes for line in axis.get_lines()
                if (line.get_gid() or "").startswith("server:")
                and line.get_gid() != "server:concurrent"
                and to_hex(line.get_markerfacecolor()) == "#ffffff"]
    legend = [t.get_text() for legend in figure.legends for t in legend.get_texts()]
    assert palette.CLIENT_BOUND_TEXT in legend


def test_axes_have_plain_units_and_no_offset(figures):
    for stem, figure in figures.items():
        for axis in figure.axes:
            for which in (axis.xaxis, axis.yaxis):
                assert which.get_offset_text().get_text() == "", (stem, which)
    labels = [t.get_text() for axis in figures["p16-throughput"].axes
              for t in axis.get_yticklabels()]
    assert any(label.endswith("K") for label in labels), labels
    latency = [t.get_text() for axis in figures["p16-latency"].axes
               for t in axis.get_yticklabels()]
    assert any("µs" in label or "ms" in label for label in latency), latency


def test_the_forest_plot_writes_the_shared_verdict_beside_each_ratio(figures):
    texts = [t.get_text() for t in figures["verdicts"].axes[0].texts]
    expected = [
        decide(1.60, 1.72, 1.13, "concurrent", "sharded-hop-command").text(),
        # inconclusive: short of the run's target, so no side, whatever the interval says
        not_resolved(1.05, 1.19, 12, None, float("nan"),
                     decide(1.05, 1.19, 1.13, "concurrent", "sharded-hop-command"),
                     ratio=1.12).text(),
        # The seed's own table: shared/pooled at unix, 2 threads and at remote, 4 threads.
        not_resolved(0.90, 1.02, 10, None, float("nan"),
                     decide(0.90, 1.02, 81195.900 / 56938.187, "shared", "pooled"),
                     ratio=0.95).text(),
        decide(0.75, 0.85, 7952.492 / 15807.410, "shared", "pooled").text(),
    ]
    for verdict in expected:
        assert any(t.startswith(verdict + "  (") for t in texts), (verdict, texts)
    assert expected[0] == "concurrent ahead; seed outside, direction agrees"
    assert expected[3] == "pooled ahead; seed outside, direction agrees"
    assert expected[1].startswith(NOT_RESOLVED_BUDGET + " (±6.2% over 12 starts")
    # A reference line at 1.0 and one seed star per ratio.
    axis = figures["verdicts"].axes[0]
    references = [line for line in axis.get_lines() if line.get_gid() == "reference"]
    assert [line.get_xdata()[0] for line in references] == [1.0]
    assert len([line for line in axis.get_lines() if line.get_gid() == "seed"]) == 4


def test_the_percentile_plot_reads_the_merged_histograms(figures):
    figure = figures["p16-percentiles"]
    redis = [line for axis in figure.axes for line in axis.get_lines()
             if line.get_gid() == "server:redis" and len(line.get_xdata()) > 1]
    assert redis
    xs = list(redis[0].get_xdata())
    assert xs[0] == 1 and xs == sorted(xs) and xs[-1] > 100   # 1/(1-p) up to p > 99%
    assert figure.axes[0].get_xscale() == "log"


def test_the_palette_is_keyed_by_name_with_a_stable_fallback():
    assert palette.server("redis") == palette.server("redis")
    assert palette.server("sharded") == palette.server("sharded-hop-command")
    known = {s.colour for s in palette.SERVERS.values()}
    assert len(known) == len(palette.SERVERS)
    first, again = palette.server("mystery-engine"), palette.server("mystery-engine")
    assert first == again and first.colour not in known
    assert palette.ordered("server", ["zeta", "striped", "redis", "alpha", "single"]) == \
        ["redis", "single", "striped", "alpha", "zeta"]
    # A plot's series: a server's series keep its colour, each series its own look.
    names = [f"concurrent get p{i}" for i in range(9)] + ["redis get p1", "BM_Hop/sharded/get",
                                                           "concurrent/redis get p1", "zz"]
    styles = palette.series_styles(names)
    assert len({(s.colour, s.marker, s.linestyle) for s in styles.values()}) == len(names)
    assert {styles[f"concurrent get p{i}"].colour for i in range(9)} == \
        {palette.server("concurrent").colour}
    assert styles["BM_Hop/sharded/get"].colour == palette.server("sharded-hop-command").colour
    assert styles["concurrent/redis get p1"].colour not in known
    assert palette.format_rate(1_500_000) == "1.5M" and palette.format_rate(12_000) == "12K"
    assert palette.format_latency_us(1200) == "1.2 ms" and palette.format_latency_us(40) == "40 µs"


def test_pooled_and_shared_share_a_panel_although_their_connections_differ():
    # A shared client always records 1 connection and a pooled one 8: that must
    # not put each strategy in a panel of its own, or the plot compares nothing.
    from kvlab.rendering.plots import panels

    rows = [dict(server="redis", client=client, transport="unix", loadgen="kvlab-load",
                 nodelay="on", command="incrby", keys=1, value_size=64, pipeline=1,
                 connections=connections, key_dist="uniform", threads=threads)
            for client, connections in (("pooled", 8), ("shared", 1)) for threads in (1, 2)]
    chosen = panels(pd.DataFrame(rows))
    assert len(chosen) == 1 and set(chosen[0][1]["client"]) == {"pooled", "shared"}
    # A variable that really varies within a line still splits panels.
    rows += [dict(r, keys=1000) for r in rows]
    chosen = panels(pd.DataFrame(rows))
    assert [title for title, _ in chosen] == ["keys=1", "keys=1,000"]
    assert all(set(panel["client"]) == {"pooled", "shared"} for _, panel in chosen)
    # Transports get panels of their own (remote is ~50x slower than unix).
    rows += [dict(r, transport="remote") for r in rows]
    assert len(panels(pd.DataFrame(rows))) == 4


def _segments(figure, gid: str) -> list[tuple]:
    """((x0, y0), (x1, y1)) of every interval segment (vlines/hlines) wearing `gid`."""
    found = []
    for axis in figure.axes:
        for collection in axis.collections:
            if collection.get_gid() == gid:
                found += [tuple(map(tuple, segment)) for segment in collection.get_segments()]
    return found


def test_every_open_loop_point_carries_its_intervals(figures):
    figure = figures["p16-get-latency-curve"]
    for server in ("redis", "single"):
        segments = set(_segments(figure, f"server:{server}"))
        for row in (r for r in CURVE_ROWS if r["server"] == server):
            x = row["achieved_rate"]
            for column, low, high in CURVE_INTERVALS[1:]:
                up = ((x, row[low]), (x, row[high])) if row[low] != "" else None
                across = ((row["achieved_low"], row[column]), (row["achieved_high"], row[column])) \
                    if row[low] != "" else None
                if up is None:
                    # One repetition: no interval, and none made up.
                    assert not [s for s in segments if s[0][0] == x and s[1][0] == x]
                    continue
                assert tuple(map(lambda p: tuple(map(float, p)), up)) in segments, (server, column)
                assert tuple(map(lambda p: tuple(map(float, p)), across)) in segments
    legend = [t.get_text() for axis in figure.axes if axis.get_legend()
              for t in axis.get_legend().get_texts()]
    assert any(text.startswith("bars: 95% interval") for text in legend), legend
    # The axes span the points (up to 900 / 0.1 = 9000 µs), not the 1000 s interval,
    # which is cut at the edge instead of squeezing every curve into a corner.
    low, high = figure.axes[-1].get_ylim()
    assert 9000 < high < 20000 and low < 50


def test_open_loop_points_client_bound_hollow_and_behind_crossed(figures):
    figure = figures["p16-get-latency-curve"]
    axis = figure.axes[-1]
    redis_half = SPEED["redis"] * 0.5
    markers = [line for line in axis.get_lines() if line.get_gid() == "server:redis"
               and line.get_linestyle() in ("None", "none")]
    hollow = {float(x) for line in markers if to_hex(line.get_markerfacecolor()) == "#ffffff"
              for x in line.get_xdata()}
    filled = {float(x) for line in markers if to_hex(line.get_markerfacecolor()) != "#ffffff"
              for x in line.get_xdata()}
    assert hollow == {redis_half} and redis_half not in filled and filled
    crossed = {float(x) for line in axis.get_lines() if line.get_gid() == "behind"
               for x in line.get_xdata()}
    assert crossed == {SPEED["redis"] * 0.9, SPEED["single"] * 0.9}
    legend = [t.get_text() for t in axis.get_legend().get_texts()]
    assert palette.CLIENT_BOUND_TEXT in legend and BEHIND_TEXT in legend


def test_open_loop_percentiles_one_panel_per_load_one_line_per_server(figures):
    figure = figures["p16-get-open-loop-percentiles"]
    panels = [axis for axis in figure.axes if axis.get_visible()]
    assert [axis.get_title() for axis in panels] == [
        f"offered {f:.0%} of each server's closed-loop maximum" for f in (0.1, 0.5, 0.9)]
    for axis in panels:
        lines = [line for line in axis.get_lines() if _joined(line)
                 and (line.get_gid() or "").startswith("server:")]
        # Read from the gzipped files: one line per server, over 1/(1-p) from p = 0.
        assert sorted(line.get_gid() for line in lines) == ["server:redis", "server:single"]
        for line in lines:
            xs = list(line.get_xdata())
            assert xs[0] == 1 and xs == sorted(xs) and xs[-1] > 100
        assert axis.get_xscale() == "log" and axis.get_yscale() == "log"
        assert [line.get_ydata()[0] for line in axis.get_lines()
                if line.get_gid() == "reference"] == [1000.0]
        assert axis.get_shared_y_axes().joined(axis, panels[0])
    # Latency grows with the load: single's median (the first x past 2, p = 50%) at 90%
    # above its median at 10%.
    medians = {}
    for axis, fraction in zip(panels, (0.1, 0.5, 0.9)):
        (line,) = [line for line in axis.get_lines()
                   if line.get_gid() == "server:single" and _joined(line)]
        xs = list(line.get_xdata())
        medians[fraction] = line.get_ydata()[next(i for i, x in enumerate(xs) if x >= 2)]
    assert medians[0.1] < medians[0.5] < medians[0.9]


def test_no_marker_is_cut_by_the_edge_of_a_log_latency_axis(figures):
    """Every marker of a latency axis fits inside it: its centre at least its radius (in
    pixels) from the top and bottom."""
    checked = 0
    for stem, figure in figures.items():
        for axis in figure.axes:
            if not axis.get_visible() or axis.get_yscale() != "log":
                continue
            box = axis.get_window_extent()
            for line in axis.get_lines():
                if line.get_marker() in ("None", "none", "", None) or line.get_gid() == "reference":
                    continue
                radius = line.get_markersize() / 2 * figure.dpi / 72
                for x, y in zip(line.get_xdata(), line.get_ydata()):
                    checked += 1
                    _, pixel = axis.transData.transform((x, y))
                    assert box.y0 + radius <= pixel <= box.y1 - radius, \
                        (stem, line.get_gid(), y, axis.get_ylim())
    assert checked > 100


def test_a_log_latency_axis_is_labelled_per_decade_when_wide_and_inside_one_when_narrow():
    import math
    figure, (wide, narrow) = plt.subplots(1, 2)
    for axis, limits in ((wide, (5, 1e7)), (narrow, (200, 520))):
        axis.set_yscale("log")
        axis.set_ylim(*limits)
        palette.latency_axis(axis)
    figure.canvas.draw()
    inside = [v for v in wide.get_yticks() if 5 <= v <= 1e7]
    # Seven decades: one label each (10 µs ... 10 s), not three per decade.
    assert len(inside) >= 6 and all(math.log10(v) == round(math.log10(v)) for v in inside)
    labels = [t.get_text() for t in narrow.get_yticklabels()
              if t.get_text() and 200 <= t.get_position()[1] <= 520]
    assert len(labels) >= 2 and all("µs" in label for label in labels), labels
    plt.close(figure)


def test_points_without_percentiles_leave_the_latency_figure_not_a_blank_log_axis(run, figures,
                                                                                  tmp_path):
    # A declared ratio's points measured by alternation starts carry no percentiles
    # (alternated_points.py): p16's GET panel then has nothing to draw and is left out
    # (an axis of no values cannot be log-scaled: make bench stopped on one).
    import shutil
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    points = pd.read_csv(copy / "points.csv")
    starts = (points["sweep"] == "p16") & (points["command"] == "get")
    for column in ("p50_us", "p99_us", "p999_us", "max_us", "histogram"):
        points[column] = points[column].astype(object)
        points.loc[starts, column] = None
    points.loc[starts, "note"] = "alternation start"
    points.to_csv(copy / "points.csv", index=False)
    # the figures up to p16-latency only (figures_of_run makes each when it is taken)
    open_before = set(plt.get_fignums())
    latency = next(figure for stem, figure in figures_of_run(copy) if stem == "p16-latency")
    try:
        titles = [a.get_title() for a in latency.axes if a.get_visible()]
        before = [a.get_title() for a in figures["p16-latency"].axes if a.get_visible()]
        assert any("get" in t.lower() for t in before), before
        assert titles and not any("get" in t.lower() for t in titles), titles
        latency.canvas.draw()
    finally:
        for number in set(plt.get_fignums()) - open_before:  # the fixture's stay open
            plt.close(number)
