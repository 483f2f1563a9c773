"""The run's budget plan (kvlab.measures.budget_plan, running/alternating.py): the
predicted half-width against two_level_interval's on synthetic starts of known variance,
the order in which the budget is spent, and a phase with a fake kvlab-load and a fake
clock: the A/A first, the seed claim's rounds next, a ratio the budget cannot buy
`not measured (budget)` with the seconds it needs, never a verdict from a few starts."""

from __future__ import annotations

import csv
import json
import math
import random
import statistics
import types
from pathlib import Path

import pytest
from fake_alternation import fake_host

from kvlab.measures import budget_plan
from kvlab.measures.budget_plan import PlanInput
from kvlab.measures.ratio_verdicts import NOT_MEASURED_BUDGET, decide_row
from kvlab.measures.stats import two_level_interval


def _starts(rng: random.Random, n: int, between_sd: float, pair_sd: float,
            pairs: int) -> list[list[float]]:
    out = []
    for _ in range(n):
        effect = rng.gauss(0, between_sd)
        out.append([effect + rng.gauss(0, pair_sd) for _ in range(pairs)])
    return out


@pytest.mark.parametrize("n, between_sd, pair_sd", [(10, 0.03, 0.05), (16, 0.01, 0.08),
                                                    (6, 0.05, 0.02)])
def test_the_predicted_half_width_is_what_the_interval_gives(n, between_sd, pair_sd):
    """Known answer: starts with a known start effect and slice noise; the mean half-width
    of two_level_interval over 400 trials is within 12% of the prediction from the true
    start variance, and start_variance estimates that variance within 15% on average."""
    rng = random.Random(n)
    pairs = 16
    true_var = between_sd ** 2 + pair_sd ** 2 / pairs
    halves, estimates = [], []
    for _ in range(400):
        summary = two_level_interval(_starts(rng, n, between_sd, pair_sd, pairs))
        halves.append(math.log1p(summary.half_width))
        estimates.append(budget_plan.start_variance(summary))
    predicted = math.log1p(budget_plan.predicted_half_width(true_var, n))
    assert statistics.fmean(halves) == pytest.approx(predicted, rel=0.12)
    assert statistics.fmean(estimates) == pytest.approx(true_var, rel=0.15)


def test_rounds_for_reaches_the_target_with_the_fewest_starts():
    var = 0.05 ** 2
    rounds = budget_plan.rounds_for(var, 0.02, 10, 60)
    assert budget_plan.predicted_half_width(var, rounds) <= 0.02
    assert budget_plan.predicted_half_width(var, rounds - 1) > 0.02
    assert 20 < rounds < 40
    assert budget_plan.rounds_for(1e-8, 0.02, 10, 60) == 10      # quiet: the minimum
    assert budget_plan.rounds_for(1.0, 0.02, 10, 60) == 60       # never: the most allowed
    assert budget_plan.rounds_for(math.nan, 0.02, 10, 60) == 10  # unknown: the minimum
    assert math.isinf(budget_plan.predicted_half_width(var, 2))  # too few starts: none


def test_the_plan_spends_on_seed_claims_then_started_ratios_then_the_cheapest():
    var = 0.05 ** 2  # about 28 rounds for ±2%
    need = budget_plan.rounds_for(var, 0.02, 10, 60)
    ratios = [PlanInput("other-cheap", False, 0, 1.0, math.nan),
              PlanInput("other-dear", False, 0, 3.0, math.nan),
              PlanInput("started", False, 4, 3.0, math.nan),
              PlanInput("seed", True, 0, 2.0, math.nan)]
    budget = need * 2.0 + (need - 4) * 3.0 + 15 * 1.0
    plan = budget_plan.plan(ratios, budget, 0.02, 10, 60, prior_var=var)
    assert plan["seed"].rounds == need and plan["seed"].reaches_target
    assert plan["started"].rounds == need and plan["started"].cost_s == (need - 4) * 3.0
    # 15 s left buys the cheap one 15 starts: a lesser precision, said up front
    cheap = plan["other-cheap"]
    assert cheap.measured and cheap.rounds == 15 and not cheap.reaches_target
    assert cheap.predicted_half == pytest.approx(budget_plan.predicted_half_width(var, 15))
    # nothing left: not measured, with what it would have needed
    dear = plan["other-dear"]
    assert not dear.measured and dear.rounds == 0 and dear.needed_s == need * 3.0
    # fewer than min_rounds affordable is none at all
    plan = budget_plan.plan([PlanInput("r", False, 0, 1.0, math.nan)], 9.5, 0.02, 10, 60,
                            prior_var=var)
    assert not plan["r"].measured
    # a started ratio keeps its way to min_rounds even when a seed claim wants it all
    plan = budget_plan.plan([PlanInput("seed", True, 0, 1.0, math.nan),
                             PlanInput("started", False, 4, 1.0, math.nan)],
                            need + 6.0, 0.02, 10, 60, prior_var=var)
    assert plan["started"].rounds == 10 and plan["seed"].rounds == need
    # max_rounds short of the target: planned at the most, and not said to reach it
    capped = budget_plan.plan([PlanInput("noisy", True, 0, 1.0, math.nan)], math.inf, 0.02,
                              10, 20, prior_var=var)["noisy"]
    assert capped.rounds == 20 and capped.predicted_half > 0.02 and not capped.reaches_target
    # no budget: everything to its target
    plan = budget_plan.plan(ratios, math.inf, 0.02, 10, 60, prior_var=var)
    assert all(p.reaches_target for p in plan.values())
    # a ratio's own variance overrides the A/A's
    plan = budget_plan.plan([PlanInput("quiet", False, 10, 1.0, 1e-8)], 100, 0.02, 10, 60,
                            prior_var=var)
    assert plan["quiet"].rounds == 10 and plan["quiet"].cost_s == 0


