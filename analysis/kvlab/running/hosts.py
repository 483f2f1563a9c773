"""Hosts of a multi-host experiment: the `[[host]]` and `[placement]` tables, how a
command reaches a host (OpenSSH or a local network namespace), and the checks of
`python3 -m kvlab hosts check|deploy`.

    [[host]]
    name = "server"                  # required, unique; letters, digits, '-', '_', '.'
    ssh = "root@10.0.0.2"            # either: OpenSSH (BatchMode=yes, key authentication)
    ssh_options = ["-i", "~/.ssh/kvlab"]  # optional: extra ssh arguments, verbatim
    # netns = "kvlab-a"              # or: a local network namespace (`ip netns exec`)
    address = "10.0.0.2"             # where the server listens and the clients connect
                                     # (default: ssh's host part; required with netns)
    checkout = "/home/me/kvlab"      # the kvlab checkout on that host; netns hosts default
                                     # to this checkout. Its binaries are looked for (and
                                     # deployed) in the same folder of it as the runner's
                                     # --build in the runner's checkout (build/ by default,
                                     # or when --build lies outside the checkout)

    [placement]
    server_host = "server"           # runs the server, listening on its address
    client_hosts = ["c1", "c2"]      # each runs kvlab-load for every point
    server_port = 6390               # optional; TCP port of the server (default 6390)

A Host only builds argument vectors and runs short commands; it holds no
connection. Not thread-safe to mutate (it is frozen); run() may be called from
several threads at once.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import shlex
import subprocess
import time
from pathlib import Path
from typing import Any

from ..schema.toml_checker import Checker, ExperimentError, valid_name

THIS_CHECKOUT = Path(__file__).resolve().parents[3]
DEFAULT_SERVER_PORT = 6390
BINARIES = ("kvlab-server", "kvlab-load")
# Seconds a short command on a host may take (an ssh login on a slow link included).
COMMAND_TIMEOUT_S = 30.0
# Round trips sampled for a clock offset; the one with the shortest round trip wins.
CLOCK_SAMPLES = 9
SSH_BASE_OPTIONS = ("-o", "BatchMode=yes", "-o", "ConnectTimeout=10",
                    "-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3")
ADDRESS_PATTERN = re.compile(r"^[A-Za-z0-9_.:-]+$")


class HostError(Exception):
    """A host could not be reached or failed a command; the message names the host."""


@dataclasses.dataclass(frozen=True)
class Host:
    name: str
    checkout: str
    address: str
    ssh: str | None = None
    ssh_options: tuple[str, ...] = ()
    netns: str | None = None
    build: str = "build"             # the folder of the checkout holding the binaries

    def where(self) -> str:
        return f"ssh {self.ssh}" if self.ssh else f"netns {self.netns}"

    def command(self, shell_command: str) -> list[str]:
        """The argument vector that runs `shell_command` (a POSIX shell line) on this host."""
        if self.ssh:
            return ["ssh", *SSH_BASE_OPTIONS, *self.ssh_options, self.ssh, "--", shell_command]
        return ["ip", "netns", "exec", self.netns, "sh", "-c", shell_command]

    def in_checkout(self, shell_command: str) -> str:
        return f"cd {shlex.quote(self.checkout)} && {shell_command}"

    def build_dir(self) -> str:
        return f"{self.checkout.rstrip('/')}/{self.build}"

    def binary(self, name: str) -> str:
        return f"{self.build_dir()}/{name}"

    def run(self, shell_command: str, timeout: float = COMMAND_TIMEOUT_S,
            stdin: bytes | None = None) -> str:
        """Runs a short command; its stdout, or HostError naming the host and what failed."""
        try:
            done = subprocess.run(self.command(shell_command), input=stdin, capture_output=True,
                                  timeout=timeout)
        except subprocess.TimeoutExpired:
            raise HostError(f"host {self.name} ({self.where()}): no answer within "
                            f"{timeout:.0f} s") from None
        except OSError as error:
            raise HostError(f"host {self.name} ({self.where()}): cannot run "
                            f"{self.command('')[0]}: {error.strerror}") from None
        if done.returncode != 0:
            failure = describe_failure(done, over_ssh=self.ssh is not None)
            raise HostError(f"host {self.name} ({self.where()}): {failure}")
        return done.stdout.decode(errors="replace")


@dataclasses.dataclass(frozen=True)
class Placement:
    server_host: str
    client_hosts: tuple[str, ...]
    server_port: int = DEFAULT_SERVER_PORT


def describe_failure(done: subprocess.CompletedProcess, over_ssh: bool) -> str:
    """What a failed host command said; over ssh, exit status 255 is ssh's own failure
    (the link or the host), not the command's."""
    def lines_of(output: str | bytes | None) -> list[str]:
        if isinstance(output, bytes):
            output = output.decode(errors="replace")
        return [line for line in (output or "").strip().splitlines() if line.strip()]

    errors = lines_of(done.stderr)
    if over_ssh and done.returncode == 255:
        # ssh's own failure: its message is on stderr (the program's output says nothing).
        return "ssh failed (status 255): " + (
            " | ".join(errors[-2:]) if errors else "the connection was lost, without a message")
    lines = errors or lines_of(done.stdout)
    tail = " | ".join(lines[-2:]) if lines else "no output"
    if done.returncode < 0:
        return f"killed by signal {-done.returncode}: {tail}"
    return f"exited with status {done.returncode}: {tail}"


