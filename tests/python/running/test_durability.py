"""The cost of durability (running/durability.py): a [[server]] row with `appendfsync` runs
with its append-only log in a folder of its own inside the run folder, emptied at every
start, never on tmpfs unless the row says so; each point's fsyncs and log bytes per
operation reach points.csv and the report, with known answers for kvlab-server's group
commit (always at P1 on one connection: one fsync per write) and for `no` (none)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pandas as pd
import pytest

from conftest import experiment_head, kvlab_binaries_or_fail, python_env, run_experiment
from kvlab.rendering.report import render_report
from kvlab.running import durability, syscalls
from kvlab.running.experiment import ExperimentError, parse_experiment_text
from kvlab.schema.specs import ServerSpec
from kvlab.running.server_starter import ServerStarter
from kvlab.running.servers import call_unix, info_unix
from kvlab.tracking import machine

SWEEP = """
[[sweep]]
name = "s"
command = "set"
"""


def _parse(server_lines: str) -> ServerSpec:
    text = experiment_head("log") + "[[server]]\n" + server_lines + SWEEP
    return parse_experiment_text(text, Path("log.toml")).server("logged")


@pytest.mark.parametrize("kind", ['kind = "kvlab"\nengine = "single"', 'kind = "redis"'])
@pytest.mark.parametrize("policy", ["always", "everysec", "no"])
def test_appendfsync_takes_the_three_policies_on_kvlab_and_redis_rows(kind: str,
                                                                       policy: str) -> None:
    spec = _parse(f'name = "logged"\n{kind}\nappendfsync = "{policy}"\n')
    assert spec.appendfsync == policy
    assert not spec.log_on_tmpfs
    assert f"appendfsync={policy}" in spec.describe()
    without = _parse(f'name = "logged"\n{kind}\n')
    assert without.appendfsync is None  # absent: no log, as before


def test_a_bad_policy_is_refused_naming_the_row() -> None:
    with pytest.raises(ExperimentError) as refused:
        _parse('name = "logged"\nkind = "kvlab"\nengine = "single"\nappendfsync = "sometimes"\n')
    message = str(refused.value)
    assert "server[1].appendfsync" in message and "'logged'" in message
    assert "'sometimes' is not allowed" in message and "always, everysec, no" in message


@pytest.mark.parametrize("lines, key", [
    ('kind = "command"\ncommand = "redis-server --port {port}"\nappendfsync = "always"\n',
     "appendfsync"),
    ('kind = "kvlab"\nengine = "single"\nlog_on_tmpfs = true\n', "log_on_tmpfs"),
])
def test_the_log_keys_are_refused_where_they_mean_nothing(lines: str, key: str) -> None:
    with pytest.raises(ExperimentError, match=rf"server\[1\]\.{key}"):
        _parse('name = "logged"\n' + lines)


MOUNTINFO = """\
22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
25 22 0:26 / /dev/shm rw,nosuid shared:4 - tmpfs tmpfs rw
31 22 0:30 / /mnt/my\\040disk rw shared:9 - xfs /dev/vdb1 rw
"""


def test_folder_disk_finds_the_mount_that_holds_a_folder() -> None:
    disk = machine.folder_disk(Path("/work/results/runs/x/aof/single"), MOUNTINFO)
    assert (disk["device"], disk["fstype"], disk["mount_point"]) == ("/dev/vda", "ext4", "/")
    assert machine.folder_disk(Path("/dev/shm/run/aof/a"), MOUNTINFO)["fstype"] == "tmpfs"
    spaced = machine.folder_disk(Path("/mnt/my disk/aof"), MOUNTINFO)
    assert (spaced["device"], spaced["major_minor"]) == ("/dev/vdb1", "0:30")


def test_check_log_folders_refuses_tmpfs_unless_the_row_allows_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(machine, "folder_disk", lambda folder: {
        "folder": str(folder), "fstype": "tmpfs", "device": "tmpfs", "mount_point": "/dev/shm",
        "major_minor": "0:26"})
    plain = ServerSpec(name="plain", kind="redis")
    logged = ServerSpec(name="single-always", kind="kvlab", engine="single",
                        appendfsync="always")
    with pytest.raises(durability.LogFolderError, match="'single-always'.*tmpfs"):
        durability.check_log_folders([plain, logged], Path("/dev/shm/run/aof"))
    allowed = ServerSpec(name="single-always", kind="kvlab", engine="single",
                         appendfsync="always", log_on_tmpfs=True)
    disks = durability.check_log_folders([plain, allowed], Path("/dev/shm/run/aof"))
    assert list(disks) == ["single-always"]  # a row without a log has no folder


def test_per_op_known_answers() -> None:
    before = durability.LogReading(commands=100, log_bytes=1000, fsyncs=5)
    after = durability.LogReading(commands=300, log_bytes=21000, fsyncs=105)
    assert durability.per_op(before, after) == {
        "aof_fsyncs_per_op": "0.500000", "aof_bytes_per_op": "100.00",
        "aof_fsync_counter": "info", "aof_fsyncs": "100", "aof_bytes": "20000",
        "server_commands": "200"}
    blind = durability.LogReading(commands=100, log_bytes=0, fsyncs=None)
    counted = durability.per_op(blind, durability.LogReading(300, 500, None), counted_fsyncs=20)
    assert (counted["aof_fsyncs_per_op"], counted["aof_fsync_counter"]) == ("0.100000", "perf")
    assert durability.per_op(None, after)["aof_bytes_per_op"] == ""


@pytest.fixture
def disk_dir(build_dir: Path, tmp_path: Path) -> Iterator[Path]:
    """A folder on the build folder's disk (a tmpfs /tmp would be refused), removed after."""
    folder = build_dir.resolve() / "test-durability" / tmp_path.name
    folder.mkdir(parents=True, exist_ok=True)
    yield folder
    subprocess.run(["rm", "-rf", str(folder)], check=False)


