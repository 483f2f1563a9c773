"""The engine and client kinds the runner knows, read from the binaries that own them.

`kvlab-server --kinds` prints the engine table (engines/engine_kind.cc) and
`kvlab-load --kinds` the client-kind table and command grammar
(harness/clients/client_kind.cc); their schemas are in engine_kind.h and
client_kind.h. This module asks them once per build folder and keeps no copy: the
experiment checker, the plan and the regression gate call the functions below.

The build folder is $KVLAB_BUILD_DIR, else <repo>/build, unless the command line
named one (`use_build`). Without the binaries a call raises KindsUnavailable,
which says to build first.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[3]
SERVER_FORMAT = "kvlab-server-kinds/1"
LOAD_FORMAT = "kvlab-load-kinds/1"

# The seed's connection count for dedicated clients with connections = "auto":
# redis-benchmark's 50 in total (a fact of the seed, not of kvlab-load).
SEED_TOTAL_CONNECTIONS = 50
# [[server]] keys whose name differs from kvlab-server's flag: an owner server's
# shard ports are what lets a client route by slot, so the file says route = "slots".
TOML_KEY_OF_FLAG = {"shard-ports": "route"}

# redis.conf's appendfsync values, which kvlab-server's --appendfsync copies.
REDIS_APPENDFSYNC = ("always", "everysec", "no")

_build: Path | None = None


class KindsUnavailable(RuntimeError):
    """The binaries that own the kinds are missing or did not answer."""


def use_build(build: str | Path) -> None:
    """Reads the kinds from this build folder's binaries from now on."""
    global _build
    _build = Path(build).resolve()


def build_folder() -> Path:
    if _build is not None:
        return _build
    return Path(os.environ.get("KVLAB_BUILD_DIR") or REPO / "build").resolve()


@functools.cache
def _ask(binary: Path, expected_format: str) -> dict[str, Any]:
    if not binary.is_file():
        raise KindsUnavailable(f"{binary} not found: build first (make build), or name "
                               "the build folder (--build / KVLAB_BUILD_DIR)")
    try:
        done = subprocess.run([str(binary), "--kinds"], capture_output=True, text=True,
                              timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise KindsUnavailable(f"{binary} --kinds: {error}") from error
    if done.returncode != 0:
        raise KindsUnavailable(f"{binary} --kinds exited {done.returncode}: "
                               f"{done.stderr.strip()[:300]}")
    try:
        table = json.loads(done.stdout)
    except json.JSONDecodeError as error:
        raise KindsUnavailable(f"{binary} --kinds printed no JSON: {error}") from error
    if table.get("format") != expected_format:
        raise KindsUnavailable(f"{binary} --kinds has format {table.get('format')!r}, "
                               f"this runner reads {expected_format!r}")
    return table


def server_table() -> dict[str, Any]:
    """kvlab-server --kinds, parsed."""
    return _ask(build_folder() / "kvlab-server", SERVER_FORMAT)


def load_table() -> dict[str, Any]:
    """kvlab-load --kinds, parsed."""
    return _ask(build_folder() / "kvlab-load", LOAD_FORMAT)


# ---- engines (kvlab-server) ----

def engines() -> tuple[str, ...]:
    return tuple(e["name"] for e in server_table()["engines"])


def _engine(name: str) -> dict[str, Any]:
    for engine in server_table()["engines"]:
        if engine["name"] == name:
            return engine
    raise KeyError(name)


def engine_options(engine: str) -> tuple[str, ...]:
    """The [[server]] keys an engine takes besides the ones every kvlab server takes
    (io_threads, multikey)."""
    return tuple(TOML_KEY_OF_FLAG.get(o["flag"], o["flag"]) for o in _engine(engine)["options"])


def engine_option_choices(engine: str, flag: str) -> tuple[str, ...]:
    for option in _engine(engine)["options"]:
        if option["flag"] == flag:
            return tuple(option["choices"])
    raise KeyError(f"{engine} has no option {flag} with choices")


def hops() -> tuple[str, ...]:
    return engine_option_choices("sharded", "hop")


def single_threaded_engines() -> tuple[str, ...]:
    """Engines that run everything on one thread: "auto" I/O threads means one."""
    return tuple(e["name"] for e in server_table()["engines"]
                 if e["traits"]["single_threaded"])


def appendfsync_policies() -> tuple[str, ...]:
    """--appendfsync's policies: Redis's three, which kvlab-server copies (its --kinds does
    not list them, and a redis row must be checked without kvlab-server built)."""
    return REDIS_APPENDFSYNC


def multikey_modes() -> tuple[str, ...]:
    return tuple(server_table()["multikey"]["choices"])


# ---- clients and commands (kvlab-load) ----

def _clients() -> list[dict[str, Any]]:
    return load_table()["clients"]


def clients() -> tuple[str, ...]:
    return tuple(c["name"] for c in _clients())


def pipelining_clients() -> tuple[str, ...]:
    return tuple(c["name"] for c in _clients() if c["pipelines"])


def one_connection_clients() -> tuple[str, ...]:
    return tuple(c["name"] for c in _clients() if c["max_connections"] == 1)


def redis_benchmark_clients() -> tuple[str, ...]:
    """The strategies --loadgen redis-benchmark can play."""
    return tuple(c["name"] for c in _clients() if c["redis_benchmark"])


def default_connections(client: str) -> int:
    return next(c["default_connections"] for c in _clients() if c["name"] == client)


def auto_connections(client: str, threads: int) -> int:
    """connections = "auto": dedicated the seed's 50 in total (at least one per thread;
    kvlab-load's --connections is the total), the others kvlab-load's default
    (pooled: commons-pool2's 8, shared: 1)."""
    kind = next(c for c in _clients() if c["name"] == client)
    if kind["connections_per_thread"]:
        return max(SEED_TOTAL_CONNECTIONS, threads)
    return kind["default_connections"]


def choices(option: str) -> tuple[str, ...]:
    """kvlab-load's spellings of an option (loadgen, io, io_flush, refill, route,
    arrival), its default first."""
    return tuple(load_table()["choices"][option])


def routes() -> tuple[str, ...]:
    return choices("route")


def single_key_commands() -> tuple[str, ...]:
    return tuple(load_table()["commands"]["single"])


def multi_key_commands() -> tuple[str, ...]:
    return tuple(load_table()["commands"]["multi_key"])


def max_keys_per_command() -> int:
    return int(load_table()["commands"]["max_keys_per_command"])


def ycsb_workloads() -> tuple[str, ...]:
    return tuple(load_table()["commands"]["ycsb"])


def redis_benchmark_tests() -> tuple[str, ...]:
    return tuple(load_table()["commands"]["redis_benchmark_tests"])