def _parse_host(path: Path, index: int, table: Any) -> Host:
    c = Checker(path, f"host[{index}]", table)
    name = c.get("name", str, required=True, check=valid_name)
    ssh = c.get("ssh", str, check=lambda v: None if re.match(r"^[^\s@]+@[^\s@]+$|^[^\s@]+$", v)
                else "must be user@address (or an ssh config alias)")
    netns = c.get("netns", str, check=valid_name)
    c.seen.add("ssh_options")
    options = c.table.get("ssh_options", [])
    address = c.get("address", str, check=lambda v: None if ADDRESS_PATTERN.match(v)
                    else "must be an IP address or host name")
    checkout = c.get("checkout", str,
                     check=lambda v: None if v.startswith("/") else "must be an absolute path")
    c.finish()
    where = f"host[{index}]"
    if (ssh is None) == (netns is None):
        c.fail(where, "needs exactly one of ssh = \"user@address\" or netns = \"name\"")
    if checkout is None:
        if ssh is not None:
            c.fail(f"{where}.checkout", "is required with ssh (the kvlab checkout there)")
        checkout = str(THIS_CHECKOUT)  # a namespace sees this machine's files
    if netns is not None and options:
        c.fail(f"{where}.ssh_options", "applies to ssh hosts only")
    if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
        c.fail(f"{where}.ssh_options", f"must be a list of strings, not {options!r}")
    if address is None:
        if netns is not None:
            c.fail(f"{where}.address", "is required with netns (the namespace's own address)")
        if "@" not in ssh:
            c.fail(f"{where}.address", "is required when ssh is an alias (the address the "
                   "server listens on and the clients connect to)")
        address = ssh.rpartition("@")[2]
    return Host(name=name, checkout=checkout, address=address, ssh=ssh,
                ssh_options=tuple(options), netns=netns)


def _check_sweeps_fit_placement(path: Path, sweeps: tuple) -> None:
    """Hosts meet over TCP, and only kvlab-load takes a common start instant. `sweeps`:
    the experiment's parsed sweeps (experiment.SweepSpec)."""
    for index, sweep in enumerate(sweeps):
        for key, allowed in (("transport", "tcp"), ("loadgen", "kvlab-load")):
            for value in sweep.values[key]:
                if value != allowed:
                    raise ExperimentError(
                        f"{path}: sweep[{index}].{key}: {value!r} is not allowed with "
                        f"[placement] (the server and clients are on different hosts); "
                        f"allowed: {allowed}")


def parse_hosts(path: Path, data: dict,
                sweeps: tuple = ()) -> tuple[tuple[Host, ...], Placement | None]:
    """The [[host]] tables and [placement] of a loaded experiment file ((), None without),
    parsed after its sweeps (`sweeps`, experiment.SweepSpec), which a placement must be
    able to run. Raises ExperimentError naming the file, the key and what is allowed."""
    tables = data.get("host")
    placement_table = data.get("placement")
    if tables is None and placement_table is None:
        return (), None
    if tables is None:
        raise ExperimentError(f"{path}: placement: needs [[host]] tables naming its hosts")
    if not isinstance(tables, list) or not tables:
        raise ExperimentError(f"{path}: host: must be one or more [[host]] tables")
    hosts = tuple(_parse_host(path, i, t) for i, t in enumerate(tables))
    names = [h.name for h in hosts]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate:
        raise ExperimentError(f"{path}: host.name: {duplicate!r} is used by two hosts")
    if placement_table is None:
        raise ExperimentError(f"{path}: placement: required with [[host]]: "
                              f"server_host = NAME and client_hosts = [NAMES]")
    c = Checker(path, "placement", placement_table)
    server_host = c.get("server_host", str, required=True, allowed=tuple(names))
    client_hosts = c.get_list("client_hosts", str, (), allowed=tuple(names))
    server_port = c.get("server_port", int, DEFAULT_SERVER_PORT,
                        check=lambda v: None if 0 < v < 65536 else "must be a port, 1..65535")
    c.finish()
    if not client_hosts:
        c.fail("placement.client_hosts", "is required: one or more host names")
    _check_sweeps_fit_placement(path, sweeps)
    return hosts, Placement(server_host=server_host, client_hosts=tuple(client_hosts),
                            server_port=server_port)


