"""Hosts and multi-host runs: the experiment file's [[host]]/[placement], the exact merge of
latency histograms, clock offsets, `kvlab hosts check|deploy`, and real runs over real ssh
between network namespaces (namespace_hosts.py): a server host and two client hosts."""

import hashlib
import json
import shlex
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from conftest import BUILD_DIR, REPO, kvlab_binaries_or_fail, python_env
from kvlab.measures.histograms import Histogram
from kvlab.running.experiment import ExperimentError, parse_experiment_text
from kvlab.running.hosts import (build_folder_in_checkout, describe_failure,
                                 offset_from_round_trips, placed_hosts)
from kvlab.running.hosts import Host
from kvlab.running.multihost import (START_LEAD_MAX_S, STOPPED, HostOutcome,
                                     MultiHostMeasurement, _run_on_clients, merged_row,
                                     start_skew_note)
from kvlab.running.loadgens import cell_formats, point_schema
from kvlab.running.results import load_points
from namespace_hosts import NamespaceHosts, missing_programs, why_not_possible

BASE = """
[experiment]
name = "hosts"
[[server]]
name = "single"
kind = "kvlab"
engine = "single"
[[sweep]]
name = "s"
"""
HOSTS = """
[[host]]
name = "a"
ssh = "root@10.0.0.2"
checkout = "/opt/kvlab"
[[host]]
name = "b"
netns = "kvlab-b"
address = "10.0.0.3"
checkout = "/opt/kvlab"
[placement]
server_host = "a"
client_hosts = ["b"]
"""
# Generous bounds that only stop a hung run; no assertion depends on them.
RUN_TIMEOUT_S = 240


def parse(text):
    return parse_experiment_text(text, Path("x.toml"))


def test_hosts_and_placement_are_parsed():
    experiment = parse(BASE + HOSTS)
    a, b = experiment.hosts
    assert (a.ssh, a.address, a.netns) == ("root@10.0.0.2", "10.0.0.2", None)
    assert (b.netns, b.address) == ("kvlab-b", "10.0.0.3")
    assert b.command("true") == ["ip", "netns", "exec", "kvlab-b", "sh", "-c", "true"]
    assert a.command("true")[0] == "ssh" and "BatchMode=yes" in a.command("true")
    assert experiment.placement.server_host == "a"
    assert experiment.placement.client_hosts == ("b",)
    assert parse(BASE).placement is None


@pytest.mark.parametrize("change, key, says", [
    (("", "[placement]\nserver_host = \"a\"\nclient_hosts = [\"a\"]\n"), "placement",
     "[[host]]"),
    (("client_hosts = [\"b\"]", "client_hosts = [\"c\"]"), "placement.client_hosts",
     "allowed: a, b"),
    (("server_host = \"a\"", "server_host = \"a\"\nport = 1"), "placement.port",
     "unknown key"),
    (("netns = \"kvlab-b\"", "netns = \"kvlab-b\"\nssh = \"root@h\""), "host[1]",
     "exactly one of"),
    (("address = \"10.0.0.3\"\n", ""), "host[1].address", "required with netns"),
    (("ssh = \"root@10.0.0.2\"", "ssh = \"lab-server\""), "host[0].address",
     "required when ssh is an alias"),
    (("checkout = \"/opt/kvlab\"\n[placement]", "checkout = \"opt\"\n[placement]"),
     "host[1].checkout", "absolute path"),
    (("checkout = \"/opt/kvlab\"\n[[host]]", "[[host]]"), "host[0].checkout",
     "required with ssh"),
    (("[placement]\nserver_host = \"a\"\nclient_hosts = [\"b\"]\n", ""), "placement",
     "required with [[host]]"),
])
def test_bad_hosts_name_the_key(change, key, says):
    old, new = change
    text = BASE + (HOSTS.replace(old, new) if old else new)
    with pytest.raises(ExperimentError) as caught:
        parse(text)
    assert f"x.toml: {key}" in str(caught.value)
    assert says in str(caught.value)


