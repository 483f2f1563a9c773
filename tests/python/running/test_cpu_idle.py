"""How idle CPUs wait during a run (running/cpu_idle.py): the idle states read from a
made-up sysfs, the PM QoS hold on a stand-in file and on the real device, and what the
hold does to this machine's halts."""

import os
import struct
import time
from pathlib import Path

import pytest
from conftest import experiment_head

from kvlab.running import cpu_idle
from kvlab.running.experiment import ExperimentError, parse_experiment_text


def fake_sysfs(root: Path, usage: dict[int, list[int]]) -> Path:
    """cpuN/cpuidle/stateK with a POLL state (latency 0) and a halt (latency 1)."""
    (root / "cpuidle").mkdir(parents=True, exist_ok=True)
    (root / "cpuidle" / "current_driver").write_text("haltpoll\n")
    (root / "cpuidle" / "current_governor_ro").write_text("haltpoll\n")
    for cpu, counts in usage.items():
        for index, (name, latency) in enumerate([("POLL", 0), ("haltpoll idle", 1)]):
            state = root / f"cpu{cpu}" / "cpuidle" / f"state{index}"
            state.mkdir(parents=True, exist_ok=True)
            (state / "name").write_text(name + "\n")
            (state / "latency").write_text(f"{latency}\n")
            (state / "disable").write_text("0\n")
            (state / "usage").write_text(f"{counts[index]}\n")
    return root


def test_halts_count_entries_into_states_with_an_exit_latency_only(tmp_path):
    before = cpu_idle.idle_states([0, 1], fake_sysfs(tmp_path / "a", {0: [5, 100], 1: [0, 40]}))
    after = cpu_idle.idle_states([0, 1], fake_sysfs(tmp_path / "b", {0: [900, 130], 1: [7, 52]}))
    assert before["driver"] == "haltpoll" and before["governor"] == "haltpoll"
    assert [s["name"] for s in after["cpus"]["0"]] == ["POLL", "haltpoll idle"]
    assert cpu_idle.halts(before, after) == 30 + 12  # the polls (895 + 7) are not halts


def test_a_machine_without_idle_states_has_no_halts_figure(tmp_path):
    empty = cpu_idle.idle_states([0], tmp_path)
    assert empty["driver"] is None and empty["cpus"] == {"0": []}
    assert cpu_idle.halts(empty, empty) is None


def test_the_hold_writes_a_zero_request_and_keeps_it_until_released(tmp_path):
    device = tmp_path / "qos"
    device.write_bytes(b"")
    hold = cpu_idle.IdleHold("poll", device)
    assert hold.take() and hold.held and hold.regime() == "poll"
    assert struct.unpack("i", device.read_bytes()) == (0,)
    hold.release()
    assert not hold.held and hold.regime() == "kernel"


def test_without_the_right_to_hold_it_the_run_goes_on_and_says_why(tmp_path):
    hold = cpu_idle.IdleHold("poll", tmp_path / "absent" / "qos")
    assert not hold.take() and not hold.held
    assert "absent" in hold.why and "as the kernel chooses" in hold.why
    kernel = cpu_idle.IdleHold("kernel", tmp_path / "never opened")
    assert not kernel.take() and "kernel" in kernel.why
    described = kernel.describe([0])
    assert described["mode"] == "kernel" and described["held"] is False
    with pytest.raises(ValueError):
        cpu_idle.IdleHold("spin")


def test_the_experiment_says_poll_unless_told_otherwise(tmp_path):
    sweep = '[[sweep]]\nname = "s"\nservers = ["redis"]\n'
    path = tmp_path / "x.toml"
    assert parse_experiment_text(experiment_head("x") + sweep, path).cpu_idle == "poll"
    told = experiment_head("x", cpu_idle="kernel") + sweep
    assert parse_experiment_text(told, path).cpu_idle == "kernel"
    with pytest.raises(ExperimentError, match="cpu_idle"):
        parse_experiment_text(experiment_head("x", cpu_idle="spin") + sweep, path)


def ping_pong_halts(seconds: float) -> tuple[int | None, int]:
    """Halts of every allowed CPU while two processes pass a byte back and forth (two,
    not two threads: Python's threads hand off under one lock)."""
    cpus = sorted(os.sched_getaffinity(0))
    to_echo, to_ping = os.pipe(), os.pipe()
    child = os.fork()
    if child == 0:
        try:
            os.close(to_echo[1])  # so that the parent's close ends the loop
            while os.read(to_echo[0], 1):
                os.write(to_ping[1], b"x")
        finally:
            os._exit(0)
    before = cpu_idle.idle_states(cpus)
    end = time.monotonic() + seconds
    trips = 0
    while time.monotonic() < end:
        os.write(to_echo[1], b"x")
        os.read(to_ping[0], 1)
        trips += 1
    halted = cpu_idle.halts(before, cpu_idle.idle_states(cpus))
    os.close(to_echo[1])
    os.waitpid(child, 0)
    for fd in (to_echo[0], to_ping[0], to_ping[1]):
        os.close(fd)
    return halted, trips


def test_on_this_machine_the_hold_stops_the_cpus_halting():
    if not cpu_idle.QOS_PATH.exists() or not cpu_idle.idle_states([0])["cpus"]["0"]:
        pytest.skip("this kernel has no PM QoS device or no cpuidle states to read")
    hold = cpu_idle.IdleHold("poll")
    assert hold.take(), hold.why  # the tests run as root (make test installs as root)
    try:
        assert cpu_idle.current_request_us() == 0
        held, trips = ping_pong_halts(0.5)
    finally:
        hold.release()
    # Each round trip puts both processes to sleep: free to halt, a CPU halts at nearly
    # every one (a 2-vCPU VM: 1 to 2 halts a trip); held, almost never.
    assert trips > 1000 and held < trips / 100, (held, trips)
    # Free, the same ping-pong halts a CPU at nearly every trip (11,449 halts in 15,151
    # trips on one VM); that is the machine's figure, not the hold's, and a run of
    # another test may hold the CPUs polling at any moment, so it is not asserted here.
