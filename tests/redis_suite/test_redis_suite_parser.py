"""scripts/redis-suite's transcript parser and counting, on a saved test_helper transcript
(sample_transcript.txt) whose outcomes are known."""

import importlib.machinery
import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPT = HERE.parent.parent / "scripts" / "redis-suite"


def load_runner():
    """scripts/redis-suite as a module (its file name has no .py)."""
    loader = importlib.machinery.SourceFileLoader("redis_suite", str(SCRIPT))
    spec = importlib.util.spec_from_loader("redis_suite", loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules["redis_suite"] = module  # dataclasses look their module up there
    loader.exec_module(module)
    return module


suite = load_runner()
EVENTS = suite.parse_transcript((HERE / "sample_transcript.txt").read_text())


def of_kind(kind):
    return [e for e in EVENTS if e.kind == kind]


def test_counts_each_outcome_once():
    # The end-of-run summary repeats both [err]s after "*** ": not counted again.
    assert {k: len(of_kind(k)) for k in ("ok", "err", "skip", "ignore", "block-err", "exception")} \
        == {"ok": 5, "err": 2, "skip": 1, "ignore": 3, "block-err": 1, "exception": 0}


def test_ok_names_lose_the_elapsed_time_and_colours():
    assert [e.name for e in of_kind("ok")] == [
        "INCR against non existing key", "INCR fails against key with spaces (left)",
        "DECRBY negation overflow", "INCRBYFLOAT decrement",
        "INCR fails against key with spaces (left)"]


def test_err_keeps_the_whole_first_line_of_the_error():
    first, second = of_kind("err")
    assert first.name == "SETBIT against non-existing key"
    # --durable cuts 10 characters off a non-assertion error; errorInfo has it whole.
    assert first.detail == "ERR unknown command 'setbit', with args beginning with: 'mykey' '1' '1'"
    assert second.name == "SETBIT with non-bit argument"
    assert second.detail == "Expected 'ERR unknown command 'setbit'' to match '*out of range*'"


def test_error_outside_a_test_is_a_block_error():
    (block,) = of_kind("block-err")
    assert block.detail == "ERR unknown command 'function', with args beginning with: 'flush'"


def test_ignores_carry_test_name_and_reason():
    assert [(e.name, e.detail) for e in of_kind("ignore")] == [
        ("INCR uses shared objects in the 0-9999 range", "Tag: needs:debug denied"),
        ("", "Tag: needs:repl denied"),
        ("EXPIRES after a reload", "Not supported on external server")]


def test_exception_stops_the_unit():
    events = suite.parse_transcript(
        "Testing unit/type/incr\n[ok]: A (1 ms)\n"
        "[exception]: Executing test client: ERR DB index is out of range.\n"
        "ERR DB index is out of range.\n    while executing\n")
    assert [e.kind for e in events] == ["ok", "exception"]
    assert suite.unit_abort(events) == "exception: ERR DB index is out of range."


def test_hung_test_fails_and_stops_the_unit():
    events = suite.parse_transcript(
        "[ok]: KEYS with pattern (0 ms)\n"
        "[TIMEOUT]: clients state report follows.\n"
        "sock55d5 => (IN PROGRESS) Regression for pattern matching long nested loops\n"
        "Killing still running Redis server 123\n")
    assert [(e.kind, e.name) for e in events] == [
        ("ok", "KEYS with pattern"),
        ("err", "Regression for pattern matching long nested loops"), ("timeout", "")]
    assert suite.unit_abort(events).startswith("timeout: ")


def test_summary_counts_against_the_reference_column():
    exclusions = suite.Exclusions(tags={"needs:debug": "DEBUG"})
    kvlab = suite.parse_transcript("[ok]: INCR against non existing key (0 ms)\n"
                                   "[ok]: INCR fails against key with spaces (left) (0 ms)\n")
    summary = suite.summarize({"redis": {"unit/type/incr": EVENTS},
                               "single": {"unit/type/incr": kvlab}},
                              ["unit/type/incr"], ["redis", "single"], exclusions)
    unit = summary["units"]["unit/type/incr"]
    # Tests the reference ran: 5 ok + 2 err, a repeated name counted twice.
    assert unit["tests"] == 7
    assert (unit["targets"]["redis"]["passed"], unit["targets"]["redis"]["total"]) == (5, 7)
    assert (unit["targets"]["single"]["passed"], unit["targets"]["single"]["total"]) == (2, 7)
    outcomes = [o["outcome"] for o in unit["targets"]["single"]["outcomes"]]
    assert outcomes.count("not-run") == 5
    assert unit["excluded"] == {"tag needs:debug: DEBUG": 1, "Tag: needs:repl denied": 1,
                                "Not supported on external server": 1,
                                "not selected (--only)": 1}


def test_gaps_group_the_engines_that_fail_a_test():
    reference = suite.parse_transcript("[ok]: A (0 ms)\n[ok]: B (0 ms)\n")
    fails_b = suite.parse_transcript(
        "[ok]: A (0 ms)\n[err]: B in tests/unit/x.tcl\nExpected '1' to equal or match '2'\n")
    stops = suite.parse_transcript("[exception]: Executing test client: ERR no\n")
    results = {"redis": {"unit/x": reference}, "single": {"unit/x": fails_b},
               "owner": {"unit/x": stops}}
    summary = suite.summarize(results, ["unit/x"], list(results), suite.Exclusions())
    assert suite.gaps(summary, list(results)).splitlines() == [
        "== unit/x",
        "   [owner] unit stopped, 2 tests not run: exception: ERR no",
        "   B  [single]",
        "        Expected '1' to equal or match '2'"]
