"""Fresh starts with their layout randomized on purpose (kvlab.running.layout): the
environment padding really differs between starts (read back from /proc/PID/environ),
a start's fingerprint, and the starts script's summary against redis-server."""

import os
import shutil
import subprocess
import sys

import pytest

from kvlab.running import layout, starts
from kvlab.schema.specs import ServerSpec
from kvlab.running.servers import ServerProcess, info_unix

from conftest import REPO


def test_every_start_gets_its_own_environment_padding(build_dir, tmp_path):
    spec = ServerSpec("sharded", "kvlab", "sharded", shards=1, hop="command", io_threads=1)
    server = ServerProcess(spec, build_dir, tmp_path, tmp_path / "server.log", None)
    pads, fingerprints = [], []
    for _ in range(3):
        server.start()
        try:
            read_back = layout.environ_pad(server.pid)
            assert read_back == server.env_pad   # what the process really got
            pads.append(read_back)
            fingerprints.append(layout.fingerprint(server.pid, info_unix(server.control, "kvlab")))
        finally:
            server.stop()
    # 3 draws of 4,096 sizes are all equal with probability 1 in 16.8 million
    assert len(set(pads)) > 1, pads
    first = fingerprints[0]
    assert first["env_pad"] == pads[0]
    assert first["thp"] in ("always", "madvise", "never")
    if open("/proc/sys/kernel/randomize_va_space").read().strip() != "0":
        assert first["aslr"] is True
    # the sharded engine reports where its hot structures landed, modulo 4096
    for name in ("layout_engine", "layout_shard0_inbox", "layout_shard0_operations"):
        assert first[name].startswith("0x") and int(first[name], 16) < 4096


def test_a_fixed_padding_and_no_aslr_are_what_the_process_gets(build_dir, tmp_path):
    spec = ServerSpec("single", "kvlab", "single")
    server = ServerProcess(spec, build_dir, tmp_path, tmp_path / "server.log", None)
    server.fixed_pad = 100
    server.command = ["setarch", os.uname().machine, "-R"] + server.command
    server.start()
    try:
        assert layout.environ_pad(server.pid) == 100
        assert layout.randomized(server.pid) is False
        assert layout.maps_bases(server.pid)["executable"].startswith("0x")
    finally:
        server.stop()


def test_the_summary_and_the_bar_against_the_control():
    redis = starts.summary([100.0, 101.0, 102.0, 103.0, 104.0, 105.0])
    assert redis["largest_gap"] == pytest.approx(1 / 102.5)
    assert redis["spread"] == pytest.approx(0.05)
    bimodal = starts.summary([70.0, 71.0, 72.0, 73.0, 110.0, 111.0])
    assert bimodal["modes"].startswith("2 modes")
    ok, text = starts.steady(bimodal, redis)
    assert not ok and "largest gap 51.0%" in text
    ok, _ = starts.steady(starts.summary([99.0, 100.0, 101.0, 102.0, 103.0, 106.0]), redis)
    assert ok


def test_the_starts_command_runs_and_prints_the_sorted_starts(build_dir, tmp_path):
    out = tmp_path / "starts.json"
    done = subprocess.run(
        [sys.executable, "-m", "kvlab", "starts", "--servers", "single", "--starts", "2",
         "--seconds", "0.2", "--warmup", "0.1", "--build", str(build_dir), "--json", str(out),
         "--seed", "1", "--retries", "0"],
        capture_output=True, text=True, cwd=REPO, timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO / "analysis")})
    assert done.returncode in (0, 1), done.stderr   # 1: not steady on a busy machine
    assert "single, ops/s: median" in done.stdout and "redis, ops/s: median" in done.stdout
    assert "single, ops per server CPU second: median" in done.stdout
    assert "against redis" in done.stdout and "per server CPU second: " in done.stdout
    import json
    record = json.loads(out.read_text())
    assert len(record["starts"]) == 4
    assert {r["server"] for r in record["starts"]} == {"single", "redis"}
    assert all(r["ops_per_s"] > 0 for r in record["starts"])
    # redis-server writes its process title over its environment: kvlab's starts only
    assert all(r["env_pad"] == r["pad"] for r in record["starts"] if r["server"] == "single")
    assert all(r["cache_line"] in (None, 32, 64, 128) for r in record["starts"])


def test_the_mmap_shift_moves_the_mmap_base_by_whole_pages_and_nothing_else(tmp_path):
    # Without randomization, a start with the mmap base moved by 5 pages has libc (sleep's
    # only library, under 2 MiB: not snapped to a 2 MiB boundary) 5 pages lower and the
    # executable where it was.
    def bases(shift):
        command = starts.with_levers(["sleep", "5"], True, shift)
        process = subprocess.Popen(command)
        try:
            sleep = os.path.realpath(shutil.which("sleep"))
            for _ in range(100):   # until setarch and prlimit have exec'd sleep
                found = layout.maps_bases(process.pid)
                if os.path.realpath(f"/proc/{process.pid}/exe") == sleep and "libc" in found:
                    return found
                subprocess.run(["sleep", "0.02"])
            raise AssertionError(f"no libc in /proc/{process.pid}/maps")
        finally:
            process.kill()
            process.wait()
    plain, moved = bases(0), bases(5)
    assert int(plain["libc"], 16) - int(moved["libc"], 16) == 5 * 4096
    assert plain["executable"] == moved["executable"]