def test_a_row_not_measured_says_so_and_what_it_needs():
    row = {"low": "", "high": "", "rounds": "0", "status": NOT_MEASURED_BUDGET,
           "budget_needed_s": "84", "metric": "ops_per_s"}
    verdict = decide_row(row, 1.2, "a", "b")
    assert verdict.direction == NOT_MEASURED_BUDGET and verdict.seed is None
    assert verdict.text() == "not measured (budget) (needs about 84 s more)"


def _fake_kvlab_load(rng: random.Random, clock: list[float], round_s: float):
    """subprocess.run for an alternation round: `round_s` on the fake clock, 16 slices
    whose side a differs from side b by a start effect of ±10% (log SD) and slices by 1%."""
    def fake_run(command, **kwargs):
        clock[0] += round_s
        effect = rng.gauss(0, 0.1)
        slices = []
        for i in range(16):
            side = 0 if i % 4 in (0, 3) else 1
            ops = 1000 * math.exp((effect if side == 0 else 0) + rng.gauss(0, 0.01))
            slices.append({"index": i, "side": side, "start_s": 0.1 * i, "seconds": 0.1,
                           "ops": int(ops), "server_cpu_s": 0.08, "client_cpu_s": 0.02,
                           "mean_us": 10, "p99_us": 20})
        document = {"status": "complete", "disturbed": False, "allowed_cores": 1,
                    "slices": slices}
        Path(command[command.index("--json") + 1]).write_text(json.dumps(document))
        return types.SimpleNamespace(returncode=0, stdout="", stderr="")
    return fake_run


def _phase_pair(name: str, seed: float | None = None, calibration: bool = False):
    from kvlab.running import alternating
    from kvlab.schema.specs import CompareSpec, Point
    point = Point("s", "r", "kvlab-load", "unix", "dedicated", "direct", "set", "", 10,
                  "uniform", 64, 16, 50, "on", 1, 0.3, 0.1, 1)
    spec = CompareSpec(name, "server", "r", "r", seed_ratio=seed)
    return alternating.Pair(spec, "set", "p", point, point, calibration=calibration)


def test_a_phase_measures_the_a_over_a_first_then_its_plan(tmp_path, monkeypatch):
    from kvlab.running import alternating

    clock = [0.0]
    round_s = 2.0
    said: list[str] = []
    runner = fake_host(tmp_path, said, alternation_s=1.6)
    monkeypatch.setattr(alternating.subprocess, "run",
                        _fake_kvlab_load(random.Random(7), clock, round_s))
    monkeypatch.setattr(alternating, "time", types.SimpleNamespace(monotonic=lambda: clock[0]))
    pair = _phase_pair
    aa, other, seed, late = pair("A/A r", calibration=True), pair("other"), \
        pair("seed", 1.1), pair("late")
    # a later phase's pair (a remote one): min_rounds are kept for it, at first at the
    # guess (alternation_s + ROUND_OVERHEAD_S), then at the round the A/A measured here
    remote = pair("remote, measured later")
    phase = alternating.AlternatingPhase(runner, [aa, other, seed, late], tmp_path,
                                         later=[remote])
    assert phase._later_reserve(10) == pytest.approx(10 * (1.6 + alternating.ROUND_OVERHEAD_S))
    order = []
    measure = phase.measure_round
    monkeypatch.setattr(phase, "measure_round", lambda p: (order.append(p.name), measure(p)))
    # ±10% a start would need about 100 starts for ±2%: every ratio is planned at
    # max_rounds (20) whatever its estimate. The A/A's 10 rounds, the seed claim's 20,
    # then 15 starts: one more ratio to a lesser precision, none for the last.
    min_rounds, max_rounds, target = 10, 20, 0.02
    deadline = round_s * (min_rounds + max_rounds + 15) + 0.5 + min_rounds * round_s
    why = phase.run(deadline, target, max_rounds, min_rounds)
    assert phase._later_reserve(min_rounds) == pytest.approx(min_rounds * round_s)
    assert not remote.rounds

    assert order[:min_rounds] == ["A/A r"] * min_rounds, "the machine's noise comes first"
    assert order[min_rounds:min_rounds + max_rounds] == ["seed"] * max_rounds, \
        "then the seed claim"
    plan_lines = [s for s in said if s.startswith("plan:")]
    assert len(plan_lines) == 1 and "not measured (budget)" in plan_lines[0], said
    # at max_rounds, ±10% a start is predicted about ±5%: no ratio is said to reach ±2%
    assert "0 can reach ±2.0%" in plan_lines[0] and "(0 of 1 seed claims)" in plan_lines[0]
    results = {p.name: alternating.pair_result(p, target, min_rounds, 0.0, phase.plan[p.key])
               for p in (other, seed, late)}
    counts = {p.name: len(p.rounds) for p in phase.pairs}
    assert counts["seed"] == max_rounds and sorted(counts.values()) == [0, 10, 15, 20], counts
    assert "2 only a lesser precision" in plan_lines[0] and "1 not measured" in plan_lines[0]
    # a ratio has min_rounds starts or none, and one the budget left out says so
    assert all(n == 0 or n >= min_rounds for n in counts.values()), counts
    left_out = [results[name] for name in ("other", "late") if counts[name] == 0]
    assert len(left_out) == 1, (why, counts)
    assert left_out[0].status == NOT_MEASURED_BUDGET and left_out[0].budget_needed_s > 0
    assert left_out[0].verdict().direction == NOT_MEASURED_BUDGET
    assert "time budget reached" in why
    rows = alternating.plan_rows(phase.first_plan, phase.pairs)
    assert {r["comparison"] for r in rows} == {"other", "seed", "late"}
    assert [r["measured"] for r in rows if r["comparison"] == "seed"] == [True]
    with (tmp_path / "alternation.csv").open() as handle:
        assert len(list(csv.DictReader(handle))) == 16 * len(order)


