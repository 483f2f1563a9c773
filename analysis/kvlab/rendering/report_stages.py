"""Where a request's time goes inside the server, in report.md: kvlab-server's INFO stages
(docs/server.md), which kvlab-load writes per window as `stage_samples` and
`stage_<stage>_us` (mean µs per sampled request in that stage; blank where the engine has
no such stage or the server has no INFO stages).

- point_table() folds them per point with stage_figures(): each stage's median over the
  point's rounds that timed a request, and the sampled requests summed over them;
- stages_section(): for each declared comparison ([[compare]]) and each pair of points it
  compares, both sides' stages in µs and as shares of their sum (plots_stages.py draws the
  same numbers as stacked bars); then, at each point a comparison stands at, every server
  the run measured there, so that each engine's breakdown is shown, not only the pairs';
- crossings_statement(): in the first seed's section, how many µs of
  sharded-hop-command's request are the two thread crossings (queue: handed to the shard
  thread; return: back on the I/O thread) against concurrent and single, and whether that
  accounts for the measured throughput ratio.

A side with fewer than MIN_SAMPLES sampled requests over its rounds gets no numbers and no
bar: a mean over a handful of requests is noise. Stage times are latencies of sampled
requests inside the server, not CPU time: the section says so where it is read.

Beside them, each side's own account where its server gives one: redis-server's INFO
commandstats, which kvlab-load writes per window as `server_calls` and
`server_usec_per_call` (Redis's usec / calls of every command but INFO; blank for
kvlab-server, which has no such section). commandstats_figures() folds them per point.

And each server's threads: kvlab-server's busy time against its waits for work
(`server_io_busy_share`, `server_shard_busy_share`: busy / (busy + waiting) of the I/O and of
the shard threads in the window; `server_busy_us_per_op`: every thread's busy µs per
operation), folded per point by busy_figures() and shown in the same tables: CPU% cannot tell
a thread that polls from one that works.

And the client's side: kvlab-load's own threads split their time into build, send, wait
and receive (`client_<phase>_us`, µs per operation summed over its threads; the dedicated
strategy's), folded per point by client_figures() and shown per pair by client_table().
"""

from __future__ import annotations

import dataclasses
import math

import pandas as pd

from ..measures.declared_ratios import compute, point_key, point_label, specs_of
from ..schema.specs import POINT_VARIABLES, CompareSpec
from ..running.results import whole_points
from .markdown import markdown_table
from .report_format import CLIENT_BOUND_MARK, find_point, median_of_numbers, server_specs

# INFO stages' stages in the order a request meets them; `total` is their sum.
STAGES = ("read", "parse", "dispatch", "queue", "execute", "return", "render", "write")
CROSSINGS = ("queue", "return")
STAGE_COLUMNS = tuple(f"stage_{s}_us" for s in STAGES)
# Fewer sampled requests than this over a point's rounds: no figure, no bar. At the
# default --stage-sample 1000 a point serving 20k requests/s for 1 s reaches it.
MIN_SAMPLES = 20
NOT_REPORTED = "not reported by this server"
# The note of a side whose server has no INFO stages but INFO commandstats (redis-server).
OWN_ACCOUNT_ONLY = "no INFO stages; own µs/call from its INFO commandstats"
# The crossings' share of the round-trip difference the ratio implies, from which on they
# "account for most of it", and below which they "do not account for it".
MOST = 0.8
LITTLE = 0.2


# kvlab-load's phases in the order a round of its loop meets them (client_phases.h).
CLIENT_PHASES = ("build", "send", "wait", "receive")
CLIENT_COLUMNS = tuple(f"client_{p}_us" for p in CLIENT_PHASES)


def client_figures(rows: pd.DataFrame) -> dict[str, float]:
    """point_table's client phase columns for one point's measured rows: each phase's
    median over the rows (NaN where none measured it). Empty when the run has none."""
    return {c: median_of_numbers(rows[c]) for c in CLIENT_COLUMNS if c in rows}


def commandstats_figures(rows: pd.DataFrame) -> dict[str, float]:
    """point_table's INFO commandstats columns for one point's measured rows:
    server_usec_per_call, the median over the rows that counted a call, and server_calls
    summed over them (NaN where no row did). Empty when the run has no such columns."""
    if "server_calls" not in rows:
        return {}
    calls = pd.to_numeric(rows["server_calls"], errors="coerce")
    counted = rows[calls > 0]
    usec = counted["server_usec_per_call"] if "server_usec_per_call" in counted \
        else pd.Series(dtype=float)
    return {"server_calls": float(calls[calls > 0].sum()) if len(counted) else math.nan,
            "server_usec_per_call": median_of_numbers(usec)}


