"""Synthetic run folders (meta.json, points.csv, ratios.csv) for the history, compare,
verdict and dashboard tests: the figures are chosen by the test, so every verdict the
tests expect follows from numbers written here, not from a measurement."""

import csv
import json
from pathlib import Path

COLUMNS = ("sweep", "server", "loadgen", "transport", "client", "command", "ratio", "keys",
           "key_dist", "value_size", "pipeline", "connections", "nodelay", "threads",
           "repetition", "ops", "seconds", "ops_per_s", "errors", "client_cpu", "client_bound",
           "server_cpu", "server_cpu_us_per_op", "client_cpu_us_per_op",
           "server_ctx_switches_per_op", "server_instructions_per_op", "status", "note")
RATIO_COLUMNS = ("comparison", "test", "point", "ratio", "low", "high", "rounds", "status")

MACHINE_A = {"cpu_model": "Intel(R) Xeon(R) Processor", "cores": 2, "vector_level": "avx2",
             "kernel": "6.1.0", "compiler": "c++ 12.2.0"}
MACHINE_B = {**MACHINE_A, "cpu_model": "AMD EPYC 7B13"}


def point_row(server="redis", command="set", threads=1, repetition=1, ops_per_s=100000.0,
              **overrides):
    row = {"sweep": "p16", "server": server, "loadgen": "kvlab-load", "transport": "tcp",
           "client": "dedicated", "command": command, "ratio": "", "keys": 1000000,
           "key_dist": "uniform", "value_size": 64, "pipeline": 16, "connections": 50,
           "nodelay": "on", "threads": threads, "repetition": repetition,
           "ops": int(ops_per_s), "seconds": 1.0, "ops_per_s": ops_per_s, "errors": 0,
           "client_cpu": 0.5, "client_bound": "false", "server_cpu": 0.9,
           "server_cpu_us_per_op": 9.0e5 / ops_per_s, "client_cpu_us_per_op": 5.0e5 / ops_per_s,
           "server_ctx_switches_per_op": 0.01, "server_instructions_per_op": "n/a",
           "status": "ok", "note": ""}
    row.update(overrides)
    return row


def repetitions(values, **point):
    """One row per value, as repetitions 1..n of one point."""
    return [point_row(repetition=i + 1, ops_per_s=v, **point) for i, v in enumerate(values)]


def ratio_row(comparison="concurrent/redis", test="set", point="p16 tcp dedicated T1",
              ratio=1.10, half_width=0.01, rounds=8, status="resolved"):
    return {"comparison": comparison, "test": test, "point": point, "ratio": ratio,
            "low": ratio * (1 - half_width), "high": ratio * (1 + half_width),
            "rounds": rounds, "status": status}


def write_run(folder, rows, ratios=(), machine=MACHINE_A, commit="a" * 40,
              started="2026-11-30T10:00:00+00:00", experiment="headline", polled=None):
    """`polled`: meta.json's cpu_idle.held (None: no cpu_idle, as runs before it)."""
    folder = Path(folder)
    folder.mkdir(parents=True)
    meta = {"experiment": experiment, "started_utc": started,
            "machine": {**machine, "hostname": "vm", "git": {"commit": commit, "dirty": False}}}
    if polled is not None:
        meta["cpu_idle"] = {"mode": "poll", "held": polled}
    (folder / "meta.json").write_text(json.dumps(meta))
    with (folder / "points.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    if ratios:
        with (folder / "ratios.csv").open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=RATIO_COLUMNS)
            writer.writeheader()
            writer.writerows(ratios)
    return folder
