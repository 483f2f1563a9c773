"""kvlab-load's latency histograms, merged across a point's rounds.

A point's percentiles are percentiles of the merged histogram of its rounds
(counts added bucket by bucket: exact, as the buckets are fixed), not the
median of per-round percentiles: a p99 of three p99s is no percentile of
anything. The bucket layout and the rule for a quantile's value (the middle
of the bucket holding the rank, clamped to the observed min and max) are those
of harness/measurement/latency_histogram.cc, so one round's figures match kvlab-load's; an
empty histogram reads 0 at every quantile, as LatencyHistogram::ValueAtQuantile says.
This module is Python's only merge and quantile rule: the multi-host runner's merged
rows (running/multihost.py) and the alternation's slices read them here too.

A committed sample keeps its kvlab-load JSON files gzipped (compress_documents):
a file named `x.json` is read from `x.json.gz` where only that exists.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import math
from pathlib import Path
from typing import Any, Iterable

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

    @staticmethod
    def merge(documents: list[dict]) -> "Histogram":
        """The exact merge of kvlab-load histograms: counts of equal buckets added."""
        histogram = Histogram()
        for data in documents:
            histogram.add(data)
        return histogram

    def to_json(self) -> dict:
        """As kvlab-load writes one: {"unit", "count", "min", "max", "buckets"}, the
        buckets in order (min and max 0 when empty)."""
        return {"unit": "ns", "count": self.count, "min": self.min_ns, "max": self.max_ns,
                "buckets": [[low, high, count]
                            for (low, high), count in sorted(self.buckets.items())]}

    def add(self, data: dict) -> None:
        """Adds one kvlab-load histogram ({"count", "min", "max", "buckets": [[lo, hi, n]]})."""
        if data.get("count"):
            # The loop is written out, with no generator per bucket: merging is most of
            # what a latency interval costs (the coverage tests merge 100,000 documents).
            counts, get = self.buckets, self.buckets.get
            for low, high, n in data["buckets"]:
                counts[low, high] = get((low, high), 0) + n
            self._add_totals(data["count"], data["min"], data["max"])

    def add_histogram(self, other: "Histogram") -> None:
        """Adds another merged histogram (the same as adding each document it holds)."""
        if other.count:
            counts, get = self.buckets, self.buckets.get
            for bucket, n in other.buckets.items():
                counts[bucket] = get(bucket, 0) + n
            self._add_totals(other.count, other.min_ns, other.max_ns)

    def _add_totals(self, count: int, min_ns: int, max_ns: int) -> None:
        self.min_ns = min_ns if self.count == 0 else min(self.min_ns, min_ns)
        self.max_ns = max(self.max_ns, max_ns)
        self.count += count

    def value_at_quantile(self, q: float) -> float:
        """Nanoseconds at quantile q, as LatencyHistogram::ValueAtQuantile computes it:
        nearest rank ceil(q * count) (at least 1), the middle of the bucket holding it,
        clamped to the observed min and max; 0 when the histogram is empty."""
        if self.count == 0:
            return 0.0
        rank = max(1, math.ceil(min(max(q, 0.0), 1.0) * self.count))
        seen = 0
        for (low, high), count in sorted(self.buckets.items()):
            seen += count
            if seen >= rank:
                middle = low + (high - low) // 2
                return float(min(max(middle, self.min_ns), self.max_ns))
        return float(self.max_ns)

    def percentiles_us(self) -> dict[str, float]:
        """p50/p90/p99/p99.9 and max in µs: the columns of QUANTILES, then max_us."""
        figures = {column: self.value_at_quantile(q) / 1000 for column, q in QUANTILES.items()}
        figures["max_us"] = self.max_ns / 1000
        return figures


def read_document(path: Path) -> dict:
    """One kvlab-load JSON document, from `path` or, where only that exists, `path`.gz."""
    path = Path(path)
    if not path.is_file() and path.with_name(path.name + ".gz").is_file():
        with gzip.open(path.with_name(path.name + ".gz"), "rt") as handle:
            return json.load(handle)
    return json.loads(path.read_text())


def document_exists(path: Path) -> bool:
    path = Path(path)
    return path.is_file() or path.with_name(path.name + ".gz").is_file()


def compress_documents(folder: Path) -> list[Path]:
    """Gzips every kvlab-load JSON file under `folder` (a run's histograms/ and latency/),
    in place, for a results folder that is committed; readers find them by their old
    names. Each point's merged histogram is left out: it is the sum of its repetitions'
    histograms, which are kept and which `merged` adds up again (results/sample-latency:
    1.28 MB gzipped with it, 1.02 MB without). Returns the files written."""
    written = []
    for path in sorted(Path(folder).rglob("*.json")):
        document = json.loads(path.read_text())
        for point in document.get("points", []):
            point.get("merged", {}).pop("histogram", None)
        target = path.with_name(path.name + ".gz")
        with gzip.open(target, "wt", compresslevel=9) as handle:
            json.dump(document, handle, separators=(",", ":"))
        path.unlink()
        written.append(target)
    return written


def histograms_of(path: Path) -> list[dict]:
    """Every repetition's histogram in one kvlab-load JSON file."""
    data = read_document(path)
    return [r["histogram"] for p in data.get("points", []) for r in p.get("repetitions", [])
            if r.get("histogram")]


def merged(run_dir: Path, files: Iterable[Any]) -> Histogram | None:
    """The merged histogram of every repetition in `files` (relative to the run folder;
    blank or missing names are skipped); None when none of them holds a histogram."""
    histogram = Histogram()
    for name in files:
        if not isinstance(name, str) or not name or not document_exists(Path(run_dir) / name):
            continue
        for data in histograms_of(Path(run_dir) / name):
            histogram.add(data)
    return histogram if histogram.count else None


def merged_percentiles(run_dir: Path, files: Iterable[Any]) -> dict[str, float] | None:
    """p50/p90/p99/p99.9/max in µs over the merged histograms of `files` (relative to the
    run folder); None when none of them holds a histogram."""
    histogram = merged(run_dir, files)
    if histogram is None:
        return None
    return histogram.percentiles_us()