def multiplexed(host: Host, folder: str) -> Host:
    """The host with its ssh commands sharing one connection (OpenSSH's ControlMaster, the
    socket in `folder`): a command costs a round trip, not a login. Call
    stop_multiplexing(host) when done. A netns host is returned as it is."""
    if not host.ssh:
        return host
    sharing = ("-o", "ControlMaster=auto", "-o", f"ControlPath={folder}/%C",
               "-o", "ControlPersist=yes")
    return dataclasses.replace(host, ssh_options=sharing + host.ssh_options)


def stop_multiplexing(host: Host) -> None:
    """Ends the shared connection multiplexed() started (if it is still up)."""
    if host.ssh and any(o.startswith("ControlPath=") for o in host.ssh_options):
        subprocess.run(["ssh", *SSH_BASE_OPTIONS, *host.ssh_options, "-O", "exit", host.ssh],
                       capture_output=True, timeout=COMMAND_TIMEOUT_S)


def placed_hosts(hosts: tuple[Host, ...], placement: Placement,
                 build_dir: Path | None = None) -> list[Host]:
    """The hosts the placement uses, server first, each once; with `build_dir` (the
    runner's), each looks for its binaries in the same folder of its own checkout."""
    by_name = {h.name: h for h in hosts}
    names = dict.fromkeys((placement.server_host, *placement.client_hosts))
    build = build_folder_in_checkout(build_dir) if build_dir is not None else "build"
    return [dataclasses.replace(by_name[n], build=build) for n in names]


def build_folder_in_checkout(build_dir: Path, checkout: Path = THIS_CHECKOUT) -> str:
    """`build_dir` relative to the runner's checkout ("build-asan"), or "build" when it
    lies outside it."""
    try:
        return str(Path(build_dir).resolve().relative_to(checkout.resolve()))
    except ValueError:
        return "build"


# --- clock offset -------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class ClockOffset:
    """The host's CLOCK_REALTIME minus the runner's, from the round trip that was shortest:
    the true offset lies within offset_ns ± uncertainty_ns."""
    offset_ns: int
    uncertainty_ns: int
    samples: int


def offset_from_round_trips(samples: list[tuple[int, int, int]]) -> ClockOffset:
    """samples: (runner time sent, host time, runner time answered), ns. The host read its
    clock somewhere inside the round trip; assuming the middle errs by at most half of it."""
    sent, remote, answered = min(samples, key=lambda s: s[2] - s[0])
    half = (answered - sent) // 2
    return ClockOffset(offset_ns=remote - (sent + half), uncertainty_ns=half,
                       samples=len(samples))


