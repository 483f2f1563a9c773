"""kvlab-server loading its append-only file at start: a truncated last record is
dropped (the rest loads, INFO says how much was dropped, the file is cut there), and
a corrupt record in the middle stops the start with a clear error and exit status 1."""

import subprocess
import zlib

import pytest

from kvlab.running import crash


def resp(*args: str) -> bytes:
    out = b"*%d\r\n" % len(args)
    for a in args:
        out += b"$%d\r\n%s\r\n" % (len(a), a.encode())
    return out


def start(build_dir, folder, engine="sharded"):
    return crash.kvlab_server(build_dir, engine, "always").start(folder)


@pytest.fixture
def folder(build_dir, request):
    # Short: the Unix socket's path must fit in 108 bytes.
    path = build_dir / "aofr" / f"{zlib.crc32(request.node.name.encode()):08x}"
    subprocess.run(["rm", "-rf", str(path)], check=True)
    path.mkdir(parents=True)
    return path


def info_fields(conn) -> dict:
    text = conn.call("INFO", "persistence").decode()
    return dict(line.split(":", 1) for line in text.split("\r\n") if ":" in line)


@pytest.mark.parametrize("engine", ["single", "sharded", "concurrent", "striped", "owner"])
def test_a_truncated_last_record_is_dropped_and_the_rest_loads(build_dir, folder, engine):
    whole = resp("SET", "a", "1") + resp("MULTI") + resp("INCR", "a") + resp("EXEC")
    cut = resp("LPUSH", "l", "x")[:-3]
    (folder / "appendonly.aof").write_bytes(whole + cut)
    process = start(build_dir, folder, engine)
    try:
        conn = crash.Connection(str(folder / "s.sock"))
        assert conn.call("GET", "a") == b"2"
        assert conn.call("EXISTS", "l") == 0
        fields = info_fields(conn)
        assert fields["aof_enabled"] == "1"
        assert fields["loading"] == "0"
        assert fields["aof_loaded_truncated_bytes"] == str(len(cut))
        assert fields["aof_last_write_status"] == "ok"
        conn.call("SET", "b", "after")  # appended after the cut, not after half a record
    finally:
        process.kill()
        process.wait()
    assert (folder / "appendonly.aof").read_bytes() == whole + resp("SET", "b", "after")


def test_a_corrupt_record_in_the_middle_refuses_the_start(build_dir, folder):
    good = resp("SET", "a", "1")
    (folder / "appendonly.aof").write_bytes(good + b"?garbage\r\n" + resp("SET", "b", "2"))
    result = subprocess.run([str(build_dir / "kvlab-server"), "--port", "0", "--unixsocket",
                             str(folder / "s.sock"), "--appendonly", "yes", "--dir",
                             str(folder)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "corrupt" in result.stderr and f"at byte {len(good)}" in result.stderr


def test_writes_survive_a_clean_restart_and_config_reports_the_options(build_dir, folder):
    process = start(build_dir, folder)
    try:
        conn = crash.Connection(str(folder / "s.sock"))
        conn.call("SET", "k", "v", "EX", "1000")
        conn.call("HSET", "h", "f", "1")
        assert conn.call("CONFIG", "GET", "appendfsync") == [b"appendfsync", b"always"]
        assert conn.call("CONFIG", "GET", "dir") == [b"dir", str(folder).encode()]
        assert conn.call("CONFIG", "GET", "appendonly") == [b"appendonly", b"yes"]
    finally:
        process.terminate()
        process.wait()
    process = start(build_dir, folder)
    try:
        conn = crash.Connection(str(folder / "s.sock"))
        assert conn.call("GET", "k") == b"v"
        assert 990 <= conn.call("TTL", "k") <= 1000
        assert conn.call("HGET", "h", "f") == b"1"
    finally:
        process.kill()
        process.wait()
