"""The run's first figure, verdicts.png: every declared ratio (ratios.csv) as a forest
plot — one row per ratio, its 95% interval on a log axis, the 1.0 line, the seed's ratio
as a grey star — grouped by the comparison (the seed's claim) it tests, with the
verdict written beside each row.

What a row decides is kvlab.measures.ratio_verdicts.decide()'s, the rule the report's verdict
tables use; nothing here compares an interval with 1.0 itself. An interval wears the
colour of the side it puts ahead (palette.py), grey when undecided; a ratio measured
with the load generator saturated is hollow.

The seed's ratio of a row: the comparison's declared seed_ratio; for the Lettuce pair
(shared/pooled on a lettuce-threads sweep) without one, the seed table's own shared/pooled
at the row's transport and thread count (results/reference/lettuce-threads.csv).
"""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from . import palette
from .report_seeds import SEED_TRANSPORT, load_reference
from ..measures.ratio_verdicts import decide_row
from ..running.results import load_table

SEED_NAMES = {"ember-pr50": "seed 1, ember PR #50", "lettuce-threads": "seed 2, Lettuce"}


def load_ratios(run_dir: Path) -> pd.DataFrame | None:
    return load_table(run_dir, "ratios.csv")


def _comparisons(meta: dict) -> dict[str, dict]:
    return {c.get("name"): c for c in meta.get("comparisons", [])}


def _lettuce_seed(point: str, a: str, b: str) -> float | None:
    """shared/pooled (or pooled/shared) in the Lettuce seed's table at the transport and
    thread count a point label names ("lettuce: redis unix P1 T2 keys=1")."""
    if {a, b} != {"shared", "pooled"}:
        return None
    transport = next((t for t in SEED_TRANSPORT if re.search(rf"\b{t}\b", point)), None)
    threads = re.search(r"\bT(\d+)\b", point)
    reference = load_reference("lettuce-threads")
    if transport is None or threads is None or reference is None:
        return None
    rates = {}
    for client in (a, b):
        match = reference[(reference["threads"] == int(threads.group(1)))
                          & (reference["strategy"] == client)
                          & (reference["address"] == SEED_TRANSPORT[transport])]
        if match.empty:
            return None
        rates[client] = float(match.iloc[0]["ops_per_s"])
    return rates[a] / rates[b]


def seed_ratio(row: pd.Series, comparison: dict, meta: dict) -> float | None:
    """The seed's figure for one declared ratio, or None where the seed has none."""
    declared = comparison.get("seed_ratio")
    if declared is not None and not pd.isna(declared):
        return float(declared)
    sweep = meta.get("sweeps", {}).get(comparison.get("sweep"), {})
    if sweep.get("seed") == "lettuce-threads" and comparison.get("by") == "client":
        return _lettuce_seed(str(row["point"]), comparison.get("a", ""), comparison.get("b", ""))
    return None


def _kind(comparison: dict) -> str:
    return "client" if comparison.get("by") == "client" else "server"


def _group_title(name: str, comparison: dict, meta: dict, has_seed: bool) -> str:
    sweep = comparison.get("sweep", "")
    seed = meta.get("sweeps", {}).get(sweep, {}).get("seed")
    title = f"{name} (sweep {sweep}"
    if seed:
        title += f"; {SEED_NAMES.get(seed, seed)}"
    if comparison.get("seed_ratio") is not None:
        title += f": {comparison['seed_ratio']:.2f}"
    elif has_seed:
        title += ": its table's ratio at each row's transport and threads"
    metric = comparison.get("metric")
    if metric and metric != "ops_per_s":
        title += f"; metric {metric}"
    return title + ")"


def _row_label(row: pd.Series) -> str:
    point = str(row["point"])
    point = point.split(": ", 1)[1] if ": " in point else point
    return f"{str(row['test']).upper()}  {point}"


