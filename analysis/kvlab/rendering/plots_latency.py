"""Latency the way the field draws it:

- <sweep>-percentiles.png: the percentile distribution of each point's merged histogram
  (its rounds' kvlab-load histograms added bucket by bucket, histograms.py), latency
  against 1/(1 - p) on a log axis as HdrHistogram plots it, one line per server; one
  panel per set of variables that fixes the offered load (the same threads, pipeline
  and connections), so every line of a panel was offered the same load;
- <sweep>-<command>-latency-curve.png: open-loop p50/p99/p99.9 against the achieved
  throughput (latency.csv, running/latency.py), one colour per server, every point with
  its 95% intervals over the repetitions (throughput across, latency up), with the SLO
  line and, above it, each server's closed-loop maximum with its 95% interval;
- <sweep>-<command>-open-loop-percentiles.png: the same open-loop runs' merged histograms
  as percentile distributions, one panel per offered fraction of each server's
  closed-loop maximum, one line per server, shared latency axis, the SLO line.

A run whose histograms were left out (results/sample keeps none; results/sample-latency
keeps them gzipped) has no percentile figure. Hollow: client-bound, as in every figure;
a cross: the run fell behind its schedule. Colours and markers are the palette's.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Iterable, Iterator

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from . import palette
from .plots import (client_bound_handle, draw_points, figure_grid, line_columns,
                    lines_of, panel_columns, panels)
from .report_latency import curve_groups
from ..measures import histograms
from ..measures.histograms import Histogram
from ..schema.specs import POINT_VARIABLES
from ..measures.latency_curves import CURVE_INTERVALS, latency_capped_throughput, load_curve_rows
from ..running.results import whole_points

# Ticks of the 1/(1-p) axis, labelled by percentile.
PERCENTILE_TICKS = ((2, "50%"), (10, "90%"), (100, "99%"), (1000, "99.9%"),
                    (10_000, "99.99%"), (100_000, "99.999%"), (1_000_000, "99.9999%"))


# What a cross over a marker means, in every legend that shows one.
BEHIND_TEXT = "×: fell behind its schedule (offered load not sustained)"
PERCENTILE_LINESTYLES = {"p50_us": "-", "p99_us": "--", "p999_us": ":"}
# Room on a log latency axis (a fraction of its span) so no marker is cut by the edge.
MARGIN = 0.08
# The percentiles a latency curve draws: (curve row column, label).
CURVE_PERCENTILES = (("p50_us", "p50"), ("p99_us", "p99"), ("p999_us", "p99.9"))


def percentile_curve(histogram: Histogram, steps: int = 160) -> tuple[list[float], list[float]]:
    """(1/(1-p), latency µs) from p = 0 up to the last sample's quantile, 1 - 1/count."""
    top = math.log10(max(histogram.count, 2))
    xs, ys = [], []
    for exponent in np.linspace(0, top, steps):
        x = 10 ** exponent
        q = 1 - 1 / x
        value = histogram.value_at_quantile(q) / 1000
        if xs and x <= xs[-1]:
            continue
        xs.append(x)
        ys.append(value)
    return xs, ys


def _percentile_axis(axis: Axes, top: float) -> None:
    """The x axis of a percentile distribution: 1/(1-p) on a log axis, labelled by p."""
    axis.set_xscale("log")
    ticks = [(x, text) for x, text in PERCENTILE_TICKS if x <= top * 1.5]
    axis.set_xticks([x for x, _ in ticks])
    axis.set_xticklabels([text for _, text in ticks], fontsize=8)
    axis.minorticks_off()
    axis.set_xlim(1, top * 1.5)
    axis.set_xlabel("percentile (axis: 1/(1-p), log)")


def _files_by_point(points: pd.DataFrame) -> dict[tuple, list[str]]:
    if "histogram" not in points:
        return {}
    measured = whole_points(points)
    measured = measured[measured["status"] == "ok"]
    return {key: list(group["histogram"].dropna()) for key, group in
            measured.groupby(list(POINT_VARIABLES), sort=False, dropna=False)}


