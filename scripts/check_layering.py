#!/usr/bin/python3
"""Fails on an #include that points up the layer table.

Every C/C++ source of the tree belongs to the folder it sits in (its first
path component), and a folder may include headers of its own and of the
folders LAYERS gives it, nothing else: "dependencies only point down"
(README.md, "Layout"). Includes are rooted at the source tree
("engines/engine.h"); one that names a file next to the includer is
resolved there first.

  scripts/check_layering.py [ROOT]     (default: the tree this script is in)

Checks the files git tracks when ROOT is a git checkout, every source file
under ROOT (build folders left out) when it is not. Prints one line per
forbidden include, "FILE:LINE: includes HEADER: rule", and exits 1 if there
is any; exits 0 and says how many files it read otherwise.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

# folder -> the other folders its sources may include. Tests and the
# analysis package's bindings may use everything.
EVERYTHING = None
LAYERS: dict[str, frozenset[str] | None] = {
    "base": frozenset(),
    "engines": frozenset({"base"}),
    "server": frozenset({"base", "engines"}),
    "harness": frozenset({"base"}),
    "link": frozenset({"base"}),
    # The microbenchmarks measure engines and the server, and also the
    # harness's latency histogram, Zipf sampler and RESP encoding
    # (micro/CMakeLists.txt).
    "micro": frozenset({"base", "engines", "server", "harness"}),
    "analysis": EVERYTHING,
    "tests": EVERYTHING,
}

SOURCE_SUFFIXES = {".h", ".hh", ".hpp", ".c", ".cc", ".cpp", ".cxx", ".inc"}
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def source_files(root: Path) -> list[str]:
    """Paths relative to root, '/'-separated."""
    if (root / ".git").exists():
        listed = subprocess.run(["git", "-C", str(root), "ls-files", "-z"],
                                check=True, capture_output=True, text=True).stdout
        paths = [p for p in listed.split("\0") if p]
    else:
        paths = []
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if not d.startswith((".", "build")))
            rel = Path(folder).relative_to(root)
            paths += [(rel / f).as_posix() for f in sorted(files)]
    return [p for p in paths if Path(p).suffix in SOURCE_SUFFIXES]


def included_layer(root: Path, includer: str, kind: str, header: str) -> str | None:
    """The folder the included header belongs to; None for a system header."""
    if kind == '"':
        beside = Path(os.path.normpath((root / includer).parent / header))
        if beside.is_file() and beside.is_relative_to(root):
            return beside.relative_to(root).parts[0]
    first = header.split("/", 1)[0]
    if "/" in header and first in LAYERS:
        return first
    return None


def violations(root: Path) -> tuple[list[str], int]:
    root = root.resolve()
    problems: list[str] = []
    files = source_files(root)
    for path in files:
        layer = path.split("/", 1)[0]
        if "/" not in path:
            problems.append(f"{path}: a source file outside every folder of the layer table")
            continue
        if layer not in LAYERS:
            problems.append(f"{path}: folder {layer}/ is not in the layer table "
                            "(scripts/check_layering.py LAYERS)")
            continue
        allowed = LAYERS[layer]
        if allowed is EVERYTHING:
            continue
        text = (root / path).read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), start=1):
            match = INCLUDE.match(line)
            if not match:
                continue
            target = included_layer(root, path, match.group(1), match.group(2))
            if target is None or target == layer or target in allowed:
                continue
            may = ", ".join(sorted(allowed)) or "nothing of ours"
            problems.append(f"{path}:{number}: includes {match.group(2)}: "
                            f"{layer} may not depend on {target} ({layer} may use: {may})")
    return problems, len(files)


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent.parent
    problems, count = violations(root)
    for problem in problems:
        print(problem)
    if problems:
        print(f"check_layering: {len(problems)} forbidden include(s) in {root}")
        return 1
    if count == 0:
        print(f"check_layering: no C/C++ sources found under {root}")
        return 1
    print(f"check_layering: {count} files, every include points down")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
