"""The seeds' tables in report.md, ours beside the seeds' own numbers (results/reference/):

- ember PR #50 (concurrent map vs sharded keyspace): test × server → ops/s by client
  threads, the ratios the seed argued from, and kvlab-load beside redis-benchmark (the
  seed's instrument) wherever both measured the same point;
- Lettuce (pooled vs shared connections): threads × strategy → ops/s per address, and
  shared / pooled.

A seed's number is labelled with the CPUs our server had when that was fewer than the
seed's 8 vCPUs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

import pandas as pd

from ..running.plan import SEED_SERVER_CPUS
from .markdown import markdown_table
from .report_stages import crossings_statement
from .report_format import (CLIENT_BOUND_MARK, find_point, format_cell, format_number,
                            format_rate, format_ratio, server_cpu_count, server_specs)

REFERENCE_DIR = Path(__file__).resolve().parents[3] / "results" / "reference"
SEED_TRANSPORT = {"unix": "socket", "tcp": "localhost", "remote": "remote"}


def load_reference(name: str) -> pd.DataFrame | None:
    path = REFERENCE_DIR / f"{name}.csv"
    return pd.read_csv(path) if path.exists() else None


def _hop_command_sharded(meta: dict, candidates: Iterable[str]) -> str | None:
    """The seed's sharded architecture: one hop per command (the server default)."""
    for name in candidates:
        spec = server_specs(meta).get(name, {})
        if spec.get("engine") == "sharded" and spec.get("hop") in ("command", None):
            return name
    return None


def _redis(meta: dict, candidates: Iterable[str]) -> str | None:
    specs = server_specs(meta)
    return next((n for n in candidates if specs.get(n, {}).get("kind") == "redis"), None)


def ember_section(sweeps: list[str], table: pd.DataFrame, meta: dict) -> str:
    """The first seed's shape: test × engine → ops/s, per thread count, seed beside."""
    reference = load_reference("ember-pr50")
    out = []
    mine = table[table["sweep"].isin(sweeps)]
    servers = list(dict.fromkeys(mine["server"]))
    threads = sorted(mine["threads"].unique())
    for (loadgen, transport, keys, pipeline, connections), group in mine.groupby(
            ["loadgen", "transport", "keys", "pipeline", "connections"], sort=False):
        out.append(f"### {loadgen}, {transport}, {keys:,} key{'s' if keys > 1 else ''}, "
                   f"P{pipeline}, {connections} connections (ops/s by client threads)")
        header = ["test", "server"] + [f"T={t}" for t in threads] + ["seed ops/s"]
        rows = []
        for command in dict.fromkeys(group["command"]):
            for server in servers:
                cells = [format_cell(find_point(group, command=command, server=server, threads=t))
                         for t in threads]
                if all(c == "–" for c in cells):
                    continue
                seed = "–"
                seed_engine = server_specs(meta).get(server, {}).get("seed_engine")
                if reference is not None and seed_engine:
                    match = reference[(reference["source"] == "readme-after-pr50")
                                      & (reference["test"] == command.upper())
                                      & (reference["pipeline"] == pipeline)
                                      & (reference["engine"] == seed_engine)]
                    if not match.empty:
                        seed = (f"{match.iloc[0]['ops_per_s']:,.0f} "
                                f"(T={int(match.iloc[0]['client_threads'])})"
                                + seed_cpu_label(meta))
                rows.append([command.upper(), server] + cells + [seed])
        out.append(markdown_table(header, rows))
        out.append("")
        out.append(ember_ratios(group, servers, threads, meta, reference, pipeline))
        out.append("")
    out.append(instrument_comparison(mine))
    crossings = crossings_statement(mine, meta, _hop_command_sharded(meta, servers))
    if crossings:
        out += ["", crossings]
    return "\n".join(out)


