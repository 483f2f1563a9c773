"""The load generators a point can be measured with, both run through kvlab-load.

kvlab-load writes the points.csv rows itself, one per repetition: the point's
variables (passed as `--label name=value`) and then its measured columns, whose
names, kinds and meanings only kvlab-load declares (`kvlab-load --schema`,
harness/output/point_record.h). It watches the measured CPUs for interference and the
server's costs per operation, and says `disturbed` in the row's status.

- loadgen "kvlab-load": its own client strategies; it also writes a JSON file
  with the latency histograms.
- loadgen "redis-benchmark" (Debian's): `kvlab-load --loadgen redis-benchmark`
  runs it as a child per repetition (after a calibrating run that sizes -n to the
  point's duration, also the warm-up) and measures around it alike; p90, p99.9,
  errors and the histogram stay blank: nothing is made up.

A server given by a command line (a `command` row) is measured from /proc: its
processes are passed as `--server-pids`, and kvlab-load reads their process trees' CPU
(threads and children) instead of INFO cpu, which such a server may not report.

The watch counts the CPUs' busy time less ours as others' work, and each sleep of our
threads costs the CPUs a little that no process is charged with (harness/measurement/
wake_cost.h). `wake_cost` measures it once per boot, CPU pair and way of idling (`kvlab-load
--calibrate-wake-cost`, about 3 s, kept in the user's cache folder) and every kvlab-load
of a run gets it as `--wake-cost-us`.

A run returns the rows keyed by their header (strings, "" for unknown) and an
error message when it failed (the rows that completed are still returned).
"""

from __future__ import annotations

import csv
import dataclasses
import datetime
import functools
import io
import json
import os
import subprocess
from collections.abc import Iterable
from pathlib import Path

from ..schema.specs import DEFAULT_DISTURBANCE_CORES, Point
from .servers import launch_prefix, password_arguments



@dataclasses.dataclass
class LoadResult:
    rows: list[dict[str, str]]
    error: str | None = None


class LoadgenMissing(Exception):
    """kvlab-load is not built: no point can be measured and no row header is known."""


