"""The static performance dashboard: results/dashboard/index.html and its PNGs.

Reads what kvlab's tools leave under results/ and renders one page that needs
no network to view:

- instruction counts per operation (the `make regress` gate) per commit: the
  committed history of results/baseline/opcost.json (one point per commit that
  changed it, read with `git log`) and every gate run stored in
  results/regress/*.json; cases that grew past the gate's tolerance are
  highlighted;
- the history of `make micro` runs (Google Benchmark JSON in results/micro/),
  with the latest run compared against the one before;
- the history of `make bench` runs (run folders under results/runs/ and the
  committed results/sample/) and the newest run's seed tables (its report.md,
  or its points.csv when it has no report).

Pure function of the files it reads: the same results/ always gives the same
page. Not thread-safe (matplotlib's pyplot state); run one at a time.

Usage: python3 -m kvlab dashboard [--results DIR] [--out DIR]
"""

import argparse
import csv
import datetime
import glob
import html
import json
import os
import subprocess
import sys

from . import micro

# A micro benchmark whose time grew more than this against the previous run
# is highlighted. Wall-clock numbers are noisy, so the bar is higher than the
# instruction-count gate's.
MICRO_SLOWDOWN_PCT = 10.0
# Lines per plot beyond which a plot stops being readable.
MAX_SERIES_PER_PLOT = 8
# Raw points.csv rows shown when a run has no report.
MAX_RAW_ROWS = 20


# ----------------------------------------------------------------- loading


def _read_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        print(f"dashboard: skipping {path}: {e}", file=sys.stderr)
        return None


def _parse_date(text):
    """ISO dates from our records and Google Benchmark's context, as aware datetimes."""
    if not text:
        return None
    try:
        d = datetime.datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None
    return d if d.tzinfo else d.replace(tzinfo=datetime.timezone.utc)


def _git(repo, *args):
    try:
        return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True,
                              text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None


def load_opcost_history(results_dir):
    """Every instruction-count record, oldest first, each tagged with where it came from.

    Committed baselines come from the git history of results/baseline/opcost.json
    (one record per commit that changed it); gate runs from results/regress/*.json.
    """
    records = []
    baseline = os.path.join(results_dir, "baseline", "opcost.json")
    top = _git(results_dir, "rev-parse", "--show-toplevel")
    if top and os.path.exists(baseline):
        rel = os.path.relpath(os.path.realpath(baseline), os.path.realpath(top.strip()))
        log = _git(top.strip(), "log", "--format=%H %cI", "--", rel) or ""
        for line in log.splitlines():
            commit, date = line.split(" ", 1)
            text = _git(top.strip(), "show", f"{commit}:{rel}")
            try:
                data = json.loads(text) if text else None
            except json.JSONDecodeError:
                data = None
            if data and "cases" in data:
                data["source"] = "baseline"
                data["git_commit"] = data.get("git_commit") or commit
                data["_date"] = _parse_date(data.get("date")) or _parse_date(date)
                records.append(data)
    if not records and os.path.exists(baseline):
        data = _read_json(baseline)  # not a git checkout: the current baseline only
        if data and "cases" in data:
            data["source"] = "baseline"
            data["_date"] = _parse_date(data.get("date"))
            records.append(data)
    for path in glob.glob(os.path.join(results_dir, "regress", "*.json")):
        data = _read_json(path)
        if data and "cases" in data:
            data["source"] = "regress"
            data["_date"] = _parse_date(data.get("date"))
            records.append(data)
    epoch = datetime.datetime.min.replace(tzinfo=datetime.timezone.utc)
    records.sort(key=lambda r: r["_date"] or epoch)
    return records


