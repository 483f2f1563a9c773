"""A run folder (results/runs/<UTC time>-<experiment>/) and its files.

    points.csv     one row per point and round (column `repetition` = the round), as
                   kvlab-load writes it: the experiment's variables, then its measured
                   columns (figures, the server's CPU use, interference, cost per
                   operation, a status ok | disturbed and a note saying why); the runner
                   adds rows with status failed | skipped for what it could not measure;
                   with [placement], one row per client host and a `merged` row (column
                   host). The columns' names, kinds and meanings: `kvlab-load --schema`,
                   kept in meta.json as points_schema.
    ratios.csv     the declared comparisons: comparison,test,point,ratio,low,high,
                   rounds,status,metric,client_bound (declared_ratios.py)
    host_probes.csv  alternation: the host probe's speed before and after each round
                   (running/host_probe.py; alternating.HOST_PROBE_COLUMNS)
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
from typing import Any

import pandas as pd

# Point variables added after runs were recorded, with the value those runs had.
VARIABLE_DEFAULTS = {"io": "direct"}
# A cell that could not be measured (kvlab-load's cost columns).
NOT_MEASURED = "n/a"
FLAG_VALUES = {"true": True, "false": False}


class PointsWriter:
    """Appends rows to points.csv; each write is flushed to disk before it returns, so a
    crash later in the run never loses a completed point."""

    def __init__(self, path: Path, columns: list[str]) -> None:
        self.path = path
        self.columns = columns
        self._handle = path.open("w", newline="")
        self._writer = csv.DictWriter(self._handle, fieldnames=columns, extrasaction="ignore")
        self._writer.writeheader()
        self._sync()

    def write(self, rows: list[dict]) -> None:
        for row in rows:
            self._writer.writerow({c: row.get(c, "") for c in self.columns})
        self._sync()

    def _sync(self) -> None:
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        self._handle.close()


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def column_kind(values: pd.Series) -> str:
    """A column's kind judged from its cells, for columns no schema describes (the
    experiment's variables, runs from before the schema): "number" when every cell that
    is not blank or n/a is a number, "flag" when every such cell is true/false, else
    "text". A column with no such cell stays text."""
    cells = values[(values != "") & (values != NOT_MEASURED)]
    if cells.empty:
        return "number" if (values == NOT_MEASURED).any() else "text"
    if cells.str.lower().isin(FLAG_VALUES).all():
        return "flag"
    return "number" if cells.map(_is_number).all() else "text"


def load_points(run_dir: str | Path) -> pd.DataFrame:
    """points.csv with numbers and flags converted: the kinds the run's schema states
    (meta.json points_schema), others judged from the cells (column_kind)."""
    frame = pd.read_csv(Path(run_dir) / "points.csv", dtype=str, keep_default_na=False)
    # Runs from before a variable existed measured what is now its default.
    for variable, default in VARIABLE_DEFAULTS.items():
        if variable not in frame:
            frame[variable] = default
    schema = load_meta(run_dir).get("points_schema", {})
    kinds = {c["name"]: c["kind"] for c in schema.get("columns", [])}
    for column in frame.columns:
        kind = kinds.get(column) or column_kind(frame[column])
        if kind == "number":
            frame[column] = pd.to_numeric(frame[column], errors="coerce")
        elif kind == "flag":
            frame[column] = frame[column].str.lower().map(FLAG_VALUES).fillna(False).astype(bool)
    return frame


def whole_points(points: pd.DataFrame) -> pd.DataFrame:
    """The rows that stand for a whole point: all rows of a one-machine run, the `merged`
    rows of a multi-host run (its per-client-host rows are parts of those)."""
    if "host" not in points:
        return points
    return points[points["host"].isin(("", "merged"))]


def load_table(run_dir: str | Path, name: str, **read_csv: Any) -> pd.DataFrame | None:
    """A CSV table of a run folder (ratios.csv, syscalls.csv, ...); None when the run has
    none or it holds no row. `read_csv`: pandas.read_csv's options."""
    path = Path(run_dir) / name
    if not path.exists():
        return None
    table = pd.read_csv(path, **read_csv)
    return None if table.empty else table


def load_meta(run_dir: str | Path) -> dict:
    path = Path(run_dir) / "meta.json"
    return json.loads(path.read_text()) if path.exists() else {}


def newest_run(root: str | Path) -> Path | None:
    runs = sorted(p for p in Path(root).glob("*/points.csv"))
    return runs[-1].parent if runs else None
