"""The callgrind regression gate (python3 -m kvlab regress) on the real kvlab-opcost.

Counts two engines and the network shell over small regions (a few seconds under valgrind), then
checks that the counts repeat exactly for an inline engine, that a baseline
the run exceeds fails the gate naming the case, and that one it undercuts
passes. Needs this build's kvlab-opcost (KVLAB_BUILD_DIR, from CTest).
"""

import json
import os
import shutil
import subprocess

import pytest

from conftest import BUILD_DIR, python_env
from kvlab.tracking.regress import DEFAULT_TOLERANCE_PCT

ENGINES = "single,sharded,shell"


def _regress(tmp_path, *args, engines=ENGINES):
    return subprocess.run(["/usr/bin/python3", "-m", "kvlab", "regress", "--build", str(BUILD_DIR),
                           "--ops", "200", "--engines", engines,
                           "--history-dir", str(tmp_path / "history"), *args],
                          capture_output=True, text=True, timeout=240, env=python_env())


def _sanitizer(build_dir):
    """The build's KVLAB_SANITIZE: valgrind cannot run AddressSanitizer or TSan binaries."""
    try:
        for line in (build_dir / "CMakeCache.txt").read_text().splitlines():
            if line.startswith("KVLAB_SANITIZE:"):
                return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return ""


@pytest.fixture(scope="module")
def counted(tmp_path_factory):
    """Two baselines written by two separate runs."""
    if _sanitizer(BUILD_DIR):
        pytest.skip(f"{BUILD_DIR} is a {_sanitizer(BUILD_DIR)}-sanitizer build; the gate counts the normal build")
    if not os.access(BUILD_DIR / "kvlab-opcost", os.X_OK):
        pytest.fail(f"{BUILD_DIR}/kvlab-opcost is not built")
    if shutil.which("valgrind") is None:
        pytest.fail("valgrind not found: run scripts/install-deps")
    tmp = tmp_path_factory.mktemp("regress")
    runs = []
    for name in ("first.json", "second.json"):
        done = _regress(tmp, "--update", "--baseline", str(tmp / name))
        assert done.returncode == 0, done.stdout + done.stderr
        runs.append(json.loads((tmp / name).read_text()))
    return tmp, runs


def test_the_default_engines_are_the_servers_own_list():
    # kvlab-server --kinds is the one list of engines: an engine added there (owner was
    # missing from the gate's pinned list) is counted without editing the gate.
    from kvlab.tracking.regress import default_engines
    table = json.loads(subprocess.run([str(BUILD_DIR / "kvlab-server"), "--kinds"],
                                      capture_output=True, text=True, check=True).stdout)
    listed = [engine["name"] for engine in table["engines"]]
    assert "owner" in listed
    assert default_engines(BUILD_DIR).split(",") == listed + ["shell"]
    # and it is what a run without --engines counts (the parser leaves it unset)
    import argparse
    from kvlab.tracking.regress import add_arguments
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert parser.parse_args([]).engines is None


def _per_op(run):
    return {(c["engine"], c["op"]): c["instructions_per_op"] for c in run["cases"]}


def test_every_engine_and_op_is_counted(counted):
    _, (first, _) = counted
    counts = _per_op(first)
    assert set(counts) == {(e, o) for e in ("single", "sharded", "shell")
                           for o in ("GET", "SET", "INCR")} | {
        (e, o) for e in ("single", "sharded") for o in ("MSET8", "EXEC4")}
    # An 8-key MSET does at least the work of a SET, and a 6-command transaction
    # that of an INCR.
    for engine in ("single", "sharded"):
        assert counts[(engine, "MSET8")] > counts[(engine, "SET")]
        assert counts[(engine, "EXEC4")] > counts[(engine, "INCR")]
    # The sharded path does everything the single one does, plus the hop.
    for op in ("GET", "SET", "INCR"):
        assert counts[("sharded", op)] > counts[("single", op)] > 0
        # The shell's count is the connection's own work, the Session left out: well
        # under what parsing and executing a command cost, and not nothing.
        assert 0 < counts[("shell", op)] < counts[("single", op)] / 2


def test_counts_repeat_run_to_run(counted):
    _, (first, second) = counted
    a, b = _per_op(first), _per_op(second)
    for op in ("GET", "SET", "INCR"):
        # One client, one request at a time: the same path every request. Not always to
        # the instruction: a fresh clone's make test (both cores loaded) once counted
        # SET at 381.0 and then 381.5 per op (500 instructions over 1,000 requests, a
        # one-off in one run). Within one instruction per op is 20 times inside the
        # gate's tolerance and still fails any per-request difference.
        assert abs(a[("shell", op)] - b[("shell", op)]) <= 1.0, (op, a, b)
    for op in ("GET", "SET", "INCR", "MSET8", "EXEC4"):
        assert a[("single", op)] == b[("single", op)]
        # The hop's thread handoff (and a multi-shard group's barrier) varies
        # with scheduling: an instruction or two per op on an idle machine, up
        # to 1.6% (45 of 2860) measured while make test loaded both cores. What
        # the gate needs is that this noise stays well inside its tolerance,
        # so a run-to-run difference may use at most half of it.
        half_tolerance = DEFAULT_TOLERANCE_PCT / 2 / 100
        assert abs(a[("sharded", op)] - b[("sharded", op)]) / a[("sharded", op)] < half_tolerance


def _edited_baseline(tmp, run, factor):
    """The run's counts with single/GET scaled by `factor`, as a baseline file."""
    edited = json.loads(json.dumps(run))
    for case in edited["cases"]:
        if (case["engine"], case["op"]) == ("single", "GET"):
            case["instructions_per_op"] = round(case["instructions_per_op"] * factor, 1)
    path = tmp / f"baseline-{factor}.json"
    path.write_text(json.dumps(edited))
    return path


# The gate against an edited baseline counts the edited engine only (a third of the
# valgrind time of all three); the baseline's other cases are then notes, not failures.
def test_growth_past_tolerance_fails_and_names_the_case(counted):
    tmp, (first, _) = counted
    done = _regress(tmp, "--baseline", str(_edited_baseline(tmp, first, 0.8)), engines="single")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAILED: 1 case(s) grew" in done.stdout
    assert "single/GET" in done.stdout
    history = sorted((tmp / "history").glob("*.json"))
    record = json.loads(history[-1].read_text())
    assert not record["passed"]
    assert [c["op"] for c in record["cases"] if c["status"] == "grew"] == ["GET"]


def test_shrinking_passes(counted):
    tmp, (first, _) = counted
    done = _regress(tmp, "--baseline", str(_edited_baseline(tmp, first, 1.25)), engines="single")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "shrank" in done.stdout and "regress: OK" in done.stdout
    assert "baseline case sharded/GET was not measured" in done.stderr
