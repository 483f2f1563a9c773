"""The runner keeps no copy of the engine and client kinds: it reads them from
`kvlab-server --kinds` and `kvlab-load --kinds` (analysis/kvlab/schema/kinds.py).

Known answers: the real binaries' tables give what the shipped workloads use; a fake
build folder whose binaries print a table with a made-up engine and client makes the
checker accept exactly those; missing or wrong binaries give a clear error."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import BUILD_DIR, kvlab_binaries_or_fail
from kvlab.schema import kinds
from kvlab.running.experiment import ExperimentError, parse_experiment_text

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def fresh_kinds():
    """Each test reads the tables anew, and leaves the default build folder behind."""
    kinds._ask.cache_clear()
    yield
    kinds._build = None
    kinds._ask.cache_clear()


def _fake_build(folder: Path, server_table: dict, load_table: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, table in (("kvlab-server", server_table), ("kvlab-load", load_table)):
        script = folder / name
        script.write_text(f"#!{sys.executable}\nimport sys\n"
                          f"assert sys.argv[1:] == ['--kinds'], sys.argv\n"
                          f"print({json.dumps(json.dumps(table))})\n")
        script.chmod(0o755)
    return folder


def _real_tables() -> tuple[dict, dict]:
    kvlab_binaries_or_fail(BUILD_DIR)
    server = json.loads(subprocess.run([str(BUILD_DIR / "kvlab-server"), "--kinds"],
                                       capture_output=True, text=True, check=True).stdout)
    load = json.loads(subprocess.run([str(BUILD_DIR / "kvlab-load"), "--kinds"],
                                     capture_output=True, text=True, check=True).stdout)
    return server, load


def _experiment(engine: str, client: str, command: str = "set") -> str:
    return f"""
[experiment]
name = "kinds"
[[server]]
name = "s"
kind = "kvlab"
engine = "{engine}"
[[sweep]]
name = "w"
client = ["{client}"]
command = ["{command}"]
"""


def test_the_real_tables_hold_what_the_workloads_use():
    kvlab_binaries_or_fail(BUILD_DIR)
    kinds.use_build(BUILD_DIR)
    assert {"single", "sharded", "concurrent", "striped", "owner"} <= set(kinds.engines())
    assert kinds.single_threaded_engines() == ("single",)
    assert kinds.engine_options("sharded") == ("shards", "hop")
    assert kinds.engine_options("owner") == ("route",)
    assert kinds.hops() == ("command", "batch")
    assert set(kinds.clients()) == {"dedicated", "pooled", "shared"}
    assert kinds.pipelining_clients() == ("dedicated",)
    assert kinds.one_connection_clients() == ("shared",)
    assert kinds.auto_connections("pooled", 4) == 8  # commons-pool2's default, the seed's
    assert kinds.auto_connections("dedicated", 4) == 50
    assert kinds.auto_connections("dedicated", 64) == 64
    assert kinds.max_keys_per_command() == 1000
    assert kinds.redis_benchmark_clients() == ("dedicated",)


def test_every_shipped_workload_parses_against_the_real_tables():
    kvlab_binaries_or_fail(BUILD_DIR)
    kinds.use_build(BUILD_DIR)
    for path in sorted((REPO / "workloads").glob("*.toml")):
        parse_experiment_text(path.read_text(), path)


def test_the_checker_accepts_what_the_binaries_list_and_nothing_else(tmp_path):
    server, load = _real_tables()
    toy = dict(server["engines"][0], name="toy-engine")
    server["engines"].append(toy)
    load["clients"].append(dict(load["clients"][1], name="toy-client"))
    load["commands"]["max_keys_per_command"] = 3
    kinds.use_build(_fake_build(tmp_path / "build", server, load))

    parsed = parse_experiment_text(_experiment("toy-engine", "toy-client"), tmp_path / "a.toml")
    assert parsed.servers[0].engine == "toy-engine"
    assert parsed.sweeps[0].values["client"] == ("toy-client",)
    parse_experiment_text(_experiment("toy-engine", "pooled", "mset:3"), tmp_path / "b.toml")
    with pytest.raises(ExperimentError, match=r"mset:N, mget:N, multi-incr:N \(N from 1 to 3\)"):
        parse_experiment_text(_experiment("toy-engine", "pooled", "mset:4"), tmp_path / "c.toml")

    server["engines"] = [e for e in server["engines"] if e["name"] != "striped"]
    kinds._ask.cache_clear()
    kinds.use_build(_fake_build(tmp_path / "build2", server, load))
    with pytest.raises(ExperimentError, match="engine.*'striped' is not allowed"):
        parse_experiment_text(_experiment("striped", "pooled"), tmp_path / "d.toml")


def test_missing_binaries_name_the_build_folder(tmp_path):
    kinds.use_build(tmp_path / "nothing-here")
    with pytest.raises(ExperimentError, match=r"nothing-here/kvlab-server not found: build first"):
        parse_experiment_text(_experiment("sharded", "pooled"), tmp_path / "a.toml")


def test_a_table_of_another_format_is_refused(tmp_path):
    server, load = _real_tables()
    server["format"] = "kvlab-server-kinds/99"
    kinds.use_build(_fake_build(tmp_path / "build", server, load))
    with pytest.raises(ExperimentError, match="format 'kvlab-server-kinds/99'"):
        parse_experiment_text(_experiment("sharded", "pooled"), tmp_path / "a.toml")
