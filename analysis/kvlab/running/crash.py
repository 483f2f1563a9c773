"""Crash checker: how many acknowledged writes a server loses when it is killed.

`python3 -m kvlab crash` drives several connections of writes (SET, INCR, LPUSH,
HINCRBY, MSET, MULTI/EXEC), each recording what the server acknowledged, kills
the server with SIGKILL at a random moment, restarts it on the same folder and
compares what it loaded with what was acknowledged:

- lost: acknowledged writes missing after the restart (an INCR counter below
  its acknowledged count, a SET key absent, a list or hash field short);
- half-applied: an MSET or a MULTI/EXEC whose two keys disagree;
- the loss window: how long before the kill the first lost write had been
  acknowledged (the seconds' worth of writes lost; everysec's bound).

Each connection writes its own keys, so what it may expect is exact: after a
restart, a value is at least what was acknowledged and at most one more (the
write in flight at the kill may or may not have reached the log). The next
cycle starts from what the server loaded. Under `--appendfsync always` a
server must lose nothing; under everysec the loss window must stay within
`--max-window` seconds; under `no` it is reported.

kvlab-server (`--engines`) and redis-server (`--redis`, with `--appendonly
yes`, the reference) go through the same checker. The folder must be on a
real disk (fsync on tmpfs costs and proves nothing): the report names its
device and filesystem.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Union
from pathlib import Path

from ..tracking import machine

REPO = Path(__file__).resolve().parents[3]


# A RESP2 reply as read: status text, integer, bulk bytes or nil, or an array of them.
Reply = Union[str, int, bytes, None, list]


class RespError(Exception):
    """An error reply."""


class Connection:
    """A minimal blocking RESP2 client over a Unix socket."""

    def __init__(self, path: str, timeout: float = 10.0) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.buf = b""

    def close(self) -> None:
        self.sock.close()

    def send(self, *commands: list) -> None:
        out = []
        for args in commands:
            out.append(b"*%d\r\n" % len(args))
            for a in args:
                a = a if isinstance(a, bytes) else str(a).encode()
                out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        self.sock.sendall(b"".join(out))

    def _line(self) -> bytes:
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("connection closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def reply(self) -> Reply:
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise RespError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                chunk = self.sock.recv(65536)
                if not chunk:
                    raise ConnectionError("connection closed")
                self.buf += chunk
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return data
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self.reply() for _ in range(n)]
        raise ConnectionError(f"bad reply {line!r}")

    def call(self, *args: str | bytes | int) -> Reply:
        self.send(list(args))
        return self.reply()


@dataclass
class Server:
    """How to start one server on a folder: kvlab-server with an engine, or redis-server."""
    name: str
    argv: list[str]        # with {dir} and {sock} placeholders

    def start(self, folder: Path) -> subprocess.Popen:
        sock = folder / "s.sock"
        argv = [a.replace("{dir}", str(folder)).replace("{sock}", str(sock)) for a in self.argv]
        log = open(folder / "server.log", "ab")
        process = subprocess.Popen(argv, stdout=log, stderr=log, cwd=folder)
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"{self.name} exited {process.returncode} at start: "
                                   f"see {folder / 'server.log'}")
            try:
                conn = Connection(str(sock))
                try:
                    conn.call("PING")
                    return process
                finally:
                    conn.close()
            except (OSError, ConnectionError, RespError):
                if time.monotonic() > deadline:
                    process.kill()
                    raise RuntimeError(f"{self.name} did not answer within 60 s")
                time.sleep(0.02)


def kvlab_server(build: Path, engine: str, fsync: str) -> Server:
    binary = str(build.resolve() / "kvlab-server")  # the server runs in the folder
    return Server(engine, [binary, "--engine", engine, "--port", "0",
                           "--unixsocket", "{sock}", "--appendonly", "yes",
                           "--appendfsync", fsync, "--dir", "{dir}"])


def redis_server(fsync: str, binary: str = "redis-server") -> Server:
    return Server("redis-server", [binary, "--port", "0", "--unixsocket", "{sock}",
                                   "--save", "", "--appendonly", "yes", "--appendfsync", fsync,
                                   "--dir", "{dir}"])


@dataclass
class Expected:
    """What one connection had acknowledged of its own keys, and when."""
    incr: int = 0          # c:{w}
    lpush: int = 0         # l:{w} length
    hincr: int = 0         # h:{w} field f
    mset: int = 0          # m:{w}:a == m:{w}:b == mset
    multi: int = 0         # t:{w}:a == t:{w}:b == multi
    sets: int = 0          # s:{w}:0 .. s:{w}:{sets-1} exist, value = index
    # ack times (monotonic) of each op kind's n-th acknowledgement this cycle
    acked_at: dict = field(default_factory=dict)

    def ack(self, kind: str, count: int) -> None:
        self.acked_at.setdefault(kind, {})[count] = time.monotonic()


def _writer(path: str, w: int, expected: Expected, stop: threading.Event,
            rng: random.Random, counts: list) -> None:
    """Writes its own keys one command at a time until the server dies or `stop`."""
    try:
        conn = Connection(path)
    except OSError:
        return
    e = expected
    try:
        while not stop.is_set():
            kind = rng.choice(("set", "incr", "lpush", "hincr", "mset", "multi"))
            if kind == "set":
                conn.call("SET", f"s:{w}:{e.sets}", e.sets)
                e.sets += 1
                e.ack("set", e.sets)
            elif kind == "incr":
                conn.call("INCR", f"c:{w}")
                e.incr += 1
                e.ack("incr", e.incr)
            elif kind == "lpush":
                conn.call("LPUSH", f"l:{w}", e.lpush)
                e.lpush += 1
                e.ack("lpush", e.lpush)
            elif kind == "hincr":
                conn.call("HINCRBY", f"h:{w}", "f", 1)
                e.hincr += 1
                e.ack("hincr", e.hincr)
            elif kind == "mset":
                conn.call("MSET", f"m:{w}:a", e.mset + 1, f"m:{w}:b", e.mset + 1)
                e.mset += 1
                e.ack("mset", e.mset)
            else:
                conn.send(["MULTI"], ["INCR", f"t:{w}:a"], ["INCR", f"t:{w}:b"], ["EXEC"])
                for _ in range(3):
                    conn.reply()
                if conn.reply() is None:
                    raise RespError("EXEC aborted")
                e.multi += 1
                e.ack("multi", e.multi)
            counts[w] += 1
    except (OSError, ConnectionError):
        pass  # the server was killed: the write in flight is unknown
    finally:
        conn.close()


def _number(value: Reply) -> int:
    return 0 if value is None else int(value)


@dataclass
class CycleResult:
    acked: int = 0
    lost: int = 0
    half_applied: int = 0
    window_s: float = 0.0   # how long before the kill the earliest lost write was acked


def _check(conn: Connection, w: int, e: Expected, killed_at: float, result: CycleResult) -> None:
    """Compares connection w's keys with what it had acknowledged; then adopts what loaded."""
    def lost(kind: str, have: int, want: int) -> None:
        if have < want:
            result.lost += want - have
            first_lost_ack = e.acked_at.get(kind, {}).get(have + 1)
            if first_lost_ack is not None:
                result.window_s = max(result.window_s, killed_at - first_lost_ack)

    incr = _number(conn.call("GET", f"c:{w}"))
    lost("incr", incr, e.incr)
    lpush = conn.call("LLEN", f"l:{w}")
    lost("lpush", lpush, e.lpush)
    hincr = _number(conn.call("HGET", f"h:{w}", "f"))
    lost("hincr", hincr, e.hincr)
    a, b = (_number(v) for v in conn.call("MGET", f"m:{w}:a", f"m:{w}:b"))
    if a != b:
        result.half_applied += 1
    lost("mset", min(a, b), e.mset)
    ta, tb = (_number(v) for v in conn.call("MGET", f"t:{w}:a", f"t:{w}:b"))
    if ta != tb:
        result.half_applied += 1
    lost("multi", min(ta, tb), e.multi)
    present = 0
    for start in range(0, e.sets, 500):
        keys = [f"s:{w}:{i}" for i in range(start, min(e.sets, start + 500))]
        values = conn.call("MGET", *keys)
        for i, v in zip(range(start, start + len(keys)), values):
            if v is not None and int(v) == i:
                present = i + 1 if present == i else present
    # SET keys are written in index order by one connection: the loaded ones
    # are a prefix; a missing acknowledged one counts as lost.
    lost("set", present, e.sets)
    # The next cycle starts from what loaded (an in-flight write may have landed).
    e.incr, e.lpush, e.hincr, e.mset, e.multi = incr, lpush, hincr, min(a, b), min(ta, tb)
    e.sets = present
    e.acked_at = {}