def load_bench_runs(results_dir):
    """Run folders (results/runs/*, results/sample/*, or results/sample itself), oldest first."""
    candidates = glob.glob(os.path.join(results_dir, "runs", "*")) + \
        glob.glob(os.path.join(results_dir, "sample", "*")) + [os.path.join(results_dir, "sample")]
    runs = []
    for folder in candidates:
        points = os.path.join(folder, "points.csv")
        report = os.path.join(folder, "report.md")
        if not os.path.isdir(folder) or not (os.path.exists(points) or os.path.exists(report)):
            continue
        meta = {}
        for name in ("metadata.json", "meta.json", "run.json"):
            if os.path.exists(os.path.join(folder, name)):
                meta = _read_json(os.path.join(folder, name)) or {}
                break
        date = _parse_date(_find_key(meta, ("started_utc", "date", "started", "timestamp")))
        if date is None:
            newest = max(os.path.getmtime(p) for p in (points, report) if os.path.exists(p))
            date = datetime.datetime.fromtimestamp(newest, datetime.timezone.utc)
        runs.append({"folder": folder, "name": os.path.relpath(folder, results_dir), "date": date,
                     "experiment": str(meta.get("experiment") or os.path.basename(folder)),
                     "commit": str(_find_key(meta, ("git_commit", "commit")) or ""),
                     "points": _read_csv(points) if os.path.exists(points) else [],
                     "report": report if os.path.exists(report) else None})
    runs.sort(key=lambda r: r["date"])
    return runs


def _find_key(data, names):
    """The first of `names` found in a (possibly nested) metadata dictionary."""
    if not isinstance(data, dict):
        return None
    for name in names:
        if name in data and not isinstance(data[name], (dict, list)):
            return data[name]
    for value in data.values():
        found = _find_key(value, names)
        if found is not None:
            return found
    return None


def _read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


# ----------------------------------------------------------------- plots


