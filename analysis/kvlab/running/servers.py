"""Starting and stopping the server under test: kvlab-server, Debian's redis-server, a
Redis Cluster of redis-servers, or any RESP server given by a command line (a `command`
row; a `command-cluster` row is N of them in cluster mode).

A ServerProcess owns one child process: it is started pinned to the experiment's
server CPUs (taskset), optionally inside the emulated link's server namespace,
waited for (kvlab-server's ready line, then a PING answered over its Unix
socket), and always stopped by the caller (use it as a context manager). Every local
start gets a layout of its own: ASLR on and a random environment padding (layout.py). Given a
hosts.Host it runs the same server on that host instead (multi-host runs: multihost.py).
A RedisClusterProcess does the same for N redis-servers with cluster-enabled,
each pinned to one server CPU, the 16384 slots split evenly among them as the
owner engine splits them (base/hash_slot.h). A CommandServerProcess and a
CommandClusterProcess do the same for a command row (running/commands.py): started in a
process group of its own, which SIGTERM and then SIGKILL end; ready when it answers PING
over TCP (an error reply, an exit or a timeout is a ServerError naming the row, with the
tail of its output); its CPU is its process tree's (kvlab-load --server-pids) and its
memory /proc's RSS and PSS beside INFO used_memory where it reports one.
`server_process()` picks the class.
Not thread-safe: one runner thread drives it.
"""

from __future__ import annotations

import os
import random
import shlex
import shutil
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Callable, TextIO

from . import commands
from .cpus import format_cpu_list
from ..schema.specs import ServerSpec
from .hosts import Host, HostError
from .layout import layout_env

READY_LINE = "kvlab-server ready"
START_TIMEOUT_S = 15.0
# On another host the start includes a login (ssh) and the host's own start-up.
HOST_START_TIMEOUT_S = 30.0
# What the shell that starts a server on a host prints first: its pid, the server's.
PID_MARK = "kvlab-remote-pid"


class ServerError(Exception):
    """The server could not be started or died; the message says why."""


def free_tcp_port() -> int:
    """A TCP port free now, from below the ephemeral range (free_tcp_ports): a port from
    bind(0) is one the kernel also hands to outgoing connections, and between this call
    and the server's own bind one of kvlab-load's (50 a round) can take it. A default
    run lost a round to that: `cannot listen on 127.0.0.1:35595: Address already in
    use`."""
    return free_tcp_ports(1)


def _ephemeral_range() -> tuple[int, int]:
    """The kernel's range for bind(0) and outgoing connections' local ports."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999  # Linux's default


def free_tcp_ports(count: int, attempts: int = 200) -> int:
    """The first of `count` consecutive ports that are free now (--shard-ports BASE).

    From below the ephemeral range: a range taken from bind(0) can hold the
    server's own main port (the kernel may hand a released port out again)
    or an outgoing connection's. The base is random, so parallel runs rarely
    pick the same one."""
    low, high = 10000, _ephemeral_range()[0]
    if high < low + 100 * count:
        low, high = _ephemeral_range()[1] + 1, 65536
    if high < low + 100 * count:  # the ephemeral range is (nearly) every port
        low, high = 1024, 65536
    for _ in range(attempts):
        base = random.randrange(low, high - count + 1)
        if all(_bindable(port) for port in range(base, base + count)):
            return base
    raise ServerError(f"no {count} consecutive free TCP ports")


HASH_SLOTS = 16384
CLUSTER_BUS_OFFSET = 10000  # a Redis Cluster node also listens on port + 10000


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def free_cluster_port(attempts: int = 200) -> int:
    """A free port whose cluster bus port (+10000) is free too, so at most 55535."""
    for _ in range(attempts):
        port = free_tcp_port()
        if port + CLUSTER_BUS_OFFSET <= 65535 and _bindable(port + CLUSTER_BUS_OFFSET):
            return port
    for port in range(20000, 55535, 7):  # a scan when bind(0) keeps giving high ports
        if _bindable(port) and _bindable(port + CLUSTER_BUS_OFFSET):
            return port
    raise ServerError("no free TCP port with a free cluster bus port")


def first_slot(owner: int, owners: int) -> int:
    """Owner `owner`'s first slot of `owners` even ranges (base/hash_slot.h FirstSlotOf)."""
    return owner * HASH_SLOTS // owners


