"""Which part of a start's layout its mode follows: given each start's value (its rate),
its fingerprint (running/layout.py: environment padding, ASLR, transparent huge pages,
the cache line, and the engine's hot addresses modulo 4096, INFO's `layout_*`) and the
modes found among the values (modes.py), the fingerprint fields that tell the modes
apart.

A field separates the modes when no value of it occurs in two modes, and its values
recur: it takes at most half as many distinct values as there are starts. A field
unique to each start (the padding, a page address) is always "disjoint" between modes
and explains nothing; a field with one value everywhere (THP, the cache line) cannot
separate. A separating field is a lead, not a proof: with few starts a field can line up
with the modes by chance, so the text names the counts behind it.

Pure functions; no I/O.
"""

from __future__ import annotations

from collections import Counter
from typing import Mapping, Sequence

from .modes import Modes


def mode_of(value: float, modes: Modes) -> int | None:
    """The index of the mode whose range holds `value` (None: in none of them)."""
    for index, mode in enumerate(modes.modes):
        if mode.low <= value <= mode.high:
            return index
    return None


def separating_fields(values: Sequence[float], prints: Sequence[Mapping[str, object]],
                      modes: Modes) -> dict[str, list[Counter]]:
    """The fields that separate the modes, each with its values' counts per mode (in the
    modes' order); {} with one mode, or when no field does. `prints[i]` is the
    fingerprint of the start whose value is `values[i]`; a start without one, or outside
    every mode, is left out."""
    if not modes.multimodal:
        return {}
    members = [(mode_of(v, modes), p) for v, p in zip(values, prints) if p]
    members = [(m, p) for m, p in members if m is not None]
    if len({m for m, _ in members}) < len(modes.modes):
        return {}
    fields = sorted({f for _, p in members for f in p})
    found = {}
    for field in fields:
        if any(p.get(field) in (None, "") for _, p in members):
            continue
        per_mode = [Counter() for _ in modes.modes]
        for mode, prints_of_start in members:
            per_mode[mode][str(prints_of_start[field])] += 1
        seen = [set(c) for c in per_mode]
        disjoint = all(not (seen[i] & seen[j]) for i in range(len(seen))
                       for j in range(i + 1, len(seen)))
        distinct = len(set().union(*seen))
        if disjoint and distinct * 2 <= len(members):
            found[field] = per_mode
    return found


def layout_text(values: Sequence[float], prints: Sequence[Mapping[str, object]],
                modes: Modes) -> str:
    """'the modes follow layout_engine (0x040 x3 / 0x880 x11)' or, when no recorded field
    separates them, says so; '' with one mode or no fingerprints."""
    if not modes.multimodal or not any(prints):
        return ""
    fields = separating_fields(values, prints, modes)
    if not fields:
        return "no recorded layout field separates the modes"
    parts = []
    for field, per_mode in fields.items():
        groups = [", ".join(f"{value} x{count}" for value, count in sorted(c.items()))
                  for c in per_mode]
        parts.append(f"{field} ({' / '.join(groups)})")
    return "the modes follow " + "; ".join(parts)
