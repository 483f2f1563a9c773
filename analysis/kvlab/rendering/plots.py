"""The drawing shared by a run's plots, and its throughput and latency figures. Which
figures a run has, and the files they go to (plots/*.png and *.svg, run_plots.py), in the
order a reader needs them:

1. verdicts.png — every declared ratio as a forest plot (plots_verdicts.py);
2. seed1-ember-pr50.png, seed2-<sweep>.png — ours beside the seeds' published numbers
   (plots_seeds.py);
3. stages.png — where a request's time goes inside the server, one stacked bar per side
   of each declared comparison (plots_stages.py);
4. per sweep: <sweep>-throughput.png (ops/s against client threads, 95% CI) and
   <sweep>-latency.png (p50 and p99), <sweep>-percentiles.png where kvlab-load wrote
   histograms, <sweep>-<command>-latency-curve.png for open-loop curves
   (plots_latency.py).

Each per-sweep figure has one panel per combination of the variables that are not lines
(transport, I/O model, command, keys, ...); a line is one server × client × loadgen ×
nodelay combination, and every other variable that varies splits lines too, so no line
ever joins two points measured at the same x. A panel with one thread count is a bar
plot, not a line. Colours and markers are the palette's (palette.py), keyed by name;
client-bound points are hollow.
"""

from __future__ import annotations

import math
import numbers
from typing import Iterable

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
import pandas as pd  # noqa: E402
from matplotlib.artist import Artist  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from . import palette  # noqa: E402
from ..schema.specs import POINT_VARIABLES  # noqa: E402

# The variables a line stands for, in the order its label names them.
LINE_VARIABLES = ("server", "client", "loadgen", "nodelay")
# Transports differ by orders of magnitude (a remote link's round trip against a Unix
# socket's), so each gets its own panel and y scale; so does each client I/O model, which
# is a different experiment, never a point on the same line.
PANEL_VARIABLES = ("transport", "io", "command", "ratio", "keys", "value_size", "pipeline",
                   "connections", "key_dist")
MAX_PANELS = 12


def _varying(frame: pd.DataFrame, columns: Iterable[str]) -> list[str]:
    return [c for c in columns if c in frame and frame[c].nunique(dropna=False) > 1]


def _by(columns: list[str]) -> str | list[str]:
    """A groupby key that yields scalars for one column, tuples for several."""
    return columns[0] if len(columns) == 1 else columns


def _identity(frame: pd.DataFrame) -> list[str]:
    return _varying(frame, LINE_VARIABLES) or ["server"]


def panel_columns(frame: pd.DataFrame) -> list[str]:
    """Variables that split a sweep into panels. A variable fixed by a line's own
    identity (a shared client always has one connection, a pooled one eight) would put
    every line in a panel of its own, so it does not split."""
    lines = frame.groupby(_by(_identity(frame)), sort=False)
    return [c for c in _varying(frame, PANEL_VARIABLES) if lines[c].nunique().max() > 1]


def line_columns(frame: pd.DataFrame, panels: list[str]) -> list[str]:
    """Everything that varies inside a panel except the x (threads): one line each, so a
    line holds at most one point per thread count."""
    rest = [c for c in POINT_VARIABLES if c not in ("threads", "sweep") and c not in panels]
    return _identity(frame) + [c for c in _varying(frame, rest) if c not in LINE_VARIABLES]


def panels(frame: pd.DataFrame, extra: tuple[str, ...] = ()) -> list[tuple[str, pd.DataFrame]]:
    """[(title, frame)] per combination of the panel variables (and `extra`)."""
    columns = panel_columns(frame) + [c for c in extra if c in frame]
    if not columns:
        return [("", frame)]
    groups = frame.groupby(_by(columns), sort=False)
    out = []
    for key, group in groups:
        key = key if isinstance(key, tuple) else (key,)
        out.append((" ".join(f"{c}={v:,}" if isinstance(v, numbers.Integral)
                             and not isinstance(v, bool) else f"{c}={v}"
                             for c, v in zip(columns, key)), group))
    return out[:MAX_PANELS]


def figure_grid(count: int, width: float = 5.5, height: float = 4.0,
                columns: int = 3) -> tuple[Figure, list[Axes]]:
    columns = 2 if count == 4 and columns > 2 else max(1, min(count, columns))
    rows = math.ceil(count / columns)
    figure, axes = plt.subplots(rows, columns, figsize=(width * columns, height * rows),
                                squeeze=False)
    for axis in axes.flat[count:]:
        axis.set_visible(False)
    return figure, list(axes.flat)


# ----------------------------------------------------------------- one series' look


def series_style(row: pd.Series, columns: list[str]) -> tuple[palette.Style, str]:
    """(style, gid) of one line: the server's colour and marker, or the client strategy's
    where the server is the same for every line; redis-benchmark dotted, nodelay off
    dashed. The gid names whose identity the line wears ("server:redis")."""
    if "server" in columns or "client" not in columns:
        base, gid = palette.server(row["server"]), f"server:{row['server']}"
        if "client" in columns:
            base = palette.Style(base.colour, palette.client(row["client"]).marker)
    else:
        base, gid = palette.client(row["client"]), f"client:{row['client']}"
    linestyle = "-"
    if row.get("nodelay") == "off":
        linestyle = "--"
    if row.get("loadgen") == "redis-benchmark":
        linestyle = ":"
    return palette.Style(base.colour, base.marker, linestyle), gid