BUSY_SHARE_COLUMNS = ("server_io_busy_share", "server_shard_busy_share")
# A cost per operation (its name ends in _per_op): point_table folds it with the other costs,
# and the history tracks it.
BUSY_COLUMNS = BUSY_SHARE_COLUMNS + ("server_busy_us_per_op",)


def busy_figures(rows: pd.DataFrame) -> dict[str, float]:
    """point_table's thread busy shares for one point's measured rows: each one's median
    over the rows that report it (NaN where none does). Empty when the run has none."""
    return {c: median_of_numbers(rows[c]) for c in BUSY_SHARE_COLUMNS if c in rows}


def stage_figures(rows: pd.DataFrame) -> dict[str, float]:
    """point_table's stage columns for one point's measured rows: each stage's median over
    the rows that timed a request (NaN where none has the stage: absent, not zero),
    stage_total_us likewise, stage_samples and stage_ops summed over those rows, and
    stage_rows, how many they were. Empty when the run has no stage columns."""
    if "stage_samples" not in rows:
        return {}
    samples = pd.to_numeric(rows["stage_samples"], errors="coerce")
    timed = rows[samples > 0]
    figures = {"stage_samples": float(samples[samples > 0].sum()), "stage_rows": len(timed),
               "stage_ops": float(pd.to_numeric(timed.get("ops"), errors="coerce").sum())
               if "ops" in timed else math.nan}
    for column in STAGE_COLUMNS + ("stage_total_us",):
        values = pd.to_numeric(timed[column], errors="coerce") if column in timed else None
        figures[column] = math.nan if values is None or values.isna().all() \
            else float(values.median())
    return figures


@dataclasses.dataclass(frozen=True)
class Side:
    """One side of a comparison: its stage medians, or why it has none (`note`)."""
    server: str
    note: str = ""                 # empty: the figures stand
    samples: int = 0
    rounds: int = 0
    us: dict[str, float] = dataclasses.field(default_factory=dict)  # present stages only
    total_us: float = math.nan     # median of the rounds' stage_total_us
    per_million: float = math.nan  # sampled requests per million served
    # The server's own account (INFO commandstats): µs inside a command per call, median
    # over the rounds; NaN where the server gives none. Shown whatever `note` says.
    usec_per_call: float = math.nan
    # kvlab-load's own µs per operation in each phase (CLIENT_PHASES); empty where its
    # strategy does not measure them.
    client_us: dict[str, float] = dataclasses.field(default_factory=dict)
    # The server's threads (BUSY_COLUMNS' medians): busy share of the I/O threads and of the
    # shard threads, and every thread's busy µs per operation; NaN where not reported.
    io_busy_share: float = math.nan
    shard_busy_share: float = math.nan
    busy_us_per_op: float = math.nan

    @property
    def shown(self) -> bool:
        return not self.note

    @property
    def sum_us(self) -> float:
        return sum(self.us.values()) if self.us else math.nan

    def share(self, stage: str) -> float:
        return self.us[stage] / self.sum_us if stage in self.us and self.sum_us > 0 else math.nan

    @property
    def crossings_us(self) -> float:
        """queue + return; NaN when the engine has neither (no hop)."""
        present = [self.us[s] for s in CROSSINGS if s in self.us]
        return sum(present) if present else math.nan


def side_of(row: pd.Series | None, server: str, meta: dict) -> Side:
    """The stage breakdown of one point (a point_table row), or why there is none, and
    the server's own µs per command where it reports one."""
    side = _stage_side(row, server, meta)
    if row is None:
        return side
    client_us = {p: float(row[c]) for p, c in zip(CLIENT_PHASES, CLIENT_COLUMNS)
                 if c in row.index and not pd.isna(row[c])}
    if len(client_us) == len(CLIENT_PHASES):
        side = dataclasses.replace(side, client_us=client_us)
    busy = [float(pd.to_numeric(row.get(c, math.nan), errors="coerce")) for c in BUSY_COLUMNS]
    side = dataclasses.replace(side, io_busy_share=busy[0], shard_busy_share=busy[1],
                               busy_us_per_op=busy[2])
    usec = pd.to_numeric(row.get("server_usec_per_call", math.nan), errors="coerce")
    if pd.isna(usec):
        return side
    note = OWN_ACCOUNT_ONLY if side.note == NOT_REPORTED else side.note
    return dataclasses.replace(side, usec_per_call=float(usec), note=note)


