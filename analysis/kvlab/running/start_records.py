"""starts.csv: every fresh server start of the alternation phase, with its layout's
fingerprint (layout.py), so that a side whose starts fall into modes can be explained.

One row per server start of a measured round (a round's side a and side b; one process
for a comparison along anything but the server, whose two sides then share its row's
fingerprint): the comparison, test, point, round and side it served, whether the round
was kept, and the fingerprint read while the process runs: its environment padding
read back, ASLR, transparent huge pages, the cache line, the engine's hot addresses
modulo 4096 (kvlab-server's INFO kvlab `layout_*` fields, as `name=value;...`) and where
its pages landed (/proc/PID/maps, `bases`), and, where a start launches two servers,
whether this one was launched first or second (`launched`, 1 or 2: drawn at random for
every start). A server on another host, or one whose pid is not known, gets an empty
fingerprint (`launched` is kept even there).

Not thread-safe; the alternation phase writes it from its one thread.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Protocol, Sequence

from .layout import fingerprint, maps_bases
from ..schema.specs import ServerSpec
from .servers import info_unix

START_COLUMNS = ("comparison", "test", "point", "calibration", "round", "side", "server",
                 "kept", "env_pad", "aslr", "thp", "cache_line", "layout", "bases", "launched")


class StartedServer(Protocol):
    spec: ServerSpec

    @property
    def pid(self) -> int | None: ...

    @property
    def control(self) -> object: ...


def start_fingerprint(process: StartedServer) -> dict[str, object]:
    """A running process's fingerprint: layout.fingerprint's fields (the `layout_*` ones
    flat, from INFO kvlab of a kvlab-server) and `bases`; {} when it cannot be read here."""
    pid = getattr(process, "pid", None)
    if pid is None or getattr(process, "host", None) is not None:
        return {}
    info = {}
    if process.spec.kind == "kvlab" and isinstance(process.control, str):
        info = info_unix(process.control, "kvlab")
    return {**fingerprint(pid, info), "bases": maps_bases(pid)}


def _joined(fields: dict[str, object]) -> str:
    return ";".join(f"{name}={value}" for name, value in sorted(fields.items()))


def start_row(names: Sequence[str], round_no: int, side: str, server: str, kept: bool,
              prints: dict[str, object]) -> list[str]:
    """starts.csv's row (START_COLUMNS) of one start; `names`: comparison, test, point,
    calibration."""
    layout = {k: v for k, v in prints.items() if k.startswith("layout_")}
    bases = prints.get("bases") or {}

    def cell(name: str) -> str:
        value = prints.get(name)
        if isinstance(value, bool):
            return "true" if value else "false"
        return "" if value is None else str(value)

    return [*names, str(round_no), side, server, "true" if kept else "false", cell("env_pad"),
            cell("aslr"), cell("thp"), cell("cache_line"), _joined(layout),
            _joined(bases) if isinstance(bases, dict) else "", cell("launched")]


def append_starts(path: Path, rows: list[list[str]]) -> None:
    """Appends rows to starts.csv, its header first when the file is new."""
    new = not path.exists()
    with path.open("a", newline="") as handle:
        writer = csv.writer(handle)
        if new:
            writer.writerow(START_COLUMNS)
        writer.writerows(rows)


def mode_fields(prints: dict[str, object]) -> dict[str, object]:
    """The fields of a fingerprint that may explain a mode (mode_layouts.py): all but the
    page bases, which differ in every start by design."""
    return {k: v for k, v in prints.items() if k != "bases"}
