"""Latency curves read back: a run's latency.csv (written by running/latency.py, one row
per server and fraction of its closed-loop maximum) as curve rows, and the throughput a
server sustains under a latency SLO.

A curve row's columns: CURVE_COLUMNS; the 95% intervals over the repetitions: the
CURVE_INTERVALS columns (running/latency.py's docstring says how they are computed).
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any, Iterable

from ..schema.specs import DEFAULT_LATENCY_SLO_US

# The interval columns of a curve row: (value column, low column, high column).
CURVE_INTERVALS = (("achieved_rate", "achieved_low", "achieved_high"),
                   ("p50_us", "p50_low", "p50_high"), ("p99_us", "p99_low", "p99_high"),
                   ("p999_us", "p999_low", "p999_high"))
CURVE_COLUMNS = ("sweep", "command", "transport", "client", "pipeline", "threads",
                 "latency_slo_us", "server", "fraction", "closed_loop_max", "offered_rate",
                 "achieved_rate", "p50_us", "p90_us", "p99_us", "p999_us", "max_us", "behind",
                 "backlog", "requests", "client_bound", "repetitions",
                 *(c for _, low, high in CURVE_INTERVALS for c in (low, high)), "histogram")


def latency_capped_throughput(rows: Iterable[dict],
                              slo_us: float = DEFAULT_LATENCY_SLO_US) -> dict[str, dict]:
    """Per server: the highest achieved load whose p99 stays under `slo_us`, and the
    range its p99 interval allows.

    A row that fell behind its schedule is not a load the server sustained and
    never counts. Returns {server: {"capped": ops/s or None (no row met the
    SLO), "capped_low": the highest load whose whole p99 interval stays under the
    SLO (p99_high; None if none), "capped_high": the highest whose interval
    reaches under it (p99_low), "slo_us": slo_us, "closed_loop_max": ...}}. Without
    an interval (one repetition) a row's p99 stands for both ends.
    """
    result: dict[str, dict] = {}
    for row in rows:
        entry = result.setdefault(row["server"], {"capped": None, "capped_low": None,
                                                  "capped_high": None, "slo_us": slo_us,
                                                  "closed_loop_max": row.get("closed_loop_max")})
        if row["behind"]:
            continue
        p99 = row["p99_us"]
        ends = {"capped": p99, "capped_low": _or(row.get("p99_high"), p99),
                "capped_high": _or(row.get("p99_low"), p99)}
        for name, value in ends.items():
            if value < slo_us and (entry[name] is None or row["achieved_rate"] > entry[name]):
                entry[name] = row["achieved_rate"]
    return result


def _or(value: Any, fallback: float) -> float:
    """value, unless it is missing or NaN."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return fallback
    return fallback if number != number else number


def load_curve_rows(path: Path) -> list[dict]:
    """latency.csv back as curve rows (numbers as floats, flags as bools). Columns added
    after a file was written read as unknown: intervals NaN, client_bound False,
    histogram blank."""
    rows = []
    numbers = ("fraction", "closed_loop_max", "offered_rate", "achieved_rate", "p50_us",
               "p90_us", "p99_us", "p999_us", "max_us", "backlog", "requests",
               "latency_slo_us", "repetitions",
               *(c for _, low, high in CURVE_INTERVALS for c in (low, high)))
    with Path(path).open(newline="") as handle:
        for record in csv.DictReader(handle):
            row = dict(record)
            for column in numbers:
                value = record.get(column)
                row[column] = float(value) if value not in ("", None) else float("nan")
            for flag in ("behind", "client_bound"):
                row[flag] = record.get(flag) in ("True", "true", "1")
            row["histogram"] = record.get("histogram") or ""
            rows.append(row)
    return rows
