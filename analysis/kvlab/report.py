"""report.md for a run: a machine header, the seed-shaped tables with the seeds' numbers
beside ours, the ratios that matter, and every point with its median and 95% CI.

Cells read "median ±h%" where h is the half-width of the 95% confidence interval
of the mean over repetitions (stats.py); † marks a client-bound point (the load
generator used >= 90% of its CPUs, so the server may be faster than shown).
A ratio is marked ~ when the two intervals overlap (the difference is within noise).
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from .experiment import POINT_VARIABLES
from .results import load_meta, load_points, whole_points
from .stats import Summary, summarize

CLIENT_BOUND_MARK = "†"
ERROR_MARK = " ‼"
REFERENCE_DIR = Path(__file__).resolve().parents[2] / "results" / "reference"
SEED_TRANSPORT = {"unix": "socket", "tcp": "localhost", "remote": "remote"}


def point_table(points: pd.DataFrame) -> pd.DataFrame:
    """One row per point (repetitions folded): median, CI, latencies, CPU, client-bound.
    A point without measured repetitions keeps its status (failed, skipped) and n = 0."""
    rows = []
    for key, group in whole_points(points).groupby(list(POINT_VARIABLES), sort=False,
                                                   dropna=False):
        measured = group[group["status"] == "ok"]
        summary = summarize(measured["ops_per_s"])
        row = dict(zip(POINT_VARIABLES, key))
        row.update(status="ok" if len(measured) else group["status"].iloc[0],
                   summary=summary, median=summary.median, low=summary.low, high=summary.high,
                   n=summary.n, p50_us=measured["p50_us"].median(),
                   p99_us=measured["p99_us"].median(), p999_us=measured["p999_us"].median(),
                   client_cpu=measured["client_cpu"].median(),
                   server_cpu=measured["server_cpu"].median(),
                   client_bound=bool(measured["client_bound"].any()),
                   seconds=measured["seconds"].median(),
                   errors=measured["errors"].sum(min_count=1))
        rows.append(row)
    return pd.DataFrame(rows)


def measured_only(table: pd.DataFrame) -> pd.DataFrame:
    return table[table["n"] > 0] if not table.empty else table


def format_rate(value: float) -> str:
    return "–" if value is None or math.isnan(value) else f"{value:,.0f}"


def format_cell(row) -> str:
    if row is None:
        return "–"
    summary: Summary = row["summary"]
    if summary.n == 0:
        return row["status"]
    text = format_rate(summary.median)
    if not math.isnan(summary.relative_half_width):
        text += f" ±{100 * summary.relative_half_width:.1f}%"
    if row["client_bound"]:
        text += CLIENT_BOUND_MARK
    if row["errors"] and not pd.isna(row["errors"]):
        text += ERROR_MARK
    return text


def overlap(a: Summary, b: Summary) -> bool:
    if any(math.isnan(x) for x in (a.low, a.high, b.low, b.high)):
        return True
    return a.low <= b.high and b.low <= a.high


def format_ratio(numerator, denominator) -> str:
    if (numerator is None or denominator is None or numerator["n"] == 0
            or denominator["n"] == 0 or not denominator["median"]):
        return "–"
    ratio = numerator["median"] / denominator["median"]
    noise = "~" if overlap(numerator["summary"], denominator["summary"]) else ""
    return f"{noise}{ratio:.2f}"


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _lookup(table: pd.DataFrame, **where):
    mask = pd.Series(True, index=table.index)
    for column, value in where.items():
        mask &= table[column] == value
    found = table[mask]
    return None if found.empty else found.iloc[0]


def load_reference(name: str) -> pd.DataFrame | None:
    path = REFERENCE_DIR / f"{name}.csv"
    return pd.read_csv(path) if path.exists() else None


def _servers(meta: dict) -> dict:
    return meta.get("servers", {})


def _hop_command_sharded(meta: dict, candidates) -> str | None:
    """The seed's sharded architecture: one hop per command (the server default)."""
    for name in candidates:
        spec = _servers(meta).get(name, {})
        if spec.get("engine") == "sharded" and spec.get("hop") in ("command", None):
            return name
    return None


def _redis(meta: dict, candidates) -> str | None:
    return next((n for n in candidates if _servers(meta).get(n, {}).get("kind") == "redis"), None)


