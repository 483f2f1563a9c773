"""RemoteLink (analysis/kvlab/running/remote.py) exposes what `remote-link up` measured.

A fake scripts/remote-link stands in for the real one (no root needed): it
writes the figures file the way the real script does and prints the server
address last, or exits 4 with the refusal message.
"""
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "analysis"))
from kvlab.running.remote import LinkUnavailable, RemoteLink  # noqa: E402

FIGURES = {"configured_rtt_us": 250.0, "forwarder_delay_us": 205.5, "base_p50_us": 44.5,
           "base_p99_us": 60.0, "measured_p50_us": 251.0, "measured_p99_us": 300.0,
           "round_trips": 1000, "calibration_steps": 2, "converged": True,
           "measured_at": "2026-12-01T00:00:00+00:00"}


def fake_repo(tmp_path, body):
    script = tmp_path / "repo" / "scripts" / "remote-link"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)
    return tmp_path / "repo"


def test_up_reads_the_measured_figures_for_meta_json(tmp_path):
    figures = tmp_path / "kvlab-link.json"
    repo = fake_repo(tmp_path, f"cat > {figures} <<'END'\n{json.dumps(FIGURES)}\nEND\n"
                               "echo 'remote link up: ...'\necho 10.77.0.2\n")
    link = RemoteLink(repo, tmp_path / "build", 250, measured_file=figures)
    assert link.measured_rtt_us is None
    assert link.up() == "10.77.0.2"
    assert link.measured_rtt_us == 251.0
    meta = link.meta()
    assert meta["configured_rtt_us"] == 250 and meta["server_address"] == "10.77.0.2"
    assert meta["base_p50_us"] == 44.5 and meta["measured_p99_us"] == 300.0
    assert meta["forwarder_delay_us"] == 205.5 and meta["converged"] is True


def test_a_refused_calibration_is_reported_with_its_reason(tmp_path):
    repo = fake_repo(tmp_path, "echo 'remote-link: the link alone has a round trip of 300.0 us "
                               "(p50), more than the requested 250 us' >&2\nexit 4\n")
    link = RemoteLink(repo, tmp_path / "build", 250, measured_file=tmp_path / "none.json")
    with pytest.raises(LinkUnavailable, match="status 4: .*more than the requested 250 us"):
        link.up()


def test_up_without_figures_is_an_error_not_a_silent_gap(tmp_path):
    repo = fake_repo(tmp_path, "echo 10.77.0.2\n")
    link = RemoteLink(repo, tmp_path / "build", 250, measured_file=tmp_path / "missing.json")
    with pytest.raises(LinkUnavailable, match="no readable measurements"):
        link.up()