def verdicts_figure(run_dir: Path, meta: dict) -> Figure | None:
    """The forest plot of ratios.csv, or None when the run declared no ratios."""
    ratios = load_ratios(run_dir)
    if ratios is None:
        return None
    comparisons = _comparisons(meta)
    bound = (ratios["client_bound"].astype(str).str.lower() == "true") \
        if "client_bound" in ratios else pd.Series(False, index=ratios.index)
    rows = []        # (y, kind, payload)
    y = 0
    for name in dict.fromkeys(ratios["comparison"]):
        comparison = comparisons.get(name, {"name": name, "a": "A", "b": "B"})
        group = ratios[ratios["comparison"] == name]
        seeds = [seed_ratio(r, comparison, meta) for _, r in group.iterrows()]
        rows.append((y, "title", _group_title(name, comparison, meta,
                                              any(s is not None for s in seeds))))
        y += 1
        for (index, row), seed in zip(group.iterrows(), seeds):
            rows.append((y, "ratio", (row, comparison, seed, bool(bound[index]))))
            y += 1
        y += 0.4
    height = 0.27 * y + 1.6
    figure, axis = plt.subplots(figsize=(15, height))
    finite = ratios[["low", "high", "ratio"]].stack()
    values = [v for v in finite if v > 0]
    values += [payload[2] for _, kind, payload in rows if kind == "ratio" and payload[2]]
    low, high = min(values + [1.0]) / 1.15, max(values + [1.0]) * 1.15
    seen_bound = seen_seed = False
    for position, kind, payload in rows:
        if kind == "title":
            axis.text(-0.28, position, payload, transform=axis.get_yaxis_transform(),
                      ha="left", va="center", fontsize=9, fontweight="bold")
            continue
        row, comparison, seed, client_bound = payload
        a, b = comparison.get("a", "A"), comparison.get("b", "B")
        verdict = decide_row(row, seed, a, b, meta.get("precision"))
        side = {"a": a, "b": b}.get(verdict.ahead)
        style = palette.style(_kind(comparison), side) if side else \
            palette.Style(palette.NEUTRAL, "o")
        gid = f"{_kind(comparison)}:{side}" if side else "undecided"
        if not pd.isna(row["low"]):
            axis.hlines(position, row["low"], row["high"], color=style.colour, linewidth=2.2,
                        gid=gid)
        if not pd.isna(row["ratio"]):
            axis.plot([row["ratio"]], [position], linestyle="none", marker=style.marker,
                      markersize=7, color=style.colour, markeredgewidth=1.4, gid=gid,
                      markerfacecolor="white" if client_bound else style.colour, zorder=3)
        if seed is not None:
            axis.plot([seed], [position], linestyle="none", marker=palette.SEED.marker,
                      markersize=11, color=palette.SEED.colour, markeredgecolor="black",
                      gid="seed", zorder=4)
            seen_seed = True
        seen_bound |= client_bound
        status = f"{row['status']}, {int(row['rounds'])} rounds" \
            if not pd.isna(row["rounds"]) else str(row["status"])
        axis.annotate(f"{verdict.text()}  ({status})", xy=(1.01, position),
                      xycoords=axis.get_yaxis_transform(), va="center", fontsize=8,
                      color=style.colour if side else palette.NEUTRAL)
    axis.axvline(1.0, color=palette.REFERENCE_LINE, linewidth=1, gid="reference")
    axis.set_xscale("log")
    axis.set_xlim(low, high)
    ticks = palette.ratio_ticks(low, high)
    axis.set_xticks(ticks)
    axis.set_xticklabels([f"{t:g}" for t in ticks])
    axis.minorticks_off()
    ratio_rows = [(p, payload[0]) for p, kind, payload in rows if kind == "ratio"]
    axis.set_yticks([p for p, _ in ratio_rows])
    axis.set_yticklabels([_row_label(r) for _, r in ratio_rows], fontsize=8)
    axis.set_ylim(y - 0.4, -1)
    axis.grid(axis="x", alpha=0.3)
    axis.set_xlabel("ratio A/B with its 95% interval (log scale; right of 1.0: A ahead)")
    handles = [Line2D([], [], color=palette.NEUTRAL, linewidth=2.2, marker="o",
                      label="grey: the interval holds 1.0 (undecided)"),
               Line2D([], [], color=palette.server("concurrent").colour, linewidth=2.2,
                      marker="o", label="coloured: the side the interval puts ahead")]
    if seen_seed:
        handles.append(Line2D([], [], linestyle="none", marker=palette.SEED.marker,
                              color=palette.SEED.colour, markeredgecolor="black",
                              label="the seed's ratio"))
    if seen_bound:
        handles.append(Line2D([], [], linestyle="none", marker="o", color=palette.NEUTRAL,
                              markerfacecolor="white",
                              label="hollow: load generator saturated in most rounds"))
    figure.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=8,
                  frameon=False)
    axis.set_title(f"{meta.get('experiment', '')}: declared ratios and what each decides",
                   fontsize=11)
    figure.subplots_adjust(left=0.2, right=0.64, top=1 - 0.5 / height, bottom=1.0 / height)
    return figure