@pytest.mark.parametrize("spare_s, seed_rounds", [(4.5, 20), (2.5, 19), (24.5, 20)])
def test_seed_claims_take_the_later_phases_reserve_first(tmp_path, monkeypatch, spare_s,
                                                          seed_rounds):
    """The remote phase's min_rounds are kept only from what the seed claims do not need.
    2-s rounds: the A/A's 10, then a seed claim planned at max_rounds (20: ±10% a start)
    and a ratio with no claim; the later phase's reserve is 10 rounds (20 s), 4 s of
    which are its points' sweep rounds. With 4.5 s beyond the A/A and the seed claim's
    rounds, the seed claim gets all 20 out of that reserve; with 2.5 s it gets 19, since
    the 4 s of sweep rounds stay kept whatever the claims need; with 24.5 s the reserve
    is kept whole. The ratio without a claim never takes the reserve."""
    from kvlab.running import alternating

    clock = [0.0]
    round_s = 2.0
    monkeypatch.setattr(alternating.subprocess, "run",
                        _fake_kvlab_load(random.Random(11), clock, round_s))
    monkeypatch.setattr(alternating, "time", types.SimpleNamespace(monotonic=lambda: clock[0]))
    aa, seed, other = _phase_pair("A/A r", calibration=True), _phase_pair("seed", 1.1), \
        _phase_pair("other")
    remote = _phase_pair("remote, measured later")
    phase = alternating.AlternatingPhase(fake_host(tmp_path, [], alternation_s=1.6),
                                         [aa, seed, other], tmp_path, later=[remote],
                                         rounds_cost=lambda points: 4.0 * len(points))
    min_rounds, max_rounds, target = 10, 20, 0.02
    deadline = round_s * (min_rounds + max_rounds) + spare_s
    phase.run(deadline, target, max_rounds, min_rounds)
    assert len(aa.rounds) == min_rounds and len(seed.rounds) == seed_rounds
    assert not other.rounds and not remote.rounds
    # what is left to the deadline is the later phase's, up to its min_rounds
    left = deadline - clock[0]
    assert left >= 4.0
    if seed_rounds == max_rounds:
        assert phase._seed_claims_need(target, min_rounds, max_rounds) == 0
        assert phase._later_reserve(min_rounds, deadline, target, max_rounds) == \
            pytest.approx(min(left, min_rounds * round_s))


def test_the_report_says_what_the_plan_could_decide():
    from kvlab.rendering.report_ratios import plan_lines
    row = {"test": "set", "seed_claim": False, "predicted_half_width": 0.02}
    rows = [dict(row, comparison="seed", point="P1", seed_claim=True, rounds=28,
                 cost_s=56.0, needed_s=56.0, measured=True),
            dict(row, comparison="cheap", point="P2", rounds=15, predicted_half_width=0.057,
                 cost_s=15.0, needed_s=28.0, measured=True),
            dict(row, comparison="dear", point="P3", rounds=0, predicted_half_width=None,
                 cost_s=0.0, needed_s=84.0, measured=False)]
    meta = {"precision": 0.02, "alternation": {"plan": {"local": {"first": rows,
                                                                  "last": rows}}}}
    (line,) = plan_lines(meta)
    assert line == ("- plan (local, made once the A/A had its rounds): 1 of 3 declared "
                    "ratios to ±2.0% (1 of 1 seed claims); 1 to a lesser precision, up to "
                    "±5.7%; 1 not measured (budget), needing about 84 s more: dear (P3).")
    assert plan_lines({"alternation": {}}) == []


def test_a_ratio_dropped_after_a_start_prints_no_ratio_beside_not_measured():
    import pandas as pd
    from kvlab.rendering.report_ratios import _interval
    dropped = pd.Series({"ratio": 1.605, "low": math.nan, "high": math.nan,
                         "status": NOT_MEASURED_BUDGET})
    assert _interval(dropped) == "–"
    few = dropped.copy()
    few["status"] = "inconclusive"  # two starts it kept: its ratio, no interval
    assert _interval(few) == "1.605 [–]"
    # the time section of a run that measured points from starts says so
    from kvlab.rendering.report_ratios import time_section
    text = time_section({"alternation": {"points_from_starts": 42, "rounds_spent_s": 487,
                                         "spent_s": {"local": 500.0}, "pairs": []}})
    assert "(42 points were measured by their declared ratio's starts)" in text


def test_the_time_section_says_how_a_planned_run_gave_out_its_rounds():
    from kvlab.rendering.report_ratios import time_section
    spent = {"alternation_s": 2.0, "slice_s": 0.1, "min_rounds": 10, "rounds_spent_s": 785,
             "spent_s": {"local": 352.0}, "pairs": []}
    planned = time_section({"alternation": dict(spent, plan={"local": {"first": [],
                                                                       "last": []}})})
    assert "the A/A pair's 10 rounds first, then the rounds the budget plan gave each" \
        in planned
    # a run from before the plan says what it did then
    assert "every pair 10 rounds first" in time_section({"alternation": spent})


