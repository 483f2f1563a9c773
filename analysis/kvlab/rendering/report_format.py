"""The report's building blocks, shared by its generic sections (report.py) and the seeds'
tables (report_seeds.py): a point's cell ("median ±h%" with † for client-bound and ‼ for
error replies), a ratio of two points (~ when their intervals overlap), and what meta.json
says about the servers.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from ..running.cpus import parse_cpu_list
from ..measures.stats import Summary

CLIENT_BOUND_MARK = "†"
ERROR_MARK = " ‼"


def format_rate(value: float) -> str:
    return "–" if value is None or math.isnan(value) else f"{value:,.0f}"


def format_cell(row: pd.Series | None) -> str:
    if row is None:
        return "–"
    summary: Summary = row["summary"]
    if summary.n == 0:
        return row["status"]
    text = format_rate(summary.median)
    if not math.isnan(summary.relative_half_width):
        text += f" ±{100 * summary.relative_half_width:.1f}%"
    if row["client_bound"]:
        text += CLIENT_BOUND_MARK
    if row["errors"] and not pd.isna(row["errors"]):
        text += ERROR_MARK
    return text


def overlap(a: Summary, b: Summary) -> bool:
    if any(math.isnan(x) for x in (a.low, a.high, b.low, b.high)):
        return True
    return a.low <= b.high and b.low <= a.high


def format_ratio(numerator: pd.Series | dict | None, denominator: pd.Series | dict | None) -> str:
    if (numerator is None or denominator is None or numerator["n"] == 0
            or denominator["n"] == 0 or not denominator["median"]):
        return "–"
    ratio = numerator["median"] / denominator["median"]
    noise = "~" if overlap(numerator["summary"], denominator["summary"]) else ""
    return f"{noise}{ratio:.2f}"



def find_point(table: pd.DataFrame, **where: Any) -> pd.Series | None:
    """The first row of a point table matching every column=value, or None."""
    mask = pd.Series(True, index=table.index)
    for column, value in where.items():
        mask &= table[column] == value
    found = table[mask]
    return None if found.empty else found.iloc[0]


def format_number(value: float | None, digits: int = 1) -> str:
    return "–" if value is None or pd.isna(value) else f"{value:,.{digits}f}"


def server_specs(meta: dict) -> dict:
    """Each server of the run by name, as meta.json describes it."""
    return meta.get("servers", {})


def server_cpu_count(meta: dict) -> int | None:
    cpus = meta.get("server_cpus")
    return len(parse_cpu_list(cpus)) if cpus else None


def median_of_numbers(values: pd.Series) -> float:
    """The median of the values that are numbers; NaN, and no numpy warning, when none
    is (a column that is `n/a` or blank in every round)."""
    numbers = pd.to_numeric(values, errors="coerce").dropna()
    return float(numbers.median()) if len(numbers) else math.nan
