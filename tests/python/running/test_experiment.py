"""The experiment parser: every shipped workload parses; bad files name file, key, what's allowed."""

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, python_env
from kvlab.running.cpus import Topology
from kvlab.running.experiment import ExperimentError, load_experiment, parse_experiment_text
from kvlab.running.plan import resolve

GOOD = """
[experiment]
name = "tiny"
server_cpus = "0-0"
harness_cpus = "1-1"

[[server]]
name = "sharded"
kind = "kvlab"
engine = "sharded"
shards = 2
hop = "batch"

[[server]]
name = "redis"
kind = "redis"

[[sweep]]
name = "s"
command = ["set", "get"]
threads = [1, 2]
keys = 10
transport = ["unix", "tcp"]
duration = 0.5
"""


def parse(text: str):
    return parse_experiment_text(text, Path("x.toml"))


@pytest.mark.parametrize("path", sorted((REPO / "workloads").glob("*.toml")), ids=lambda p: p.name)
def test_shipped_workloads_parse(path):
    experiment = load_experiment(path)
    for topology in (Topology.of(range(2)), Topology.of(range(16))):
        assert resolve(experiment, topology).points


def test_points_are_the_cartesian_product_grouped_by_server():
    experiment = parse(GOOD)
    points = experiment.points()
    assert len(points) == 2 * 2 * 2 * 2  # servers x commands x threads x transports
    assert [p.server for p in points[:8]] == ["sharded"] * 8
    first = points[0]
    assert (first.command, first.transport, first.threads, first.keys) == ("set", "unix", 1, 10)
    assert first.duration == 0.5 and first.repetitions == 3 and first.warmup == 0.25
    assert experiment.server("sharded").hop == "batch"


def test_multi_key_commands_and_split_atomicity_reach_the_programs(tmp_path):
    from kvlab.running.servers import server_command
    text = GOOD.replace('hop = "batch"', 'hop = "batch"\nmultikey = "split"').replace(
        'command = ["set", "get"]', 'command = ["mset:8", "multi-incr:4"]')
    experiment = parse(text)
    assert {p.command for p in experiment.points()} == {"mset:8", "multi-incr:4"}
    spec = experiment.server("sharded")
    assert spec.multikey == "split" and "multikey=split" in spec.describe()
    command = server_command(spec, tmp_path, 7000, "127.0.0.1", str(tmp_path / "s.sock"))
    assert command[command.index("--multikey") + 1] == "split"
    assert "--multikey" not in server_command(parse(GOOD).server("sharded"), tmp_path, 7000,
                                              "127.0.0.1", str(tmp_path / "s.sock"))


def test_stage_sample_reaches_the_server_command(tmp_path):
    from kvlab.running.servers import server_command
    spec = parse(GOOD.replace('hop = "batch"', 'hop = "batch"\nstage_sample = 0')).server("sharded")
    assert spec.stage_sample == 0 and "stage_sample=0" in spec.describe()
    command = server_command(spec, tmp_path, 7000, "127.0.0.1", str(tmp_path / "s.sock"))
    assert command[command.index("--stage-sample") + 1] == "0"
    # Unset: the server's own default rate, no option passed.
    assert "--stage-sample" not in server_command(parse(GOOD).server("sharded"), tmp_path, 7000,
                                                  "127.0.0.1", str(tmp_path / "s.sock"))


def test_sweep_servers_restrict_the_points():
    text = GOOD.replace('name = "s"\n', 'name = "s"\nservers = ["redis"]\n')
    assert {p.server for p in parse(text).points()} == {"redis"}