def percentile_figure(run_dir: Path, points: pd.DataFrame, table: pd.DataFrame, sweep: str,
                      meta: dict | None = None) -> Figure | None:
    """The sweep's percentile distributions, or None without histograms."""
    files = _files_by_point(points)
    if not files:
        return None
    curves = {}
    for index, row in table.iterrows():
        key = tuple(row[c] for c in POINT_VARIABLES)
        histogram = histograms.merged(run_dir, files.get(key, []))
        if histogram is not None:
            curves[index] = histogram
    if not curves:
        return None
    drawn = table.loc[list(curves)]
    chosen = panels(drawn, extra=("threads",))
    figure, axes = figure_grid(len(chosen), width=5.8, height=4.2)
    handles: dict[str, Line2D] = {}
    slo = (meta or {}).get("sweeps", {}).get(sweep, {}).get("latency_slo_us")
    top = 1
    for axis, (title, panel) in zip(axes, chosen):
        columns = [c for c in line_columns(panel, panel_columns(drawn)) if c != "threads"]
        for label, style, gid, rows in lines_of(panel, columns):
            for index in rows.index:
                xs, ys = percentile_curve(curves[index])
                top = max(top, xs[-1])
                axis.plot(xs, ys, color=style.colour, linestyle=style.linestyle, gid=gid,
                          label=label)
                # One marker at the tail says which line is which in greyscale too.
                axis.plot([xs[-1]], [ys[-1]], linestyle="none", marker=style.marker,
                          color=style.colour, gid=gid,
                          markerfacecolor="white" if rows.loc[index, "client_bound"]
                          else style.colour)
            handles.setdefault(label, Line2D([], [], color=style.colour, marker=style.marker,
                                             linestyle=style.linestyle, label=label))
        if slo:
            axis.axhline(slo, color=palette.REFERENCE_LINE, linestyle="-.", linewidth=1,
                         gid="reference")
        axis.set_title(title or sweep, fontsize=9)
        axis.set_yscale("log")
        axis.margins(y=MARGIN)
        palette.latency_axis(axis)
        axis.set_ylabel("latency (merged histogram)")
        axis.grid(alpha=0.3, which="major")
    for axis in axes[:len(chosen)]:
        _percentile_axis(axis, top)
    entries = list(handles.values())
    if slo:
        entries.append(Line2D([], [], color=palette.REFERENCE_LINE, linestyle="-.",
                              label=f"SLO {palette.format_latency_us(slo)}"))
    if drawn["client_bound"].any():
        entries.append(Line2D([], [], color=palette.NEUTRAL, marker="o", linestyle="none",
                              markerfacecolor="white", label=palette.CLIENT_BOUND_TEXT))
    figure.legend(handles=entries, loc="lower center", ncol=min(4, len(entries)), fontsize=8,
                  frameon=False)
    rows = math.ceil(len(entries) / min(4, len(entries)))
    figure.suptitle(f"{sweep}: latency by percentile, closed loop\n(every line of a panel "
                    "at the same threads and connections)", fontsize=10)
    figure.tight_layout(rect=(0, (0.3 * rows + 0.2) / figure.get_figheight(), 1, 0.95))
    return figure


# ----------------------------------------------------------------- open-loop curves


def _known(value: Any) -> bool:
    return value is not None and not pd.isna(value)


def _interval_handle() -> Line2D:
    return Line2D([], [], color=palette.NEUTRAL, linewidth=1, marker="|", markersize=6,
                  label="bars: 95% interval over the repetitions\n(latency: of their "
                        "percentiles, log-t;\nthroughput: of their rates, t;\ncut at the "
                        "panel's edge)")


def _behind_marks(axis: Axes, xs: list[float], ys: list[float], size: float = 7) -> None:
    if xs:
        axis.plot(xs, ys, linestyle="none", marker="x", markersize=size,
                  color=palette.REFERENCE_LINE, markeredgewidth=1.2, gid="behind", zorder=4)