def ember_section(sweeps: list[str], table: pd.DataFrame, meta: dict) -> str:
    """The first seed's shape: test × engine → ops/s, per thread count, seed beside."""
    reference = load_reference("ember-pr50")
    out = []
    mine = table[table["sweep"].isin(sweeps)]
    servers = list(dict.fromkeys(mine["server"]))
    threads = sorted(mine["threads"].unique())
    for (loadgen, transport, keys, pipeline, connections), group in mine.groupby(
            ["loadgen", "transport", "keys", "pipeline", "connections"], sort=False):
        out.append(f"### {loadgen}, {transport}, {keys:,} key{'s' if keys > 1 else ''}, "
                   f"P{pipeline}, {connections} connections (ops/s by client threads)")
        header = ["test", "server"] + [f"T={t}" for t in threads] + ["seed ops/s"]
        rows = []
        for command in dict.fromkeys(group["command"]):
            for server in servers:
                cells = [format_cell(_lookup(group, command=command, server=server, threads=t))
                         for t in threads]
                if all(c == "–" for c in cells):
                    continue
                seed = "–"
                seed_engine = _servers(meta).get(server, {}).get("seed_engine")
                if reference is not None and seed_engine:
                    match = reference[(reference["source"] == "readme-after-pr50")
                                      & (reference["test"] == command.upper())
                                      & (reference["pipeline"] == pipeline)
                                      & (reference["engine"] == seed_engine)]
                    if not match.empty:
                        seed = (f"{match.iloc[0]['ops_per_s']:,.0f} "
                                f"(T={int(match.iloc[0]['client_threads'])})")
                rows.append([command.upper(), server] + cells + [seed])
        out.append(markdown_table(header, rows))
        out.append("")
        out.append(ember_ratios(group, servers, threads, meta, reference, pipeline))
        out.append("")
    out.append(instrument_comparison(mine))
    return "\n".join(out)


def instrument_comparison(table: pd.DataFrame) -> str:
    """kvlab-load beside redis-benchmark wherever both measured the same point."""
    keys = ["server", "transport", "command", "keys", "pipeline", "connections", "threads"]
    ours = table[table["loadgen"] == "kvlab-load"]
    theirs = table[table["loadgen"] == "redis-benchmark"]
    if ours.empty or theirs.empty:
        return ""
    both = ours.merge(theirs, on=keys, suffixes=("_kvlab", "_redis_benchmark"))
    if both.empty:
        return ""
    rows = []
    for _, r in both.iterrows():
        a = {"median": r["median_kvlab"], "summary": r["summary_kvlab"], "n": r["n_kvlab"]}
        b = {"median": r["median_redis_benchmark"], "summary": r["summary_redis_benchmark"],
             "n": r["n_redis_benchmark"]}
        rows.append([r["server"], r["transport"], r["command"].upper(), f"{r['keys']:,}",
                     r["pipeline"], r["connections"], r["threads"],
                     format_rate(r["median_kvlab"]) + (CLIENT_BOUND_MARK
                                                       if r["client_bound_kvlab"] else ""),
                     format_rate(r["median_redis_benchmark"]) + (
                         CLIENT_BOUND_MARK if r["client_bound_redis_benchmark"] else ""),
                     _number(r["seconds_redis_benchmark"], 2), format_ratio(a, b)])
    return ("### The two instruments on the same points\n\n" + markdown_table(
        ["server", "transport", "test", "keys", "P", "conns", "T", "kvlab-load ops/s",
         "redis-benchmark ops/s", "its run time s", "kvlab-load / redis-benchmark"], rows))


def ember_ratios(group, servers, threads, meta, reference, pipeline) -> str:
    sharded = _hop_command_sharded(meta, servers)
    batch = next((s for s in servers if _servers(meta).get(s, {}).get("hop") == "batch"), None)
    redis = _redis(meta, servers)
    pairs = []
    for server in servers:
        spec = _servers(meta).get(server, {})
        if spec.get("engine") in ("concurrent", "striped", "single") and sharded:
            pairs.append((server, sharded))
    if batch and sharded:
        pairs.append((batch, sharded))
    if redis:
        pairs += [(s, redis) for s in servers if s != redis]
    if not pairs:
        return ""
    header = ["test", "ratio"] + [f"T={t}" for t in threads] + ["seed"]
    present = set(group["server"])
    pairs = [(a, b) for a, b in pairs if a in present and b in present]
    if not pairs:
        return ""
    rows = []
    for command in dict.fromkeys(group["command"]):
        for numerator, denominator in pairs:
            cells = [format_ratio(_lookup(group, command=command, server=numerator, threads=t),
                                  _lookup(group, command=command, server=denominator, threads=t))
                     for t in threads]
            seed = _seed_ember_ratio(reference, meta, command, pipeline, numerator, denominator)
            rows.append([command.upper(), f"{numerator} / {denominator}"] + cells + [seed])
    return "Ratios of medians (~ = intervals overlap):\n\n" + markdown_table(header, rows)