@pytest.mark.parametrize("change, message", [
    (('keys = 10', 'keys = 10\nkeyz = 3'), "x.toml: sweep[0].keyz: unknown key"),
    (('transport = ["unix", "tcp"]', 'transport = ["unix", "udp"]'),
     "sweep[0].transport: 'udp' is not allowed; allowed: unix, tcp, remote"),
    (('engine = "sharded"', 'engine = "btree"'),
     "server[0].engine: 'btree' is not allowed; allowed: single, sharded, concurrent, striped"),
    (('threads = [1, 2]', 'threads = [1, 0]'), "sweep[0].threads: 0 must be > 0"),
    (('threads = [1, 2]', 'threads = []'), "sweep[0].threads: must not be an empty list"),
    (('threads = [1, 2]', 'threads = [1, 1]'), "sweep[0].threads: lists a value twice"),
    (('keys = 10', 'keys = "ten"'), "sweep[0].keys: must be an integer, not 'ten'"),
    (('keys = 10', 'keys = true'), "sweep[0].keys: must be an integer, not True"),
    (('duration = 0.5', 'duration = -1'), "sweep[0].duration: -1 must be > 0"),
    (('server_cpus = "0-0"', 'server_cpus = "zero"'), "experiment.server_cpus: 'zero' must be \"auto\", a CPU count"),
    (('server_cpus = "0-0"', 'server_cpus = "0"'), "experiment.server_cpus: '0' is a count of CPUs and must be >= 1"),
    (('shards = 2', 'shards = "many"'), "server[0].shards: 'many' is not allowed; allowed: a positive integer or \"auto\""),
    (('name = "tiny"', 'name = "a b"'), "experiment.name: 'a b' must use only letters"),
    (('name = "s"', 'name = "s"\nservers = ["memcached"]'),
     "sweep[0].servers: 'memcached' is not allowed; allowed: sharded, redis"),
    (('name = "s"', 'name = "s"\nkey_dist = "zipf"'), "sweep[0].key_dist: 'zipf' is not allowed"),
    (('name = "s"', 'name = "s"\nloadgen = "redis-benchmark"\nclient = "pooled"'),
     "sweep[0].client: redis-benchmark only has the dedicated strategy"),
    (('command = ["set", "get"]', 'command = ["set", "incrby"]\nloadgen = "redis-benchmark"'),
     "sweep[0].command: 'incrby' is not allowed with loadgen redis-benchmark"),
    (('[[server]]\nname = "redis"', '[[server]]\nname = "sharded"'),
     "server.name: 'sharded' is used by two servers"),
    (('[experiment]', '[experimentt]\nname = "x"\n[experiment]'), "experimentt: unknown key"),
    (('name = "tiny"\n', ''), "experiment.name: is required"),
    (('hop = "batch"', 'hop = "batch"\nstripes = 4'), "server[0].stripes: unknown key"),
    (('keys = 10', 'keys = [10'), "not valid TOML"),
    (('command = ["set", "get"]', 'command = ["mset:0"]'),
     "sweep[0].command: 'mset:0' is not allowed; allowed: get, set, incrby, ping, mix, lpush, mset:N"),
    (('command = ["set", "get"]', 'command = ["hset:2"]'), "sweep[0].command: 'hset:2' is not allowed"),
    (('command = ["set", "get"]', 'command = ["ping"]\nvalue_shape = "tree:3"'),
     "sweep[0].value_shape: 'tree:3' is not allowed; allowed: string, hash:N"),
    (('name = "s"', 'name = "s"\nvalue_shape = "hash:10"'),
     "sweep[0].value_shape: a container fill is measured for its memory: allowed with "
     "command = \"ping\""),
    (('command = ["set", "get"]', 'command = ["rb:lpush"]'),
     "sweep[0].command: rb:TEST is one of redis-benchmark's own tests; allowed with loadgen "
     "redis-benchmark only"),
    (('command = ["set", "get"]', 'command = ["rb:LPUSH"]\nloadgen = "redis-benchmark"'),
     "sweep[0].command: 'rb:LPUSH' is not allowed"),
    (('hop = "batch"', 'hop = "batch"\nmultikey = "sometimes"'),
     "server[0].multikey: 'sometimes' is not allowed; allowed: atomic, split"),
])
def test_bad_files_name_the_file_the_key_and_what_is_allowed(change, message):
    old, new = change
    assert old in GOOD
    with pytest.raises(ExperimentError) as error:
        parse(GOOD.replace(old, new, 1))
    assert message in str(error.value)
    assert str(error.value).startswith("x.toml")


