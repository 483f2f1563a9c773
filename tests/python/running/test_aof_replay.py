"""kvlab-server loading its append-only file at start: a truncated last record is
dropped (the rest loads, INFO says how much was dropped, the file is cut there), and
a corrupt record in the middle stops the start with a clear error and exit status 1."""

import shutil
import subprocess
import threading
import time
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


def log_files(folder) -> list:
    """The files of the log, in replay order: appendonly.aof alone, or the files its
    manifest lists (an engine of several lanes keeps a file per lane)."""
    manifest = folder / "appendonly.aof.manifest"
    if not manifest.exists():
        return [folder / "appendonly.aof"]
    return [folder / name for line in manifest.read_text().splitlines()
            if line.startswith("segment ") for name in line.split()[2:]]


def log_bytes(folder) -> bytes:
    return b"".join(path.read_bytes() for path in log_files(folder))


def log_size(folder) -> int:
    return sum(path.stat().st_size for path in log_files(folder))


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
    after = (folder / "appendonly.aof").read_bytes()
    if len(log_files(folder)) > 1:
        # An engine of several lanes: the old file, cut, is the manifest's first segment;
        # new writes go to the lanes' files after it.
        assert after == whole
        lanes = b"".join(path.read_bytes() for path in log_files(folder)[1:])
        assert lanes.startswith(b"#kvlab-now-ms:") and lanes.endswith(resp("SET", "b", "after"))
        return
    assert after.startswith(whole + b"#kvlab-now-ms:")  # a new record says its clock
    assert after.split(b"\r\n", 1 + whole.count(b"\r\n"))[-1] == resp("SET", "b", "after")


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


@pytest.mark.parametrize("engine", ["single", "sharded", "concurrent", "striped", "owner"])
def test_blocking_pops_replay_as_what_they_popped(build_dir, folder, engine):
    """A blocking command is logged as the look it ran (LMPOP, LMOVE, ZMPOP), at its
    first look and at the retry that served it: replayed, what was popped stays popped,
    and a look that found nothing replays as nothing (it never blocks the start)."""
    process = start(build_dir, folder, engine)
    try:
        conn = crash.Connection(str(folder / "s.sock"))
        conn.call("RPUSH", "k", "a", "b")
        assert conn.call("BLPOP", "k", "0") == [b"k", b"a"]        # served at once
        waiter = crash.Connection(str(folder / "s.sock"))
        waiter.send(["BLPOP", "empty", "k2", "0"])                  # blocks: nothing there
        while conn.call("INFO", "clients").find(b"blocked_clients:1") < 0:
            pass
        conn.call("RPUSH", "k2", "x", "y")
        assert waiter.reply() == [b"k2", b"x"]                      # served by a retry
        assert conn.call("BLMOVE", "k", "k3", "LEFT", "RIGHT", "0") == b"b"
        conn.call("ZADD", "z", "1", "m", "2", "n")
        assert conn.call("BZPOPMIN", "z", "0") == [b"z", b"m", b"1"]
    finally:
        process.kill()   # SIGKILL: under `always` every acknowledged write is on disk
        process.wait()
    log = log_bytes(folder).lower()
    assert b"blpop" not in log and b"blmove" not in log and b"bzpopmin" not in log
    process = start(build_dir, folder, engine)
    try:
        conn = crash.Connection(str(folder / "s.sock"))
        assert conn.call("LRANGE", "k", "0", "-1") == []
        assert conn.call("LRANGE", "k2", "0", "-1") == [b"y"]
        assert conn.call("LRANGE", "k3", "0", "-1") == [b"b"]
        assert conn.call("ZRANGE", "z", "0", "-1") == [b"n"]
    finally:
        process.kill()
        process.wait()


@pytest.mark.parametrize("engine", ["single", "sharded", "concurrent", "striped", "owner",
                                    "redis-server"])
def test_the_replay_decides_expiry_as_the_writes_did(build_dir, folder, engine):
    """Known answers for expiry across a restart, redis-server the reference row:
    - `k` is set with a 2 s deadline, then incremented at once (INCR keeps the deadline),
      and the restart comes after the deadline: `k` is gone. A replay at the current time
      would find `k` expired at its SET and replay the INCR as a new key without a deadline.
    - `j` is set with a 0.2 s deadline and incremented after it passed: the INCR made a new
      `j` = 1 without a deadline, which the restart keeps. A replay that stopped expiry
      while loading (without a DEL in the log) would increment the old value."""
    server = (crash.redis_server("always") if engine == "redis-server"
              else crash.kvlab_server(build_dir, engine, "always"))
    process = server.start(folder)
    try:
        conn = crash.Connection(str(folder / "s.sock"))
        written = time.monotonic()
        assert conn.call("SET", "k", "5", "PX", "2000") == "OK"
        assert conn.call("INCR", "k") == 6
        conn.call("RPUSH", "l", "a")
        conn.call("PEXPIRE", "l", "2000")
        conn.call("RPUSH", "l", "b")
        assert conn.call("SET", "j", "5", "PX", "200") == "OK"
        time.sleep(0.4)
        assert conn.call("INCR", "j") == 1
        assert conn.call("TTL", "k") > 0 and conn.call("TTL", "l") > 0
    finally:
        process.kill()  # under `always` every acknowledged write is on disk
        process.wait()
    time.sleep(max(0.0, written + 2.3 - time.monotonic()))  # k's and l's deadlines passed
    process = server.start(folder)
    try:
        conn = crash.Connection(str(folder / "s.sock"))
        assert conn.call("EXISTS", "k") == 0
        assert conn.call("EXISTS", "l") == 0
        assert conn.call("GET", "j") == b"1"
        assert conn.call("TTL", "j") == -1
    finally:
        process.kill()
        process.wait()


