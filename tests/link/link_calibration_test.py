"""Unit tests of the link calibration (scripts/link_calibration.py) against a
simulated link: known base, known non-linear cost of a delay, known noise."""
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import link_calibration as lc  # noqa: E402


class SimulatedLink:
    """A link whose p50 is base + slope * delay + idle_penalty once delayed.

    `noise` is a list of offsets added to successive measurements (cycled), so
    a test knows exactly what each measurement returns.
    """

    def __init__(self, base, slope=1.0, idle_penalty=0.0, noise=(0.0,)):
        self.base, self.slope, self.idle_penalty, self.noise = base, slope, idle_penalty, noise
        self.delays = []

    def p50(self, delay):
        return self.base + self.slope * delay + (self.idle_penalty if delay > 0 else 0.0)

    def __call__(self, delay):
        offset = self.noise[len(self.delays) % len(self.noise)]
        self.delays.append(delay)
        p50 = self.p50(delay) + offset
        return lc.Measurement(1000, p50, p50 * 1.3)


def test_additive_link_needs_one_step():
    link = SimulatedLink(base=60.0)
    result = lc.calibrate(1000.0, link)
    assert link.delays == [0.0, 940.0]
    assert result.forwarder_delay_us == 940.0
    assert result.base.p50_us == 60.0
    assert result.measured.p50_us == 1000.0
    assert result.steps == 1 and result.converged


def test_idle_penalty_is_corrected_by_measuring_again():
    # The 2-core VM of the issue: base 227 us, and a delayed link costs 76 us
    # more than base + delay.
    link = SimulatedLink(base=227.0, idle_penalty=76.0)
    result = lc.calibrate(1000.0, link)
    assert link.delays == [0.0, 773.0, 697.0]
    assert result.measured.p50_us == pytest.approx(1000.0)
    assert result.converged and result.steps == 2


def test_slope_below_one_converges_within_tolerance():
    link = SimulatedLink(base=30.0, slope=0.8)
    result = lc.calibrate(250.0, link)
    assert abs(result.measured.p50_us - 250.0) <= lc.tolerance_us(250.0)
    assert result.converged
    assert link.delays[-1] == result.forwarder_delay_us  # the link is left at the reported delay


def test_base_above_target_is_refused_without_setting_a_delay():
    link = SimulatedLink(base=227.0)
    with pytest.raises(lc.BaseExceedsTarget) as refused:
        lc.calibrate(200.0, link)
    assert link.delays == [0.0]
    assert refused.value.base.p50_us == 227.0
    assert "227.0 us" in str(refused.value) and "200 us" in str(refused.value)


def test_no_convergence_leaves_the_best_delay_and_says_so():
    # Noise of +-50 us on every measurement: never within 20 us of 1000.
    link = SimulatedLink(base=100.0, noise=(0.0, 50.0, -50.0))
    result = lc.calibrate(1000.0, link, max_steps=3)
    assert not result.converged
    # Delays tried: 900 (p50 1050 -> error 50), 850 (p50 900 -> error -100), 950 (p50 1050).
    assert link.delays == [0.0, 900.0, 850.0, 950.0, 900.0]
    assert result.forwarder_delay_us == 900.0  # |error| 50 was the best seen


def test_negative_delay_is_never_asked_for():
    link = SimulatedLink(base=95.0, idle_penalty=40.0)
    result = lc.calibrate(100.0, link)
    assert min(link.delays) >= 0.0
    assert not result.converged  # even delay 0 with the penalty misses; reported as such


def test_parse_ping_line_reads_kvlab_link_ping_output():
    line = "count=1000 min_us=51.0 p50_us=60.5 p90_us=70.0 p99_us=90.25 max_us=400.0 mean_us=62.0\n"
    assert lc.parse_ping_line(line) == lc.Measurement(1000, 60.5, 90.25)
    with pytest.raises(ValueError):
        lc.parse_ping_line("kvlab-link-ping: connection lost after 3 round trips")


def test_main_writes_the_json_and_exits_4_when_refused(tmp_path):
    fake = tmp_path / "measure.sh"
    # p50 = 40 + delay: prints kvlab-link-ping's line for the delay given last.
    fake.write_text('#!/bin/sh\necho "count=600 p50_us=$(echo "40 + $1" | bc) p99_us=99.0"\n')
    fake.chmod(0o755)
    out = tmp_path / "link.json"
    assert lc.main(["--target-us", "250", "--json", str(out), "--", str(fake)]) == 0
    record = json.loads(out.read_text())
    assert record["configured_rtt_us"] == 250
    assert record["forwarder_delay_us"] == 210
    assert record["base_p50_us"] == 40 and record["measured_p50_us"] == 250
    assert record["round_trips"] == 600 and record["converged"] is True
    assert lc.main(["--target-us", "30", "--json", str(out), "--", str(fake)]) == lc.EXIT_BASE_EXCEEDS_TARGET
