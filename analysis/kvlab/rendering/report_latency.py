"""The report's latency section: each server's latency-versus-load curve (latency.csv,
open loop at fractions of its closed-loop maximum) and its latency-capped throughput."""

from __future__ import annotations

from pathlib import Path

from ..running.latency import latency_capped_throughput, load_curve_rows
from .report_format import markdown_table


def curve_groups(rows):
    """latency.csv's rows by the point they measured: one curve per server in each."""
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        groups.setdefault((row["sweep"], row["command"], row["transport"], row["client"],
                           row["pipeline"], row["threads"]), []).append(row)
    return groups


def latency_section(run_dir: Path) -> str:
    path = Path(run_dir) / "latency.csv"
    if not path.exists():
        return ""
    rows = load_curve_rows(path)
    if not rows:
        return ""
    out = ["## Latency versus load (open loop)", "",
           "Latency from each request's intended send time (corrected for coordinated "
           "omission), merged over the windows, at fixed offered loads: fractions of each "
           "server's closed-loop maximum. Latency-capped throughput: the highest achieved "
           "load whose p99 stays under the SLO; a load the server fell behind never counts "
           "(`behind`: fewer than 95% of the due requests answered).", ""]
    for key, group in curve_groups(rows).items():
        sweep, command, transport, client, pipeline, threads = key
        slo = group[0]["latency_slo_us"]
        out.append(f"### {sweep}: {command.upper()}, {transport}, {client}, P{pipeline}, "
                   f"T={threads} (SLO p99 < {slo:,.0f} µs)")
        out.append("")
        capped = latency_capped_throughput(group, slo)
        summary = []
        for server, entry in capped.items():
            maximum = entry["closed_loop_max"]
            value = entry["capped"]
            summary.append([server, f"{maximum:,.0f}",
                            "none" if value is None else f"{value:,.0f}",
                            "–" if value is None else f"{value / maximum:.0%}"])
        out.append(markdown_table(["server", "closed-loop max ops/s",
                                   "latency-capped ops/s", "of max"], summary))
        out.append("")
        curve = []
        for row in sorted(group, key=lambda r: (r["server"], r["fraction"])):
            curve.append([row["server"], f"{row['fraction']:g}", f"{row['offered_rate']:,.0f}",
                          f"{row['achieved_rate']:,.0f}", f"{row['p50_us']:,.1f}",
                          f"{row['p99_us']:,.1f}", f"{row['p999_us']:,.1f}",
                          f"{row['max_us']:,.0f}", "behind" if row["behind"] else ""])
        out.append(markdown_table(["server", "fraction", "offered", "achieved", "p50 µs",
                                   "p99 µs", "p99.9 µs", "max µs", ""], curve))
        out.append("")
    return "\n".join(out)

