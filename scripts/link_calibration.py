"""Calibration of the emulated remote link: which forwarder delay makes the
measured round trip equal the configured one.

The link itself (two TUN devices, the forwarder's wake-ups, two kernel
stacks) costs a round trip of its own, and that base differs from machine to
machine (tens to hundreds of µs). Nor is a delayed link simply base + delay:
a packet that waits lets cores go idle, and waking them costs more than on a
busy link. So the delay is found by measuring, not by adding a constant:

  1. measure the link with zero delay (the base); refuse when the base alone
     exceeds the requested round trip (no delay can make it shorter);
  2. set delay = target - base p50, measure; correct the delay by the error
     (delay -= measured p50 - target) until the p50 is within tolerance or
     the steps run out;
  3. leave the forwarder at the best delay found and report configured,
     base and measured p50/p99.

`calibrate` takes the measurement as a function, so tests drive it with a
simulated link. Run as a program (by scripts/remote-link) the measurement is
a command that sets the forwarder's delay, pings, and prints kvlab-link-ping's
line (`count=… p50_us=… p99_us=…`); the result is written as JSON.

usage: link_calibration.py --target-us N --json PATH -- MEASURE_COMMAND...
       link_calibration.py --delay-us D --json PATH -- MEASURE_COMMAND...
  (the delay in µs is appended to MEASURE_COMMAND)
Exit status: 0 ok, 1 a measurement failed, 2 usage, 4 the base exceeds N.
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
from dataclasses import dataclass
from typing import Callable

EXIT_MEASUREMENT_FAILED = 1
EXIT_USAGE = 2
EXIT_BASE_EXCEEDS_TARGET = 4

# Within 2% of the target, or 3 µs for small targets (the spread of a p50 of
# 1000 round trips on a quiet link is about that).
TOLERANCE_FRACTION = 0.02
TOLERANCE_FLOOR_US = 3.0
MAX_STEPS = 6


@dataclass
class Measurement:
    count: int
    p50_us: float
    p99_us: float


@dataclass
class Calibration:
    configured_rtt_us: float | None  # None: the delay was set directly (--delay-us)
    forwarder_delay_us: float
    base: Measurement | None
    measured: Measurement
    steps: int         # measurements with a delay (the base not counted)
    converged: bool    # measured p50 within tolerance of the configured RTT


class BaseExceedsTarget(Exception):
    def __init__(self, target_us: float, base: Measurement):
        super().__init__(f"the link alone has a round trip of {base.p50_us:.1f} us (p50), more "
                         f"than the requested {target_us:g} us; ask for at least "
                         f"{base.p50_us:.0f} us, or set the forwarder's delay with --delay-us")
        self.base = base


def tolerance_us(target_us: float) -> float:
    return max(TOLERANCE_FRACTION * target_us, TOLERANCE_FLOOR_US)


def calibrate(target_us: float, measure: Callable[[float], Measurement],
              max_steps: int = MAX_STEPS) -> Calibration:
    """Finds the forwarder delay whose measured p50 round trip is target_us.

    measure(delay_us) sets the forwarder's delay and measures the round trip.
    The last call leaves the forwarder at the reported delay. Raises
    BaseExceedsTarget when the zero-delay p50 exceeds target_us.
    """
    base = measure(0.0)
    if base.p50_us > target_us:
        raise BaseExceedsTarget(target_us, base)
    delay = target_us - base.p50_us
    best: tuple[float, float, Measurement] | None = None  # (|error|, delay, measurement)
    for step in range(1, max_steps + 1):
        measured = measure(delay)
        error = measured.p50_us - target_us
        if best is None or abs(error) < best[0]:
            best = (abs(error), delay, measured)
        if abs(error) <= tolerance_us(target_us):
            return Calibration(target_us, delay, base, measured, step, True)
        delay = max(0.0, delay - error)
    _, best_delay, _ = best
    measured = measure(best_delay)  # leave the link at the best delay seen
    converged = abs(measured.p50_us - target_us) <= tolerance_us(target_us)
    return Calibration(target_us, best_delay, base, measured, max_steps + 1, converged)


def parse_ping_line(text: str) -> Measurement:
    """Reads kvlab-link-ping's `count=N min_us=… p50_us=… p99_us=…` line."""
    for line in reversed(text.strip().splitlines()):
        fields = dict(item.split("=", 1) for item in line.split() if "=" in item)
        if {"count", "p50_us", "p99_us"} <= fields.keys():
            return Measurement(int(float(fields["count"])), float(fields["p50_us"]),
                               float(fields["p99_us"]))
    raise ValueError(f"no round-trip statistics in {text!r}")


def to_json(calibration: Calibration) -> dict:
    """The fields of /run/kvlab-link.json (flat, so a runner copies them as they are)."""
    base = calibration.base
    return {
        "configured_rtt_us": calibration.configured_rtt_us,
        "forwarder_delay_us": round(calibration.forwarder_delay_us, 1),
        "base_p50_us": base.p50_us if base else None,
        "base_p99_us": base.p99_us if base else None,
        "measured_p50_us": calibration.measured.p50_us,
        "measured_p99_us": calibration.measured.p99_us,
        "round_trips": calibration.measured.count,
        "calibration_steps": calibration.steps,
        "converged": calibration.converged,
        "measured_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }


def command_measurement(command: list[str]) -> Callable[[float], Measurement]:
    def measure(delay_us: float) -> Measurement:
        done = subprocess.run(command + [f"{delay_us:.1f}"], capture_output=True, text=True,
                              timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"measuring at delay {delay_us:.1f} us failed "
                               f"(status {done.returncode}): {done.stderr.strip()}")
        return parse_ping_line(done.stdout)
    return measure


def main(argv: list[str]) -> int:
    if "--" not in argv:
        print(__doc__, file=sys.stderr)
        return EXIT_USAGE
    split = argv.index("--")
    parser = argparse.ArgumentParser(prog="link_calibration.py")
    goal = parser.add_mutually_exclusive_group(required=True)
    goal.add_argument("--target-us", type=float)
    goal.add_argument("--delay-us", type=float)
    parser.add_argument("--json", required=True)
    options = parser.parse_args(argv[:split])
    command = argv[split + 1:]
    if not command:
        parser.error("a measurement command is required after --")
    measure = command_measurement(command)
    try:
        if options.target_us is not None:
            if options.target_us < 0:
                parser.error("--target-us must be >= 0")
            calibration = calibrate(options.target_us, measure)
        else:
            if options.delay_us < 0:
                parser.error("--delay-us must be >= 0")
            calibration = Calibration(None, options.delay_us, None, measure(options.delay_us), 1,
                                      True)
    except BaseExceedsTarget as refused:
        print(f"remote-link: {refused}", file=sys.stderr)
        return EXIT_BASE_EXCEEDS_TARGET
    except (RuntimeError, ValueError, subprocess.TimeoutExpired) as error:
        print(f"remote-link: {error}", file=sys.stderr)
        return EXIT_MEASUREMENT_FAILED
    record = to_json(calibration)
    with open(options.json, "w") as out:
        json.dump(record, out, indent=2)
        out.write("\n")
    print(json.dumps(record))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
