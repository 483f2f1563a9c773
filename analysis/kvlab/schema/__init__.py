"""What an experiment may say, below every other room: its types and constants (specs:
ServerSpec, SweepSpec, CompareSpec, Point, Experiment, POINT_VARIABLES, the defaults),
the one TOML checker (toml_checker: ExperimentError, typed and checked keys) and the
engine and client kinds that kvlab's binaries own (kinds). Imports nothing of kvlab's
other rooms, so measures, tracking, running and rendering can all use it; the parser of
experiment files, which needs the runner's hosts and command templates, is
kvlab.running.experiment."""

from __future__ import annotations
