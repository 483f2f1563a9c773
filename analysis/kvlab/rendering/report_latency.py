"""The report's latency section: each server's latency-versus-load curve (latency.csv,
open loop at fractions of its closed-loop maximum) and its latency-capped throughput."""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any, Iterable

from ..measures.ratio_verdicts import decide_row
from ..measures.latency_curves import latency_capped_throughput, load_curve_rows
from .markdown import markdown_table


def curve_groups(rows: Iterable[dict]) -> dict[tuple, list[dict]]:
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
           "(`behind`: fewer than 95% of the due requests answered); its range runs from "
           "the highest load whose whole p99 interval stays under the SLO to the highest "
           "whose interval reaches under it. Each server's curve is measured on its own, "
           "minutes from the others': the paired table below, where the experiment "
           "declares one, compares servers at one offered load within milliseconds.", ""]
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
            low, high = entry["capped_low"], entry["capped_high"]
            summary.append([server, f"{maximum:,.0f}",
                            "none" if value is None else f"{value:,.0f}",
                            f"{'none' if low is None else f'{low:,.0f}'} – "
                            f"{'none' if high is None else f'{high:,.0f}'}",
                            "–" if value is None else f"{value / maximum:.0%}"])
        out.append(markdown_table(["server", "closed-loop max ops/s", "latency-capped ops/s",
                                   "range over the p99 interval", "of max"], summary))
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



def paired_latency_section(run_dir: Path, meta: dict) -> str:
    """The declared latency comparisons (latency_pairs.csv beside ratios.csv): both sides
    offered the same rate, alternating in ABBA slices, each side's p50 and p99 over its
    slices, the ratio with its interval and what it decides."""
    path = Path(run_dir) / "latency_pairs.csv"
    if not path.exists():
        return ""
    with path.open() as handle:
        pairs = list(csv.DictReader(handle))
    ratios = {}
    ratios_path = Path(run_dir) / "ratios.csv"
    if ratios_path.exists():
        with ratios_path.open() as handle:
            for row in csv.DictReader(handle):
                ratios[(row["comparison"], row["test"], row["point"])] = row
    specs = {c.get("name"): c for c in meta.get("comparisons", [])}
    rows = []
    for pair in pairs:
        ratio = ratios.get((pair["comparison"], pair["test"], pair["point"]), {})
        metric = ratio.get("metric") or specs.get(pair["comparison"], {}).get("metric", "")
        low, high, value = (_number(ratio.get(k)) for k in ("low", "high", "ratio"))
        verdict = decide_row(dict(ratio, metric=metric), None, pair["a"], pair["b"])
        interval = "–" if math.isnan(value) else (
            f"{value:.3f}" + ("" if math.isnan(low) else f" [{low:.3f}, {high:.3f}]"))
        rows.append([pair["comparison"], pair["test"].upper(), f"{float(pair['rate']):,.0f}",
                     f"{pair['a_p50_us']} / {pair['a_p99_us']}",
                     f"{pair['b_p50_us']} / {pair['b_p99_us']}", interval, verdict.text(),
                     pair["rounds"], pair["max_drain_s"]])
    if not rows:
        return ""
    return "\n".join([
        "## Latency compared at one offered load (alternating)", "",
        "Both sides offered the same rate, open loop, one side at a time in ABBA slices "
        "(harness/alternation.h): each slice's requests are scheduled from its start, every "
        "one due by its end is answered and belongs to it. The ratio is A's percentile over "
        "B's, from merged histograms per batch of slices (interval: batch means, or round "
        "means when wider); below 1 A is faster. A slice holds no stall longer than itself: "
        "`max drain s` is the longest a side took to answer its slice's last requests after "
        "the switch.", "",
        markdown_table(["comparison", "test", "ops/s offered", "A p50 / p99 µs",
                        "B p50 / p99 µs", "ratio [95% interval]", "verdict", "rounds",
                        "max drain s"], rows), ""])


def _number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan
