"""Rendering runs: the report (with the seeds' tables and the latency, memory, ratio and
system-call sections), markdown in and out (markdown), its plots (run_plots lists a run's
figures), and the static dashboard (dashboard_data loads what dashboard draws)."""

from __future__ import annotations
