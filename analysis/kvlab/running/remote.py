"""The emulated remote link (scripts/remote-link): brought up once for a run's `remote` points.

`remote-link up --rtt-us N` creates the namespaces kvlab-server and kvlab-client
joined by a forwarder that delays every packet, calibrates the delay so that the
measured median round trip is N, and prints the server's address as its last
word. Exit status 3 means the link is not possible here (not root, no TUN
device), 4 that the link's own round trip already exceeds N; the runner then
reports the remote rows as skipped with the reason.

What was measured is in `RemoteLink.measured` (the fields of
/run/kvlab-link.json: configured_rtt_us, forwarder_delay_us, base_p50_us,
base_p99_us, measured_p50_us, measured_p99_us, round_trips, calibration_steps,
converged, measured_at), for a run's meta.json; `measured_rtt_us` is the
measured p50, the RTT to multiply throughput by (ops/s × RTT compares across
machines).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

SERVER_NAMESPACE = "kvlab-server"
CLIENT_NAMESPACE = "kvlab-client"
MEASURED_FILE = Path("/run/kvlab-link.json")


class LinkUnavailable(Exception):
    """The link could not come up; the message is the reason shown in the report."""


class RemoteLink:
    def __init__(self, repo: Path, build_dir: Path, rtt_us: int, rate_mbit: int = 0,
                 measured_file: Path = MEASURED_FILE) -> None:
        self.script = repo / "scripts" / "remote-link"
        self.environment = dict(os.environ, KVLAB_LINK_BIN=str(build_dir / "kvlab-link"))
        self.rtt_us = rtt_us
        self.rate_mbit = rate_mbit
        self.measured_file = measured_file  # where `up` writes its figures
        self.server_address: str | None = None
        self.measured: dict | None = None

    @property
    def measured_rtt_us(self) -> float | None:
        """The calibrated link's measured median round trip, µs (None before up())."""
        return self.measured["measured_p50_us"] if self.measured else None

    def meta(self) -> dict:
        """What a run's meta.json records about the link."""
        return {"configured_rtt_us": self.rtt_us, "rate_mbit": self.rate_mbit,
                "server_address": self.server_address, **(self.measured or {})}

    def up(self) -> str:
        if not self.script.exists():
            raise LinkUnavailable(f"{self.script} not found")
        command = [str(self.script), "up", "--rtt-us", str(self.rtt_us)]
        if self.rate_mbit:
            command += ["--rate-mbit", str(self.rate_mbit)]
        words = self._script(command[1:], timeout=180).split()
        if not words:
            raise LinkUnavailable("remote-link up printed no server address")
        self.server_address = words[-1]
        self.measured = read_measured(self.measured_file)
        return self.server_address

    def restart_forwarder(self) -> None:
        """A fresh forwarder process at the calibrated delay (`remote-link restart`): its
        layout and placement are drawn anew, as every server's are at a start. Raises
        LinkUnavailable when it did not come back."""
        if self.server_address is None:
            raise LinkUnavailable("the remote link is not up")
        self._script(["restart"], timeout=60)

    def _script(self, arguments: list[str], timeout: float) -> str:
        """`remote-link ARGUMENTS`' stdout; LinkUnavailable, with its last line of output as
        the reason, when it could not run or exited non-zero."""
        verb = arguments[0]
        try:
            done = subprocess.run([str(self.script), *arguments], capture_output=True,
                                  text=True, timeout=timeout, env=self.environment)
        except (OSError, subprocess.TimeoutExpired) as error:
            raise LinkUnavailable(f"remote-link {verb} failed: {error}") from None
        if done.returncode != 0:
            reason = (done.stderr or done.stdout).strip().splitlines()
            raise LinkUnavailable(f"remote-link {verb} exited with status {done.returncode}"
                                  + (f": {reason[-1]}" if reason else ""))
        return done.stdout

    def down(self) -> None:
        if self.server_address is None:
            return
        subprocess.run([str(self.script), "down"], capture_output=True, text=True, timeout=60,
                       env=self.environment)
        self.server_address = None
        self.measured = None


def read_measured(path: Path) -> dict:
    """The figures `remote-link up` measured (see the module's docstring)."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise LinkUnavailable(f"remote-link up left no readable measurements in {path}: {error}") \
            from None
