"""kvlab-load's latency histograms, merged across a point's rounds.

A point's percentiles are percentiles of the merged histogram of its rounds
(counts added bucket by bucket: exact, as the buckets are fixed), not the
median of per-round percentiles: a p99 of three p99s is no percentile of
anything. The bucket layout and the rule for a quantile's value (the middle
of the bucket holding the rank, clamped to the observed min and max) are those
of harness/latency_histogram.cc, so one round's figures match kvlab-load's.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

QUANTILES = {"p50_us": 0.50, "p90_us": 0.90, "p99_us": 0.99, "p999_us": 0.999}


@dataclasses.dataclass
class Histogram:
    buckets: dict[tuple[int, int], int] = dataclasses.field(default_factory=dict)
    count: int = 0
    min_ns: int = 0
    max_ns: int = 0

    @staticmethod
    def from_json(data: dict) -> "Histogram":
        histogram = Histogram()
        histogram.add(data)
        return histogram

    def add(self, data: dict) -> None:
        """Adds one kvlab-load histogram ({"count", "min", "max", "buckets": [[lo, hi, n]]})."""
        if not data.get("count"):
            return
        for low, high, count in data["buckets"]:
            self.buckets[(low, high)] = self.buckets.get((low, high), 0) + count
        self.min_ns = data["min"] if self.count == 0 else min(self.min_ns, data["min"])
        self.max_ns = max(self.max_ns, data["max"])
        self.count += data["count"]

    def value_at_quantile(self, q: float) -> float:
        """Nanoseconds at quantile q, as LatencyHistogram::ValueAtQuantile computes it."""
        if self.count == 0:
            return math.nan
        rank = max(1, math.ceil(min(max(q, 0.0), 1.0) * self.count))
        seen = 0
        for (low, high), count in sorted(self.buckets.items()):
            seen += count
            if seen >= rank:
                middle = low + (high - low) // 2
                return float(min(max(middle, self.min_ns), self.max_ns))
        return float(self.max_ns)


def histograms_of(path: Path) -> list[dict]:
    """Every repetition's histogram in one kvlab-load JSON file."""
    data = json.loads(path.read_text())
    return [r["histogram"] for p in data.get("points", []) for r in p.get("repetitions", [])
            if r.get("histogram")]


def merged_percentiles(run_dir: Path, files) -> dict[str, float] | None:
    """p50/p90/p99/p99.9/max in µs over the merged histograms of `files` (relative to the
    run folder); None when none of them holds a histogram."""
    merged = Histogram()
    for name in files:
        path = Path(run_dir) / name
        if not name or not path.is_file():
            continue
        for data in histograms_of(path):
            merged.add(data)
    if merged.count == 0:
        return None
    figures = {column: merged.value_at_quantile(q) / 1000 for column, q in QUANTILES.items()}
    figures["max_us"] = merged.max_ns / 1000
    return figures