def _curve_intervals(axis: Axes, row: dict, column: str, low: str, high: str, colour: str,
                     gid: str) -> bool:
    """The 95% intervals of one curve point: latency up, throughput across. Each is drawn
    from its own low to high, never re-centred on the merged percentile (which may lie
    outside its repetitions' interval). Whether any was drawn."""
    drawn = False
    x, y = row["achieved_rate"], row[column]
    if _known(row.get(low)) and _known(row.get(high)):
        axis.vlines(x, row[low], row[high], colors=colour, linewidth=1, alpha=0.7, gid=gid)
        drawn = True
    x_low, x_high = row.get("achieved_low"), row.get("achieved_high")
    if _known(x_low) and _known(x_high):
        axis.hlines(y, max(0.0, x_low), x_high, colors=colour, linewidth=1, alpha=0.7, gid=gid)
        drawn = True
    return drawn


def latency_curve_figure(rows: list[dict], title: str = "latency versus load",
                         closed_loop: dict[str, tuple[float, float, float]] | None = None,
                         capped: dict[str, float | None] | None = None) -> Figure:
    """p50/p99/p99.9 against achieved ops/s (open loop), one colour per server, log
    latency, the SLO line; each line follows the offered load upwards, so it bends back
    where a server achieved less than it was offered. Every point carries its 95%
    intervals over the repetitions where the row has them (latency.csv from before they
    were recorded has none); a client-bound point is hollow, one that fell behind its
    schedule crossed. `closed_loop` ({server: (median, low, high)}) adds a strip above
    with each server's closed-loop maximum and its 95% interval; `capped`
    ({server: ops/s}) marks each latency-capped throughput."""
    servers = palette.ordered("server", (r["server"] for r in rows))
    strip = bool(closed_loop)
    figure, axes = plt.subplots(2 if strip else 1, 1, figsize=(10.5, 6 if strip else 4.8),
                                sharex=True, squeeze=False,
                                gridspec_kw={"height_ratios": [1, 4] if strip else [1]})
    axis = axes[-1][0]
    intervals = {column: (low, high) for column, low, high in CURVE_INTERVALS}
    behind_seen = bound_seen = interval_seen = False
    for server in servers:
        style = palette.server(server)
        gid = f"server:{server}"
        mine = sorted((r for r in rows if r["server"] == server),
                      key=lambda r: (r["fraction"], r["offered_rate"]))
        for column, _ in CURVE_PERCENTILES:
            axis.plot([r["achieved_rate"] for r in mine], [r[column] for r in mine],
                      linestyle=PERCENTILE_LINESTYLES[column], color=style.colour, gid=gid)
            for r in mine:
                interval_seen |= _curve_intervals(axis, r, column, *intervals[column],
                                                  style.colour, gid)
            bound = [bool(r.get("client_bound")) for r in mine]
            bound_seen |= any(bound)
            draw_points(axis, [r["achieved_rate"] for r in mine], [r[column] for r in mine],
                        bound, style, gid, size=4.5)
            late = [r for r in mine if r["behind"]]
            behind_seen |= bool(late)
            _behind_marks(axis, [r["achieved_rate"] for r in late], [r[column] for r in late])
    slos = {r.get("latency_slo_us") for r in rows if _known(r.get("latency_slo_us"))}
    for slo in slos:
        axis.axhline(slo, color=palette.REFERENCE_LINE, linestyle="-.", linewidth=1,
                     gid="reference")
    for server, rate in (capped or {}).items():
        if rate is not None:
            axis.axvline(rate, color=palette.server(server).colour, linewidth=1, alpha=0.6,
                         gid="reference")
    if strip:
        top = axes[0][0]
        for position, server in enumerate(servers):
            if server not in closed_loop:
                continue
            median, low, high = closed_loop[server]
            style = palette.server(server)
            if not pd.isna(low):
                top.hlines(position, low, high, color=style.colour, linewidth=2.5,
                           gid=f"server:{server}")
            top.plot([median], [position], linestyle="none", marker=style.marker,
                     color=style.colour, gid=f"server:{server}")
        top.set_yticks(range(len(servers)))
        top.set_yticklabels(servers, fontsize=7)
        top.set_ylim(len(servers) - 0.5, -0.5)
        top.set_title(title + ": closed-loop maximum (95% CI), then open-loop latency",
                      fontsize=10)
        top.grid(axis="x", alpha=0.3)
    else:
        axis.set_title(title, fontsize=10)
    axis.set_yscale("log")
    # The axes span the points, not their intervals: with three repetitions an interval
    # can reach far past anything measured (t(2) = 4.3), and would shrink every curve
    # into a corner. An interval that leaves the panel is cut at its edge.
    values = [r[c] for r in rows for c, _ in CURVE_PERCENTILES if _known(r[c]) and r[c] > 0]
    values += [s for s in slos if s > 0]
    if values:
        low, high = min(values), max(values)
        pad = (high / low) ** MARGIN if high > low else 2.0
        axis.set_ylim(low / pad, high * pad)
    rates = [r["achieved_rate"] for r in rows if _known(r["achieved_rate"])]
    rates += [m for m, _, _ in (closed_loop or {}).values() if _known(m)]
    if rates:
        axis.set_xlim(0, max(rates) * 1.08)
    palette.latency_axis(axis)
    palette.rate_axis(axis, "x")
    axis.set_xlabel("achieved throughput (ops/s, open loop)")
    axis.set_ylabel("latency from intended send time")
    axis.grid(True, which="major", alpha=0.3)
    handles = [Line2D([], [], color=palette.server(s).colour, marker=palette.server(s).marker,
                      label=s) for s in servers]
    handles += [Line2D([], [], color=palette.NEUTRAL, linestyle=PERCENTILE_LINESTYLES[c],
                       label=label) for c, label in CURVE_PERCENTILES]
    handles += [Line2D([], [], color=palette.REFERENCE_LINE, linestyle="-.",
                       label=f"SLO p99 < {palette.format_latency_us(s)}") for s in slos]
    if capped and any(v is not None for v in capped.values()):
        handles.append(Line2D([], [], color=palette.NEUTRAL, linewidth=1, alpha=0.6,
                              label="vertical: latency-capped throughput\n(p99 under the SLO)"))
    if interval_seen:
        handles.append(_interval_handle())
    if bound_seen:
        handles.append(client_bound_handle())
    if behind_seen:
        handles.append(Line2D([], [], color=palette.REFERENCE_LINE, marker="x",
                              linestyle="none", label=BEHIND_TEXT))
    axis.legend(handles=handles, fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1),
                frameon=False)
    figure.tight_layout()
    return figure


