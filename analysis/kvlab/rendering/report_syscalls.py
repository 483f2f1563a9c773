"""The report's system-call table (syscalls.csv): each server's system calls per operation
under the same load, beside redis-server's, with the three most frequent calls."""

from __future__ import annotations

from pathlib import Path

from .markdown import markdown_table
from ..running.results import load_table


def syscalls_section(run_dir: Path, meta: dict) -> str:
    counts = load_table(run_dir, "syscalls.csv", keep_default_na=False)
    if counts is None:
        return ""
    kinds = {name: spec.get("kind") for name, spec in meta.get("servers", {}).items()}
    rows = []
    keys = ["sweep", "loadgen", "transport", "command", "pipeline", "threads"]
    for _, group in counts.groupby(keys, sort=False):
        redis = group[group["server"].map(kinds) == "redis"]
        reference = float(redis["syscalls_per_op"].iloc[0]) if not redis.empty else None
        for _, r in group.iterrows():
            versus = f"{r['syscalls_per_op'] / reference:.2f}" if reference else "–"
            rows.append([r["sweep"], str(r["command"]).upper(), f"P{r['pipeline']}",
                         r["server"], f"{r['syscalls_per_op']:.2f}", versus, r["top"]])
    # Runs recorded before the perf counter existed have no method column: strace.
    methods = set(counts["method"]) if "method" in counts else {"strace"}
    return "\n".join([
        "## System calls per operation", "",
        _method_note(methods), "",
        markdown_table(["sweep", "test", "P", "server", "syscalls/op", "vs redis",
                        "most frequent (per op)"], rows)])


def _method_note(methods: set[str]) -> str:
    notes = {
        "perf": "counted in the kernel by its syscall tracepoints (perf stat, all the "
                "server's threads) on a fresh server while a fixed load ran; the counting never "
                "stops the server, which keeps most of its speed, so these are nearly the calls "
                "of the regime the throughput rounds measure",
        "strace": "counted by strace -c -f on a fresh server while a fixed load ran; strace "
                  "slows the server several-fold, and a slow server finds more work per "
                  "wake-up, so at P1 these under-count a fast server's calls",
    }
    return "System calls " + "; ".join(notes[m] for m in sorted(methods) if m in notes) + "."
