"""The report's YCSB section (workloads/ycsb.toml): YCSB's core workloads (harness/workloads/ycsb.h)
on every server. Per setup (sweep, transport, client, pipeline, threads, records), one
table of each server's throughput by workload, median ±95% CI over rounds; then each
server against redis-server by workload: the declared ratio with its 95% interval where
the run declared one (ratios.csv, throughput and per second of server CPU), else the ratio
of medians (~ when the two intervals overlap), beside what one YCSB operation costs each
side in server CPU. The figure is plots/ycsb.png (plots_ycsb.py).

An operation is YCSB's: a read is one HGETALL, an insert an HMSET and a ZADD, a scan a
ZRANGEBYSCORE and up to 100 HGETALLs, so ops/s of different workloads are not comparable
with each other, only servers within a workload.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..measures.declared_ratios import point_label
from ..schema.specs import is_ycsb
from .markdown import markdown_table
from .report_format import CLIENT_BOUND_MARK, format_cell, format_number, format_ratio

# Each workload's operations and key distribution, as workloads/workload[a-f] set them.
WORKLOADS = {
    "load": ("100% insert (HMSET + ZADD)", "key order"),
    "A": ("50% read, 50% update", "zipfian"),
    "B": ("95% read, 5% update", "zipfian"),
    "C": ("100% read", "zipfian"),
    "D": ("95% read, 5% insert", "latest"),
    "E": ("95% scan of 1-100 records, 5% insert", "zipfian"),
    "F": ("50% read, 50% read-modify-write", "zipfian"),
}
SETUP = ("sweep", "transport", "client", "io", "pipeline", "threads", "keys", "key_dist",
         "value_size")
THROUGHPUT = "ops_per_s"
PER_CPU = "ops_per_server_cpu_s"


def workload_of(command: str) -> str:
    """"ycsb:A" -> "A"."""
    return str(command).split(":", 1)[1]


def workload_order(command: str) -> int:
    return list(WORKLOADS).index(workload_of(command))


def ycsb_rows(table: pd.DataFrame) -> pd.DataFrame:
    """The point table's YCSB rows (report.point_table), in workload order."""
    if table.empty or "command" not in table:
        return table.iloc[0:0]
    rows = table[table["command"].map(lambda c: is_ycsb(str(c)))].copy()
    if rows.empty:
        return rows
    rows["order"] = rows["command"].map(workload_order)
    return rows.sort_values("order", kind="stable")


def reference_server(meta: dict, servers: list[str]) -> str | None:
    """The redis-server the others are set against: the b of a declared comparison that is
    a redis, else the first redis of the run."""
    kinds = {name: spec.get("kind") for name, spec in meta.get("servers", {}).items()}
    for spec in meta.get("comparisons", []):
        if spec.get("by", "server") == "server" and kinds.get(spec.get("b")) == "redis" \
                and spec.get("b") in servers:
            return spec.get("b")
    return next((s for s in servers if kinds.get(s) == "redis"), None)


def declared_ratio(ratios: pd.DataFrame | None, meta: dict, a: str, b: str, metric: str,
              command: str, label: str) -> pd.Series | None:
    """The ratios.csv row of the comparison a/b by server with this metric, test and point."""
    if ratios is None or ratios.empty:
        return None
    names = [c.get("name") for c in meta.get("comparisons", [])
             if c.get("by", "server") == "server" and c.get("a") == a and c.get("b") == b
             and c.get("metric", THROUGHPUT) == metric]
    found = ratios[ratios["comparison"].isin(names) & (ratios["test"] == command)
                   & (ratios["point"] == label)]
    return None if found.empty else found.iloc[0]


def _ratio_cell(declared: pd.Series | None, fallback: str) -> str:
    if declared is None or pd.isna(declared["ratio"]):
        return f"{fallback} (medians)" if fallback != "–" else "–"
    text = f"{declared['ratio']:.3f}"
    if not pd.isna(declared["low"]):
        text += f" [{declared['low']:.3f}, {declared['high']:.3f}]"
    bound = str(declared.get("client_bound", "")).lower() == "true"
    return f"{text}{CLIENT_BOUND_MARK if bound else ''} {declared['status']}"


