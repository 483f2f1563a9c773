"""Rendering runs: the report (with the seeds' tables and the latency, memory, ratio and
system-call sections), its plots, and the static dashboard (dashboard_data loads what
dashboard draws)."""
