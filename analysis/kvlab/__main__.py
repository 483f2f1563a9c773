"""Command line: python3 -m kvlab <subcommand> ...

Subcommands live in SUBCOMMANDS: a name maps to (help, add_arguments, main). A new
subcommand adds one entry; `main` returns the exit status (0 ok, 1 failed, 2 usage).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .rendering import dashboard as _dashboard  # light: matplotlib loads only when it renders
from .tracking import micro as _micro
from .tracking import regress as _regress
from .running import crash as _crash
from .running import starts as _starts

REPO = Path(__file__).resolve().parents[2]


def _fail(verb: str, problem: str, status: int = 2) -> int:
    """Says what went wrong as `kvlab VERB: PROBLEM` on stderr; returns the exit status."""
    print(f"kvlab {verb}: {problem}", file=sys.stderr)
    return status


def _write_outputs(run_dir: str | Path) -> Path:
    """report.md and the plots of a run folder; returns the report's path."""
    from .rendering.plots_ycsb import write_ycsb_plot
    from .rendering.report import write_report
    from .rendering.run_plots import write_plots
    report = write_report(run_dir)
    write_plots(run_dir)
    write_ycsb_plot(run_dir)
    return report


def _add_run_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("experiment", help="experiment file, e.g. workloads/quick.toml")
    parser.add_argument("--build", default=None,
                        help="build folder holding kvlab-server and kvlab-load "
                             "(default: $KVLAB_BUILD_DIR, else build)")
    parser.add_argument("--out", default=str(REPO / "results" / "runs"),
                        help="folder that receives the run folder (default: results/runs)")
    parser.add_argument("--quiet-report", action="store_true",
                        help="do not print report.md at the end")


def _use_build(named: str | None) -> Path:
    """The build folder of a command: the one named, else kinds' default; the engine and
    client kinds are read from its binaries."""
    from .schema import kinds
    if named:
        kinds.use_build(named)
    return kinds.build_folder()


def _run(args: argparse.Namespace) -> int:
    from .running.experiment import ExperimentError, load_experiment
    build = _use_build(args.build)
    from .running.loadgens import LoadgenMissing
    from .running.runner import Runner
    try:
        experiment = load_experiment(args.experiment)
    except ExperimentError as error:
        return _fail("run", str(error))
    from .running.cpus import CpuError, this_machine
    from .running.plan import resolve
    try:
        plan = resolve(experiment, this_machine())
    except CpuError as error:
        return _fail("run", f"{args.experiment}: {error}")
    runner = Runner(plan, REPO, build, Path(args.out).resolve())
    from .running.durability import LogFolderError
    try:
        run_dir = runner.run()
    except LoadgenMissing as error:
        return _fail("run", str(error), status=1)
    except LogFolderError as error:
        return _fail("run", f"{args.experiment}: {error}")
    report = _write_outputs(run_dir)
    if not args.quiet_report:
        print(report.read_text())
    print(f"results: {run_dir}", file=sys.stderr)
    if runner.problems:
        print(f"kvlab run: {len(runner.problems)} problem(s); see 'Not measured' in {report}",
              file=sys.stderr)
    return 130 if runner.interrupted else 0


def _add_run_dir_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", help="a run folder (results/runs/<time>-<name>)")


def _report(args: argparse.Namespace) -> int:
    if not (Path(args.run_dir) / "points.csv").exists():
        return _fail("report", f"{args.run_dir}: no points.csv (not a run folder)")
    print(_write_outputs(args.run_dir).read_text())
    return 0


def _add_compare_arguments(parser: argparse.ArgumentParser) -> None:
    from .tracking.verdict import MIN_EFFECT
    parser.add_argument("base", help="baseline: a run folder, a history record (.json) or a "
                        "folder of records such as results/history/<fingerprint>")
    parser.add_argument("new", help="run folder (or history record) to judge against the base")
    parser.add_argument("--min-effect", type=float, default=MIN_EFFECT,
                        help="smallest relative change that can count (default %(default)s)")
    parser.add_argument("--fail-on-worse", action="store_true",
                        help="exit with status 1 when any series is regressed")
    parser.add_argument("--across-machines", action="store_true",
                        help="compare even when base and new come from different machines")


def _compare(args: argparse.Namespace) -> int:
    from .tracking.base_vs_new import CompareError, render_comparison
    try:
        text, counts = render_comparison(args.base, args.new, args.min_effect,
                                         args.across_machines)
    except CompareError as error:
        return _fail("compare", str(error))
    print(text)
    return 1 if args.fail_on_worse and counts["regressed"] else 0


def _add_record_arguments(parser: argparse.ArgumentParser) -> None:
    from .tracking.history import default_history_dir
    _add_run_dir_argument(parser)
    parser.add_argument("--history", default=default_history_dir(),
                        help="history folder (default: results/history)")


def _record(args: argparse.Namespace) -> int:
    from .tracking.history import HistoryError, record_from_run, write_record
    try:
        record = record_from_run(args.run_dir)
    except HistoryError as error:
        return _fail("record", str(error))
    if not any(p["n"] for p in record["points"]):
        return _fail("record", f"{args.run_dir}: no measured point to record")
    print(write_record(record, args.history))
    return 0


