"""Running experiments: experiment files and their plan, the CPUs each side gets, the
servers, the load generators (everything is measured through kvlab-load), the rounds
(runner), runs on several hosts, latency curves, system-call counts, and the run folder
they write (results)."""
