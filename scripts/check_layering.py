#!/usr/bin/python3
"""Fails on an #include that points up the layer table.

Every C/C++ source of the tree belongs to a layer: the longest folder of
LAYERS its path starts with ("engines/calls/glob.cc" is in engines/calls,
"harness/clients/x.cc" in harness). A layer may include headers of its own
and of the layers LAYERS gives it, nothing else: "dependencies only point
down" (README.md, "Layout"). "engines" in a list means that folder's
own files; "engines/**" means it and every sub-layer under it. Includes are
rooted at the source tree ("engines/engine.h"); one that names a file next
to the includer is resolved there first.

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

# layer -> the other layers its sources may include. Tests and the
# analysis package's bindings may use everything.
EVERYTHING = None
LAYERS: dict[str, frozenset[str] | None] = {
    "base": frozenset(),
    # The engines' sub-layers, bottom up (engines/CMakeLists.txt says what
    # each holds): the interface at the top of the folder, then each one
    # using only those before it.
    "engines": frozenset({"base"}),
    "engines/rules": frozenset({"base"}),
    "engines/threads": frozenset({"base", "engines"}),
    "engines/containers": frozenset({"base", "engines", "engines/rules"}),
    "engines/calls": frozenset({"base", "engines", "engines/rules", "engines/containers"}),
    "engines/keyspace": frozenset({"base", "engines", "engines/rules", "engines/containers",
                                   "engines/calls"}),
    "engines/kinds": frozenset({"base", "engines", "engines/rules", "engines/threads",
                                "engines/containers", "engines/calls", "engines/keyspace"}),
    # The RESP shell without sockets, then the network side on top of it.
    # Both reach the engines through their interface and the shared rules,
    # never an engine's keyspace or a particular engine.
    "server": frozenset({"base", "engines", "engines/rules", "engines/threads",
                         "engines/containers", "engines/calls"}),
    "server/net": frozenset({"base", "engines", "engines/rules", "engines/threads",
                             "engines/containers", "engines/calls", "server"}),
    "harness": frozenset({"base"}),
    "link": frozenset({"base"}),
    # The microbenchmarks measure engines and the server, and also the
    # harness's latency histogram, Zipf sampler and RESP encoding
    # (micro/CMakeLists.txt).
    "micro": frozenset({"base", "engines/**", "server/**", "harness"}),
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


def layer_of(path: str) -> str | None:
    """The longest folder of LAYERS that `path` ('/'-separated) lies in."""
    parts = path.split("/")[:-1]
    for depth in range(len(parts), 0, -1):
        folder = "/".join(parts[:depth])
        if folder in LAYERS:
            return folder
    return None


def may_use(allowed: frozenset[str], target: str) -> bool:
    for entry in allowed:
        if entry == target:
            return True
        if entry.endswith("/**"):
            top = entry[:-3]
            if target == top or target.startswith(top + "/"):
                return True
    return False


def included_layer(root: Path, includer: str, kind: str, header: str) -> str | None:
    """The layer the included header belongs to; None for a system header."""
    if kind == '"':
        beside = Path(os.path.normpath((root / includer).parent / header))
        if beside.is_file() and beside.is_relative_to(root):
            return layer_of(beside.relative_to(root).as_posix())
    if "/" in header and header.split("/", 1)[0] in LAYERS:
        return layer_of(os.path.normpath(header))
    return None


def violations(root: Path) -> tuple[list[str], int]:
    root = root.resolve()
    problems: list[str] = []
    files = source_files(root)
    for path in files:
        if "/" not in path:
            problems.append(f"{path}: a source file outside every folder of the layer table")
            continue
        layer = layer_of(path)
        if layer is None:
            problems.append(f"{path}: folder {path.split('/', 1)[0]}/ is not in the layer table "
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
            if target is None or target == layer or may_use(allowed, target):
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
