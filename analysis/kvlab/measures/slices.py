"""A window's throughput in 100 ms slices (kvlab-load's JSON: each repetition's `slices`),
and what they tell: how steady the window was, and whether the warm-up was long enough.

- coefficient of variation: the standard deviation of the slices' ops/s over their
  mean (a window whose throughput swings is less trustworthy than its mean says);
- warm-up check: the first WARMUP_SLICES slices of a window against the rest. If they
  run more than WARMUP_TOLERANCE slower, the server or client was still warming up
  when the window opened (caches, allocator, connection buffers): warm up longer.
Slices shorter than half their nominal length (the window's tail) are left out.
"""

from __future__ import annotations

import math
import statistics
from pathlib import Path
from typing import Any, Iterable

from .histograms import document_exists, read_document

WARMUP_SLICES = 2
WARMUP_TOLERANCE = 0.10


def slice_rates(path: Path) -> list[list[float]]:
    """ops/s of each slice, one list per repetition in the file."""
    data = read_document(path)
    result = []
    for point in data.get("points", []):
        for repetition in point.get("repetitions", []):
            slices = repetition.get("slices") or {}
            nominal = slices.get("nominal_s", 0.1)
            rates = [ops / seconds for _, seconds, ops in slices.get("rows", [])
                     if seconds >= nominal / 2]
            result.append(rates)
    return result


def variation(rates: list[float]) -> float:
    if len(rates) < 2 or statistics.fmean(rates) <= 0:
        return math.nan
    return statistics.stdev(rates) / statistics.fmean(rates)


def warmed_up(rates: list[float]) -> bool | None:
    """False when the first slices ran more than the tolerance slower than the rest."""
    if len(rates) < WARMUP_SLICES + 2:
        return None
    first = statistics.fmean(rates[:WARMUP_SLICES])
    rest = statistics.fmean(rates[WARMUP_SLICES:])
    return not (rest > 0 and first < (1 - WARMUP_TOLERANCE) * rest)


def point_steadiness(run_dir: Path, files: Iterable[Any]) -> tuple[float, int, int]:
    """(median coefficient of variation over the windows, windows that look cold, windows)
    for the histogram files of one point's rounds."""
    cvs, cold, windows = [], 0, 0
    for name in files:
        path = Path(run_dir) / str(name)
        if not isinstance(name, str) or not name or not document_exists(path):
            continue
        for rates in slice_rates(path):
            if not rates:
                continue
            windows += 1
            cv = variation(rates)
            if not math.isnan(cv):
                cvs.append(cv)
            cold += warmed_up(rates) is False
    return (statistics.median(cvs) if cvs else math.nan), cold, windows
