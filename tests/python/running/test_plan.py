"""CPU allocation and the run plan: known machines give known splits; "auto" follows them."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, python_env
from kvlab.running.cpus import (CpuError, Topology, allocate, format_cpu_list, parse_cpu_list,
                        parse_groups, thread_counts)
from kvlab.running.experiment import parse_experiment_text
from kvlab.running.plan import resolve

EXPERIMENT = """
[experiment]
name = "auto"
[[server]]
name = "sharded"
kind = "kvlab"
engine = "sharded"
shards = "auto"
io_threads = "auto"
[[server]]
name = "single"
kind = "kvlab"
engine = "single"
[[server]]
name = "redis"
kind = "redis"
[[server]]
name = "redis-io-threads"
kind = "redis"
io_threads = "auto"
[[sweep]]
name = "p16"
command = "set"
pipeline = 16
connections = "auto"
threads = "auto"
[[sweep]]
name = "pool"
client = ["pooled", "shared"]
command = "incrby"
connections = "auto"
threads = [1, 2]
"""


def hyperthreaded(cores: int, nodes: int = 1) -> Topology:
    """Linux's usual numbering: CPU i and i + cores are siblings; nodes split the cores."""
    cpus = range(2 * cores)
    siblings = [(i, i + cores) for i in range(cores)]
    per_node = cores // nodes
    node_groups = [tuple(c for i in range(n * per_node, (n + 1) * per_node) for c in (i, i + cores))
                   for n in range(nodes)]
    return Topology.of(cpus, siblings, node_groups)


def plan_for(topology, text=EXPERIMENT):
    return resolve(parse_experiment_text(text, Path("auto.toml")), topology)


def test_cpu_lists_round_trip():
    assert parse_cpu_list("0-3,8,10-11") == (0, 1, 2, 3, 8, 10, 11)
    assert format_cpu_list((11, 0, 1, 2, 3, 8, 10)) == "0-3,8,10-11"
    assert parse_groups("0,4;1,5") == ((0, 4), (1, 5))
    with pytest.raises(CpuError, match="two groups"):
        parse_groups("0,4;4,5")
    with pytest.raises(CpuError, match="counts down"):
        parse_cpu_list("3-1")


def test_two_cpus_give_one_each_and_the_seed_thread_counts_shrink():
    plan = plan_for(Topology.of([0, 1]))
    data = plan.as_json()
    assert data["harness"]["cpus"] == "1"
    assert {s["cpus"] for s in data["servers"]} == {"0"}
    sharded = next(s for s in data["servers"] if s["name"] == "sharded")
    assert (sharded["shards"], sharded["io_threads"]) == (1, 1)
    assert [s["name"] for s in data["servers"]] == ["sharded", "single", "redis"]
    assert "redis-io-threads" in data["dropped"][0]
    assert data["harness"]["threads"] == [1, 2]  # up to 2 x one harness CPU


def test_one_core_with_two_siblings_splits_the_siblings():
    allocation = allocate(Topology.of([0, 1], [(0, 1)]))
    assert (allocation.server, allocation.harness) == ((0,), (1,))
    assert "siblings split" in allocation.rule


def test_eight_hyperthreads_keep_siblings_together():
    plan = plan_for(hyperthreaded(4))
    server, harness = set(plan.allocation.server), set(plan.allocation.harness)
    assert server == {0, 1, 4, 5} and harness == {2, 3, 6, 7}
    assert not server & harness
    for core in [(0, 4), (1, 5), (2, 6), (3, 7)]:
        assert set(core) <= server or set(core) <= harness
    data = plan.as_json()
    sharded = next(s for s in data["servers"] if s["name"] == "sharded")
    assert (sharded["shards"], sharded["io_threads"]) == (4, 4)
    redis_threads = next(s for s in data["servers"] if s["name"] == "redis-io-threads")
    assert redis_threads["io_threads"] == 4
    assert next(s for s in data["servers"] if s["name"] == "single")["io_threads"] == 1
    assert data["harness"]["threads"] == [1, 2, 4, 8]  # the seed's 8 included


def test_sixteen_cpus_give_eight_each():
    plan = plan_for(Topology.of(range(16)))
    assert plan.allocation.server_list == "0-7" and plan.allocation.harness_list == "8-15"
    assert plan.as_json()["harness"]["threads"] == [1, 2, 4, 8, 16]


