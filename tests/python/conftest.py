"""Shared fixtures for kvlab's Python tests.

CTest passes KVLAB_BUILD_DIR (the folder with kvlab-server, kvlab-load and
python/kvlab/_harness*.so); run by hand, the tests fall back to <repo>/build.
"""

import csv
import json
import math
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
BUILD_DIR = Path(os.environ.get("KVLAB_BUILD_DIR", REPO / "build"))
FIXTURES = Path(__file__).resolve().parent / "fixtures"

for path in (str(BUILD_DIR / "python"), str(REPO / "analysis")):
    if path not in sys.path:
        sys.path.insert(0, path)


class SteadyHostProbe:
    """A host probe whose host never changes speed (no fit can be made on it)."""

    fault_us = math.nan

    def __init__(self, cpus=None):
        self.cpus = cpus

    def speed(self) -> float:
        return 1.0


@pytest.fixture(autouse=True)
def steady_host_probe(monkeypatch):
    """Alternation phases run in a test probe a steady host: a real probe's timings
    beside a faked kvlab-load's random ratios would let the host fit stop a ratio by
    chance. The probe and the fit have their own tests (running/test_host_probe.py);
    `kvlab run` in a subprocess uses the real probe."""
    from kvlab.running import alternating
    monkeypatch.setattr(alternating, "HostProbe", SteadyHostProbe)


@pytest.fixture
def repo() -> Path:
    return REPO


@pytest.fixture
def build_dir() -> Path:
    return BUILD_DIR


@pytest.fixture
def small_run(tmp_path) -> Path:
    """A copy of the fixed small run (points.csv + meta.json), safe to write into."""
    target = tmp_path / "small-run"
    shutil.copytree(FIXTURES / "small-run", target)
    return target


# The [[server]] tables tests measure most, by name.
SERVER_TABLES = {
    "redis": {"name": "redis", "kind": "redis"},
    "redis-b": {"name": "redis-b", "kind": "redis"},
    "single": {"name": "single", "kind": "kvlab", "engine": "single"},
    "concurrent": {"name": "concurrent", "kind": "kvlab", "engine": "concurrent"},
}


def experiment_head(name: str, servers: tuple[str, ...] = ("redis",), **settings) -> str:
    """The head of an experiment file: its [experiment] table (disturbance_cores = 64 unless
    a test says otherwise: tests measure on a busy machine and never re-run for it, plus
    `settings`) and the [[server]] tables of SERVER_TABLES named; the sweeps follow."""
    settings = {"disturbance_cores": 64, **settings}
    lines = ["[experiment]", f"name = {json.dumps(name)}"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in settings.items()]
    for server in servers:
        lines.append("[[server]]")
        lines += [f"{key} = {json.dumps(value)}" for key, value in SERVER_TABLES[server].items()]
    return "\n".join(lines) + "\n"


def python_env() -> dict:
    """Environment for `python3 -m kvlab` subprocesses."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "analysis"), str(BUILD_DIR / "python")])
    return env


def run_experiment(text: str, folder: Path, build: Path = BUILD_DIR) -> tuple[Path, str]:
    """Runs an experiment given as TOML text on this machine, as `kvlab run` would, into
    folder/runs; returns the run folder and what the runner said."""
    import io
    from kvlab.running.cpus import this_machine
    from kvlab.running.experiment import parse_experiment_text
    from kvlab.running.plan import resolve
    from kvlab.running.runner import Runner
    experiment = parse_experiment_text(text, folder / "experiment.toml")
    stream = io.StringIO()
    run_dir = Runner(resolve(experiment, this_machine()), REPO, build, folder / "runs",
                     stream).run()
    return run_dir, stream.getvalue()


def kvlab_binaries_or_fail(build: Path) -> None:
    """Fails (never skips: CTest counts a skipped pytest as passed) when a binary the test
    needs is not built."""
    missing = [name for name in ("kvlab-server", "kvlab-load") if not (build / name).exists()]
    if missing:
        pytest.fail(f"{', '.join(missing)} not built in {build} (build them: make build)")


@pytest.fixture
def load_only_build(tmp_path) -> Path:
    """A build folder holding kvlab-load alone (it declares points.csv's columns): a
    runner there finds no kvlab-server."""
    kvlab_binaries_or_fail(BUILD_DIR)
    folder = tmp_path / "load-only-build"
    folder.mkdir()
    (folder / "kvlab-load").symlink_to(BUILD_DIR / "kvlab-load")
    return folder


def check_coverage(lows, highs, centres, truth, band=(0.93, 0.975), width=1.4):
    """Coverage of `truth` by intervals [low, high] around `centres` (logs), two-sided: at
    1,000 trials chance moves a 95% coverage by about 0.7%, so the band is about 3 standard
    deviations either side, and an interval too wide to miss (an infinite one) fails the
    upper bound. The mean half-width must also be at most `width` times what the centres'
    own spread across trials calls for (1.96 of their standard deviation): a method may be
    conservative, not uninformative."""
    lows, highs, centres = (np.log(np.asarray(v, dtype=float)) for v in (lows, highs, centres))
    covered = float(np.mean((lows <= math.log(truth)) & (math.log(truth) <= highs)))
    assert band[0] <= covered <= band[1], f"covered {covered:.3f}"
    half = float(np.mean((highs - lows) / 2))
    needed = 1.96 * float(np.std(centres, ddof=1))
    assert half <= width * needed, f"mean half-width {half:.4f}, the centres call for {needed:.4f}"
    return covered, half / needed


# Student's t quantiles by degrees of freedom (tables, e.g. NIST/SEMATECH 1.3.6.7.2).
T_975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
         9: 2.262, 10: 2.228, 11: 2.201}
T_9995 = {1: 636.619, 2: 31.599, 3: 12.924, 4: 8.610, 5: 6.869, 6: 5.959, 7: 5.408,
          8: 5.041, 9: 4.781, 10: 4.587, 11: 4.437}


def check_a_over_a(ratio: float, low: float, high: float, starts: int, said: str,
                   max_half_width: float) -> None:
    """An A/A ratio's 95% interval (Student's t over `starts` start means, the two-level
    interval) judged at 99.9%, as the A/A calibration is on a shared machine: t(0.9995, df)
    / t(0.975, df) times as wide, for its own degrees of freedom (a normal factor, 3.29 /
    1.96, is far too narrow at 2-5 of them). It must cover 1.0, and say something: an
    interval too wide to miss would pass that, so its 95% half-width (relative, the larger
    side) must be at most `max_half_width`."""
    df = starts - 1
    centre = math.log(ratio)
    widened = (math.log(high) - centre) * T_9995[df] / T_975[df]
    assert abs(centre) <= widened, said
    half_width = max(high / ratio - 1, 1 - low / ratio)
    assert half_width <= max_half_width, f"{said}: ±{half_width:.1%} > ±{max_half_width:.0%}"


def read_latency_pair(run_dir: Path) -> dict:
    """The one row of a run's latency_pairs.csv (one p99 comparison at 2000 ops/s), checked
    for what every such pair must hold: at 2000 ops/s for 0.4 s of each side's slices a
    round, ramps dropped, about 700 requests a round (at least 500), and every side's p50
    and p99 a real latency."""
    with (run_dir / "latency_pairs.csv").open() as handle:
        (pair,) = list(csv.DictReader(handle))
    assert int(pair["a_requests"]) >= 500 * int(pair["rounds"]) > 0, pair
    for column in ("a_p50_us", "b_p50_us", "a_p99_us", "b_p99_us"):
        assert 1 < float(pair[column]) < 1e6, pair
    return pair
