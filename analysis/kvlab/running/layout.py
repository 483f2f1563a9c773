"""A fresh start's address layout, randomized on purpose and recorded.

A binary's speed can depend on where its code, stack and heap land (Mytkowicz et al.,
ASPLOS 2009): the environment's size alone moves the main thread's stack, and with it
which of its hot words alias heap data in the caches and the store buffer (4K
aliasing: addresses equal modulo 4096). A comparison that starts its servers the same
way every time samples one layout; kvlab varies it between starts instead, so that a
layout's effect is spread over the starts and found (measures/modes.py) rather than
baked into a ratio:

- ASLR stays on (the kernel's randomize_va_space; a start records it and whether its
  process runs without it, as under `setarch -R`): it places the executable, the
  libraries, the heap, the thread stacks and mappings at random pages, and the main
  stack at a random 16-byte offset;
- each start's environment carries KVLAB_LAYOUT_PAD, a random number of bytes
  (0..PAD_MAX_BYTES - 1), which moves the main stack (and the auxiliary vector
  above it) by that much: the cheap, documented lever on stack alignment
  (Mytkowicz et al.'s), which also works where ASLR is off.

What else could vary (link order, heap offsets) needs a relinked binary or a
preloaded allocator: not done; the padding and ASLR reach the stack and every page
offset. A start's fingerprint records what explains its mode: the padding read back
from /proc/PID/environ, ASLR, transparent huge pages, the cache line, and the
engine's hot structures' addresses modulo 4096 where the server reports them (INFO's
`layout_*` fields, kvlab-server's sharded engine).
"""

from __future__ import annotations

import functools
import os
import random
import subprocess
from pathlib import Path

PAD_VARIABLE = "KVLAB_LAYOUT_PAD"
PAD_MAX_BYTES = 4096
_PAD_RANDOM = random.SystemRandom()


def layout_env(base: dict[str, str] | None = None,
               pad: int | None = None) -> tuple[dict[str, str], int]:
    """The environment for a fresh start: `base` (default: this process's) with
    KVLAB_LAYOUT_PAD set to a random run of bytes; and the padding's length."""
    env = dict(os.environ if base is None else base)
    size = _PAD_RANDOM.randrange(PAD_MAX_BYTES) if pad is None else pad
    env[PAD_VARIABLE] = "x" * size
    return env, size


def environ_pad(pid: int) -> int | None:
    """The padding a running process got, read back from /proc/PID/environ (None: not
    readable, or no padding: redis-server writes its process title over its
    environment, so its padding cannot be read back)."""
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return None
    prefix = PAD_VARIABLE.encode() + b"="
    for entry in raw.split(b"\0"):
        if entry.startswith(prefix):
            return len(entry) - len(prefix)
    return None


def _read(path: str) -> str:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return ""


def transparent_hugepages() -> str:
    """The selected setting of /sys/kernel/mm/transparent_hugepage/enabled ('madvise')."""
    text = _read("/sys/kernel/mm/transparent_hugepage/enabled")
    for word in text.split():
        if word.startswith("["):
            return word.strip("[]")
    return text or "unknown"


@functools.lru_cache(maxsize=1)
def cache_line_bytes() -> int | None:
    """The L1 data cache's line, from sysfs, else `getconf LEVEL1_DCACHE_LINESIZE`
    (glibc asks CPUID; sysfs has no cache folder in some VMs)."""
    text = _read("/sys/devices/system/cpu/cpu0/cache/index0/coherency_line_size")
    if not text.isdigit():
        try:
            text = subprocess.run(["getconf", "LEVEL1_DCACHE_LINESIZE"], capture_output=True,
                                  text=True, timeout=5).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            return None
    return int(text) if text.isdigit() and int(text) > 0 else None


def randomized(pid: int) -> bool | None:
    """Whether the process runs with ASLR: the kernel's setting is on and the process's
    personality lacks ADDR_NO_RANDOMIZE (0x0040000, what `setarch -R` sets)."""
    system = _read("/proc/sys/kernel/randomize_va_space")
    personality = _read(f"/proc/{pid}/personality")
    if not system or not personality:
        return None
    return system != "0" and not int(personality, 16) & 0x0040000


def fingerprint(pid: int, info: dict[str, str] | None = None) -> dict[str, object]:
    """What a start's layout was: padding, ASLR, THP, cache line, and the engine's hot
    addresses modulo 4096 (`info`: INFO's fields; those named layout_*)."""
    record: dict[str, object] = {
        "env_pad": environ_pad(pid), "aslr": randomized(pid),
        "thp": transparent_hugepages(), "cache_line": cache_line_bytes()}
    for name, value in sorted((info or {}).items()):
        if name.startswith("layout_"):
            record[name] = value
    return record


def maps_bases(pid: int) -> dict[str, str]:
    """Where the pages landed (what ASLR moves): the lowest address of the executable,
    libc, libstdc++, the heap and the main stack, from /proc/PID/maps ({} unreadable)."""
    bases: dict[str, str] = {}
    try:
        lines = Path(f"/proc/{pid}/maps").read_text().splitlines()
    except OSError:
        return bases
    executable = None
    for line in lines:
        fields = line.split()
        if len(fields) < 6:
            continue
        start, path = fields[0].split("-")[0], fields[5]
        name = Path(path).name
        if executable is None and path.startswith("/"):
            executable = path
        key = ("executable" if path == executable else "libc" if name.startswith("libc.so")
               else "libstdc++" if name.startswith("libstdc++") else path.strip("[]")
               if path in ("[heap]", "[stack]") else None)
        if key and key not in bases:
            bases[key] = "0x" + start
    return bases