def test_a_budget_short_of_every_started_ratio_finishes_the_cheapest():
    # Seven seed-claim ratios at 6 of 10 starts: four cost 2.5 s a start, three 10 s
    # (a million keys to prefill). 50 s finishes the four cheap ones (40 s), not one dear
    # one more; the dear ones are dropped now, not each left 4 starts short.
    var = 0.01 ** 2
    ratios = [PlanInput(f"cheap{i}", True, 6, 2.5, var) for i in range(4)] + \
             [PlanInput(f"dear{i}", True, 6, 10.0, var) for i in range(3)]
    plan = budget_plan.plan(ratios, 50.0, 0.02, 10, 60)
    assert [plan[f"cheap{i}"].rounds for i in range(4)] == [10] * 4
    assert all(not plan[f"dear{i}"].measured for i in range(3))
    assert plan["dear0"].needed_s == 40.0
    # with enough for one dear ratio besides, exactly one of them is kept
    plan = budget_plan.plan(ratios, 80.0, 0.02, 10, 60)
    assert sum(plan[f"dear{i}"].measured for i in range(3)) == 1
    assert all(plan[f"cheap{i}"].measured for i in range(4))


def test_a_ratio_its_own_starts_say_cannot_resolve_gets_min_rounds_and_comes_last():
    # Its own 12 starts vary ±8% (a side with modes): 40 starts would still be about ±2.6%.
    # It stops where it is, and the budget goes to two unstarted ratios that can resolve.
    hopeless_var = math.log1p(0.08) ** 2
    assert budget_plan.predicted_half_width(hopeless_var, 40) > 0.02
    quiet = 0.01 ** 2
    ratios = [PlanInput("modes", False, 12, 2.5, hopeless_var),
              PlanInput("new1", False, 0, 2.5, math.nan),
              PlanInput("new2", False, 0, 2.5, math.nan)]
    plan = budget_plan.plan(ratios, 50.0, 0.02, 10, 40, prior_var=quiet)
    assert plan["modes"].measured and plan["modes"].rounds == 12 and plan["modes"].cost_s == 0
    assert not plan["modes"].reaches_target
    assert plan["new1"].rounds == plan["new2"].rounds == 10
    # short of min_rounds it still gets them (what it has started is concluded), but only
    # after the ratios that can resolve
    ratios[0] = PlanInput("modes", False, 5, 2.5, hopeless_var)
    plan = budget_plan.plan(ratios, 50.0, 0.02, 10, 40, prior_var=quiet)
    assert plan["modes"].rounds == 10 and plan["new1"].rounds == 10
    assert not plan["new2"].measured
    # a seed claim is never given up so: it is planned at max_rounds as before
    plan = budget_plan.plan([PlanInput("seed", True, 12, 2.5, hopeless_var)], math.inf,
                            0.02, 10, 40)
    assert plan["seed"].rounds == 40


def test_a_phase_finishes_a_started_ratio_before_it_starts_another(tmp_path):
    from kvlab.running import alternating
    from kvlab.schema.specs import CompareSpec, Point
    point = Point("s", "r", "kvlab-load", "tcp", "dedicated", "direct", "set", "", 10,
                  "uniform", 64, 16, 50, "on", 1, 0.3, 0.1, 1)
    pairs = [alternating.Pair(CompareSpec(name, "server", "r", "r", seed_ratio=seed), "set",
                              "p", point, point) for name, seed in
             (("fresh", None), ("started", None), ("further", None), ("seed", 1.1))]
    pairs[1].rounds, pairs[2].rounds = [[]] * 2, [[]] * 5
    phase = alternating.AlternatingPhase(fake_host(tmp_path, []), pairs, tmp_path)
    phase.plan = {p.key: types.SimpleNamespace(rounds=10, measured=True) for p in pairs}
    order = []
    for _ in range(4):
        chosen = phase._next_pair(0.02, 40, 10)
        order.append(chosen.name)
        chosen.rounds = chosen.rounds + [[]] * 10  # done with its plan
    assert order == ["seed", "further", "started", "fresh"]


def test_past_the_plan_a_phase_finishes_the_cheapest_ratio_in_the_time_left(tmp_path):
    # Runs W and X of a default run gave their last minutes to a million-key GET needing
    # 382 s more while three ratios ended 2-14 s short of ±2%. Past their plans, the time
    # left goes to the ratio cheapest to finish; a round that does not fit is not begun,
    # and one that does still is.
    from kvlab.measures.stats import PairedSummary
    from kvlab.running import alternating
    from kvlab.schema.specs import CompareSpec, Point
    point = Point("s", "r", "kvlab-load", "tcp", "dedicated", "direct", "set", "", 10,
                  "uniform", 64, 16, 50, "on", 1, 0.3, 0.1, 1)
    shapes = {"far": (14, 0.049, 6.4), "near": (15, 0.021, 1.9), "mid": (22, 0.024, 2.4)}
    pairs = []
    for name, (n, half, round_s) in shapes.items():
        pair = alternating.Pair(CompareSpec(name, "server", "r", "r", seed_ratio=1.1), "set",
                                "p", point, point)
        pair.rounds, pair.seconds = [[]] * n, [round_s] * n
        # the start variance that gives this half-width over n starts
        var = n * (math.log1p(half) / budget_plan.t_quantile_975(n - 1)) ** 2
        pair.summary = (lambda n=n, half=half, var=var, metric=None: PairedSummary(
            n=n, pairs=20 * n, ratio=2.0, low=2.0 / (1 + half),
            high=2.0 * (1 + half), batches=n, method="two-level", between_var=var,
            pair_var=0.0))
        pairs.append(pair)
    phase = alternating.AlternatingPhase(fake_host(tmp_path, []), pairs, tmp_path)
    phase.plan = {p.key: types.SimpleNamespace(rounds=len(p.rounds), measured=True)
                  for p in pairs}
    assert phase._next_pair(0.02, 60, 10, seconds_left=120).name == "near"
    pairs[1].rounds = pairs[1].rounds + [[]]
    pairs[1].summary = lambda metric=None: PairedSummary(
        n=16, pairs=320, ratio=2.0, low=1.97, high=2.03, batches=16, method="two-level",
        between_var=0.0, pair_var=0.0)
    assert phase._next_pair(0.02, 60, 10, seconds_left=120).name == "mid"
    # nothing can finish in 5 s: the furthest per second whose round fits
    assert phase._next_pair(0.02, 60, 10, seconds_left=5).name == "mid"
    assert phase._next_pair(0.02, 60, 10, seconds_left=1) is None
    assert phase._next_pair(0.02, 60, 10) is not None


