"""Where a run happened: the facts a result needs to be reproduced (meta.json's "machine"),
and the machine's fingerprint: the few of those facts that decide whether two runs'
figures may be compared at all (see `fingerprint`)."""

from __future__ import annotations

import hashlib
import json
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


# x86 and Arm vector extensions, widest first: the first one the CPU lists is its level.
_VECTOR_LEVELS = ("avx512f", "avx2", "avx", "sse4_2", "sse2", "sve2", "sve", "asimd", "neon")


def vector_level(cpuinfo: str | None = None) -> str:
    """The widest vector extension /proc/cpuinfo (or the given text of it) lists
    ("avx512f", "avx2", ..., "asimd"), or "unknown"."""
    text = cpuinfo
    if text is None:
        try:
            text = Path("/proc/cpuinfo").read_text()
        except OSError:
            return "unknown"
    match = re.search(r"^(?:flags|Features)\s*:(.*)$", text, re.M)
    flags = set(match.group(1).split()) if match else set()
    return next((level for level in _VECTOR_LEVELS if level in flags), "unknown")


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
        "vector_level": vector_level(),
        "kernel": platform.release(),
        "os": _os_release(),
        "compiler": compiler_version(),
        "python": platform.python_version(),
        "packages": package_versions(),
        "git": git_state(repo),
    }


MOUNTINFO = Path("/proc/self/mountinfo")
# Filesystems held in memory: an fsync there writes nothing to a device.
MEMORY_FILESYSTEMS = ("tmpfs", "ramfs")


def _unescape(field: str) -> str:
    """A mountinfo path with its octal escapes (\\040 for a space) decoded."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def folder_disk(folder: Path, mountinfo: str | None = None) -> dict[str, str]:
    """Where `folder` is stored, from /proc/self/mountinfo (or the given text of it): the
    mount that holds it (the longest mount point above it), its device ("/dev/vda"), the
    device's major:minor and the filesystem type ("ext4", "tmpfs"). "unknown" for what
    cannot be read. The folder need not exist yet."""
    path, missing = Path(folder).absolute(), []
    while not path.exists() and path != path.parent:  # links resolved where they exist
        missing.insert(0, path.name)
        path = path.parent
    path = path.resolve().joinpath(*missing)
    best: dict[str, str] = {}
    try:
        text = mountinfo if mountinfo is not None else MOUNTINFO.read_text()
    except OSError:
        text = ""
    for line in text.splitlines():
        before, _, after = line.partition(" - ")
        fields, tail = before.split(), after.split()
        if len(fields) < 5 or len(tail) < 2:
            continue
        mount_point = _unescape(fields[4])
        inside = path == Path(mount_point) or Path(mount_point) in path.parents
        # A later mount on the same point hides an earlier one: >= keeps the last.
        if inside and len(mount_point) >= len(best.get("mount_point", "")):
            best = {"mount_point": mount_point, "device": _unescape(tail[1]),
                    "major_minor": fields[2], "fstype": tail[0]}
    unknown = {"mount_point": "unknown", "device": "unknown", "major_minor": "unknown",
               "fstype": "unknown"}
    return {"folder": str(folder), **(best or unknown)}


def _os_release() -> str | None:
    try:
        text = Path("/etc/os-release").read_text()
    except OSError:
        return None
    match = re.search(r'^PRETTY_NAME="?([^"\n]*)"?', text, re.M)
    return match.group(1) if match else None


# What makes two machines' figures comparable. The hostname is left out on purpose
# (identical VMs are one machine for this purpose); the kernel and compiler are in,
# because either can move a figure by more than the effects kvlab measures.
FINGERPRINT_FIELDS = ("cpu_model", "cores", "vector_level", "kernel", "compiler")


def fingerprint(machine: dict) -> dict[str, object]:
    """{"id": short stable id, and the FINGERPRINT_FIELDS} of a describe_machine() result
    (as stored in a run's meta.json). A field the record lacks (older runs had no
    vector_level) is "unknown", which is part of the id: such a run never joins the series
    of a run that knows the field.

    The id reads "<cpu words>-<cores>c-<8 hex digits of a SHA-256 of the fields>", e.g.
    "intel-xeon-2c-1a2b3c4d": readable in a folder name, and unique per field set."""
    fields = {name: (machine.get(name) if machine.get(name) not in (None, "") else "unknown")
              for name in FINGERPRINT_FIELDS}
    digest = hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:8]
    return {"id": f"{_cpu_words(str(fields['cpu_model']))}-{fields['cores']}c-{digest}", **fields}


# Words of a CPU model name that say nothing about which CPU it is.
_NOISE_WORDS = {"r", "tm", "cpu", "processor", "core", "with", "radeon", "graphics"}


def _cpu_words(model: str) -> str:
    model = re.sub(r"@.*$|\b\d+-core\b", "", model.lower())  # clock speed, core count
    words = [w for w in re.split(r"[^a-z0-9]+", model) if w and w not in _NOISE_WORDS]
    return "-".join(words)[:32].strip("-") or "cpu"
