"""Known answers of scripts/check_commit_messages.py on a throwaway
repository: well-formed commits and a body-less merge pass; a long subject,
a missing body or a shallow history fail, naming the commits."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

CHECKER = Path(__file__).resolve().parents[2] / "scripts" / "check_commit_messages.py"
ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
       "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org",
       "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, env=ENV,
                          capture_output=True, text=True).stdout.strip()


def commit(repo: Path, message: str) -> str:
    (repo / "file").write_text((repo / "file").read_text() + "x\n")
    git(repo, "add", "file")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path):
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "file").write_text("")
    base = commit(tmp_path, "x" * 100)  # before the rule: not checked
    git(tmp_path, "tag", "base")
    assert base
    return tmp_path


def check(repo: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(CHECKER), "--repo", str(repo),
                           "--since", "base", *extra], capture_output=True, text=True)


def test_well_formed_commits_pass(repo):
    commit(repo, "s" * 72 + "\n\nA body that says what and why.")
    commit(repo, "Short subject\n\nBody.")
    result = check(repo)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 commit(s) after base, all well formed" in result.stdout


def test_long_subject_fails_with_its_hash(repo):
    commit(repo, "Fine\n\nBody.")
    long = commit(repo, "s" * 73 + "\n\nBody.")
    result = check(repo)
    assert result.returncode == 1
    assert f"{long}: subject of 73 characters (at most 72)" in result.stdout
    assert result.stdout.count("subject of") == 1


def test_subject_without_a_blank_line_is_one_long_subject(repo):
    run_on = commit(repo, "First line of forty characters, roughly.\n"
                          "and a second one that git joins to it")
    result = check(repo)
    assert result.returncode == 1
    assert f"{run_on}: subject of" in result.stdout
    assert f"{run_on}: no body" in result.stdout


def test_missing_body_fails_with_its_hash(repo):
    bare = commit(repo, "Subject only")
    result = check(repo)
    assert result.returncode == 1
    assert f"{bare}: no body" in result.stdout


def test_merge_needs_no_body(repo):
    git(repo, "checkout", "-q", "-b", "side")
    commit(repo, "On the side\n\nBody.")
    git(repo, "checkout", "-q", "main")
    commit(repo, "On main\n\nBody.")
    git(repo, "merge", "-q", "--no-ff", "-m", "Merge side", "side")
    result = check(repo)
    assert result.returncode == 0, result.stdout
    assert "3 commit(s)" in result.stdout


def test_shallow_clone_fails_instead_of_passing(repo, tmp_path_factory):
    commit(repo, "Fine\n\nBody.")
    clone = tmp_path_factory.mktemp("shallow") / "clone"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo}", str(clone)],
                   check=True, env=ENV, capture_output=True)
    result = subprocess.run([sys.executable, str(CHECKER), "--repo", str(clone),
                             "--since", git(repo, "rev-parse", "base")],
                            capture_output=True, text=True)
    assert result.returncode != 0
    assert "shallow clone" in result.stderr
