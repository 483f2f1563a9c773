"""The seeds on the pictures: ours beside the numbers the seed documents published
(results/reference/), each side labelled with the machine it ran on.

- seed1-ember-pr50.png: grouped bars, one panel per test × keys × pipeline; per server
  (in the palette's order) a bar for each of our load generators and thread counts, and
  the seed's published bar beside it where the seed measured that engine.
- seed2-<sweep>.png: the Lettuce seed's 3 × 3 table (unix, tcp, remote × 1, 2, 4
  threads) as bars, our pooled and shared beside the seed's; one row of panels per
  client I/O model, which are two experiments and never share a bar group or a line.

Our bars are hollow where the point was client-bound; the seed's are tinted and
cross-hatched.
"""

from __future__ import annotations

import math
from typing import Iterator

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.colors import to_hex, to_rgb
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from . import palette
from .report_format import find_point, server_cpu_count, server_specs
from .report_seeds import SEED_TRANSPORT, load_reference
from ..running.plan import SEED_SERVER_CPUS

LETTUCE_SEED_MACHINE = ("seed: Lettuce 5.0.3 under JMH on a 4-core machine, TCP_NODELAY off; "
                        "its remote host about 2x slower, ≈ 250 µs away")


def tint(colour: str, amount: float = 0.6) -> str:
    """`colour` mixed with white: the seed's bar of a series we draw in full colour."""
    return to_hex(tuple(c + (1 - c) * amount for c in to_rgb(colour)))


def our_machine(meta: dict) -> str:
    machine = meta.get("machine", {})
    count = server_cpu_count(meta)
    server = f"server on {count} CPU{'s' if count != 1 else ''}" if count else "server unpinned"
    return (f"ours: {machine.get('cpu_model', '?')}, {machine.get('cores', '?')} cores; "
            f"{server} ({meta.get('server_cpus') or 'any'}), load generator on CPU "
            f"{meta.get('harness_cpus') or 'any'}")


def _bar(axis: Axes, x: float, width: float, height: float, colour: str, bound: bool, gid: str,
         hatch: str = "", error: list[list[float]] | None = None,
         text: str | None = None) -> None:
    face = "white" if bound else colour
    edge = colour if bound or not hatch else "white"
    bars = axis.bar(x, height, width=width, color=face, edgecolor=edge, linewidth=1.3,
                    hatch=hatch)
    bars.patches[0].set_gid(gid)
    if bound or hatch:
        # A hatched bar keeps its colour visible as an outline.
        axis.bar(x, height, width=width, color="none", edgecolor=colour, linewidth=1.3)
    if error is not None:
        axis.errorbar(x, height, yerr=error, fmt="none", ecolor=palette.REFERENCE_LINE,
                      capsize=2, linewidth=0.9)
    if text:
        axis.annotate(text, (x, 0), xytext=(0, 2), textcoords="offset points", ha="center",
                      va="bottom", rotation=90, fontsize=6.5, color="black")


def _error(row: pd.Series | None) -> list[list[float]] | None:
    if row is None or pd.isna(row["low"]):
        return None
    return [[max(0.0, row["median"] - row["low"])], [max(0.0, row["high"] - row["median"])]]


# ----------------------------------------------------------------- seed 1


def _ember_reference(reference: pd.DataFrame | None, meta: dict, server: str, command: str,
                     pipeline: int) -> pd.Series | None:
    if reference is None:
        return None
    engine = server_specs(meta).get(server, {}).get("seed_engine")
    if not engine:
        return None
    match = reference[(reference["source"] == "readme-after-pr50")
                      & (reference["test"] == command.upper())
                      & (reference["pipeline"] == pipeline) & (reference["engine"] == engine)]
    return None if match.empty else match.iloc[0]


def _seed_note(reference: pd.DataFrame | None, pipeline: int) -> str:
    if reference is None:
        return ""
    notes = reference[(reference["source"] == "readme-after-pr50")
                      & (reference["pipeline"] == pipeline)]["note"].dropna()
    return notes.iloc[0] if not notes.empty else ""