@pytest.mark.parametrize("engine", ["single", "sharded", "concurrent", "striped", "owner"])
def test_bgrewriteaof_under_writes_survives_a_kill_and_redis_loads_the_file(build_dir, folder,
                                                                              engine):
    """BGREWRITEAOF while a connection writes: the rewrite ends (INFO), the file shrank to
    the snapshot and what followed, every write acknowledged before the SIGKILL is there
    after the restart, and redis-server 7 loads the rewritten file (it skips kvlab's clock
    annotations as it skips its own) to the same values."""
    process = start(build_dir, folder, engine)
    acked = {"incr": 0, "push": 0}
    stop = threading.Event()

    def write() -> None:
        conn = crash.Connection(str(folder / "s.sock"))
        while not stop.is_set():
            conn.call("INCR", "c")
            acked["incr"] += 1
            conn.call("RPUSH", "l", str(acked["push"]))
            acked["push"] += 1
            conn.call("SET", f"k{acked['incr'] % 20}", "v" * 50)

    try:
        conn = crash.Connection(str(folder / "s.sock"))
        for i in range(2000):  # overwrites: a log the rewrite can shrink
            conn.call("SET", f"k{i % 20}", "x" * 50)
        conn.call("SET", "t", "v", "PX", "100000")
        before = log_size(folder)
        writer = threading.Thread(target=write)
        writer.start()
        time.sleep(0.1)
        assert conn.call("BGREWRITEAOF") == "Background append only file rewriting started"
        deadline = time.monotonic() + 60
        while info_fields(conn)["aof_rewrite_in_progress"] != "0":
            assert time.monotonic() < deadline, "the rewrite did not end"
            time.sleep(0.01)
        time.sleep(0.1)
        stop.set()
        writer.join()
        fields = info_fields(conn)
        assert fields["aof_rewrites"] == "1" and fields["aof_last_bgrewrite_status"] == "ok"
        assert int(fields["aof_current_size"]) == log_size(folder)
        assert log_size(folder) < before
    finally:
        stop.set()
        process.kill()
        process.wait()
    state = [("GET", "c"), ("LLEN", "l"), ("LINDEX", "l", "-1"), ("DBSIZE",), ("GET", "k0")]
    process = start(build_dir, folder, engine)
    try:
        conn = crash.Connection(str(folder / "s.sock"))
        assert conn.call("GET", "c") == str(acked["incr"]).encode()
        assert conn.call("LLEN", "l") == acked["push"]
        assert 0 < conn.call("PTTL", "t") <= 100000
        kvlab_state = [conn.call(*command) for command in state]
    finally:
        process.kill()
        process.wait()
    if len(log_files(folder)) > 1:
        # A log of lanes is kvlab's own (redis-server reads one file): the rewrite left
        # the snapshot and the lanes opened at its start, and nothing older.
        segments = [line.split()[1] for line in
                    (folder / "appendonly.aof.manifest").read_text().splitlines()
                    if line.startswith("segment ")]
        assert segments == ["one", f"{engine}/{len(log_files(folder)) - 1}"], segments
        return
    redis_folder = folder / "redis"
    redis_folder.mkdir()
    shutil.copy(folder / "appendonly.aof", redis_folder / "appendonly.aof")
    process = crash.redis_server("always").start(redis_folder)
    try:
        conn = crash.Connection(str(redis_folder / "s.sock"))
        assert [conn.call(*command) for command in state] == kvlab_state
    finally:
        process.kill()
        process.wait()