def series_label(row: pd.Series, columns: list[str]) -> str:
    words = []
    for column in columns:
        value = row[column]
        words.append(str(value) if column in ("server", "client", "loadgen")
                     else f"{column}={value}")
    return " ".join(words)


def series_order(row: pd.Series, columns: list[str]) -> tuple:
    return (palette.order_key("server", row["server"]), palette.order_key("client", row["client"]),
            series_label(row, columns))


def lines_of(panel: pd.DataFrame,
             columns: list[str]) -> list[tuple[str, palette.Style, str, pd.DataFrame]]:
    """[(label, style, gid, rows sorted by threads)] in the palette's legend order."""
    identity = [c for c in columns if c in LINE_VARIABLES]
    # A variable the line's identity fixes (a shared client's one connection) says nothing
    # more in its label.
    named = identity + [c for c in columns if c not in identity
                        and panel.groupby(_by(identity))[c].nunique().max() > 1]
    out = []
    for _, line in panel.groupby(_by(columns), sort=False, dropna=False):
        first = line.iloc[0]
        style, gid = series_style(first, columns)
        out.append((series_order(first, named), series_label(first, named), style, gid,
                    line.sort_values("threads")))
    return [entry[1:] for entry in sorted(out, key=lambda e: e[0])]


def draw_points(axis: Axes, x: Iterable[float], y: Iterable[float], bound: Iterable[bool],
                style: palette.Style, gid: str, size: float = 6) -> None:
    """Markers of one series: filled, or hollow where the point was client-bound."""
    x, y, bound = list(x), list(y), list(bound)
    filled = [(a, b) for a, b, c in zip(x, y, bound) if not c]
    hollow = [(a, b) for a, b, c in zip(x, y, bound) if c]
    for points, face in ((filled, style.colour), (hollow, "white")):
        if points:
            axis.plot([p[0] for p in points], [p[1] for p in points], linestyle="none",
                      marker=style.marker, markersize=size, color=style.colour,
                      markerfacecolor=face, markeredgewidth=1.4, gid=gid, zorder=3)


def legend_handle(label: str, style: palette.Style, line: bool = True) -> Line2D:
    return Line2D([], [], color=style.colour, marker=style.marker,
                  linestyle=style.linestyle if line else "none", label=label)


def client_bound_handle() -> Line2D:
    return Line2D([], [], color=palette.NEUTRAL, marker="o", markerfacecolor="white",
                  linestyle="none", label=palette.CLIENT_BOUND_TEXT)


def dodge(index: int, count: int) -> float:
    """The factor that moves the index-th of `count` lines a little sideways on the log2
    thread axis, so that their error bars do not hide each other."""
    return 2 ** (0.035 * (index - (count - 1) / 2))


def _thread_axis(axis: Axes, threads: Iterable[float]) -> None:
    axis.set_xscale("log", base=2)
    ticks = sorted({int(t) for t in threads})
    axis.set_xticks(ticks)
    axis.set_xticklabels([str(t) for t in ticks])
    axis.minorticks_off()
    axis.set_xlim(ticks[0] / 1.4, ticks[-1] * 1.4)
    axis.set_xlabel("client threads")


def _bars(axis: Axes, lines: list[tuple[str, palette.Style, str, pd.DataFrame]], value: str,
          low: str | None = None, high: str | None = None) -> None:
    """One bar per series (a panel measured at one thread count): the median with its
    interval; hollow where the point was client-bound."""
    for index, (label, style, gid, rows) in enumerate(lines):
        row = rows.iloc[0]
        bound = bool(row["client_bound"])
        bar = axis.bar(index, row[value], width=0.7, color="white" if bound else style.colour,
                       edgecolor=style.colour, linewidth=1.6, hatch=style.hatch)
        bar.patches[0].set_gid(gid)
        if low is not None and not pd.isna(row[low]):
            axis.errorbar(index, row[value],
                          yerr=[[max(0.0, row[value] - row[low])],
                                [max(0.0, row[high] - row[value])]],
                          fmt="none", ecolor=palette.REFERENCE_LINE, capsize=4)
    axis.set_xticks(range(len(lines)))
    axis.set_xticklabels([label for label, *_ in lines], rotation=30, ha="right", fontsize=8)
    axis.set_xlim(-0.6, len(lines) - 0.4)


