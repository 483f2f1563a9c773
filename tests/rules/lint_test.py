"""Known answers for scripts/lint (make lint): a clean scratch tree passes, and a planted
C++ file that .clang-format would change, or a Python file with an unused import, fails
naming the file."""

import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def run_lint(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(REPO / "scripts" / "lint"), str(root)],
                          capture_output=True, text=True, timeout=120)


def scratch(tmp_path: Path) -> Path:
    shutil.copy(REPO / ".clang-format", tmp_path / ".clang-format")
    (tmp_path / "good.cc").write_text("int Add(int a, int b) { return a + b; }\n")
    (tmp_path / "good.py").write_text("import os\n\nprint(os.sep)\n")
    return tmp_path


def test_clean_tree_passes(tmp_path: Path) -> None:
    result = run_lint(scratch(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 C++ and 1 Python files clean" in result.stdout


def test_misformatted_cxx_fails(tmp_path: Path) -> None:
    root = scratch(tmp_path)
    (root / "bad.cc").write_text("int  Sub(int a,int b){return a-b;}\n")
    result = run_lint(root)
    assert result.returncode == 1
    assert "bad.cc" in result.stderr
    assert "good.cc" not in result.stderr


def test_unused_import_fails(tmp_path: Path) -> None:
    root = scratch(tmp_path)
    (root / "bad.py").write_text("import json\n")
    result = run_lint(root)
    assert result.returncode == 1
    assert "bad.py" in result.stdout + result.stderr
    assert "'json' imported but unused" in result.stdout + result.stderr
