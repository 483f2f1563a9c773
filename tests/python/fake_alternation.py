"""A stand-in for the run that hosts an alternating phase (running/alternating.py's
AlternationHost): servers that start and stop nothing, a prefill that does nothing, and
messages collected in a list. With kvlab-load faked (subprocess.run patched), a phase's
scheduling and bookkeeping are tested without any process."""

import types
from pathlib import Path

from kvlab.schema.specs import ServerSpec


class FakeServer:
    """A server process that is never started: its target names no socket."""
    pid = None
    pids: list = []
    spec = ServerSpec("r", "redis")

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def target(self, transport: str) -> str:
        return "tcp://127.0.0.1:1"

    def check_point(self, command: str, value_shape: object) -> None:
        pass


def fake_host(folder: Path, said: list | None = None, measured_cpus: list | None = None,
              alternation_s: float = 0.8, slice_s: float = 0.1) -> types.SimpleNamespace:
    """The runner an AlternatingPhase needs; its messages go to `said`."""
    return types.SimpleNamespace(
        experiment=types.SimpleNamespace(server=lambda name: ServerSpec(name, "redis"),
                                         disturbance_cores=0.05, alternation_s=alternation_s,
                                         slice_s=slice_s),
        starter=types.SimpleNamespace(process=lambda spec, work, bind: FakeServer(),
                                      prefill=lambda *a: None),
        identify=lambda process: None, problems=[],
        say=said.append if said is not None else (lambda text: None), helper_pids=[],
        measured_cpus=measured_cpus if measured_cpus is not None else [],
        build_dir=folder, harness_cpus=None, run_dir=folder, interrupted=False,
        wake_cost_us=lambda: 0.0)


def shared_pooled_incr(repetitions: int, seed_ratio: float | None = None) -> str:
    """The sweep and the declared ratio of a short alternated run (after experiment_head):
    INCRBY on one key over a Unix socket, shared against pooled connections."""
    return f"""
[[sweep]]
name = "incr"
transport = "unix"
client = ["pooled", "shared"]
command = "incrby"
keys = 1
connections = 2
threads = 2
duration = 0.1
warmup = 0.05
repetitions = {repetitions}

[[compare]]
by = "client"
a = "shared"
b = "pooled"
sweep = "incr"
""" + (f"seed_ratio = {seed_ratio}\n" if seed_ratio is not None else "")