def throughput_figure(table: pd.DataFrame, sweep: str) -> Figure:
    chosen = panels(table)
    figure, axes = figure_grid(len(chosen))
    handles: dict[str, Line2D] = {}
    bound_seen, bars_only = False, True
    for axis, (title, panel) in zip(axes, chosen):
        columns = line_columns(panel, panel_columns(table))
        lines = lines_of(panel, columns)
        single_x = panel["threads"].nunique() == 1
        if single_x:
            _bars(axis, lines, "median", "low", "high")
            axis.set_xlabel(f"all at {int(panel['threads'].iloc[0])} client thread(s)")
        for index, (label, style, gid, rows) in enumerate([] if single_x else lines):
            low = (rows["median"] - rows["low"]).fillna(0).clip(lower=0)
            high = (rows["high"] - rows["median"]).fillna(0).clip(lower=0)
            x = rows["threads"] * dodge(index, len(lines))
            axis.errorbar(x, rows["median"], yerr=[low, high], color=style.colour,
                          linestyle=style.linestyle, capsize=3, gid=gid)
            draw_points(axis, x, rows["median"], rows["client_bound"], style, gid)
        for label, style, gid, rows in lines:
            handles.setdefault(label, Patch(facecolor=style.colour, edgecolor=style.colour,
                                            label=label) if single_x
                               else legend_handle(label, style))
        bound_seen |= bool(panel["client_bound"].any())
        bars_only &= single_x
        if not single_x:
            _thread_axis(axis, panel["threads"])
        axis.set_title(title or sweep, fontsize=9)
        axis.set_ylabel("ops/s (median, 95% CI)")
        axis.set_ylim(bottom=0)
        palette.rate_axis(axis)
        axis.grid(alpha=0.3)
    _figure_legend(figure, handles, bound_seen, bars=bars_only)
    figure.suptitle(f"{sweep}: throughput")
    return figure


def latency_figure(table: pd.DataFrame, sweep: str) -> Figure:
    # Points measured by alternation starts have no percentiles (alternated_points.py): a
    # panel of those alone would be an empty log axis.
    table = table[table["p50_us"].notna() | table["p99_us"].notna()]
    chosen = panels(table)
    figure, axes = figure_grid(len(chosen))
    handles: dict[str, Line2D] = {}
    dots_only = True
    for axis, (title, panel) in zip(axes, chosen):
        columns = line_columns(panel, panel_columns(table))
        lines = lines_of(panel, columns)
        single_x = panel["threads"].nunique() == 1
        dots_only &= single_x
        for index, (label, style, gid, rows) in enumerate(lines):
            handles.setdefault(label, legend_handle(label, style, line=False))
            for column, offset, size in (("p50_us", -0.12, 6), ("p99_us", 0.12, 9)):
                mine = rows[rows[column].notna()]
                if single_x:
                    draw_points(axis, [index + offset] * len(mine), mine[column],
                                mine["client_bound"], style, gid, size)
                    continue
                axis.plot(mine["threads"], mine[column], color=style.colour, gid=gid,
                          linestyle="-" if column == "p50_us" else "--")
                draw_points(axis, mine["threads"], mine[column], mine["client_bound"], style,
                            gid, size)
        if single_x:
            axis.set_xticks(range(len(lines)))
            axis.set_xticklabels([label for label, *_ in lines], rotation=30, ha="right",
                                 fontsize=8)
            axis.set_xlim(-0.6, len(lines) - 0.4)
            axis.set_xlabel(f"all at {int(panel['threads'].iloc[0])} client thread(s)")
        else:
            _thread_axis(axis, panel["threads"])
        axis.set_title(title or sweep, fontsize=9)
        axis.set_ylabel("latency (closed loop)")
        axis.set_yscale("log")
        # Room above and below for the large p99 markers, which the edge would cut.
        axis.margins(y=0.12)
        palette.latency_axis(axis)
        axis.grid(alpha=0.3, which="major")
    if dots_only:
        extra = [Line2D([], [], color=palette.NEUTRAL, marker="o", markersize=5,
                        linestyle="none", label="small marker: p50"),
                 Line2D([], [], color=palette.NEUTRAL, marker="o", markersize=9,
                        linestyle="none", label="large marker: p99")]
    else:
        extra = [Line2D([], [], color=palette.NEUTRAL, linestyle="-", label="p50 (solid, small)"),
                 Line2D([], [], color=palette.NEUTRAL, linestyle="--",
                        label="p99 (dashed, large)")]
    _figure_legend(figure, handles, table["client_bound"].any(), extra)
    figure.suptitle(f"{sweep}: latency p50 and p99 (closed loop)")
    return figure


def _figure_legend(figure: Figure, handles: dict, client_bound: bool,
                   extra: Iterable[Artist] = (), bars: bool = False) -> None:
    """One legend for every panel of the figure, below them, in the palette's order."""
    entries = list(handles.values()) + list(extra)
    if client_bound:
        entries.append(Patch(facecolor="white", edgecolor=palette.NEUTRAL,
                             label=palette.CLIENT_BOUND_TEXT) if bars
                       else client_bound_handle())
    columns = min(4, max(1, len(entries)))
    rows = math.ceil(len(entries) / columns)
    height = figure.get_figheight()
    figure.legend(handles=entries, loc="lower center", ncol=columns, fontsize=8, frameon=False)
    figure.tight_layout(rect=(0, min(0.45, (0.3 * rows + 0.2) / height), 1, 0.95))
