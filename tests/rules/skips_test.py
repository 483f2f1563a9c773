"""Known answers of tests/skips.cmake: configures the throwaway CTest
project tests/rules/skips/ and checks what CTest calls each of its tests.

  skips_test.py CMAKE CTEST PYTHON SOURCE_ROOT
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

EXPECTED = {
    "pytest.all_skipped": "Skipped",
    "pytest.passed_and_skipped": "Skipped",  # passing tests beside it must not hide a skip
    "pytest.passed": "Passed",
    "pytest.failed_and_skipped": "Failed",
    "pytest.error_and_skipped": "Failed",
    "gtest.whole_with_a_skip": "Failed",
    "gtest.whole_passed": "Passed",
}
LINE = re.compile(r"Test +#\d+: (\S+) \.+[ *]*(Passed|Skipped|Failed)")


def main(argv: list[str]) -> int:
    cmake, ctest, python, root = argv[1:5]
    project = Path(root) / "tests" / "rules" / "skips"
    with tempfile.TemporaryDirectory() as build:
        subprocess.run([cmake, "-S", str(project), "-B", build, f"-DKVLAB_PYTHON={python}",
                        f"-DKVLAB_SOURCE_DIR={root}"], check=True, capture_output=True)
        run = subprocess.run([ctest, "--test-dir", build], capture_output=True, text=True)
    seen = dict(LINE.findall(run.stdout))
    wrong = [f"{name}: CTest says {seen.get(name, 'nothing')}, expected {status}"
             for name, status in EXPECTED.items() if seen.get(name) != status]
    for name, status in EXPECTED.items():
        print(f"{name}: {seen.get(name)}")
    for line in wrong:
        print(f"FAIL {line}")
    if wrong:
        print(run.stdout)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