def test_placement_refuses_sweeps_it_cannot_run():
    with pytest.raises(ExperimentError, match=r"sweep\[0\]\.transport: 'unix' .* allowed: tcp"):
        parse(BASE + 'transport = ["tcp", "unix"]\n' + HOSTS)
    with pytest.raises(ExperimentError, match=r"sweep\[0\]\.loadgen: .* allowed: kvlab-load"):
        parse(BASE + 'loadgen = "redis-benchmark"\n' + HOSTS)


@pytest.mark.parametrize("cluster", [
    'kind = "redis-cluster"\nnodes = 2\n',
    'kind = "command-cluster"\nnodes = 2\ncommand = "redis-server --port {port} '
    '--unixsocket {unix} --cluster-enabled yes --cluster-config-file {cluster_config}"\n'])
def test_placement_refuses_cluster_rows(cluster):
    text = BASE.replace('kind = "kvlab"\nengine = "single"\n', cluster) + HOSTS
    with pytest.raises(ExperimentError, match=r"server\[0\]\.kind: .* cannot be placed on "
                                              r"hosts"):
        parse(text)


class ShellHost(Host):
    """A client host that is this machine, reached the way ssh reaches one: the local
    process is a shell that runs the command as its child, so killing the local process
    leaves the command's program running, as killing ssh leaves the remote one."""
    def command(self, shell_command):
        # `; exit $?`: a command after it, so the shell forks the child, not execs it
        return ["sh", "-c", f"sh -c {shlex.quote(shell_command)}; exit $?"]


def shell_host(name):
    return ShellHost(name=name, checkout="/", address="127.0.0.1")


