"""`make micro` results: Google Benchmark JSON files in results/micro/, and the
sharded hop's cost derived from them.

The hop cost is the difference between the same batch on `sharded` with one
shard (one hop there and back) and on `concurrent` (inline), in wall time (the
caller's latency) and in process CPU time (caller and shard thread together): BM_Hop waits for
each batch (an idle server: every hop wakes the shard thread), BM_HopLoaded
keeps 64 batches in flight (a busy server: the shard drains bursts).

Usage: python3 -m kvlab micro results/micro/<time>.json   (prints the hop table; `make micro`
runs it on the file it writes)
"""

from __future__ import annotations

import argparse
import datetime
import json
import re
import sys
from pathlib import Path

_UNIT_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
_HOP = re.compile(r"^(BM_Hop|BM_HopLoaded)/(sharded|concurrent)/(get|set)/ops:(\d+)")
IN_FLIGHT = 64  # batches BM_HopLoaded keeps outstanding (micro/hop_bench.cc)


def read_run(path: str | Path) -> dict | None:
    """One micro run: {path, date, commit, benchmarks: {name: {ns, items_per_second, bytes_per_second}}}.

    `ns` is real time per iteration. A benchmark run with repetitions is
    represented by its median aggregate; benchmarks that reported an error are
    left out. Returns None for a file
    that is not Google Benchmark JSON.
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        print(f"kvlab: skipping {path}: {e}", file=sys.stderr)
        return None
    if not isinstance(data, dict) or "benchmarks" not in data:
        return None
    context = data.get("context", {})
    try:
        date = datetime.datetime.fromisoformat(str(context.get("date", "")).replace("Z", "+00:00"))
        date = date if date.tzinfo else date.replace(tzinfo=datetime.timezone.utc)
    except ValueError:
        date = datetime.datetime.fromtimestamp(Path(path).stat().st_mtime, datetime.timezone.utc)
    benchmarks = {}
    for b in data["benchmarks"]:
        if b.get("error_occurred"):
            continue
        if b.get("run_type") == "aggregate":
            # With --benchmark_repetitions the median stands for the benchmark;
            # means and deviations would double-count.
            if b.get("aggregate_name") != "median":
                continue
            name = b.get("run_name", b["name"])
        elif b.get("repetitions", 1) > 1 and b.get("repetition_index", 0) > 0:
            continue  # the median aggregate replaces the single repetitions
        else:
            name = b["name"]
        unit = _UNIT_NS.get(b.get("time_unit", "ns"), 1.0)
        benchmarks[name] = {
            "ns": float(b.get("real_time", 0.0)) * unit,
            "cpu_ns": float(b.get("cpu_time", 0.0)) * unit,
            "items_per_second": b.get("items_per_second"),
            "bytes_per_second": b.get("bytes_per_second"),
        }
    return {"path": path, "date": date, "commit": context.get("git_commit", ""), "benchmarks": benchmarks}


def load_runs(results_dir: str | Path) -> list[dict]:
    """Every micro run under results_dir/micro, oldest first."""
    files = sorted((Path(results_dir) / "micro").glob("*.json"))
    runs = [r for r in (read_run(p) for p in files) if r]
    runs.sort(key=lambda r: r["date"])
    return runs


def hop_costs(benchmarks: dict[str, dict]) -> list[dict]:
    """Rows {regime, op, batch, sharded_ns, concurrent_ns, hop_ns, hop_ns_per_op} per batch.

    Times are per batch: BM_Hop's iteration is one batch, BM_HopLoaded's is
    IN_FLIGHT batches.
    """
    times: dict[tuple[str, str, int, str], tuple[float, float]] = {}
    for name, b in benchmarks.items():
        m = _HOP.match(name)
        if m:
            family, engine, op, batch = m.groups()
            batches = IN_FLIGHT if family == "BM_HopLoaded" else 1
            times[(family, op, int(batch), engine)] = (b["ns"] / batches, b.get("cpu_ns", 0.0) / batches)
    rows = []
    for (family, op, batch, engine), (sharded, sharded_cpu) in sorted(times.items()):
        if engine != "sharded" or (family, op, batch, "concurrent") not in times:
            continue
        concurrent, concurrent_cpu = times[(family, op, batch, "concurrent")]
        rows.append({"regime": "idle (one batch at a time)" if family == "BM_Hop" else f"busy ({IN_FLIGHT} in flight)",
                     "op": op.upper(), "batch": batch, "sharded_ns": sharded, "concurrent_ns": concurrent,
                     "hop_ns": sharded - concurrent, "hop_ns_per_op": (sharded - concurrent) / batch,
                     "hop_cpu_ns_per_op": (sharded_cpu - concurrent_cpu) / batch})
    return rows


def format_hop_table(rows: list[dict]) -> str:
    header = (f"{'regime':<28} {'op':<4} {'batch':>5} {'sharded ns':>11} {'concurrent ns':>14} "
              f"{'hop ns':>9} {'hop ns/op':>10} {'hop CPU ns/op':>14}")
    lines = [header, "-" * len(header)]
    for r in rows:
        lines.append(f"{r['regime']:<28} {r['op']:<4} {r['batch']:>5} {r['sharded_ns']:>11.0f} "
                     f"{r['concurrent_ns']:>14.0f} {r['hop_ns']:>9.0f} {r['hop_ns_per_op']:>10.0f} "
                     f"{r['hop_cpu_ns_per_op']:>14.0f}")
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("json", help="a Google Benchmark JSON file, e.g. results/micro/<time>.json")


def main(args: argparse.Namespace) -> int:
    run = read_run(args.json)
    if run is None:
        print(f"kvlab micro: {args.json} is not Google Benchmark JSON", file=sys.stderr)
        return 2
    rows = hop_costs(run["benchmarks"])
    if not rows:
        print("kvlab micro: no BM_Hop results in this run (filtered out, or no sharded engine)")
        return 0
    print("Sharded hop cost: the same batch on sharded (1 shard) minus on concurrent (inline)")
    print(format_hop_table(rows))
    return 0
