"""Bench history: compact records of chosen runs, keyed by machine fingerprint.

A record (schema kvlab-history/1) summarises one run folder; `python3 -m kvlab record
RUN_DIR` writes it to results/history/<fingerprint id>/<commit>-<experiment>-<start>.json,
where it is committed and travels with the repository. It keeps what a trend needs
and nothing else (not the raw repetitions):

    {"schema": "kvlab-history/1",
     "fingerprint": {"id", "cpu_model", "cores", "vector_level", "kernel", "compiler"},
     "commit": "<git sha>", "dirty": false, "experiment": "headline",
     "started_utc": "<ISO time>", "run": "<run folder name>",
     "ratios": [{"comparison": "A/B", "test", "point", "ratio", "low", "high",
                 "rounds", "status"}],                                  # ratios.csv as is
     "points": [{"point": "<label>", "n", "median", "low", "high",     # ops/s
                 "status", "client_bound", "errors", "disturbed",
                 "costs": {"<cost column>": {"median", "low", "high"}}}],
     "servers": {"<name>": {"path", "sha256", "version", "version_source", "label",
                            "build"}}}                                  # when known

A server given by a command line (a `command` row) is a build of the user's, and
Debian's redis-server (a `redis` or `redis-cluster` row) is whichever package the machine
has now: their series are kept apart per build. Its name in every point label and in the
name of every ratio it takes part in carries its tag (commands.Identity.series_tag: the
row's `version` label when given, else its version and SHA-256), e.g. "valkey[8.0.1
sha256:1a2b3c4d5e6f] get ..." or "single/redis (single / redis[7.0.15
sha256:c2f35b59cb22])": two builds never share a line (an upgrade of redis-server starts
a new one), while the runs of one build (or of one label) do. kvlab's own rows need no
tag: their build is the record's commit. A run whose meta.json has no identity (runs
before identities were kept) leaves its rows untagged.

A point's ops/s and costs are summarised over its `ok` rows with kvlab.measures.stats.summarize
(median; 95% interval of the mean, null with one row). Numbers that are missing or
`n/a` in the run are null or left out, never estimated.

A series is one thing tracked over records: a declared ratio, a point's ops/s, or a
point's cost column. `series_of(record)` names each with a SeriesKey; series of
different fingerprints or experiments are never joined (`group_records`), nor runs
whose idle CPUs polled with runs whose CPUs could halt (`cpu_idle`: on a VM a halted
CPU's wake-up moves low-concurrency rates several-fold; running/cpu_idle.py).

Pure functions of the files they read; thread-compatible.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime
import json
import math
import re
import sys
from pathlib import Path
from typing import Any, Iterable

from ..schema.specs import COMMAND_KINDS, POINT_VARIABLES
from .machine import fingerprint
from ..measures.stats import summarize

SCHEMA = "kvlab-history/1"
# Cost-per-operation columns of points.csv (lower is better) end so; any may be absent.
COST_SUFFIX = "_per_op"


def cost_columns(columns: Iterable[str]) -> list[str]:
    """The cost-per-operation columns among `columns`, in their order."""
    return [c for c in columns if c.endswith(COST_SUFFIX)]
# Point variables printed bare in a label (their values say what they are).
_BARE_VARIABLES = ("server", "command", "sweep", "loadgen", "transport", "client", "key_dist")
_LABEL_ORDER = ("server", "command") + tuple(v for v in POINT_VARIABLES
                                             if v not in ("server", "command"))


class HistoryError(Exception):
    """A folder that cannot be recorded, or a file that is not a history record."""


# ----------------------------------------------------------------- estimates


@dataclasses.dataclass(frozen=True)
class Estimate:
    """One run's figure for one series: its value and 95% interval (None when the run has
    none), and `flaw`, non-empty when the figure must not be judged (client-bound,
    error replies, disturbed, not measured), saying why."""
    value: float | None
    low: float | None = None
    high: float | None = None
    flaw: str = ""

    @property
    def has_interval(self) -> bool:
        return self.low is not None and self.high is not None


@dataclasses.dataclass(frozen=True, order=True)
class SeriesKey:
    """kind: "ratio" (higher = A gained on B), "ops/s" (higher is better) or a cost column
    (lower is better); name: the ratio's "A/B test point" or the point's label."""
    kind: str
    name: str

    @property
    def higher_is_better(self) -> bool:
        return not self.kind.endswith(COST_SUFFIX)


# ----------------------------------------------------------------- reading a run


def _number(text: Any) -> float | None:
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(value) or math.isinf(value) else value


def _finite(value: float) -> float | None:
    return None if value is None or math.isnan(value) else float(value)


def _read_csv(path: Path) -> list[dict]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _is_true(text: Any) -> bool:
    return str(text).strip().lower() in ("true", "1", "yes")


def point_label(row: dict) -> str:
    """A point's variables as one readable, unique label, e.g. "redis set p16 kvlab-load
    tcp dedicated keys=1 uniform value_size=64 pipeline=16 connections=50 nodelay=on
    threads=1" (variables the file lacks or leaves empty are left out)."""
    parts = []
    for variable in _LABEL_ORDER:
        value = str(row.get(variable, "") or "").strip()
        if value:
            parts.append(value if variable in _BARE_VARIABLES else f"{variable}={value}")
    return " ".join(parts)


