"""Latency versus load: open-loop points at fractions of a server's closed-loop maximum.

A sweep with `latency_curve = [0.1, 0.25, ...]` is measured per server in two
steps: its closed-loop point gives the maximum throughput; then kvlab-load runs
the same point open loop (`--rate`) at each fraction of that maximum, and each
run's latency comes from its merged histogram (all repetitions), measured from
every request's intended send time. From the rows this module builds:

- the curve rows themselves (latency.csv), which measures/latency_curves.py reads back
  (with the latency-capped throughput: per server, the highest achieved load whose p99
  stays under the SLO, beside the closed-loop maximum) and rendering/plots_latency.py
  draws.

A curve row is a dict: server, fraction, offered_rate, achieved_rate, p50_us,
p90_us, p99_us, p999_us, max_us, behind (a repetition fell behind its
schedule), backlog (requests owed at the windows' ends, summed), requests
(latencies in the merged histogram), closed_loop_max, client_bound (a
repetition's load generator saturated its cores), histogram (the kvlab-load
JSON file, relative to the run folder), and the 95% intervals over the
repetitions (NaN with one): achieved_low/high (Student's t on the repetitions'
rates, as a closed-loop point's) and p50/p99/p999_low/high (the same on the
logs of the repetitions' percentiles, as a ratio's: latency is multiplicative
and drawn on a log axis, and the interval never goes below zero). The point
itself stays the merged histogram's percentile, which may lie outside the
repetitions' interval: the merged p99 follows the worst repetition.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Iterable, Sequence

from . import loadgens
from ..measures.stats import ratio_interval, summarize
from ..measures.latency_curves import CURVE_COLUMNS, CURVE_INTERVALS
from ..schema.specs import Point

DEFAULT_FRACTIONS = (0.1, 0.25, 0.5, 0.75, 0.9, 0.95)


def open_loop_rates(closed_loop_max: float,
                    fractions: Sequence[float] = DEFAULT_FRACTIONS) -> list[tuple[float, float]]:
    """(fraction, offered ops/s) for each fraction of the closed-loop maximum."""
    if not closed_loop_max > 0:
        raise ValueError(f"closed-loop maximum must be > 0 ops/s, got {closed_loop_max!r}")
    for fraction in fractions:
        if not 0 < fraction <= 1:
            raise ValueError(f"latency_curve fractions must be in (0, 1], got {fraction!r}")
    return [(fraction, fraction * closed_loop_max) for fraction in fractions]


def closed_loop_maximum(rows: Iterable[dict]) -> float:
    """A point's closed-loop maximum: the median ops/s of its measured repetitions."""
    rates = sorted(float(r["ops_per_s"]) for r in rows if r.get("ops_per_s"))
    if not rates:
        raise ValueError("no measured closed-loop repetition to take the maximum from")
    middle = len(rates) // 2
    return rates[middle] if len(rates) % 2 else (rates[middle - 1] + rates[middle]) / 2


def _run_files(point: Point, fraction: float, out_dir: Path) -> tuple[Path, Path]:
    stem = f"{point.server}-{point.sweep}-{point.command}-t{point.threads}-p{point.pipeline}-f{fraction:g}"
    return out_dir / f"{stem}.csv", out_dir / f"{stem}.json"


def open_loop_commands(point: Point, binary: Path, target: str, closed_loop_max: float,
                       out_dir: Path, fractions: Sequence[float] = DEFAULT_FRACTIONS,
                       cpus: str | None = None,
                       netns: str | None = None, arrival: str = "uniform") -> list[dict]:
    """The kvlab-load runs of one point's latency curve: one per fraction.

    Each entry: fraction, rate, csv (path), json (path), argv (the command line).
    """
    runs = []
    for fraction, rate in open_loop_rates(closed_loop_max, fractions):
        csv_path, json_path = _run_files(point, fraction, out_dir)
        argv = loadgens.kvlab_load_command(point, binary, target, cpus, netns, csv_path,
                                           json_path, prefill=False, rate=rate, arrival=arrival)
        runs.append({"fraction": fraction, "rate": rate, "csv": csv_path, "json": json_path,
                     "argv": argv})
    return runs


