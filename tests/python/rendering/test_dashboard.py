"""The dashboard renders from fixture results and loads in a headless browser.

Builds a results/ folder in a temp dir (instruction-count baseline and gate
runs, two micro runs, a bench run folder), renders the dashboard, then loads
the page in headless Chromium: the dumped DOM must show every image decoded,
and the screenshot must be a real, non-blank picture. Never reads real results.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "analysis"))
from kvlab.rendering import dashboard  # noqa: E402

from PIL import Image  # noqa: E402

from kvlab.tracking.history import record_from_run, write_record  # noqa: E402
from kvlab.tracking.machine import fingerprint  # noqa: E402
from synthetic_runs import MACHINE_A, MACHINE_B, ratio_row, repetitions, write_run  # noqa: E402


def _cases(counts, statuses=None):
    return [{"engine": e, "op": o, "instructions_per_op": v,
             **({"status": statuses[(e, o)], "baseline": counts[(e, o)] / 1.2,
                 "change_pct": 20.0} if statuses and (e, o) in statuses else {})}
            for (e, o), v in counts.items()]


def _write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        if isinstance(data, str):
            f.write(data)
        else:
            json.dump(data, f)


def _micro_run(date, scale):
    return {"context": {"date": date, "git_commit": "abc1234def"},
            "benchmarks": [
                {"name": "BM_EngineGet/concurrent/uniform/hit/threads:1", "run_type": "iteration",
                 "real_time": 80.0 * scale, "cpu_time": 80.0 * scale, "time_unit": "ns",
                 "items_per_second": 1.2e7 / scale},
                {"name": "BM_Hop/sharded/get/ops:16/real_time", "run_type": "iteration",
                 "real_time": 2.1 * scale, "cpu_time": 1.92 * scale, "time_unit": "us",
                 "items_per_second": 7.6e6 / scale},
                {"name": "BM_Hop/concurrent/get/ops:16/real_time", "run_type": "iteration",
                 "real_time": 1.6 * scale, "cpu_time": 1.6 * scale, "time_unit": "us",
                 "items_per_second": 1.0e7 / scale},
                {"name": "BM_Hop/sharded/get/ops:16/real_time_mean", "run_type": "aggregate",
                 "real_time": 999.0, "time_unit": "us"},
            ]}


@pytest.fixture
def results(tmp_path):
    base = {("single", "GET"): 1000.0, ("single", "SET"): 1300.0,
            ("sharded", "GET"): 2400.0, ("sharded", "SET"): 2700.0}
    _write(str(tmp_path / "baseline" / "opcost.json"),
           {"schema": "kvlab-opcost/1", "git_commit": "1111111aaaa", "date": "2026-11-01T10:00:00+00:00",
            "cases": _cases(base)})
    grown = dict(base)
    grown[("sharded", "GET")] = 2880.0
    _write(str(tmp_path / "regress" / "20261102T100000Z-2222222bbbb.json"),
           {"schema": "kvlab-opcost/1", "git_commit": "2222222bbbb", "date": "2026-11-02T10:00:00+00:00",
            "tolerance_pct": 5.0, "cases": _cases(grown, {("sharded", "GET"): "grew"})})
    _write(str(tmp_path / "micro" / "20261101T100000Z.json"), _micro_run("2026-11-01T10:00:00+00:00", 1.0))
    _write(str(tmp_path / "micro" / "20261102T100000Z.json"), _micro_run("2026-11-02T10:00:00+00:00", 1.5))
    run = tmp_path / "runs" / "20261102T100000Z-ember"
    _write(str(run / "meta.json"), {"experiment": "ember-pr50", "started_utc": "2026-11-02T10:00:00+00:00",
                                    "machine": {"git": {"commit": "3333333cccc", "dirty": False}}})
    _write(str(run / "points.csv"),
           "sweep,server,command,threads,repetition,ops_per_s,status,note\n"
           "get,sharded,get,8,1,990000,ok,\nget,concurrent,get,8,1,1240000,ok,\n"
           "get,concurrent,get,8,2,,failed,server exited\n")
    _write(str(run / "report.md"),
           "# ember-pr50\n\nSide by side with the seed.\n\n- CPU: fixture\n- cores: 2\n\n"
           "| engine | op | ops/s | seed ops/s |\n|---|---|---:|---:|\n"
           "| sharded | GET | 990000 | 1115000 |\n| concurrent | GET | 1240000 | 1241000 |\n")
    return tmp_path


def test_page_shows_every_section_and_highlights_the_regression(results):
    page = dashboard.render(str(results), str(results / "dashboard"))
    text = open(page, encoding="utf-8").read()
    for section in ('id="opcost"', 'id="micro"', 'id="bench"'):
        assert section in text
    # The page says nothing of the machine it was rendered on: no absolute folder.
    assert str(results) not in text
    # The gate run where sharded/GET grew is the latest record: one highlighted row.
    assert text.count('<tr class="regression"><td>sharded</td><td>GET</td>') == 1
    assert "1 case(s) grew past the 5% tolerance" in text
    # The micro run 50% slower than the one before is highlighted; aggregates are not rows.
    assert '<tr class="regression"><td>BM_Hop/sharded/get/ops:16/real_time</td><td>3150.0</td>' in text
    assert "_mean" not in text
    # Hop cost of the latest run: (3150 - 2400) ns per batch of 16.
    # Wall: (3150 - 2400) ns per batch of 16; CPU: (2880 - 2400) ns.
    assert "<td>GET</td><td>16</td><td>3150</td><td>2400</td><td>750</td><td>47</td><td>30</td>" in text
    # The bench run's commit comes from its meta.json.
    assert "3333333cccc" in text
    # The newest run's seed table is rendered from its report.md, lists included.
    tight = re.sub(r">\s+<", "><", text)
    assert "<ul><li>CPU: fixture</li><li>cores: 2</li></ul>" in tight
    assert re.search(r"<td>concurrent</td><td>GET</td><td[^>]*>1240000</td><td[^>]*>1241000</td>",
                     tight)


def test_every_image_exists_and_decodes(results):
    out = results / "dashboard"
    page = dashboard.render(str(results), str(out))
    sources = [s.split('"')[0] for s in open(page, encoding="utf-8").read().split('<img src="')[1:]]
    # GET and SET instruction plots, two micro families, the bench history.
    assert len(sources) == 5
    for src in sources:
        with Image.open(out / src) as img:
            img.load()
            assert img.width > 100 and img.height > 100


def test_empty_results_render_a_page_that_says_what_to_run(tmp_path):
    page = dashboard.render(str(tmp_path), str(tmp_path / "dashboard"))
    text = open(page, encoding="utf-8").read()
    assert "make regress-update" in text and "make micro" in text and "make bench" in text
    assert "<img" not in text


def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.fail("chromium not found: run scripts/install-deps")


def _headless(args, profile):
    cmd = [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--disable-dev-shm-usage", f"--user-data-dir={profile}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def test_page_loads_in_headless_chromium(history):
    page = dashboard.render(str(history), str(history / "dashboard"))
    images = open(page, encoding="utf-8").read().count("<img ")
    assert images >= 5 + 6   # the fixture's five, and the two machines' ratio and ops/s plots
    url = "file://" + os.path.abspath(page)
    with tempfile.TemporaryDirectory(prefix="kvlab-chromium-") as profile:
        dom = _headless(["--virtual-time-budget=5000", "--dump-dom", url], profile)
        assert dom.returncode == 0, dom.stderr
        assert f'data-images="{images}"' in dom.stdout, dom.stdout[:2000]
        assert 'data-images-broken="0"' in dom.stdout
        shot = os.path.join(profile, "dashboard.png")
        done = _headless(["--window-size=1200,2400", f"--screenshot={shot}", url], profile)
        assert done.returncode == 0, done.stderr
        with Image.open(shot) as img:
            img = img.convert("RGB")
            assert img.size == (1200, 2400)
            # A blank page has one colour; ours has text, tables and plots.
            assert len(img.getcolors(maxcolors=1 << 20) or []) > 50
        if os.environ.get("KVLAB_KEEP_SCREENSHOT"):
            shutil.copy(shot, os.environ["KVLAB_KEEP_SCREENSHOT"])


def test_micro_runs_with_repetitions_are_represented_by_their_median(tmp_path):
    from kvlab.tracking import micro
    name = "BM_Hop/sharded/get/ops:1/real_time"
    runs = [{"name": name, "run_name": name, "run_type": "iteration", "repetitions": 3,
             "repetition_index": i, "real_time": t, "time_unit": "ns"} for i, t in enumerate((900.0, 500.0, 600.0))]
    runs += [{"name": f"{name}_{agg}", "run_name": name, "run_type": "aggregate", "repetitions": 3,
              "aggregate_name": agg, "real_time": t, "time_unit": "ns"}
             for agg, t in (("mean", 666.7), ("median", 600.0), ("stddev", 208.2))]
    path = tmp_path / "run.json"
    _write(str(path), {"context": {"date": "2026-11-02T10:00:00+00:00"}, "benchmarks": runs})
    assert micro.read_run(str(path))["benchmarks"] == {
        name: {"ns": 600.0, "cpu_ns": 0.0, "items_per_second": None, "bytes_per_second": None}}


# ----------------------------------------------------------------- bench history

QUIET = (100000.0, 100400.0, 99700.0, 100200.0)
NOISY = (100000.0, 85000.0, 115000.0, 92000.0)


def _record(results, tmp, name, values, machine=MACHINE_A, hour=10, ratio=1.10, spread=0.005):
    """Records a synthetic run whose point's repetitions and declared ratio are centred
    on the given values, with a relative spread of ±spread."""
    run = write_run(tmp / name, repetitions([v * (1 - spread) for v in values[:1]] + list(values)
                                            + [v * (1 + spread) for v in values[:1]]),
                    ratios=[ratio_row(ratio=ratio, half_width=spread * 2)], machine=machine,
                    commit=f"{hour:02d}" * 20, started=f"2026-11-30T{hour:02d}:00:00+00:00")
    write_record(record_from_run(run), results / "history")


def _history(results, tmp, machine_a_values, newest, spread=0.005):
    for i, value in enumerate(machine_a_values):
        _record(results, tmp, f"a{i}", [value], hour=10 + i, spread=spread)
    _record(results, tmp, "a-new", [newest], hour=20, ratio=1.10 * newest / 1e5, spread=0.005)
    # Another machine measured the same point at half the speed, and later than all of A.
    _record(results, tmp, "b0", [newest / 2], machine=MACHINE_B, hour=21, ratio=0.5)


@pytest.fixture
def history(results, tmp_path):
    _history(results, tmp_path / "made", QUIET, 90000.0)
    return results


def _machine_sections(page):
    text = open(page, encoding="utf-8").read()
    sections = {}
    for chunk in text.split('<section class="machine" data-fingerprint="')[1:]:
        sections[chunk.split('"', 1)[0]] = chunk.split("</section>", 1)[0]
    return sections


def test_each_machine_is_its_own_panel_group(history):
    page = dashboard.render(str(history), str(history / "dashboard"))
    # Viewable with no network: nothing is fetched from elsewhere.
    assert "http://" not in open(page).read() and "https://" not in open(page).read()
    sections = _machine_sections(page)
    a, b = fingerprint(MACHINE_A)["id"], fingerprint(MACHINE_B)["id"]
    unknown = fingerprint({})["id"]            # the fixture's run folder knows no machine
    assert set(sections) == {a, b, unknown}
    assert 'data-runs="5"' in sections[a] and ": 5 run(s)</h3>" in sections[a]
    assert 'data-runs="1"' in sections[b]
    # B's one run at half of A's speed is judged against nothing: with A's history it
    # would have been "regressed".
    assert '<tr class="verdict-regressed">' not in sections[b]
    assert "no usable earlier run" in sections[b]
    # Every plot of a group is drawn from that machine's records only.
    for fingerprint_id, section in sections.items():
        for src in section.split('<img src="')[1:]:
            assert src.startswith(f"bench-{fingerprint_id.replace('-', '_')}-"), src


def test_a_ten_percent_drop_against_a_quiet_history_is_regressed(history):
    section = _machine_sections(dashboard.render(str(history), str(history / "dashboard")))[
        fingerprint(MACHINE_A)["id"]]
    shown = section.split("<details>")[0]   # the tables above the full list
    assert shown.count('<tr class="verdict-regressed"><td>ratio</td>') == 1
    assert shown.count('<tr class="verdict-regressed"><td>ops/s</td>') == 1
    assert "-10.0%" in section


def test_the_same_drop_against_a_noisy_history_is_not_a_regression(results, tmp_path):
    _history(results, tmp_path / "made", NOISY, 90000.0, spread=0.10)
    section = _machine_sections(dashboard.render(str(results), str(results / "dashboard")))[
        fingerprint(MACHINE_A)["id"]]
    assert '<tr class="verdict-regressed">' not in section
    assert '<tr class="verdict-unstable"><td>ops/s</td>' in section


def test_identical_runs_are_not_flagged(results, tmp_path):
    _history(results, tmp_path / "made", (100000.0,) * 4, 100000.0)
    section = _machine_sections(dashboard.render(str(results), str(results / "dashboard")))[
        fingerprint(MACHINE_A)["id"]]
    for flag in ("regressed", "improved", "unstable"):
        assert f'<tr class="verdict-{flag}">' not in section
    assert '<tr class="verdict-same"><td>ratio</td>' in section


def test_a_run_without_a_report_is_named_from_the_results_folder(tmp_path):
    # The newest run has no report.md and a points.csv no report can be drawn from: the
    # page says which folder could not be rendered and why, relative to results/, never
    # as an absolute path.
    run = tmp_path / "runs" / "20261103T100000Z-broken"
    _write(str(run / "meta.json"), {"experiment": "broken",
                                    "started_utc": "2026-11-03T10:00:00+00:00"})
    _write(str(run / "points.csv"), "nonsense\n1\n")
    page = dashboard.render(str(tmp_path), str(tmp_path / "dashboard"))
    text = open(page, encoding="utf-8").read()
    assert "No report could be rendered for <code>runs/20261103T100000Z-broken</code>" in text
    assert str(tmp_path) not in text


def test_a_long_run_axis_names_at_most_ten_runs_first_and_last_among_them():
    labels = [f"run{i}" for i in range(23)]
    shown = dashboard.thinned(labels)
    assert len(shown) == 23                       # every run keeps its tick
    named = [label for label in shown if label]
    assert len(named) <= dashboard.MAX_RUN_LABELS + 1
    assert shown[0] == "run0" and shown[-1] == "run22"
    # Named runs are at least a step apart, the last too: no two labels collide.
    positions = [i for i, label in enumerate(shown) if label]
    assert min(b - a for a, b in zip(positions, positions[1:])) >= 3
    assert dashboard.thinned(labels[:6]) == labels[:6]
