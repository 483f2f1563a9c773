"""The YCSB figure, plots/ycsb.png (and .svg): one row per setup of the run's YCSB points
(report_ycsb.SETUP). Left, each server's throughput by workload (load, A..F) as grouped
bars, median with its 95% interval, on a log axis (a scan workload runs two orders of
magnitude fewer operations than a read workload); right, each server against
redis-server per workload, per second of server CPU (what an operation costs it, the
ratio that still separates servers when the load generator is saturated): the declared
ratio with its 95% interval (ratios.csv), or where none was declared the ratio of the
medians, drawn without an interval. Colours and markers are the palette's, keyed by
server name; a client-bound bar is hollow.
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
import pandas as pd  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from . import palette  # noqa: E402
from .report import measured_only, point_table  # noqa: E402
from .report_ycsb import (PER_CPU, SETUP, declared_ratio, reference_server,  # noqa: E402
                          workload_of, ycsb_rows)
from ..measures.declared_ratios import point_label  # noqa: E402
from ..running.results import load_meta, load_points  # noqa: E402

MAX_SETUPS = 4
BAR_GROUP_WIDTH = 0.8


def _setup_title(setup: dict) -> str:
    return (f"{setup['sweep']}: {setup['client']} P{setup['pipeline']} T{setup['threads']}, "
            f"{int(setup['keys']):,} records, {setup['key_dist']}")


def _throughput_panel(axis: Axes, group: pd.DataFrame, servers: list[str],
                      workloads: list[str]) -> None:
    width = BAR_GROUP_WIDTH / max(1, len(servers))
    for i, server in enumerate(servers):
        look = palette.server(server)
        for j, workload in enumerate(workloads):
            row = group[(group["server"] == server) & (group["command"] == f"ycsb:{workload}")]
            if row.empty or pd.isna(row.iloc[0]["median"]):
                continue
            r = row.iloc[0]
            x = j - BAR_GROUP_WIDTH / 2 + (i + 0.5) * width
            bound = bool(r["client_bound"])
            axis.bar(x, r["median"], width * 0.9, color="white" if bound else look.colour,
                     edgecolor=look.colour, linewidth=1.2, hatch=look.hatch)
            if not (math.isnan(r["low"]) or math.isnan(r["high"])):
                low, high = max(r["low"], r["median"] * 1e-3), r["high"]
                axis.errorbar(x, r["median"], yerr=[[r["median"] - low], [high - r["median"]]],
                              color=palette.NEUTRAL, capsize=2, linewidth=0.8)
    axis.set_xticks(range(len(workloads)), workloads)
    axis.set_yscale("log")
    medians = group["median"].dropna()
    if not medians.empty and medians.min() > 0:
        axis.set_ylim(bottom=medians.min() / 5)  # an interval reaching 0 must not set the axis
    palette.rate_axis(axis)
    axis.set_xlabel("YCSB workload")
    axis.set_ylabel("operations/s (median, 95% CI)")


def _ratio_panel(axis: Axes, group: pd.DataFrame, servers: list[str], workloads: list[str],
                 reference: str, ratios: pd.DataFrame | None, meta: dict) -> bool:
    others = [s for s in servers if s != reference]
    width = BAR_GROUP_WIDTH / max(1, len(others))
    drawn, lows, highs = False, [1.0], [1.0]
    for i, server in enumerate(others):
        look = palette.server(server)
        for j, workload in enumerate(workloads):
            command = f"ycsb:{workload}"
            a = group[(group["server"] == server) & (group["command"] == command)]
            b = group[(group["server"] == reference) & (group["command"] == command)]
            if a.empty or b.empty:
                continue
            setup = {k: a.iloc[0][k] for k in SETUP}
            label = point_label({**setup, "server": server, "command": command}, "server")
            declared = declared_ratio(ratios, meta, server, reference, PER_CPU, command, label)
            x = j - BAR_GROUP_WIDTH / 2 + (i + 0.5) * width
            if declared is not None and not pd.isna(declared["ratio"]):
                ratio, low, high = declared["ratio"], declared["low"], declared["high"]
            else:
                cost_a = a.iloc[0].get("server_cpu_us_per_op")
                cost_b = b.iloc[0].get("server_cpu_us_per_op")
                if any(c is None or pd.isna(c) or c <= 0 for c in (cost_a, cost_b)):
                    continue
                ratio, low, high = cost_b / cost_a, math.nan, math.nan
            if not math.isnan(low):
                axis.errorbar(x, ratio, yerr=[[ratio - low], [high - ratio]], fmt="none",
                              color=look.colour, capsize=2, linewidth=1)
                lows.append(low)
                highs.append(high)
            axis.plot(x, ratio, marker=look.marker, color=look.colour, linestyle="none",
                      markerfacecolor=look.colour if not math.isnan(low) else "white")
            lows.append(ratio)
            highs.append(ratio)
            drawn = True
    axis.axhline(1.0, color=palette.REFERENCE_LINE, linewidth=0.8)
    axis.set_yscale("log")
    low, high = min(lows) / 1.1, max(highs) * 1.1
    axis.set_ylim(low, high)
    ticks = palette.ratio_ticks(low, high)
    axis.set_yticks(ticks, [f"{t:g}" for t in ticks])
    axis.minorticks_off()
    axis.set_xticks(range(len(workloads)), workloads)
    axis.set_xlabel("YCSB workload")
    axis.set_ylabel(f"ops per server CPU second, vs {reference}")
    return drawn


def ycsb_figure(table: pd.DataFrame, run_dir: Path, meta: dict) -> Figure | None:
    """The figure, or None when the run measured no YCSB workload."""
    rows = ycsb_rows(measured_only(table))
    if rows.empty:
        return None
    path = Path(run_dir) / "ratios.csv"
    ratios = pd.read_csv(path) if path.exists() else None
    setups = list(rows.groupby(list(SETUP), sort=False, dropna=False))[:MAX_SETUPS]
    servers = palette.ordered("server", rows["server"])
    reference = reference_server(meta, servers)
    columns = 2 if reference is not None and len(servers) > 1 else 1
    figure, axes = plt.subplots(len(setups), columns, figsize=(6.5 * columns, 4 * len(setups)),
                                squeeze=False)
    for row_index, (key, group) in enumerate(setups):
        setup = dict(zip(SETUP, key))
        workloads = list(dict.fromkeys(workload_of(c) for c in group["command"]))
        here = [s for s in servers if s in set(group["server"])]
        _throughput_panel(axes[row_index][0], group, here, workloads)
        axes[row_index][0].set_title(_setup_title(setup), fontsize=9)
        if columns == 2:
            _ratio_panel(axes[row_index][1], group, here, workloads, reference, ratios, meta)
            axes[row_index][1].set_title("filled: declared ratio, 95% CI; hollow: medians",
                                         fontsize=9)
    handles = [Patch(facecolor=palette.server(s).colour, edgecolor=palette.server(s).colour,
                     label=s) for s in servers]
    handles.append(Patch(facecolor="white", edgecolor=palette.NEUTRAL,
                         label=palette.CLIENT_BOUND_TEXT))
    figure.legend(handles=handles, loc="lower center", ncol=min(4, len(handles)), fontsize=8,
                  frameon=False)
    figure.suptitle("YCSB core workloads")
    figure.tight_layout(rect=(0, 0.08 + 0.02 * (len(handles) // 4), 1, 0.97))
    return figure


def write_ycsb_plot(run_dir: str | Path) -> list[Path]:
    """plots/ycsb.png and .svg of a run folder; [] when it has no YCSB points."""
    run_dir = Path(run_dir)
    figure = ycsb_figure(point_table(load_points(run_dir), run_dir), run_dir, load_meta(run_dir))
    if figure is None:
        return []
    out_dir = run_dir / "plots"
    out_dir.mkdir(exist_ok=True)
    written = []
    for suffix in ("png", "svg"):
        path = out_dir / f"ycsb.{suffix}"
        figure.savefig(path, dpi=100)
        written.append(path)
    plt.close(figure)
    return written
