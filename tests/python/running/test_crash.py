"""The crash checker (kvlab.running.crash) on every engine: under appendfsync always
no acknowledged write may be lost and no MSET or MULTI/EXEC half-applied across
SIGKILLs; and the checker itself counts the losses of a server that keeps no log."""

import pytest

from kvlab.running import crash

ENGINES = ["single", "sharded", "concurrent", "striped", "owner"]


@pytest.fixture
def disk_dir(build_dir):
    """Under the build folder: a real disk, unlike a tmpfs /tmp."""
    return build_dir / "test-crash"


@pytest.mark.parametrize("engine", ENGINES)
def test_always_loses_no_acknowledged_write(engine, build_dir, disk_dir):
    totals = crash.run_cycles(crash.kvlab_server(build_dir, engine, "always"),
                              disk_dir / engine, cycles=3)
    assert totals.cycles == 3
    assert totals.acked > 0
    assert (totals.lost, totals.half_applied) == (0, 0)


def test_the_checker_counts_what_a_server_without_a_log_loses(build_dir, disk_dir):
    no_log = crash.Server("no-log", [str(build_dir / "kvlab-server"), "--engine", "single",
                                     "--port", "0", "--unixsocket", "{sock}"])
    totals = crash.run_cycles(no_log, disk_dir / "no-log", cycles=1)
    assert totals.acked > 0
    assert totals.lost > 0   # everything acknowledged is gone after the restart
