"""What the dashboard shows, read from a results folder: the `make regress` records
(kvlab.tracking.opcost), the `make micro` runs (kvlab.tracking.micro), the bench history (committed records
and local run folders, kvlab.tracking.history) grouped per machine and experiment, and the newest
local run's report. dashboard.py draws it; this module writes nothing.

Pure function of the files it reads. Thread-safe (no shared state).
"""

from __future__ import annotations

import dataclasses
import datetime
from pathlib import Path

from ..tracking import micro
from ..tracking.history import group_records, load_history, local_run_folders, parse_date, run_started
from ..tracking.opcost import load_opcost_history


@dataclasses.dataclass(frozen=True)
class NewestRun:
    folder: Path
    report: str | None   # report.md, or one rendered from its points; None when neither
    problem: str = ""    # why no report could be rendered


@dataclasses.dataclass(frozen=True)
class DashboardData:
    results_dir: Path
    opcost: list[dict]                              # make regress records, oldest first
    micro_runs: list[dict]                          # make micro runs, oldest first
    bench: list[dict]                               # every bench history record
    machines: dict[str, dict[str, list[dict]]]      # fingerprint id -> experiment -> records
    newest_run: NewestRun | None                    # the newest local run folder


def _started(folder: Path) -> datetime.datetime:
    epoch = datetime.datetime.min.replace(tzinfo=datetime.timezone.utc)
    return parse_date(run_started(folder)) or epoch


def newest_run(results_dir: str | Path) -> NewestRun | None:
    """The newest local run folder with its report.md (or a rendering of its points)."""
    folders = local_run_folders(results_dir)
    if not folders:
        return None
    newest = max(folders, key=lambda f: (_started(f), f.name))
    report = newest / "report.md"
    if report.exists():
        return NewestRun(newest, report.read_text(encoding="utf-8"))
    try:
        from .report import render_report
        return NewestRun(newest, render_report(newest))
    except Exception as e:  # a partial or foreign run folder
        return NewestRun(newest, None, str(e))


def load_dashboard_data(results_dir: str | Path) -> DashboardData:
    bench = load_history(results_dir)
    machines: dict[str, dict[str, list[dict]]] = {}
    for (fingerprint_id, experiment), group in group_records(bench).items():
        machines.setdefault(fingerprint_id, {})[experiment] = group
    return DashboardData(Path(results_dir).absolute(), load_opcost_history(results_dir),
                         micro.load_runs(results_dir), bench, machines, newest_run(results_dir))
