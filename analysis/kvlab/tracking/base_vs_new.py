"""compare BASE NEW: every series of NEW judged against BASE with kvlab.tracking.verdict's rule.

BASE is a run folder, a history record (.json) or a folder of records (e.g.
results/history/<fingerprint>/: the whole history of a machine); NEW is a run folder or
a record. Series are matched by name: declared ratios (ratios.csv), each point's ops/s
(points matched on their variables) and its cost columns. A client-bound point, one with
error replies, a disturbed ratio or an unmeasured point is never judged (`inconclusive`,
with the reason).

Both sides must come from the same machine fingerprint — figures of two machines are not
one series — unless the caller says otherwise (across_machines). When BASE holds runs of
several experiments, only those of NEW's experiment are used.
"""

from __future__ import annotations

from pathlib import Path

from ..rendering.markdown import markdown_table
from .history import HistoryError, describe_fingerprint, load_records, series_name, series_of
from .verdict import HISTORY_WINDOW, MIN_EFFECT, SeriesVerdict, count, judge_record


class CompareError(Exception):
    """Inputs that cannot be compared; the message says why."""


def compare(base: str | Path, new: str | Path, min_effect: float = MIN_EFFECT,
            across_machines: bool = False) -> tuple[list[dict], dict, list[SeriesVerdict]]:
    """(the base records used, the new record, a verdict per series of the new record)."""
    try:
        history = load_records(base)
        new_record = load_records(new)[-1]
    except HistoryError as error:
        raise CompareError(str(error)) from None
    new_id = new_record["fingerprint"]["id"]
    others = sorted({r["fingerprint"]["id"] for r in history} - {new_id})
    if others and not across_machines:
        raise CompareError(
            f"base holds runs of another machine ({', '.join(others)}) than new ({new_id}); "
            "figures of two machines are not one series (--across-machines to compare anyway)")
    same_experiment = [r for r in history if series_name(r) == series_name(new_record)]
    # Never across idle regimes, even without the same experiment (series_name).
    same_idle = [r for r in history
                 if r.get("cpu_idle", "kernel") == new_record.get("cpu_idle", "kernel")]
    history = [r for r in (same_experiment or same_idle)
               if r["started_utc"] != new_record["started_utc"] or r["run"] != new_record["run"]]
    return history, new_record, judge_record(history, new_record, min_effect)


def _number(value: float | None, digits: int = 4) -> str:
    if value is None:
        return "–"
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.{digits}g}"


def _estimate(v: SeriesVerdict) -> str:
    text = _number(v.new.value)
    if v.new.has_interval:
        text += f" [{_number(v.new.low)}, {_number(v.new.high)}]"
    return text


def _baseline(v: SeriesVerdict) -> str:
    j = v.judgement
    if j.center is None:
        return "–"
    text = _number(j.center)
    if j.band_low is not None:
        text += f" [{_number(j.band_low)}, {_number(j.band_high)}]"
    return text


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:+.1f}%"


def verdict_rows(verdicts: list[SeriesVerdict]) -> list[list[str]]:
    """One table row per series: kind, series, base, new, change, threshold, verdict, why."""
    return [[v.key.kind, v.key.name, _baseline(v), _estimate(v), _percent(v.judgement.change),
             "–" if v.judgement.threshold is None else f"±{100 * v.judgement.threshold:.1f}%",
             v.judgement.verdict, v.judgement.why] for v in verdicts]


VERDICT_HEADER = ["kind", "series", "base median [band]", "new [95% interval]", "change",
                  "threshold", "verdict", "why"]



def render_comparison(base: str | Path, new: str | Path, min_effect: float = MIN_EFFECT,
                      across_machines: bool = False) -> tuple[str, dict[str, int]]:
    """The comparison as markdown, and the number of series per verdict."""
    history, new_record, verdicts = compare(base, new, min_effect, across_machines)
    counts = count(verdicts)
    commits = sorted({(r["commit"] or "?")[:7] for r in history})
    out = [f"# compare {Path(base).name} → {Path(new).name}", "",
           f"Machine: `{new_record['fingerprint']['id']}` "
           f"({describe_fingerprint(new_record['fingerprint'])}).",
           f"Base: {len(history)} run(s) of `{new_record['experiment']}` "
           f"(commits {', '.join(commits) or '–'}); new: commit "
           f"{(new_record['commit'] or '?')[:12]}.", "",
           f"{len(verdicts)} series: " + ", ".join(f"{n} {name}" for name, n in counts.items())
           + ".", "",
           markdown_table(VERDICT_HEADER, verdict_rows(verdicts)), "",
           f"Rule (kvlab.tracking.verdict): against the last {HISTORY_WINDOW} usable base runs, "
           f"`regressed`/`improved` needs a change beyond max({100 * min_effect:.0f}%, the "
           "base's spread) and intervals that do not overlap; `unstable`: the base series' "
           f"own spread exceeds {100 * min_effect:.0f}%; `same`: the whole new interval "
           f"within ±{100 * min_effect:.0f}% of a tight base; anything else is "
           "`inconclusive`. Client-bound points, error replies and disturbed ratios are "
           "never judged."]
    if history:
        missing = sorted(set(series_of(history[-1])) - {v.key for v in verdicts})
        if missing:
            out += ["", f"In the newest base run but not in new ({len(missing)}): "
                    + "; ".join(f"{k.kind} {k.name}" for k in missing)]
    return "\n".join(out) + "\n", counts
