"""compare BASE NEW: per-point throughput ratio with a noise-aware verdict.

Points are matched on their variables (server, sweep, loadgen, transport, client,
command, keys, value size, pipeline, connections, nodelay, threads). For each:

- ratio = median(NEW) / median(BASE) of ops/s over the repetitions;
- with >= 2 repetitions on both sides, the verdict is `better` (or `worse`) only
  when the 95% confidence intervals of the two means do not overlap AND the ratio
  moves by more than MIN_EFFECT (a real but negligible change is `same`);
- with a single repetition on either side there is no interval, so the verdict
  needs the ratio to move by more than SINGLE_RUN_THRESHOLD;
- otherwise `same`.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

from .experiment import POINT_VARIABLES
from .report import markdown_table, measured_only, point_table
from .results import load_points
from .stats import Summary

MIN_EFFECT = 0.02
SINGLE_RUN_THRESHOLD = 0.10


@dataclasses.dataclass(frozen=True)
class Comparison:
    key: tuple
    base: Summary
    new: Summary

    @property
    def ratio(self) -> float:
        return self.new.median / self.base.median if self.base.median else math.nan


def verdict(base: Summary, new: Summary, min_effect: float = MIN_EFFECT,
            single_run_threshold: float = SINGLE_RUN_THRESHOLD) -> str:
    if not base.median or math.isnan(base.median) or math.isnan(new.median):
        return "same"
    ratio = new.median / base.median
    if base.n < 2 or new.n < 2:
        if ratio > 1 + single_run_threshold:
            return "better"
        if ratio < 1 - single_run_threshold:
            return "worse"
        return "same"
    if new.low > base.high and ratio > 1 + min_effect:
        return "better"
    if new.high < base.low and ratio < 1 - min_effect:
        return "worse"
    return "same"


def compare_runs(base_dir: str | Path, new_dir: str | Path):
    base = measured_only(point_table(load_points(base_dir)))
    new = measured_only(point_table(load_points(new_dir)))
    base_by_key = {tuple(r[v] for v in POINT_VARIABLES): r["summary"] for _, r in base.iterrows()}
    new_by_key = {tuple(r[v] for v in POINT_VARIABLES): r["summary"] for _, r in new.iterrows()}
    matched = [Comparison(k, base_by_key[k], new_by_key[k]) for k in base_by_key if k in new_by_key]
    only_base = [k for k in base_by_key if k not in new_by_key]
    only_new = [k for k in new_by_key if k not in base_by_key]
    return matched, only_base, only_new


def _label(key: tuple) -> str:
    v = dict(zip(POINT_VARIABLES, key))
    return (f"{v['server']} {v['sweep']} {v['loadgen']} {v['transport']} {v['client']} "
            f"{v['command']} keys={v['keys']} P={v['pipeline']} c={v['connections']} "
            f"nodelay={v['nodelay']} T={v['threads']}")


def render_comparison(base_dir, new_dir, min_effect: float = MIN_EFFECT) -> tuple[str, dict]:
    matched, only_base, only_new = compare_runs(base_dir, new_dir)
    counts = {"better": 0, "same": 0, "worse": 0}
    rows = []
    for c in matched:
        result = verdict(c.base, c.new, min_effect)
        counts[result] += 1
        rows.append([_label(c.key), f"{c.base.median:,.0f}", f"{c.new.median:,.0f}",
                     f"{c.ratio:.3f}", result])
    out = [f"# compare {Path(base_dir).name} → {Path(new_dir).name}", "",
           f"{len(matched)} points matched: {counts['better']} better, {counts['same']} same, "
           f"{counts['worse']} worse.", "",
           markdown_table(["point", "base ops/s", "new ops/s", "new/base", "verdict"], rows), "",
           f"Verdict: better/worse needs non-overlapping 95% CIs and a change of more than "
           f"{100 * min_effect:.0f}%; with one repetition on a side, a change of more than "
           f"{100 * SINGLE_RUN_THRESHOLD:.0f}%."]
    if only_base:
        out += ["", "Only in base: " + "; ".join(_label(k) for k in only_base)]
    if only_new:
        out += ["", "Only in new: " + "; ".join(_label(k) for k in only_new)]
    return "\n".join(out) + "\n", counts
