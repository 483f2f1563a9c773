"""The engine and client kinds the runner knows, in one place: the experiment checker
(experiment.py), the plan (plan.py) and the regression gate (regress.py) read them here.

The binaries own these facts (engines/engine_kind.cc, harness/sweep.cc); this module is
their one Python copy until the runner asks `kvlab-server --kinds` and `kvlab-load
--kinds` for them.
"""

from __future__ import annotations

# kvlab-server --engine values, and the [[server]] keys each engine takes besides the
# ones every kvlab server takes (io_threads, multikey).
ENGINES = ("single", "sharded", "concurrent", "striped", "owner")
ENGINE_OPTIONS = {"single": (), "sharded": ("shards", "hop"), "concurrent": (),
                  "striped": ("stripes",), "owner": ("route",)}
# Engines that run everything on one thread: "auto" I/O threads means one.
SINGLE_THREADED_ENGINES = ("single",)
HOPS = ("command", "batch")          # sharded: a hop per command or per batch
ROUTES = ("none", "slots")           # owner: the server hops, or the client routes by slot
MULTIKEY_MODES = ("atomic", "split")

# kvlab-load --client values. Only dedicated clients pipeline; a shared client always
# uses exactly one connection.
CLIENTS = ("dedicated", "pooled", "shared")
PIPELINING_CLIENTS = ("dedicated",)
ONE_CONNECTION_CLIENTS = ("shared",)
# The seed's connection counts: redis-benchmark's 50 in total, commons-pool2's 8.
SEED_TOTAL_CONNECTIONS = 50
SEED_POOL_SIZE = 8

assert set(ENGINE_OPTIONS) == set(ENGINES)


def auto_connections(client: str, threads: int) -> int:
    """connections = "auto": dedicated 50 in total (at least one per thread; kvlab-load's
    --connections is the total), pooled commons-pool2's 8, shared 1."""
    if client == "dedicated":
        return max(SEED_TOTAL_CONNECTIONS, threads)
    return SEED_POOL_SIZE if client == "pooled" else 1