def ember_figure(table: pd.DataFrame, meta: dict) -> Figure | None:
    """Seed 1 as grouped bars, or None when the run has no ember-pr50 sweep."""
    sweeps = meta.get("sweeps", {})
    mine = table[table["sweep"].map(lambda s: sweeps.get(s, {}).get("seed") == "ember-pr50")]
    if mine.empty:
        return None
    reference = load_reference("ember-pr50")
    panel_keys = sorted(mine.groupby(["pipeline", "command", "keys"]).groups,
                        key=lambda k: (-k[0], k[1] != "set", k[2]))
    columns = 2
    rows = math.ceil(len(panel_keys) / columns)
    figure, axes = plt.subplots(rows, columns, figsize=(9 * columns, 4.2 * rows),
                                squeeze=False)
    for axis in axes.flat[len(panel_keys):]:
        axis.set_visible(False)
    bound_seen = False
    for axis, (pipeline, command, keys) in zip(axes.flat, panel_keys):
        panel = mine[(mine["pipeline"] == pipeline) & (mine["command"] == command)
                     & (mine["keys"] == keys)]
        servers = palette.ordered("server", panel["server"])
        ours = sorted(panel.groupby(["loadgen", "threads"]).groups,
                      key=lambda k: (k[0] != "kvlab-load", k[1]))
        seeds = {s: _ember_reference(reference, meta, s, command, pipeline) for s in servers}
        slots = len(ours) + (1 if any(v is not None for v in seeds.values()) else 0)
        width = 0.8 / slots
        for index, server in enumerate(servers):
            colour = palette.server(server).colour
            for slot, (loadgen, threads) in enumerate(ours):
                row = find_point(panel, server=server, loadgen=loadgen, threads=threads)
                if row is None:
                    continue
                x = index - 0.4 + width * (slot + 0.5)
                short = "rb " if loadgen == "redis-benchmark" else ""
                _bar(axis, x, width, row["median"], colour, bool(row["client_bound"]),
                     f"server:{server}", "///" if loadgen == "redis-benchmark" else "",
                     _error(row), f"{short}T{int(threads)}")
                bound_seen |= bool(row["client_bound"])
            seed = seeds[server]
            if seed is not None:
                x = index - 0.4 + width * (slots - 0.5)
                _bar(axis, x, width, float(seed["ops_per_s"]), tint(palette.SEED.colour, 0.3),
                     False, "seed", "xx", None, f"seed T{int(seed['client_threads'])}")
        axis.set_xticks(range(len(servers)))
        axis.set_xticklabels(servers, fontsize=8)
        for label, server in zip(axis.get_xticklabels(), servers):
            label.set_color(palette.server(server).colour)
        axis.set_xlim(-0.6, len(servers) - 0.4)
        axis.set_ylim(bottom=0)
        palette.rate_axis(axis)
        axis.set_ylabel("ops/s (median, 95% CI)")
        axis.grid(axis="y", alpha=0.3)
        note = _seed_note(reference, pipeline)
        axis.set_title(f"{command.upper()} P{pipeline}, {keys:,} key{'s' if keys > 1 else ''}, "
                       f"{int(panel['connections'].iloc[0])} connections"
                       + (f"\nseed: {note}" if note else ""), fontsize=9)
    handles = [Patch(facecolor=palette.NEUTRAL, edgecolor=palette.NEUTRAL,
                     label="ours, kvlab-load (T = client threads)"),
               Patch(facecolor=palette.NEUTRAL, edgecolor="white", hatch="///",
                     label="ours, redis-benchmark (the seed's instrument)"),
               Patch(facecolor=tint(palette.SEED.colour, 0.3), edgecolor="white", hatch="xx",
                     label=f"the seed's published figure ({SEED_SERVER_CPUS} vCPU server)")]
    if bound_seen:
        handles.append(Patch(facecolor="white", edgecolor=palette.NEUTRAL,
                             label=palette.CLIENT_BOUND_TEXT))
    figure.legend(handles=handles, loc="lower center", ncol=2, fontsize=8, frameon=False)
    figure.suptitle("Seed 1 (ember PR #50): concurrent map against sharded keyspace, ours "
                    "beside the seed's\n" + our_machine(meta)
                    + f"; seed: GCP c2-standard-8, {SEED_SERVER_CPUS} vCPU server", fontsize=10)
    figure.tight_layout(rect=(0, 0.7 / figure.get_figheight(), 1, 1))
    return figure


# ----------------------------------------------------------------- seed 2


def _lettuce_reference(reference: pd.DataFrame | None, threads: int, client: str,
                       transport: str) -> pd.Series | None:
    if reference is None:
        return None
    match = reference[(reference["threads"] == threads) & (reference["strategy"] == client)
                      & (reference["address"] == SEED_TRANSPORT.get(transport))]
    return None if match.empty else match.iloc[0]


