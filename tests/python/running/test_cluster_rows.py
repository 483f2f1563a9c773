"""The thread-per-core rows: `kind = "redis-cluster"` starts N cluster-enabled
redis-servers whose slots cover 0..16383 once and reach cluster_state:ok; an
`owner` server with route = "slots" gets --shard-ports and its points --route
slots; routed points exist only where a slot map can be read (tcp, no MULTI);
and kvlab-load drives the cluster routed with no MOVED and no errors."""

import shutil
import socket
from pathlib import Path

import pytest

from conftest import BUILD_DIR, kvlab_binaries_or_fail
from kvlab.running import loadgens
from kvlab.running.cpus import Topology
from kvlab.running.experiment import parse_experiment_text
from kvlab.running.plan import resolve
from kvlab.running.servers import (HASH_SLOTS, RedisClusterProcess, _ephemeral_range,
                                   call_unix, first_slot, free_tcp_port, free_tcp_ports,
                                   server_command, server_process)

ROWS = """
[experiment]
name = "rows"
server_cpus = "auto"
harness_cpus = "auto"

[[server]]
name = "owner"
kind = "kvlab"
engine = "owner"
io_threads = "auto"

[[server]]
name = "owner-routed"
kind = "kvlab"
engine = "owner"
io_threads = "auto"
route = "slots"

[[server]]
name = "redis-cluster"
kind = "redis-cluster"

[[sweep]]
name = "s"
command = ["get", "multi-incr:2"]
transport = ["unix", "tcp"]
threads = 1
keys = 100
duration = 0.2
"""


def rows():
    return parse_experiment_text(ROWS, Path("rows.toml"))


def test_routed_points_exist_only_over_tcp_and_without_multi():
    plan = resolve(rows(), Topology.of(range(8)))
    by_server = {}
    for point in plan.points:
        by_server.setdefault(point.server, []).append(point)
    assert len(by_server["owner"]) == 4  # 2 commands x 2 transports
    assert {(p.transport, p.command, p.route) for p in by_server["owner-routed"]} == {
        ("tcp", "get", "slots")}
    assert {(p.transport, p.command, p.route) for p in by_server["redis-cluster"]} == {
        ("tcp", "get", "slots")}
    servers = {s.name: s for s in plan.experiment.servers}
    assert servers["redis-cluster"].nodes == 4 and servers["owner"].io_threads == 4
    text = plan.render()
    assert "server redis-cluster: CPUs 0-3, nodes 4, route slots" in text
    assert "server owner-routed: CPUs 0-3, io_threads 4, route slots" in text


def test_routed_points_reach_kvlab_load_and_the_server_gets_shard_ports(tmp_path):
    plan = resolve(rows(), Topology.of(range(4)))
    routed = next(p for p in plan.points if p.server == "owner-routed")
    arguments = loadgens.load_arguments(routed, "tcp://127.0.0.1:7000")
    assert arguments[arguments.index("--route") + 1] == "slots"
    plain = next(p for p in plan.points if p.server == "owner")
    assert "--route" not in loadgens.load_arguments(plain, "tcp://127.0.0.1:7000")
    spec = next(s for s in plan.experiment.servers if s.name == "owner-routed")
    process = server_process(spec, tmp_path, tmp_path, tmp_path / "log", None)
    assert process.program[process.program.index("--shard-ports") + 1].isdigit()
    assert "--shard-ports" not in server_command(
        next(s for s in plan.experiment.servers if s.name == "owner"), tmp_path, 7000,
        "127.0.0.1", str(tmp_path / "s.sock"))


def test_slot_ranges_are_even_and_cover_every_slot():
    for owners in (1, 2, 3, 4, 7):
        assert first_slot(0, owners) == 0 and first_slot(owners, owners) == HASH_SLOTS
        sizes = [first_slot(i + 1, owners) - first_slot(i, owners) for i in range(owners)]
        assert max(sizes) - min(sizes) <= 1
    assert first_slot(1, 3) == 5461  # as base/hash_slot.h's FirstSlotOf


