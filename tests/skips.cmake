# How CTest reports skips (included by tests/CMakeLists.txt, and by the
# known-answer project tests/rules/skips/ that checks these patterns).
# Skips: a test that GTEST_SKIPs or pytest.skips shows as Skipped, never as
# Passed. A GoogleTest binary whose cases may skip is registered one ctest
# per case (gtest_discover_tests marks a skipped case Skipped); one run as a
# whole cannot show one skipped case among passing ones (and a skip pattern
# would hide its failures), so there a skip fails: KVLAB_GTEST_NO_SKIP.
set(KVLAB_GTEST_NO_SKIP FAIL_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
# A pytest file in which any test skipped and none failed or erred shows as
# Skipped: its summary line is the skipped count, after the passed one if any
# ("3 skipped in 0.1s", "5 passed, 2 skipped, 1 warning in 2s"). Passing
# tests beside a skip must not make the file Passed, or the skip is hidden.
# A failure or an error beside a skip stays Failed: "1 failed" comes first
# in pytest's summary and "1 error" after the skips, so neither line matches
# (`-rs` prints the skips' reasons).
set(KVLAB_PYTEST_SKIPS
    SKIP_REGULAR_EXPRESSION "\n([0-9]+ passed, )?[0-9]+ skipped(, [0-9]+ (deselected|warnings?))* in ")
