"""Instruction counts per operation over commits: the records `make regress` leaves.

Committed baselines come from the git history of results/baseline/opcost.json (one
record per commit that changed it); gate runs from results/regress/*.json. Each record
(schema kvlab-opcost/1, written by kvlab.tracking.regress) gets "source" ("baseline" or
"regress") and "_date" (an aware datetime, or None). Pure function of the files and
the git history it reads.
"""

import datetime
import glob
import json
import os
import subprocess
import sys

from .history import parse_date as _parse_date


def _read_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        print(f"dashboard: skipping {path}: {e}", file=sys.stderr)
        return None


def _git(repo, *args):
    try:
        return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True,
                              text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None


def load_opcost_history(results_dir):
    """Every instruction-count record, oldest first, each tagged with where it came from.

    Committed baselines come from the git history of results/baseline/opcost.json
    (one record per commit that changed it); gate runs from results/regress/*.json.
    """
    records = []
    baseline = os.path.join(results_dir, "baseline", "opcost.json")
    top = _git(results_dir, "rev-parse", "--show-toplevel")
    if top and os.path.exists(baseline):
        rel = os.path.relpath(os.path.realpath(baseline), os.path.realpath(top.strip()))
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
    if not records and os.path.exists(baseline):
        data = _read_json(baseline)  # not a git checkout: the current baseline only
        if data and "cases" in data:
            data["source"] = "baseline"
            data["_date"] = _parse_date(data.get("date"))
            records.append(data)
    for path in glob.glob(os.path.join(results_dir, "regress", "*.json")):
        data = _read_json(path)
        if data and "cases" in data:
            data["source"] = "regress"
            data["_date"] = _parse_date(data.get("date"))
            records.append(data)
    epoch = datetime.datetime.min.replace(tzinfo=datetime.timezone.utc)
    records.sort(key=lambda r: r["_date"] or epoch)
    return records