def _stage_side(row: pd.Series | None, server: str, meta: dict) -> Side:
    kind = server_specs(meta).get(server, {}).get("kind")
    if row is None:
        return Side(server, "not measured")
    if kind is not None and kind != "kvlab":
        return Side(server, NOT_REPORTED)
    if row.get("loadgen", "kvlab-load") != "kvlab-load":
        return Side(server, f"not read by {row['loadgen']} (kvlab-load reads INFO stages)")
    samples = row.get("stage_samples", math.nan)
    samples = 0 if pd.isna(samples) else int(samples)
    rounds = int(row.get("stage_rows", 0) or 0)
    ops = row.get("stage_ops", math.nan)
    per_million = samples / ops * 1e6 if not pd.isna(ops) and ops > 0 else math.nan
    if "stage_samples" not in row.index:
        return Side(server, "no stage columns in this run")
    if samples == 0:
        return Side(server, "no sampled request in its windows (sampling off, or no read "
                    "could be timed)")
    if samples < MIN_SAMPLES:
        return Side(server, f"too few samples: {samples} over {rounds} round"
                    f"{'s' if rounds != 1 else ''} (fewer than {MIN_SAMPLES}); no figure "
                    "from noise", samples, rounds, per_million=per_million)
    us = {s: float(row[c]) for s, c in zip(STAGES, STAGE_COLUMNS)
          if c in row.index and not pd.isna(row[c])}
    return Side(server, "", samples, rounds, us, float(row.get("stage_total_us", math.nan)),
                per_million)


@dataclasses.dataclass(frozen=True)
class Pair:
    """Two points a declared comparison sets against each other, and their stages."""
    comparisons: tuple[str, ...]
    test: str
    point: str
    a: Side
    b: Side
    key_a: tuple = ()  # side a's point variables (declared_ratios.point_key)


def comparison_pairs(points: pd.DataFrame, table: pd.DataFrame, meta: dict) -> list[Pair]:
    """Every pair of points the run's [[compare]]s declare (declared_ratios.compute pairs
    them as ratios.csv does), in that order; a pair two comparisons share is listed once."""
    specs = specs_of(meta)
    if not specs or points.empty or table.empty:
        return []
    rows = {point_key(r): r for _, r in table.iterrows()}
    pairs: dict[tuple, Pair] = {}
    for result in compute(whole_points(points), specs):
        key = (result.key_a, result.key_b)
        if key in pairs:
            pair = pairs[key]
            if result.spec.name not in pair.comparisons:
                pairs[key] = dataclasses.replace(
                    pair, comparisons=pair.comparisons + (result.spec.name,))
            continue
        a, b = (rows.get(k) for k in key)
        pairs[key] = Pair((result.spec.name,), result.test, result.point,
                          _side(a, result.spec, "a", meta), _side(b, result.spec, "b", meta),
                          result.key_a)
    return list(pairs.values())


def _side(row: pd.Series | None, spec: CompareSpec, which: str, meta: dict) -> Side:
    server = row["server"] if row is not None else getattr(spec, which)
    side = side_of(row, server, meta)
    if spec.by != "server" and row is not None:  # name the side by what the comparison varies
        side = dataclasses.replace(side, server=f"{server} ({spec.by} {row[spec.by]})")
    return side


def _cell(side: Side, stage: str) -> str:
    if not side.shown or stage not in side.us:
        return "–"
    return f"{side.us[stage]:.1f} ({100 * side.share(stage):.0f}%)"


def _number(value: float, digits: int = 1) -> str:
    return "–" if value is None or pd.isna(value) else f"{value:,.{digits}f}"


def _percent(share: float) -> str:
    return "–" if share is None or pd.isna(share) else f"{100 * share:.0f}%"


