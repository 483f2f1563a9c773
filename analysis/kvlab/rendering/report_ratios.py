"""The report's lead, in this order: the A/A calibration (calibration.csv: what this
machine's noise is and whether the method held), one verdict table per seed with a
claim in the run (what each interval decides, kvlab.measures.ratio_verdicts.decide), the other
declared ratios' verdicts, how the time was spent, then the declared comparisons in
full (ratios.csv) with why rounds stopped, and how much of the run was disturbed."""

from __future__ import annotations

import math
import statistics
from pathlib import Path

import pandas as pd

from ..measures import alternation
from ..measures.ratio_verdicts import NOT_MEASURED_BUDGET, decide_row
from ..measures.stats import (MIN_ROUNDS_FOR_SPREAD, best_start_seconds, larger_side,
                              paired_interval)
from .markdown import markdown_table
from .report_format import CLIENT_BOUND_MARK
from ..running.results import load_table

# The seed document a claim comes from, when its sweep does not name one: the first
# seed compares keyspace architectures (servers), the second client setups.
SEED_TITLES = {"ember-pr50": "Seed claims: ember PR #50 (concurrent map vs sharded keyspace)",
               "lettuce-threads": "Seed claims: Lettuce (pooled vs shared connections)"}
PER_CPU_NOTE = "judged per server CPU (client-bound)"
# where alternation's rounds go once the plan's are spent (alternation.next_to_measure)
_LATER_ROUNDS = ("cheapest to finish in the time left, else the one furthest from its "
                 "target per second of its round")


def _interval(row: pd.Series) -> str:
    # A ratio the plan dropped after a start or two is no measurement: its few starts'
    # ratio is not printed beside "not measured (budget)".
    if pd.isna(row["ratio"]) or row.get("status") == NOT_MEASURED_BUDGET:
        return "–"
    if pd.isna(row["low"]):
        return f"{row['ratio']:.3f} [–]"
    half = larger_side(row["ratio"], row["low"], row["high"])
    return f"{row['ratio']:.3f} [{row['low']:.3f}, {row['high']:.3f}] ±{100 * half:.1f}%"


def declared_section(run_dir: Path, meta: dict) -> str:
    ratios = load_table(run_dir, "ratios.csv", keep_default_na=True)
    if ratios is None:
        return ""
    seeds = {c.get("name"): c.get("seed_ratio") for c in meta.get("comparisons", [])}
    precision = meta.get("precision")
    lines = ["## Declared comparisons", ""]
    target = f"±{precision:.1%}" if precision else "±5% (no precision set)"
    lines.append(f"Target half-width {target}. Rounds stopped: "
                 + "; ".join(f"{phase}: {why}" for phase, why in
                             meta.get("rounds", {}).get("stopped", {}).items()) + ".")
    lines.append("")
    header = ["comparison", "test", "point", "ratio [low, high]", "rounds", "status", "seed"]
    rows = []
    bound = ratios["client_bound"].astype(str).str.lower() == "true" \
        if "client_bound" in ratios else pd.Series(False, index=ratios.index)
    for i, row in ratios.iterrows():
        seed = seeds.get(row["comparison"])
        ratio = "–" if pd.isna(row["ratio"]) else _interval(row)
        rows.append([row["comparison"], str(row["test"]).upper(), row["point"],
                     ratio + (f" {CLIENT_BOUND_MARK}" if bound[i] else ""), str(row["rounds"]),
                     row["status"], "–" if seed is None else f"{seed:.2f}"])
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "---|" * len(header))
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    if bound.any():
        lines += ["", f"{CLIENT_BOUND_MARK} {int(bound.sum())} throughput ratio(s) had the load "
                  "generator saturated in most rounds: both servers served what the client "
                  "could drive, so the ratio measures the client as much as the servers. What "
                  "a request costs each server is the `per server CPU` comparison (metric "
                  "ops_per_server_cpu_s), where one is declared."]
    unresolved = ratios[ratios["status"] != "resolved"]
    if not unresolved.empty:
        lines += ["", f"{len(unresolved)} of {len(ratios)} declared ratios did not reach the "
                  "target: see why rounds stopped above; `disturbed` ones lost their rounds to "
                  "other work on the measured CPUs."]
    return "\n".join(lines)