def _pyplot():
    """matplotlib's pyplot on the file-only Agg backend, imported on first use so
    that `python3 -m kvlab` stays quick for the other subcommands."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _label(date, commit):
    return f"{commit[:7]}\n{date:%m-%d %H:%M}" if commit else f"{date:%m-%d %H:%M}"


def _save(fig, out_dir, name):
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, name), dpi=90)
    _pyplot().close(fig)
    return name


def plot_opcost(records, out_dir):
    """One PNG per operation: instructions/op per engine across commits. Returns [(title, file)]."""
    ops = sorted({c["op"] for r in records for c in r["cases"]})
    plots = []
    for op in ops:
        fig, ax = _pyplot().subplots(figsize=(8, 3.4))
        engines = sorted({c["engine"] for r in records for c in r["cases"] if c["op"] == op})
        for engine in engines:
            xs, ys, grew = [], [], []
            for i, r in enumerate(records):
                for c in r["cases"]:
                    if c["engine"] == engine and c["op"] == op:
                        xs.append(i)
                        ys.append(c["instructions_per_op"])
                        if c.get("status") == "grew":
                            grew.append((i, c["instructions_per_op"]))
            line, = ax.plot(xs, ys, marker="o", label=engine)
            if grew:
                ax.scatter(*zip(*grew), s=160, facecolors="none", edgecolors="red", linewidths=2)
        ax.set_xticks(range(len(records)))
        ax.set_xticklabels([_label(r["_date"] or datetime.datetime.now(datetime.timezone.utc),
                                   r.get("git_commit", "")) + ("*" if r["source"] == "baseline" else "")
                            for r in records], fontsize=7)
        ax.set_ylabel("instructions / op")
        ax.set_title(f"{op}: instructions per operation (red ring: grew past tolerance; * = committed baseline)",
                     fontsize=9)
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=8, loc="lower left")
        ax.grid(alpha=0.3)
        plots.append((f"{op} instructions per operation", _save(fig, out_dir, f"opcost-{op.lower()}.png")))
    return plots


def plot_micro(runs, out_dir):
    """One PNG per benchmark family (the name up to the first '/'): time per iteration across runs."""
    families = {}
    for run in runs:
        for name in run["benchmarks"]:
            families.setdefault(name.split("/")[0], set()).add(name)
    plots = []
    for family in sorted(families):
        names = sorted(families[family])[:MAX_SERIES_PER_PLOT]
        fig, ax = _pyplot().subplots(figsize=(8, 3.2))
        for name in names:
            pts = [(i, r["benchmarks"][name]["ns"]) for i, r in enumerate(runs) if name in r["benchmarks"]]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=name[len(family):] or name)
        ax.set_xticks(range(len(runs)))
        ax.set_xticklabels([_label(r["date"], r["commit"]) for r in runs], fontsize=7)
        ax.set_ylabel("ns / iteration")
        shown = "" if len(families[family]) <= MAX_SERIES_PER_PLOT else \
            f" (first {MAX_SERIES_PER_PLOT} of {len(families[family])})"
        ax.set_title(f"{family}{shown}", fontsize=9)
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        ax.grid(alpha=0.3)
        safe = "".join(ch if ch.isalnum() else "_" for ch in family)
        plots.append((family, _save(fig, out_dir, f"micro-{safe}.png")))
    return plots


def plot_bench(runs, out_dir):
    """Median ops/s per experiment and server across bench runs (failed points left out)."""
    series = {}
    for i, run in enumerate(runs):
        by_server = {}
        for p in run["points"]:
            if p.get("status", "ok") == "ok" and _is_number(p.get("ops_per_s")):
                by_server.setdefault(p.get("server", ""), []).append(float(p["ops_per_s"]))
        for server, values in by_server.items():
            values.sort()
            label = f"{run['experiment']} {server}".strip()
            series.setdefault(label, []).append((i, values[len(values) // 2]))
    if not series:
        return []
    fig, ax = _pyplot().subplots(figsize=(8, 3.2))
    for label, pts in sorted(series.items())[:MAX_SERIES_PER_PLOT]:
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
    ax.set_xticks(range(len(runs)))
    ax.set_xticklabels([_label(r["date"], r["commit"]) for r in runs], fontsize=7)
    ax.set_ylabel("median ops/s of the run's points")
    ax.set_title("make bench runs: median throughput per experiment and server", fontsize=9)
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    return [("bench runs", _save(fig, out_dir, "bench-history.png"))]


def _is_number(text):
    try:
        float(text)
        return True
    except (TypeError, ValueError):
        return False


# ----------------------------------------------------------------- HTML


def _e(text):
    return html.escape(str(text))


def _table(header, rows, row_classes=None):
    out = ["<table><thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in header) + "</tr></thead><tbody>"]
    for i, row in enumerate(rows):
        cls = row_classes[i] if row_classes else ""
        attr = f' class="{cls}"' if cls else ""
        out.append(f"<tr{attr}>" + "".join(f"<td>{_e(v)}</td>" for v in row) + "</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def _images(plots):
    return "\n".join(f'<figure><img src="{_e(f)}" alt="{_e(t)}"><figcaption>{_e(t)}</figcaption></figure>'
                     for t, f in plots)


def markdown_to_html(text):
    """The subset of markdown our reports use: headings, pipe tables, lists, paragraphs, code blocks."""
    out, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            out.append("<pre>" + _e("\n".join(lines[i + 1:j])) + "</pre>")
            i = j + 1
        elif line.startswith("#"):
            level = min(len(line) - len(line.lstrip("#")) + 2, 6)  # page headings sit above
            out.append(f"<h{level}>{_e(line.lstrip('#').strip())}</h{level}>")
            i += 1
        elif line.lstrip().startswith("|"):
            block = []
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                block.append([cell.strip() for cell in lines[i].strip().strip("|").split("|")])
                i += 1
            body = [r for r in block[1:] if not all(set(c) <= set("-: ") for c in r)]
            out.append(_table(block[0], body))
        elif line.startswith(("- ", "* ")):
            items = []
            while i < len(lines) and lines[i].startswith(("- ", "* ")):
                items.append(f"<li>{_e(lines[i][2:].strip())}</li>")
                i += 1
            out.append("<ul>" + "".join(items) + "</ul>")
        elif line.strip():
            para = []
            while i < len(lines) and lines[i].strip() and not lines[i].startswith(("#", "|", "```", "- ", "* ")):
                para.append(lines[i].strip())
                i += 1
            out.append("<p>" + _e(" ".join(para)) + "</p>")
        else:
            i += 1
    return "\n".join(out)


def _opcost_section(records, plots):
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


def _micro_section(runs, plots):
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
    note = (f"<p>Latest run {_e(os.path.basename(latest['path']))}"
            + (f", compared with {_e(os.path.basename(previous['path']))}" if previous else "")
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


def _bench_section(runs, plots):
    if not runs:
        return "<p>No bench runs yet: run <code>make bench</code>.</p>"
    latest = runs[-1]
    parts = [f"<p>{len(runs)} run(s). Newest: <code>{_e(latest['name'])}</code> ({latest['date']:%Y-%m-%d %H:%M} UTC"
             + (f", commit <code>{_e(latest['commit'][:12])}</code>" if latest["commit"] else "") + ").</p>",
             _images(plots)]
    report = _report_markdown(latest)
    if report is not None:
        parts.append('<div class="report">' + markdown_to_html(report) + "</div>")
    elif latest["points"]:
        header = list(latest["points"][0].keys())
        shown = latest["points"][:MAX_RAW_ROWS]
        parts.append(f"<p>No report could be rendered; the first {len(shown)} of "
                     f"{len(latest['points'])} rows of points.csv:</p>")
        parts.append(_table(header, [[p.get(h, "") for h in header] for p in shown]))
    return "\n".join(parts)


def _report_markdown(run):
    """The run's report.md, or the analysis package's rendering of its points (a run
    still in progress has none written yet); None when neither works."""
    if run["report"]:
        with open(run["report"], encoding="utf-8") as f:
            return f.read()
    try:
        from .report import render_report
        return render_report(run["folder"])
    except Exception as e:  # a partial or foreign run folder: fall back to raw rows
        print(f"dashboard: cannot render a report for {run['folder']}: {e}", file=sys.stderr)
        return None


STYLE = """
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