def test_every_seed_claim_gets_min_rounds_before_one_goes_past_them(tmp_path):
    # Two default runs gave one SET seed claim 40 starts, its plan growing with its spread,
    # and left the four GET claims unmeasured. A claim past min_rounds now waits for the
    # others' first min_rounds: the claim with the fewest starts goes first.
    from kvlab.running import alternating
    from kvlab.schema.specs import CompareSpec, Point
    point = Point("s", "r", "kvlab-load", "tcp", "dedicated", "direct", "set", "", 10,
                  "uniform", 64, 16, 50, "on", 1, 0.3, 0.1, 1)
    pairs = [alternating.Pair(CompareSpec(name, "server", "r", "r", seed_ratio=1.1), "set",
                              "p", point, point) for name in ("wide", "fresh", "begun")]
    pairs[0].rounds, pairs[2].rounds = [[]] * 12, [[]] * 3
    phase = alternating.AlternatingPhase(fake_host(tmp_path, []), pairs, tmp_path)
    phase.plan = {p.key: types.SimpleNamespace(rounds=40 if p.name == "wide" else 10,
                                               measured=True) for p in pairs}
    order = []
    for _ in range(28 + 10 + 7):  # the planned starts; then next_to_measure's turn
        chosen = phase._next_pair(0.02, 40, 10)
        order.append(chosen.name)
        chosen.rounds = chosen.rounds + [[]]
    assert order[:3] == ["fresh"] * 3  # up to begun's 3
    assert order.index("wide") == 7 + 7 + 3  # after both others' min_rounds
    assert order.count("fresh") == order.count("begun") + 3 == 10
    assert order.count("wide") == 28


def test_seed_claims_take_turns_in_a_fresh_random_order_each_cycle(tmp_path):
    # A claim's ten back-to-back starts sat 14-19% above its next thirty in a default run
    # (a host state lasting about 30 s), and one claim's value ranged 9.5-12.2 over 21 runs
    # with intervals of ±0.4-2.9%: each claim now gets one start per cycle, so its starts spread
    # over the whole phase. The order within a cycle is random (no claim always follows
    # the same one), and a failed start (no round kept) is tried again in its place.
    from kvlab.running import alternating
    from kvlab.schema.specs import CompareSpec, Point
    point = Point("s", "r", "kvlab-load", "tcp", "dedicated", "direct", "set", "", 10,
                  "uniform", 64, 16, 50, "on", 1, 0.3, 0.1, 1)
    names = [f"claim{i}" for i in range(6)]
    pairs = [alternating.Pair(CompareSpec(name, "server", "r", "r", seed_ratio=1.1), "set",
                              "p", point, point) for name in names]
    other = alternating.Pair(CompareSpec("other", "server", "r", "r"), "set", "p", point, point)
    phase = alternating.AlternatingPhase(fake_host(tmp_path, []), pairs + [other], tmp_path)
    phase.order_rng = random.Random(11)
    phase.plan = {p.key: types.SimpleNamespace(rounds=10, measured=True)
                  for p in pairs + [other]}
    order = []
    for _ in range(70):  # the planned starts; then next_to_measure's turn
        chosen = phase._next_pair(0.02, 40, 10)
        if len(order) == 20 and chosen is not other:  # one failed start: nothing kept
            again = phase._next_pair(0.02, 40, 10)
            assert again is chosen
        order.append(chosen.name)
        chosen.rounds = chosen.rounds + [[]]
    assert order[60:] == ["other"] * 10  # the seed claims first
    cycles = [order[i:i + 6] for i in range(0, 60, 6)]
    assert all(sorted(cycle) == names for cycle in cycles)  # one start each per cycle
    assert len({tuple(cycle) for cycle in cycles}) >= 8  # a fresh order, nearly every cycle
    for name in names:  # its starts span the phase, at most two cycles less one apart
        at = [i for i, n in enumerate(order) if n == name]
        assert at[0] < 6 and at[-1] >= 54 and max(b - a for a, b in zip(at, at[1:])) <= 11