def disturbance_line(points: pd.DataFrame, meta: dict) -> str:
    """How much of the run other work disturbed, measured on the measured CPUs (not the load
    average, which the benchmark's own server and client raise)."""
    if "foreign_cpu" not in points or points["foreign_cpu"].isna().all():
        return "- disturbance: not measured by this run"
    disturbed = int((points["status"] == "disturbed").sum())
    measured = int(points["status"].isin(["ok", "disturbed"]).sum())
    worst = points["foreign_cpu"].max()
    line = (f"- disturbance: {disturbed} of {measured} measurements had other work on the "
            f"measured CPUs above the threshold and were run again; foreign CPU median "
            f"{points['foreign_cpu'].median():.3f} cores, worst {worst:.2f}")
    steal = points["steal_cpu"].max() if "steal_cpu" in points else math.nan
    if not pd.isna(steal) and steal > 0:
        line += f"; steal up to {steal:.2f} cores"
    return line + idle_and_wake_cost(meta)


def idle_and_wake_cost(meta: dict) -> str:
    """How the measured CPUs waited when idle (running/cpu_idle.py) and what the watch
    charged each sleep of ours (loadgens.wake_cost); "" for runs from before either."""
    text = ""
    idle = meta.get("cpu_idle") or {}
    if idle:
        text += ("; idle CPUs polled (held for the run)" if idle.get("held")
                 else f"; idle CPUs free to halt ({idle.get('why') or 'not held'})")
    cost = meta.get("wake_cost") or {}
    if cost:
        text += (f"; {float(cost.get('wake_cost_us', 0)):.2f} µs charged to each sleep of ours"
                 if cost.get("windows") else
                 "; the wake-up cost was not measured (processes started in every "
                 "calibration window): nothing charged to our sleeps")
    return text


def _read(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, keep_default_na=True) if path.exists() else pd.DataFrame()


def _per_cpu(row: pd.Series) -> bool:
    return str(row.get("method", "")).startswith("alternation") \
        and str(row.get("client_bound", "")).lower() == "true" \
        and row.get("metric") == "ops_per_server_cpu_s"


