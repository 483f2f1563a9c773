"""The report's lead: the declared comparisons (ratios.csv) beside the seeds' figures,
why rounds stopped, and how much of the run was disturbed."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from .report_format import CLIENT_BOUND_MARK


def _interval(row) -> str:
    if pd.isna(row["low"]):
        return f"{row['ratio']:.3f} [–]"
    half = max(row["high"] / row["ratio"] - 1, 1 - row["low"] / row["ratio"])
    return f"{row['ratio']:.3f} [{row['low']:.3f}, {row['high']:.3f}] ±{100 * half:.1f}%"


def declared_section(run_dir: Path, meta: dict) -> str:
    path = Path(run_dir) / "ratios.csv"
    if not path.exists():
        return ""
    ratios = pd.read_csv(path, keep_default_na=True)
    if ratios.empty:
        return ""
    seeds = {c.get("name"): c.get("seed_ratio") for c in meta.get("comparisons", [])}
    precision = meta.get("precision")
    lines = ["## Declared comparisons", ""]
    target = f"±{precision:.1%}" if precision else "±5% (no precision set)"
    lines.append(f"Target half-width {target}. Rounds stopped: "
                 + "; ".join(f"{phase}: {why}" for phase, why in
                             meta.get("rounds", {}).get("stopped", {}).items()) + ".")
    lines.append("")
    header = ["comparison", "test", "point", "ratio [low, high]", "rounds", "status", "seed"]
    rows = []
    bound = ratios["client_bound"].astype(str).str.lower() == "true" \
        if "client_bound" in ratios else pd.Series(False, index=ratios.index)
    for i, row in ratios.iterrows():
        seed = seeds.get(row["comparison"])
        ratio = "–" if pd.isna(row["ratio"]) else _interval(row)
        rows.append([row["comparison"], str(row["test"]).upper(), row["point"],
                     ratio + (f" {CLIENT_BOUND_MARK}" if bound[i] else ""), str(row["rounds"]),
                     row["status"], "–" if seed is None else f"{seed:.2f}"])
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "---|" * len(header))
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    if bound.any():
        lines += ["", f"{CLIENT_BOUND_MARK} {int(bound.sum())} throughput ratio(s) had the load "
                  "generator saturated in most rounds: both servers served what the client "
                  "could drive, so the ratio measures the client as much as the servers. What "
                  "a request costs each server is the `per server CPU` comparison (metric "
                  "ops_per_server_cpu_s), where one is declared."]
    unresolved = ratios[ratios["status"] != "resolved"]
    if not unresolved.empty:
        lines += ["", f"{len(unresolved)} of {len(ratios)} declared ratios did not reach the "
                  "target: see why rounds stopped above; `disturbed` ones lost their rounds to "
                  "other work on the measured CPUs."]
    return "\n".join(lines)


def disturbance_line(points: pd.DataFrame, meta: dict) -> str:
    """How much of the run other work disturbed, measured on the measured CPUs (not the load
    average, which the benchmark's own server and client raise)."""
    if "foreign_cpu" not in points or points["foreign_cpu"].isna().all():
        return "- disturbance: not measured by this run"
    disturbed = int((points["status"] == "disturbed").sum())
    measured = int(points["status"].isin(["ok", "disturbed"]).sum())
    worst = points["foreign_cpu"].max()
    line = (f"- disturbance: {disturbed} of {measured} measurements had other work on the "
            f"measured CPUs above the threshold and were run again; foreign CPU median "
            f"{points['foreign_cpu'].median():.3f} cores, worst {worst:.2f}")
    steal = points["steal_cpu"].max() if "steal_cpu" in points else math.nan
    if not pd.isna(steal) and steal > 0:
        line += f"; steal up to {steal:.2f} cores"
    return line
