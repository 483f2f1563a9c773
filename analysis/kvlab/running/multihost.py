"""Measuring points on several hosts: the server on one, kvlab-load on each client host.

For each [[server]]: start it on the placement's server host, listening on that host's
address (protected mode off: the clients are not on loopback), wait until every client
host gets a PONG from it over the network, then measure its points. A point starts
kvlab-load on every client host at once with one common `--start-at` instant (each
host's own clock, corrected by the offset measured when the run began), the same
duration and warm-up; then the runner collects each host's CSV rows and latency
histograms, and writes one row per client host plus a `merged` row per repetition:

- ops and errors are summed; ops/s is the sum of the hosts' rates, each over its own
  window of the common duration; seconds is the longest host window;
- the latency histograms are merged exactly (bucket counts added) and the merged
  percentiles are read from the merged histogram, never averaged;
- client CPU is summed; the merged row is client-bound when any host was, and its
  note names the bound hosts (each host's row keeps its own flag).

A client host that fails (kvlab-load exits non-zero, the host or its ssh dies) fails the
point with the host's name and error; the other hosts' kvlab-load is stopped then (on
the host, by the pid its command wrote) instead of loading the server to the end of the
point, and so is any still running past the point's budget; completed points are kept
and the run goes on.
Only kvlab-load over TCP is measured this way (the experiment file is refused
otherwise: see hosts.parse_hosts).

Not thread-safe: one runner thread drives it.
"""

from __future__ import annotations

import dataclasses
import json
import queue
import shlex
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable

from ..measures.histograms import Histogram
from ..schema.specs import Experiment, Point, ServerSpec, point_fill
from .hosts import (ClockOffset, Host, HostError, describe_failure, inspect_host,
                    local_binaries, local_commit, multiplexed, placed_hosts, render_report,
                    stop_multiplexing)
from .loadgens import (cell_formats, format_cell, kvlab_load_arguments, point_schema,
                       read_kvlab_load_rows)
from .commands import BUILD_COLUMN
from .servers import (HOST_START_TIMEOUT_S, CommandServerProcess, ServerError, ServerProcess,
                      password_arguments)

MERGED = "merged"
# Seconds between starting the client hosts and the common start instant: three times the
# slowest host's command latency, and at least this.
START_LEAD_MIN_S = 0.5
START_LEAD_MAX_S = 10.0
LOAD_BUDGET_EXTRA_S = 120.0
# Hosts whose starts lie further apart than this fraction of a repetition get a note.
START_SKEW_FRACTION = 0.01


# --- the merged row ---------------------------------------------------------------------

def merged_row(host_rows: dict[str, dict], host_histograms: dict[str, dict],
               formats: dict[str, str]) -> dict:
    """The `merged` figures of one repetition measured by every client host at once, each
    cell formatted as kvlab-load formats it (`formats`: loadgens.cell_formats of its
    --schema)."""
    rows = list(host_rows.values())
    histogram = Histogram.merge(list(host_histograms.values()))
    bound = [name for name, row in host_rows.items() if row.get("client_bound") == "true"]
    server_cpus = [float(r["server_cpu"]) for r in rows if r.get("server_cpu")]
    figures = {
        "repetition": rows[0]["repetition"],
        "ops": sum(int(r["ops"]) for r in rows),
        "errors": sum(int(r["errors"]) for r in rows),
        "seconds": max(float(r["seconds"]) for r in rows),
        "ops_per_s": sum(float(r["ops_per_s"]) for r in rows),
        "client_cpu": sum(float(r["client_cpu"]) for r in rows),
        "client_bound": bool(bound),
        "server_cpu": sum(server_cpus) / len(server_cpus) if server_cpus else None,
        **histogram.percentiles_us(),
    }
    merged = {column: value if column == "repetition" else format_cell(formats, column, value)
              for column, value in figures.items()}
    merged["note"] = f"client-bound hosts: {', '.join(bound)}" if bound else ""
    merged["histogram"] = histogram.to_json()
    return merged


# --- one point on every client host -------------------------------------------------------

@dataclasses.dataclass
class HostOutcome:
    host: Host
    rows: list[dict[str, str]]
    histograms: dict[str, dict]   # repetition -> histogram
    json_text: str
    start_late_ms: float | None   # how late it began after the common instant
    error: str | None