def _cluster_slots(port: int) -> list[tuple[int, int, int]]:
    """(first, last, port) of CLUSTER SLOTS, read with a minimal RESP reader."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
        connection.sendall(b"*2\r\n$7\r\nCLUSTER\r\n$5\r\nSLOTS\r\n")
        file = connection.makefile("rb")

        def value():
            line = file.readline().rstrip(b"\r\n")
            kind, rest = line[:1], line[1:]
            if kind == b"*":
                return [value() for _ in range(int(rest))]
            if kind == b":":
                return int(rest)
            if kind == b"$":
                body = file.read(int(rest) + 2)[:-2]
                return body.decode()
            return rest.decode()
        return [(entry[0], entry[1], entry[2][1]) for entry in value()]


@pytest.fixture
def cluster(tmp_path):
    if shutil.which("redis-server") is None:
        # scripts/install-deps (make test's prerequisites) installs it: fail, never skip
        pytest.fail("redis-server not installed: run scripts/install-deps")
    spec = next(s for s in resolve(rows(), Topology.of(range(4))).experiment.servers
                if s.kind == "redis-cluster")
    process = RedisClusterProcess(spec, tmp_path, tmp_path / "cluster.log", cpus=None)
    with process:
        yield process


def test_cluster_start_up_reaches_ok_and_covers_every_slot(cluster):
    assert cluster.alive() and len(cluster.pids) == 2
    assert cluster.cluster_ok()
    for path in cluster.sockets:
        assert "cluster_state:ok" in call_unix(path, "CLUSTER", "INFO")
    ranges = sorted(_cluster_slots(cluster.port))
    assert [(first, last) for first, last, _ in ranges] == [(0, 8191), (8192, HASH_SLOTS - 1)]
    assert sorted(port for _, _, port in ranges) == sorted(cluster.ports)
    assert cluster.flush()


def test_kvlab_load_drives_the_cluster_routed(cluster, tmp_path):
    kvlab_binaries_or_fail(BUILD_DIR)
    plan = resolve(rows(), Topology.of(range(4)))
    point = next(p for p in plan.points if p.server == "redis-cluster")
    result = loadgens.run_kvlab_load(point, BUILD_DIR, cluster.target("tcp"), None, None,
                                     tmp_path / "p.csv", tmp_path / "p.json", prefill=True)
    assert result.error is None or result.error == "", result.error
    row = result.rows[0]
    assert int(float(row["ops"])) > 0
    assert row["errors"] in ("0", "0.0")
    assert row["route"] == "slots" and row["moved"] == "0"
    assert cluster.memory()[2] == 100  # the prefill put each key on its owner


def test_a_cluster_of_one_node_is_prefilled_key_by_key(tmp_path):
    """On a 2-core machine the cluster row has one node: every slot on it, yet a
    multi-key command over keys of different slots is still CROSSSLOT. The prefill of a
    routed point must not batch keys into MSETs (a default run lost both prefilled
    redis-cluster points to it)."""
    kvlab_binaries_or_fail(BUILD_DIR)
    plan = resolve(rows(), Topology.of(range(2)))
    spec = next(s for s in plan.experiment.servers if s.kind == "redis-cluster")
    point = next(p for p in plan.points if p.server == "redis-cluster")
    with RedisClusterProcess(spec, tmp_path, tmp_path / "cluster.log", cpus=None) as one:
        assert len(one.pids) == 1
        result = loadgens.run_kvlab_load(point, BUILD_DIR, one.target("tcp"), None, None,
                                         tmp_path / "p.csv", tmp_path / "p.json",
                                         prefill=True)
        assert not result.error, result.error
        assert one.memory()[2] == 100


def test_ports_come_from_below_the_ephemeral_range():
    """A range taken from bind(0) can hold the server's own main port (the kernel hands a
    released port out again; CI failed on it), and a main port from bind(0) can be an
    outgoing connection's by the time the server binds it (a default run lost a round
    to it): both come from below the ephemeral range, and a range never holds a port
    that is bound, as the server's main port is by then."""
    low, _ = _ephemeral_range()
    with socket.socket() as server:
        server.bind(("127.0.0.1", free_tcp_port()))
        main_port = server.getsockname()[1]
        assert main_port < low
        for _ in range(20):
            base = free_tcp_ports(4)
            assert base + 4 <= low
            assert not base <= main_port < base + 4
            for port in range(base, base + 4):
                with socket.socket() as probe:
                    probe.bind(("127.0.0.1", port))


def test_an_ephemeral_range_of_every_port_still_gives_a_free_port(monkeypatch):
    from kvlab.running import servers
    monkeypatch.setattr(servers, "_ephemeral_range", lambda: (1024, 65535))
    port = servers.free_tcp_port()
    assert 1024 <= port <= 65535
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", port))


@pytest.mark.parametrize("nodes", [1, 2])
def test_redis_benchmark_cross_checks_a_cluster_of_any_size(tmp_path, nodes):
    """redis-benchmark --cluster refuses a cluster of one node ("Invalid cluster: 1
    node(s)"), the row a one-CPU server gets: kvlab-load then runs it plain (every slot is
    that node's), and with two nodes in its cluster mode (whose CSV follows a list of
    the masters); both write their keys into the cluster."""
    import subprocess
    from kvlab.schema.specs import ServerSpec
    assert (BUILD_DIR / "kvlab-load").exists(), f"kvlab-load is not built in {BUILD_DIR}"
    if shutil.which("redis-benchmark") is None:
        pytest.fail("redis-benchmark is not installed (scripts/install-deps installs it)")
    spec = ServerSpec(name="cluster", kind="redis-cluster", nodes=nodes)
    with RedisClusterProcess(spec, tmp_path, tmp_path / "cluster.log", cpus=None) as process:
        done = subprocess.run(
            [str(BUILD_DIR / "kvlab-load"), "--target", process.target("tcp"), "--loadgen",
             "redis-benchmark", "--route", "slots", "--command", "set", "--keys", "1000",
             "--pipeline", "16", "--connections", "10", "--threads", "2", "--duration", "0.3",
             "--warmup", "0", "--repeat", "1", "--csv", str(tmp_path / "rb.csv")],
            capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        (row,) = loadgens.read_kvlab_load_rows((tmp_path / "rb.csv").read_text())
        assert float(row["ops_per_s"]) > 0
        assert row["route"] == "slots"
        assert process.memory()[2] > 0  # keys, over every node