def stages_table(sides: list[Side]) -> str:
    """One row per side: sampled requests, each stage's µs (share), the sum, the crossings,
    the server's own µs per call and its threads' busy shares and busy µs per operation."""
    header = (["server", "rounds timed", "samples", "per 1M requests"] + list(STAGES)
              + ["sum µs", "queue+return µs", "own µs/call", "I/O busy", "shard busy",
                 "busy µs/op", "note"])
    rows = []
    for side in sides:
        rows.append([side.server, str(side.rounds) if side.samples else "–",
                     f"{side.samples:,}" if side.samples else "–",
                     _number(side.per_million, 0)]
                    + [_cell(side, s) for s in STAGES]
                    + [_number(side.sum_us) if side.shown else "–",
                       _number(side.crossings_us) if side.shown else "–",
                       _number(side.usec_per_call, 2), _percent(side.io_busy_share),
                       _percent(side.shard_busy_share), _number(side.busy_us_per_op, 2),
                       side.note])
    return markdown_table(header, rows)


def client_table(sides: list[Side]) -> str:
    """kvlab-load's side of the same points: µs per operation in each phase of its
    threads' loop (share of their sum), the sum and the client's CPU-bound mark."""
    rows = []
    for side in sides:
        if not side.client_us:
            rows.append([side.server] + ["–"] * (len(CLIENT_PHASES) + 1)
                        + ["not measured by this client strategy"])
            continue
        total = sum(side.client_us.values())
        rows.append([side.server]
                    + [f"{side.client_us[p]:.2f} ({100 * side.client_us[p] / total:.0f}%)"
                       if total > 0 else "–" for p in CLIENT_PHASES]
                    + [f"{total:.2f}", ""])
    return markdown_table(["server"] + [f"client {p}" for p in CLIENT_PHASES]
                          + ["sum µs/op", "note"], rows)


CLIENT_INTRO = (
    "kvlab-load's side of the same points: its threads' time per operation in each phase "
    "of their loop (build the requests, send them, wait in poll, receive: read, parse, "
    "check and record the replies), summed over its threads, so the sum is threads × "
    "window / operations (where another thread does the I/O, the load threads wait). Much time waiting means "
    "the client waits on the server; little, that the client itself is what limits the "
    "point.")


SECTION_INTRO = (
    "Inside the server, per sampled request: kvlab-server times every Nth read of each I/O "
    "thread (`--stage-sample`, INFO stages) from the loop's wake-up to the `send()` of its "
    "reply, on one clock; a pipelined read counts as one request, its first batch (with a "
    "hop per command, its first command). Each figure is the median over the point's rounds "
    "of the window's mean µs per sampled request in that stage (its share of the stages' "
    "sum in brackets; the sum is the time inside the server); `–` is a stage the engine "
    "does not have (queue and return exist only where a request hops to another thread). "
    "These are latencies inside the server, "
    "not CPU time: waiting behind other sockets or in a shard's queue counts here and costs "
    f"no CPU. A side with fewer than {MIN_SAMPLES} sampled requests over its rounds gets "
    "no figures (noise). The bars: plots/stages.png. `own µs/call` is the server's own "
    "account where it gives one: redis-server's INFO commandstats, the µs it spent executing "
    "a command on its main thread per call (Redis's usec / calls over the window, every "
    "command but INFO, the median over the rounds); it counts every command, not a sample, "
    "and stands for the execute stage of one command, not of a whole pipelined read. "
    "kvlab-server has no such section (`–`). `I/O busy` and `shard busy` are the share of "
    "the window kvlab-server's I/O threads (on `owner`, the owners) and shard threads spent "
    "working rather than waiting for work, and `busy µs/op` all its threads' busy time per "
    "operation (medians over the rounds; wall time not waiting, which CPU% cannot tell from "
    "polling; `–` where the server does not report it).")


def pair_title(pair: Pair) -> str:
    """"concurrent/sharded GET (GET, p16: tcp dedicated P16 T8 keys=1)"."""
    return f"{' and '.join(pair.comparisons)} ({pair.test.upper()}, {pair.point})"