def running(pid):
    """Whether pid is a live process (a zombie is not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def ends(pid):
    """Whether pid ends within seconds. The stop has signalled it and its pipes are closed,
    but a process closes its files before it becomes a zombie: under a loaded machine (make
    test-asan) the check once came between the two. The bound only stops a hang."""
    deadline = time.monotonic() + 10
    while running(pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    return not running(pid)


def long_load(pid_path):
    # Its output goes elsewhere, so the local process's pipes close when that process is
    # killed: only the kill on the host can end the program before its minute is up.
    return f"echo $$ > {shlex.quote(str(pid_path))} && exec sleep 60 > /dev/null 2>&1"


def test_a_client_host_failing_stops_the_others_on_their_host(tmp_path):
    hosts = [shell_host("c1"), shell_host("c2"), shell_host("c3")]
    pids = {h.name: tmp_path / f"{h.name}.pid" for h in hosts}
    commands = {"c1": long_load(pids["c1"]), "c2": "sleep 0.3; exit 3",
                "c3": long_load(pids["c3"])}
    finished = _run_on_clients(hosts, commands, {k: str(v) for k, v in pids.items()}, 120)
    assert finished["c2"].returncode == 3
    assert finished["c1"] == finished["c3"] == STOPPED
    for name in ("c1", "c3"):
        # the program itself, which killing the local process alone would leave running
        assert ends(int(pids[name].read_text())), name


def test_a_client_host_past_the_budget_is_stopped_on_its_host(tmp_path):
    hosts = [shell_host("c1"), shell_host("c2")]
    pids = {h.name: tmp_path / f"{h.name}.pid" for h in hosts}
    commands = {"c1": long_load(pids["c1"]), "c2": f"echo $$ > {pids['c2']} && exec echo done"}
    finished = _run_on_clients(hosts, commands, {k: str(v) for k, v in pids.items()}, 0.5)
    assert finished["c2"].returncode == 0 and finished["c2"].stdout == b"done\n"
    assert finished["c1"] == "kvlab-load did not finish within 0 s"
    assert ends(int(pids["c1"].read_text()))


def test_client_hosts_that_succeed_are_all_waited_for(tmp_path):
    hosts = [shell_host("c1"), shell_host("c2")]
    pids = {h.name: str(tmp_path / f"{h.name}.pid") for h in hosts}
    commands = {"c1": f"echo $$ > {pids['c1']} && exec sh -c 'sleep 0.5; echo slow'",
                "c2": f"echo $$ > {pids['c2']} && exec echo fast"}
    finished = _run_on_clients(hosts, commands, pids, 120)
    assert {n: (f.returncode, f.stdout) for n, f in finished.items()} == {
        "c1": (0, b"slow\n"), "c2": (0, b"fast\n")}


def test_merged_row_sums_and_flags_bound_hosts():
    rows = {"c1": {"repetition": "1", "ops": "10", "errors": "0", "seconds": "1.0",
                   "ops_per_s": "10.0", "client_cpu": "1.0", "client_bound": "true"},
            "c2": {"repetition": "1", "ops": "30", "errors": "2", "seconds": "1.2",
                   "ops_per_s": "25.0", "client_cpu": "0.5", "client_bound": "false"}}
    histogram = {"count": 1, "min": 1000, "max": 1000, "buckets": [[1000, 1000, 1]]}
    kvlab_binaries_or_fail(BUILD_DIR)
    formats = cell_formats(point_schema(BUILD_DIR))
    row = merged_row(rows, {"c1": histogram, "c2": histogram}, formats)
    assert (row["ops"], row["errors"], row["ops_per_s"]) == ("40", "2", "35.0")
    assert row["seconds"] == "1.200000"
    assert row["client_bound"] == "true" and row["note"] == "client-bound hosts: c1"
    assert row["histogram"]["count"] == 2 and row["p50_us"] == "1.00"
    # Formatted as kvlab-load formats the cells (its --schema's cell_format).
    assert (row["client_cpu"], row["max_us"], row["server_cpu"]) == ("1.5000", "1.00", "")


def test_hosts_starting_apart_get_a_note():
    point = parse(BASE + "duration = 2.0\n").points()[0]  # 1% of a repetition: 20 ms
    assert start_skew_note(point, {"c1": 0.1, "c2": 20.1}) == ""
    assert start_skew_note(point, {"c1": 0.1, "c2": 20.2, "c3": 3.0}) == \
        "client hosts began 20.1 ms apart (c2 last)"
    assert start_skew_note(point, {"c1": 0.1, "c2": None}) == ""


def test_a_late_host_lengthens_the_lead_of_the_next_points(tmp_path):
    experiment = parse(BASE + "duration = 1.0\n" + HOSTS)
    said = []
    measurement = MultiHostMeasurement(experiment, REPO, BUILD_DIR, tmp_path, said.append, [])
    host = experiment.hosts[1]
    point = experiment.points()[0]
    measurement.lead_s = 0.5

    def late(ms):
        measurement._adapt_lead(point, [HostOutcome(host, [], {}, "", ms, None)])

    late(10.0)     # within 1% of the 1 s repetition: left alone
    assert measurement.lead_s == 0.5 and not said
    late(100.0)    # twice the shortfall more
    assert measurement.lead_s == pytest.approx(0.7)
    assert said == ["client host b began 100.0 ms after the common instant; "
                    "the start lead is now 0.70 s"]
    late(60_000.0)
    assert measurement.lead_s == START_LEAD_MAX_S


def test_a_failure_says_whether_ssh_or_the_command_failed():
    lost = subprocess.CompletedProcess([], 255, b"kvlab-load: tcp://h:1 ...\n", b"")
    assert describe_failure(lost, over_ssh=True) == \
        "ssh failed (status 255): the connection was lost, without a message"
    assert describe_failure(lost, over_ssh=False) == \
        "exited with status 255: kvlab-load: tcp://h:1 ..."
    refused = subprocess.CompletedProcess([], 255, b"", b"ssh: connect to host h: refused\n")
    assert describe_failure(refused, over_ssh=True) == \
        "ssh failed (status 255): ssh: connect to host h: refused"
    failed = subprocess.CompletedProcess([], 1, b"plan\n", b"kvlab-load: server gone\n")
    assert describe_failure(failed, over_ssh=True) == \
        "exited with status 1: kvlab-load: server gone"
    assert describe_failure(subprocess.CompletedProcess([], -9, b"", b""), over_ssh=True) == \
        "killed by signal 9: no output"


def test_clock_offset_comes_from_the_shortest_round_trip():
    # (sent, host clock, answered): the second round trip is the shortest (40 ns).
    offset = offset_from_round_trips([(0, 150, 100), (1000, 1100, 1040), (2000, 1900, 2090)])
    assert (offset.offset_ns, offset.uncertainty_ns, offset.samples) == (80, 20, 3)


def kvlab(*words, **kwargs):
    return subprocess.run(["/usr/bin/python3", "-m", "kvlab", *words], capture_output=True,
                          text=True, env=python_env(), cwd=REPO, **kwargs)


def test_hosts_check_exit_status_says_bad_file_or_unreachable_host(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(BASE + HOSTS.replace('server_host = "a"', 'server_host = "z"'))
    done = kvlab("hosts", "check", str(bad))
    assert done.returncode == 2 and "placement.server_host" in done.stderr
    unreachable = tmp_path / "gone.toml"
    unreachable.write_text(BASE + HOSTS.replace('ssh = "root@10.0.0.2"',
                                                'netns = "kvlab-no-such-namespace"\n'
                                                'address = "10.0.0.2"'))
    done = kvlab("hosts", "check", str(unreachable))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "a: UNREACHABLE: host a (netns kvlab-no-such-namespace)" in done.stdout


def test_a_run_whose_host_is_unreachable_records_every_point_as_failed(tmp_path):
    kvlab_binaries_or_fail(BUILD_DIR)
    experiment = tmp_path / "gone.toml"
    experiment.write_text(BASE + "duration = 0.1\nrepetitions = 2\n" + HOSTS.replace(
        'ssh = "root@10.0.0.2"', 'netns = "kvlab-no-such-namespace"\naddress = "10.0.0.2"'))
    done = kvlab("run", str(experiment), "--build", str(BUILD_DIR), "--out",
                 str(tmp_path / "runs"), "--quiet-report")
    assert done.returncode == 0, done.stderr
    points = load_points(next((tmp_path / "runs").glob("*-hosts")))
    assert len(points) == 2 * 2  # set and get, two repetitions each
    assert (points["status"] == "failed").all() and (points["host"] == "merged").all()
    assert points["note"].str.startswith("host a (netns kvlab-no-such-namespace)").all()


# --- real ssh between namespaces ----------------------------------------------------------

NOT_POSSIBLE = why_not_possible()


@pytest.fixture
def namespace_programs():
    """Fails (never skips) without what `make test`'s scripts/install-deps installs."""
    missing = missing_programs()
    if missing:
        pytest.fail(f"namespace hosts: {missing}: run scripts/install-deps")