@pytest.mark.parametrize("kind", ["kvlab", "redis"])
def test_a_logged_row_starts_with_its_log_in_its_own_folder_emptied_at_every_start(
        kind: str, build_dir: Path, disk_dir: Path) -> None:
    kvlab_binaries_or_fail(build_dir)
    spec = ServerSpec(name=f"{kind}-always", kind=kind, appendfsync="always",
                      engine="single" if kind == "kvlab" else None)
    run_dir = disk_dir / "run"
    starter = ServerStarter(build_dir, run_dir / "logs", None, None,
                            durability.log_root(run_dir))
    (run_dir / "logs").mkdir(parents=True)
    folder = run_dir / "aof" / spec.name
    sizes = []
    for start in range(2):
        with starter.process(spec, disk_dir, None) as process:
            assert info_unix(process.control, "persistence")["aof_enabled"] == "1"
            assert f"--dir {folder}" in " ".join(process.command)
            # A fresh start holds nothing: the last start's log was not replayed.
            assert info_unix(process.control, "keyspace").get("db0") is None, start
            for index in range(20):
                assert call_unix(process.control, "SET", f"k{index}", "v" * 64) == "OK"
            files = [p for p in folder.rglob("*") if p.is_file() and p.stat().st_size > 0]
            assert files, f"no log written under {folder}"
            # Counted in records, not bytes: kvlab's clock annotations vary in number.
            sizes.append(sum(p.read_bytes().count(b"$3\r\nSET\r\n") for p in files))
        assert list(folder.iterdir()) == []  # emptied after the stop too
    assert sizes == [20, 20]  # the second log started empty, as the first did


def _run_points(text: str, folder: Path) -> tuple[Path, pd.DataFrame]:
    run_dir, said = run_experiment(text, folder)
    points = pd.read_csv(run_dir / "points.csv", dtype=str, keep_default_na=False)
    return run_dir, points


def _cell(points: pd.DataFrame, server: str, sweep: str, column: str) -> list[str]:
    rows = points[(points["server"] == server) & (points["sweep"] == sweep)]
    assert set(rows["status"]) == {"ok"}, rows[["status", "note"]].to_dict("records")
    return list(rows[column])


def _fsync_bounds(points: pd.DataFrame, server: str, sweep: str, writes_per_round: int) -> None:
    """Each measurement's fsyncs lie between one per round of the writes acknowledged in
    its window and one per command the server processed; the per-op figure is their
    quotient."""
    for fsyncs, commands, ops, per_op in zip(
            *(map(float, _cell(points, server, sweep, c)) for c in (
                "aof_fsyncs", "server_commands", "ops", "aof_fsyncs_per_op"))):
        assert ops > 0
        assert ops / writes_per_round <= fsyncs <= commands, (server, sweep, fsyncs, ops,
                                                               commands)
        assert per_op == pytest.approx(fsyncs / commands, abs=1e-6)


KNOWN = """
[[server]]
name = "single-always"
kind = "kvlab"
engine = "single"
appendfsync = "always"

[[server]]
name = "single-no"
kind = "kvlab"
engine = "single"
appendfsync = "no"

[[server]]
name = "plain"
kind = "kvlab"
engine = "single"

[[server]]
name = "redis-always"
kind = "redis"
appendfsync = "always"

[[sweep]]
name = "p1"
command = ["set", "lpush"]
keys = 1000
pipeline = 1
connections = 1
threads = 1
transport = "unix"
duration = 0.3
warmup = 0.05
repetitions = 2

[[sweep]]
name = "p16"
servers = ["single-always"]
command = "incrby"
keys = 1000
pipeline = 16
connections = 1
threads = 1
transport = "unix"
duration = 0.3
warmup = 0.05
repetitions = 1
"""