def stages_section(points: pd.DataFrame, table: pd.DataFrame, meta: dict) -> str:
    """## Where a request's time goes: one table per declared pair of points; empty when
    the run declared no comparison."""
    pairs = comparison_pairs(points, table, meta)
    if not pairs:
        return ""
    if not any(p.a.samples or p.b.samples or p.a.note in (NOT_REPORTED, OWN_ACCOUNT_ONLY)
               for p in pairs) \
            and "stage_samples" not in points and "server_calls" not in points:
        return ("## Where a request's time goes\n\nThis run has no stage columns "
                "(kvlab-load before INFO stages).")
    blocks = ["## Where a request's time goes", "", SECTION_INTRO]
    for pair in pairs:
        blocks += ["", f"### {pair_title(pair)}", "", stages_table([pair.a, pair.b])]
        if pair.a.client_us or pair.b.client_us:
            blocks += ["", CLIENT_INTRO, "", client_table([pair.a, pair.b])]
    return "\n".join(blocks + every_server_blocks(pairs, table, meta))


SERVER_AT = POINT_VARIABLES.index("server")
EVERY_SERVER_INTRO = (
    "The same figures for every server the run measured at the point, in the run's order "
    "of servers: the pairs above show two at a time, this table every engine side by side.")


def _without_server(key: tuple) -> tuple:
    return key[:SERVER_AT] + key[SERVER_AT + 1:]


def every_server_blocks(pairs: list[Pair], table: pd.DataFrame, meta: dict) -> list[str]:
    """At each distinct point the declared pairs stand at (side a's variables but the
    server), one stages table of every server measured there; none where only the pair's
    own two were (their table says it all)."""
    at_point: dict[tuple, list[pd.Series]] = {}
    for _, row in table.iterrows():
        at_point.setdefault(_without_server(point_key(row)), []).append(row)
    order = list(server_specs(meta))
    rank = {name: i for i, name in enumerate(order)}
    blocks, seen = [], set()
    for pair in pairs:
        point = _without_server(pair.key_a) if pair.key_a else None
        if point is None or point in seen or len(at_point.get(point, ())) < 3:
            continue
        seen.add(point)
        rows = sorted(at_point[point], key=lambda r: (rank.get(r["server"], len(order)),
                                                      str(r["server"])))
        sides = [side_of(row, row["server"], meta) for row in rows]
        label = point_label(rows[0], "server")
        blocks += ["", f"### Every server at {pair.test.upper()}, {label}", "",
                   EVERY_SERVER_INTRO, "", stages_table(sides)]
    return blocks


# ----------------------------------------------------------------- seed 1's crossings


def _round_trip_us(row: pd.Series) -> float:
    """The client's mean round trip at this point: its measured mean latency, else
    Little's law for a dedicated client (connections × pipeline in flight / ops/s)."""
    mean = row.get("mean_us", math.nan)
    if not pd.isna(mean) and mean > 0:
        return float(mean)
    if row.get("client") == "dedicated" and row["median"] > 0:
        return float(row["connections"]) * float(row["pipeline"]) / row["median"] * 1e6
    return math.nan


def _verdict(share: float) -> str:
    if share >= MOST:
        return "the crossings account for most of the ratio"
    if share >= LITTLE:
        return "the crossings account for part of the ratio, not all"
    return "the crossings do not account for the ratio"


def _against(hop: Side, hop_row: pd.Series, other: Side, other_row: pd.Series) -> str:
    """One comparison of sharded-hop-command with an inline engine at one point."""
    name = other.server
    if not other.shown:
        return f"{name}: {other.note}."
    ratio = other_row["median"] / hop_row["median"] if hop_row["median"] > 0 else math.nan
    if other_row.get("client_bound"):
        name += f" (client-bound{CLIENT_BOUND_MARK})"
    text = (f"{name} spends {other.sum_us:.1f} µs inside the server, no crossings, and "
            f"serves {ratio:.2f}× the throughput (ratio of medians)")
    if pd.isna(ratio):
        return text + "."
    inside = hop.sum_us - other.sum_us
    if ratio <= 1:
        return (text + ": sharded-hop-command is not the slower here, so its "
                f"{hop.crossings_us:.1f} µs of crossings have no deficit to account for "
                "(in-server difference "
                f"{inside:+.1f} µs).")
    trip = _round_trip_us(other_row)
    if pd.isna(trip):
        return text + "; its round trip is not known, so the ratio's cost per request is not."
    implied = trip * (ratio - 1)
    share = hop.crossings_us / implied
    return (text + f". At the same requests in flight that ratio makes a sharded-hop-command "
            f"request's round trip {implied:,.0f} µs longer than {other.server}'s {trip:,.0f} µs "
            f"(Little's law); the crossings are {hop.crossings_us:.1f} µs of it "
            f"({100 * share:.1f}%) and the whole in-server difference {inside:+.1f} µs"
            + (f" (less inside the server than {other.server}'s)" if inside < 0 else "")
            + f": **{_verdict(share)}**.")