def needs_namespaces(test):
    """Skips (visibly: CTest shows the file as Skipped) where this machine cannot build
    namespaces; fails where it could but a program is missing."""
    test = pytest.mark.usefixtures("namespace_programs")(test)
    return pytest.mark.skipif(NOT_POSSIBLE is not None,
                              reason=f"namespace hosts: {NOT_POSSIBLE}")(test)


def experiment_file(folder: Path, hosts: NamespaceHosts, sweeps: str,
                    servers: tuple[str, ...] = ("single",), checkouts: dict | None = None,
                    name: str = "namespaces.toml", server_text: str = "") -> Path:
    text = '[experiment]\nname = "namespaces"\n' + server_text
    for server in servers:
        text += (f'[[server]]\nname = "{server}"\nkind = "redis"\n' if server == "redis" else
                 f'[[server]]\nname = "{server}"\nkind = "kvlab"\nengine = "{server}"\n')
    text += sweeps
    for name in hosts.names:
        options = ", ".join(json.dumps(o) for o in hosts.ssh_options())
        text += (f'[[host]]\nname = "{name}"\nssh = "root@{hosts.addresses[name]}"\n'
                 f'ssh_options = [{options}]\n'
                 f'checkout = "{(checkouts or {}).get(name, REPO)}"\n')
    text += '[placement]\nserver_host = "srv"\nclient_hosts = ["c1", "c2"]\n'
    path = folder / name
    path.write_text(text)
    return path


SET_SWEEP = """
[[sweep]]
name = "set"
command = "set"
keys = 1000
connections = 2
threads = 1
duration = 0.3
warmup = 0.1
repetitions = 2
"""