def test_claims_past_their_plan_that_can_all_finish_take_turns(tmp_path, monkeypatch):
    # Past its planned starts a ratio's next start goes to the one cheapest to finish; one
    # default run gave a seed claim its last eight starts back to back that way, all in one
    # low host state. Where every open ratio can finish in the time left, they now take
    # turns, the one started longest ago first; where they cannot, the cheapest still goes
    # first.
    from kvlab.measures.stats import PairedSummary
    from kvlab.running import alternating
    from kvlab.schema.specs import CompareSpec, Point
    point = Point("s", "r", "kvlab-load", "tcp", "dedicated", "direct", "set", "", 10,
                  "uniform", 64, 16, 50, "on", 1, 0.3, 0.1, 1)
    pairs = {name: alternating.Pair(CompareSpec(name, "server", "r", "r", seed_ratio=1.1),
                                    "set", "p", point, point) for name in ("cheap", "dear")}
    for name, pair in pairs.items():
        ratio = 1.1 if name == "cheap" else 1.2
        # ±3% against a 2% target: both open
        pair.summary = lambda pair=pair, ratio=ratio: PairedSummary(
            len(pair.rounds), 200, ratio, ratio / 1.03, ratio * 1.03, 20, "two-level")
        pair.host_sensitive = lambda target: False
    # what each one's starts say it still needs: 10 s and 30 s
    monkeypatch.setattr(alternating.budget_plan, "seconds_to_target",
                        lambda summary, *rest: 10.0 if summary.ratio < 1.15 else 30.0)
    phase = alternating.AlternatingPhase(fake_host(tmp_path, []), list(pairs.values()),
                                         tmp_path)
    phase.plan = {p.key: types.SimpleNamespace(rounds=10, measured=True)
                  for p in pairs.values()}

    def choices(seconds_left):
        for pair in pairs.values():
            pair.rounds, pair.last_started = [[]] * 10, None
        order = []
        for clock in range(8):
            chosen = phase._next_pair(0.02, 40, 10, seconds_left)
            order.append(chosen.name)
            chosen.rounds = chosen.rounds + [[]]
            chosen.last_started = float(clock)
        return order
    assert choices(1000.0) == ["cheap", "dear"] * 4   # 40 s needed of 1,000: turns
    assert choices(35.0) == ["cheap"] * 8             # 40 s needed of 35: cheapest first


def test_a_phase_plans_inside_its_target_for_the_intervals_larger_side(tmp_path, monkeypatch):
    # The plan predicts a log-symmetric half-width; a ratio resolves on its interval's
    # larger side, up to 18% wider. So the phase asks the plan for PLAN_AIM of the target.
    from kvlab.running import alternating
    assert 0.8 <= alternating.PLAN_AIM < 1.0
    seen = []
    monkeypatch.setattr(alternating.budget_plan, "plan",
                        lambda inputs, left, target, *rest: seen.append(target) or {})
    phase = alternating.AlternatingPhase(fake_host(tmp_path, []), [], tmp_path)
    phase.make_plan(math.inf, 0.02, 10, 60)
    assert seen == [pytest.approx(0.02 * alternating.PLAN_AIM)]
    # what that buys: at ±2.5% a start, 10 starts are predicted ±1.8% (the larger side
    # may then be ±2.1%); aiming at ±1.7% plans 11
    var = math.log1p(0.025) ** 2
    assert budget_plan.rounds_for(var, 0.02, 10, 60) < \
        budget_plan.rounds_for(var, 0.02 * alternating.PLAN_AIM, 10, 60)


def test_a_ratio_short_of_its_target_is_told_the_seconds_the_plans_rule_gives():
    # a start varies ±3% (between starts alone): 10 starts predict about ±2.2%; ±2% takes
    # rounds_for's answer, and each further start costs 2.5 s
    from kvlab.measures.stats import PairedSummary
    var = math.log1p(0.03) ** 2
    summary = PairedSummary(n=10, pairs=100, ratio=1.2, low=1.17, high=1.23, batches=10,
                            method="two-level", between_var=var, pair_var=0.0)
    wanted = budget_plan.rounds_for(var, 0.02, 10, 1000)
    assert wanted > 10
    assert budget_plan.seconds_to_target(summary, 0.02, 10, 2.5) == (wanted - 10) * 2.5
    # predicted within target but not there: at least one more start
    assert budget_plan.seconds_to_target(summary, 0.5, 10, 2.5) == 2.5
    # no variance yet (under 3 starts): not known
    few = PairedSummary(n=2, pairs=20, ratio=1.2, low=math.nan, high=math.nan, batches=2,
                        method="too few starts")
    assert math.isnan(budget_plan.seconds_to_target(few, 0.02, 10, 2.5))


def test_unstarted_seed_claims_keep_min_rounds_before_a_started_one_takes_more():
    # Run O of a default run: a started SET claim whose plan grew with its spread took 28
    # starts, and the plan, serving started claims whole first, left five claims out.
    # Now each unstarted claim's min_rounds are set aside first.
    wide = math.log1p(0.06) ** 2  # a start varies ±6%: 40 starts wanted
    quiet = 0.01 ** 2
    ratios = [PlanInput("started", True, 10, 1.0, wide),
              PlanInput("get1", True, 0, 1.0, math.nan),
              PlanInput("get2", True, 0, 1.0, math.nan)]
    plan = budget_plan.plan(ratios, 30.0, 0.02, 10, 40, prior_var=quiet)
    assert plan["get1"].measured and plan["get1"].rounds == 10
    assert plan["get2"].measured and plan["get2"].rounds == 10
    assert plan["started"].rounds == 20  # what is left after the two floors: 10 more
    # with time for only one floor, the one set aside is measured and the other is not
    plan = budget_plan.plan(ratios, 15.0, 0.02, 10, 40, prior_var=quiet)
    assert sorted(p.measured for k, p in plan.items() if k != "started") == [False, True]
    assert plan["started"].rounds == 15