def instrument_comparison(table: pd.DataFrame) -> str:
    """kvlab-load beside redis-benchmark wherever both measured the same point."""
    keys = ["server", "transport", "command", "keys", "pipeline", "connections", "threads"]
    ours = table[table["loadgen"] == "kvlab-load"]
    theirs = table[table["loadgen"] == "redis-benchmark"]
    if ours.empty or theirs.empty:
        return ""
    both = ours.merge(theirs, on=keys, suffixes=("_kvlab", "_redis_benchmark"))
    if both.empty:
        return ""
    rows = []
    for _, r in both.iterrows():
        a = {"median": r["median_kvlab"], "summary": r["summary_kvlab"], "n": r["n_kvlab"]}
        b = {"median": r["median_redis_benchmark"], "summary": r["summary_redis_benchmark"],
             "n": r["n_redis_benchmark"]}
        rows.append([r["server"], r["transport"], r["command"].upper(), f"{r['keys']:,}",
                     r["pipeline"], r["connections"], r["threads"],
                     format_rate(r["median_kvlab"]) + (CLIENT_BOUND_MARK
                                                       if r["client_bound_kvlab"] else ""),
                     format_rate(r["median_redis_benchmark"]) + (
                         CLIENT_BOUND_MARK if r["client_bound_redis_benchmark"] else ""),
                     format_number(r["seconds_redis_benchmark"], 2), format_ratio(a, b)])
    return ("### The two instruments on the same points\n\n" + markdown_table(
        ["server", "transport", "test", "keys", "P", "conns", "T", "kvlab-load ops/s",
         "redis-benchmark ops/s", "its run time s", "kvlab-load / redis-benchmark"], rows))


def ember_ratios(group: pd.DataFrame, servers: list[str], threads: list[int], meta: dict,
                 reference: pd.DataFrame | None, pipeline: int) -> str:
    sharded = _hop_command_sharded(meta, servers)
    batch = next((s for s in servers if server_specs(meta).get(s, {}).get("hop") == "batch"), None)
    redis = _redis(meta, servers)
    pairs = []
    for server in servers:
        spec = server_specs(meta).get(server, {})
        if spec.get("engine") in ("concurrent", "striped", "single") and sharded:
            pairs.append((server, sharded))
    if batch and sharded:
        pairs.append((batch, sharded))
    if redis:
        pairs += [(s, redis) for s in servers if s != redis]
    if not pairs:
        return ""
    header = ["test", "ratio"] + [f"T={t}" for t in threads] + ["seed"]
    present = set(group["server"])
    pairs = [(a, b) for a, b in pairs if a in present and b in present]
    if not pairs:
        return ""
    rows = []
    for command in dict.fromkeys(group["command"]):
        for numerator, denominator in pairs:
            cells = [format_ratio(find_point(group, command=command, server=numerator, threads=t),
                                  find_point(group, command=command, server=denominator, threads=t))
                     for t in threads]
            seed = _seed_ember_ratio(reference, meta, command, pipeline, numerator, denominator)
            rows.append([command.upper(), f"{numerator} / {denominator}"] + cells + [seed])
    return "Ratios of medians (~ = intervals overlap):\n\n" + markdown_table(header, rows)


def _seed_ember_ratio(reference: pd.DataFrame | None, meta: dict, command: str, pipeline: int,
                      numerator: str, denominator: str) -> str:
    if reference is None:
        return "–"
    engines = [server_specs(meta).get(s, {}).get("seed_engine") for s in (numerator, denominator)]
    if None in engines or engines[0] == engines[1]:
        return "–"
    rates = []
    for engine in engines:
        match = reference[(reference["source"] == "readme-after-pr50")
                          & (reference["test"] == command.upper())
                          & (reference["pipeline"] == pipeline) & (reference["engine"] == engine)]
        if match.empty:
            return "–"
        rates.append(float(match.iloc[0]["ops_per_s"]))
    text = f"{rates[0] / rates[1]:.2f}"
    summary = reference[(reference["source"] == "pr50-summary")
                        & (reference["test"] == command.upper())]
    if engines == ["concurrent", "sharded"] and len(summary) == 2:
        by_engine = dict(zip(summary["engine"], summary["ops_per_s"].astype(float)))
        text += f" (PR summary {by_engine['concurrent'] / by_engine['sharded']:.2f})"
    return text + seed_cpu_label(meta)