def _add_plan_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("experiment", help="experiment file, e.g. workloads/default.toml")
    parser.add_argument("--cpus", help="plan for these usable CPUs instead of this machine's, "
                        "e.g. 0-7")
    parser.add_argument("--siblings", help="hyper-thread sibling groups of that machine, "
                        "e.g. '0,4;1,5;2,6;3,7' (default with --cpus: one CPU per core)")
    parser.add_argument("--nodes", help="NUMA nodes of that machine, e.g. '0-31;32-63' "
                        "(default with --cpus: one node)")
    parser.add_argument("--json", action="store_true", help="print the plan as JSON")


def _plan(args: argparse.Namespace) -> int:
    from .running.cpus import CpuError, Topology, parse_cpu_list, parse_groups, this_machine
    from .running.experiment import ExperimentError, load_experiment
    from .running.plan import resolve, to_json_text
    try:
        experiment = load_experiment(args.experiment)
        if args.cpus:
            topology = Topology.of(parse_cpu_list(args.cpus),
                                   parse_groups(args.siblings or ""),
                                   parse_groups(args.nodes or ""))
        elif args.siblings or args.nodes:
            raise CpuError("--siblings and --nodes describe the machine given with --cpus")
        else:
            topology = this_machine()
        plan = resolve(experiment, topology)
    except (ExperimentError, CpuError) as error:
        return _fail("plan", str(error))
    print(to_json_text(plan) if args.json else plan.render())
    return 0


def _add_hosts_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=("check", "deploy"),
                        help="check: every host reachable, same commit and binaries, cores, "
                             "clock offset; deploy: copy build/kvlab-server and kvlab-load there")
    parser.add_argument("experiment", help="experiment file with [[host]] and [placement]")
    parser.add_argument("--build", default=None,
                        help="build folder whose binaries are compared or copied "
                             "(default: $KVLAB_BUILD_DIR, else build)")


def _hosts(args: argparse.Namespace) -> int:
    """Exit 2 for a bad file, 1 when a host is unreachable or fails the check."""
    from .running.experiment import ExperimentError, load_experiment
    from .running.hosts import (HostError, deploy_binaries, inspect_host, local_binaries,
                                local_commit, placed_hosts, render_report)
    build = _use_build(args.build)
    try:
        experiment = load_experiment(args.experiment)
    except ExperimentError as error:
        return _fail("hosts", str(error))
    if experiment.placement is None:
        return _fail("hosts", f"{args.experiment}: no [[host]] tables and [placement]")
    binaries = local_binaries(build)
    hosts = placed_hosts(experiment.hosts, experiment.placement, build)
    failed = False
    if args.action == "deploy":
        for host in hosts:
            try:
                copied = deploy_binaries(host, build, binaries)
                print(f"{host.name}: " + (f"copied {', '.join(copied)}" if copied
                                          else "binaries already identical"))
            except HostError as error:
                print(f"kvlab hosts deploy: {error}", file=sys.stderr)
                failed = True
        return 1 if failed else 0
    commit = local_commit(REPO)
    print(f"runner: commit {commit[:12] or 'none'}, binaries in {build}")
    for host in hosts:
        report = inspect_host(host, commit, binaries)
        print(render_report(report))
        failed = failed or bool(report.unreachable or report.problems)
    return 1 if failed else 0


SUBCOMMANDS = {
    "plan": ("print what a run would give each server and the load generator, and how long "
             "it would take, without running anything", _add_plan_arguments, _plan),
    "run": ("measure an experiment file into a new run folder", _add_run_arguments, _run),
    "report": ("render report.md and plots of a run folder", _add_run_dir_argument, _report),
    "compare": ("verdicts of NEW's ratios, points and costs against BASE (kvlab.tracking.verdict)",
                _add_compare_arguments, _compare),
    "record": ("summarise a run folder into results/history/<machine>/ (commit it)",
               _add_record_arguments, _record),
    "hosts": ("check or deploy the hosts of a multi-host experiment file", _add_hosts_arguments,
              _hosts),
    "dashboard": ("render results/dashboard/index.html from everything under results/",
                  _dashboard.add_arguments, _dashboard.run),
    "micro": ("print the sharded hop's cost from a `make micro` JSON file (kvlab.tracking.micro)",
              _micro.add_arguments, _micro.main),
    "starts": ("fresh starts of each engine against redis-server: how much a start's "
               "layout moves its throughput (kvlab.running.starts)", _starts.add_arguments,
               _starts.main),
    "crash": ("SIGKILL a server under writes and count the acknowledged writes its "
              "append-only file lost (kvlab.running.crash)", _crash.add_arguments, _crash.main),
    "regress": ("count instructions per operation under callgrind against "
                "results/baseline/opcost.json (`make regress`)", _regress.add_arguments,
                _regress.main),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m kvlab", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="subcommand", required=True)
    for name, (help_text, add_arguments, _) in SUBCOMMANDS.items():
        add_arguments(commands.add_parser(name, help=help_text))
    args = parser.parse_args(argv)
    return SUBCOMMANDS[args.subcommand][2](args)


if __name__ == "__main__":
    sys.exit(main())