def measure_clock_offset(host: Host, samples: int = CLOCK_SAMPLES) -> ClockOffset:
    """Asks the host for its clock over one session, one line per round trip, so a round trip
    is the link's and a `date`'s, not an ssh login's."""
    # bash reads its clock without a fork ($EPOCHREALTIME, µs); plain sh forks `date`,
    # which widens the round trip and so the uncertainty, but stays honest.
    builtin = "while read -r _; do echo ${EPOCHREALTIME//[.,]/}000; done"
    loop = (f"if [ -n \"$(bash -c 'echo $EPOCHREALTIME' 2>/dev/null)\" ]; then "
            f"exec bash -c {shlex.quote(builtin)}; "
            f"else while read -r _; do date +%s%N; done; fi")
    try:
        process = subprocess.Popen(host.command(loop), stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as error:
        raise HostError(f"host {host.name} ({host.where()}): {error.strerror}") from None
    taken = []
    try:
        # The first answer also waits for the login; it is not a sample.
        for index in range(samples + 1):
            sent = time.time_ns()
            process.stdin.write(b"\n")
            process.stdin.flush()
            line = process.stdout.readline()
            answered = time.time_ns()
            if not line.strip().isdigit():
                process.kill()
                _, error = process.communicate(timeout=COMMAND_TIMEOUT_S)
                done = subprocess.CompletedProcess([], process.returncode, b"", error)
                raise HostError(f"host {host.name} ({host.where()}): no clock reading: "
                                f"{describe_failure(done, host.ssh is not None)}")
            if index:
                taken.append((sent, int(line), answered))
    finally:
        if process.poll() is None:
            process.stdin.close()
            try:
                process.wait(timeout=COMMAND_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    return offset_from_round_trips(taken)


# --- check and deploy ----------------------------------------------------------------------

@dataclasses.dataclass
class HostReport:
    host: Host
    commit: str = ""
    cores: int = 0
    binaries: dict[str, str] = dataclasses.field(default_factory=dict)  # name -> sha256 | ""
    clock: ClockOffset | None = None
    login_s: float = 0.0            # how long a fresh command took (login included)
    unreachable: str = ""           # why the host could not be reached
    problems: list[str] = dataclasses.field(default_factory=list)


def local_commit(repo: Path) -> str:
    done = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True,
                          text=True)
    return done.stdout.strip() if done.returncode == 0 else ""


def local_binaries(build_dir: Path) -> dict[str, str]:
    hashes = {}
    for name in BINARIES:
        path = build_dir / name
        hashes[name] = hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else ""
    return hashes


def _inspect_command(host: Host) -> str:
    lines = [f"if cd {shlex.quote(host.checkout)} 2>/dev/null; then "
             "echo commit $(git rev-parse HEAD 2>/dev/null || echo none); "
             "else echo checkout missing; fi",
             "echo cores $(nproc)"]
    for name in BINARIES:
        path = shlex.quote(host.binary(name))
        lines.append(f"if [ -x {path} ]; then echo binary {name} $(sha256sum < {path} | "
                     f"cut -d' ' -f1); else echo binary {name} missing; fi")
    return "; ".join(lines)


def _read_state(host: Host, report: HostReport) -> None:
    output = host.run(_inspect_command(host))
    for line in output.splitlines():
        words = line.split()
        if len(words) >= 2 and words[0] == "commit":
            report.commit = words[1]
        elif len(words) >= 2 and words[0] == "cores" and words[1].isdigit():
            report.cores = int(words[1])
        elif words == ["checkout", "missing"]:
            report.problems.append(f"no directory {host.checkout} (the kvlab checkout) there")
        elif len(words) == 3 and words[0] == "binary":
            report.binaries[words[1]] = "" if words[2] == "missing" else words[2]


def inspect_host(host: Host, commit: str, binaries: dict[str, str]) -> HostReport:
    """Reachability, commit, cores, binaries and clock offset of one host; never raises."""
    report = HostReport(host)
    started = time.monotonic()
    try:
        _read_state(host, report)
    except HostError as error:
        report.unreachable = str(error)
        return report
    report.login_s = time.monotonic() - started
    if report.commit != commit:
        report.problems.append(f"checkout {host.checkout} is at commit {report.commit or 'none'}, "
                               f"the runner's at {commit or 'none'}")
    for name in BINARIES:
        if not report.binaries.get(name):
            report.problems.append(f"{host.binary(name)} missing (run: python3 -m kvlab hosts "
                                   f"deploy FILE)")
        elif binaries.get(name) and report.binaries[name] != binaries[name]:
            report.problems.append(f"{host.binary(name)} differs from the runner's build "
                                   f"(run: python3 -m kvlab hosts deploy FILE)")
    try:
        report.clock = measure_clock_offset(host)
    except HostError as error:
        report.problems.append(str(error))
    return report


def render_report(report: HostReport) -> str:
    host = report.host
    if report.unreachable:
        return f"{host.name}: UNREACHABLE: {report.unreachable}"
    clock = (f"clock offset {report.clock.offset_ns / 1e6:+.3f} ms "
             f"(± {report.clock.uncertainty_ns / 1e6:.3f} ms)" if report.clock else "clock unknown")
    text = (f"{host.name} ({host.where()}, address {host.address}): commit "
            f"{report.commit[:12] or 'none'}, {report.cores} cores, {clock}, "
            f"command latency {report.login_s * 1000:.0f} ms")
    return text + "".join(f"\n  PROBLEM: {p}" for p in report.problems)


def deploy_binaries(host: Host, build_dir: Path, binaries: dict[str, str]) -> list[str]:
    """Copies the runner's kvlab-server and kvlab-load into the host's checkout over the
    host's own command channel (ssh or netns), skipping files that are already identical.
    Returns what it copied; raises HostError naming the host."""
    host.run(f"mkdir -p {shlex.quote(host.build_dir())}")
    state = HostReport(host)
    _read_state(host, state)
    present = state.binaries
    copied = []
    for name in BINARIES:
        if not binaries.get(name):
            raise HostError(f"{build_dir / name} not found here (build it: make build)")
        if present.get(name) == binaries[name]:
            continue
        target = shlex.quote(host.binary(name))
        # Write aside, then rename: a binary in use elsewhere is never half-written.
        host.run(f"cat > {target}.part && chmod 755 {target}.part && mv {target}.part {target}",
                 stdin=(build_dir / name).read_bytes(), timeout=600)
        copied.append(name)
    return copied