def test_missing_sweeps_are_an_error():
    with pytest.raises(ExperimentError, match=r"sweep: at least one \[\[sweep\]\] table"):
        parse(GOOD[:GOOD.index("[[sweep]]")])


def test_run_with_a_bad_file_exits_2_with_the_message(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(GOOD.replace("keys = 10", "keys = 10\nthreadz = 1"))
    done = subprocess.run([sys.executable, "-m", "kvlab", "run", str(bad), "--out", str(tmp_path)],
                          capture_output=True, text=True, env=python_env(), timeout=60)
    assert done.returncode == 2
    assert f"{bad}: sweep[0].threadz: unknown key" in done.stderr
    assert not list(tmp_path.glob("*-tiny"))


def test_points_record_what_is_run_for_pooled_and_shared_clients():
    text = GOOD.replace('name = "s"\n', 'name = "s"\nclient = ["dedicated", "pooled", "shared"]\n'
                        'pipeline = 16\nconnections = [8, 50]\n')
    points = parse(text).points()
    shared = {(p.pipeline, p.connections) for p in points if p.client == "shared"}
    pooled = {(p.pipeline, p.connections) for p in points if p.client == "pooled"}
    dedicated = {(p.pipeline, p.connections) for p in points if p.client == "dedicated"}
    assert shared == {(1, 1)} and pooled == {(1, 8), (1, 50)} and dedicated == {(16, 8), (16, 50)}
    assert len(points) == len(set(points))  # shared's two connection counts collapse into one


def test_min_rounds_defaults_to_ten_or_max_rounds_and_is_checked():
    with_rounds = lambda extra: GOOD.replace("[experiment]\n", "[experiment]\n" + extra, 1)
    assert parse(GOOD).min_rounds == 10
    assert parse(with_rounds("max_rounds = 4\n")).min_rounds == 4
    assert parse(with_rounds("min_rounds = 20\nmax_rounds = 50\n")).min_rounds == 20
    with pytest.raises(ExperimentError, match="min_rounds: 20 is more than max_rounds"):
        parse(with_rounds("min_rounds = 20\nmax_rounds = 5\n"))
    with pytest.raises(ExperimentError, match="min_rounds.*at least 2"):
        parse(with_rounds("min_rounds = 1\n"))


def test_a_comparison_may_divide_ops_per_server_cpu_second():
    experiment = parse(GOOD + '[[compare]]\na = "sharded"\nb = "redis"\n'
                       'metric = "ops_per_server_cpu_s"\n')
    (spec,) = experiment.comparisons
    assert spec.metric == "ops_per_server_cpu_s" and spec.name == "sharded/redis per server CPU"
    (plain,) = parse(GOOD + '[[compare]]\na = "sharded"\nb = "redis"\n').comparisons
    assert plain.metric == "ops_per_s" and plain.name == "sharded/redis"
    with pytest.raises(ExperimentError) as error:
        parse(GOOD + '[[compare]]\na = "sharded"\nb = "redis"\nmetric = "latency"\n')
    assert "compare[0].metric: 'latency' is not allowed; allowed: ops_per_s, " \
        "ops_per_server_cpu_s, p50_us, p99_us" in str(error.value)


def test_a_latency_comparison_needs_its_rate_and_alternation():
    compare = '[[compare]]\na = "sharded"\nb = "redis"\nmetric = "p99_us"\n'
    (spec,) = parse(GOOD + compare + "rate = 5000\n").comparisons
    assert spec.latency and spec.rate == 5000.0 and spec.name == "sharded/redis p99 at 5000 ops/s"
    with pytest.raises(ExperimentError, match=r"compare\[0\].rate: metric p99_us needs the ops/s"):
        parse(GOOD + compare)
    with pytest.raises(ExperimentError, match=r"compare\[0\].rate: applies to the latency metrics"):
        parse(GOOD + '[[compare]]\na = "sharded"\nb = "redis"\nrate = 5000\n')
    rounds = GOOD.replace('name = "tiny"', 'name = "tiny"\nmeasurement = "rounds"')
    with pytest.raises(ExperimentError, match="measured by alternation only"):
        parse(rounds + compare + "rate = 5000\n")
