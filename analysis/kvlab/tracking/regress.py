"""The deterministic regression gate: instructions per operation, counted by callgrind.

Runs kvlab-opcost (micro/op_cost.cc) under `valgrind --tool=callgrind`. The
driver marks each counted region with callgrind client requests and dumps one
profile per region, named after the case; this script reads the dumps, turns
them into instructions per GET/SET/INCR for each engine, compares them with the
committed baseline (results/baseline/opcost.json) and fails, listing what grew,
when a case costs more than the tolerance allows.

What is counted: every instruction executed inside Session::Process on the
connection thread (parse, dispatch, the engine's inline work or the send side
of the hop, reply rendering) and, for the sharded engine, inside the shard
thread's ShardedEngine::RunShareOfBatch (the operation and the one-shot
completion). The `shell` case counts the network shell in front of the single
engine instead: Connection::OnReady on the I/O thread (the recv, the reply's
send, the connection's bookkeeping), the Session left out. Waiting is not counted: how long a thread spins or sleeps before
the other wakes it depends on real-time scheduling, not on the code.

Instruction counts hardly depend on the machine's load, so the gate can run on
a shared CI machine; they do depend on the compiler and its flags, which the
baseline records. Inline engines count identically run after run. The sharded
engine's count can differ by an instruction or two per operation on an idle
machine, and by up to about 1.6% on a loaded one: whether the
shard finishes before the Session checks (one Process() call) or after (a
second call on resume) is a race between two threads, which the run narrows by
pinning valgrind to one CPU with its FIFO thread lock (--fair-sched=yes).

Every run is also stored in results/regress/<UTC time>-<commit>.json (the same
record format as the baseline plus the comparison), which the dashboard reads
as the per-commit history.

Usage (what `make regress` and `make regress-update` run):
  python3 -m kvlab regress [--build DIR] [--tolerance PCT] [--ops N] [--engines a,b]
  python3 -m kvlab regress --update        # rewrite the baseline deliberately
Exit status: 0 no case grew, 1 a case grew past the tolerance, 2 the gate could not run.
"""

from __future__ import annotations

import datetime
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
SCHEMA = "kvlab-opcost/1"

# Functions whose instructions (with their callees) are counted, and for which
# cases each must show up in the profile: a renamed function would otherwise
# silently drop out of the count instead of failing.
# Each entry: a function pattern and which of kvlab-opcost's cases must show it.
SHELL = "shell"  # kvlab-opcost's pseudo-engine: the network shell around `single`
COUNTED_FUNCTIONS = [
    ("kvlab::Session::Process(*", lambda engine: engine != SHELL),
    ("kvlab::ShardedEngine::RunShareOfBatch(*", lambda engine: engine == "sharded"),
    # The `shell` case: a connection's work per request. Session::Process runs inside
    # it and toggles collection off again, so the shell's count leaves the Session out.
    ("kvlab::Connection::OnReady(*", lambda engine: engine == SHELL),
]


class RegressError(Exception):
    """The gate could not run (no driver, no valgrind, no baseline, a profile it cannot read)."""


# The sharded engine's run-to-run noise must stay well inside this (its test
# allows half of it).
DEFAULT_TOLERANCE_PCT = 5.0


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--build", type=Path, default=REPO / "build",
                   help="build directory holding kvlab-opcost (default: build)")
    p.add_argument("--baseline", type=Path, default=REPO / "results" / "baseline" / "opcost.json")
    p.add_argument("--history-dir", default=str(REPO / "results" / "regress"),
                   help="where each run's record is stored ('' to store nothing)")
    p.add_argument("--tolerance", type=float, default=DEFAULT_TOLERANCE_PCT,
                   help="allowed growth in percent before a case fails "
                        f"(default {DEFAULT_TOLERANCE_PCT:g})")
    p.add_argument("--ops", type=int, default=1000,
                   help="operations per counted region (default 1000)")
    p.add_argument("--engines", default=None,
                   help="comma-separated engines to count, `shell` being the network shell "
                        "in front of `single` (default: every engine the build's "
                        "`kvlab-server --kinds` lists, and the shell)")
    p.add_argument("--multikey", choices=("atomic", "split"), default="atomic",
                   help="count engines built with --multikey split: MSET8 and EXEC4 then show "
                        "what atomicity costs against the atomic baseline (do not --update)")
    p.add_argument("--update", action="store_true",
                   help="write the measured counts as the new baseline instead of comparing")
    p.add_argument("--output", type=Path, help="also write this run's record to this file")


