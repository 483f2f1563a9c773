"""The static performance dashboard: results/dashboard/index.html and its PNGs.

Renders one page that needs no network to view (what it shows is loaded by
dashboard_data.py, from kvlab.tracking.opcost, kvlab.tracking.micro and kvlab.tracking.history; this module draws
and writes HTML):

- instruction counts per operation (the `make regress` gate) per commit, cases that
  grew past the gate's tolerance highlighted;
- the history of `make micro` runs, the latest compared against the one before;
- the bench history, one panel group per machine fingerprint: the committed records
  under results/history/ plus local run folders not yet recorded (results/runs/*,
  results/sample). Inside a group, one block per experiment: the newest run's verdicts
  against the runs before it (kvlab.tracking.verdict, the rule `compare` uses), and series over
  commits with their 95% intervals as bands — declared ratios first, cost per operation
  second, ops/s third. A series never crosses machines or experiments.
- the newest local run's report.

Pure function of the files it reads: the same results/ always gives the same
page. Not thread-safe (matplotlib's pyplot state); run one at a time.

Usage: python3 -m kvlab dashboard [--results DIR] [--out DIR]
"""

from __future__ import annotations

import argparse
import datetime
import html
import re
import sys
from pathlib import Path
from typing import Any

from ..tracking import micro
from ..tracking.base_vs_new import VERDICT_HEADER, verdict_rows
from ..tracking.history import SeriesKey, cost_columns, describe_fingerprint, parse_date, series_of
from ..tracking.verdict import MIN_EFFECT, SeriesVerdict, count, judge_record
from . import palette
from .markdown import markdown_to_html
from .dashboard_data import DashboardData, load_dashboard_data

# A micro benchmark whose time grew more than this against the previous run
# is highlighted. Wall-clock numbers are noisy, so the bar is higher than the
# instruction-count gate's.
MICRO_SLOWDOWN_PCT = 10.0
# Lines per plot beyond which a plot stops being readable.
MAX_SERIES_PER_PLOT = 8
# ops/s plots per experiment block (one per command and sweep); the tables hold the rest.
MAX_POINT_PLOTS = 12
# Verdicts that ask a reader to look.
FLAGGED = ("regressed", "improved", "unstable")


# ----------------------------------------------------------------- plots