@dataclass
class Totals:
    server: str
    cycles: int = 0
    acked: int = 0
    lost: int = 0
    half_applied: int = 0
    max_window_s: float = 0.0


def run_cycles(server: Server, folder: Path, cycles: int, connections: int = 4,
               min_run_s: float = 0.2, max_run_s: float = 1.0, seed: int = 1) -> Totals:
    """`cycles` kill-and-restart cycles of `server` on `folder` (emptied first)."""
    folder = folder.resolve()
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    rng = random.Random(seed)
    expected = [Expected() for _ in range(connections)]
    totals = Totals(server.name)
    process = server.start(folder)
    try:
        for _ in range(cycles):
            stop = threading.Event()
            counts = [0] * connections
            threads = [threading.Thread(target=_writer,
                                        args=(str(folder / "s.sock"), w, expected[w], stop,
                                              random.Random(rng.random()), counts))
                       for w in range(connections)]
            for t in threads:
                t.start()
            time.sleep(rng.uniform(min_run_s, max_run_s))
            process.send_signal(signal.SIGKILL)
            killed_at = time.monotonic()
            process.wait()
            stop.set()
            for t in threads:
                t.join()
            process = server.start(folder)
            result = CycleResult(acked=sum(counts))
            conn = Connection(str(folder / "s.sock"))
            try:
                for w in range(connections):
                    _check(conn, w, expected[w], killed_at, result)
            finally:
                conn.close()
            totals.cycles += 1
            totals.acked += result.acked
            totals.lost += result.lost
            totals.half_applied += result.half_applied
            totals.max_window_s = max(totals.max_window_s, result.window_s)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return totals


