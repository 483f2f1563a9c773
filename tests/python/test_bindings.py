"""kvlab._harness as the notebook uses it (kvlab.running.inprocess): real sweeps in-process against
a kvlab-server and a redis-server this test starts, checked against what the server holds."""

import socket
import tempfile
import threading
from pathlib import Path

import pytest

from kvlab.running import inprocess

# Short in-process sweeps whose windows must serve operations: every test here
# is timed (pytest.ini).
pytestmark = pytest.mark.timed

# Not built is a failure, not a skip: the module is the notebook's API.
harness = inprocess.harness()


@pytest.fixture
def server():
    with inprocess.local_server("concurrent", io_threads=1) as process:
        yield process


def _get(unix_socket: str, key: str) -> bytes | None:
    """GET over a raw RESP connection: the value's bytes, None for a missing key."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(5)
        connection.connect(unix_socket)
        connection.sendall(f"*2\r\n$3\r\nGET\r\n${len(key)}\r\n{key}\r\n".encode())
        reply = b""
        while chunk := connection.recv(4096):
            reply += chunk
            header, complete, body = reply.partition(b"\r\n")
            assert header.startswith(b"$"), reply
            if complete and (header == b"$-1" or len(body) >= int(header[1:]) + 2):
                return None if header == b"$-1" else body[:int(header[1:])]
    raise AssertionError(f"connection closed after {reply!r}")


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
            assert r.ops_per_s == pytest.approx(r.ops / r.seconds, rel=1e-9)
            assert r.latency_count == r.ops
            assert 0 < r.p50_us <= r.p99_us <= r.max_us
            assert r.latency_us_at(0.5) == pytest.approx(r.p50_us, rel=0.02)
    assert [t for t, _ in seen] == [1, 1, 2, 2]


@pytest.mark.parametrize("redis", [False, True], ids=["kvlab-server", "redis-server"])
@pytest.mark.parametrize("client", ["pooled", "shared", "dedicated"])
def test_every_acknowledged_incrby_is_in_the_servers_counter(redis, client):
    """Known answer: the server's counter is exactly 7 × the INCRBYs the harness counted
    as answered (warm-up included), over two sweeps on one server."""
    with inprocess.local_server("concurrent", redis=redis, io_threads=1) as process:
        total = 0
        for threads in ([1, 2], [3]):
            outcome = harness.run_sweep(process.target("unix"), client=client, threads=threads,
                                        command="incrby", keys=1, duration=0.1, warmup=0.02,
                                        repetitions=1)
            assert outcome.ok, outcome.message
            for point in outcome.points:
                assert point.incrby_sum >= 7 * sum(r.ops for r in point.repetitions) > 0
                total += point.incrby_sum
        assert total % 7 == 0
        assert int(_get(process.unix_socket, "key:0")) == total


def test_sweep_frame_has_one_row_per_window_named_as_the_binding(server):
    outcome = harness.run_sweep(server.target("tcp"), client="pooled", threads=[1, 2],
                                connections=2, command="set", keys=100, duration=0.1,
                                warmup=0.02, repetitions=3)
    assert outcome.ok, outcome.message
    frame = inprocess.sweep_frame(outcome, server="concurrent", note="tcp")
    assert len(frame) == 6
    assert list(frame[["threads", "repetition"]].itertuples(index=False, name=None)) == [
        (1, 1), (1, 2), (1, 3), (2, 1), (2, 2), (2, 3)]
    assert set(frame["server"]) == {"concurrent"} and set(frame["note"]) == {"tcp"}
    assert set(frame["client"]) == {"pooled"} and set(frame["connections"]) == {2}
    windows = [r for p in outcome.points for r in p.repetitions]
    assert list(frame["ops"]) == [r.ops for r in windows]
    assert list(frame["p99_us"]) == [r.p99_us for r in windows]
    assert (frame["errors"] == 0).all() and (frame["ops_per_s"] > 0).all()
    assert "repetitions" not in frame  # the point's list of windows is what the rows are


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
    assert inprocess.sweep_frame(outcome).empty


def test_a_missing_server_binary_is_named(tmp_path):
    from kvlab.running.servers import ServerError
    with pytest.raises(ServerError, match="kvlab-server not found"):
        with inprocess.local_server("concurrent", build=tmp_path):
            pass


def test_a_process_tree_and_its_cpu_include_the_children():
    """process_tree / process_tree_cpu_seconds (what kvlab-load --server-pids reads): a
    shell that stays the parent of a busy child is the shell and the child, and the tree's
    CPU is the child's, which the shell alone does not show."""
    import os
    import signal
    import subprocess
    import sys
    busy = ("import time\nstart = time.process_time()\n"
            "while time.process_time() - start < 0.3: pass\nprint('done', flush=True)\n"
            "time.sleep(30)\n")
    shell = subprocess.Popen(["sh", "-c", f'{sys.executable} -c "$0"; true', busy],
                             stdout=subprocess.PIPE, text=True, process_group=0)
    try:
        assert shell.stdout.readline().strip() == "done"
        tree = harness.process_tree([shell.pid])
        assert tree[0] == shell.pid and len(tree) == 2
        assert harness.process_tree_cpu_seconds([shell.pid]) >= 0.3
        assert harness.process_tree_cpu_seconds([shell.pid]) - \
            harness.process_tree_cpu_seconds([tree[1]]) < 0.1  # the shell: next to nothing
    finally:
        os.killpg(shell.pid, signal.SIGTERM)
        shell.wait(timeout=10)
    assert harness.process_tree([shell.pid]) == []
    assert harness.process_tree_cpu_seconds([shell.pid]) < 0