def write_latency_curve(rows: list[dict], path: Path, title: str = "latency versus load",
                        closed_loop: dict[str, tuple[float, float, float]] | None = None) -> Path:
    figure = latency_curve_figure(rows, title, closed_loop)
    figure.savefig(path)
    plt.close(figure)
    return Path(path)


def open_loop_percentile_figure(run_dir: Path, rows: Iterable[dict], title: str) -> Figure | None:
    """The percentile distributions of one curve's open-loop runs (each row's merged
    histogram): a panel per fraction of the closed-loop maximum, a line per server, every
    panel on the same latency axis so that the load's effect reads across; None when no
    row's kvlab-load file is there."""
    curves = []
    for row in rows:
        histogram = histograms.merged(run_dir, [row.get("histogram") or ""])
        if histogram is not None:
            curves.append((row, histogram))
    if not curves:
        return None
    fractions = sorted({row["fraction"] for row, _ in curves})
    columns = min(3, len(fractions))
    count = math.ceil(len(fractions) / columns)
    figure, grid = plt.subplots(count, columns, figsize=(5.2 * columns, 3.9 * count + 0.8),
                                sharey=True, squeeze=False)
    axes = list(grid.flat)
    for axis in axes[len(fractions):]:
        axis.set_visible(False)
    slo = next((r["latency_slo_us"] for r, _ in curves if _known(r.get("latency_slo_us"))),
               None)
    top, bound_seen, behind_seen = 1.0, False, False
    servers = palette.ordered("server", (row["server"] for row, _ in curves))
    for axis, fraction in zip(axes, fractions):
        offered = []
        for server in servers:
            for row, histogram in curves:
                if row["server"] != server or row["fraction"] != fraction:
                    continue
                style = palette.server(server)
                gid = f"server:{server}"
                xs, ys = percentile_curve(histogram)
                top = max(top, xs[-1])
                axis.plot(xs, ys, color=style.colour, gid=gid)
                bound = bool(row.get("client_bound"))
                bound_seen |= bound
                draw_points(axis, [xs[-1]], [ys[-1]], [bound], style, gid, size=5)
                if row["behind"]:
                    behind_seen = True
                    _behind_marks(axis, [xs[-1]], [ys[-1]])
                offered.append(Line2D([], [], color=style.colour, label=f"{server} "
                                      f"{palette.format_rate(row['offered_rate'])}/s"))
        if slo:
            axis.axhline(slo, color=palette.REFERENCE_LINE, linestyle="-.", linewidth=1,
                         gid="reference")
        axis.set_title(f"offered {fraction:.0%} of each server's closed-loop maximum",
                       fontsize=9)
        # Lower right: a percentile distribution rises to the right, so it stays clear.
        axis.legend(handles=offered, title="offered", title_fontsize=7, fontsize=7,
                    loc="lower right", frameon=False)
        axis.grid(alpha=0.3, which="major")
    axes[0].set_yscale("log")
    axes[0].margins(y=MARGIN)
    for axis in axes[:len(fractions)]:
        palette.latency_axis(axis)
        _percentile_axis(axis, top)
    for row_axes in grid:
        row_axes[0].set_ylabel("latency from intended send time")
    entries = [Line2D([], [], color=palette.server(s).colour, marker=palette.server(s).marker,
                      label=s) for s in servers]
    if slo:
        entries.append(Line2D([], [], color=palette.REFERENCE_LINE, linestyle="-.",
                              label=f"SLO {palette.format_latency_us(slo)}"))
    if bound_seen:
        entries.append(client_bound_handle())
    if behind_seen:
        entries.append(Line2D([], [], color=palette.REFERENCE_LINE, marker="x",
                              linestyle="none", label=BEHIND_TEXT))
    per_row = min(4, len(entries))
    figure.legend(handles=entries, loc="lower center", ncol=per_row, fontsize=8, frameon=False)
    lines = math.ceil(len(entries) / per_row)
    figure.suptitle(f"{title}: latency by percentile, open loop (merged histogram of the "
                    "repetitions)")
    figure.tight_layout(rect=(0, (0.3 * lines + 0.2) / figure.get_figheight(), 1, 0.95))
    return figure