def _per_cpu_medians(a: pd.Series | None, b: pd.Series | None) -> str:
    """ops per server CPU second of a over b's, from the points' medians."""
    costs = [r.get("server_cpu_us_per_op") if r is not None else None for r in (a, b)]
    if any(c is None or pd.isna(c) or c <= 0 for c in costs):
        return "–"
    return f"{costs[1] / costs[0]:.2f}"


def _setup_title(setup: dict) -> str:
    return (f"`{setup['sweep']}`: {setup['transport']}, {setup['client']}"
            + (f" ({setup['io']})" if setup.get("io", "direct") != "direct" else "")
            + f", P{setup['pipeline']}, {setup['threads']} threads, "
            f"{int(setup['keys']):,} records of 10 fields x {setup['value_size']} B, "
            f"key_dist {setup['key_dist']}")


def ycsb_section(table: pd.DataFrame, run_dir: Path, meta: dict) -> str:
    """The section's markdown, or "" when the run measured no YCSB workload."""
    rows = ycsb_rows(table)
    if rows.empty:
        return ""
    path = Path(run_dir) / "ratios.csv"
    ratios = pd.read_csv(path) if path.exists() else None
    order = list(meta.get("servers", {}))
    servers = sorted(dict.fromkeys(rows["server"]),
                     key=lambda s: order.index(s) if s in order else len(order))
    reference = reference_server(meta, servers)
    out = ["## YCSB core workloads", "",
           "YCSB's workloads as its Redis binding runs them: a record is a hash of field0.."
           "field9, scans go through the sorted set `_indices`; an operation is YCSB's (a "
           "scan is a ZRANGEBYSCORE and an HGETALL per record, one after the other), so "
           "compare servers within a workload, not workloads with each other. Figure: "
           "`plots/ycsb.png`.", ""]
    for key, group in rows.groupby(list(SETUP), sort=False, dropna=False):
        setup = dict(zip(SETUP, key))
        out += [f"### {_setup_title(setup)}", ""]
        points = {(r["command"], r["server"]): r for _, r in group.iterrows()}
        commands = list(dict.fromkeys(group["command"]))
        header = ["workload", "operations", "keys"] + [f"{s} ops/s" for s in servers]
        body = []
        for command in commands:
            workload = workload_of(command)
            mix, keys = WORKLOADS[workload]
            if setup["key_dist"] == "uniform" and workload != "load":
                keys = "uniform"
            body.append([workload, mix, keys] + [format_cell(points.get((command, s)))
                                                 for s in servers])
        out += [markdown_table(header, body), ""]
        if reference is None:
            continue
        header = ["workload", "server", f"ops/s vs {reference}",
                  f"per server CPU vs {reference}", "server CPU µs/op", f"{reference} µs/op",
                  "p99 µs", f"{reference} p99 µs"]
        body = []
        for command in commands:
            b = points.get((command, reference))
            for server in servers:
                a = points.get((command, server))
                if server == reference or a is None:
                    continue
                label = point_label({**setup, "server": server, "command": command}, "server")
                throughput = declared_ratio(ratios, meta, server, reference, THROUGHPUT, command,
                                       label)
                per_cpu = declared_ratio(ratios, meta, server, reference, PER_CPU, command, label)
                body.append([workload_of(command), server,
                             _ratio_cell(throughput, format_ratio(a, b)),
                             _ratio_cell(per_cpu, _per_cpu_medians(a, b)),
                             format_number(a.get("server_cpu_us_per_op"), 2),
                             format_number(None if b is None else b.get("server_cpu_us_per_op"), 2),
                             format_number(a.get("p99_us")),
                             format_number(None if b is None else b.get("p99_us"))])
        if body:
            out += [markdown_table(header, body), ""]
    out.append(f"Ratios above 1 favour the server named in the row. `[low, high]`: the 95% "
               "interval of a declared ratio over its rounds, with its status; `(medians)`: no "
               f"declared ratio, the ratio of the medians (~: their intervals overlap). "
               f"{CLIENT_BOUND_MARK}: the load generator was saturated in most rounds, so the "
               "throughput ratio measures the client as much as the servers; the per server "
               "CPU ratio (ops per second of server CPU) is then the one that tells them apart.")
    return "\n".join(out)