def _summary(values: list[float]) -> dict:
    s = summarize(values)
    return {"median": _finite(s.median), "low": _finite(s.low), "high": _finite(s.high)}


def _summarise_point(label: str, rows: list[dict]) -> dict:
    ok = [r for r in rows if (r.get("status") or "ok") == "ok" and _number(r.get("ops_per_s"))
          is not None]
    statuses = [r.get("status") or "ok" for r in rows]
    throughput = _summary([_number(r["ops_per_s"]) for r in ok])
    entry = {"point": label, "n": len(ok), **throughput,
             "status": "ok" if ok else max(set(statuses), key=statuses.count),
             "client_bound": any(_is_true(r.get("client_bound")) for r in ok),
             "errors": int(sum(_number(r.get("errors")) or 0 for r in ok)),
             "disturbed": statuses.count("disturbed")}
    for column in ("misses", "wrong_type"):
        if any(column in r for r in rows):
            entry[column] = int(sum(_number(r.get(column)) or 0 for r in ok))
    costs = {}
    for column in cost_columns(dict.fromkeys(c for r in rows for c in r)):
        values = [v for v in (_number(r.get(column)) for r in ok) if v is not None]
        if values:
            costs[column] = _summary(values)
    if costs:
        entry["costs"] = costs
    return entry


def _read_ratios(path: Path) -> list[dict]:
    if not path.exists():
        return []
    ratios = []
    for row in _read_csv(path):
        ratios.append({"comparison": row.get("comparison", ""), "test": row.get("test", ""),
                       "point": row.get("point", ""), "ratio": _number(row.get("ratio")),
                       "low": _number(row.get("low")), "high": _number(row.get("high")),
                       "rounds": int(_number(row.get("rounds")) or 0),
                       "status": row.get("status", "")})
    return ratios


def record_from_run(run_dir: str | Path) -> dict:
    """The history record of a run folder (see the module docstring)."""
    run_dir = Path(run_dir)
    points_path = run_dir / "points.csv"
    if not points_path.exists():
        raise HistoryError(f"{run_dir}: no points.csv (not a run folder)")
    try:
        meta = json.loads((run_dir / "meta.json").read_text()) if (run_dir / "meta.json").exists() \
            else {}
    except json.JSONDecodeError as error:
        raise HistoryError(f"{run_dir / 'meta.json'}: not JSON ({error})") from None
    machine = meta.get("machine") or {}
    git = machine.get("git") or {}
    tags = build_tags(meta)
    by_point: dict[str, list[dict]] = {}
    for row in _read_csv(points_path):
        tagged = {**row, "server": tagged_name(row.get("server", ""), tags)}
        by_point.setdefault(point_label(tagged), []).append(row)
    started = run_started(run_dir, meta)
    record = {"schema": SCHEMA, "fingerprint": fingerprint(machine),
              "commit": git.get("commit") or "", "dirty": bool(git.get("dirty")),
              "experiment": str(meta.get("experiment") or run_dir.name),
              "cpu_idle": idle_regime(meta),
              "started_utc": started, "run": run_dir.name,
              "ratios": _tag_ratios(_read_ratios(run_dir / "ratios.csv"), meta, tags),
              "points": [_summarise_point(label, rows) for label, rows in by_point.items()]}
    identities = {name: spec["identity"] for name, spec in (meta.get("servers") or {}).items()
                  if isinstance(spec, dict) and spec.get("identity")}
    if identities:
        record["servers"] = identities
    return record


# The kinds whose build is not the record's commit: a build of the user's (command rows)
# or the machine's redis-server package, which an upgrade changes under the same name.
TAGGED_KINDS = COMMAND_KINDS + ("redis", "redis-cluster")