def lettuce_figure(table: pd.DataFrame, meta: dict, sweep: str) -> Figure | None:
    """The Lettuce seed's grid for one sweep: rows = I/O models, columns = transports."""
    mine = table[table["sweep"] == sweep]
    if mine.empty:
        return None
    reference = load_reference("lettuce-threads")
    transports = [t for t in ("unix", "tcp", "remote") if t in set(mine["transport"])]
    transports += [t for t in dict.fromkeys(mine["transport"]) if t not in transports]
    ios = palette.ordered("io", mine["io"])
    clients = palette.ordered("client", mine["client"])
    threads = sorted(int(t) for t in mine["threads"].unique())
    link = meta.get("remote_link") or {}
    figure, axes = plt.subplots(len(ios), len(transports),
                                figsize=(5.2 * len(transports), 3.6 * len(ios) + 0.9),
                                squeeze=False, sharey="col")
    width = 0.8 / (2 * len(clients))
    bound_seen = False
    for r, io in enumerate(ios):
        for c, transport in enumerate(transports):
            axis = axes[r][c]
            panel = mine[(mine["io"] == io) & (mine["transport"] == transport)]
            for index, t in enumerate(threads):
                for slot, client in enumerate(clients):
                    colour = palette.client(client).colour
                    row = find_point(panel, threads=t, client=client)
                    x = index - 0.4 + width * (slot + 0.5)
                    if row is not None:
                        _bar(axis, x, width, row["median"], colour, bool(row["client_bound"]),
                             f"client:{client}", error=_error(row))
                        bound_seen |= bool(row["client_bound"])
                    seed = _lettuce_reference(reference, t, client, transport)
                    if seed is not None:
                        x = index - 0.4 + width * (len(clients) + slot + 0.5)
                        _bar(axis, x, width, float(seed["ops_per_s"]), tint(colour), False,
                             "seed", "xx", [[float(seed["error_99_9"])]] * 2)
            axis.set_xticks(range(len(threads)))
            axis.set_xticklabels([f"{t} thread{'s' if t > 1 else ''}" for t in threads])
            axis.set_xlim(-0.55, len(threads) - 0.45)
            axis.set_ylim(bottom=0)
            palette.rate_axis(axis)
            axis.grid(axis="y", alpha=0.3)
            title = f"{transport}, io={io}"
            if transport == "remote" and link.get("measured_p50_us"):
                title += f" (ours: {link['measured_p50_us']:.0f} µs emulated link)"
            axis.set_title(title, fontsize=9)
            if c == 0:
                axis.set_ylabel("INCRBY ops/s")
    handles = []
    for client in clients:
        colour = palette.client(client).colour
        handles += [Patch(facecolor=colour, edgecolor=colour, label=f"ours, {client} (95% CI)"),
                    Patch(facecolor=tint(colour), edgecolor="white", hatch="xx",
                          label=f"seed, {client} (± JMH 99.9% error)")]
    if bound_seen:
        handles.append(Patch(facecolor="white", edgecolor=palette.NEUTRAL,
                             label=palette.CLIENT_BOUND_TEXT))
    columns = min(len(handles), 5 if len(transports) >= 3 else 3)
    figure.legend(handles=handles, loc="lower center", ncol=columns, fontsize=8, frameon=False)
    nodelay = ", ".join(f"nodelay {v}" for v in dict.fromkeys(mine["nodelay"]))
    server = ", ".join(dict.fromkeys(mine["server"]))
    figure.suptitle(f"Seed 2 (Lettuce): pooled against shared connections, sweep {sweep} "
                    f"({server}, {nodelay}); left pair ours, right pair the seed's\n"
                    + our_machine(meta) + "\n" + LETTUCE_SEED_MACHINE, fontsize=10)
    rows = math.ceil(len(handles) / columns)
    figure.tight_layout(rect=(0, (0.25 * rows + 0.25) / figure.get_figheight(), 1, 1))
    return figure


def seed_figures(table: pd.DataFrame, meta: dict) -> Iterator[tuple[str, Figure]]:
    """(stem, figure) of every seed figure the run's sweeps allow."""
    figure = ember_figure(table, meta)
    if figure is not None:
        yield "seed1-ember-pr50", figure
    sweeps = meta.get("sweeps", {})
    for sweep in dict.fromkeys(table["sweep"]):
        if sweeps.get(sweep, {}).get("seed") == "lettuce-threads":
            figure = lettuce_figure(table, meta, sweep)
            if figure is not None:
                yield f"seed2-{sweep}", figure