def calibration_section(run_dir: Path, meta: dict) -> str:
    """The A/A line: slice noise, drift, the A/A ratio and whether it covers 1.0, and what
    precision the budget can buy here."""
    run_dir = Path(run_dir)
    calibration = _read(run_dir / "calibration.csv")
    lines = ["## Calibration (A/A)", ""]
    if calibration.empty:
        why = "measurement = rounds" if meta.get("measurement") == "rounds" else \
            "no declared comparison could alternate: redis-benchmark points are measured " \
            "in rounds"
        return "\n".join(lines + [f"No A/A calibration in this run ({why})."])
    row = calibration.iloc[0]
    slices = _read(run_dir / "alternation.csv")
    # The slices the interval kept: disturbed cycles and rounds were left out of it
    # (`left_out`; older runs say only whether a whole round was disturbed).
    if not slices.empty:
        column = "left_out" if "left_out" in slices else "disturbed"
        mine = slices[(slices["calibration"].astype(str).str.lower() == "true")
                      & (slices[column].astype(str).str.lower() != "true")]
    else:
        mine = slices
    cvs, drifts, medians, pair_rounds = [], [], [], []
    for _, group in (mine.groupby("round") if not mine.empty else []):
        rows = [alternation.Slice(0 if s == "a" else 1, t, sec, ops, cpu, cc, m, p)
                for s, t, sec, ops, cpu, cc, m, p in zip(
                    group["side"], group["start_s"], group["seconds"], group["ops"],
                    group["server_cpu_s"], group["client_cpu_s"], group["mean_us"],
                    group["p99_us"])]
        pair_rounds.append(alternation.pair_log_ratios(rows))
        cvs.append(alternation.slice_cv(rows))
        drifts.append(abs(alternation.drift(rows)))
        medians.append(statistics.median(s.value("ops_per_s") for s in rows if s.side == 0))
    name = row["comparison"]
    if pd.isna(row["low"]):
        lines.append(f"- **{name}** ({row['point']}): too few rounds for an interval "
                     f"({row['rounds']}): this run's noise is not known.")
        return "\n".join(lines)
    covers = row["low"] <= 1.0 <= row["high"]
    seconds = len(mine) * float(meta.get("alternation", {}).get("slice_s", 0.1))
    verdict = ("covers 1.0: the method held on this machine" if covers else
               "**excludes 1.0: a FAILED RUN of the method** (a server against a copy of "
               "itself must tie; this run's other intervals are not to be trusted)")
    lines.append(f"- **{name}** ({row['point']}): {_interval(row)} over {row['rounds']} "
                 f"rounds, {row['pairs']} pairs of slices; {verdict}.")
    finite = [c for c in cvs if not math.isnan(c)]
    if finite:
        drifts = [d for d in drifts if not math.isnan(d)]
        drift_text = (f"median {statistics.median(drifts):.1%}, largest {max(drifts):.1%}"
                      if drifts else "–")
        spread = max(medians) / min(medians) - 1 if medians and min(medians) > 0 else math.nan
        lines.append(f"- noise: one {meta.get('alternation', {}).get('slice_s', 0.1):g} s "
                     f"slice of one server varies {statistics.median(finite):.1%} (log SD, "
                     f"median over rounds); drift within a round (first fifth to last, "
                     f"absolute) {drift_text}; between rounds the same server's median slice "
                     f"ranged {spread:.0%}.")
    if medians:
        # The machine's speed as this run saw it: two runs of one machine compare by it.
        # The same ratio measured minutes apart can differ beyond both intervals (the
        # intervals hold the spread between starts within a run, not between runs);
        # where this held, the ratio moved with one of its sides (ratios.csv: median_a,
        # median_b), not with the machine.
        lines.append(f"- machine speed: the A/A's server served a median "
                     f"{statistics.median(medians):,.0f} ops/s per slice over its "
                     f"{len(medians)} starts (between runs of this machine, a ratio that "
                     f"moved while this held moved with one of its sides: ratios.csv "
                     f"median_a, median_b).")
    precision = meta.get("precision") or 0.05
    # What the slices' own noise allows (batch means alone): the A/A's few rounds say
    # little about the spread between rounds, which a declared ratio measures itself.
    half = paired_interval(pair_rounds, between_rounds=False).half_width
    needed = alternation.seconds_for(half, seconds, precision)
    spent = meta.get("alternation", {})
    declared = [p for p in spent.get("pairs", []) if not p.get("calibration")]
    buys = ""
    if declared and seconds > 0:
        share = sum(sum(p["start_lengths_s"]) if "start_lengths_s" in p else
                    p["rounds"] * float(spent.get("alternation_s", 2.0))
                    for p in declared) / len(declared)
        if share > 0:
            buys = (f"; this run's alternation, {share:.0f} s measured per declared ratio on "
                    f"average, buys about ±{half * math.sqrt(seconds / share):.1%} each")
    lines.append(f"- precision: the A/A's pairs of slices alone (batch means) reach "
                 f"±{half:.1%} from {seconds:.0f} s of alternating; at this noise a ratio "
                 f"needs about {needed:.0f} s of alternating (processes' starts not counted) "
                 f"for ±{precision:.1%}{buys}. Differences between rounds come on top.")
    start = _start_length_line(pair_rounds, meta)
    if start:
        lines.append(start)
    lines += plan_lines(meta)
    return "\n".join(lines)


