"""Known answers of scripts/check_layering.py: a clean tree passes, and every
forbidden include (planted in a synthetic tree, or in a copy of this one)
fails with the file, the line and the rule it breaks."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[2]
CHECKER = SOURCE / "scripts" / "check_layering.py"

sys.path.insert(0, str(CHECKER.parent))
import check_layering  # noqa: E402


def run(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(CHECKER), str(root)],
                          capture_output=True, text=True)


def write(root: Path, path: str, text: str) -> None:
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text(text)


def header(layer: str) -> str:
    """The one header clean_tree puts in `layer`: engines/calls -> engines/calls/calls.h."""
    return f"{layer}/{layer.rsplit('/', 1)[-1]}.h"


def clean_tree(root: Path) -> None:
    """One header per layer, each including what it may."""
    for layer in check_layering.LAYERS:
        write(root, header(layer), "#pragma once\n#include <string>\n")
    write(root, "engines/engine.cc", '#include "engines/engines.h"\n#include "base/base.h"\n')
    write(root, "engines/sub/inner.cc", '#include "../engines.h"\n')
    write(root, "engines/kinds/kind.cc",
          '#include "engines/keyspace/keyspace.h"\n#include "engines/threads/threads.h"\n'
          '#include "engines/calls/calls.h"\n#include "engines/engines.h"\n')
    write(root, "engines/calls/call.cc",
          '#include "../containers/containers.h"\n#include "engines/rules/rules.h"\n')
    write(root, "server/session.cc",
          '#include "server/server.h"\n#include "engines/engines.h"\n#include "base/base.h"\n'
          '#include "engines/calls/calls.h"\n')
    write(root, "server/net/listener.cc",
          '#include "server/server.h"\n#include "server/net/net.h"\n')
    write(root, "harness/client.cc", '#include "harness/harness.h"\n#include "base/base.h"\n')
    write(root, "harness/clients/pool.cc", '#include "harness/harness.h"\n')
    write(root, "micro/bench.cc",
          '#include "engines/kinds/kinds.h"\n#include "server/net/net.h"\n')
    write(root, "tests/all_test.cc",
          "".join(f'#include "{header(layer)}"\n' for layer in check_layering.LAYERS))
    write(root, "analysis/module.cc", '#include "harness/harness.h"\n')


# (includer's layer, the layer it must not include): README "Layout", and
# the engines' and the server's sub-layers (engines/CMakeLists.txt).
FORBIDDEN = [
    ("engines", "server"), ("engines", "harness"),
    ("server", "harness"),
    ("harness", "engines"), ("harness", "server"),
    ("base", "engines"), ("base", "server"), ("base", "harness"), ("base", "link"),
    ("link", "engines"), ("link", "server"), ("link", "harness"),
    ("engines", "engines/calls"), ("engines/rules", "engines"),
    ("engines/rules", "engines/threads"), ("engines/containers", "engines/calls"),
    ("engines/calls", "engines/keyspace"), ("engines/keyspace", "engines/kinds"),
    ("engines/threads", "engines/keyspace"), ("engines/kinds", "server"),
    ("server", "server/net"), ("server", "engines/kinds"), ("server", "engines/keyspace"),
    ("server/net", "engines/kinds"), ("server/net", "harness"),
]


def test_clean_synthetic_tree_passes(tmp_path):
    clean_tree(tmp_path)
    result = run(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "every include points down" in result.stdout


@pytest.mark.parametrize("layer,target", FORBIDDEN)
def test_forbidden_include_fails_naming_file_and_rule(tmp_path, layer, target):
    clean_tree(tmp_path)
    write(tmp_path, f"{layer}/planted.cc",
          f'#include "{header(layer)}"\n#include "{header(target)}"\n')
    result = run(tmp_path)
    assert result.returncode == 1
    assert f"{layer}/planted.cc:2: includes {header(target)}: " \
           f"{layer} may not depend on {target}" in result.stdout


def test_angle_bracket_and_relative_includes_count(tmp_path):
    clean_tree(tmp_path)
    write(tmp_path, "server/angle.cc", "#include <harness/harness.h>\n")
    write(tmp_path, "engines/rules/up.cc", '#include "../calls/calls.h"\n')
    write(tmp_path, "engines/sub/up.cc", '#  include "../../server/server.h"\n')
    result = run(tmp_path)
    assert result.returncode == 1
    assert "server/angle.cc:1: includes harness/harness.h: server may not depend on harness" \
        in result.stdout
    assert "engines/sub/up.cc:1: includes ../../server/server.h: " \
           "engines may not depend on server" in result.stdout
    assert "engines/rules/up.cc:1: includes ../calls/calls.h: " \
           "engines/rules may not depend on engines/calls" in result.stdout


def test_unknown_folder_fails(tmp_path):
    clean_tree(tmp_path)
    write(tmp_path, "newlayer/thing.cc", '#include "engines/engines.h"\n')
    result = run(tmp_path)
    assert result.returncode == 1
    assert "newlayer/thing.cc: folder newlayer/ is not in the layer table" in result.stdout


def test_empty_tree_fails(tmp_path):
    assert run(tmp_path).returncode == 1


def test_planted_include_in_a_copy_of_this_tree_fails(tmp_path):
    """A copy of the tracked sources passes; one forbidden line makes it fail."""
    listed = subprocess.run(["git", "-C", str(SOURCE), "ls-files", "-z"],
                            check=True, capture_output=True, text=True).stdout
    copied = 0
    for rel in filter(None, listed.split("\0")):
        if Path(rel).suffix in check_layering.SOURCE_SUFFIXES:
            (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(SOURCE / rel, tmp_path / rel)
            copied += 1
    assert copied > 100
    clean = run(tmp_path)
    assert clean.returncode == 0, clean.stdout

    engine_h = tmp_path / "engines" / "engine.h"
    lines = engine_h.read_text().splitlines(keepends=True)
    lines.insert(1, '#include "server/session.h"\n')
    engine_h.write_text("".join(lines))
    planted = run(tmp_path)
    assert planted.returncode == 1
    assert "engines/engine.h:2: includes server/session.h: engines may not depend on server" \
        in planted.stdout

    # A sub-layer's rule holds in the real tree too: a rule of Redis's may not
    # reach up to the engines that use it.
    engine_h.write_text("".join(lines[:1] + lines[2:]))
    glob_h = tmp_path / "engines" / "rules" / "glob.h"
    glob_h.write_text(glob_h.read_text() + '#include "engines/kinds/sharded_engine.h"\n')
    planted = run(tmp_path)
    assert planted.returncode == 1
    assert "includes engines/kinds/sharded_engine.h: engines/rules may not depend on " \
           "engines/kinds" in planted.stdout
