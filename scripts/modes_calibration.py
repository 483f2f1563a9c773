#!/usr/bin/python3
"""The mode test's false alarms and power, by simulation (kvlab.measures.modes).

For each unimodal shape (of the per-start logs) and each number of starts, the share
of TRIALS samples in which the gap test finds modes, with its binomial standard error;
then the power on the two-mode mixtures tests/python/measures/test_modes.py checks.
The false alarms are drawn at a spread where the 2% floor (MIN_MODE_DISTANCE) never
vetoes a split, so they are the test's worst case on that shape: at the spreads of
real starts the floor can only remove alarms. The power is drawn at the mixtures' own
spreads (3% inside each mode), the floor applied.

  scripts/modes_calibration.py [--trials N] [--seed S] [--sizes 5,8,10,16]

(about 5 s at the defaults: 4,000 trials, seed 36, 5 to 40 starts).

The decision is find_modes's first one (modes are found exactly when the first split
is), computed here from gap_scores and critical_value for all trials at once, so that
the script measures a version of the module from before has_modes too.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "analysis"))
from kvlab.measures import modes  # noqa: E402  (needs the path above)

# Shapes of the logs, unit scale: a gap score does not depend on location or scale.
UNIMODAL = {
    "normal": lambda rng, shape: rng.normal(size=shape),
    "uniform": lambda rng, shape: rng.uniform(size=shape),
    "triangular": lambda rng, shape: rng.triangular(0.0, 0.5, 1.0, size=shape),
    "logistic": lambda rng, shape: rng.logistic(size=shape),
    "t, 5 df": lambda rng, shape: rng.standard_t(5, size=shape),
    "t, 3 df": lambda rng, shape: rng.standard_t(3, size=shape),
    "gamma 4 (skew 1), right": lambda rng, shape: rng.gamma(4.0, size=shape),
    "gamma 4 (skew 1), left": lambda rng, shape: -rng.gamma(4.0, size=shape),
    "gamma 2 (skew 1.41), right": lambda rng, shape: rng.gamma(2.0, size=shape),
    "log-normal 0.5 (skew 1.75), right": lambda rng, shape: rng.lognormal(0, 0.5, shape),
    "log-normal 0.5 (skew 1.75), left": lambda rng, shape: -rng.lognormal(0, 0.5, shape),
    # beyond the shapes the test is calibrated on, to show where it stops holding
    "exponential (skew 2), right": lambda rng, shape: rng.exponential(size=shape),
}
# Unit-scale draws times this spread their starts far beyond the 2% floor.
SCALE_BEYOND_FLOOR = 10.0


def found(logs: np.ndarray) -> np.ndarray:
    """Per row, whether find_modes would report modes (its first split)."""
    x = np.sort(logs, axis=1)
    rows = np.arange(len(x))
    scores = modes.gap_scores(x)
    best = scores.argmax(axis=1)
    cut = best + modes.MIN_MODE_STARTS
    gap = x[rows, cut] - x[rows, cut - 1]
    return ((scores[rows, best] > modes.critical_value(x.shape[1]))
            & (gap >= math.log1p(modes.MIN_MODE_DISTANCE)))


def rate(hits: np.ndarray) -> str:
    p = float(np.mean(hits))
    return f"{100 * p:4.1f}±{100 * math.sqrt(p * (1 - p) / len(hits)):.1f}"


def mixture(rng, trials, starts, share, distance, sd=0.03):
    upper = rng.random((trials, starts)) < share
    return rng.normal(0.0, sd, (trials, starts)) + distance * upper, upper


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=36)
    parser.add_argument("--sizes", default="5,6,8,10,12,16,24,40")
    args = parser.parse_args()
    sizes = [int(n) for n in args.sizes.split(",")]
    print(f"false alarms, % ± one standard error; {args.trials} trials per cell, "
          f"seed {args.seed}")
    print(f"{'starts':36s}" + "".join(f"{n:>10d}" for n in sizes))
    for index, (name, draw) in enumerate(UNIMODAL.items()):
        cells = []
        for n in sizes:
            rng = np.random.default_rng([args.seed, index, n])
            cells.append(rate(found(SCALE_BEYOND_FLOOR * draw(rng, (args.trials, n)))))
        print(f"{name:36s}" + "".join(f"{c:>10s}" for c in cells))
    print("power, % ± one standard error (16 starts, 3% spread inside each mode)")
    rng = np.random.default_rng([args.seed, 1000])
    for label, share in (("25% apart, 50/50", 0.5), ("25% apart, 70/30", 0.3)):
        logs, _ = mixture(rng, args.trials, 16, share, math.log(1.25))
        print(f"  {label:34s}{rate(found(logs))}")
    logs, upper = mixture(rng, args.trials, 16, 0.125, math.log(1.45))
    hits, twice = found(logs), upper.sum(axis=1) >= 2
    print(f"  {'1 in 8, 45% above, shown twice':34s}{rate(hits[twice])}"
          f"  ({rate(twice)} of samples)")
    print(f"  {'1 in 8, 45% above, shown < twice':34s}{rate(hits[~twice])}")


if __name__ == "__main__":
    main()