def render(results_dir, out_dir):
    """Writes out_dir/index.html and its PNGs from results_dir; returns the page's path."""
    os.makedirs(out_dir, exist_ok=True)
    for old in glob.glob(os.path.join(out_dir, "*.png")):
        os.remove(old)  # plots of series that no longer exist must not linger
    opcost = load_opcost_history(results_dir)
    micro_runs = micro.load_runs(results_dir)
    bench = load_bench_runs(results_dir)
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>kvlab dashboard</title>
<style>{STYLE}</style><script>{LOAD_CHECK}</script></head>
<body>
<h1>kvlab dashboard</h1>
<p>Rendered from <code>{_e(os.path.abspath(results_dir))}</code>.</p>
<h2 id="opcost">Instructions per operation (make regress)</h2>
{_opcost_section(opcost, plot_opcost(opcost, out_dir))}
<h2 id="micro">Microbenchmarks (make micro)</h2>
{_micro_section(micro_runs, plot_micro(micro_runs, out_dir))}
<h2 id="bench">Bench runs (make bench)</h2>
{_bench_section(bench, plot_bench(bench, out_dir))}
</body></html>
"""
    path = os.path.join(out_dir, "index.html")
    with open(path, "w", encoding="utf-8") as f:
        f.write(page)
    return path


def add_arguments(parser):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser.add_argument("--results", default=os.path.join(root, "results"),
                        help="results folder to read (default: the repository's results/)")
    parser.add_argument("--out", default=None, help="output folder (default: <results>/dashboard)")


def run(args):
    out = args.out or os.path.join(args.results, "dashboard")
    if not os.path.isdir(args.results):
        print(f"dashboard: no results folder at {args.results}", file=sys.stderr)
        return 2
    print(render(args.results, out))
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="kvlab dashboard", description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
