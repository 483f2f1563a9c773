"""Latency the way the field draws it:

- <sweep>-percentiles.png: the percentile distribution of each point's merged histogram
  (its rounds' kvlab-load histograms added bucket by bucket, histograms.py), latency
  against 1/(1 - p) on a log axis as HdrHistogram plots it, one line per server; one
  panel per set of variables that fixes the offered load (the same threads, pipeline
  and connections), so every line of a panel was offered the same load;
- <sweep>-<command>-latency-curve.png: open-loop p50/p99/p99.9 against the achieved
  throughput (latency.csv, running/latency.py), one colour per server, with the SLO line
  and, above it, each server's closed-loop maximum with its 95% interval.

A run whose histograms were left out (results/sample keeps none) has no percentile
figure. Colours and markers are the palette's.
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from . import palette
from .plots import figure_grid, line_columns, lines_of, panel_columns, panels
from .report_latency import curve_groups
from ..histograms import Histogram, histograms_of
from ..running.experiment import POINT_VARIABLES
from ..running.latency import CURVE_PERCENTILES, latency_capped_throughput, load_curve_rows
from ..running.results import whole_points

# Ticks of the 1/(1-p) axis, labelled by percentile.
PERCENTILE_TICKS = ((2, "50%"), (10, "90%"), (100, "99%"), (1000, "99.9%"),
                    (10_000, "99.99%"), (100_000, "99.999%"), (1_000_000, "99.9999%"))


def merged_histogram(run_dir: Path, files) -> Histogram | None:
    merged = Histogram()
    for name in files:
        path = Path(run_dir) / str(name)
        if not isinstance(name, str) or not name or not path.is_file():
            continue
        for data in histograms_of(path):
            merged.add(data)
    return merged if merged.count else None


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


def _files_by_point(points: pd.DataFrame) -> dict[tuple, list[str]]:
    if "histogram" not in points:
        return {}
    measured = whole_points(points)
    measured = measured[measured["status"] == "ok"]
    return {key: list(group["histogram"].dropna()) for key, group in
            measured.groupby(list(POINT_VARIABLES), sort=False, dropna=False)}


def percentile_figure(run_dir: Path, points: pd.DataFrame, table: pd.DataFrame, sweep: str,
                      meta: dict | None = None):
    """The sweep's percentile distributions, or None without histograms."""
    files = _files_by_point(points)
    if not files:
        return None
    curves = {}
    for index, row in table.iterrows():
        key = tuple(row[c] for c in POINT_VARIABLES)
        histogram = merged_histogram(run_dir, files.get(key, []))
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
        palette.latency_axis(axis)
        axis.set_ylabel("latency (merged histogram)")
        axis.grid(alpha=0.3, which="major")
    for axis in axes[:len(chosen)]:
        axis.set_xscale("log")
        ticks = [(x, text) for x, text in PERCENTILE_TICKS if x <= top * 1.5]
        axis.set_xticks([x for x, _ in ticks])
        axis.set_xticklabels([text for _, text in ticks], fontsize=8)
        axis.minorticks_off()
        axis.set_xlim(1, top * 1.5)
        axis.set_xlabel("percentile (axis: 1/(1-p), log)")
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
    figure.suptitle(f"{sweep}: latency by percentile (closed loop; one panel per offered "
                    "load)")
    figure.tight_layout(rect=(0, (0.3 * rows + 0.2) / figure.get_figheight(), 1, 0.95))
    return figure


# ----------------------------------------------------------------- open-loop curves


def latency_curve_figure(rows, title: str = "latency versus load", closed_loop=None,
                         capped=None):
    """p50/p99/p99.9 against achieved ops/s (open loop), one colour per server, log
    latency, the SLO line; each line follows the offered load upwards, so it bends back
    where a server achieved less than it was offered. `closed_loop` ({server: (median,
    low, high)}) adds a strip above with each server's closed-loop maximum and its 95%
    interval; `capped` ({server: ops/s}) marks each latency-capped throughput."""
    servers = palette.ordered("server", (r["server"] for r in rows))
    strip = bool(closed_loop)
    figure, axes = plt.subplots(2 if strip else 1, 1, figsize=(10.5, 6 if strip else 4.8),
                                sharex=True, squeeze=False,
                                gridspec_kw={"height_ratios": [1, 4] if strip else [1]})
    axis = axes[-1][0]
    styles = {"p50_us": "-", "p99_us": "--", "p999_us": ":"}
    behind_seen = False
    for server in servers:
        style = palette.server(server)
        gid = f"server:{server}"
        mine = sorted((r for r in rows if r["server"] == server),
                      key=lambda r: (r["fraction"], r["offered_rate"]))
        for column, _ in CURVE_PERCENTILES:
            xs = [r["achieved_rate"] for r in mine]
            ys = [r[column] for r in mine]
            axis.plot(xs, ys, linestyle=styles[column], color=style.colour, gid=gid)
            for r in mine:
                behind_seen |= bool(r["behind"])
                axis.plot([r["achieved_rate"]], [r[column]], linestyle="none",
                          marker=style.marker, markersize=4, color=style.colour, gid=gid,
                          markerfacecolor="white" if r["behind"] else style.colour)
    slos = {r.get("latency_slo_us") for r in rows if r.get("latency_slo_us")
            and not pd.isna(r.get("latency_slo_us"))}
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
    palette.latency_axis(axis)
    palette.rate_axis(axis, "x")
    axis.set_xlim(left=0)
    axis.set_xlabel("achieved throughput (ops/s, open loop)")
    axis.set_ylabel("latency from intended send time")
    axis.grid(True, which="major", alpha=0.3)
    handles = [Line2D([], [], color=palette.server(s).colour, marker=palette.server(s).marker,
                      label=s) for s in servers]
    handles += [Line2D([], [], color=palette.NEUTRAL, linestyle=styles[c], label=label)
                for c, label in CURVE_PERCENTILES]
    handles += [Line2D([], [], color=palette.REFERENCE_LINE, linestyle="-.",
                       label=f"SLO p99 < {palette.format_latency_us(s)}") for s in slos]
    if capped and any(v is not None for v in capped.values()):
        handles.append(Line2D([], [], color=palette.NEUTRAL, linewidth=1, alpha=0.6,
                              label="vertical: latency-capped throughput\n(p99 under the SLO)"))
    if behind_seen:
        handles.append(Line2D([], [], color=palette.NEUTRAL, marker="o", linestyle="none",
                              markerfacecolor="white", label="hollow: fell behind its schedule"))
    axis.legend(handles=handles, fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1),
                frameon=False)
    figure.tight_layout()
    return figure


def write_latency_curve(rows, path: Path, title: str = "latency versus load",
                        closed_loop=None) -> Path:
    figure = latency_curve_figure(rows, title, closed_loop)
    figure.savefig(path)
    plt.close(figure)
    return Path(path)


def _closed_loop(table: pd.DataFrame, key: tuple) -> dict:
    sweep, command, transport, client, pipeline, threads = key
    if table is None or table.empty:
        return {}
    mine = table[(table["sweep"] == sweep) & (table["command"] == command)
                 & (table["transport"] == transport) & (table["client"] == client)
                 & (table["pipeline"] == int(pipeline)) & (table["threads"] == int(threads))]
    return {r["server"]: (r["median"], r["low"], r["high"]) for _, r in mine.iterrows()}


def curve_figures(run_dir: Path, table: pd.DataFrame):
    """(stem, figure) per open-loop curve group of latency.csv."""
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
