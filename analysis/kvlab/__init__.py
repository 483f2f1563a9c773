"""kvlab's analysis package: experiment files, the runner, reports, plots and comparisons.

`python3 -m kvlab run workloads/X.toml` measures an experiment into results/runs/;
`report RUN_DIR` and `compare BASE NEW` read run folders back; `record RUN_DIR` adds one
to the per-machine history in results/history/; `regress` and `micro` track the code's own
cost. From a notebook, kvlab.running.inprocess measures in-process through kvlab._harness.
"""

from __future__ import annotations

# The compiled bindings (kvlab._harness) live in a build folder's python/kvlab/;
# with that folder on sys.path, this package spans both directories.
from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)