def _seed_ember_ratio(reference, meta, command, pipeline, numerator, denominator) -> str:
    if reference is None:
        return "–"
    engines = [_servers(meta).get(s, {}).get("seed_engine") for s in (numerator, denominator)]
    if None in engines or engines[0] == engines[1]:
        return "–"
    rates = []
    for engine in engines:
        match = reference[(reference["source"] == "readme-after-pr50")
                          & (reference["test"] == command.upper())
                          & (reference["pipeline"] == pipeline) & (reference["engine"] == engine)]
        if match.empty:
            return "–"
        rates.append(float(match.iloc[0]["ops_per_s"]))
    text = f"{rates[0] / rates[1]:.2f}"
    summary = reference[(reference["source"] == "pr50-summary")
                        & (reference["test"] == command.upper())]
    if engines == ["concurrent", "sharded"] and len(summary) == 2:
        by_engine = dict(zip(summary["engine"], summary["ops_per_s"].astype(float)))
        text += f" (PR summary {by_engine['concurrent'] / by_engine['sharded']:.2f})"
    return text


def lettuce_section(sweeps: list[str], table: pd.DataFrame) -> str:
    """The second seed's shape: threads × strategy → ops/s per address, seed beside."""
    reference = load_reference("lettuce-threads")
    mine = table[table["sweep"].isin(sweeps)]
    out = []
    columns = list(dict.fromkeys(zip(mine["transport"], mine["nodelay"])))
    threads = sorted(mine["threads"].unique())
    for (server, loadgen, command), group in mine.groupby(["server", "loadgen", "command"],
                                                           sort=False):
        out.append(f"### {server}, {loadgen}, {command} (ops/s; seed in brackets)")
        header = ["threads", "strategy"] + [
            f"{transport}{'' if nodelay == 'on' else ' (nodelay off)'}"
            for transport, nodelay in columns]
        rows = []
        for t in threads:
            for client in dict.fromkeys(group["client"]):
                cells = []
                for transport, nodelay in columns:
                    cell = format_cell(_lookup(group, threads=t, client=client,
                                               transport=transport, nodelay=nodelay))
                    seed = _seed_lettuce(reference, t, client, transport)
                    cells.append(f"{cell} [{seed}]" if seed else cell)
                rows.append([str(t), client] + cells)
        out.append(markdown_table(header, rows))
        out.append("")
        if {"pooled", "shared"} <= set(group["client"]):
            out.append("shared / pooled (ours [seed]; ~ = intervals overlap):\n")
            ratio_rows = []
            for t in threads:
                cells = []
                for transport, nodelay in columns:
                    ours = format_ratio(
                        _lookup(group, threads=t, client="shared", transport=transport,
                                nodelay=nodelay),
                        _lookup(group, threads=t, client="pooled", transport=transport,
                                nodelay=nodelay))
                    shared = _seed_lettuce(reference, t, "shared", transport, raw=True)
                    pooled = _seed_lettuce(reference, t, "pooled", transport, raw=True)
                    seed = f" [{shared / pooled:.2f}]" if shared and pooled else ""
                    cells.append(ours + seed)
                ratio_rows.append([str(t)] + cells)
            out.append(markdown_table(["threads"] + header[2:], ratio_rows))
            out.append("")
    return "\n".join(out)


def _seed_lettuce(reference, threads, client, transport, raw=False):
    if reference is None:
        return None
    match = reference[(reference["threads"] == threads) & (reference["strategy"] == client)
                      & (reference["address"] == SEED_TRANSPORT.get(transport))]
    if match.empty:
        return None
    value = float(match.iloc[0]["ops_per_s"])
    return value if raw else f"{value:,.0f}"


def all_points_section(table: pd.DataFrame) -> str:
    header = ["sweep", "server", "loadgen", "transport", "client", "command", "keys", "P",
              "conns", "nodelay", "T", "ops/s median", "95% CI", "n", "p50 µs", "p99 µs",
              "p99.9 µs", "errors", "client CPU", "server CPU"]
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
                     interval, s.n, _number(r["p50_us"]), _number(r["p99_us"]),
                     _number(r["p999_us"]), _number(r["errors"], 0), _cores(r["client_cpu"]),
                     _cores(r["server_cpu"])])
    return markdown_table(header, rows)