def run_in_hub(hosts: NamespaceHosts, *words: str) -> subprocess.CompletedProcess:
    """python3 -m kvlab WORDS from the hub namespace, where the runner sits."""
    return subprocess.run(hosts.hub_command(
        ["env", f"PYTHONPATH={python_env()['PYTHONPATH']}", "/usr/bin/python3", "-m", "kvlab",
         *words]), capture_output=True, text=True, cwd=REPO)


def start_run(hosts: NamespaceHosts, experiment: Path, out: Path) -> subprocess.Popen:
    """The runner in the hub namespace, as on a separate machine."""
    env = python_env()
    command = ["env", f"PYTHONPATH={env['PYTHONPATH']}", "/usr/bin/python3", "-m", "kvlab",
               "run", str(experiment), "--build", str(BUILD_DIR), "--out", str(out),
               "--quiet-report"]
    return subprocess.Popen(hosts.hub_command(command), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=REPO)


def wait_for(what: str, probe, process: subprocess.Popen):
    """Polls probe() until it returns something; fails if the run ends first."""
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while time.monotonic() < deadline:
        found = probe()
        if found:
            return found
        if process.poll() is not None:
            out, err = process.communicate()
            pytest.fail(f"the run ended before {what}: {out[-2000:]} {err[-2000:]}")
        time.sleep(0.05)
    pytest.fail(f"no {what} within {RUN_TIMEOUT_S} s")


def server_pid(out: Path):
    for log in out.glob("*/logs/*-srv.log"):
        for line in log.read_text().splitlines():
            if line.startswith("kvlab-remote-pid "):
                return int(line.split()[1])
    return None


def finish(process: subprocess.Popen) -> tuple[str, str]:
    out, err = process.communicate(timeout=RUN_TIMEOUT_S)
    assert process.returncode == 0, err[-3000:]
    return out, err