def lettuce_section(sweeps: list[str], table: pd.DataFrame, meta: dict | None = None) -> str:
    """The second seed's shape: threads × strategy → ops/s per address, seed beside; one
    table per client I/O model, each cell with the client's context switches per op (the
    hand-offs that decide the local ranking); remote cells with ops/s × the link's
    measured round trip (requests in flight on average: comparable across machines)."""
    reference = load_reference("lettuce-threads")
    link = (meta or {}).get("remote_link") or {}
    rtt_us = link.get("measured_p50_us")
    mine = table[table["sweep"].isin(sweeps)]
    out = []
    columns = list(dict.fromkeys(zip(mine["transport"], mine["nodelay"])))
    threads = sorted(mine["threads"].unique())

    def label(transport: str, nodelay: str) -> str:
        text = transport
        if transport == "remote" and rtt_us:
            text += f" ({rtt_us:.0f} µs measured)"
        return text + ("" if nodelay == "on" else " (nodelay off)")

    for (server, loadgen, command, io), group in mine.groupby(
            ["server", "loadgen", "command", "io"], sort=False):
        out.append(f"### {server}, {loadgen}, {command}, io={io} (ops/s, client context "
                   "switches per op; seed in brackets)")
        header = ["threads", "strategy"] + [label(t, n) for t, n in columns]
        rows = []
        for t in threads:
            for client in dict.fromkeys(group["client"]):
                cells = []
                for transport, nodelay in columns:
                    row = find_point(group, threads=t, client=client, transport=transport,
                                     nodelay=nodelay)
                    cell = format_cell(row)
                    if row is not None and not pd.isna(row.get("client_cs_per_op")):
                        cell += f" cs {row['client_cs_per_op']:.2f}"
                    if transport == "remote" and rtt_us and row is not None \
                            and not pd.isna(row["median"]):
                        cell += f" ×RTT {row['median'] * rtt_us / 1e6:.2f}"
                    seed = _seed_lettuce(reference, t, client, transport)
                    cells.append(f"{cell} [{seed}]" if seed else cell)
                rows.append([str(t), client] + cells)
        out.append(markdown_table(header, rows))
        out.append("")
        if {"pooled", "shared"} <= set(group["client"]):
            out.append("shared / pooled (ours [seed]; ~ = intervals overlap):\n")
            ratio_rows = []
            for t in threads:
                cells = []
                for transport, nodelay in columns:
                    ours = format_ratio(
                        find_point(group, threads=t, client="shared", transport=transport,
                                   nodelay=nodelay),
                        find_point(group, threads=t, client="pooled", transport=transport,
                                   nodelay=nodelay))
                    shared = _seed_lettuce(reference, t, "shared", transport, raw=True)
                    pooled = _seed_lettuce(reference, t, "pooled", transport, raw=True)
                    seed = f" [{shared / pooled:.2f}]" if shared and pooled else ""
                    cells.append(ours + seed)
                ratio_rows.append([str(t)] + cells)
            out.append(markdown_table(["threads"] + header[2:], ratio_rows))
            out.append("")
    if rtt_us:
        out.append(f"remote: the emulated link was calibrated to {link.get('configured_rtt_us')}"
                   f" µs; measured p50 {rtt_us:.0f} µs, p99 {link.get('measured_p99_us', 0):.0f}"
                   f" µs, base (no delay) p50 {link.get('base_p50_us', 0):.0f} µs. ×RTT = "
                   "ops/s × measured round trip: requests in flight on average.")
    return "\n".join(out)


def _seed_lettuce(reference: pd.DataFrame | None, threads: int, client: str, transport: str,
                  raw: bool = False) -> float | str | None:
    if reference is None:
        return None
    match = reference[(reference["threads"] == threads) & (reference["strategy"] == client)
                      & (reference["address"] == SEED_TRANSPORT.get(transport))]
    if match.empty:
        return None
    value = float(match.iloc[0]["ops_per_s"])
    return value if raw else f"{value:,.0f}"


def seed_cpu_label(meta: dict) -> str:
    """Beside a seed's number: how many CPUs our server had against the seed's 8 vCPUs."""
    count = server_cpu_count(meta)
    if count is None or count >= SEED_SERVER_CPUS:
        return ""
    return f" [seed: {SEED_SERVER_CPUS} vCPU server; here {count}]"