def build_tags(meta: dict) -> dict[str, str]:
    """server name -> its series tag, for the rows of TAGGED_KINDS whose build is known."""
    tags = {}
    for name, spec in (meta.get("servers") or {}).items():
        identity = spec.get("identity") if isinstance(spec, dict) else None
        if spec.get("kind") in TAGGED_KINDS and identity:
            tags[name] = identity.get("label") or identity.get("build") or ""
    return {name: tag for name, tag in tags.items() if tag}


def tagged_name(server: str, tags: dict[str, str]) -> str:
    """A server's name as its series carry it: "name[tag]" for a tagged build."""
    return f"{server}[{tags[server]}]" if server in tags else server


def _tag_ratios(ratios: list[dict], meta: dict, tags: dict[str, str]) -> list[dict]:
    """Ratios along the server whose sides include a tagged build: the comparison's name
    gets "(a[tag] / b[tag])", so another build's ratio is another series."""
    sides = {c.get("name"): (c.get("a"), c.get("b")) for c in meta.get("comparisons") or []
             if c.get("by", "server") == "server"}
    for ratio in ratios:
        a, b = sides.get(ratio["comparison"], (None, None))
        if a in tags or b in tags:
            ratio["comparison"] = (f"{ratio['comparison']} ({tagged_name(a, tags)} / "
                                   f"{tagged_name(b, tags)})")
    return ratios


def run_started(run_dir: str | Path, meta: dict | None = None) -> str:
    """When the run started (meta.json's started_utc; else points.csv's time), ISO."""
    run_dir = Path(run_dir)
    if meta is None:
        try:
            meta = json.loads((run_dir / "meta.json").read_text())
        except (OSError, json.JSONDecodeError):
            meta = {}
    return meta.get("started_utc") or datetime.datetime.fromtimestamp(
        (run_dir / "points.csv").stat().st_mtime, datetime.timezone.utc).isoformat()


def record_filename(record: dict) -> str:
    """<commit, 12 digits or "nocommit">-<experiment>-<start, YYYYmmddTHHMMSSZ>.json: one
    file per run, so several runs of one commit (the usual case) are all kept."""
    commit = (record["commit"] or "nocommit")[:12] + ("-dirty" if record.get("dirty") else "")
    start = parse_date(record["started_utc"])
    stamp = start.strftime("%Y%m%dT%H%M%SZ") if start else "unknown"
    experiment = re.sub(r"[^A-Za-z0-9_.-]+", "_", record["experiment"])
    return f"{commit}-{experiment}-{stamp}.json"