def _pyplot() -> Any:
    """matplotlib's pyplot on the file-only Agg backend, imported on first use so
    that `python3 -m kvlab` stays quick for the other subcommands."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _label(date: datetime.datetime, commit: str) -> str:
    return f"{commit[:7]}\n{date:%m-%d %H:%M}" if commit else f"{date:%m-%d %H:%M}"


# A run axis names at most this many runs: two-line labels 7 points wide overlap past it.
MAX_RUN_LABELS = 10


def thinned(labels: list[str], most: int = MAX_RUN_LABELS) -> list[str]:
    """`labels` with all but every k-th blanked (the first and the last kept), so that at
    most about `most` are shown: every run keeps its tick, only some are named."""
    step = max(1, -(-len(labels) // most))
    last = len(labels) - 1
    # A named run closer than a step to the last would overlap the last's label.
    return [label if i == last or (i % step == 0 and last - i >= step) else ""
            for i, label in enumerate(labels)]


def _run_axis(ax: Any, labels: list[str]) -> None:
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(thinned(labels), fontsize=7)


def _save(fig: Any, out_dir: Path, name: str) -> str:
    fig.tight_layout()
    fig.savefig(Path(out_dir) / name, dpi=90)
    _pyplot().close(fig)
    return name


def plot_opcost(records: list[dict], out_dir: Path) -> list[tuple[str, str]]:
    """One PNG per operation: instructions/op per engine across commits. Returns [(title, file)]."""
    ops = sorted({c["op"] for r in records for c in r["cases"]})
    plots = []
    for op in ops:
        fig, ax = _pyplot().subplots(figsize=(8, 3.4))
        engines = palette.ordered("server", {c["engine"] for r in records for c in r["cases"]
                                             if c["op"] == op})
        for engine in engines:
            style = palette.server(engine)
            xs, ys, grew = [], [], []
            for i, r in enumerate(records):
                for c in r["cases"]:
                    if c["engine"] == engine and c["op"] == op:
                        xs.append(i)
                        ys.append(c["instructions_per_op"])
                        if c.get("status") == "grew":
                            grew.append((i, c["instructions_per_op"]))
            ax.plot(xs, ys, marker=style.marker, color=style.colour, label=engine)
            if grew:
                ax.scatter(*zip(*grew), s=160, facecolors="none", edgecolors="red", linewidths=2)
        _run_axis(ax, [_label(r["_date"] or datetime.datetime.now(datetime.timezone.utc),
                              r.get("git_commit", "")) + ("*" if r["source"] == "baseline" else "")
                       for r in records])
        ax.set_ylabel("instructions / op")
        ax.set_title(f"{op}: instructions per operation (red ring: grew past tolerance; * = committed baseline)",
                     fontsize=9)
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=8, loc="lower left")
        ax.grid(alpha=0.3)
        plots.append((f"{op} instructions per operation", _save(fig, out_dir, f"opcost-{op.lower()}.png")))
    return plots


def plot_micro(runs: list[dict], out_dir: Path) -> list[tuple[str, str]]:
    """One PNG per benchmark family (the name up to the first '/'): time per iteration across runs."""
    families: dict[str, set[str]] = {}
    for run in runs:
        for name in run["benchmarks"]:
            families.setdefault(name.split("/")[0], set()).add(name)
    plots = []
    for family in sorted(families):
        names = sorted(families[family])[:MAX_SERIES_PER_PLOT]
        styles = palette.series_styles(names)
        fig, ax = _pyplot().subplots(figsize=(8, 3.2))
        for name in names:
            pts = [(i, r["benchmarks"][name]["ns"]) for i, r in enumerate(runs) if name in r["benchmarks"]]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=styles[name].marker,
                    color=styles[name].colour, linestyle=styles[name].linestyle,
                    label=name[len(family):] or name)
        _run_axis(ax, [_label(r["date"], r["commit"]) for r in runs])
        ax.set_ylabel("ns / iteration")
        ax.ticklabel_format(axis="y", style="plain", useOffset=False)
        shown = "" if len(families[family]) <= MAX_SERIES_PER_PLOT else \
            f" (first {MAX_SERIES_PER_PLOT} of {len(families[family])})"
        ax.set_title(f"{family}{shown}", fontsize=9)
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        ax.grid(alpha=0.3)
        safe = "".join(ch if ch.isalnum() else "_" for ch in family)
        plots.append((family, _save(fig, out_dir, f"micro-{safe}.png")))
    return plots


def _series_plot(records: list[dict], keys: list[SeriesKey], title: str, ylabel: str,
                 out_dir: Path, name: str) -> tuple[str, str]:
    """One PNG: each series of `keys` over `records` (x = run), value with its 95% interval
    as a band and error bar; a flawed figure (client-bound, errors, disturbed) is a red x."""
    fig, ax = _pyplot().subplots(figsize=(10, 3.4))
    estimates = [series_of(r) for r in records]
    shown_keys = keys[:MAX_SERIES_PER_PLOT]
    legend = dict(zip(shown_keys, _distinct_labels([k.name for k in shown_keys])))
    styles = palette.series_styles(k.name for k in shown_keys)
    for key in sorted(shown_keys, key=lambda k: (palette.order_key(
            "server", palette.server_in(k.name) or "~"), k.name)):
        style = styles[key.name]
        pts = [(i, s[key]) for i, s in enumerate(estimates) if key in s and s[key].value is not None]
        good = [(i, e) for i, e in pts if not e.flaw]
        line, = ax.plot([i for i, _ in good], [e.value for _, e in good], marker=style.marker,
                        color=style.colour, linestyle=style.linestyle, label=legend[key])
        banded = [(i, e) for i, e in good if e.has_interval]
        if banded:
            ax.fill_between([i for i, _ in banded], [e.low for _, e in banded],
                            [e.high for _, e in banded], color=line.get_color(), alpha=0.15)
            ax.errorbar([i for i, _ in banded], [e.value for _, e in banded],
                        # The value is a median, the interval the mean's: the median may lie
                        # outside it, so a whisker is never drawn below zero length.
                        yerr=[[max(0.0, e.value - e.low) for _, e in banded],
                              [max(0.0, e.high - e.value) for _, e in banded]],
                        fmt="none", ecolor=line.get_color(), capsize=3)
        flawed = [(i, e) for i, e in pts if e.flaw]
        if flawed:
            ax.scatter([i for i, _ in flawed], [e.value for _, e in flawed], marker="x", color="red")
    _run_axis(ax, [_run_label(r) for r in records])
    ax.set_xlim(-0.5, len(records) - 0.5)
    ax.set_ylabel(ylabel, fontsize=8)
    if ylabel == "ops/s":
        palette.rate_axis(ax)
    else:
        ax.ticklabel_format(axis="y", style="plain", useOffset=False)
    shown = "" if len(keys) <= MAX_SERIES_PER_PLOT else f" (first {MAX_SERIES_PER_PLOT} of {len(keys)})"
    ax.set_title(title + shown, fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.grid(alpha=0.3)
    return (title, _save(fig, out_dir, name))


def _distinct_labels(names: list[str], width: int = 60) -> list[str]:
    """Series names without the words all of them share (those go in the title's place),
    cut to `width` characters."""
    word_lists = [n.split() for n in names]
    common = set.intersection(*map(set, word_lists)) if len(names) > 1 else set()
    labels = [" ".join(w for w in words if w not in common) or name
              for words, name in zip(word_lists, names)]
    return [label if len(label) <= width else label[:width - 1] + "…" for label in labels]


def _run_label(record: dict) -> str:
    date = parse_date(record.get("started_utc"))
    commit = (record.get("commit") or "")[:7] + ("*" if record.get("dirty") else "")
    return f"{commit}\n{date:%m-%d %H:%M}" if date else commit


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_")


def plot_bench_group(fingerprint_id: str, experiment: str, records: list[dict],
                     out_dir: Path) -> list[tuple[str, str]]:
    """The plots of one (machine, experiment) block: ratios per declared comparison, each
    cost column, ops/s per command and sweep. Returns [(title, file)]."""
    keys = sorted({k for r in records for k in series_of(r)})
    stem = f"bench-{_safe(fingerprint_id)}-{_safe(experiment)}"
    plots = []
    comparisons: dict[str, list[SeriesKey]] = {}
    for k in (k for k in keys if k.kind == "ratio"):
        comparisons.setdefault(k.name.split(" ", 1)[0], []).append(k)
    for comparison, ks in sorted(comparisons.items()):
        plots.append(_series_plot(records, ks, f"{experiment}: ratio {comparison} (above 1: "
                                  f"{comparison.split('/')[0]} ahead)", "ratio",
                                  out_dir, f"{stem}-ratio-{_safe(comparison)}.png"))
    for column in cost_columns(dict.fromkeys(k.kind for k in keys)):
        ks = [k for k in keys if k.kind == column]
        if ks:
            plots.append(_series_plot(records, ks, f"{experiment}: {column}", column, out_dir,
                                      f"{stem}-{_safe(column)}.png"))
    by_group: dict[str, list[SeriesKey]] = {}
    for k in (k for k in keys if k.kind == "ops/s"):
        words = k.name.split()
        by_group.setdefault(" ".join(words[1:3]), []).append(k)  # command and sweep
    for group, ks in sorted(by_group.items())[:MAX_POINT_PLOTS]:
        plots.append(_series_plot(records, ks, f"{experiment}: ops/s, {group}", "ops/s", out_dir,
                                  f"{stem}-ops-{_safe(group)}.png"))
    return plots


# ----------------------------------------------------------------- HTML


def _e(text: object) -> str:
    return html.escape(str(text))


def _table(header: list[str], rows: list[list], row_classes: list[str] | None = None) -> str:
    out = ["<table><thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in header) + "</tr></thead><tbody>"]
    for i, row in enumerate(rows):
        cls = row_classes[i] if row_classes else ""
        attr = f' class="{cls}"' if cls else ""
        out.append(f"<tr{attr}>" + "".join(f"<td>{_e(v)}</td>" for v in row) + "</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def _images(plots: list[tuple[str, str]]) -> str:
    return "\n".join(f'<figure><img src="{_e(f)}" alt="{_e(t)}"><figcaption>{_e(t)}</figcaption></figure>'
                     for t, f in plots)


def _opcost_section(records: list[dict], plots: list[tuple[str, str]]) -> str:
    if not records:
        return "<p>No instruction counts yet: run <code>make regress-update</code> and <code>make regress</code>.</p>"
    latest = records[-1]
    rows, classes = [], []
    for c in latest["cases"]:
        change = c.get("change_pct")
        rows.append([c["engine"], c["op"], f"{c['instructions_per_op']:.1f}",
                     "-" if c.get("baseline") is None else f"{c['baseline']:.1f}",
                     "-" if change is None else f"{change:+.1f}%", c.get("status", "baseline")])
        classes.append("regression" if c.get("status") == "grew" else "")
    grew = [c for c in latest["cases"] if c.get("status") == "grew"]
    verdict = (f'<p class="verdict bad">{len(grew)} case(s) grew past the '
               f'{latest.get("tolerance_pct", 5):g}% tolerance.</p>' if grew else
               '<p class="verdict good">No case grew past the tolerance.</p>')
    where = ", ".join(_e(latest[k]) for k in ("date", "compiler", "cpu") if latest.get(k))
    title = f"Latest: {latest['source']} of commit <code>{_e(latest.get('git_commit', '')[:12])}</code>, {where}"
    return "\n".join([f"<p>{title}</p>", verdict,
                      _table(["engine", "op", "instructions/op", "baseline", "change", "status"], rows, classes),
                      _images(plots)])


def _micro_section(runs: list[dict], plots: list[tuple[str, str]]) -> str:
    if not runs:
        return "<p>No micro runs yet: run <code>make micro</code>.</p>"
    latest, previous = runs[-1], (runs[-2] if len(runs) > 1 else None)
    rows, classes = [], []
    for name, b in sorted(latest["benchmarks"].items()):
        before = previous["benchmarks"].get(name) if previous else None
        change = 100.0 * (b["ns"] - before["ns"]) / before["ns"] if before and before["ns"] else None
        rate = b["items_per_second"] or b["bytes_per_second"]
        unit = "items/s" if b["items_per_second"] else ("bytes/s" if b["bytes_per_second"] else "")
        rows.append([name, f"{b['ns']:.1f}", f"{rate:.4g} {unit}" if rate else "-",
                     "-" if change is None else f"{change:+.1f}%"])
        classes.append("regression" if change is not None and change > MICRO_SLOWDOWN_PCT else "")
    note = (f"<p>Latest run {_e(Path(latest['path']).name)}"
            + (f", compared with {_e(Path(previous['path']).name)}" if previous else "")
            + f". Rows slower by more than {MICRO_SLOWDOWN_PCT:g}% are highlighted "
              "(wall-clock: confirm on a quiet machine before acting).</p>")
    hops = micro.hop_costs(latest["benchmarks"])
    hop_table = "" if not hops else (
        "<h3>Sharded hop cost (latest run)</h3><p>The same batch on <code>sharded</code> with one shard "
        "minus on <code>concurrent</code> (inline).</p>"
        + _table(["regime", "op", "batch", "sharded ns", "concurrent ns", "hop ns", "hop ns/op", "hop CPU ns/op"],
                 [[h["regime"], h["op"], h["batch"], f"{h['sharded_ns']:.0f}", f"{h['concurrent_ns']:.0f}",
                   f"{h['hop_ns']:.0f}", f"{h['hop_ns_per_op']:.0f}", f"{h['hop_cpu_ns_per_op']:.0f}"]
                  for h in hops]))
    return "\n".join([note, hop_table, _table(["benchmark", "ns/iter", "rate", "vs previous"], rows, classes),
                       _images(plots)])



def _verdict_table(verdicts: list[SeriesVerdict]) -> str:
    return '<div class="verdicts">' + _table(VERDICT_HEADER, verdict_rows(verdicts), [
        f"verdict-{v.judgement.verdict}" for v in verdicts]) + "</div>"


def _experiment_block(fingerprint_id: str, experiment: str, records: list[dict],
                      out_dir: Path) -> str:
    newest, earlier = records[-1], records[:-1]
    verdicts = judge_record(earlier, newest)
    counts = count(verdicts)
    where = "local run, not recorded" if newest.get("local") else "recorded"
    parts = [f'<div class="experiment" data-fingerprint="{_e(fingerprint_id)}" '
             f'data-experiment="{_e(experiment)}">',
             f"<h4>Experiment <code>{_e(experiment)}</code>: {len(records)} run(s)</h4>",
             f"<p>Newest: commit <code>{_e((newest['commit'] or '?')[:12])}</code>"
             f"{' (dirty tree)' if newest.get('dirty') else ''}, {_e(newest['started_utc'])}, "
             f"{where} (<code>{_e(newest['run'])}</code>); judged against the "
             f"{len(earlier)} run(s) before it on this machine: "
             + ", ".join(f'<span class="verdict-{k}">{n} {k}</span>' for k, n in counts.items())
             + ".</p>"]
    ratios = [v for v in verdicts if v.key.kind == "ratio"]
    if ratios:
        parts += ["<p>Declared ratios (measured within the same rounds):</p>", _verdict_table(ratios)]
    flagged = [v for v in verdicts if v.key.kind != "ratio" and v.judgement.verdict in FLAGGED]
    if flagged:
        parts += [f"<p>Points and costs flagged ({len(flagged)}):</p>", _verdict_table(flagged)]
    parts.append(_images(plot_bench_group(fingerprint_id, experiment, records, out_dir)))
    others = [v for v in verdicts if v.key.kind != "ratio"]
    if others:
        parts.append(f"<details><summary>All {len(others)} point and cost series of the newest run"
                     "</summary>" + _verdict_table(others) + "</details>")
    parts.append("</div>")
    return "\n".join(parts)


def _bench_section(records: list[dict], machines: dict[str, dict[str, list[dict]]],
                   out_dir: Path) -> str:
    if not records:
        return ("<p>No bench history yet: run <code>make bench</code>, then "
                "<code>python3 -m kvlab record results/runs/&lt;run&gt;</code>.</p>")
    parts = [f"<p>{len(records)} run(s) on {len(machines)} machine(s). Each machine (fingerprint: "
             "CPU model, cores, vector level, kernel, compiler) is its own panel group; its series "
             "never mix with another machine's. Verdicts (kvlab.tracking.verdict, the rule of "
             "<code>python3 -m kvlab compare</code>): <code>regressed</code>/<code>improved</code> "
             f"needs a change beyond max({100 * MIN_EFFECT:.0f}%, the history's spread) with "
             "intervals apart; <code>unstable</code>: the history's own spread exceeds "
             f"{100 * MIN_EFFECT:.0f}%; <code>same</code>: the new interval lies within "
             f"±{100 * MIN_EFFECT:.0f}% of a tight history; otherwise <code>inconclusive</code>. "
             "Bands and error bars are 95% intervals; a red x is a figure that is not judged "
             "(client-bound, error replies, disturbed).</p>"]
    # Busiest machine first; then by id, so the page is stable.
    for fingerprint_id, experiments in sorted(machines.items(),
                                              key=lambda m: (-sum(map(len, m[1].values())), m[0])):
        runs = sum(len(g) for g in experiments.values())
        fp = next(iter(experiments.values()))[0]["fingerprint"]
        parts += [f'<section class="machine" data-fingerprint="{_e(fingerprint_id)}" '
                  f'data-runs="{runs}">',
                  f"<h3>Machine <code>{_e(fingerprint_id)}</code>: {runs} run(s)</h3>",
                  f"<p>{_e(describe_fingerprint(fp))}</p>"]
        for experiment, group in sorted(experiments.items()):
            parts.append(_experiment_block(fingerprint_id, experiment, group, out_dir))
        parts.append("</section>")
    return "\n".join(parts)


def _newest_report_section(data: DashboardData) -> str:
    newest = data.newest_run
    if newest is None:
        return "<p>No local run folder.</p>"
    # The folder relative to results/: the page is read on other machines too.
    folder = _relative(newest.folder, data.results_dir)
    if newest.report is None:
        problem = newest.problem.replace(f"{data.results_dir}/", "")
        return (f"<p>No report could be rendered for <code>{_e(folder)}</code>: "
                f"{_e(problem)}</p>")
    return (f"<p>From <code>{_e(folder)}</code>.</p>"
            '<div class="report">' + markdown_to_html(newest.report) + "</div>")


STYLE = """
.verdict-regressed, tr.verdict-regressed td { color: #b00; font-weight: bold; }
.verdict-improved, tr.verdict-improved td { color: #070; font-weight: bold; }
.verdict-unstable, tr.verdict-unstable td { color: #a60; }
.verdicts td:nth-child(2), .verdicts td:last-child { text-align: left; }
section.machine { border-top: 3px solid #888; margin-top: 1.5em; }
details { margin: 0.6em 0; }
body { font-family: sans-serif; margin: 1.5em; max-width: 1100px; color: #222; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 2px 8px; text-align: right; }
th:first-child, td:first-child { text-align: left; }
tr.regression td { background: #fdd; color: #900; font-weight: bold; }
.verdict.bad { color: #b00; font-weight: bold; }
.verdict.good { color: #070; }
figure { margin: 0.8em 0; }
figcaption { font-size: 0.8em; color: #555; }
img { max-width: 100%; }
pre, code { white-space: pre-wrap; overflow-wrap: anywhere; }
.report { overflow-x: auto; }  /* a run's full point table may be wider than the page */
"""

# Records, once the page has loaded, whether every plot decoded: the headless
# browser test reads these attributes from the dumped DOM.
LOAD_CHECK = """
window.addEventListener('load', function () {
  var imgs = Array.prototype.slice.call(document.images);
  var broken = imgs.filter(function (i) { return !(i.complete && i.naturalWidth > 0); });
  document.body.setAttribute('data-images', String(imgs.length));
  document.body.setAttribute('data-images-broken', String(broken.length));
});
"""


def _relative(path: Path, folder: Path) -> str:
    """`path` as seen from `folder` (with `..` where it lies outside it)."""
    path, folder = Path(path).absolute(), Path(folder).absolute()
    ups = 0
    while not path.is_relative_to(folder):
        folder, ups = folder.parent, ups + 1
    return str(Path(*[".."] * ups, path.relative_to(folder)))


def render(results_dir: str | Path, out_dir: str | Path) -> Path:
    """Writes out_dir/index.html and its PNGs from results_dir; returns the page's path."""
    return render_page(load_dashboard_data(results_dir), out_dir)


def render_page(data: DashboardData, out_dir: str | Path) -> Path:
    """Writes out_dir/index.html and its PNGs showing `data`; returns the page's path."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for old in out_dir.glob("*.png"):
        old.unlink()  # plots of series that no longer exist must not linger
    opcost, micro_runs, bench = data.opcost, data.micro_runs, data.bench
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>kvlab dashboard</title>
<style>{STYLE}</style><script>{LOAD_CHECK}</script></head>
<body>
<h1>kvlab dashboard</h1>
<h2 id="opcost">Instructions per operation (make regress)</h2>
{_opcost_section(opcost, plot_opcost(opcost, out_dir))}
<h2 id="micro">Microbenchmarks (make micro)</h2>
{_micro_section(micro_runs, plot_micro(micro_runs, out_dir))}
<h2 id="bench">Bench history per machine (make bench, python3 -m kvlab record)</h2>
{_bench_section(bench, data.machines, out_dir)}
<h2 id="report">Newest local run</h2>
{_newest_report_section(data)}
</body></html>
"""
    path = out_dir / "index.html"
    path.write_text(page, encoding="utf-8")
    return path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    root = Path(__file__).resolve().parents[3]  # the repository: analysis/kvlab/rendering/
    parser.add_argument("--results", type=Path, default=root / "results",
                        help="results folder to read (default: the repository's results/)")
    parser.add_argument("--out", type=Path, default=None,
                        help="output folder (default: <results>/dashboard)")


def run(args: argparse.Namespace) -> int:
    out = args.out or Path(args.results) / "dashboard"
    if not Path(args.results).is_dir():
        print(f"dashboard: no results folder at {args.results}", file=sys.stderr)
        return 2
    print(render(args.results, out))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kvlab dashboard", description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
