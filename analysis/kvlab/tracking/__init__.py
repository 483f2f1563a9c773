"""Tracking across runs: the per-machine history of runs (history, machine's
fingerprint), the noise-aware verdict over it (verdict), `compare BASE NEW`
(base_vs_new), the code's own cost (regress: the instruction-count gate, opcost: its
records, micro: `make micro`)."""

from __future__ import annotations
