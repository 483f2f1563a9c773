"""Where a run happened: the facts a result needs to be reproduced (meta.json's "machine")."""

from __future__ import annotations

import os
import platform
import re
import subprocess
from pathlib import Path

# Debian packages whose versions change what a run measures.
TRACKED_PACKAGES = ("redis-server", "redis-tools", "libhiredis-dev", "libtbb-dev",
                    "libboost-dev", "g++", "python3-pandas", "python3-matplotlib")


def _run(args: list[str], cwd: Path | None = None) -> str | None:
    try:
        done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def package_versions() -> dict[str, str | None]:
    versions = {}
    for package in TRACKED_PACKAGES:
        versions[package] = _run(["dpkg-query", "-W", "-f=${Version}", package]) or None
    return versions


def compiler_version() -> str | None:
    first = _run(["c++", "--version"])
    return first.splitlines()[0] if first else None


def git_state(repo: Path) -> dict[str, object]:
    commit = _run(["git", "rev-parse", "HEAD"], cwd=repo)
    dirty = _run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=repo)
    return {"commit": commit, "dirty": bool(dirty)}


def describe_machine(repo: Path) -> dict[str, object]:
    return {
        "hostname": platform.node(),
        "cpu_model": cpu_model(),
        "cores": os.cpu_count(),
        "kernel": platform.release(),
        "os": _os_release(),
        "compiler": compiler_version(),
        "python": platform.python_version(),
        "packages": package_versions(),
        "git": git_state(repo),
    }


def _os_release() -> str | None:
    try:
        text = Path("/etc/os-release").read_text()
    except OSError:
        return None
    match = re.search(r'^PRETTY_NAME="?([^"\n]*)"?', text, re.M)
    return match.group(1) if match else None