def _closed_loop(table: pd.DataFrame, key: tuple) -> dict:
    sweep, command, transport, client, pipeline, threads = key
    if table is None or table.empty:
        return {}
    mine = table[(table["sweep"] == sweep) & (table["command"] == command)
                 & (table["transport"] == transport) & (table["client"] == client)
                 & (table["pipeline"] == int(pipeline)) & (table["threads"] == int(threads))]
    return {r["server"]: (r["median"], r["low"], r["high"]) for _, r in mine.iterrows()}


def curve_figures(run_dir: Path, table: pd.DataFrame) -> Iterator[tuple[str, Figure]]:
    """(stem, figure) per open-loop curve group of latency.csv: its curve, then its
    percentile distributions where the run kept kvlab-load's files."""
    path = Path(run_dir) / "latency.csv"
    if not path.exists():
        return
    for key, group in curve_groups(load_curve_rows(path)).items():
        sweep, command = key[0], key[1]
        capped = latency_capped_throughput(group, group[0]["latency_slo_us"])
        figure = latency_curve_figure(group, f"{sweep} {command.upper()}",
                                      _closed_loop(table, key),
                                      {s: e["capped"] for s, e in capped.items()})
        yield f"{sweep}-{command}-latency-curve", figure
        figure = open_loop_percentile_figure(run_dir, group, f"{sweep} {command.upper()}")
        if figure is not None:
            yield f"{sweep}-{command}-open-loop-percentiles", figure
