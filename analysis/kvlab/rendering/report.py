"""report.md for a run: a machine header, the declared comparisons (report_ratios.py), the
seed-shaped tables with the seeds' numbers beside ours (report_seeds.py), and every point
with its median and 95% CI. point_table() folds a run's rounds into one row per point.

Cells read "median ±h%" where h is the half-width of the 95% confidence interval
of the mean over repetitions (stats.py); † marks a client-bound point (the load
generator used >= 90% of its CPUs, so the server may be faster than shown).
A ratio is marked ~ when the two intervals overlap (the difference is within noise).
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from ..schema.specs import POINT_VARIABLES
from ..measures.histograms import merged_percentiles
from ..measures.slices import point_steadiness
from .markdown import markdown_table
from .report_format import (CLIENT_BOUND_MARK, ERROR_MARK, format_number, format_rate,
                            server_cpu_count, server_specs)
from .report_durability import durability_section
from .report_format import median_of_numbers as _median
from .report_latency import latency_section, paired_latency_section
from .report_memory import memory_section
from .report_ratios import (calibration_section, declared_section, disturbance_line,
                            time_section, verdict_sections)
from .report_syscalls import syscalls_section
from .report_seeds import ember_section, lettuce_section
from .report_stages import (busy_figures, client_figures, commandstats_figures, stage_figures,
                            stages_section)
from .report_ycsb import ycsb_section
from ..tracking.history import cost_columns
from ..running.alternated_points import START_NOTE
from ..running.results import load_meta, load_points, whole_points
from ..measures.stats import Summary, summarize


def point_table(points: pd.DataFrame, run_dir: Path | None = None) -> pd.DataFrame:
    """One row per point (rounds folded): median, CI, latencies, CPU, client-bound.
    Latency percentiles come from the merged histogram of the point's rounds where
    kvlab-load wrote one (histograms.py), else (redis-benchmark) the median of the rounds'.
    A point without measured repetitions keeps its status (failed, skipped) and n = 0."""
    rows = []
    for key, group in whole_points(points).groupby(list(POINT_VARIABLES), sort=False,
                                                   dropna=False):
        measured = group[group["status"] == "ok"]
        summary = summarize(measured["ops_per_s"])
        row = dict(zip(POINT_VARIABLES, key))
        row.update(status="ok" if len(measured) else group["status"].iloc[0],
                   summary=summary, median=summary.median, low=summary.low, high=summary.high,
                   n=summary.n, p50_us=_median(measured["p50_us"]),
                   p99_us=_median(measured["p99_us"]), p999_us=_median(measured["p999_us"]),
                   mean_us=_median(measured["mean_us"])
                   if "mean_us" in measured else math.nan,
                   client_cpu=_median(measured["client_cpu"]),
                   server_cpu=_median(measured["server_cpu"]),
                   client_bound=bool(measured["client_bound"].any()),
                   seconds=_median(measured["seconds"]),
                   errors=measured["errors"].sum(min_count=1),
                   disturbed=int((group["status"] == "disturbed").sum()),
                   max_us=measured["max_us"].max(),
                   **{c: _median(measured[c])
                      for c in cost_columns(measured.columns)},
                   **stage_figures(measured), **commandstats_figures(measured),
                   **client_figures(measured), **busy_figures(measured))
        row.update(cv=math.nan, cold_windows=0, windows=0)
        if run_dir is not None and "histogram" in measured:
            merged = merged_percentiles(run_dir, measured["histogram"])
            if merged:
                row.update(merged)
            row["cv"], row["cold_windows"], row["windows"] = point_steadiness(
                run_dir, measured["histogram"])
        rows.append(row)
    return pd.DataFrame(rows)


def measured_only(table: pd.DataFrame) -> pd.DataFrame:
    return table[table["n"] > 0] if not table.empty else table


def all_points_section(table: pd.DataFrame) -> str:
    header = ["sweep", "server", "loadgen", "transport", "client", "command", "keys", "P",
              "conns", "nodelay", "T", "ops/s median", "95% CI", "n", "p50 µs", "p99 µs",
              "p99.9 µs", "errors", "client CPU", "server CPU", "server CPU µs/op",
              "client CPU µs/op", "server cs/op", "server instr/op", "CV"]
    rows = []
    for _, r in table.iterrows():
        s: Summary = r["summary"]
        interval = "–" if math.isnan(s.low) else f"{format_rate(s.low)} – {format_rate(s.high)}"
        if s.n == 0:
            interval = r["status"]
        rows.append([r["sweep"], r["server"], r["loadgen"], r["transport"], r["client"],
                     r["command"] + (f" {r['ratio']}" if r["ratio"] else ""), f"{r['keys']:,}",
                     r["pipeline"], r["connections"], r["nodelay"], r["threads"],
                     format_rate(s.median) + (CLIENT_BOUND_MARK if r["client_bound"] else ""),
                     interval, s.n, format_number(r["p50_us"]), format_number(r["p99_us"]),
                     format_number(r["p999_us"]), format_number(r["errors"], 0),
                     _cores(r["client_cpu"]),
                     _cores(r["server_cpu"]), _cost(r.get("server_cpu_us_per_op"), 3),
                     _cost(r.get("client_cpu_us_per_op"), 3),
                     _cost(r.get("server_ctx_switches_per_op"), 4),
                     _cost(r.get("server_instructions_per_op"), 0), _steadiness(r)])
    return markdown_table(header, rows)


def _steadiness(row: pd.Series) -> str:
    """The windows' coefficient of variation over 100 ms slices; `cold` when some window's
    first slices ran slower than the rest (the warm-up was too short)."""
    if pd.isna(row.get("cv", math.nan)):
        return "–"
    cold = f" cold {row['cold_windows']}/{row['windows']}" if row["cold_windows"] else ""
    return f"{100 * row['cv']:.1f}%{cold}"


def _cost(value: float | None, digits: int) -> str:
    """A cost per operation; n/a where it could not be measured (never estimated)."""
    return "n/a" if value is None or pd.isna(value) else f"{value:,.{digits}f}"


def _cores(value: float | None) -> str:
    return "–" if value is None or pd.isna(value) else f"{value:.2f}"


def cpu_line(meta: dict) -> str:
    """Which CPUs the servers and the load generator had, and by which rule (plan.py)."""
    plan = meta.get("plan", {})
    line = (f"- server CPUs: {meta.get('server_cpus') or 'any (not pinned)'}"
            f" ({server_cpu_count(meta) or '?'} CPUs); load generator CPUs: "
            f"{meta.get('harness_cpus') or 'any (not pinned)'}")
    if plan.get("rule"):
        line += f"; rule: {plan['rule']}"
    for note in plan.get("dropped", []):
        line += f"\n- left out on this machine: {note}"
    return line


def machine_header(meta: dict) -> str:
    m = meta.get("machine", {})
    packages = m.get("packages", {})
    git = m.get("git", {})
    lines = [
        f"- CPU: {m.get('cpu_model', '?')}, {m.get('cores', '?')} cores; kernel "
        f"{m.get('kernel', '?')}; {m.get('os', '')}",
        cpu_line(meta),
        f"- git {str(git.get('commit') or '?')[:12]}{' (dirty)' if git.get('dirty') else ''}; "
        f"{m.get('compiler', '?')}; redis-server {packages.get('redis-server') or '?'}; "
        f"hiredis {packages.get('libhiredis-dev') or '?'}; TBB {packages.get('libtbb-dev') or '?'}; "
        f"Boost {packages.get('libboost-dev') or '?'}",
        f"- started {meta.get('started_utc', '?')}, finished {meta.get('finished_utc', '?')}",
    ]
    for name, server in server_specs(meta).items():
        lines.append(f"- server `{name}`: {server.get('describe', '')}"
                     + identity_text(server.get("identity")))
    return "\n".join(lines)


def identity_text(identity: dict | None) -> str:
    """"; build: VERSION (from SOURCE), BINARY, sha256 DIGEST", or "" when not known."""
    if not identity:
        return ""
    return (f"; build: version {identity.get('version') or 'unknown'} (from "
            f"{identity.get('version_source', '?')}), `{identity.get('path', '?')}`, sha256 "
            f"`{identity.get('sha256') or 'unknown'}`")


def problems_section(points: pd.DataFrame) -> str:
    # Disturbed measurements were measured (and re-run): the header counts them.
    bad = points[~points["status"].isin(["ok", "disturbed"])]
    if bad.empty:
        return ""
    rows = []
    for (status, note), group in bad.groupby(["status", "note"], sort=False):
        points_count = len(group.drop_duplicates(list(POINT_VARIABLES)))
        servers = ", ".join(dict.fromkeys(group["server"]))
        rows.append([status, str(points_count), servers, note])
    return "## Not measured\n\n" + markdown_table(["status", "points", "servers", "reason"], rows)


def client_hosts_section(points: pd.DataFrame) -> str:
    """A multi-host run's points per client host: median ops/s and whether it was bound."""
    if "host" not in points:
        return ""
    parts = points[~points["host"].isin(("", "merged")) & (points["status"] == "ok")]
    if parts.empty:
        return ""
    rows = []
    for key, group in parts.groupby(list(POINT_VARIABLES) + ["host"], sort=False, dropna=False):
        point = dict(zip(list(POINT_VARIABLES) + ["host"], key))
        bound = bool(group["client_bound"].any())
        rows.append([point["server"], point["sweep"], point["client"], point["command"],
                     str(point["threads"]), str(point["pipeline"]), point["host"],
                     format_rate(group["ops_per_s"].median())
                     + (CLIENT_BOUND_MARK if bound else ""),
                     f"{group['p99_us'].median():.1f}", "CLIENT-BOUND" if bound else ""])
    return ("## Client hosts\n\nThe figures above are the merged rows (all client hosts "
            "together); each host's own share:\n\n"
            + markdown_table(["server", "sweep", "client", "command", "T", "P", "host",
                              "ops/s (median)", "p99 us", "bound"], rows))


