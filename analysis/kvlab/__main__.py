"""Command line: python3 -m kvlab <subcommand> ...

Subcommands live in SUBCOMMANDS: a name maps to (help, add_arguments, main). A new
subcommand adds one entry; `main` returns the exit status (0 ok, 1 failed, 2 usage).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import dashboard as _dashboard  # light: matplotlib loads only when it renders

REPO = Path(__file__).resolve().parents[2]


def _add_run_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("experiment", help="experiment file, e.g. workloads/quick.toml")
    parser.add_argument("--build", default=str(REPO / "build"),
                        help="build folder holding kvlab-server and kvlab-load (default: build)")
    parser.add_argument("--out", default=str(REPO / "results" / "runs"),
                        help="folder that receives the run folder (default: results/runs)")
    parser.add_argument("--quiet-report", action="store_true",
                        help="do not print report.md at the end")


def _run(args) -> int:
    from .experiment import ExperimentError, load_experiment
    from .plots import write_plots
    from .report import write_report
    from .runner import Runner
    try:
        experiment = load_experiment(args.experiment)
    except ExperimentError as error:
        print(f"kvlab run: {error}", file=sys.stderr)
        return 2
    runner = Runner(experiment, REPO, Path(args.build).resolve(), Path(args.out).resolve())
    run_dir = runner.run()
    report = write_report(run_dir)
    write_plots(run_dir)
    if not args.quiet_report:
        print(report.read_text())
    print(f"results: {run_dir}", file=sys.stderr)
    if runner.problems:
        print(f"kvlab run: {len(runner.problems)} problem(s); see 'Not measured' in {report}",
              file=sys.stderr)
    return 130 if runner.interrupted else 0


def _add_run_dir_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", help="a run folder (results/runs/<time>-<name>)")


def _report(args) -> int:
    from .plots import write_plots
    from .report import write_report
    if not (Path(args.run_dir) / "points.csv").exists():
        print(f"kvlab report: {args.run_dir}: no points.csv (not a run folder)", file=sys.stderr)
        return 2
    path = write_report(args.run_dir)
    write_plots(args.run_dir)
    print(path.read_text())
    return 0


def _add_compare_arguments(parser: argparse.ArgumentParser) -> None:
    from .compare import MIN_EFFECT
    parser.add_argument("base", help="baseline run folder")
    parser.add_argument("new", help="run folder to judge against the baseline")
    parser.add_argument("--min-effect", type=float, default=MIN_EFFECT,
                        help="smallest relative change called better/worse (default %(default)s)")
    parser.add_argument("--fail-on-worse", action="store_true",
                        help="exit with status 1 when any point is worse")


def _compare(args) -> int:
    from .compare import render_comparison
    for folder in (args.base, args.new):
        if not (Path(folder) / "points.csv").exists():
            print(f"kvlab compare: {folder}: no points.csv (not a run folder)", file=sys.stderr)
            return 2
    text, counts = render_comparison(args.base, args.new, args.min_effect)
    print(text)
    return 1 if args.fail_on_worse and counts["worse"] else 0


def _add_hosts_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=("check", "deploy"),
                        help="check: every host reachable, same commit and binaries, cores, "
                             "clock offset; deploy: copy build/kvlab-server and kvlab-load there")
    parser.add_argument("experiment", help="experiment file with [[host]] and [placement]")
    parser.add_argument("--build", default=str(REPO / "build"),
                        help="build folder whose binaries are compared or copied "
                             "(default: build)")


def _hosts(args) -> int:
    """Exit 2 for a bad file, 1 when a host is unreachable or fails the check."""
    from .experiment import ExperimentError, load_experiment
    from .hosts import (HostError, deploy_binaries, inspect_host, local_binaries,
                        local_commit, placed_hosts, render_report)
    try:
        experiment = load_experiment(args.experiment)
    except ExperimentError as error:
        print(f"kvlab hosts: {error}", file=sys.stderr)
        return 2
    if experiment.placement is None:
        print(f"kvlab hosts: {args.experiment}: no [[host]] tables and [placement]",
              file=sys.stderr)
        return 2
    build = Path(args.build).resolve()
    binaries = local_binaries(build)
    hosts = placed_hosts(experiment.hosts, experiment.placement)
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
    "run": ("measure an experiment file into a new run folder", _add_run_arguments, _run),
    "report": ("render report.md and plots of a run folder", _add_run_dir_argument, _report),
    "compare": ("per-point ratios and verdicts of NEW against BASE", _add_compare_arguments,
                _compare),
    "hosts": ("check or deploy the hosts of a multi-host experiment file", _add_hosts_arguments,
              _hosts),
    "dashboard": ("render results/dashboard/index.html from everything under results/",
                  _dashboard.add_arguments, _dashboard.run),
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