def test_fsyncs_per_op_known_answers_through_a_run(build_dir: Path, disk_dir: Path) -> None:
    kvlab_binaries_or_fail(build_dir)
    head = "[experiment]\nname = \"durability-known\"\ndisturbance_cores = 64\n"
    run_dir, points = _run_points(head + KNOWN, disk_dir)
    # always, P1, one connection: every write is a write round of its own, and its reply
    # waits for the fsync that covers it, so one fsync per write. At most one per command
    # the server processed (kvlab-load's few commands of its own, INFO at a window's
    # edge, write nothing), and at least one per write acknowledged inside the window
    # (the warm-up's writes had theirs too).
    _fsync_bounds(points, "single-always", "p1", writes_per_round=1)
    # P16 on one connection: a round holds up to 16 writes, and one fsync covers it.
    _fsync_bounds(points, "single-always", "p16", writes_per_round=16)
    # no: the kernel writes back; the server never fsyncs while it runs.
    assert {float(v) for v in _cell(points, "single-no", "p1", "aof_fsyncs_per_op")} == {0.0}
    # A SET of a 64-byte value is logged as its RESP command: more than the value, less
    # than three times it.
    for server in ("single-always", "single-no"):
        for value in _cell(points, server, "p1", "aof_bytes_per_op"):
            assert 64 < float(value) < 192, (server, value)
    assert set(_cell(points, "single-always", "p1", "aof_fsync_counter")) == {"info"}
    # LPUSH after SET on the same keys: the runner empties the key space first, else
    # every LPUSH on a key SET left a string in would be WRONGTYPE.
    lpush = points[points["command"] == "lpush"]
    assert len(lpush) == 8 and set(lpush["status"]) == {"ok"}
    assert {float(v) for v in lpush["errors"]} == {0.0}
    assert set(_cell(points, "plain", "p1", "aof_fsyncs_per_op")) == {""}  # keeps no log
    # redis-server counts no fsyncs in INFO: perf counts its fdatasync calls, where it can.
    meta = json.loads((run_dir / "meta.json").read_text())
    redis = _cell(points, "redis-always", "p1", "aof_fsyncs_per_op")
    if syscalls.perf_can_count():
        assert set(_cell(points, "redis-always", "p1", "aof_fsync_counter")) == {"perf"}
        _fsync_bounds(points, "redis-always", "p1", writes_per_round=1)
    else:
        assert set(redis) == {""}
        assert any("fsyncs not counted" in p for p in meta["problems"]), meta["problems"]
    # Each logged row's folder is inside the run folder, on the disk meta.json names.
    for name in ("single-always", "single-no", "redis-always"):
        folder = run_dir / "aof" / name
        assert folder.is_dir() and list(folder.iterdir()) == []
        assert meta["log_folders"][name]["fstype"] == machine.folder_disk(folder)["fstype"]
    assert "plain" not in meta["log_folders"]
    report = render_report(run_dir)
    assert "## The cost of durability" in report
    assert "| p1 | SET | P1 | single-always | always |" in report


def _tmpfs_folder() -> Path:
    """A writable folder on tmpfs (/dev/shm on Debian); fails the test where none is."""
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields, _, tail = line.partition(" - ")
        mount_point = Path(fields.split()[4])
        if tail.split()[0] == "tmpfs" and mount_point.is_dir() and \
                subprocess.run(["test", "-w", str(mount_point)]).returncode == 0:
            return mount_point
    pytest.fail("no writable tmpfs mount to test the refusal against")


def test_kvlab_run_refuses_a_log_folder_on_tmpfs_naming_the_row(build_dir: Path,
                                                                tmp_path: Path) -> None:
    kvlab_binaries_or_fail(build_dir)
    experiment = tmp_path / "tmpfs.toml"
    experiment.write_text(experiment_head("tmpfs") + KNOWN)
    out = _tmpfs_folder() / f"kvlab-test-{tmp_path.name}"
    try:
        done = subprocess.run([sys.executable, "-m", "kvlab", "run", str(experiment), "--build",
                               str(build_dir), "--out", str(out)], capture_output=True,
                              text=True, env=python_env(), timeout=120)
        assert done.returncode == 2, done.stderr
        assert "server 'single-always'" in done.stderr and "tmpfs" in done.stderr
        assert "log_on_tmpfs = true" in done.stderr
        assert not list(out.glob("*/points.csv"))  # refused before anything ran
    finally:
        subprocess.run(["rm", "-rf", str(out)], check=False)