def render_report(run_dir: str | Path) -> str:
    """report.md of a run: the header, what the run decided, its problems, the seeds'
    tables, the sections each kind of measurement adds, the sweeps and all points, and how
    to read it. Each step returns its markdown blocks; empty ones are left out."""
    run_dir = Path(run_dir)
    meta = load_meta(run_dir)
    points = load_points(run_dir)
    table = point_table(points, run_dir)
    measured = set(measured_only(table)["sweep"]) if not table.empty else set()
    blocks = [f"# kvlab run: {meta.get('experiment', run_dir.name)}",
              machine_header(meta) + "\n" + disturbance_line(points, meta),
              *_decisions(run_dir, meta), *_run_problems(points, meta),
              *_seed_sections(points, table, meta, measured),
              stages_section(points, table, meta),
              *_measurement_sections(run_dir, table, meta),
              durability_section(whole_points(points), meta),
              _sweeps_section(points, meta, measured),
              "## All points\n\n" + all_points_section(table) if not table.empty else "",
              client_hosts_section(points), HOW_TO_READ]
    return "".join(block + "\n\n" for block in blocks if block)[:-1]


def _decisions(run_dir: Path, meta: dict) -> list[str]:
    """The calibration, the verdicts, the time the run took and the declared ratios."""
    return [calibration_section(run_dir, meta) if meta.get("comparisons") else "",
            verdict_sections(run_dir, meta), time_section(meta), declared_section(run_dir, meta)]


