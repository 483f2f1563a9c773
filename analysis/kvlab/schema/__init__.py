"""What an experiment may say, below every other room: the one TOML checker
(toml_checker: ExperimentError, typed and checked keys) and the engine and client kinds
that kvlab's binaries own (kinds). Imports nothing of kvlab's other rooms, so measures,
tracking, running and rendering can all use it."""

from __future__ import annotations