def test_sixty_four_cpus_on_two_nodes_keep_the_server_on_one_node():
    topology = hyperthreaded(32, nodes=2)
    plan = plan_for(topology)
    server = set(plan.allocation.server)
    assert len(server) == 32 and not server & set(plan.allocation.harness)
    assert any(server == set(node) for node in topology.nodes)
    assert plan.as_json()["harness"]["threads"][-1] == 64


def test_connections_follow_the_seed():
    points = plan_for(Topology.of(range(16))).points
    dedicated = {p.threads: p.connections for p in points if p.client == "dedicated"}
    assert dedicated[1] == 50 and dedicated[16] == 50
    assert {p.connections for p in points if p.client == "pooled"} == {8}
    assert {p.connections for p in points if p.client == "shared"} == {1}
    assert thread_counts(32)[-1] == 64 and max(50, 64) == 64  # at least one per thread


def test_counts_and_lists_still_work_and_never_overlap():
    topology = Topology.of(range(8))
    allocation = allocate(topology, "2", "auto")
    assert allocation.server == (0, 1) and allocation.harness == tuple(range(2, 8))
    allocation = allocate(topology, "4-7", "auto")
    assert allocation.server == (4, 5, 6, 7) and allocation.harness == (0, 1, 2, 3)
    allocation = allocate(topology, "auto", "6-7")
    assert not set(allocation.server) & {6, 7}
    with pytest.raises(CpuError, match="overlap"):
        allocate(topology, "0-3", "3-5")
    with pytest.raises(CpuError, match="not usable"):
        allocate(topology, "8-9", "auto")
    with pytest.raises(CpuError, match="leave none"):
        allocate(topology, "8", "auto")


def test_a_cgroup_quota_limits_the_usable_cpus():
    topology = Topology.of(range(16), quota_cpus=4.0)
    assert topology.cpus == (0, 1, 2, 3)
    assert allocate(topology).server == (0, 1)


def test_plan_cli_prints_json_for_a_simulated_machine():
    done = subprocess.run(
        [sys.executable, "-m", "kvlab", "plan", str(REPO / "workloads" / "default.toml"),
         "--cpus", "0-7", "--siblings", "0,4;1,5;2,6;3,7", "--json"],
        capture_output=True, text=True, env=python_env(), check=True)
    data = json.loads(done.stdout)
    assert set(data) >= {"servers", "harness", "points", "estimated_s"}
    assert data["harness"]["cpus"] == "2-3,6-7"
    assert all(s["cpus"] == "0-1,4-5" for s in data["servers"])
    assert data["estimated_s"] <= 20 * 60  # make bench on a c2-standard-8 stays within 20 min


def test_plan_cli_rejects_a_bad_cpu_list_with_status_2():
    done = subprocess.run(
        [sys.executable, "-m", "kvlab", "plan", str(REPO / "workloads" / "quick.toml"),
         "--cpus", "0-x"], capture_output=True, text=True, env=python_env())
    assert done.returncode == 2 and "not a CPU list" in done.stderr


def test_the_points_of_declared_ratios_are_left_out_of_the_rounds_estimate():
    # sharded and redis are a declared ratio's sides in p16: alternation measures them,
    # so the sweeps' rounds (and their estimate) have p16's other rows and sweep pool
    declared = EXPERIMENT + """
[[compare]]
name = "sharded/redis"
a = "sharded"
b = "redis"
sweep = "p16"
"""
    topology = Topology.of(range(4))
    alternated = resolve(parse_experiment_text(declared, Path("d.toml")), topology)
    assert {(p.sweep, p.server) for p in alternated.alternated_points()} == {
        ("p16", "sharded"), ("p16", "redis")}
    assert {p.server for p in alternated.rounds_points() if p.sweep == "p16"} == {
        "single", "redis-io-threads"}
    assert len(alternated.rounds_points()) + len(alternated.alternated_points()) == \
        len(alternated.points)
    assert alternated.as_json()["alternated_points"] == len(alternated.alternated_points())
    assert "measured by their declared ratio's alternation" in alternated.render()
    rounds = resolve(parse_experiment_text(declared.replace(
        '[experiment]\nname = "auto"', '[experiment]\nname = "auto"\nmeasurement = "rounds"'),
        Path("r.toml")), topology)
    assert rounds.alternated_points() == [] and rounds.rounds_points() == rounds.points
    assert alternated.estimated_s() < rounds.estimated_s()
