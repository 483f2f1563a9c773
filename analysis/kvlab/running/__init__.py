"""Running experiments: experiment files (experiment, read by the one TOML checker,
kvlab.schema.toml_checker; hosts for [[host]] and [placement]) and their plan, the CPUs
each side gets, the servers (here or on a host), the load
generators (everything is measured through kvlab-load), the rounds (runner), the emulated
link (remote), runs on several hosts, latency curves, system-call counts, and the run
folder they write (results)."""

from __future__ import annotations