def plan_lines(meta: dict) -> list[str]:
    """The budget plan made once the A/A had its rounds (budget_plan.py): per phase, how
    many declared ratios it could take to the target, how many only to a lesser
    precision, and which it left out with the seconds they would have needed."""
    precision = meta.get("precision") or 0.05
    lines = []
    for phase, plans in (meta.get("alternation", {}).get("plan") or {}).items():
        rows = plans.get("first") or []
        if not rows:
            continue
        measured = [r for r in rows if r["measured"]]
        full = [r for r in measured
                if r.get("reaches_target", r["cost_s"] >= r["needed_s"])]
        lesser = [r for r in measured if r not in full]
        out = [r for r in rows if not r["measured"]]
        seeds = [r for r in rows if r.get("seed_claim")]
        text = (f"- plan ({phase}, made once the A/A had its rounds): {len(full)} of "
                f"{len(rows)} declared ratios to ±{precision:.1%}")
        if seeds:
            text += f" ({sum(r in full for r in seeds)} of {len(seeds)} seed claims)"
        if lesser:
            widest = max((r["predicted_half_width"] or math.inf) for r in lesser)
            text += f"; {len(lesser)} to a lesser precision, up to ±{widest:.1%}"
        if out:
            names = ", ".join(f"{r['comparison']} ({r['point']})" for r in out[:6])
            more = f" and {len(out) - 6} more" if len(out) > 6 else ""
            text += (f"; {len(out)} not measured (budget), needing about "
                     f"{sum(r['needed_s'] for r in out):.0f} s more: {names}{more}")
        lines.append(text + ".")
    return lines


def _start_length_line(pair_rounds: list[list[float]], meta: dict) -> str:
    """What a start costs against what it buys, from the A/A: its two-level variance
    components and the seconds a round cost beyond its alternation."""
    spent = meta.get("alternation", {})
    aa = [p for p in spent.get("pairs", []) if p.get("calibration")]
    slice_s = float(spent.get("slice_s", 0.1))
    length = float(spent.get("alternation_s", 2.0))
    if not aa or not pair_rounds:
        return ""
    attempts = aa[0].get("rounds", 0) + aa[0].get("failed", 0) + aa[0].get("disturbed", 0)
    if not attempts or not aa[0].get("spent_s"):
        return ""
    overhead = max(0.0, float(aa[0]["spent_s"]) / attempts - length)
    summary = paired_interval(pair_rounds)
    best = best_start_seconds(summary.between_var, summary.pair_var, 1 / (2 * slice_s),
                              overhead)
    if math.isnan(best):
        return ""
    between = f"±{math.sqrt(summary.between_var):.1%}" if summary.between_var > 0 else "none seen"
    advice = (f"{best:.1f} s of alternating per start buys the narrowest interval per "
              f"second spent" if math.isfinite(best) else
              "with no spread between starts, fewer and longer starts cost least (at least "
              f"{MIN_ROUNDS_FOR_SPREAD})")
    return (f"- a start: costs {overhead:.1f} s beyond its {length:g} s of alternating; between "
            f"starts the A/A moved {between} (SD), its slices ±"
            f"{math.sqrt(summary.pair_var * 2 * slice_s):.1%} over one second: {advice}.")


def _seed_of(comparison: dict, meta: dict) -> str | None:
    sweep = comparison.get("sweep")
    seed = meta.get("sweeps", {}).get(sweep, {}).get("seed") if sweep else None
    if seed:
        return seed
    return "ember-pr50" if comparison.get("by", "server") == "server" else "lettuce-threads"


def _modes_note(row: pd.Series, a: str, b: str) -> str:
    """'; a's starts: 2 modes: 88% at 720k, 12% at 1.1M' for each side with modes."""
    notes = []
    for side, name in (("modes_a", a), ("modes_b", b)):
        text = row.get(side)
        if isinstance(text, str) and "modes:" in text:
            notes.append(f"{name}'s starts: {text}")
    return "".join(f"; {n}" for n in notes)