def _number(value, digits: int = 1) -> str:
    return "–" if value is None or pd.isna(value) else f"{value:,.{digits}f}"


def _cores(value) -> str:
    return "–" if value is None or pd.isna(value) else f"{value:.2f}"


def machine_header(meta: dict) -> str:
    m = meta.get("machine", {})
    packages = m.get("packages", {})
    git = m.get("git", {})
    lines = [
        f"- CPU: {m.get('cpu_model', '?')}, {m.get('cores', '?')} cores; kernel "
        f"{m.get('kernel', '?')}; {m.get('os', '')}",
        f"- server CPUs: {meta.get('server_cpus') or 'any'}; load generator CPUs: "
        f"{meta.get('harness_cpus') or 'any'}",
        f"- git {str(git.get('commit') or '?')[:12]}{' (dirty)' if git.get('dirty') else ''}; "
        f"{m.get('compiler', '?')}; redis-server {packages.get('redis-server') or '?'}; "
        f"hiredis {packages.get('libhiredis-dev') or '?'}; TBB {packages.get('libtbb-dev') or '?'}; "
        f"Boost {packages.get('libboost-dev') or '?'}",
        f"- started {meta.get('started_utc', '?')}, finished {meta.get('finished_utc', '?')}",
    ]
    start, end = meta.get("load_average_start"), meta.get("load_average_end")
    if start and end:
        line = (f"- load average (1 min) at start {start[0]:.2f}, at end {end[0]:.2f} "
                f"on {m.get('cores', '?')} cores")
        if max(start[0], end[0]) > 1.0:
            line += (": other work was running beside the benchmark, so the figures are "
                     "disturbed and the intervals wide")
        lines.append(line)
    for name, server in _servers(meta).items():
        lines.append(f"- server `{name}`: {server.get('describe', '')}")
    return "\n".join(lines)


def problems_section(points: pd.DataFrame) -> str:
    bad = points[points["status"] != "ok"]
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
    run_dir = Path(run_dir)
    meta = load_meta(run_dir)
    points = load_points(run_dir)
    table = point_table(points)
    out = [f"# kvlab run: {meta.get('experiment', run_dir.name)}", "", machine_header(meta), ""]
    if any(p.startswith("interrupted") for p in meta.get("problems", [])):
        out += ["**Interrupted**: the run was stopped; points it did not reach are missing.", ""]
    problems = problems_section(whole_points(points))
    if problems:
        out += [problems, ""]
    sweeps = meta.get("sweeps", {})
    measured = set(measured_only(table)["sweep"]) if not table.empty else set()
    sections = {"ember-pr50": ("Seed 1: concurrent map vs sharded keyspace (ember PR #50)",
                               lambda names: ember_section(names, table, meta)),
                "lettuce-threads": ("Seed 2: pooled vs shared connections (Lettuce)",
                                    lambda names: lettuce_section(names, table))}
    for seed, (title, render) in sections.items():
        names = [s for s in dict.fromkeys(points["sweep"])
                 if sweeps.get(s, {}).get("seed") == seed and s in measured]
        if names:
            out += [f"## {title}", "", render(names), ""]
    out += ["## Sweeps", ""]
    for sweep in dict.fromkeys(points["sweep"]):
        settings = sweeps.get(sweep, {})
        out.append(f"- `{sweep}`: {settings.get('repetitions', '?')} repetitions of "
                   f"{settings.get('duration', '?')} s after {settings.get('warmup', '?')} s "
                   "warm-up per point" + ("" if sweep in measured else "; nothing measured"))
    out.append("")
    if not table.empty:
        out += ["## All points", "", all_points_section(table), ""]
    hosts = client_hosts_section(points)
    if hosts:
        out += [hosts, ""]
    out += ["## How to read this", "",
            "- `median ±h%`: median ops/s over the repetitions; h = half-width of the 95% "
            "confidence interval of the mean (Student's t), relative to the mean.",
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
            "otherwise from /proc over the whole point (warm-up included)."]
    return "\n".join(out) + "\n"


def write_report(run_dir: str | Path) -> Path:
    path = Path(run_dir) / "report.md"
    path.write_text(render_report(run_dir))
    return path