def test_a_log_of_lanes_replays_after_a_change_of_engine(build_dir, folder):
    """Each start appends to lanes of its own engine's layout: sharded with 3 shards, then
    owner, then single (one lane) on the same folder. Each replays what the ones before
    acknowledged (MSETs across shards whole, counters exact), and the manifest lists one
    segment per layout, in the order they ran."""
    binary = str(build_dir.resolve() / "kvlab-server")
    args = ["--port", "0", "--unixsocket", "{sock}", "--appendonly", "yes",
            "--appendfsync", "always", "--dir", "{dir}"]
    starts = [("sharded", ["--shards", "3"]), ("owner", ["--io-threads", "2"]),
              ("single", [])]
    for round_index, (engine, extra) in enumerate(starts):
        process = crash.Server(engine, [binary, "--engine", engine] + extra + args).start(folder)
        try:
            conn = crash.Connection(str(folder / "s.sock"))
            assert conn.call("GET", "n") == (str(100 * round_index).encode()
                                             if round_index else None)
            values = conn.call("MGET", "a", "b", "c", "d")
            assert len(set(values)) == 1, values  # every MSET whole
            # INFO says how many files it appends to: a lane per shard or owner.
            assert info_fields(conn)["aof_lanes"] == {"sharded": "3", "owner": "2",
                                                      "single": "1"}[engine]
            for i in range(100):
                conn.call("INCR", "n")
                conn.call("MSET", "a", f"{round_index}:{i}", "b", f"{round_index}:{i}",
                          "c", f"{round_index}:{i}", "d", f"{round_index}:{i}")
        finally:
            process.kill()
            process.wait()
    # single again: its one lane goes on in the last segment.
    process = crash.Server("single", [binary, "--engine", "single"] + args).start(folder)
    try:
        conn = crash.Connection(str(folder / "s.sock"))
        assert conn.call("GET", "n") == b"300"
        assert conn.call("MGET", "a", "b", "c", "d") == [b"2:99"] * 4
    finally:
        process.kill()
        process.wait()
    layouts = [line.split()[1] for line in
               (folder / "appendonly.aof.manifest").read_text().splitlines()
               if line.startswith("segment ")]
    assert layouts == ["sharded/3", "owner/2", "one"], layouts


def test_an_idle_everysec_server_makes_no_fsync(build_dir, folder):
    """everysec fsyncs what was written since the last fsync; with nothing new, none (an
    idle server that flushed the disk once a second would cost the machine for nothing).
    Counted over 2.5 s: at least two of the writer's 1 s ticks."""
    process = crash.kvlab_server(build_dir, "single", "everysec").start(folder)
    try:
        conn = crash.Connection(str(folder / "s.sock"))
        conn.call("SET", "k", "v")
        time.sleep(1.5)  # the write's own fsync, at most a second later
        fsyncs = int(info_fields(conn)["aof_fsyncs"])
        assert fsyncs >= 1
        time.sleep(2.5)
        assert int(info_fields(conn)["aof_fsyncs"]) == fsyncs
        conn.call("SET", "k", "w")
        time.sleep(1.5)
        assert int(info_fields(conn)["aof_fsyncs"]) == fsyncs + 1
    finally:
        process.kill()
        process.wait()


@pytest.mark.parametrize("engine", ["single", "sharded"])
def test_the_log_rewrites_itself_past_its_growth_threshold(build_dir, folder, engine):
    """auto-aof-rewrite-percentage and auto-aof-rewrite-min-size, as Redis's: past both, the
    server runs BGREWRITEAOF itself (INFO aof_rewrites), the file shrinks back to about one
    record per key, and with the percentage at 0 it never does."""
    process = start(build_dir, folder, engine)
    try:
        conn = crash.Connection(str(folder / "s.sock"))
        assert conn.call("CONFIG", "GET", "auto-aof-rewrite-percentage") == [
            b"auto-aof-rewrite-percentage", b"100"]
        assert conn.call("CONFIG", "GET", "auto-aof-rewrite-min-size") == [
            b"auto-aof-rewrite-min-size", str(64 << 20).encode()]
        assert conn.call("CONFIG", "SET", "auto-aof-rewrite-percentage", "0") == "OK"
        assert conn.call("CONFIG", "SET", "auto-aof-rewrite-min-size", "64kb") == "OK"
        for i in range(1000):  # ~140 kB of overwrites of 10 keys
            conn.call("SET", f"k{i % 10}", "x" * 100)
        time.sleep(0.5)  # five of the checker's looks
        assert info_fields(conn)["aof_rewrites"] == "0"  # percentage 0: never
        assert conn.call("CONFIG", "SET", "auto-aof-rewrite-percentage", "100") == "OK"
        deadline = time.monotonic() + 30
        while info_fields(conn)["aof_rewrites"] != "1":
            assert time.monotonic() < deadline, info_fields(conn)
            time.sleep(0.05)
        size = log_size(folder)
        assert size < 64 * 1024, size  # the ten keys' RESTOREs, not 1000 SETs
        assert conn.call("GET", "k3") == b"x" * 100
    finally:
        process.kill()
        process.wait()
    assert "automatic append-only file rewrite" in (folder / "server.log").read_text()