@needs_namespaces
def test_two_client_hosts_over_ssh_merge_exactly(tmp_path):
    kvlab_binaries_or_fail(BUILD_DIR)
    with NamespaceHosts(["srv", "c1", "c2"]) as hosts:
        experiment = experiment_file(tmp_path, hosts, SET_SWEEP)
        check = run_in_hub(hosts, "hosts", "check", str(experiment), "--build", str(BUILD_DIR))
        assert check.returncode == 0, check.stdout + check.stderr
        for name in ("srv", "c1", "c2"):
            assert f"{name} (ssh root@{hosts.addresses[name]}" in check.stdout
        assert "clock offset" in check.stdout
        # deploy copies the runner's binaries where they are missing, and only there.
        elsewhere = tmp_path / "elsewhere"
        deploying = experiment_file(tmp_path, hosts, SET_SWEEP, checkouts={"c1": elsewhere},
                                    name="deploy.toml")
        for expected in ("c1: copied kvlab-server, kvlab-load", "c1: binaries already identical"):
            deploy = run_in_hub(hosts, "hosts", "deploy", str(deploying), "--build",
                                str(BUILD_DIR))
            assert deploy.returncode == 0, deploy.stdout + deploy.stderr
            assert expected in deploy.stdout and "srv: binaries already identical" in deploy.stdout
        # Into the same folder of that checkout as the runner's build is of its own.
        build_folder = build_folder_in_checkout(BUILD_DIR, REPO)
        for binary in ("kvlab-server", "kvlab-load"):
            assert (elsewhere / build_folder / binary).read_bytes() == \
                (BUILD_DIR / binary).read_bytes()

        out = tmp_path / "runs"
        run = start_run(hosts, experiment, out)
        pid = wait_for("the server's pid", lambda: server_pid(out), run)
        # The server runs in the server host's namespace (and nowhere else could it bind
        # that host's address).
        assert hosts.namespace_of(pid) == hosts.namespaces["srv"]
        finish(run)
        hosts_still_there = hosts.pids("srv")

    assert pid not in hosts_still_there  # the runner stopped it
    run_dir = next(out.glob("*-namespaces"))
    points = load_points(run_dir)
    assert set(points["host"]) == {"c1", "c2", "merged"}
    assert (points["status"] == "ok").all(), points["note"].tolist()
    histograms = {path.name.rsplit("-", 1)[1][:-len(".json")]: json.loads(path.read_text())
                  for path in (run_dir / "histograms").glob("*.json")}
    for repetition in (1, 2):
        rows = points[points["repetition"] == repetition].set_index("host")
        assert rows.loc["merged", "ops"] == rows.loc["c1", "ops"] + rows.loc["c2", "ops"]
        assert rows.loc["merged", "ops_per_s"] == pytest.approx(
            rows.loc["c1", "ops_per_s"] + rows.loc["c2", "ops_per_s"], abs=0.1)
        assert rows.loc["c1", "ops"] > 0 and rows.loc["c2", "ops"] > 0
        per_host = {}
        for host in ("c1", "c2"):
            reps = histograms[host]["points"][0]["repetitions"]
            per_host[host] = next(r for r in reps if r["repetition"] == repetition)["histogram"]
            # The runner reads a histogram as kvlab-load does.
            assert Histogram.from_json(per_host[host]).value_at_quantile(0.99) / 1000 == pytest.approx(
                rows.loc[host, "p99_us"], abs=0.01)
        merged = next(r for r in histograms["merged"]["repetitions"]
                      if r["repetition"] == repetition)["histogram"]
        expected = {}
        for histogram in per_host.values():
            for lower, upper, count in histogram["buckets"]:
                expected[(lower, upper)] = expected.get((lower, upper), 0) + count
        assert {(lo, up): n for lo, up, n in merged["buckets"]} == expected
        assert merged["count"] == sum(h["count"] for h in per_host.values())
        assert rows.loc["merged", "p99_us"] == pytest.approx(
            Histogram.from_json(merged).value_at_quantile(0.99) / 1000, abs=0.01)
        # Both hosts began at the common instant or after it, never before.
        lateness = histograms["merged"]["start_late_ms"]
        assert set(lateness) == {"c1", "c2"} and all(v >= 0 for v in lateness.values())
    report = (run_dir / "report.md").read_text()
    assert "## Client hosts" in report
    record = json.loads((run_dir / "hosts.json").read_text())
    assert record["placement"]["client_hosts"] == ["c1", "c2"]
    for name, host in record["hosts"].items():
        # One machine, one clock: the true offset, 0, lies inside the estimate's bounds
        # (+1 µs: bash reads its clock in whole microseconds).
        assert abs(host["clock_offset_ns"]) <= host["clock_uncertainty_ns"] + 1000, name


@needs_namespaces
def test_a_command_row_runs_on_the_server_host_and_names_its_build(tmp_path):
    """A kind = "command" row placed on another host: started there through the host's
    command channel, measured by both client hosts, and identified there (path as the
    host's shell finds it, SHA-256, --version) in meta.json and every row."""
    kvlab_binaries_or_fail(BUILD_DIR)
    redis = shutil.which("redis-server")
    assert redis, "redis-server is missing: scripts/install-deps installs it"
    command_row = ('[[server]]\nname = "theirs"\nkind = "command"\n'
                   'command = "redis-server --port {port} --bind {bind} --save \'\' '
                   '--appendonly no --protected-mode no"\n')
    with NamespaceHosts(["srv", "c1", "c2"]) as hosts:
        experiment = experiment_file(tmp_path, hosts, SET_SWEEP, servers=(),
                                     server_text=command_row)
        out = tmp_path / "runs"
        finish(start_run(hosts, experiment, out))
    run_dir = next(out.glob("*-namespaces"))
    points = load_points(run_dir)
    assert set(points["host"]) == {"c1", "c2", "merged"}
    assert (points["status"] == "ok").all(), points["note"].tolist()
    identity = json.loads((run_dir / "meta.json").read_text())["servers"]["theirs"]["identity"]
    assert identity["path"] == f"srv:{redis}"
    assert identity["sha256"] == hashlib.sha256(Path(redis).read_bytes()).hexdigest()
    assert identity["version_source"] == "--version" and "7." in identity["version"]
    assert set(points["server_build"]) == {identity["build"]}


