"""Servers given by a command line: `kind = "command"` and `kind = "command-cluster"` rows.

A row's `command` is a template; the runner fills its placeholders each time it starts
the server and runs the result without a shell (split as a POSIX shell would: quotes
group words; write `sh -c '...'` to get one):

    {port}        the TCP port the server must listen on (required)
    {bind}        the address to listen on (127.0.0.1; the link's address for remote points)
    {unix}        a Unix socket path (needed for transport "unix")
    {cpus}        the server CPUs, a list like "0-1" (a cluster node: its own CPU)
    {cpu_count}   how many they are
    {io_threads}  the row's io_threads ("auto": the server CPU count)
    {dir}         an empty folder of this start's own (working files, a config file)
    {password}    command rows: a fresh random password of this start (32 hex digits),
                  for the server to demand (redis-server/valkey-server --requirepass
                  {password}); see "Passwords" below
    {node}        command-cluster: this node's index, from 0
    {nodes}       command-cluster: how many nodes
    {cluster_config}  command-cluster: a path for the node's cluster state file
    {{ and }}     a literal brace

Each value is one word (quoted where it would split).

Passwords: a row whose template uses {password} gets a new one at every start (never
one the TOML states, so there is none to leak from the experiment file). Every
connection to it then authenticates first: kvlab-load's (--password, each connection of
every client kind, its prefill and INFO connections, redis-benchmark's -a) and the
runner's own (the PING that waits for the start, INFO, the probes of check_point,
FLUSHALL: servers.connect). The start also checks that the password is in use: a server
that answers PING without AUTH is refused ("its command has {password} but it does not
demand it"), one that refuses AUTH is named with its answer. The password is written
nowhere: the server's log shows REDACTED in its place (its command line and every line
of its output), kvlab-load's --json records its command line redacted, and meta.json,
points.csv and the report hold the template, not its values. A command-cluster row
cannot use {password} (its nodes' output goes straight to the log). Without {password}
nothing authenticates: a server that demands a password of its own fails its start with
-NOAUTH named.

What identifies a build (`identity`): the binary's resolved path and SHA-256, and its
version: the row's `version` label when given, else what INFO server says
(valkey_version, dragonfly_version, garnet_version, ... before redis_version, which
forks keep for compatibility), else the first line of `BINARY --version`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import secrets
import shlex
import shutil
import string
import subprocess
from pathlib import Path
from typing import BinaryIO

PLACEHOLDERS = ("port", "bind", "unix", "cpus", "cpu_count", "io_threads", "dir", "password")
# What stands for a password wherever text is written (kvlab-load's kRedacted too).
REDACTED = "(redacted)"
CLUSTER_PLACEHOLDERS = ("node", "nodes", "cluster_config")
# INFO server fields naming a server's version, most specific first (a fork keeps
# redis_version for its clients' sake and says its own in another field).
VERSION_FIELDS = ("valkey_version", "dragonfly_version", "garnet_version", "keydb_version",
                  "kvlab_version", "redis_version")


def placeholders_of(template: str) -> list[str]:
    """The placeholder names a template uses, in order; ValueError when it is not a valid
    template (a lone brace, a {name!r} or {name:spec})."""
    names = []
    for _, name, spec, conversion in string.Formatter().parse(template):
        if name is None:
            continue
        if spec or conversion:
            raise ValueError(f"{{{name}}} takes no format spec or conversion")
        names.append(name)
    return names


def template_problem(template: str, cluster: bool) -> str | None:
    """What is wrong with a template (None when it is good): unknown placeholders, a
    missing {port}, a malformed brace, an empty command."""
    allowed = PLACEHOLDERS + (CLUSTER_PLACEHOLDERS if cluster else ())
    try:
        names = placeholders_of(template)
        words = shlex.split(template)
    except ValueError as error:
        return f"is not a valid command template: {error}"
    if not words:
        return "is empty"
    unknown = [n for n in names if n not in allowed]
    if unknown:
        return (f"has an unknown placeholder {{{unknown[0]}}}; allowed: "
                + ", ".join(f"{{{n}}}" for n in allowed))
    if "port" not in names:
        return "needs {port}: kvlab tells the server which TCP port to listen on"
    if cluster and "password" in names:
        return "cannot use {password}: only a command row's start makes one (not a cluster's)"
    return None


def new_password() -> str:
    """A fresh random password for one start: 32 hex digits (one word, no quoting)."""
    return secrets.token_hex(16)


def redact(text: str, password: str | None) -> str:
    """`text` with every occurrence of `password` replaced by REDACTED."""
    return text.replace(password, REDACTED) if password else text


def fill(template: str, values: dict[str, object]) -> list[str]:
    """The argv of a template with its placeholders filled, each value one word."""
    quoted = {name: shlex.quote(str(value)) for name, value in values.items()}
    return shlex.split(template.format(**quoted))


def binary_path(argv: list[str], binary: str | None = None) -> str:
    """The binary that identifies the server: `binary` (the row's), else the command's
    first word, found on PATH; its absolute path, links not followed (Debian's
    /usr/bin/redis-server is a link to redis-check-rdb: the name says more), or the word
    itself when not found. Its SHA-256 is the content's, through any link."""
    word = binary or argv[0]
    found = shutil.which(word) if "/" not in word else word
    return str(Path(found).absolute()) if found and Path(found).exists() else word


def sha256_of(path: str) -> str | None:
    try:
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
        return digest.hexdigest()
    except OSError:
        return None


def version_from_info(info: dict[str, str]) -> tuple[str, str] | None:
    """(version, the INFO field it came from), or None when INFO server names none."""
    for field in VERSION_FIELDS:
        if info.get(field):
            return info[field], field
    other = sorted(f for f in info if f.endswith("_version") and info[f]
                   and f not in ("gcc_version", "os_version"))
    return (info[other[0]], other[0]) if other else None


def version_from_binary(path: str) -> str | None:
    """The first line of `PATH --version`, when it answers within 10 s with status 0."""
    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = (done.stdout or done.stderr).strip().splitlines()
    return lines[0].strip()[:200] if done.returncode == 0 and lines else None


# The points.csv column naming each row's build (Identity.build).
BUILD_COLUMN = "server_build"


@dataclasses.dataclass(frozen=True)
class Identity:
    """What build a row ran: path, SHA-256, version and where the version came from
    (label | INFO field | --version | unknown); `label` the row's own, if given."""
    path: str
    sha256: str | None
    version: str | None
    version_source: str
    label: str | None = None

    @property
    def build(self) -> str:
        """One short word for tables and points.csv: "7.0.15 sha256:1a2b3c4d5e6f"."""
        digest = f"sha256:{self.sha256[:12]}" if self.sha256 else "sha256:unknown"
        return f"{self.version or 'version unknown'} {digest}"

    @property
    def series_tag(self) -> str:
        """What keeps this build's history series apart from other builds' (history.py):
        the row's label when given (builds given one label are one line: a branch tracked
        commit to commit), else its version and SHA-256 (two builds never share a line)."""
        return self.label or self.build

    def as_json(self) -> dict:
        return {**dataclasses.asdict(self), "build": self.build}


def identify(argv: list[str], info: dict[str, str], label: str | None,
             binary: str | None = None) -> Identity:
    path = binary_path(argv, binary)
    if label:
        version, source = label, "label"
    elif (found := version_from_info(info)) is not None:
        version, source = found[0], f"INFO {found[1]}"
    elif (line := version_from_binary(path)) is not None:
        version, source = line, "--version"
    else:
        version, source = None, "unknown"
    return Identity(path=path, sha256=sha256_of(path), version=version, version_source=source,
                    label=label)


# ---- what a point needs of a server ---------------------------------------------------

# The RESP commands each kvlab-load command sends (harness/workloads/workload.cc,
# ycsb_operations.cc) and its prefill writes (server_control.cc), as one probe request
# each on a key of the probe's own. A server that answers one with an error (other than
# a cluster's redirection) cannot measure the point.
_PROBE_KEY = "kvlab:probe"
_PROBES = {
    "PING": ["PING"],
    "SET": ["SET", _PROBE_KEY, "0"],
    "GET": ["GET", _PROBE_KEY],
    "INCRBY": ["INCRBY", _PROBE_KEY, "1"],
    "MSET": ["MSET", _PROBE_KEY, "0"],
    "MGET": ["MGET", _PROBE_KEY],
    "MULTI": ["MULTI"], "EXEC": ["EXEC"],  # sent together: MULTI, INCRBY (queued), EXEC
    "HMSET": ["HMSET", _PROBE_KEY + ":h", "field0", "v"],
    "HGETALL": ["HGETALL", _PROBE_KEY + ":h"],
    "ZADD": ["ZADD", _PROBE_KEY + ":z", "1", "m"],
    "ZRANGEBYSCORE": ["ZRANGEBYSCORE", _PROBE_KEY + ":z", "0", "+inf", "LIMIT", "0", "1"],
    "HSET": ["HSET", _PROBE_KEY + ":h", "field0", "v"],
    "RPUSH": ["RPUSH", _PROBE_KEY + ":l", "v"],
    "SADD": ["SADD", _PROBE_KEY + ":s", "m"],
}
_SHAPE_COMMANDS = {"hash": "HSET", "list": "RPUSH", "set": "SADD", "zset": "ZADD"}
# Error replies that say the command exists but the key lives elsewhere (a cluster node).
REDIRECTIONS = ("MOVED", "ASK", "CROSSSLOT", "TRYAGAIN", "CLUSTERDOWN")


def needed_commands(command: str, value_shape: str = "string") -> list[str]:
    """The RESP commands a point of kvlab-load command `command` sends, its prefill's
    included; [] for redis-benchmark's own tests (rb:TEST), which are its to send."""
    if value_shape != "string":
        return ["PING", _SHAPE_COMMANDS[value_shape.partition(":")[0]]]
    name = command.partition(":")[0]
    return {"ping": ["PING"], "set": ["SET"], "get": ["SET", "GET"],
            "incrby": ["SET", "INCRBY"], "mix": ["SET", "GET"], "mset": ["MSET"],
            "mget": ["SET", "MGET"], "multi-incr": ["MULTI", "INCRBY", "EXEC"],
            "ycsb": ["HMSET", "HGETALL", "ZADD", "ZRANGEBYSCORE"]}.get(name, [])


def probe_requests(commands: list[str]) -> list[list[str]]:
    """The requests that try `commands`, in order, then one DEL of the probe's keys."""
    requests = []
    for name in commands:
        if name == "INCRBY" and "MULTI" in commands:
            requests.append(["INCRBY", _PROBE_KEY + ":m", "1"])  # queued inside MULTI
        else:
            requests.append(_PROBES[name])
    return requests


def cleanup_request() -> list[str]:
    return ["DEL", _PROBE_KEY, _PROBE_KEY + ":m", _PROBE_KEY + ":h", _PROBE_KEY + ":z",
            _PROBE_KEY + ":l", _PROBE_KEY + ":s"]


def refused(reply: object) -> str | None:
    """The error text of a reply that refuses its command (None when it does not: an
    answer, or a cluster's redirection)."""
    if isinstance(reply, RespError):
        word = str(reply).split(" ", 1)[0]
        return None if word in REDIRECTIONS else str(reply)
    return None


class RespError(str):
    """A RESP error reply's text (without the leading '-')."""


def read_reply(stream: BinaryIO) -> object:
    """One RESP2/RESP3 reply from a binary file-like `stream`: str for simple strings,
    bytes for bulk strings, int, list, None, or RespError. EOFError when it ends early."""
    line = stream.readline()
    if not line.endswith(b"\r\n"):
        raise EOFError("the server closed the connection")
    kind, body = line[:1], line[1:-2]
    if kind == b"+":
        return body.decode(errors="replace")
    if kind == b"-":
        return RespError(body.decode(errors="replace"))
    if kind in (b":", b","):
        return int(body) if kind == b":" else body.decode()
    if kind in (b"$", b"="):
        length = int(body)
        if length < 0:
            return None
        data = stream.read(length + 2)
        if len(data) < length + 2:
            raise EOFError("the server closed the connection")
        return data[:length]
    if kind in (b"*", b"~", b">"):
        count = int(body)
        return None if count < 0 else [read_reply(stream) for _ in range(count)]
    if kind == b"%":
        return [read_reply(stream) for _ in range(2 * int(body))]
    if kind == b"_":
        return None
    if kind == b"#":
        return body == b"t"
    raise ValueError(f"not a RESP reply: {line[:40]!r}")


def encode(args: list[str]) -> bytes:
    parts = [f"*{len(args)}\r\n".encode()]
    for arg in args:
        data = arg.encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(parts)


_FIELD = re.compile(r"^([A-Za-z0-9_]+):(.*)$")


def parse_info(text: str) -> dict[str, str]:
    fields = {}
    for line in text.splitlines():
        match = _FIELD.match(line.strip())
        if match:
            fields[match.group(1)] = match.group(2)
    return fields
