"""Instruction counts per operation over commits: the records `make regress` leaves.

Committed baselines come from the git history of results/baseline/opcost.json (one
record per commit that changed it); gate runs from results/regress/*.json. Each record
(schema kvlab-opcost/1, written by kvlab.tracking.regress) gets "source" ("baseline" or
"regress") and "_date" (an aware datetime, or None). Pure function of the files and
the git history it reads.
"""

from __future__ import annotations

import datetime
import json
import subprocess
import sys
from pathlib import Path

from .history import parse_date as _parse_date


def _read_json(path: Path) -> dict | None:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        print(f"dashboard: skipping {path}: {e}", file=sys.stderr)
        return None


def _git(repo: str | Path, *args: str) -> str | None:
    try:
        return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                              text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None


def load_opcost_history(results_dir: str | Path) -> list[dict]:
    """Every instruction-count record, oldest first, each tagged with where it came from.

    Committed baselines come from the git history of results/baseline/opcost.json
    (one record per commit that changed it); gate runs from results/regress/*.json.
    """
    records = []
    baseline = Path(results_dir) / "baseline" / "opcost.json"
    top = _git(results_dir, "rev-parse", "--show-toplevel")
    if top and baseline.exists():
        rel = str(baseline.resolve().relative_to(Path(top.strip()).resolve()))
        log = _git(top.strip(), "log", "--format=%H %cI", "--", rel) or ""
        for line in log.splitlines():
            commit, date = line.split(" ", 1)
            text = _git(top.strip(), "show", f"{commit}:{rel}")
            try:
                data = json.loads(text) if text else None
            except json.JSONDecodeError:
                data = None
            if data and "cases" in data:
                data["source"] = "baseline"
                data["git_commit"] = data.get("git_commit") or commit
                data["_date"] = _parse_date(data.get("date")) or _parse_date(date)
                records.append(data)
    if not records and baseline.exists():
        data = _read_json(baseline)  # not a git checkout: the current baseline only
        if data and "cases" in data:
            data["source"] = "baseline"
            data["_date"] = _parse_date(data.get("date"))
            records.append(data)
    for path in sorted((Path(results_dir) / "regress").glob("*.json")):
        data = _read_json(path)
        if data and "cases" in data:
            data["source"] = "regress"
            data["_date"] = _parse_date(data.get("date"))
            records.append(data)
    epoch = datetime.datetime.min.replace(tzinfo=datetime.timezone.utc)
    records.sort(key=lambda r: r["_date"] or epoch)
    return records

