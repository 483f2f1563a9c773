"""Plots of a run (plots/*.png and *.svg): per sweep, throughput against client
threads with 95% CI bars, and p50/p99 latency against threads.

Each figure has one panel per combination of the variables that are not lines
(command, keys, pipeline, ...); each line is one server × client × transport ×
loadgen × nodelay combination, so engines and strategies read side by side.
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
import pandas as pd  # noqa: E402

from .report_latency import write_latency_plots
from .report import measured_only, point_table  # noqa: E402
from ..running.results import load_points  # noqa: E402

LINE_VARIABLES = ("server", "client", "loadgen", "nodelay")
# Transports differ by orders of magnitude (a remote link's round trip against
# a Unix socket's), so each gets its own panel and y scale.
PANEL_VARIABLES = ("transport", "command", "keys", "value_size", "pipeline", "connections",
                   "key_dist")
MAX_PANELS = 12


def _varying(frame: pd.DataFrame, columns) -> list[str]:
    return [c for c in columns if frame[c].nunique() > 1]


def _label(row, columns) -> str:
    return " ".join(str(row[c]) for c in columns) or "all"


def _line_columns(frame: pd.DataFrame) -> list[str]:
    return _varying(frame, LINE_VARIABLES) or ["server"]


def _panel_columns(frame: pd.DataFrame) -> list[str]:
    """Variables that split a sweep into panels. A variable fixed by a line's own
    identity (a shared client always has one connection, a pooled one eight)
    would put every line in a panel of its own, so it does not split."""
    lines = frame.groupby(_line_columns(frame), sort=False)
    return [c for c in _varying(frame, PANEL_VARIABLES) if lines[c].nunique().max() > 1]


def _panels(frame: pd.DataFrame):
    panel_columns = _panel_columns(frame)
    if not panel_columns:
        return [("", frame)]
    by = panel_columns if len(panel_columns) > 1 else panel_columns[0]
    groups = list(frame.groupby(by, sort=False))
    return [(" ".join(f"{c}={v}" for c, v in zip(panel_columns, key if isinstance(key, tuple)
                                                  else (key,))), group)
            for key, group in groups[:MAX_PANELS]]


def _figure(count: int):
    columns = min(count, 3)
    rows = math.ceil(count / columns)
    figure, axes = plt.subplots(rows, columns, figsize=(5.5 * columns, 4 * rows), squeeze=False)
    for axis in axes.flat[count:]:
        axis.set_visible(False)
    return figure, list(axes.flat)


def _lines(frame: pd.DataFrame):
    line_columns = _line_columns(frame)
    by = line_columns if len(line_columns) > 1 else line_columns[0]
    for _, line in frame.groupby(by, sort=False):
        yield _label(line.iloc[0], line_columns), line.sort_values("threads")


def throughput_figure(table: pd.DataFrame, sweep: str):
    panels = _panels(table)
    figure, axes = _figure(len(panels))
    for axis, (title, panel) in zip(axes, panels):
        for label, line in _lines(panel):
            low = (line["median"] - line["low"]).fillna(0).clip(lower=0)
            high = (line["high"] - line["median"]).fillna(0).clip(lower=0)
            axis.errorbar(line["threads"], line["median"], yerr=[low, high], marker="o",
                          capsize=3, label=label)
            bound = line[line["client_bound"]]
            if not bound.empty:
                axis.scatter(bound["threads"], bound["median"], marker="x", color="black",
                             zorder=3)
        axis.set_title(title or sweep, fontsize=9)
        axis.set_xlabel("client threads")
        axis.set_ylabel("ops/s (median, 95% CI)")
        axis.set_xscale("log", base=2)
        axis.set_ylim(bottom=0)
        axis.grid(alpha=0.3)
        axis.legend(fontsize=7)
    figure.suptitle(f"{sweep}: throughput (x = client-bound)")
    figure.tight_layout()
    return figure


def latency_figure(table: pd.DataFrame, sweep: str):
    panels = _panels(table)
    figure, axes = _figure(len(panels))
    for axis, (title, panel) in zip(axes, panels):
        for label, line in _lines(panel):
            drawn = axis.plot(line["threads"], line["p50_us"], marker="o", label=f"{label} p50")
            axis.plot(line["threads"], line["p99_us"], marker="^", linestyle="--",
                      color=drawn[0].get_color(), label=f"{label} p99")
        axis.set_title(title or sweep, fontsize=9)
        axis.set_xlabel("client threads")
        axis.set_ylabel("latency µs")
        axis.set_xscale("log", base=2)
        axis.set_yscale("log")
        axis.grid(alpha=0.3)
        axis.legend(fontsize=6)
    figure.suptitle(f"{sweep}: latency p50 (solid) and p99 (dashed)")
    figure.tight_layout()
    return figure


def write_plots(run_dir: str | Path) -> list[Path]:
    run_dir = Path(run_dir)
    table = measured_only(point_table(load_points(run_dir), run_dir))
    out_dir = run_dir / "plots"
    out_dir.mkdir(exist_ok=True)
    written = write_latency_plots(run_dir)
    if table.empty:
        return written
    for sweep, frame in table.groupby("sweep", sort=False):
        figures = {"throughput": throughput_figure(frame, sweep)}
        if frame["p50_us"].notna().any():
            figures["latency"] = latency_figure(frame, sweep)
        for kind, figure in figures.items():
            for suffix in ("png", "svg"):
                path = out_dir / f"{sweep}-{kind}.{suffix}"
                figure.savefig(path, dpi=100)
                written.append(path)
            plt.close(figure)
    return written
