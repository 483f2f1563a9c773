"""A run folder (results/runs/<UTC time>-<experiment>/) and its files.

    points.csv     one row per point and round (column `repetition` = the round): the
                   experiment's variables, the load generator's figures, the server's
                   CPU use, interference and cost per operation, a status
                   (ok | disturbed | failed | skipped) and a note saying why when not ok;
                   with [placement], one row per client host and a `merged` row (column
                   host)
    ratios.csv     the declared comparisons: comparison,test,point,ratio,low,high,
                   rounds,status (comparisons.py)
    meta.json      machine, git commit, package versions, CPUs, the experiment text
    histograms/    kvlab-load's JSON (latency histograms) per point (and client host)
    hosts.json     with [placement]: each host's commit, cores and clock offset
    logs/          the servers' output
    report.md      the rendered report; plots/*.png and *.svg
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pandas as pd

from .experiment import POINT_VARIABLES
from .loadgens import HARNESS_COLUMNS

# server_cpu: cores' worth in the window; foreign/steal_cpu: cores' worth others used on the
# measured CPUs (interference.py); the *_per_op columns: cost per operation (runner._costs),
# "n/a" where it cannot be measured; histogram: kvlab-load's JSON, relative to the run folder;
# host: the client host of a multi-host point, or "merged" (blank when run on one machine).
COST_COLUMNS = ("server_cpu_us_per_op", "client_cpu_us_per_op", "server_ctx_switches_per_op",
                "server_instructions_per_op", "server_cycles_per_op")
EXTRA_COLUMNS = ("server_cpu", "foreign_cpu", "steal_cpu") + COST_COLUMNS + (
    "histogram", "status", "note", "host")
# Harness columns that are also point variables appear once, as variables.
COLUMNS = POINT_VARIABLES + tuple(c for c in HARNESS_COLUMNS if c not in POINT_VARIABLES) \
    + EXTRA_COLUMNS
# Point variables added after runs were recorded, with the value those runs had.
VARIABLE_DEFAULTS = {"io": "direct"}
NUMERIC = ("keys", "value_size", "pipeline", "connections", "threads", "repetition", "ops",
           "seconds", "ops_per_s", "errors", "p50_us", "p90_us", "p99_us", "p999_us", "max_us",
           "client_cpu", "server_cpu", "foreign_cpu", "steal_cpu") + COST_COLUMNS


class PointsWriter:
    """Appends rows to points.csv; each write is flushed to disk before it returns, so a
    crash later in the run never loses a completed point."""

    def __init__(self, path: Path):
        self.path = path
        self._handle = path.open("w", newline="")
        self._writer = csv.DictWriter(self._handle, fieldnames=COLUMNS, extrasaction="ignore")
        self._writer.writeheader()
        self._sync()

    def write(self, rows: list[dict]) -> None:
        for row in rows:
            self._writer.writerow({c: row.get(c, "") for c in COLUMNS})
        self._sync()

    def _sync(self) -> None:
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        self._handle.close()


def load_points(run_dir: str | Path) -> pd.DataFrame:
    frame = pd.read_csv(Path(run_dir) / "points.csv", dtype=str, keep_default_na=False)
    # Runs from before a variable existed measured what is now its default.
    for variable, default in VARIABLE_DEFAULTS.items():
        if variable not in frame:
            frame[variable] = default
    for column in NUMERIC:
        if column in frame:
            frame[column] = pd.to_numeric(frame[column], errors="coerce")
    if "client_bound" in frame:
        frame["client_bound"] = frame["client_bound"].str.lower().isin(("true", "1", "yes"))
    return frame


def whole_points(points: pd.DataFrame) -> pd.DataFrame:
    """The rows that stand for a whole point: all rows of a one-machine run, the `merged`
    rows of a multi-host run (its per-client-host rows are parts of those)."""
    if "host" not in points:
        return points
    return points[points["host"].isin(("", "merged"))]


def load_meta(run_dir: str | Path) -> dict:
    path = Path(run_dir) / "meta.json"
    return json.loads(path.read_text()) if path.exists() else {}


def newest_run(root: str | Path) -> Path | None:
    runs = sorted(p for p in Path(root).glob("*/points.csv"))
    return runs[-1].parent if runs else None
