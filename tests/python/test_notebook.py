"""notebooks/analysis.ipynb runs headless (nbconvert --execute) on the committed sample run,
and its in-process section measures this build's kvlab-server through kvlab._harness."""

import json
import os
import shutil
import subprocess

import pytest

from conftest import BUILD_DIR, REPO

SAMPLE = REPO / "results" / "sample"


def test_the_notebook_executes_on_the_sample_run(tmp_path):
    if not (SAMPLE / "points.csv").exists():
        pytest.skip(f"no committed sample run in {SAMPLE}")
    jupyter = shutil.which("jupyter") or "/usr/bin/jupyter"
    env = dict(os.environ, KVLAB_RUN=str(SAMPLE), KVLAB_BUILD_DIR=str(BUILD_DIR),
               PYDEVD_DISABLE_FILE_VALIDATION="1")
    done = subprocess.run([jupyter, "nbconvert", "--to", "notebook", "--execute",
                           "--ExecutePreprocessor.timeout=240", "--output-dir", str(tmp_path),
                           str(REPO / "notebooks" / "analysis.ipynb")],
                          capture_output=True, text=True, env=env, timeout=280)
    assert done.returncode == 0, done.stderr[-3000:]
    executed = json.loads((tmp_path / "analysis.ipynb").read_text())
    outputs = [o for cell in executed["cells"] if cell["cell_type"] == "code"
               for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = json.dumps(outputs)
    assert f"run: {SAMPLE}" in text
    assert "image/png" in text  # the plots were drawn
    assert "client-bound" in text
    # the sample has no stage columns: the stage cell draws the committed 16-core run's
    assert f"stages from: {REPO / 'results' / 'sample-16core'}" in text
    # its declared pair's two sides both have figures; the table of every server at that
    # point then also lists the redis-server rows, which have no INFO stages
    pairs, _, every_server = text.partition("### Every server at")
    assert "| queue+return " in pairs and "not reported by this server" not in pairs
    assert "not reported by this server" in every_server
    # 2 clients x 2 thread counts x 3 windows, every reply an integer
    assert "in-process: 12 windows against kvlab-server engine=concurrent, 0 error replies" in text