def test_a_ratio_within_its_target_gets_no_more_starts_whatever_its_plan(tmp_path):
    # Run P: a seed claim at ±0.9% after 10 starts was planned 32 (its start variance said
    # so) and given them, while five claims went unmeasured.
    from kvlab.measures.alternation import Slice
    from kvlab.running import alternating
    from kvlab.schema.specs import CompareSpec, Point
    point = Point("s", "r", "kvlab-load", "tcp", "dedicated", "direct", "set", "", 10,
                  "uniform", 64, 16, 50, "on", 1, 0.3, 0.1, 1)
    rng = random.Random(3)

    def tight_round():  # ABBA slices, A twice B's rate, ±0.2%
        return [Slice(side, 0.1 * i, 0.1, round((2000 if side == 0 else 1000)
                                              * rng.uniform(0.998, 1.002)), 0.09, 0.02,
                      10.0, 20.0) for i, side in enumerate((0, 1, 1, 0) * 2)]
    done, fresh = (alternating.Pair(CompareSpec(name, "server", "r", "r", seed_ratio=1.1),
                                    "set", "p", point, point) for name in ("done", "fresh"))
    done.rounds = [tight_round() for _ in range(10)]
    assert done.summary().half_width < 0.02
    phase = alternating.AlternatingPhase(fake_host(tmp_path, []), [done, fresh], tmp_path)
    phase.plan = {done.key: types.SimpleNamespace(rounds=32, measured=True),
                  fresh.key: types.SimpleNamespace(rounds=10, measured=True)}
    assert phase._next_pair(0.02, 40, 10) is fresh
    fresh.rounds = [tight_round() for _ in range(10)]
    assert phase._next_pair(0.02, 40, 10) is None


# ---- a start's length from the ratio's own variance components ----------------------

def test_a_start_that_differs_from_the_next_is_as_short_as_allowed():
    # A run's million-key SET claims: starts ±7% apart, slices ±1% over a second, 1 s of
    # processes a start. min_rounds cannot reach ±1.7% (the target inside PLAN_AIM) at
    # any length, and the unconstrained best (0.13 s) is below the shortest.
    pair_var = 0.01 ** 2 / (5 * 0.1 * 2)  # ±1% over one second at 5 pairs a second
    length = budget_plan.start_seconds(0.07 ** 2, pair_var, 5.0, 1.0, 0.017, 10, 0.8, 4.0)
    assert length == 0.8


def test_min_rounds_that_reach_the_target_make_a_start_no_longer_than_needed():
    # No start effect, noisy slices (±5% a pair): the best length is unbounded, but
    # min_rounds of 0.90 s starts already reach ±1.7%, and a longer start buys nothing
    # the ratio needs. The known answer: the start variance at that length is what
    # min_rounds starts allow, so the predicted half-width is the target exactly.
    pair_var = 0.05 ** 2
    length = budget_plan.start_seconds(0.0, pair_var, 5.0, 1.5, 0.017, 10, 0.8, 4.0)
    assert length == pytest.approx(0.9004, abs=1e-3)
    start_var = pair_var / (5.0 * length)
    assert budget_plan.predicted_half_width(start_var, 10) == pytest.approx(0.017, rel=1e-9)
    # a small start effect lengthens it, as the slices must make up for it
    assert budget_plan.start_seconds(0.005 ** 2, pair_var, 5.0, 1.5, 0.017, 10, 0.8, 4.0) \
        == pytest.approx(pair_var / 5.0 / (10 * (math.log1p(0.017) / 2.262157) ** 2
                                            - 0.005 ** 2), rel=1e-3)
    # clamped: slices so noisy that min_rounds would need 32 s starts take the longest
    assert budget_plan.start_seconds(0.0, 0.3 ** 2, 5.0, 1.5, 0.017, 10, 0.8, 4.0) == 4.0


def test_where_min_rounds_cannot_reach_the_target_the_best_length_per_second_wins():
    # between ±3%, pairs ±5%, 1.5 s a start: stats.best_start_seconds's 0.913 s
    assert budget_plan.start_seconds(0.03 ** 2, 0.05 ** 2, 5.0, 1.5, 0.017, 10, 0.8, 4.0) \
        == pytest.approx(0.913, abs=1e-3)
    assert math.isnan(budget_plan.start_seconds(math.nan, 0.05 ** 2, 5.0, 1.5, 0.017, 10,
                                                0.8, 4.0))


def _fake_kvlab_load_of_duration(rng: random.Random, clock: list[float], overhead_s: float,
                                 between_sd: float, slice_sd: float, lengths: list[float],
                                 aa_between_sd: float | None = None):
    """subprocess.run for an alternation round that honours --duration: `overhead_s` plus
    the duration on the fake clock, ABBA slices of 0.1 s for the duration, side a off side
    b by a start effect (log SD between_sd; aa_between_sd for the first 10 rounds, the
    A/A's) and each slice by slice_sd."""
    def fake_run(command, **kwargs):
        duration = float(command[command.index("--duration") + 1])
        lengths.append(duration)
        clock[0] += overhead_s + duration
        first_ten = aa_between_sd is not None and len(lengths) <= 10
        effect = rng.gauss(0, aa_between_sd if first_ten else between_sd)
        slices = []
        for i in range(int(round(duration / 0.1))):
            side = 0 if i % 4 in (0, 3) else 1
            ops = 1000 * math.exp((effect if side == 0 else 0) + rng.gauss(0, slice_sd))
            slices.append({"index": i, "side": side, "start_s": 0.1 * i, "seconds": 0.1,
                           "ops": int(ops), "server_cpu_s": 0.08, "client_cpu_s": 0.02,
                           "mean_us": 10, "p99_us": 20})
        Path(command[command.index("--json") + 1]).write_text(json.dumps(
            {"status": "complete", "disturbed": False, "allowed_cores": 1, "slices": slices}))
        return types.SimpleNamespace(returncode=0, stdout="", stderr="")
    return fake_run