def _run_problems(points: pd.DataFrame, meta: dict) -> list[str]:
    interrupted = any(p.startswith("interrupted") for p in meta.get("problems", []))
    return ["**Interrupted**: the run was stopped; points it did not reach are missing."
            if interrupted else "", problems_section(whole_points(points))]


SEED_SECTIONS = {"ember-pr50": ("Seed 1: concurrent map vs sharded keyspace (ember PR #50)",
                                ember_section),
                 "lettuce-threads": ("Seed 2: pooled vs shared connections (Lettuce)",
                                     lettuce_section)}


def _seed_sections(points: pd.DataFrame, table: pd.DataFrame, meta: dict,
                   measured: set[str]) -> list[str]:
    """The seed-shaped tables of the sweeps that measured a seed's question."""
    sweeps = meta.get("sweeps", {})
    blocks = []
    for seed, (title, render) in SEED_SECTIONS.items():
        names = [s for s in dict.fromkeys(points["sweep"])
                 if sweeps.get(s, {}).get("seed") == seed and s in measured]
        if names:
            blocks.append(f"## {title}\n\n" + render(names, table, meta))
    return blocks


def _measurement_sections(run_dir: Path, table: pd.DataFrame, meta: dict) -> list[str]:
    """YCSB, latency curves, paired latency, system calls and memory, where measured."""
    return [ycsb_section(table, run_dir, meta), latency_section(run_dir),
            paired_latency_section(run_dir, meta), syscalls_section(run_dir, meta),
            memory_section(run_dir, meta)]


