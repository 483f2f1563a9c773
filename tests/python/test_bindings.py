"""kvlab._harness: a short real sweep in-process against a kvlab-server."""

import tempfile
import threading
from pathlib import Path

import pytest

from conftest import kvlab_binaries_or_skip
from kvlab.experiment import ServerSpec
from kvlab.servers import ServerProcess

harness = pytest.importorskip("kvlab._harness",
                              reason="kvlab._harness not built (cmake target kvlab_harness_module)")


@pytest.fixture
def server(build_dir, tmp_path):
    kvlab_binaries_or_skip(build_dir)
    spec = ServerSpec(name="bindings", kind="kvlab", engine="concurrent", io_threads=1)
    with ServerProcess(spec, build_dir, tmp_path, tmp_path / "server.log", cpus=None) as process:
        yield process


def test_sweep_returns_points_with_their_repetitions(server):
    seen = []
    outcome = harness.run_sweep(server.target("unix"), client="shared", threads=[1, 2],
                                command="incrby", keys=1, duration=0.1, warmup=0.02,
                                repetitions=2,
                                on_repetition=lambda threads, r: seen.append((threads, r.ops)))
    assert outcome.ok, outcome.message
    assert [p.threads for p in outcome.points] == [1, 2]
    for point in outcome.points:
        assert point.complete and point.client == "shared" and point.connections == 1
        assert [r.repetition for r in point.repetitions] == [1, 2]
        for r in point.repetitions:
            assert r.ops > 0 and r.errors == 0 and r.ops_per_s > 0
            assert r.latency_count == r.ops
            assert 0 < r.p50_us <= r.p99_us <= r.max_us
            assert r.latency_us_at(0.5) == pytest.approx(r.p50_us, rel=0.02)
        # every answered INCRBY 7 counted (warm-up included), so the sum is a multiple of 7
        assert point.incrby_sum % 7 == 0 and point.incrby_sum >= 7 * sum(
            r.ops for r in point.repetitions)
    assert [t for t, _ in seen] == [1, 1, 2, 2]


def test_the_gil_is_released_while_the_harness_runs(server):
    ticks = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks.append(1)
            stop.wait(0.005)

    counter = threading.Thread(target=count)
    counter.start()
    try:
        outcome = harness.run_sweep(server.target("tcp"), threads=[1], command="ping",
                                    duration=0.3, warmup=0.0, repetitions=1)
    finally:
        stop.set()
        counter.join()
    assert outcome.ok, outcome.message
    # a Python thread kept running during the 0.3 s sweep
    assert len(ticks) > 10


def test_bad_arguments_raise_value_error_naming_what_is_allowed():
    with pytest.raises(ValueError, match="tcp://HOST:PORT or unix:///PATH"):
        harness.run_sweep("udp://localhost:1")
    with pytest.raises(ValueError, match="dedicated"):
        harness.run_sweep("tcp://127.0.0.1:1", client="borrowed")


def test_a_server_that_is_gone_fails_the_sweep_with_a_message():
    with tempfile.TemporaryDirectory() as folder:
        outcome = harness.run_sweep(f"unix://{Path(folder) / 'nobody.sock'}", threads=[1],
                                    duration=0.1, warmup=0.0, repetitions=1)
    assert not outcome.ok and outcome.message
    assert all(not p.complete for p in outcome.points)