def verdict_sections(run_dir: Path, meta: dict) -> str:
    """One table per seed with a claim here (claim, our ratio [interval], verdict), then
    the declared ratios without a seed's figure."""
    ratios = _read(Path(run_dir) / "ratios.csv")
    if ratios.empty:
        return ""
    specs = {c.get("name"): c for c in meta.get("comparisons", [])}
    tables: dict[str, list[list[str]]] = {}
    others = []
    for _, row in ratios.iterrows():
        spec = specs.get(row["comparison"], {})
        seed = spec.get("seed_ratio")
        a, b = spec.get("a", "A"), spec.get("b", "B")
        verdict = decide_row(row, seed, a, b, meta.get("precision")).text()
        verdict += _modes_note(row, a, b)
        if _per_cpu(row):
            verdict += f"; {PER_CPU_NOTE}"
        claim = f"{row['comparison']} {str(row['test']).upper()} ({row['point']})"
        if seed is None:
            others.append([claim, _interval(row), verdict])
        else:
            tables.setdefault(_seed_of(spec, meta), []).append(
                [f"{claim}: seed {seed:.2f}", _interval(row), verdict])
    out = []
    for seed, rows in tables.items():
        out += [f"## {SEED_TITLES.get(seed, seed)}", "",
                markdown_table(["claim", "our ratio [interval]", "verdict"], rows), ""]
    if others:
        out += ["## Other declared ratios", "",
                markdown_table(["claim", "our ratio [interval]", "verdict"], others), ""]
    return "\n".join(out).rstrip()


def _lengths_chosen(spent: dict) -> bool:
    """Whether some declared ratio's starts took another length than alternation_s."""
    length = spent.get("alternation_s")
    return any(abs(n - length) > 1e-6 for p in spent.get("pairs", [])
               for n in p.get("start_lengths_s", [])) if length is not None else False


def time_section(meta: dict) -> str:
    """How the run's time was spent: every point's rounds, then each alternated pair."""
    spent = meta.get("alternation")
    if not spent:
        return ""
    total = sum(spent.get("spent_s", {}).values())
    from_starts = spent.get("points_from_starts")
    rounds_of = "rounds of every point" if from_starts is None else (
        f"the sweeps' rounds of the points no alternation start measured ({from_starts} "
        "points were measured by their declared ratio's starts)")
    lines = ["## How the time was spent", "",
             f"- {rounds_of} (each side in its own window): "
             f"{spent.get('rounds_spent_s', 0):.0f} s; alternation: {total:.0f} s "
             f"({spent.get('alternation_s', '?')} s measured per round" + (
                 ", a declared ratio's later ones as long as its own starts said"
                 if _lengths_chosen(spent) else "") + ", slices of "
             f"{spent.get('slice_s', '?')} s; " + (
                 f"the A/A pair's {spent.get('min_rounds', '?')} rounds first, then the rounds "
                 "the budget plan gave each declared ratio, then each round to the one "
                 f"{_LATER_ROUNDS})" if "plan" in spent else
                 f"every pair {spent.get('min_rounds', '?')} rounds first, then each round "
                 f"to the declared ratio {_LATER_ROUNDS})")]
    for pair in spent.get("pairs", []):
        extra = []
        if pair.get("cycles_left_out"):
            extra.append(f"{pair['cycles_left_out']} disturbed ABBA cycles left out of them")
        if any(pair.get("stalled_slices") or ()):
            a, b = pair["stalled_slices"]
            extra.append(f"stalled slices: {a} of a, {b} of b, counted against their side")
        if pair.get("disturbed"):
            extra.append(f"{pair['disturbed']} more disturbed, left out")
        if pair.get("failed"):
            extra.append(f"{pair['failed']} failed")
        lengths = pair.get("start_lengths_s") or []
        if len(set(lengths)) > 1:
            extra.append("starts of " + ", ".join(
                f"{n:g} s" for n in dict.fromkeys(lengths)) + " in turn")
        lines.append(f"- {pair['comparison']} {str(pair['test']).upper()}: {pair['spent_s']:.0f} s, "
                     f"{pair['rounds']} rounds" + (f" ({', '.join(extra)})" if extra else ""))
    return "\n".join(lines)