def curve_row(server: str, fraction: float, closed_loop_max: float, document: dict) -> dict:
    """One curve row from kvlab-load's JSON document (its first point)."""
    point = document["points"][0]
    merged = point["merged"]
    repetitions = point["repetitions"]
    seconds = sum(r["seconds"] for r in repetitions)
    answers = sum(r["ops"] + r["errors"] for r in repetitions)
    rates = [(r["ops"] + r["errors"]) / r["seconds"] for r in repetitions if r["seconds"] > 0]
    intervals = {}
    for column, low, high in CURVE_INTERVALS:
        if column == "achieved_rate":
            summary = summarize(rates)
        else:
            summary = ratio_interval([r.get(column) for r in repetitions])
        intervals[low], intervals[high] = summary.low, summary.high
    return {
        "server": server,
        "fraction": fraction,
        "closed_loop_max": closed_loop_max,
        "offered_rate": float(document["config"]["rate"]),
        "achieved_rate": answers / seconds if seconds > 0 else 0.0,
        "p50_us": merged["p50_us"],
        "p90_us": merged["p90_us"],
        "p99_us": merged["p99_us"],
        "p999_us": merged["p999_us"],
        "max_us": merged["max_us"],
        "behind": any(r.get("behind", False) for r in repetitions),
        "backlog": sum(r.get("backlog", 0) for r in repetitions),
        "requests": merged["histogram"]["count"],
        "client_bound": any(r.get("client_bound", False) for r in repetitions),
        "repetitions": len(repetitions),
        **intervals,
    }


def curve_row_from_file(server: str, fraction: float, closed_loop_max: float, path: Path) -> dict:
    return curve_row(server, fraction, closed_loop_max, json.loads(Path(path).read_text()))


def measure_curve(point: Point, closed_loop_max: float, build_dir: Path, target: str,
                  out_dir: Path, fractions: Sequence[float] = DEFAULT_FRACTIONS,
                  cpus: str | None = None,
                  netns: str | None = None, arrival: str = "uniform") -> tuple[list[dict], list[str]]:
    """Runs one point's open-loop runs (the server already running at `target`).

    Returns the curve rows measured and the problems met (a failed run's
    completed repetitions still give a row). kvlab-load's JSON files stay in
    out_dir, a folder of the run folder; each row names its file from there.
    """
    rows, problems = [], []
    for fraction, rate in open_loop_rates(closed_loop_max, fractions):
        csv_path, json_path = _run_files(point, fraction, out_dir)
        result = loadgens.run_kvlab_load(point, build_dir, target, cpus, netns, csv_path,
                                         json_path, prefill=False, rate=rate, arrival=arrival)
        if result.error:
            problems.append(f"{point.server} open loop at {rate:.0f} ops/s: {result.error}")
        try:
            document = json.loads(json_path.read_text())
            if document["points"] and document["points"][0]["repetitions"]:
                row = curve_row(point.server, fraction, closed_loop_max, document)
                row["histogram"] = str(json_path.relative_to(Path(out_dir).parent))
                rows.append(row)
        except (OSError, ValueError, KeyError) as error:
            problems.append(f"{point.server} open loop at {rate:.0f} ops/s: no results ({error})")
    return rows, problems


def append_curve_rows(path: Path, point: Point, rows: list[dict]) -> None:
    """Adds one point's curve rows to a run's latency.csv (header on first write)."""
    new = not Path(path).exists()
    with Path(path).open("a", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=CURVE_COLUMNS, extrasaction="ignore")
        if new:
            writer.writeheader()
        for row in rows:
            writer.writerow({**row, "sweep": point.sweep, "command": point.command,
                             "transport": point.transport, "client": point.client,
                             "pipeline": point.pipeline, "threads": point.threads,
                             "latency_slo_us": point.latency_slo_us})
