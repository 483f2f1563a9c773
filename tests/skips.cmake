# How CTest reports skips (included by tests/CMakeLists.txt, and by the
# known-answer project tests/rules/skips/ that checks these patterns).
# Skips: a test that GTEST_SKIPs or pytest.skips shows as Skipped, never as
# Passed. A GoogleTest binary whose cases may skip is registered one ctest
# per case (gtest_discover_tests marks a skipped case Skipped); one run as a
# whole cannot show one skipped case among passing ones (and a skip pattern
# would hide its failures), so there a skip fails: KVLAB_GTEST_NO_SKIP.
set(KVLAB_GTEST_NO_SKIP FAIL_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
# A pytest file all of whose tests skipped: its summary line starts with the
# skipped count ("3 skipped in 0.1s"). One that also passed or failed
# something reports as that (`-rs` prints the skips' reasons).
set(KVLAB_PYTEST_ALL_SKIPPED
    SKIP_REGULAR_EXPRESSION "\n[0-9]+ skipped(, [0-9]+ (deselected|warnings?))* in ")