@functools.lru_cache(maxsize=8)
def point_schema(build_dir: Path) -> dict:
    """`kvlab-load --schema`: {"format": version, "columns": [{name, kind, meaning,
    cell_format}]}."""
    binary = Path(build_dir) / "kvlab-load"
    if not binary.exists():
        raise LoadgenMissing(f"{binary} not found (build it: make build)")
    done = subprocess.run([str(binary), "--schema"], capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        raise LoadgenMissing(f"{binary} --schema exited with status {done.returncode}: "
                             f"{_tail(done.stderr)}")
    return json.loads(done.stdout)


def row_columns(schema: dict, labels: Iterable[str]) -> list[str]:
    """A row's columns as kvlab-load writes them: the labels', then the measured ones
    no label took."""
    labels = list(labels)
    return labels + [c["name"] for c in schema["columns"] if c["name"] not in labels]


def label_arguments(labels: dict) -> list[str]:
    """kvlab-load arguments that make `labels` a row's leading columns."""
    arguments = []
    for name, value in labels.items():
        arguments += ["--label", f"{name}={value}"]
    return arguments


@dataclasses.dataclass(frozen=True)
class Watch:
    """What kvlab-load watches besides the load: the CPUs whose other users make a
    measurement disturbed, our own helper processes there, and the threshold."""
    measured_cpus: tuple[int, ...] = ()
    own_pids: tuple[int, ...] = ()
    disturbed_above: float | None = None
    wake_cost_us: float | None = None  # None: kvlab-load calibrates it itself


    def arguments(self) -> list[str]:
        arguments = []
        if self.measured_cpus:
            arguments += ["--measured-cpus", ",".join(str(c) for c in self.measured_cpus)]
        if self.own_pids:
            arguments += ["--own-pids", ",".join(str(p) for p in self.own_pids)]
        if self.disturbed_above is not None:
            arguments += ["--disturbed-above", f"{self.disturbed_above:g}"]
        if self.measured_cpus and self.wake_cost_us is not None:
            arguments += ["--wake-cost-us", f"{self.wake_cost_us:.6f}"]
        return arguments


WAKE_COST_CACHE = "wake-cost.json"
# A calibration that found no clean window (the CPUs busy with others) is kept this long,
# so that runs started one after another on a busy machine (a test suite's) do not each
# spend the calibration's seconds finding the same; a later run measures again.
NOT_MEASURED_KEPT_S = 120.0


def _cache_folder() -> Path:
    """KVLAB_CACHE_DIR (the test suite's own, so that its busy calibrations never reach
    the user's runs), else the user's cache folder."""
    if os.environ.get("KVLAB_CACHE_DIR"):
        return Path(os.environ["KVLAB_CACHE_DIR"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kvlab"


def _fresh(entry: dict, now: datetime.datetime) -> bool:
    """Whether a cached entry may be used: a measured figure for the whole boot, one
    without a clean window for NOT_MEASURED_KEPT_S."""
    if entry.get("windows") != 0:
        return True
    try:
        measured = datetime.datetime.fromisoformat(entry.get("measured_utc", ""))
    except (TypeError, ValueError):
        return False
    return 0 <= (now - measured).total_seconds() < NOT_MEASURED_KEPT_S


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def wake_cost(build_dir: Path, measured_cpus: Iterable[int],
              cache: Path | None = None, idle: str = "kernel") -> dict:
    """The measured CPUs' uncharged cost per sleep of ours: {"wake_cost_us", "windows",
    "sleeps", "others_cores", "boot_id", "cpus", "measured_utc", "cached"}. Measured
    with `kvlab-load --calibrate-wake-cost` on the first two CPUs (the ping-pong's), once
    per boot: a kernel's figure, not a run's, and 3 s a run would be a tenth of a short
    one. `idle`: how idle CPUs wait now (cpu_idle.IdleHold.regime()): a polling CPU
    wakes without a halt's cost, so each way has its own figure. Raises LoadgenMissing
    when kvlab-load cannot measure it."""
    cpus = list(measured_cpus)[:2]
    key = {"boot_id": _boot_id(), "cpus": cpus, "idle": idle}
    path = (cache or _cache_folder()) / WAKE_COST_CACHE
    try:
        entries = json.loads(path.read_text())
    except (OSError, ValueError):
        entries = []
    entries = [e for e in entries if isinstance(e, dict) and e.get("boot_id") == key["boot_id"]]
    # An entry measured while other processes kept the CPUs busy (a kvlab-load from before
    # such windows were left out) holds the low figure of sleeps that took no CPU through
    # idle: measured again, and replaced.
    now = datetime.datetime.now(datetime.timezone.utc)
    entries = [e for e in entries
               if not e.get("others_cores", 0) > DEFAULT_DISTURBANCE_CORES and _fresh(e, now)]
    for entry in entries:
        if entry.get("cpus") == cpus and entry.get("idle", "kernel") == idle \
                and isinstance(entry.get("wake_cost_us"), (int, float)):
            return {**entry, "cached": True}
    binary = Path(build_dir) / "kvlab-load"
    try:
        done = subprocess.run([str(binary), "--calibrate-wake-cost", "--measured-cpus",
                               ",".join(str(c) for c in cpus)],
                              capture_output=True, text=True, timeout=60)
        measured = json.loads(done.stdout) if done.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ValueError) as error:
        raise LoadgenMissing(f"{binary} --calibrate-wake-cost: {error}") from error
    if not isinstance(measured, dict) or not isinstance(measured.get("wake_cost_us"),
                                                          (int, float)):
        raise LoadgenMissing(f"{binary} --calibrate-wake-cost exited with status "
                             f"{done.returncode}: {_tail(done.stderr or done.stdout)}")
    entry = {**measured, **key,
             "measured_utc": datetime.datetime.now(datetime.timezone.utc).isoformat()}
    if not measured.get("windows"):
        # Processes came and went, or kept the CPUs busy, in every window: nothing
        # subtracted this run, and kept only NOT_MEASURED_KEPT_S (a busy moment is not
        # this boot's figure).
        entry["windows"] = 0
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(json.dumps(entries + [entry], indent=1) + "\n")
        temporary.replace(path)
    except OSError:
        pass  # an unwritable cache measures again next time; the run still has its figure
    return {**entry, "cached": False}


def _tail(text: str, lines: int = 4) -> str:
    return " | ".join(text.strip().splitlines()[-lines:])


def kvlab_load_arguments(point: Point, target: str, csv_path: Path | str,
                         json_path: Path | str, labels: dict | None = None) -> list[str]:
    """kvlab-load's arguments (after the program) that measure `point` against `target`;
    its rows lead with the point's variables and then `labels`."""
    return label_arguments({**point.variables(), **(labels or {})}) + [
        "--loadgen", point.loadgen] + load_arguments(point, target) + [
        "--duration", f"{point.duration:g}", "--warmup", f"{point.warmup:g}",
        "--repeat", str(point.repetitions), "--csv", str(csv_path), "--json", str(json_path)]


def load_arguments(point: Point, target: str) -> list[str]:
    """The options that say what load `point` offers `target` (no timing, no files), with
    its server's --password when it has one."""
    arguments = [
        "--target", target, *password_arguments(target), "--client", point.client,
        "--threads", str(point.threads), "--command", point.command,
        "--keys", str(point.keys), "--key-dist", point.key_dist,
        "--value-size", str(point.value_size), "--nodelay", point.nodelay]
    if point.value_shape != "string":
        arguments += ["--value-shape", point.value_shape]
    if point.client == "dedicated":
        arguments += ["--pipeline", str(point.pipeline)]
    if point.client != "shared":  # shared always uses exactly one connection
        arguments += ["--connections", str(point.connections)]
    if point.command == "mix":
        arguments += ["--ratio", point.ratio]
    if point.route == "slots":
        arguments += ["--route", "slots"]
    if point.client != "dedicated":
        arguments += ["--io", point.io]
        if point.io == "event-loop":
            arguments += ["--io-flush", point.io_flush]
            if point.loop_threads:
                arguments += ["--loop-threads", str(point.loop_threads)]
    return arguments


def _options(arguments: list[str]) -> dict[str, str]:
    return dict(zip(arguments[0::2], arguments[1::2]))


NEUTRAL_OPTIONS = {"--pipeline": "1", "--connections": "1", "--io": "direct", "--route": "none",
                   "--server-pids": "none"}


def server_pid_arguments(pids: Iterable[int] | None) -> list[str]:
    """--server-pids for a server measured from /proc (a command row); [] for the others."""
    pids = [p for p in (pids or ()) if p]
    return ["--server-pids", ",".join(str(p) for p in pids)] if pids else []


def alternation_command(point_a: Point, target_a: str, point_b: Point, target_b: str,
                        build_dir: Path, cpus: str | None, netns: str | None, json_path: Path,
                        seconds: float, slice_s: float, watch: Watch = Watch(),
                        prefill: bool = False, rate: float = 0,
                        server_pids: tuple[list[int] | None, list[int] | None] = (None, None)
                        ) -> list[str]:
    """kvlab-load alternating between two points (harness/alternation.h): side A is
    point_a against target_a; side B states only the options where point_b differs.
    rate > 0: open loop, both sides offered that many ops/s. server_pids: each side's
    --server-pids (a command row's processes), or None."""
    a = load_arguments(point_a, target_a) + server_pid_arguments(server_pids[0])
    b = _options(load_arguments(point_b, target_b) + server_pid_arguments(server_pids[1]))
    a_options = _options(a)
    differs = [word for name, value in b.items() if a_options.get(name) != value
               for word in (name, value)]
    # An option of A that B's client has no use for (a shared client's connections, a
    # pooled one's pipeline) goes back to the value that means "not used".
    for name in a_options:
        if name == "--password" and b["--target"] != a_options["--target"]:
            continue  # kvlab-load: side B of another target never inherits A's password
        if name not in b:
            if name not in NEUTRAL_OPTIONS:
                raise ValueError(f"side B cannot leave out {name} of side A")
            differs += [name, NEUTRAL_OPTIONS[name]]
    command = launch_prefix(cpus, netns) + [str(Path(build_dir).resolve() / "kvlab-load")] + a + [
        "--duration", f"{seconds:g}", "--warmup", f"{point_a.warmup:g}",
        "--slice", f"{slice_s:g}", "--json", str(json_path), "--quiet",
        "--alternate-with", " ".join(differs)] + watch.arguments()
    if prefill:
        command.append("--prefill")
    if rate > 0:
        command += ["--rate", f"{rate:g}"]
    return command


def cell_formats(schema: dict) -> dict[str, str]:
    """column -> how kvlab-load writes its cell, from `kvlab-load --schema`
    (harness/output/point_record.cc's table): a printf format, "count" (an integer),
    "flag" (true | false), or "" (text, as it is). A row the runner composes itself
    (running/multihost.py's merged rows) writes its cells with format_cell, so they read
    as kvlab-load's."""
    return {column["name"]: column["cell_format"] for column in schema["columns"]}


def format_cell(formats: dict[str, str], column: str, value: float | int | bool | str | None) -> str:
    """`value` as kvlab-load writes column's cell; None or NaN (not measured): blank."""
    if value is None or value != value:
        return ""
    kind = formats[column]
    if kind == "flag":
        return "true" if value else "false"
    if kind == "count":
        return str(int(value))
    if kind == "":
        return str(value)
    return kind % value


def read_kvlab_load_rows(csv_text: str) -> list[dict[str, str]]:
    """kvlab-load's CSV as rows keyed by its header."""
    return [{column: value or "" for column, value in record.items()}
            for record in csv.DictReader(io.StringIO(csv_text))]


def kvlab_load_command(point: Point, binary: Path, target: str, cpus: str | None,
                       netns: str | None, csv_path: Path, json_path: Path, prefill: bool,
                       rate: float = 0, arrival: str = "uniform", labels: dict | None = None,
                       watch: Watch = Watch(), requests: int = 0,
                       server_pids: list[int] | None = None) -> list[str]:
    """The kvlab-load command line of a point; rate > 0: open loop at that many ops/s;
    requests > 0 (redis-benchmark): that many requests per repetition; server_pids: the
    server's processes, its CPU read from /proc (server_pid_arguments)."""
    command = launch_prefix(cpus, netns) + [str(binary)] + kvlab_load_arguments(
        point, target, csv_path, json_path, labels) + watch.arguments() \
        + server_pid_arguments(server_pids)
    if requests:
        command += ["--requests", str(requests)]
    if prefill:
        command.append("--prefill")
    if rate > 0:
        command += ["--rate", f"{rate:.0f}", "--arrival", arrival]
    return command


def run_kvlab_load(point: Point, build_dir: Path, target: str, cpus: str | None,
                   netns: str | None, csv_path: Path, json_path: Path,
                   prefill: bool, rate: float = 0, arrival: str = "uniform",
                   labels: dict | None = None, watch: Watch = Watch(),
                   cwd: Path | None = None, requests: int = 0,
                   server_pids: list[int] | None = None) -> LoadResult:
    """Runs kvlab-load in `cwd` (relative csv/json paths are relative to it; the rows
    name the JSON file as given)."""
    binary = Path(build_dir).resolve() / "kvlab-load"
    if not binary.exists():
        return LoadResult([], f"{binary} not found (build it: make build)")
    command = kvlab_load_command(point, binary, target, cpus, netns, csv_path, json_path,
                                 prefill, rate, arrival, labels, watch, requests, server_pids)
    csv_file = Path(cwd or ".") / csv_path
    budget = point.repetitions * point.duration + point.warmup + 120
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=budget, cwd=cwd)
        output = done.stderr or done.stdout
        # A usage error (2) says what is wrong on its first line; a failed run at its end.
        detail = output.strip().splitlines()[0] if done.returncode == 2 and output.strip() \
            else _tail(output, 2)
        error = None if done.returncode == 0 else (
            f"kvlab-load exited with status {done.returncode}: {detail}")
    except subprocess.TimeoutExpired:
        error = f"kvlab-load did not finish within {budget:.0f} s"
    rows = read_kvlab_load_rows(csv_file.read_text()) if csv_file.exists() else []
    if error is None and len(rows) != point.repetitions:
        error = f"kvlab-load wrote {len(rows)} rows, expected {point.repetitions}"
    return LoadResult(rows, error)