def _sweeps_section(points: pd.DataFrame, meta: dict, measured: set[str]) -> str:
    sweeps = meta.get("sweeps", {})
    lines = ["## Sweeps", ""]
    starts = points["note"].astype(str) == START_NOTE if "note" in points else \
        pd.Series(False, index=points.index)
    for sweep in dict.fromkeys(points["sweep"]):
        settings = sweeps.get(sweep, {})
        mine = points["sweep"] == sweep
        text = f"- `{sweep}`: "
        if (mine & ~starts).any():
            rounds = points[mine & ~starts]["repetition"].max()
            text += (f"at least {settings.get('repetitions', '?')} rounds (up to {rounds:.0f} "
                     f"where a declared ratio needed more) of {settings.get('duration', '?')} s "
                     f"after {settings.get('warmup', '?')} s warm-up, each from a fresh server "
                     "process")
        alternated = points[mine & starts]
        if not alternated.empty:
            per_point = alternated.groupby(list(POINT_VARIABLES), dropna=False).size()
            text += ("; " if (mine & ~starts).any() else "") + (
                f"{len(per_point)} points from the starts of their declared ratio's "
                f"alternation ({per_point.min()}-{per_point.max()} starts each, a side's "
                "slices in each: the ratio's own rates), not in rounds")
        lines.append(text + ("" if sweep in measured else "; nothing measured"))
    return "\n".join(lines)


HOW_TO_READ = "\n".join(["## How to read this", "",
            "- `ratio [low, high]` (declared comparisons): the geometric mean of the ratios "
            "measured inside each round (both sides a fresh server, measured one right after "
            "the other), "
            "and its 95% interval from Student's t on the log ratios. The true ratio lies in "
            "the interval 19 times in 20; `±h%` is the interval's larger side. `resolved`: "
            "h is within the experiment's precision target, over at least its min_rounds "
            "(default 10; a spread seen in fewer rounds is itself too uncertain to stop "
            "on); `inconclusive`: it is not (the "
            "report says why rounds stopped); `disturbed`: other work on the measured CPUs "
            "spoiled the rounds.",
            "- `median ±h%`: median ops/s over the rounds; h = half-width of the 95% "
            "confidence interval of the mean (Student's t), relative to the mean.",
            "- CV: the coefficient of variation of the point's throughput over 100 ms "
            "slices of its windows (median over rounds; the slices are in histograms/*.json); "
            "`cold k/n`: in k of n windows the first 200 ms ran more than 10% slower than the "
            "rest, so the warm-up was too short.",
            "- cost per operation: server CPU µs/op from its INFO cpu at the window's edges; "
            "client CPU µs/op from the load generator's own CPU; server context switches per "
            "op (cs/op) from /proc over the load run; instructions per op from hardware "
            "counters, n/a where perf_event_open is not allowed. Costs vary far less than "
            "ops/s with a noisy neighbour.",
            f"- {CLIENT_BOUND_MARK} client-bound: the load generator used ≥ 90% of its CPUs; "
            "the server may be faster than shown.",
            f"-{ERROR_MARK} the server answered with errors (or replies of the wrong type): "
            "see the errors column of All points; such a point does not measure what it "
            "claims.",
            "- ratios are ratios of medians; `~` = the two intervals overlap, so the "
            "difference is within the noise of this run.",
            "- redis-benchmark rows: ops/s, p50, p99 and max come from its CSV; p90, p99.9 and "
            "errors are not reported by it (blank). In threaded mode it measures time in "
            "250 ms ticks, so a run of S seconds is uncertain by up to 0.25/S (its run time "
            "is shown beside it).",
            "- client/server CPU: cores' worth of CPU time used (1.00 = one core busy); the "
            "server's comes from its INFO cpu per repetition when kvlab-load could read it, "
            "otherwise from /proc over the whole point (warm-up included)."])


def write_report(run_dir: str | Path) -> Path:
    path = Path(run_dir) / "report.md"
    path.write_text(render_report(run_dir))
    return path
