"""Measuring from a notebook: kvlab._harness, the load harness's sweep runner
(harness/sweep.h) compiled into this Python process (analysis/harness_module.cc), run
against a server this process starts; each measured window becomes a DataFrame row.

    from kvlab.running import inprocess
    harness = inprocess.harness()
    with inprocess.local_server("concurrent") as server:
        outcome = harness.run_sweep(server.target("unix"), client="pooled", threads=[1, 2],
                                    command="incrby", keys=1, duration=0.5, repetitions=3)
    frame = inprocess.sweep_frame(outcome, server="concurrent")

This is the notebook's API, for quick answers while exploring: one server start,
back-to-back windows, closed loop (latency is measured from each request's send, so
its percentiles are closed-loop ones). Figures to publish come from `python3 -m kvlab
run`, which measures with kvlab-load in rounds from fresh servers in shuffled order and
checks the CPUs for interference (docs/experiments.md, docs/methodology.md).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any, Iterator

import pandas as pd

from ..schema.specs import ServerSpec
from .servers import ServerProcess

REPO = Path(__file__).resolve().parents[3]


def build_dir() -> Path:
    """Where kvlab-server and python/kvlab/_harness*.so are: $KVLAB_BUILD_DIR, else build/."""
    return Path(os.environ.get("KVLAB_BUILD_DIR") or REPO / "build")


def harness() -> ModuleType:
    """The kvlab._harness module. Found on sys.path (PYTHONPATH=analysis:build/python) or
    in build_dir(); ImportError naming the build target when neither has it."""
    import kvlab
    module_dir = str(build_dir() / "python" / "kvlab")
    if module_dir not in kvlab.__path__ and Path(module_dir).is_dir():
        kvlab.__path__.append(module_dir)
    try:
        from .. import _harness
    except ImportError as error:
        raise ImportError(f"kvlab._harness is not built in {build_dir()}: cmake --build "
                          f"{build_dir()} --target kvlab_harness_module ({error})") from error
    return _harness


@contextlib.contextmanager
def local_server(engine: str = "concurrent", *, redis: bool = False,
                 io_threads: int | None = None, shards: int | None = None,
                 build: Path | None = None) -> Iterator[ServerProcess]:
    """A fresh kvlab-server with `engine` (or redis-server when `redis`), listening on a
    temporary Unix socket and a free loopback port, not pinned; stopped on leaving.
    Raises servers.ServerError when it cannot start."""
    spec = ServerSpec(name="redis" if redis else engine, kind="redis" if redis else "kvlab",
                      engine=None if redis else engine, io_threads=io_threads, shards=shards)
    with tempfile.TemporaryDirectory(prefix="kvlab-inprocess-") as folder:
        work = Path(folder)
        with ServerProcess(spec, build or build_dir(), work, work / "server.log",
                           cpus=None) as server:
            yield server


def _fields(value: Any) -> dict:
    """The plain data attributes a bound harness result exposes, by their binding names."""
    return {name: getattr(value, name) for name in dir(value) if not name.startswith("_")
            and isinstance(getattr(value, name), (bool, int, float, str))}


def sweep_frame(outcome: Any, **labels: Any) -> pd.DataFrame:
    """One row per measured window of a kvlab._harness SweepOutcome: `labels` (e.g.
    server="concurrent"), the point's fields (threads, client, connections, pipeline,
    complete, ...) and the window's (repetition, ops, ops_per_s, p50_us, client_cpu, ...),
    named as the binding names them. A failed sweep gives the windows it completed."""
    rows = [{**labels, **_fields(point), **_fields(repetition)}
            for point in outcome.points for repetition in point.repetitions]
    return pd.DataFrame(rows)