# What a client host's value is in _run_on_clients when the runner stopped its kvlab-load
# because another host had failed the point.
STOPPED = "stopped: another client host failed the point"
# Seconds a stop (one short command on the host) may take.
STOP_TIMEOUT_S = 10.0


def _stop_load(host: Host, process: subprocess.Popen, pid_path: str) -> None:
    """Stops a client host's kvlab-load: on the host by the pid its command wrote (over ssh,
    killing the local ssh client leaves the remote program running to the end of the
    point), then the local process. Best effort: a host that no longer answers keeps
    whatever runs there."""
    pid_file = shlex.quote(pid_path)
    try:
        host.run(f"test -s {pid_file} && kill $(cat {pid_file}) 2>/dev/null; true",
                 timeout=STOP_TIMEOUT_S)
    except HostError:
        pass
    if process.poll() is None:
        process.kill()


def _run_on_clients(clients: list[Host], commands: dict[str, str], pid_paths: dict[str, str],
                    budget: float) -> dict[str, subprocess.CompletedProcess | str]:
    """Starts one command per client host at once; waits for all. A host's value is its
    finished process, or why it could not run (STOPPED when another host failed first).

    Each command writes its program's pid to `pid_paths[host]` on its host. The first
    command to fail (a host or its ssh dying, kvlab-load exiting non-zero) fails the point,
    so the others are stopped then rather than left to load the server to the end of the
    point; past `budget` every command still running is stopped."""
    processes: dict[str, subprocess.Popen] = {}
    finished: dict[str, subprocess.CompletedProcess | str] = {}
    for host in clients:
        try:
            processes[host.name] = subprocess.Popen(
                host.command(commands[host.name]), stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError as error:
            finished[host.name] = f"cannot start {host.command('')[0]}: {error.strerror}"
    # One reader per process: each pipe is drained while it runs, and the first to end
    # is known at once, whichever host it is.
    ended: queue.Queue[tuple[str, subprocess.CompletedProcess]] = queue.Queue()

    def read(name: str, process: subprocess.Popen) -> None:
        out, err = process.communicate()
        ended.put((name, subprocess.CompletedProcess([], process.returncode, out, err)))

    readers = [threading.Thread(target=read, args=item, daemon=True)
               for item in processes.items()]
    for reader in readers:
        reader.start()
    hosts = {host.name: host for host in clients}
    stopped: dict[str, str] = {}

    def stop_the_rest(why: str) -> None:
        for name, process in processes.items():
            if name not in finished and name not in stopped:
                stopped[name] = why
                _stop_load(hosts[name], process, pid_paths[name])

    deadline = time.monotonic() + budget
    if finished:  # a host whose command could not start fails the point
        stop_the_rest(STOPPED)
    waiting = set(processes)
    while waiting:
        try:
            name, done = ended.get(timeout=max(0.05, deadline - time.monotonic()))
        except queue.Empty:
            stop_the_rest(f"kvlab-load did not finish within {budget:.0f} s")
            continue
        waiting.discard(name)
        finished[name] = stopped.get(name, done)
        if done.returncode != 0 and name not in stopped:
            stop_the_rest(STOPPED)
    for reader in readers:
        reader.join()
    return finished


FILE_SEPARATOR = "\n--- kvlab: next file ---\n"
START_LINE = "kvlab-load: started at --start-at + "


def _fetch_and_remove(host: Host, csv_path: str, json_path: str,
                      pid_path: str) -> tuple[str, str]:
    """Both result files of a host in one command (one ssh login), then removes them and
    the pid file."""
    csv_file, json_file = shlex.quote(csv_path), shlex.quote(json_path)
    output = host.run(f"cat {csv_file} && printf %s {shlex.quote(FILE_SEPARATOR)} && "
                      f"cat {json_file} && rm -f {csv_file} {json_file} "
                      f"{shlex.quote(pid_path)}")
    csv_text, separator, json_text = output.partition(FILE_SEPARATOR)
    if not separator:
        raise ValueError("the host's output lacks the second file")
    return csv_text, json_text


def _start_late_ms(stdout: bytes) -> float | None:
    """How late kvlab-load began after the common instant, from its own line."""
    for line in stdout.decode(errors="replace").splitlines():
        if line.startswith(START_LINE):
            return float(line[len(START_LINE):].split()[0])
    return None


def _outcome(host: Host, finished: subprocess.CompletedProcess | str, csv_path: str,
             json_path: str, pid_path: str) -> HostOutcome:
    if isinstance(finished, str):
        try:  # what a stopped kvlab-load left (a host that died keeps its files)
            host.run("rm -f " + " ".join(shlex.quote(p) for p in (csv_path, json_path, pid_path)),
                     timeout=STOP_TIMEOUT_S)
        except HostError:
            pass
        # A host stopped because another failed has no error of its own: the point's
        # note is the failed host's.
        error = None if finished == STOPPED else f"client host {host.name}: {finished}"
        return HostOutcome(host, [], {}, "", None, error)
    error = None
    if finished.returncode != 0:
        # 255 is ssh's own failure (the link or the host); anything else is kvlab-load's.
        program = "" if finished.returncode == 255 and host.ssh else "kvlab-load "
        failure = describe_failure(finished, over_ssh=host.ssh is not None)
        error = f"client host {host.name}: {program}{failure}"
    rows, histograms, json_text = [], {}, ""
    try:
        csv_text, json_text = _fetch_and_remove(host, csv_path, json_path, pid_path)
        rows = read_kvlab_load_rows(csv_text)
        document = json.loads(json_text)
        for point in document.get("points", []):
            for repetition in point.get("repetitions", []):
                histograms[str(repetition["repetition"])] = repetition["histogram"]
    except (HostError, ValueError, KeyError) as problem:
        if error is None:
            error = f"client host {host.name}: results unreadable: {problem}"
    return HostOutcome(host, rows, histograms, json_text, _start_late_ms(finished.stdout), error)


class MultiHostMeasurement:
    """Measures an experiment's points with its [placement]; rows go to `write`, one
    progress call per point. `say` prints a line; problems collects what went wrong."""

    def __init__(self, experiment: Experiment, repo: Path, build_dir: Path, run_dir: Path,
                 say: Callable[[str], None], problems: list[str],
                 identify: Callable[[ServerProcess], None] = lambda server: None,
                 build_of: Callable[[str], str] = lambda server: "") -> None:
        self.experiment = experiment
        # The runner's: records a started server's build, and names it for a row.
        self.identify = identify
        self.build_of = build_of
        self.repo = repo
        self.build_dir = build_dir
        self.cell_formats = cell_formats(point_schema(build_dir))
        self.run_dir = run_dir
        self.say = say
        self.problems = problems
        self.hosts = placed_hosts(experiment.hosts, experiment.placement, build_dir)
        self._use(self.hosts)
        self.clocks: dict[str, ClockOffset] = {}
        self.lead_s = START_LEAD_MIN_S
        self._count = 0

    # The runner's callbacks: write(rows) and done(point, summary).
    def measure(self, points: list[Point], write: Callable[[list[dict]], None],
                done: Callable[[Point, str], None]) -> None:
        write = self._with_builds(write)
        # Only the experiment's own CPU lists apply on other hosts (this machine's defaults
        # say nothing about theirs).
        self.say(f"on the hosts: server {self.server_host.name} CPUs "
                 f"{self.experiment.server_cpus or 'any'}; client hosts "
                 f"{', '.join(h.name for h in self.clients)} CPUs "
                 f"{self.experiment.harness_cpus or 'any'}")
        plain = self.hosts
        with tempfile.TemporaryDirectory(prefix="kvlab-ssh-") as sockets:
            self._use([multiplexed(h, sockets) for h in plain])
            try:
                unreachable = self._check_hosts()
                if unreachable:
                    self._give_up(points, unreachable, write, done)
                    return
                for server in self.experiment.servers:
                    mine = [p for p in points if p.server == server.name]
                    if mine:
                        self._measure_server(server, mine, write, done)
            finally:
                for host in self.hosts:
                    stop_multiplexing(host)
                self._use(plain)

    def _with_builds(self, write: Callable[[list[dict]], None]) -> Callable[[list[dict]], None]:
        """`write` with each row's server build filled in, as the runner's own rows have."""
        def write_with_builds(rows: list[dict]) -> None:
            write([{**row, BUILD_COLUMN: self.build_of(row["server"])} for row in rows])
        return write_with_builds

    def _use(self, hosts: list[Host]) -> None:
        """Hosts in placement order (server first), each once."""
        self.hosts = hosts
        by_name = {h.name: h for h in hosts}
        self.server_host = by_name[self.experiment.placement.server_host]
        self.clients = [by_name[n] for n in self.experiment.placement.client_hosts]

    def _check_hosts(self) -> str | None:
        """Every placed host reachable, with its clock offset; the reports go to hosts.json."""
        commit, binaries = local_commit(self.repo), local_binaries(self.build_dir)
        reports = [inspect_host(h, commit, binaries) for h in self.hosts]
        record = {}
        command_s = {}
        for report in reports:
            if not report.unreachable:
                # What starting a command costs from now on (the shared connection is up).
                started = time.monotonic()
                try:
                    report.host.run("true")
                    command_s[report.host.name] = time.monotonic() - started
                except HostError as error:
                    report.unreachable = str(error)
            self.say(render_report(report))
            record[report.host.name] = {
                "where": report.host.where(), "address": report.host.address,
                "checkout": report.host.checkout, "commit": report.commit,
                "cores": report.cores, "binaries": report.binaries,
                "clock_offset_ns": report.clock.offset_ns if report.clock else None,
                "clock_uncertainty_ns": report.clock.uncertainty_ns if report.clock else None,
                "first_command_s": report.login_s,
                "command_s": command_s.get(report.host.name),
                "unreachable": report.unreachable,
                "problems": report.problems}
            if report.clock:
                self.clocks[report.host.name] = report.clock
        (self.run_dir / "hosts.json").write_text(json.dumps(
            {"placement": dataclasses.asdict(self.experiment.placement), "hosts": record},
            indent=2) + "\n")
        for report in reports:
            if report.unreachable:
                return report.unreachable
            missing = [p for p in report.problems if "missing" in p or "no clock" in p]
            if missing:
                return f"host {report.host.name}: {missing[0]}"
        self.lead_s = max(START_LEAD_MIN_S, 3 * max(command_s.values()))
        return None

    def _give_up(self, points: list[Point], problem: str, write: Callable[[list[dict]], None],
                 done: Callable[[Point, str], None]) -> None:
        self.say(problem)
        self.problems.append(problem)
        for point in points:
            write([_row(point, {"repetition": str(r)}, MERGED, "failed", problem)
                   for r in range(1, point.repetitions + 1)])
            done(point, "failed")

    def _measure_server(self, spec: ServerSpec, points: list[Point],
                        write: Callable[[list[dict]], None],
                        done: Callable[[Point, str], None]) -> None:
        log_path = self.run_dir / "logs" / f"{spec.name}-{self.server_host.name}.log"
        if spec.kind == "command":  # its command line, run on the server host
            server = CommandServerProcess(
                spec, self.run_dir, log_path, cpus=self.experiment.server_cpus,
                host=self.server_host, port=self.experiment.placement.server_port)
        else:
            server = ServerProcess(
                spec, self.build_dir, self.run_dir, cpus=self.experiment.server_cpus,
                log_path=log_path, host=self.server_host,
                port=self.experiment.placement.server_port)
        try:
            server.start()
            self._wait_until_answering(server)
        except (HostError, ServerError) as error:
            server.stop()
            self._give_up(points, f"server {spec.name} failed to start: {error}", write, done)
            return
        self.say(f"{spec.name} runs on {self.server_host.name} (pid {server.pid}) at "
                 f"{server.target()}")
        self.identify(server)
        prefilled: set[tuple[str | None, int, int]] = set()
        try:
            for point in points:
                if not server.alive():
                    self._give_up([point], server.death_reason(), write, done)
                    continue
                self._measure_point(point, server, prefilled, write, done)
        finally:
            server.stop()

    def _probe(self, host: Host, target: str, command: str, keys: int = 1,
               value_size: int = 64, prefill: bool = False) -> None:
        """A minimal kvlab-load run from `host`: it connects, (prefills,) and measures briefly."""
        words = [host.binary("kvlab-load"), "--target", target, *password_arguments(target),
                 "--command", command,
                 "--keys", str(keys), "--value-size", str(value_size), "--duration", "0.01",
                 "--warmup", "0", "--repeat", "1", "--quiet", "--connect-timeout", "2"]
        if prefill:
            words.append("--prefill")
        host.run(" ".join(shlex.quote(w) for w in words), timeout=600)

    def _wait_until_answering(self, server: ServerProcess) -> None:
        deadline = time.monotonic() + HOST_START_TIMEOUT_S
        for host in self.clients:
            while True:
                try:
                    self._probe(host, server.target(), "ping")
                    break
                except HostError as error:
                    if not server.alive():
                        raise HostError(server.death_reason()) from None
                    if time.monotonic() > deadline:
                        raise HostError(f"no PONG from {server.target()} on client host "
                                        f"{host.name} within {HOST_START_TIMEOUT_S:.0f} s: "
                                        f"{error}") from None
                    time.sleep(0.2)

    def _measure_point(self, point: Point, server: ServerProcess,
                       prefilled: set[tuple[str | None, int, int]],
                       write: Callable[[list[dict]], None],
                       done: Callable[[Point, str], None]) -> None:
        # Prefill once from the first client host, before the common start (kvlab-load
        # prefills inside its run, which would put one host's prefill into the others' time).
        fill = (point_fill(point), point.keys, point.value_size)
        needs_prefill = point.command == "incrby" or (fill[0] and fill not in prefilled)
        if needs_prefill:
            try:
                self._probe(self.clients[0], server.target(), point.command, point.keys,
                            point.value_size, prefill=True)
            except HostError as error:
                problem = f"prefill failed: {error}"
                self.problems.append(f"{point.server}/{point.sweep}: {problem}")
                write([_row(point, {"repetition": str(r)}, MERGED, "failed", problem)
                       for r in range(1, point.repetitions + 1)])
                done(point, f"FAILED: {problem}")
                return
            if fill[0]:
                prefilled.add(fill)
        self._count += 1
        slug = (f"{self._count:04d}-{point.server}-{point.sweep}-{point.client}-{point.command}-"
                f"k{point.keys}-p{point.pipeline}-t{point.threads}")
        scratch = f"/tmp/kvlab-{self.run_dir.name}-{slug}"
        start_ns = time.time_ns() + int(self.lead_s * 1e9)
        commands, files = {}, {}
        for host in self.clients:
            csv_path, json_path = f"{scratch}-{host.name}.csv", f"{scratch}-{host.name}.json"
            pid_path = f"{scratch}-{host.name}.pid"
            files[host.name] = (csv_path, json_path, pid_path)
            offset = self.clocks[host.name].offset_ns
            taskset = ["taskset", "-c", self.experiment.harness_cpus] \
                if self.experiment.harness_cpus else []
            words = taskset + [host.binary("kvlab-load")] + kvlab_load_arguments(
                point, server.target(), csv_path, json_path) + [
                "--start-at", str(start_ns + offset), "--quiet"]
            # --quiet drops the per-second line, not the start line read back here.
            # `exec`: the pid written is kvlab-load's (taskset execs it too), which is
            # what a stop kills on the host.
            commands[host.name] = (f"echo $$ > {shlex.quote(pid_path)} && exec "
                                   + " ".join(shlex.quote(w) for w in words))
        budget = (self.lead_s + point.warmup + point.repetitions * point.duration
                  + LOAD_BUDGET_EXTRA_S)
        finished = _run_on_clients(self.clients, commands,
                                   {name: paths[2] for name, paths in files.items()}, budget)
        outcomes = [_outcome(h, finished[h.name], *files[h.name]) for h in self.clients]
        self._adapt_lead(point, outcomes)
        rows, error = self._rows(point, slug, outcomes)
        if error:
            self.problems.append(f"{point.server}/{point.sweep}: {error}")
        write(rows)
        merged = [r for r in rows if r["host"] == MERGED and r["status"] == "ok"]
        done(point, _summary(merged, error))

    def _adapt_lead(self, point: Point, outcomes: list[HostOutcome]) -> None:
        """A host that began late had too little lead (a slow login, a busy host): give the
        next points that much more, twice over, up to START_LEAD_MAX_S."""
        late = {o.host.name: o.start_late_ms for o in outcomes if o.start_late_ms is not None}
        if not late:
            return
        name = max(late, key=late.get)
        if late[name] <= START_SKEW_FRACTION * point.duration * 1000 \
                or self.lead_s >= START_LEAD_MAX_S:
            return
        self.lead_s = min(START_LEAD_MAX_S, self.lead_s + 2 * late[name] / 1000)
        self.say(f"client host {name} began {late[name]:.1f} ms after the common instant; "
                 f"the start lead is now {self.lead_s:.2f} s")

    def _rows(self, point: Point, slug: str,
              outcomes: list[HostOutcome]) -> tuple[list[dict], str | None]:
        histogram_dir = self.run_dir / "histograms"
        rows = []
        for outcome in outcomes:
            if outcome.json_text:
                (histogram_dir / f"{slug}-{outcome.host.name}.json").write_text(outcome.json_text)
            # The rows name the JSON file where the host wrote it; here it is in histograms/.
            histogram = f"histograms/{slug}-{outcome.host.name}.json"
            rows += [_row(point, dict(r, histogram=histogram), outcome.host.name, "ok")
                     for r in outcome.rows]
        errors = [o.error for o in outcomes if o.error]
        error = "; ".join(errors) if errors else None
        merged_record = []
        skew = start_skew_note(point, {o.host.name: o.start_late_ms for o in outcomes})
        for repetition in range(1, point.repetitions + 1):
            key = str(repetition)
            by_host = {o.host.name: next((r for r in o.rows if r["repetition"] == key), None)
                       for o in outcomes}
            complete = all(by_host.values()) and all(key in o.histograms for o in outcomes)
            if not complete:
                problem = error or f"repetition {key} missing from a client host's results"
                rows += [_row(point, {"repetition": key}, o.host.name, "failed", problem)
                         for o in outcomes if by_host[o.host.name] is None]
                rows.append(_row(point, {"repetition": key}, MERGED, "failed", problem))
                error = error or problem
                continue
            figures = merged_row(by_host, {o.host.name: o.histograms[key] for o in outcomes},
                                 self.cell_formats)
            merged_record.append({"repetition": repetition, "hosts": list(by_host),
                                  "histogram": figures.pop("histogram")})
            note = "; ".join(n for n in (figures.pop("note"), skew) if n)
            shared = {c: by_host[outcomes[0].host.name][c]
                      for c in ("threads", "client", "transport", "pipeline", "connections")}
            rows.append(_row(point, {**shared, **figures}, MERGED, "ok", note))
        if merged_record:
            (histogram_dir / f"{slug}-{MERGED}.json").write_text(json.dumps(
                {"format": "kvlab-merged/1", "hosts": [o.host.name for o in outcomes],
                 "start_late_ms": {o.host.name: o.start_late_ms for o in outcomes},
                 "repetitions": merged_record}) + "\n")
        return rows, error


def start_skew_note(point: Point, late_ms: dict[str, float | None]) -> str:
    """A note when the hosts' windows were misaligned by more than START_SKEW_FRACTION of a
    repetition (a host's start came late: a slow login, a busy host)."""
    known = {name: late for name, late in late_ms.items() if late is not None}
    if len(known) < 2:
        return ""
    latest = max(known, key=known.get)
    spread = known[latest] - min(known.values())
    if spread <= START_SKEW_FRACTION * point.duration * 1000:
        return ""
    return f"client hosts began {spread:.1f} ms apart ({latest} last)"


def _row(point: Point, figures: dict, host: str, status: str, note: str = "") -> dict:
    row = dict(figures)
    row.update(point.variables())
    row.update(host=host, status=status, note=note)
    return row


def _summary(merged_rows: list[dict], error: str | None) -> str:
    rates = sorted(float(r["ops_per_s"]) for r in merged_rows)
    text = f"merged median {rates[len(rates) // 2]:,.0f} ops/s" if rates else "no figures"
    bound = {r["note"] for r in merged_rows if r.get("client_bound") == "true"}
    if bound:
        text += f" ({'; '.join(sorted(bound))})"
    return text + (f"; FAILED: {error}" if error else "")