def write_record(record: dict, history_dir: str | Path) -> Path:
    """Writes the record under history_dir/<fingerprint id>/; returns its path."""
    folder = Path(history_dir) / record["fingerprint"]["id"]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / record_filename(record)
    # One point or ratio per line: compact, and a diff shows which series moved.
    lines = ["{"]
    items = list(record.items())
    for i, (name, value) in enumerate(items):
        comma = "," if i < len(items) - 1 else ""
        if isinstance(value, list):
            inner = ",\n".join("  " + json.dumps(v, sort_keys=True) for v in value)
            lines.append(f"{json.dumps(name)}: [\n{inner}\n]{comma}" if value else
                         f"{json.dumps(name)}: []{comma}")
        else:
            lines.append(f"{json.dumps(name)}: {json.dumps(value, sort_keys=True)}{comma}")
    lines.append("}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def read_record(path: str | Path) -> dict:
    try:
        record = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise HistoryError(f"{path}: {error}") from None
    if not isinstance(record, dict) or record.get("schema") != SCHEMA:
        raise HistoryError(f"{path}: not a {SCHEMA} record")
    return record


def parse_date(text: Any) -> datetime.datetime | None:
    """An ISO date as an aware datetime (naive ones are taken as UTC); None if unreadable."""
    if not text:
        return None
    try:
        date = datetime.datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None
    return date if date.tzinfo else date.replace(tzinfo=datetime.timezone.utc)


# ----------------------------------------------------------------- loading a history


def is_run_folder(path: str | Path) -> bool:
    return (Path(path) / "points.csv").is_file()


def load_records(path: str | Path) -> list[dict]:
    """Records from a path, oldest first: a record file, a run folder (summarised now),
    or a folder holding record files (searched recursively, e.g. results/history/<id>)."""
    path = Path(path)
    if path.is_file():
        return [read_record(path)]
    if is_run_folder(path):
        return [record_from_run(path)]
    if path.is_dir():
        records = [read_record(p) for p in sorted(path.rglob("*.json"))]
        if records:
            return sort_records(records)
    raise HistoryError(f"{path}: neither a run folder (points.csv) nor history records (*.json)")


def local_run_folders(results_dir: str | Path) -> list[Path]:
    """Run folders under results/: runs/* and the committed sample."""
    results_dir = Path(results_dir)
    candidates = list((results_dir / "runs").glob("*"))
    candidates += [results_dir / "sample"]
    return sorted(p for p in candidates if is_run_folder(p))


def load_history(results_dir: str | Path) -> list[dict]:
    """Every committed record under results/history/ plus every local run folder not yet
    recorded (marked "local": true), oldest first; an unreadable record is skipped with
    a message. A run is recorded when a record has
    its fingerprint, experiment and start time."""
    results_dir = Path(results_dir)
    records = []
    for path in sorted((results_dir / "history").rglob("*.json")):
        try:
            records.append(read_record(path))
        except HistoryError as error:
            print(f"history: skipping {error}", file=sys.stderr)
    seen = {_identity(r) for r in records}
    for folder in local_run_folders(results_dir):
        try:
            record = record_from_run(folder)
        except HistoryError as error:
            print(f"history: skipping {error}", file=sys.stderr)
            continue
        if _identity(record) not in seen:
            record["local"] = True
            records.append(record)
            seen.add(_identity(record))
    return sort_records(records)


def _identity(record: dict) -> tuple:
    return record["fingerprint"]["id"], record["experiment"], record["started_utc"]


def sort_records(records: list[dict]) -> list[dict]:
    epoch = datetime.datetime.min.replace(tzinfo=datetime.timezone.utc)
    return sorted(records, key=lambda r: (parse_date(r.get("started_utc")) or epoch,
                                          r.get("run", "")))


def idle_regime(meta: dict) -> str:
    """"poll" when the run held its idle CPUs polling (meta.json cpu_idle.held), else
    "kernel" (runs from before the hold was taken let the CPUs halt)."""
    held = (meta.get("cpu_idle") or {}).get("held")
    return "poll" if held else "kernel"


def series_name(record: dict) -> str:
    """The experiment a record continues: its name, marked when its idle CPUs polled."""
    regime = record.get("cpu_idle", "kernel")
    return record["experiment"] + ("" if regime == "kernel" else f" (idle CPUs {regime})")


def group_records(records: list[dict]) -> dict[tuple[str, str], list[dict]]:
    """(fingerprint id, series_name) → its records, oldest first. Trends and verdicts only
    ever look inside one group: figures of two machines, or of CPUs that polled and CPUs
    that halted, are never one series."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for record in sort_records(records):
        groups.setdefault((record["fingerprint"]["id"], series_name(record)), []).append(record)
    return groups


# ----------------------------------------------------------------- series


def _point_flaw(point: dict) -> str:
    if not point.get("n"):
        return f"not measured ({point.get('status') or 'no rows'})"
    if point.get("client_bound"):
        return "client-bound: the load generator, not the server, set the pace"
    if point.get("errors"):
        return f"{point['errors']} error replies"
    if point.get("wrong_type"):
        return f"{point['wrong_type']} WRONGTYPE replies"
    return ""


def series_of(record: dict) -> dict[SeriesKey, Estimate]:
    """Every series the record holds: declared ratios, then each point's costs and ops/s."""
    series: dict[SeriesKey, Estimate] = {}
    for r in record.get("ratios", []):
        flaw = "disturbed" if r.get("status") == "disturbed" else \
            ("" if r.get("ratio") is not None else "no ratio")
        series[SeriesKey("ratio", f"{r['comparison']} {r['test']} {r['point']}".strip())] = \
            Estimate(r.get("ratio"), r.get("low"), r.get("high"), flaw)
    for p in record.get("points", []):
        flaw = _point_flaw(p)
        for column, s in sorted((p.get("costs") or {}).items()):
            series[SeriesKey(column, p["point"])] = Estimate(s.get("median"), s.get("low"),
                                                             s.get("high"), flaw)
        series[SeriesKey("ops/s", p["point"])] = Estimate(p.get("median"), p.get("low"),
                                                          p.get("high"), flaw)
    return series


def describe_fingerprint(fp: dict) -> str:
    return (f"{fp.get('cpu_model')}, {fp.get('cores')} cores, vector level "
            f"{fp.get('vector_level')}, "
            f"kernel {fp.get('kernel')}, {fp.get('compiler')}")


def default_history_dir() -> str:
    return str(Path(__file__).resolve().parents[3] / "results" / "history")