def ping_unix(path: str, timeout: float = 1.0) -> bool:
    """True when a RESP server answers PING with +PONG on the Unix socket at `path`."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(timeout)
            connection.connect(path)
            connection.sendall(b"*1\r\n$4\r\nPING\r\n")
            return connection.recv(64).startswith(b"+PONG")
    except OSError:
        return False


def log_arguments(spec: ServerSpec, log_dir: Path | None) -> list[str]:
    """--appendonly and the log's policy and folder, as both kvlab-server and redis-server
    spell them: a row with `appendfsync` keeps its log in `log_dir`; any other keeps none."""
    if not spec.appendfsync:
        return ["--appendonly", "no"]
    if log_dir is None:
        raise ServerError(f"server {spec.name} keeps an append-only log "
                          f"(appendfsync {spec.appendfsync}) but was given no folder for it")
    return ["--appendonly", "yes", "--appendfsync", spec.appendfsync, "--dir", str(log_dir)]


def server_command(spec: ServerSpec, build_dir: Path, port: int, bind: str,
                   unix_socket: str, shard_ports: int | None = None,
                   log_dir: Path | None = None) -> list[str]:
    if spec.kind == "redis":
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        # No RDB snapshots and no config file: an in-memory reference row, with an
        # append-only log only where the row asks for one.
        return [binary, "--port", str(port), "--bind", bind, "--unixsocket", unix_socket,
                "--unixsocketperm", "700", "--save", "", *log_arguments(spec, log_dir),
                "--protected-mode", "no", "--daemonize", "no", "--loglevel", "warning"] + (
                    # Redis 7's threaded I/O: reads and writes of sockets on N threads,
                    # commands still on the main one.
                    ["--io-threads", str(spec.io_threads), "--io-threads-do-reads", "yes"]
                    if spec.io_threads and spec.io_threads > 1 else [])
    command = [str(build_dir / "kvlab-server"), "--engine", spec.engine, "--port", str(port),
               "--bind", bind, "--unixsocket", unix_socket]
    if spec.appendfsync:
        command += log_arguments(spec, log_dir)
    if spec.shards is not None:
        command += ["--shards", str(spec.shards)]
    if spec.hop is not None:
        command += ["--hop", spec.hop]
    if spec.stripes is not None:
        command += ["--stripes", str(spec.stripes)]
    if spec.multikey is not None:
        command += ["--multikey", spec.multikey]
    if spec.stage_sample is not None:
        command += ["--stage-sample", str(spec.stage_sample)]
    if spec.io_threads is not None:
        command += ["--io-threads", str(spec.io_threads)]
    if shard_ports is not None:
        command += ["--shard-ports", str(shard_ports)]
    if bind != "127.0.0.1":
        # Protected mode refuses non-loopback clients; the remote link's client is one.
        # The link's namespaces reach nothing else, so nobody else can connect.
        command += ["--protected-mode", "no"]
    return command


def launch_prefix(cpus: str | None, netns: str | None) -> list[str]:
    """`ip netns exec NS` and `taskset -c CPUS` both exec() their command, so the child's
    pid is the program itself (its /proc CPU times and its exit status are the program's)."""
    prefix = []
    if netns:
        prefix += ["ip", "netns", "exec", netns]
    if cpus:
        prefix += ["taskset", "-c", cpus]
    return prefix


# ---- passwords ------------------------------------------------------------------------
# The password of each started server whose command has {password} (commands.py), by the
# addresses it listens on: the runner's own connections find it by the address they
# dial (connect), kvlab-load's command lines by the target they name
# (password_arguments). A server's start puts it here and its stop takes it out.
_PASSWORDS: dict[str | tuple[str, int], str] = {}


class AuthRefused(ConnectionError):
    """The server answered AUTH with an error (its text, never the password)."""


def target_address(target: str) -> str | tuple[str, int]:
    """The address of a kvlab-load target: a Unix socket path, or (host, port)."""
    if target.startswith("unix://"):
        return target[len("unix://"):]
    host, _, port = target.removeprefix("tcp://").rpartition(":")
    return host.strip("[]"), int(port)


def remember_password(addresses: list[str | tuple[str, int]], password: str) -> None:
    for address in addresses:
        _PASSWORDS[address] = password


def forget_password(addresses: list[str | tuple[str, int]]) -> None:
    for address in addresses:
        _PASSWORDS.pop(address, None)


def password_arguments(target: str) -> list[str]:
    """kvlab-load's --password for a target whose server has one; [] for the others."""
    password = _PASSWORDS.get(target_address(target))
    return ["--password", password] if password else []


def connect(address: str | tuple[str, int], timeout: float,
            authenticate: bool = True) -> socket.socket:
    """A connected socket to a Unix socket path or a (host, port); OSError when refused.
    A server with a password (remember_password) gets AUTH first unless `authenticate`
    is False; AuthRefused when it answers an error."""
    family = socket.AF_UNIX if isinstance(address, str) else socket.AF_INET
    connection = socket.socket(family, socket.SOCK_STREAM)
    try:
        connection.settimeout(timeout)
        connection.connect(address)
        password = _PASSWORDS.get(address) if authenticate else None
        if password:
            connection.sendall(commands.encode(["AUTH", password]))
            reply = b""
            while not reply.endswith(b"\r\n"):
                chunk = connection.recv(1)
                if not chunk:
                    raise EOFError("the server closed the connection after AUTH")
                reply += chunk
            if not reply.startswith(b"+"):
                raise AuthRefused(reply[1:-2].decode(errors="replace"))
    except (OSError, EOFError):
        connection.close()
        raise
    return connection


def call_unix(path: str | tuple[str, int], *args: str, timeout: float = 30.0) -> str | None:
    """One command over the Unix socket at `path` (or a (host, port)); a status or bulk reply
    as text, None when the server does not answer or replies with an error. Any RESP server
    speaks it."""
    request = f"*{len(args)}\r\n" + "".join(f"${len(a)}\r\n{a}\r\n" for a in args)
    try:
        with connect(path, timeout) as connection:
            connection.sendall(request.encode())
            data = b""
            while b"\r\n" not in data:
                chunk = connection.recv(65536)
                if not chunk:
                    return None
                data += chunk
            header, _, body = data.partition(b"\r\n")
            if header.startswith(b"+"):
                return header[1:].decode()
            if not header.startswith(b"$"):
                return None
            length = int(header[1:])
            while len(body) < length:
                chunk = connection.recv(65536)
                if not chunk:
                    return None
                body += chunk
            return body[:length].decode(errors="replace")
    except (OSError, ValueError):
        return None


def requests(address: str | tuple[str, int], batch: list[list[str]],
             timeout: float = 5.0, authenticate: bool = True) -> list[object]:
    """Sends `batch` on one connection, one request after another, and returns the replies
    as commands.read_reply reads them (an error reply is a commands.RespError); OSError or
    EOFError when the server does not answer (AuthRefused: it refused the password)."""
    with connect(address, timeout, authenticate) as connection, \
            connection.makefile("rb") as stream:
        replies = []
        for args in batch:
            connection.sendall(commands.encode(args))
            replies.append(commands.read_reply(stream))
        return replies


def ping_reply(address: str | tuple[str, int], timeout: float = 0.5,
               authenticate: bool = True) -> object:
    """The reply to PING ("PONG", or a commands.RespError; "AUTH ..." when the server
    refused the password), None when nothing answers."""
    try:
        return requests(address, [["PING"]], timeout, authenticate)[0]
    except AuthRefused as refusal:
        return commands.RespError(f"AUTH {refusal}")
    except (OSError, EOFError, ValueError):
        return None


def identify_on_host(host: Host, argv: list[str], label: str | None,
                     binary: str | None = None) -> commands.Identity:
    """commands.identify for a server on another host, asked over the host's command
    channel (the runner may not reach the server itself): the binary as the host's shell
    finds it, its SHA-256 (sha256sum) and the first line of its --version. A host that
    does not answer leaves them unknown; the row is still measured."""
    word = shlex.quote(binary or argv[0])
    script = (f"p=$(command -v {word}) || p={word}; echo \"$p\"; "
              "sha256sum \"$p\" 2>/dev/null | cut -d' ' -f1; "
              "\"$p\" --version </dev/null 2>/dev/null | head -n 1")
    try:
        lines = host.run(script).splitlines() + ["", "", ""]
    except HostError:
        lines = [binary or argv[0], "", ""]
    path, digest, version_line = (line.strip() for line in lines[:3])
    if label:
        version, source = label, "label"
    elif version_line:
        version, source = version_line[:200], "--version"
    else:
        version, source = None, "unknown"
    return commands.Identity(path=f"{host.name}:{path}", sha256=digest or None,
                             version=version, version_source=source, label=label)


def process_tree(roots: list[int]) -> list[int]:
    """`roots` (those alive) and their live descendants, from /proc/*/stat: the processes
    of a server started through a wrapper or one that forks."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "stat").read_text()
        except OSError:
            continue
        fields = text[text.rfind(")") + 2:].split()
        if len(fields) > 1:
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    tree = [pid for pid in dict.fromkeys(roots) if pid and Path(f"/proc/{pid}").exists()]
    for pid in tree:  # grows as it goes: breadth first
        tree += [child for child in children.get(pid, []) if child not in tree]
    return tree


def tree_memory(roots: list[int]) -> tuple[int, int] | None:
    """(RSS, PSS) in bytes summed over the process tree (/proc/PID/smaps_rollup); None when
    the root cannot be read. PSS shares each page among the processes that map it, so a
    server of several processes is not counted twice."""
    rss = pss = 0
    read = False
    for pid in process_tree(roots):
        try:
            text = Path(f"/proc/{pid}/smaps_rollup").read_text()
        except OSError:
            continue
        for line in text.splitlines():
            name, _, value = line.partition(":")
            if name in ("Rss", "Pss"):
                kib = int(value.split()[0]) * 1024
                rss, pss = (rss + kib, pss) if name == "Rss" else (rss, pss + kib)
        read = True
    return (rss, pss) if read else None


def info_unix(path: str, section: str) -> dict[str, str]:
    """INFO <section> as {field: value}; {} when not answered."""
    fields = {}
    for line in (call_unix(path, "INFO", section) or "").splitlines():
        name, sep, value = line.partition(":")
        if sep and not name.startswith("#"):
            fields[name] = value
    return fields


def keyspace_keys(info: dict[str, str]) -> int:
    """Keys in db0 from INFO keyspace's `db0:keys=N,expires=...` (0 when empty)."""
    for part in info.get("db0", "").split(","):
        name, _, value = part.partition("=")
        if name == "keys":
            return int(value)
    return 0


class _Server:
    """What every server process object shares: its address, its log, use as a context
    manager. A subclass sets spec, bind, port, unix_socket and log_path, and defines
    start() and stop()."""

    spec: ServerSpec
    bind: str
    port: int
    unix_socket: str
    log_path: Path

    def target(self, transport: str = "tcp") -> str:
        if transport == "unix":
            return f"unix://{self.unix_socket}"
        return f"tcp://{self.bind}:{self.port}"

    @property
    def control(self) -> str | tuple[str, int]:
        """Where the runner's own requests (INFO, FLUSHALL, probes) go: the Unix socket."""
        return self.unix_socket

    @property
    def pids(self) -> list[int]:
        """The server's processes on this machine (every node's; a command row's whole
        tree)."""
        return [self.pid] if self.pid else []

    def identify(self) -> commands.Identity:
        """The build this row runs (commands.identify): asked of the running server."""
        argv = self.program if hasattr(self, "program") else self.programs[0]
        if getattr(self, "host", None) is not None:
            return identify_on_host(self.host, argv, self.spec.version, self.spec.binary)
        info = info_unix(self.control, "server")
        return commands.identify(argv, info, self.spec.version, self.spec.binary)

    def check_point(self, command: str, value_shape: str = "string") -> None:
        """A command row: sends the server each RESP command the point needs once (first
        time only) and raises ServerError naming the row when it refuses one; other rows
        pass (their commands are known)."""
        if not self.spec.is_command:
            return
        checked = self.__dict__.setdefault("_checked", set())
        needed = [c for c in commands.needed_commands(command, value_shape) if c not in checked]
        if not needed:
            return
        batch = commands.probe_requests(needed) + [commands.cleanup_request()]
        try:
            replies = requests(self.control, batch, timeout=10.0)
        except (OSError, EOFError, ValueError) as error:
            raise ServerError(f"server {self.spec.name} did not answer the probe of "
                              f"{', '.join(needed)} (for {command}): {error}; "
                              f"log {self.log_path}: {self.log_tail()}") from None
        for name, reply in zip(needed, replies):
            refusal = commands.refused(reply)
            if refusal is not None:
                raise ServerError(f"server {self.spec.name} answered -{refusal} to {name}, "
                                  f"which {command} points need: this row cannot measure "
                                  "them")
        checked.update(needed)

    def log_tail(self, lines: int = 3) -> str:
        try:
            text = self.log_path.read_text().strip().splitlines()
        except OSError:
            return ""
        return " | ".join(text[-lines:])

    def start(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def _check_alive(self) -> None:
        raise NotImplementedError

    def _wait_until(self, ready: Callable[[], bool], deadline: float, what: str,
                    pause: float = 0.05) -> None:
        """Polls `ready` every `pause` seconds until it holds. A process that died ends
        the wait (_check_alive raises); so does `deadline` (time.monotonic()), which
        stops the server and raises ServerError "WHAT (log: ...)"."""
        while not ready():
            self._check_alive()
            if time.monotonic() > deadline:
                self.stop()
                raise ServerError(f"{what} (log: {self.log_path})")
            time.sleep(pause)

    def __enter__(self) -> "_Server":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class ServerProcess(_Server):
    """kvlab-server or redis-server, on this machine (pinned with taskset, optionally in
    the network namespace `netns`) or, given `host`, on that host through its command
    channel (hosts.Host: ssh or `ip netns exec`), listening on the host's address with
    protected mode off (its clients come from other hosts). Either way the process's
    output is copied to `log_path` here, and start() waits for kvlab-server's ready line.
    On this machine it then waits for a PING answered over the Unix socket (the caller
    probes a host's server from its clients: multihost.py); on a host, stop() ends the
    server by its pid there (the shell that starts it prints it, PID_MARK)."""

    def __init__(self, spec: ServerSpec, build_dir: Path, work_dir: Path, log_path: Path,
                 cpus: str | None, netns: str | None = None, bind: str = "127.0.0.1",
                 host: "Host | None" = None, port: int | None = None,
                 aof_dir: Path | None = None) -> None:
        self._place(spec, log_path, cpus, netns, bind, host, port)
        # A row with appendfsync: the folder of its append-only log, emptied at each start.
        # Absolute: redis-server moves into its --dir before it opens its other paths.
        self.aof_dir = aof_dir.absolute() if spec.appendfsync and aof_dir else None
        # A port chosen here, not by the caller, may be moved when the start finds it taken.
        self._movable_port = port is None and host is None
        if host is None:
            self.unix_socket = str(work_dir / f"{spec.name}.sock")
            self._build_dir = build_dir
            self._local_command()
        else:
            self.unix_socket = f"/tmp/kvlab-server-{self.port}.sock"
            self.program = server_command(spec, Path(host.build_dir()), self.port, self.bind,
                                          self.unix_socket)
            if spec.kind == "redis":
                self.program[0] = "redis-server"  # the host's own, found on its PATH
            if "--protected-mode" not in self.program:
                self.program += ["--protected-mode", "no"]  # clients come from other hosts
            # The shell prints its pid, then becomes the server: that pid is the server's.
            self.shell_command = (f"echo {PID_MARK} $$; exec " + " ".join(
                shlex.quote(w) for w in launch_prefix(cpus, None) + self.program))
            self.command = host.command(self.shell_command)
        self._fresh()

    def _local_command(self) -> None:
        """self.program and self.command for this machine, on self.port."""
        spec = self.spec
        # owner with route = "slots": thread i also on BASE + i, as CLUSTER SLOTS says.
        shard_ports = (free_tcp_ports(int(spec.io_threads or 1))
                       if spec.kind == "kvlab" and spec.routes_by_slots else None)
        self.program = server_command(spec, self._build_dir, self.port, self.bind,
                                      self.unix_socket, shard_ports, self.aof_dir)
        self.command = launch_prefix(self.cpus, self.netns) + self.program

    def _place(self, spec: ServerSpec, log_path: Path, cpus: str | None, netns: str | None,
               bind: str, host: "Host | None", port: int | None) -> None:
        """Where the server runs: its spec, CPUs, namespace, address, host and log."""
        self.spec = spec
        self.cpus = cpus
        self.netns = netns
        self.host = host
        self.bind = host.address if host else bind
        self.port = port or free_tcp_port()
        self.log_path = log_path

    # The environment padding of every start (None: random per start; layout.py), and
    # the last start's.
    fixed_pad: int | None = None
    env_pad: int | None = None

    def _fresh(self) -> None:
        """The state of a server not started yet."""
        self._process: subprocess.Popen | None = None
        self._ready = threading.Event()
        self._remote_pid: int | None = None
        self.empty_memory: tuple | None = None  # memory() once started
        self.filled = False  # set by the runner after the first prefill (memory.csv's RSS)
        self._reader: threading.Thread | None = None

    def _where(self) -> str:
        return f"server host {self.host.name}: " if self.host else ""

    # Starts tried on a new port after the chosen one was taken (`Address already in use`).
    PORT_ATTEMPTS = 3
    _movable_port = False  # set by __init__; a subclass's own start keeps its port

    def start(self) -> None:
        """Starts the server and waits until it answers. A port this object chose is free
        when chosen, not when the server binds it: another run's probe may pick it in
        between (make test runs two timed tests side by side; one lost a run to redis-server's
        `bind: Address already in use`), so such a start is tried again on another port."""
        for attempt in range(1, self.PORT_ATTEMPTS + 1):
            try:
                self._start_once()
                return
            except ServerError as error:
                if not (self._movable_port and attempt < self.PORT_ATTEMPTS
                        and "Address already in use" in str(error)):
                    raise
                self.stop()
                self._fresh()
                self.port = free_tcp_port()
                self._local_command()

    def _start_once(self) -> None:
        if self.host is None:
            if not Path(self.program[0]).exists():
                raise ServerError(f"{self.program[0]} not found (build it: make build)")
            Path(self.unix_socket).unlink(missing_ok=True)
            self._empty_aof_dir()
        # Here appended: a server is started afresh in every round, into the same log.
        log = self.log_path.open("w" if self.host else "a")
        log.write(commands.redact(f"$ on {self.host.name}: {self.shell_command}\n" if self.host
                                  else "$ " + " ".join(self.command) + "\n", self.secret()))
        log.flush()
        self._launch(log, f"{self._where()}cannot start {self.command[0]}")
        timeout = HOST_START_TIMEOUT_S if self.host else START_TIMEOUT_S
        deadline = time.monotonic() + timeout
        if self.spec.kind == "kvlab" or self.host:
            waited = "did not start" if self.host else f"no '{READY_LINE}' line"
            self._wait_until(lambda: self._ready.wait(0.05), deadline,
                             f"{self._where()}{self.spec.name} {waited} within {timeout:.0f} s",
                             pause=0)
        if self.host:
            return
        self._wait_until(lambda: ping_unix(self.unix_socket, timeout=0.5), deadline,
                         f"no PONG on {self.unix_socket} within {timeout:.0f} s")
        self.empty_memory = self.memory()
        self.filled = False

    def _launch(self, log: TextIO, failure: str, **options: object) -> None:
        """Starts self.command, its output copied into `log` by a thread of its own; an
        OSError becomes ServerError("FAILURE: why"). `options`: Popen's, besides these."""
        if self.host is None:
            # a layout of its own: ASLR, and a random environment padding (layout.py)
            env, self.env_pad = layout_env(pad=self.fixed_pad)
            options.setdefault("env", env)
        try:
            self._process = subprocess.Popen(self.command, stdin=subprocess.DEVNULL,
                                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                             text=True, bufsize=1, **options)
        except OSError as error:
            log.close()
            raise ServerError(f"{failure}: {error.strerror}") from None
        self._reader = threading.Thread(target=self._copy_output, args=(log,), daemon=True)
        self._reader.start()

    def secret(self) -> str | None:
        """A password that no log line may show (a command row's {password})."""
        return None

    def _copy_output(self, log: TextIO) -> None:
        assert self._process is not None and self._process.stdout is not None
        secret = self.secret()
        with log:
            for line in self._process.stdout:
                log.write(commands.redact(line, secret))
                log.flush()
                words = line.split()
                if self.host and len(words) == 2 and words[0] == PID_MARK \
                        and words[1].isdigit():
                    self._remote_pid = int(words[1])
                    if self.spec.kind != "kvlab":
                        self._ready.set()  # no ready line but kvlab's: the PONG probe waits
                elif line.startswith(READY_LINE):
                    self._ready.set()

    def death_reason(self) -> str:
        """Why the server ended, with the last lines of its log."""
        code = None if self._process is None else self._process.returncode
        return (f"{self._where()}{self.spec.name} exited with status {code} "
                f"(log: {self.log_path}): {self.log_tail()}")

    def _check_alive(self) -> None:
        if not self.alive():
            raise ServerError(self.death_reason())

    def alive(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def pid(self) -> int | None:
        """The server's pid: here, the child's; on a host, the one it has there."""
        if self.host:
            return self._remote_pid
        return self._process.pid if self.alive() else None

    def memory(self) -> tuple[int, int, int] | None:
        """(used_memory, used_memory_rss, keys) from INFO; None when not answered."""
        memory = info_unix(self.unix_socket, "memory")
        keyspace = info_unix(self.unix_socket, "keyspace")
        try:
            return (int(memory["used_memory"]), int(memory["used_memory_rss"]),
                    keyspace_keys(keyspace))
        except (KeyError, ValueError):
            return None

    def flush(self) -> bool:
        return call_unix(self.control, "FLUSHALL") == "OK"

    def stop(self) -> None:
        if self._process is None:
            return
        if self.host:
            self._stop_on_host()
        elif self._process.poll() is None:
            self._process.send_signal(signal.SIGTERM)
            try:
                self._process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        if self._reader is not None:
            self._reader.join(timeout=2)
        if self.host is None:
            Path(self.unix_socket).unlink(missing_ok=True)
            self._empty_aof_dir()

    def _empty_aof_dir(self) -> None:
        """The log folder emptied: before a start, so that no start replays the last one's
        log, and after a stop, so that the run folder does not keep it."""
        if self.aof_dir is not None:
            shutil.rmtree(self.aof_dir, ignore_errors=True)
            self.aof_dir.mkdir(parents=True)

    def _stop_on_host(self) -> None:
        """SIGTERM to the server's pid on its host, SIGKILL after 10 s; then the session
        (ssh or netns) that ran it ends."""
        if self.alive() and self._remote_pid is not None:
            try:
                self.host.run(f"kill -TERM {self._remote_pid}")
            except HostError:
                pass  # gone already, or the host is unreachable: the session ends below
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                try:
                    self.host.run(f"kill -KILL {self._remote_pid}")
                except HostError:
                    pass
        if self.alive():
            self._process.kill()
        self._process.wait()


def cluster_node_command(port: int, bind: str, unix_socket: str, config_file: str) -> list[str]:
    """One Redis Cluster node: the plain redis row's settings plus cluster-enabled."""
    binary = shutil.which("redis-server") or "/usr/bin/redis-server"
    return [binary, "--port", str(port), "--bind", bind, "--unixsocket", unix_socket,
            "--unixsocketperm", "700", "--save", "", "--appendonly", "no",
            "--protected-mode", "no", "--daemonize", "no", "--loglevel", "warning",
            "--cluster-enabled", "yes", "--cluster-config-file", config_file,
            "--cluster-node-timeout", "15000"]


def _cpu_list(cpus: str | None) -> list[str]:
    """"0-2,5" as ["0", "1", "2", "5"]; [] for no pinning."""
    result = []
    for part in (cpus or "").split(","):
        if not part:
            continue
        first, _, last = part.partition("-")
        result += [str(c) for c in range(int(first), int(last or first) + 1)]
    return result


CLUSTER_TIMEOUT_S = 30.0


class RedisClusterProcess(_Server):
    """N redis-server nodes with cluster-enabled yes, node i pinned to the i-th server CPU
    (round-robin when there are fewer CPUs): each node takes its even range of the 16384
    slots (CLUSTER ADDSLOTSRANGE), node 0 MEETs the others, and start() returns once every
    node reports cluster_state:ok with all 16384 slots assigned. The same interface as
    ServerProcess; `pid` is node 0's, `pids` every node's."""

    def __init__(self, spec: ServerSpec, work_dir: Path, log_path: Path, cpus: str | None,
                 netns: str | None = None, bind: str = "127.0.0.1") -> None:
        self.spec = spec
        self.cpus = cpus
        self.netns = netns
        self.bind = bind
        self.log_path = log_path
        count = int(spec.nodes or 1)
        pinned = _cpu_list(cpus)
        self.ports = []
        while len(self.ports) < count:
            port = free_cluster_port()
            if port not in self.ports:
                self.ports.append(port)
        self.sockets = [str(work_dir / f"{spec.name}-{i}.sock") for i in range(count)]
        self.config_files = [str(work_dir / f"{spec.name}-{i}.nodes.conf") for i in range(count)]
        self.node_cpus = [pinned[i % len(pinned)] if pinned else None for i in range(count)]
        self.programs = [self._node_program(i, work_dir) for i in range(count)]
        self.commands = [launch_prefix(self.node_cpus[i], netns) + self.programs[i]
                         for i in range(count)]
        self.port = self.ports[0]
        self.unix_socket = self.sockets[0]
        self._processes: list[subprocess.Popen] = []
        self._log = None
        self.empty_memory: tuple[int, int, int] | None = None
        self.filled = False

    def _node_program(self, index: int, work_dir: Path) -> list[str]:
        return cluster_node_command(self.ports[index], self.bind, self.sockets[index],
                                    self.config_files[index])

    def _spawn(self, command: list[str]) -> subprocess.Popen:
        return subprocess.Popen(command, stdout=self._log, stderr=subprocess.STDOUT,
                                env=layout_env()[0])

    def _wait_for_nodes(self, deadline: float) -> None:
        for path in self.sockets:
            self._wait_until(lambda: ping_unix(path, timeout=0.5), deadline,
                             f"no PONG on {path} within {CLUSTER_TIMEOUT_S:.0f} s")

    def start(self) -> None:
        for path in self.sockets + self.config_files:
            Path(path).unlink(missing_ok=True)
        self._log = self.log_path.open("a")
        for command in self.commands:
            self._log.write("$ " + " ".join(command) + "\n")
            self._log.flush()
            try:
                self._processes.append(self._spawn(command))
            except OSError as error:
                self.stop()
                raise ServerError(f"{self.spec.name}: cannot start {command[0]}: "
                                  f"{error.strerror}") from None
        deadline = time.monotonic() + CLUSTER_TIMEOUT_S
        self._wait_for_nodes(deadline)
        count = len(self.ports)
        for i, path in enumerate(self.sockets):
            last = first_slot(i + 1, count) - 1
            if call_unix(path, "CLUSTER", "ADDSLOTSRANGE", str(first_slot(i, count)),
                         str(last)) != "OK":
                self.stop()
                raise ServerError(f"CLUSTER ADDSLOTSRANGE refused by node {i} "
                                  f"(log: {self.log_path})")
        for port in self.ports[1:]:
            if call_unix(self.sockets[0], "CLUSTER", "MEET", self.bind, str(port)) != "OK":
                self.stop()
                raise ServerError(f"CLUSTER MEET {self.bind} {port} refused "
                                  f"(log: {self.log_path})")
        self._wait_until(self.cluster_ok, deadline, "cluster_state not ok on every node "
                         f"within {CLUSTER_TIMEOUT_S:.0f} s", pause=0.1)
        self.empty_memory = self.memory()
        self.filled = False

    def cluster_ok(self) -> bool:
        """Every node: cluster_state:ok, all 16384 slots assigned, every node known."""
        for path in self.sockets:
            fields = {}
            for line in (call_unix(path, "CLUSTER", "INFO") or "").splitlines():
                name, _, value = line.strip().partition(":")
                fields[name] = value
            if (fields.get("cluster_state") != "ok"
                    or fields.get("cluster_slots_assigned") != str(HASH_SLOTS)
                    or fields.get("cluster_known_nodes") != str(len(self.sockets))):
                return False
        return True

    def _check_alive(self) -> None:
        for i, process in enumerate(self._processes):
            if process.poll() is not None:
                code = process.returncode
                self.stop()
                raise ServerError(f"{self.spec.name} node {i} exited with status {code} "
                                  f"(log: {self.log_path}): {self.log_tail()}")

    def alive(self) -> bool:
        return bool(self._processes) and all(p.poll() is None for p in self._processes)

    @property
    def pid(self) -> int | None:
        return self._processes[0].pid if self.alive() else None

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self._processes if p.poll() is None]

    def memory(self) -> tuple[int, int, int] | None:
        """Summed over the nodes: (used_memory, used_memory_rss, keys)."""
        total = [0, 0, 0]
        for path in self.sockets:
            memory = info_unix(path, "memory")
            keyspace = info_unix(path, "keyspace")
            try:
                total[0] += int(memory["used_memory"])
                total[1] += int(memory["used_memory_rss"])
                total[2] += keyspace_keys(keyspace)
            except (KeyError, ValueError):
                return None
        return (total[0], total[1], total[2])

    def flush(self) -> bool:
        return all(call_unix(path, "FLUSHALL") == "OK" for path in self.sockets)

    def stop(self) -> None:
        for process in self._processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self._processes:
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self._forget()

    def _forget(self) -> None:
        """After the nodes ended: closes the log, removes their sockets and state files."""
        self._processes = []
        if self._log is not None:
            self._log.close()
            self._log = None
        for path in self.sockets + self.config_files:
            Path(path).unlink(missing_ok=True)


def _all_cpus(cpus: str | None) -> str:
    """The server's CPU list: the pinned one, else every CPU this process may use."""
    return cpus or format_cpu_list(sorted(os.sched_getaffinity(0)))


# A command row's processes get a process group of their own (process_group=0), so a stop
# reaches a wrapper's children too, but never a session of their own: with the kernel's
# autogroup scheduling (sched_autogroup_enabled) a new session is a scheduling group of
# its own, which gets a fair share against everything else on a busy machine, while a
# native row shares the runner's. Started so, redis-server as a command row ran 1.17x,
# kvlab-server single 1.47x their native rows alternated beside them (machine loaded 5.5).


def _signal_group(pgid: int, signal_number: int) -> bool:
    """Sends a signal to a process group; False when no process of it is left."""
    try:
        os.killpg(pgid, signal_number)
        return True
    except (ProcessLookupError, PermissionError):
        return False


# Seconds a command row's process group has to end after SIGTERM before SIGKILL ends it.
STOP_GRACE_S = 5.0


def _end_group(process: subprocess.Popen, grace_s: float | None = None) -> bool:
    """SIGTERM to the process group that `process` leads (its children included), SIGKILL
    to what is left after `grace_s` (default STOP_GRACE_S); reaps `process`. True when
    SIGKILL found a process of the group still there."""
    grace_s = STOP_GRACE_S if grace_s is None else grace_s
    pgid = process.pid
    _signal_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    try:
        process.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        pass
    # Children that outlive the leader (a wrapper's) get the rest of the grace time.
    while time.monotonic() < deadline and _signal_group(pgid, 0):
        time.sleep(0.05)
    killed = _signal_group(pgid, signal.SIGKILL)
    process.wait()
    return killed


def _command_values(spec: ServerSpec, port: int, bind: str, unix_socket: str, cpus: str | None,
                    folder: Path | str) -> dict[str, object]:
    cpu_list = _all_cpus(cpus)
    count = len(_cpu_list(cpu_list))
    return {"port": port, "bind": bind, "unix": unix_socket, "cpus": cpu_list,
            "cpu_count": count, "io_threads": spec.io_threads or count, "dir": folder}


def _start_answer(name: str, address: str | tuple[str, int], process: subprocess.Popen,
                  log_path: Path, tail: Callable[[], str], timeout: float,
                  before_tail: Callable[[], None]) -> None:
    """Waits until the server answers PING with PONG. Raises ServerError naming the row when
    it exits first, answers an error (other than -LOADING: still starting), or stays silent
    for `timeout` seconds; the message ends with the tail of its output."""
    where = f"Unix socket {address}" if isinstance(address, str) else \
        f"{address[0]}:{address[1]}"
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            before_tail()
            raise ServerError(f"server {name} exited with status {process.returncode} at "
                              f"start (log: {log_path}): {tail()}")
        reply = ping_reply(address)
        if reply == "PONG":
            return
        if isinstance(reply, commands.RespError) and reply.startswith("AUTH "):
            raise ServerError(f"server {name} refused AUTH with this start's {{password}} on "
                              f"{where}: -{reply.removeprefix('AUTH ')} (does its command "
                              f"give {{password}} to the server, as --requirepass "
                              f"{{password}}?) (log: {log_path}): {tail()}")
        if isinstance(reply, commands.RespError) and not reply.startswith("LOADING"):
            raise ServerError(f"server {name} answered PING with -{reply} on {where}: kvlab "
                              f"needs +PONG (log: {log_path}): {tail()}")
        if time.monotonic() > deadline:
            before_tail()
            raise ServerError(f"server {name} did not answer PING on {where} within "
                              f"{timeout:g} s (log: {log_path}): {tail()}")
        time.sleep(0.05)


class CommandServerProcess(ServerProcess):
    """A `command` row: its template filled (commands.fill) and run, here in a process group
    of its own pinned to the server CPUs, or on a host through its command channel. start()
    waits for PONG over TCP ({unix} is optional); stop() ends the whole group with SIGTERM,
    then SIGKILL."""

    def __init__(self, spec: ServerSpec, work_dir: Path, log_path: Path, cpus: str | None,
                 netns: str | None = None, bind: str = "127.0.0.1",
                 host: "Host | None" = None, port: int | None = None) -> None:
        self._place(spec, log_path, cpus, netns, bind, host, port)
        if host is None:
            self.unix_socket = str(work_dir / f"{spec.name}.sock")
            self.folder = work_dir / f"{spec.name}.d"
        else:
            self.unix_socket = f"/tmp/kvlab-server-{self.port}.sock"
            self.folder = Path(f"/tmp/kvlab-server-{self.port}.d")
        self.has_unix = "unix" in commands.placeholders_of(spec.command)
        self.uses_password = "password" in commands.placeholders_of(spec.command)
        # How the last stop() ended it: "SIGTERM", or "SIGKILL" after STOP_GRACE_S.
        self.stop_signal: str | None = None
        self._fill()
        self._fresh()

    def _fill(self) -> None:
        """The command of the next start: the template filled, with a new password when it
        has {password}."""
        self.password = commands.new_password() if self.uses_password else None
        values = _command_values(self.spec, self.port, self.bind, self.unix_socket,
                                 self.cpus, self.folder)
        self.program = commands.fill(self.spec.command, {**values, "password": self.password})
        if self.host is None:
            self.command = launch_prefix(self.cpus, self.netns) + self.program
        else:
            self.shell_command = (f"mkdir -p {shlex.quote(str(self.folder))}; "
                                  f"echo {PID_MARK} $$; exec " + " ".join(
                                      shlex.quote(w) for w in launch_prefix(self.cpus, None)
                                      + self.program))
            self.command = self.host.command(self.shell_command)

    @property
    def addresses(self) -> list[str | tuple[str, int]]:
        """Where it listens: its Unix socket (here) and its TCP address."""
        return ([self.unix_socket] if self.host is None else []) + [(self.bind, self.port)]

    def secret(self) -> str | None:
        return self.password

    @property
    def control(self) -> str | tuple[str, int]:
        return self.unix_socket if self.has_unix and self.host is None else (self.bind, self.port)

    def target(self, transport: str = "tcp") -> str:
        if transport == "unix" and not self.has_unix:
            raise ServerError(f"server {self.spec.name} has no {{unix}} in its command")
        return super().target(transport)

    @property
    def pids(self) -> list[int]:
        if self.host is not None:
            return [self._remote_pid] if self._remote_pid else []
        return process_tree([self._process.pid]) if self.alive() else []

    def start(self) -> None:
        self._fill()
        if self.password:
            remember_password(self.addresses, self.password)
        if self.host is not None:
            super().start()
            return
        program = self.program[0]
        if shutil.which(program) is None:
            raise ServerError(f"server {self.spec.name}: {program} not found (is it built, "
                              "and on PATH or given by its path?)")
        shutil.rmtree(self.folder, ignore_errors=True)
        self.folder.mkdir(parents=True)
        Path(self.unix_socket).unlink(missing_ok=True)
        log = self.log_path.open("a")
        log.write(commands.redact("$ " + " ".join(shlex.quote(w) for w in self.command),
                                  self.password) + "\n")
        log.flush()
        self._launch(log, f"server {self.spec.name}: cannot start {program}",
                     process_group=0, errors="replace")
        try:
            _start_answer(self.spec.name, self.control, self._process, self.log_path,
                          self.log_tail, self.spec.start_timeout, self._settle_output)
            self._check_password_in_use()
        except ServerError:
            self.stop()
            raise
        self.empty_memory = self.memory()
        self.filled = False

    def _check_password_in_use(self) -> None:
        """A server started with {password} must refuse a PING without AUTH (Redis:
        -NOAUTH): else the password is not in use and the row measures something else
        than it says."""
        if not self.password:
            return
        reply = ping_reply(self.control, timeout=5.0, authenticate=False)
        if reply == "PONG":
            raise ServerError(f"server {self.spec.name} answers PING without AUTH: its command "
                              "has {password} but the server does not demand it (give it "
                              "as --requirepass {password} or the server's own option)")

    def _settle_output(self) -> None:
        """Lets the output copier catch up, so the message's tail is the server's last word."""
        if self._process is not None and self._process.poll() is None:
            _end_group(self._process, grace_s=1.0)
        if self._reader is not None:
            self._reader.join(timeout=2)

    def memory(self) -> tuple[int | None, int, int, int] | None:
        """(used_memory from INFO or None, RSS and PSS of the process tree from /proc, keys)
        in the order the runner reads: (used_memory, rss, keys, pss); None when /proc
        cannot be read (a server on another host: INFO's figures, if any)."""
        info = info_unix(self.control, "memory")
        used = int(info["used_memory"]) if info.get("used_memory", "").isdigit() else None
        keys = keyspace_keys(info_unix(self.control, "keyspace"))
        if self.host is not None or not self.alive():
            rss = info.get("used_memory_rss", "")
            return (used, int(rss), keys, None) if used is not None and rss.isdigit() else None
        figures = tree_memory([self._process.pid])
        if figures is None:
            return None
        return (used, figures[0], keys, figures[1])

    def stop(self) -> None:
        if self.password:
            forget_password(self.addresses)
        if self._process is None:
            return
        if self.host is not None:
            super().stop()
            return
        self.stop_signal = "SIGKILL" if _end_group(self._process) else "SIGTERM"
        if self._reader is not None:
            self._reader.join(timeout=2)
        if self.stop_signal == "SIGKILL":
            # Said in the row's log: a server that ignores SIGTERM costs every start the
            # grace time, and SIGKILL leaves it no chance to clean up.
            with self.log_path.open("a") as log:
                log.write(f"kvlab: server {self.spec.name} was still running {STOP_GRACE_S:g} s "
                          "after SIGTERM to its process group: ended with SIGKILL\n")
        Path(self.unix_socket).unlink(missing_ok=True)
        shutil.rmtree(self.folder, ignore_errors=True)


class CommandClusterProcess(RedisClusterProcess):
    """A `command-cluster` row: N processes of the template, node i with its own port, Unix
    socket, CPU, folder and cluster state file, joined and given their slots as
    RedisClusterProcess joins redis-servers (the server must speak Redis Cluster's
    CLUSTER ADDSLOTSRANGE, MEET and INFO). Each node leads a process group of its own."""

    def _node_program(self, index: int, work_dir: Path) -> list[str]:
        folder = work_dir / f"{self.spec.name}-{index}.d"
        values = _command_values(self.spec, self.ports[index], self.bind, self.sockets[index],
                                 self.node_cpus[index], folder)
        values.update(node=index, nodes=len(self.ports),
                      cluster_config=self.config_files[index])
        return commands.fill(self.spec.command, values)

    def _spawn(self, command: list[str]) -> subprocess.Popen:
        program = self.programs[len(self._processes)][0]
        if shutil.which(program) is None:
            raise OSError(2, f"{program} not found")
        folder = Path(self.sockets[len(self._processes)]).with_suffix(".d")
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        return subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=self._log,
                                stderr=subprocess.STDOUT, process_group=0,
                                env=layout_env()[0])

    def _wait_for_nodes(self, deadline: float) -> None:
        for index, (path, process) in enumerate(zip(self.sockets, self._processes)):
            try:
                _start_answer(f"{self.spec.name} node {index}", path, process, self.log_path,
                              self.log_tail, self.spec.start_timeout, lambda: None)
            except ServerError:
                self.stop()
                raise

    @property
    def pids(self) -> list[int]:
        return process_tree([p.pid for p in self._processes if p.poll() is None])

    def memory(self) -> tuple[int | None, int, int, int] | None:
        """As CommandServerProcess.memory, summed over the nodes."""
        used, keys = 0, 0
        for path in self.sockets:
            info = info_unix(path, "memory")
            keys += keyspace_keys(info_unix(path, "keyspace"))
            if used is not None and info.get("used_memory", "").isdigit():
                used += int(info["used_memory"])
            else:
                used = None
        figures = tree_memory([p.pid for p in self._processes if p.poll() is None])
        return None if figures is None else (used, figures[0], keys, figures[1])

    def stop(self) -> None:
        for process in self._processes:
            _signal_group(process.pid, signal.SIGTERM)
        for process in self._processes:
            _end_group(process)
        self._forget()
        for path in self.sockets:
            shutil.rmtree(Path(path).with_suffix(".d"), ignore_errors=True)


def server_process(spec: ServerSpec, build_dir: Path, work_dir: Path, log_path: Path,
                   cpus: str | None, netns: str | None = None,
                   bind: str = "127.0.0.1",
                   aof_dir: Path | None = None) -> ServerProcess | RedisClusterProcess:
    """The process object that runs `spec`: a (Command)ClusterProcess or a
    (Command)ServerProcess; `aof_dir`: the folder of a kvlab or redis row's append-only
    log (its appendfsync)."""
    if spec.kind == "command-cluster":
        return CommandClusterProcess(spec, work_dir, log_path, cpus, netns=netns, bind=bind)
    if spec.kind == "command":
        return CommandServerProcess(spec, work_dir, log_path, cpus, netns=netns, bind=bind)
    if spec.kind == "redis-cluster":
        return RedisClusterProcess(spec, work_dir, log_path, cpus, netns=netns, bind=bind)
    return ServerProcess(spec, build_dir, work_dir, log_path, cpus, netns=netns, bind=bind,
                         aof_dir=aof_dir)
