"""The report's memory table: bytes per key each server spent on the prefilled key space
(memory.csv, written by the runner at each prefill), median over rounds, beside redis."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

# Below this many keys a prefill's memory growth is the server's fixed buffers and arenas
# (a 1-key "per key" figure came out at megabytes), not what a key costs: such key spaces
# are left out of the table, and the table says so.
MIN_KEYS_PER_KEY_FIGURE = 10_000


_SHAPE_NOUNS = {"hash": "fields", "list": "elements", "set": "members", "zset": "members"}


def _value_label(shape: str, value_size: int) -> str:
    """"64 B" for a string; "hash: 10 fields of 16 B" for a container fill."""
    if shape == "string":
        return f"{value_size} B"
    kind, _, count = shape.partition(":")
    return f"{kind}: {count} {_SHAPE_NOUNS.get(kind, 'elements')} of {value_size} B"


def memory_section(run_dir: Path, meta: dict) -> str:
    path = Path(run_dir) / "memory.csv"
    if not path.exists():
        return ""
    memory = pd.read_csv(path)
    if "shape" not in memory:  # runs from before container fills
        memory["shape"] = "string"
    memory["shape"] = memory["shape"].fillna("string")
    small = sorted(int(k) for k in memory["keys"].unique() if k < MIN_KEYS_PER_KEY_FIGURE)
    memory = memory[memory["keys"] >= MIN_KEYS_PER_KEY_FIGURE]
    if memory.empty:
        return ""
    kinds = {name: spec.get("kind") for name, spec in meta.get("servers", {}).items()}
    table = memory.groupby(["keys", "shape", "value_size", "server"], sort=False).agg(
        used=("used_memory_per_key", "median"), rss=("rss_per_key", "median"),
        rounds=("round", "count")).reset_index()
    rows = []
    order = list(meta.get("servers", {}))
    table["order"] = table["server"].map(lambda name: order.index(name) if name in order
                                         else len(order))
    table = table.sort_values(["keys", "shape", "value_size", "order"])
    for (keys, shape, value_size), group in table.groupby(["keys", "shape", "value_size"],
                                                          sort=False):
        redis = group[group["server"].map(kinds) == "redis"]
        reference = float(redis["used"].iloc[0]) if not redis.empty else None
        for _, r in group.iterrows():
            ratio = f"{r['used'] / reference:.2f}" if reference else "–"
            rss = "–" if pd.isna(r["rss"]) else f"{r['rss']:,.0f}"
            rows.append([f"{keys:,}", _value_label(shape, value_size), r["server"],
                         f"{r['used']:,.0f}",
                         rss, ratio, str(r["rounds"])])
    header = ["keys", "value", "server", "used_memory B/key", "RSS B/key",
              "used_memory vs redis", "rounds"]
    lines = ["## Memory per key", "",
             "What the prefill of a key space cost each server, per key added: INFO "
             "used_memory (allocator level, as Redis counts it) and resident set growth as a "
             "cross-check (only for a process's first fill: freed pages stay resident); medians "
             "over rounds (each round a fresh server)."
             + (f" Key spaces under {MIN_KEYS_PER_KEY_FIGURE:,} keys "
                f"({', '.join(f'{k:,}' for k in small)}) are left out: their growth is the "
                "server's fixed buffers, not a key's cost." if small else ""), "",
             "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)
