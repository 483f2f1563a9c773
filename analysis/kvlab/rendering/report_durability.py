"""The report's durability table: for every point of a run with logged rows (a [[server]]
`appendfsync`; running/durability.py), each kvlab or redis row's policy, ops/s, fsyncs per
operation and log bytes per operation (medians over its rounds), with the device and
filesystem its log folder was on."""

from __future__ import annotations

import pandas as pd

from .markdown import markdown_table
from .report_format import format_rate

POINT_KEYS = ["sweep", "transport", "client", "command", "pipeline", "connections", "threads"]


def _median(rows: pd.DataFrame, column: str) -> float | None:
    if column not in rows:
        return None
    values = pd.to_numeric(rows[column], errors="coerce").dropna()
    return float(values.median()) if not values.empty else None


def _cell(value: float | None, digits: int) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def durability_section(points: pd.DataFrame, meta: dict) -> str:
    """## The cost of durability: one row per server and point (logged rows and the
    rows without a log measured at the same points); "" when no row kept a log."""
    servers = meta.get("servers", {})
    logged = {name for name, spec in servers.items() if spec.get("appendfsync")}
    if not logged or points.empty or "aof_fsyncs_per_op" not in points:
        return ""
    measured = points[points["status"] == "ok"]
    order = list(servers)
    rows = []
    for key, group in measured.groupby(POINT_KEYS, sort=False):
        variables = dict(zip(POINT_KEYS, key))
        for name in sorted(set(group["server"]), key=lambda n: order.index(n)
                           if n in order else len(order)):
            if servers.get(name, {}).get("kind") not in ("kvlab", "redis"):
                continue
            mine = group[group["server"] == name]
            policy = servers[name].get("appendfsync") or "no log"
            rate = _median(mine, "ops_per_s")
            counter = ""
            if name in logged and "aof_fsync_counter" in mine:
                counters = sorted(set(mine["aof_fsync_counter"].astype(str)) - {"", "nan"})
                counter = ",".join(counters)
            rows.append([variables["sweep"], str(variables["command"]).upper(),
                         f"P{variables['pipeline']}", name, policy,
                         format_rate(rate), str(len(mine)),
                         _cell(_median(mine, "aof_fsyncs_per_op") if name in logged
                               else None, 4),
                         _cell(_median(mine, "aof_bytes_per_op") if name in logged
                               else None, 1), counter or "–"])
    if not rows:
        return ""
    folders = meta.get("log_folders", {})
    disks = sorted({f"{d.get('device', '?')} ({d.get('fstype', '?')}, mounted at "
                    f"{d.get('mount_point', '?')})" for d in folders.values()})
    return "\n".join([
        "## The cost of durability", "",
        "Each row's median over its rounds (closed loop, one server at a time): ops/s, "
        "fsyncs per operation and bytes appended to the log per operation, both over the "
        "commands the server processed while kvlab-load ran (warm-up included). Fsyncs come "
        "from INFO persistence `aof_fsyncs` (counter `info`, kvlab-server) or from the "
        "kernel's fdatasync/fsync tracepoints counted by perf on every thread of the server "
        "(counter `perf`, redis-server, whose INFO has no count; with a tracepoint on, its "
        "every system call takes the kernel's slow path, which may cost its row here some "
        "speed). The ratios with and without the log, and against redis-server with "
        "the same policy, are the declared comparisons above, measured by alternation.", "",
        "Log folders on: " + ("; ".join(disks) if disks else "not recorded") + ".", "",
        markdown_table(["sweep", "test", "P", "server", "appendfsync", "ops/s", "rounds",
                        "fsyncs/op", "log bytes/op", "fsync counter"], rows)])