def describe_disk(folder: Path) -> str:
    """The device and filesystem type of `folder` (/proc/self/mountinfo), e.g.
    "/dev/vda (ext4)"."""
    folder.mkdir(parents=True, exist_ok=True)
    disk = machine.folder_disk(folder)
    return f"{disk['device']} ({disk['fstype']})"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--build", type=Path, default=Path(os.environ.get("KVLAB_BUILD_DIR",
                                                                      REPO / "build")),
                   help="build folder holding kvlab-server (default: $KVLAB_BUILD_DIR, else build)")
    p.add_argument("--engines", default="single,sharded,concurrent,striped,owner",
                   help="kvlab-server engines to check, comma-separated")
    p.add_argument("--redis", default="redis-server",
                   help="redis-server binary for the reference row ('' to leave it out)")
    p.add_argument("--fsync", default="always,everysec",
                   help="appendfsync policies, comma-separated: always,everysec,no")
    p.add_argument("--cycles", type=int, default=20, help="kill-restart cycles per server")
    p.add_argument("--connections", type=int, default=4)
    p.add_argument("--dir", type=Path, default=REPO / "build" / "crash-check",
                   help="working folder, on a real disk (default: build/crash-check)")
    p.add_argument("--max-window", type=float, default=2.5,
                   help="everysec: the most seconds' worth of writes a crash may lose")
    p.add_argument("--seed", type=int, default=1)


def main(args: argparse.Namespace) -> int:
    """0 when no policy broke its promise, 1 otherwise."""
    print(f"crash check: {args.cycles} SIGKILL cycles per server, {args.connections} "
          f"connections, folder {args.dir} on {describe_disk(args.dir)}")
    print(f"{'server':<14}{'fsync':<10}{'cycles':>7}{'acked':>9}{'lost':>7}{'half':>6}"
          f"{'window s':>10}  verdict")
    failed = False
    for fsync in [f for f in args.fsync.split(",") if f]:
        servers = [kvlab_server(args.build, e, fsync) for e in args.engines.split(",") if e]
        if args.redis:
            servers.append(redis_server(fsync, args.redis))
        for server in servers:
            totals = run_cycles(server, args.dir / f"{server.name}-{fsync}", args.cycles,
                                args.connections, seed=args.seed)
            ok = totals.half_applied == 0
            if fsync == "always":
                ok = ok and totals.lost == 0
            elif fsync == "everysec":
                ok = ok and totals.max_window_s <= args.max_window
            failed = failed or not ok
            print(f"{server.name:<14}{fsync:<10}{totals.cycles:>7}{totals.acked:>9}"
                  f"{totals.lost:>7}{totals.half_applied:>6}{totals.max_window_s:>10.3f}  "
                  f"{'ok' if ok else 'FAILED'}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(parser)
    sys.exit(main(parser.parse_args()))