@pytest.mark.parametrize("between_sd, slice_sd, aa_between_sd, expected", [
    (0.07, 0.01, None, 0.8), (0.0, 0.001, None, 0.8), (0.002, 0.04, None, 1.2),
    (0.002, 0.04, 0.05, 0.8)])
def test_a_phase_gives_a_ratio_starts_of_the_length_its_own_starts_say(
        tmp_path, monkeypatch, between_sd, slice_sd, aa_between_sd, expected):
    # The A/A keeps the experiment's 2 s (the machine's noise at that length); a declared
    # ratio's first three starts too, then the length budget_plan.start_seconds gives its
    # own components: the shortest where starts differ (±7%) or where nothing is noisy,
    # longer where the slices are the noise and min_rounds must make up for it; but not
    # on a machine whose A/A starts differ by 5% (the floor of every ratio's).
    from kvlab.running import alternating
    clock, lengths, said = [0.0], [], []
    runner = fake_host(tmp_path, said, alternation_s=2.0)
    monkeypatch.setattr(alternating.subprocess, "run", _fake_kvlab_load_of_duration(
        random.Random(11), clock, 1.0, between_sd, slice_sd, lengths, aa_between_sd))
    monkeypatch.setattr(alternating, "time", types.SimpleNamespace(monotonic=lambda: clock[0]))
    aa, seed = _phase_pair("A/A r", calibration=True), _phase_pair("seed", 1.1)
    phase = alternating.AlternatingPhase(runner, [aa, seed], tmp_path)
    phase.run(400.0, 0.02, 40, 10)
    assert aa.lengths == [2.0] * len(aa.rounds) and lengths[:10] == [2.0] * 10
    assert seed.lengths[:3] == [2.0] * 3 and len(seed.rounds) >= 10
    # what kvlab-load was asked is what the pair recorded
    assert lengths[10:] == seed.lengths
    later = seed.lengths[3:]
    assert later and all(n == pytest.approx(later[-1]) for n in later[len(later) // 2:])
    assert later[-1] == pytest.approx(expected), seed.lengths
    assert any(f"starts of {later[0]:g} s from now" in s for s in said), said
    # the plan costs the next start at its new length: what a start took beyond its
    # alternating (1 s here) plus that length
    assert seed.round_seconds() == pytest.approx(1.0 + later[-1])


def test_the_time_section_says_which_ratios_took_starts_of_their_own_length():
    from kvlab.rendering.report_ratios import time_section
    spent = {"alternation_s": 2.0, "slice_s": 0.1, "min_rounds": 10, "rounds_spent_s": 600,
             "spent_s": {"local": 300.0}, "plan": {},
             "pairs": [{"comparison": "A/A r", "test": "set", "rounds": 10, "spent_s": 28.0,
                        "calibration": True, "start_lengths_s": [2.0] * 10},
                       {"comparison": "c/s", "test": "set", "rounds": 12, "spent_s": 24.0,
                        "start_lengths_s": [2.0] * 3 + [0.8] * 9}]}
    text = time_section({"alternation": spent})
    assert "a declared ratio's later ones as long as its own starts said" in text
    assert "- c/s SET: 24 s, 12 rounds (starts of 2 s, 0.8 s in turn)" in text
    assert "- A/A r SET: 28 s, 10 rounds\n" in text + "\n"
    for pair in spent["pairs"]:
        pair["start_lengths_s"] = [2.0] * pair["rounds"]
    assert "later ones" not in time_section({"alternation": spent})


def test_the_a_over_a_start_effect_is_the_floor_of_a_ratios(tmp_path):
    # A ratio whose three starts agree (between 0) and whose pairs of slices vary by
    # 4.4e-3: on its own figures min_rounds of 1.6 s starts reach ±1.7% (w / allowed =
    # 0.88e-3 / 0.555e-3 = 1.59 s). On a machine where a server and its own copy differ
    # by 4% from start to start, min_rounds cannot reach it at any length, and the best
    # length per second is sqrt(1.0 s * 0.88e-3 / 1.6e-3) = 0.74 s: 0.8 s.
    from kvlab.measures.stats import PairedSummary
    from kvlab.running import alternating
    said: list[str] = []
    aa, pair = _phase_pair("A/A r", calibration=True), _phase_pair("seed", 1.1)
    pair.rounds, pair.seconds, pair.lengths = [[]] * 3, [3.0] * 3, [2.0] * 3
    pair.summary = lambda metric=None: PairedSummary(3, 30, 2.0, 1.9, 2.1, 6, "two-level",
                                                     0.0, 4.4e-3)
    phase = alternating.AlternatingPhase(fake_host(tmp_path, said, alternation_s=2.0),
                                         [aa, pair], tmp_path)
    phase._choose_length(pair, 0.02, 10)
    assert pair.next_length == 1.6, said
    aa.rounds = [[]] * 10
    aa.summary = lambda metric=None: PairedSummary(10, 100, 1.0, 0.97, 1.03, 20, "two-level",
                                                   0.04 ** 2, 1e-3)
    phase._choose_length(pair, 0.02, 10)
    assert pair.next_length == 0.8, said
    assert said[-1].endswith("starts of 0.8 s from now (between starts ±4.0%, its slices "
                             "±3.0% over a second, 1.0 s a start beyond its alternating)")