def git(*args: str) -> str:
    try:
        return subprocess.run(["git", "-C", str(REPO), *args], check=True, capture_output=True,
                              text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def compiler_version(build: Path) -> str:
    """The build's C++ compiler: counts are only comparable between runs of the same one."""
    compiler = "c++"
    try:
        with (Path(build) / "CMakeCache.txt").open(encoding="utf-8") as f:
            for line in f:
                if line.startswith("CMAKE_CXX_COMPILER:"):
                    compiler = line.split("=", 1)[1].strip()
    except OSError:
        pass
    try:
        out = subprocess.run([compiler, "--version"], check=True, capture_output=True, text=True).stdout
        return out.splitlines()[0]
    except (OSError, subprocess.CalledProcessError, IndexError):
        return "unknown"


def read_dumps(out_dir: Path) -> dict[str, tuple[int, str]]:
    """Maps each dump's trigger name (the case) to (instruction total, profile text)."""
    dumps = {}
    for path in Path(out_dir).glob("callgrind.out*"):
        trigger, total = None, None
        text = path.read_text(encoding="utf-8", errors="replace")
        for line in text.splitlines():
            if line.startswith("desc: Trigger: Client Request: "):
                trigger = line.split("Client Request: ", 1)[1].strip()
            elif line.startswith("totals:") or (total is None and line.startswith("summary:")):
                total = int(line.split()[1])
        if trigger is not None and total is not None:
            dumps[trigger] = (total, text)
    return dumps


def check_counted_functions(engine: str, profile: str) -> None:
    """Fails when a function the count relies on is missing from an engine's profile."""
    for pattern, needed_by in COUNTED_FUNCTIONS:
        name = pattern.rstrip("(*")
        if needed_by(engine) and name not in profile:
            raise RegressError(f"{engine}: {name} does not appear in the callgrind profile: it "
                               "was renamed or inlined; update COUNTED_FUNCTIONS in "
                               "analysis/kvlab/tracking/regress.py")


def default_engines(build: Path) -> str:
    """Every engine this build's kvlab-server has (`--kinds`, the one list of them), then
    the shell: an engine added to the server is counted without editing this file."""
    from ..schema import kinds
    kinds.use_build(build)
    try:
        return ",".join([*kinds.engines(), SHELL])
    except kinds.KindsUnavailable as error:
        raise RegressError(f"the engine list: {error}") from None


def measure(build: Path, ops: int, engines: str, multikey: str = "atomic") -> list[dict]:
    """Runs the driver under callgrind; returns [{engine, op, instructions_per_op}]."""
    driver = Path(build) / "kvlab-opcost"
    if not os.access(driver, os.X_OK):
        raise RegressError(f"{driver} not found: build it first (make regress builds it)")
    if shutil.which("valgrind") is None:
        raise RegressError("valgrind not found: run scripts/install-deps")
    with tempfile.TemporaryDirectory(prefix="kvlab-regress-") as tmp:
        # One CPU and valgrind's FIFO thread lock: the connection thread and the
        # shard thread then take turns in the same order run after run, which
        # keeps the sharded engine's count steady to about one instruction/op.
        pin = ["taskset", "-c", str(min(os.sched_getaffinity(0)))] if shutil.which("taskset") else []
        cmd = [*pin, "valgrind", "--tool=callgrind", "--quiet", "--fair-sched=yes", "--collect-atstart=no",
               *[f"--toggle-collect={pattern}" for pattern, _ in COUNTED_FUNCTIONS],
               f"--callgrind-out-file={tmp}/callgrind.out",
               str(driver), "--ops", str(ops), "--engines", engines, "--multikey", multikey]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0:
            raise RegressError(f"{' '.join(cmd)} exited {run.returncode}\n{run.stdout}{run.stderr}")
        try:
            manifest = json.loads(run.stdout)
        except json.JSONDecodeError:
            raise RegressError(f"kvlab-opcost printed no case list:\n{run.stdout}{run.stderr}")
        dumps = read_dumps(Path(tmp))
    cases = []
    for case in manifest["cases"]:
        # Entering and leaving a region costs a few hundred instructions,
        # under 0.01% of a region of 1000 operations.
        counts = []
        for name in case["regions"]:
            if name not in dumps:
                raise RegressError(f"callgrind wrote no dump for region {name}")
            check_counted_functions(case["engine"], dumps[name][1])
            counts.append(dumps[name][0] / case["ops"])
        per_op = statistics.median(counts)
        cases.append({"engine": case["engine"], "op": case["op"],
                      "instructions_per_op": round(per_op, 1)})
    return cases


def cpu_description() -> str:
    """CPU model and the vector extensions that decide which memcpy/strlen glibc
    picks (valgrind passes AVX2 through, not AVX-512): counts shift with them."""
    model, flags = "unknown", set()
    try:
        with Path("/proc/cpuinfo").open(encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name") and model == "unknown":
                    model = line.split(":", 1)[1].strip()
                elif line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
    except OSError:
        pass
    level = "avx2" if "avx2" in flags else ("avx" if "avx" in flags else "sse")
    return f"{model} ({level})"


def record(cases: list[dict], ops: int, build: Path) -> dict:
    return {
        "schema": SCHEMA,
        "metric": "instructions per operation (callgrind Ir), single thread, parse -> execute -> reply",
        "ops_per_region": ops,
        "git_commit": git("rev-parse", "HEAD") or "unknown",
        "git_dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "compiler": compiler_version(build),
        "cpu": cpu_description(),
        "valgrind": subprocess.run(["valgrind", "--version"], capture_output=True,
                                   text=True).stdout.strip(),
        "cases": cases,
    }


def compare(run: dict, baseline: dict, tolerance: float) -> list[dict]:
    """Adds baseline and change to every case; returns the cases that grew past the tolerance."""
    base = {(c["engine"], c["op"]): c["instructions_per_op"] for c in baseline["cases"]}
    grew = []
    for case in run["cases"]:
        before = base.get((case["engine"], case["op"]))
        case["baseline"] = before
        if before is None:
            case["change_pct"], case["status"] = None, "new"
            continue
        change = 100.0 * (case["instructions_per_op"] - before) / before
        case["change_pct"] = round(change, 2)
        case["status"] = "grew" if change > tolerance else ("shrank" if change < -tolerance else "ok")
        if case["status"] == "grew":
            grew.append(case)
    run["tolerance_pct"] = tolerance
    run["missing"] = sorted(f"{e}/{o}" for e, o in set(base) - {(c["engine"], c["op"]) for c in run["cases"]})
    return grew


def print_table(run: dict) -> None:
    header = f"{'engine':<11} {'op':<5} {'instr/op':>10} {'baseline':>10} {'change':>8}  status"
    print(header)
    print("-" * len(header))
    for c in run["cases"]:
        base = "-" if c.get("baseline") is None else f"{c['baseline']:.1f}"
        change = "-" if c.get("change_pct") is None else f"{c['change_pct']:+.1f}%"
        print(f"{c['engine']:<11} {c['op']:<5} {c['instructions_per_op']:>10.1f} {base:>10} "
              f"{change:>8}  {c.get('status', '')}")


def write_json(path: Path, data: dict) -> None:
    """Writes aside, then renames: a reader never sees half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)


def _shown(path: Path) -> Path:
    """`path` relative to the repository where it lies inside it."""
    try:
        return Path(path).resolve().relative_to(REPO)
    except ValueError:
        return Path(path)


def main(args: argparse.Namespace) -> int:
    try:
        return _gate(args)
    except RegressError as error:
        print(f"regress: {error}", file=sys.stderr)
        return 2


def _gate(args: argparse.Namespace) -> int:
    if args.ops < 1:
        raise RegressError("--ops must be at least 1")
    if args.update and args.multikey != "atomic":
        raise RegressError("--update writes the baseline, which counts the atomic engines")
    engines = args.engines or default_engines(args.build)
    run = record(measure(args.build, args.ops, engines, args.multikey), args.ops, args.build)
    run["multikey"] = args.multikey

    if args.update:
        write_json(args.baseline, run)
        print_table(run)
        print(f"regress: baseline written to {_shown(args.baseline)}; commit it")
        return 0

    if not Path(args.baseline).exists():
        raise RegressError(f"no baseline at {args.baseline}: create one with `make regress-update`")
    baseline = json.loads(Path(args.baseline).read_text(encoding="utf-8"))
    if baseline.get("schema") != SCHEMA:
        raise RegressError(f"{args.baseline} is not a {SCHEMA} file")
    grew = compare(run, baseline, args.tolerance)
    run["baseline_commit"] = baseline.get("git_commit")
    run["passed"] = not grew
    print_table(run)

    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    if args.history_dir:
        write_json(Path(args.history_dir) / f"{stamp}-{run['git_commit'][:12]}.json", run)
    if args.output:
        write_json(args.output, run)
    for what in ("compiler", "cpu"):
        if baseline.get(what) and baseline.get(what) != run[what]:
            print(f"regress: note: baseline was counted on {what} '{baseline.get(what)}', this run on "
                  f"'{run[what]}'; counts differ between them: re-baseline on this machine",
                  file=sys.stderr)
    for name in run["missing"]:
        print(f"regress: note: baseline case {name} was not measured", file=sys.stderr)
    if grew:
        print(f"\nregress: FAILED: {len(grew)} case(s) grew more than {args.tolerance:g}%:")
        for c in grew:
            print(f"  {c['engine']}/{c['op']}: {c['baseline']:.1f} -> {c['instructions_per_op']:.1f} "
                  f"instructions/op ({c['change_pct']:+.1f}%)")
        print("If the growth is intended, run `make regress-update` and commit the new baseline.")
        return 1
    print(f"regress: OK: no case grew more than {args.tolerance:g}%")
    return 0
