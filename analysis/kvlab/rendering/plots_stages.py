"""plots/stages.png: where a request's time goes inside the server, for each pair of
points a declared comparison sets against each other (report_stages.comparison_pairs):
one stacked bar per side, in µs per sampled request (left) and as shares of the stages'
sum (right), every stage in its palette colour (palette.STAGES) in every bar. A side
without figures (too few samples, or a server without INFO stages) gets its reason
written where its bar would stand, never a bar drawn from noise."""

from __future__ import annotations

import math
import textwrap

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from . import palette
from .plots import plt  # plots chooses the backend
from .report_stages import MIN_SAMPLES, STAGES, Pair, Side, comparison_pairs, pair_title


def _stacked(axis: Axes, x: float, side: Side, shares: bool) -> None:
    bottom = 0.0
    for stage in STAGES:
        if stage not in side.us:
            continue
        height = side.share(stage) if shares else side.us[stage]
        look = palette.stage(stage)
        bar = axis.bar(x, height, bottom=bottom, width=0.6, color=look.colour,
                       edgecolor="white", linewidth=0.6, hatch=look.hatch)
        bar.patches[0].set_gid(f"stage:{stage}")
        bottom += height


def _panel(axis: Axes, pair: Pair, shares: bool) -> None:
    sides = [pair.a, pair.b]
    top = 1.0 if shares else max([s.sum_us for s in sides if s.shown] or [1.0])
    for x, side in enumerate(sides):
        if side.shown:
            _stacked(axis, x, side, shares)
            if not shares:
                axis.annotate(f"{side.sum_us:.1f} µs\nn={side.samples}", (x, side.sum_us),
                              xytext=(0, 2), textcoords="offset points", ha="center",
                              va="bottom", fontsize=7)
        else:
            text = side.note if math.isnan(side.usec_per_call) \
                else f"{side.note}: {side.usec_per_call:.2f} µs"
            axis.text(x, top / 2, textwrap.fill(text, 22), ha="center", va="center",
                      fontsize=7, color=palette.NEUTRAL)
    axis.set_xticks(range(len(sides)))
    axis.set_xticklabels([s.server for s in sides], fontsize=8)
    for label, side in zip(axis.get_xticklabels(), sides):
        label.set_color(palette.server(side.server.split(" ")[0]).colour)
    axis.set_xlim(-0.6, len(sides) - 0.4)
    axis.set_ylim(0, top * (1.05 if shares else 1.25))
    axis.grid(axis="y", alpha=0.3)
    if shares:
        axis.yaxis.set_major_formatter(lambda v, _p: f"{100 * v:.0f}%")
        axis.set_ylabel("share of the stages' sum")
    else:
        axis.set_ylabel("µs per sampled request")


def pairs_figure(pairs: list[Pair], title: str = "") -> Figure | None:
    """One row of two panels (µs, shares) per pair; None when no side has figures."""
    if not any(p.a.shown or p.b.shown for p in pairs):
        return None
    figure, axes = plt.subplots(len(pairs), 2, figsize=(10, 2.9 * len(pairs) + 1.2),
                                squeeze=False)
    for row, pair in zip(axes, pairs):
        _panel(row[0], pair, shares=False)
        _panel(row[1], pair, shares=True)
        row[0].set_title(pair_title(pair), fontsize=9, loc="left")
    handles = [Patch(facecolor=palette.stage(s).colour, edgecolor="white",
                     hatch=palette.stage(s).hatch, label=s) for s in STAGES]
    figure.legend(handles=handles, loc="lower center", ncol=len(STAGES), fontsize=8,
                  frameon=False)
    figure.suptitle((f"{title}: " if title else "") + "where a request's time goes inside "
                    "the server (INFO stages)\nmedians over rounds of the mean per sampled "
                    f"request; latency, not CPU; no bar under {MIN_SAMPLES} samples",
                    fontsize=10)
    figure.tight_layout(rect=(0, 0.5 / figure.get_figheight(), 1, 1))
    return figure


def stages_figure(points: pd.DataFrame, table: pd.DataFrame, meta: dict) -> Figure | None:
    """plots/stages.png of a run: every declared pair's stages; None when the run declared
    no comparison or none of its sides has figures."""
    return pairs_figure(comparison_pairs(points, table, meta), meta.get("experiment", ""))
