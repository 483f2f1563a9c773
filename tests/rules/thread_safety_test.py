"""Known answers of clang's thread-safety analysis over base/mutex.h: the
snippet compiles (and runs) as written, and each planted mistake fails with
the analysis's own message.

  thread_safety_test.py CLANG++ SOURCE_ROOT FLAG...   (the flags of the
  clang build, KVLAB_THREAD_SAFETY_FLAGS in CMakeLists.txt)
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

SNIPPET = Path(__file__).resolve().parent / "thread_safety_snippet.cc"

# planted mistake -> what clang must say
BREAKS = {
    "KVLAB_BREAK_UNLOCKED_READ": "reading variable 'count_' requires holding mutex 'mutex_'",
    "KVLAB_BREAK_MISSING_REQUIRES": "calling function 'ReadLocked' requires holding mutex 'mutex_'",
    "KVLAB_BREAK_WRITE_UNDER_READER":
        "writing variable 'value_' requires holding shared_mutex 'mutex_' exclusively",
}


def compile_snippet(clang: str, root: str, flags: list[str], out: Path, *defines: str):
    command = [clang, "-std=c++20", f"-I{root}", *flags, *(f"-D{d}" for d in defines),
               str(SNIPPET), "-o", str(out), "-pthread"]
    return subprocess.run(command, capture_output=True, text=True)


def main(argv: list[str]) -> int:
    clang, root, flags = argv[1], argv[2], argv[3:]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        binary = Path(tmp) / "snippet"
        clean = compile_snippet(clang, root, flags, binary)
        if clean.returncode != 0:
            failures.append(f"the clean snippet does not compile:\n{clean.stderr}")
        elif subprocess.run([str(binary)]).returncode != 0:
            failures.append("the clean snippet compiled but returned non-zero")
        for define, message in BREAKS.items():
            broken = compile_snippet(clang, root, flags, binary, define)
            if broken.returncode == 0:
                failures.append(f"-D{define}: compiled; the analysis did not stop it")
            elif message not in broken.stderr:
                failures.append(f"-D{define}: failed without \"{message}\":\n{broken.stderr}")
            else:
                print(f"-D{define}: rejected: {message}")
    for failure in failures:
        print(f"FAIL {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