def load_pid_in(hosts: NamespaceHosts, host: str, duration: str):
    """The pid of a kvlab-load running on `host` with --duration `duration`, or None."""
    for pid in hosts.pids(host):
        try:
            words = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
        except OSError:
            continue
        pairs = list(zip(words, words[1:]))
        if words[0].endswith("kvlab-load") and ("--duration", duration) in pairs:
            return pid
    return None


@needs_namespaces
def test_a_client_host_dying_mid_point_fails_that_point_and_the_run_goes_on(tmp_path):
    kvlab_binaries_or_fail(BUILD_DIR)
    short = "command = \"set\"\nkeys = 100\nthreads = 1\nduration = 0.2\nwarmup = 0\n" \
            "repetitions = 1\n"
    with NamespaceHosts(["srv", "c1", "c2"]) as hosts:
        experiment = experiment_file(tmp_path, hosts, f"""
[[sweep]]
name = "before"
{short}
[[sweep]]
name = "victim"
command = "set"
keys = 100
threads = 1
duration = 7
warmup = 0
repetitions = 1
[[sweep]]
name = "after"
{short}
""")
        out = tmp_path / "runs"
        run = start_run(hosts, experiment, out)
        wait_for("kvlab-load of the long point on c2",
                 lambda: load_pid_in(hosts, "c2", "7"), run)
        hosts.kill_host("c2")
        _, err = finish(run)

    run_dir = next(out.glob("*-namespaces"))
    left = sorted(Path("/tmp").glob(f"kvlab-{run_dir.name}-*"))
    for path in left:
        path.unlink()  # what the killed host's kvlab-load never handed back
    # c1's stopped load left nothing (its namespace shares this machine's /tmp)
    assert not [p.name for p in left if p.stem.endswith("-c1")]
    points = load_points(run_dir).set_index(["sweep", "host"])
    assert points.loc[("before", "merged"), "status"] == "ok"   # completed points are kept
    assert points.loc[("before", "c2"), "status"] == "ok"
    victim = points.loc[("victim", "merged")]
    assert victim["status"] == "failed"
    assert victim["note"].startswith("client host c2: "), victim["note"]
    # The surviving host's load was stopped when c2 failed: its row says why, in c2's words.
    survivor = points.loc[("victim", "c1")]
    assert survivor["status"] == "failed" and survivor["note"] == victim["note"]
    assert "client host c2" in err
    assert "after" in points.index.get_level_values("sweep")   # the run went on
    assert "client host c2" in (run_dir / "report.md").read_text()


@needs_namespaces
def test_the_netns_example_and_its_script_pass_hosts_check():
    kvlab_binaries_or_fail(BUILD_DIR)
    script = REPO / "scripts" / "netns-hosts"
    try:
        up = subprocess.run([str(script), "up"], capture_output=True, text=True)
        assert up.returncode == 0, up.stderr
        done = kvlab("hosts", "check", "workloads/multihost-netns.toml", "--build",
                     str(BUILD_DIR))
        assert done.returncode == 0, done.stdout + done.stderr
        for name, address in (("srv", "10.213.14.11"), ("c1", "10.213.14.12"),
                              ("c2", "10.213.14.13")):
            assert f"{name} (netns kvlab-h-{name}, address {address})" in done.stdout
    finally:
        subprocess.run([str(script), "down"], capture_output=True)
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert "kvlab-h-" not in listed


def test_hosts_find_their_binaries_where_the_runner_keeps_its_own(tmp_path):
    experiment = parse(BASE + HOSTS)
    asan = placed_hosts(experiment.hosts, experiment.placement, REPO / "build-asan")
    assert {h.build for h in asan} == {"build-asan"}
    assert asan[0].binary("kvlab-load") == f"{asan[0].checkout.rstrip('/')}/build-asan/kvlab-load"
    # A build folder outside the checkout says nothing about the hosts': build/.
    outside = placed_hosts(experiment.hosts, experiment.placement, tmp_path / "b")
    assert {h.build for h in outside} == {"build"}
    assert {h.build for h in placed_hosts(experiment.hosts, experiment.placement)} == {"build"}