CROSSINGS_CAVEAT = (
    "What these can and cannot explain: the stages are latencies of sampled requests inside "
    "the server on one clock, not CPU time. With a fixed number of requests in flight (a "
    "closed loop) a throughput ratio is a ratio of round trips, so the crossings explain the "
    "ratio only as far as they lengthen the round trip. Time outside the stages (bytes "
    "waiting in the socket before the loop wakes, the rest of a pipelined read after its "
    "first command, the client) is not seen, nor is CPU that a hop costs other requests "
    "(the shard threads' wake-ups): server CPU µs/op and context switches per op in All "
    "points speak to that.")
PIPELINE_CAVEAT = (
    " Pipelined points compare different units: an inline engine's sample is the read's "
    "whole batch, sharded-hop-command's only the batch's first command, whose reply can "
    "leave before the rest have crossed; the other commands' crossings overlap one another, "
    "so they do not add up along a round trip.")
SELECTION_CAVEAT = (
    " sharded-hop-command was sampled {hop:.0f} times per million requests against "
    "{other:.0f} for {name}: a read is timed only when its connection has no batch still on "
    "a shard thread (server/net/connection.cc), so its samples lean to its quieter moments and "
    "its stage times may understate a typical request's.")


def crossings_statement(table: pd.DataFrame, meta: dict, hop_server: str | None) -> str:
    """For each kvlab-load point of the seed's sweeps: sharded-hop-command's crossings
    against the concurrent and single engines at the same point, and whether they account
    for the ratio. Empty when the run has no stage columns or no such server."""
    if hop_server is None or "stage_samples" not in table or table.empty:
        return ""
    specs = server_specs(meta)
    others = [s for s in dict.fromkeys(table["server"])
              if specs.get(s, {}).get("engine") in ("concurrent", "single")]
    ours = table[(table["server"] == hop_server) & (table["loadgen"] == "kvlab-load")]
    lines = ["### Where sharded-hop-command's time goes: the two crossings", ""]
    selection = []
    for _, hop_row in ours.iterrows():
        where = {v: hop_row[v] for v in ("sweep", "loadgen", "transport", "client", "io",
                                         "command", "keys", "pipeline", "connections",
                                         "threads", "nodelay", "value_size", "key_dist")
                 if v in table}
        label = (f"{hop_row['command'].upper()}, {hop_row['keys']:,} key"
                 f"{'s' if hop_row['keys'] > 1 else ''}, P{hop_row['pipeline']} "
                 f"T{hop_row['threads']} ({hop_row['transport']}, {hop_row['connections']} "
                 "connections)")
        hop = side_of(hop_row, hop_server, meta)
        if not hop.shown:
            lines.append(f"- {label}: sharded-hop-command: {hop.note}.")
            continue
        parts = [f"- {label}: sharded-hop-command's sampled requests spend "
                 f"**{hop.crossings_us:.1f} µs in the two crossings** (queue "
                 f"{hop.us.get('queue', math.nan):.1f}: handed to the shard thread; return "
                 f"{hop.us.get('return', math.nan):.1f}: back on the I/O thread) of "
                 f"{hop.sum_us:.1f} µs inside the server ({hop.samples} samples over "
                 f"{hop.rounds} rounds)."]
        if hop_row.get("client_bound"):
            parts.append(f"Its point is client-bound{CLIENT_BOUND_MARK} (the load generator "
                         "was saturated in some round): its round trip includes the "
                         "client's own time, so part of any ratio here is the client's.")
        for other in others:
            other_row = find_point(table, **{**where, "server": other})
            if other_row is None:
                continue
            side = side_of(other_row, other, meta)
            parts.append(_against(hop, hop_row, side, other_row))
            if side.shown and hop.per_million * 2 < side.per_million:
                selection.append(SELECTION_CAVEAT.format(hop=hop.per_million,
                                                         other=side.per_million, name=other))
        lines.append(" ".join(parts))
    if len(lines) == 2:
        return ""
    pipelined = bool((ours["pipeline"] > 1).any())
    lines += ["", CROSSINGS_CAVEAT + (PIPELINE_CAVEAT if pipelined else "")
              + (selection[0] if selection else "")]
    return "\n".join(lines)
