"""The one owner of starting a run's servers and pre-filling them.

Both ways of measuring — rounds (runner.Runner) and alternation (alternating.py) — start
fresh server processes pinned to the server CPUs, each logging to the run's logs/
folder, and fill the keyspace before a point measures it. Both go through a
ServerStarter, so neither reaches into the other's internals. Not thread-safe (a run is
one thread).
"""
from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

from . import durability, loadgens
from ..schema.specs import Point, ServerSpec, point_fill
from .remote import SERVER_NAMESPACE
from .servers import RedisClusterProcess, ServerProcess, server_process


@dataclasses.dataclass(frozen=True)
class ServerStarter:
    build_dir: Path
    log_dir: Path                       # each server's log: NAME.log, NAME-remote.log
    server_cpus: str | None             # None: not pinned (a one-CPU machine)
    harness_cpus: str | None
    # Where a row with appendfsync keeps its append-only log: a folder per row below it
    # (durability.log_folder), emptied at every start. None: no row may keep one.
    aof_root: Path | None = None

    def process(self, server: ServerSpec, work: Path,
                bind: str | None) -> ServerProcess | RedisClusterProcess:
        """A fresh server (not started yet) pinned to the server CPUs; inside the link's
        namespace when bound to its address. Its log is appended to across rounds."""
        remote = bind is not None
        suffix = "-remote" if remote else ""
        log = self.log_dir / f"{server.name}{suffix}.log"
        aof_dir = (durability.log_folder(self.aof_root, server.name + suffix)
                   if self.aof_root is not None else None)
        return server_process(server, self.build_dir, work, log, self.server_cpus,
                              netns=SERVER_NAMESPACE if remote else None,
                              bind=bind or "127.0.0.1", aof_dir=aof_dir)

    def prefill(self, point: Point, target: str, netns: str | None) -> str | None:
        """SETs every key once (or loads a YCSB workload's records: what it measures for a
        millisecond after is read-only), in a load run of its own (its cost is in no
        measurement). The error kvlab-load reported, or None."""
        fill = point_fill(point)
        # A container fill is kvlab-load's prefill alone (its short load: PINGs).
        command = {"ycsb": "ycsb:C"}.get(fill, "set" if point.value_shape == "string" else "ping")
        return self._fill_run(point, command, target, netns)

    def zero_counters(self, point: Point, target: str, netns: str | None) -> str | None:
        """An INCRBY point's keys set to 0 (kvlab-load --prefill with --command incrby), in
        a load run of its own, so that a measurement read at its edges (durability.py)
        holds the INCRBYs alone. The error kvlab-load reported, or None."""
        return self._fill_run(point, "incrby", target, netns)

    def _fill_run(self, point: Point, command: str, target: str,
                  netns: str | None) -> str | None:
        """kvlab-load --prefill of `point`'s keys, then a millisecond of `command`."""
        filling = dataclasses.replace(point, command=command, duration=0.001, warmup=0.0,
                                      repetitions=1, pipeline=max(point.pipeline, 16),
                                      client="dedicated")
        with tempfile.TemporaryDirectory(prefix="kvlab-prefill-") as folder:
            result = loadgens.run_kvlab_load(
                filling, self.build_dir, target, self.harness_cpus, netns,
                Path(folder) / "p.csv", Path(folder) / "p.json", prefill=True)
        return result.error
