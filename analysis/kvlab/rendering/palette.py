"""kvlab's visual identity, owned here once: a fixed colour and marker per server name,
per client strategy and per client I/O model, the order legends list them in, and the
axis units every plot uses.

Keyed by name, never by order of appearance: redis-server is the same colour in every
panel of every figure of a run, in the dashboard and in the notebook. A name this module
does not know (a new server in an experiment file) gets a colour and marker chosen by a
hash of the name, so it too keeps them from figure to figure and run to run; it sorts
after the known names, alphabetically.

Pure functions and constants; no pyplot state. Thread-safe.
"""

from __future__ import annotations

import dataclasses
import math
import zlib
from typing import TYPE_CHECKING, Any, Iterable

if TYPE_CHECKING:
    import numpy as np
    from matplotlib.axes import Axes
    from matplotlib.ticker import LogLocator


@dataclasses.dataclass(frozen=True)
class Style:
    colour: str
    marker: str
    linestyle: str = "-"
    hatch: str = ""


# Okabe-Ito and Tableau hues that stay apart for colour-blind readers and in greyscale
# print as far as nine hues can; redis, the reference row, is the warm red everyone uses.
SERVERS = {
    "redis": Style("#D55E00", "s"),
    "redis-io-threads": Style("#CC79A7", "P"),
    "single": Style("#0072B2", "o"),
    "concurrent": Style("#009E73", "D"),
    "striped": Style("#9467BD", "X"),
    "sharded-hop-batch": Style("#8C564B", "^"),
    "sharded-hop-command": Style("#E69F00", "v"),
}
# Engine names (the regression gate, micro benchmarks) wear their server's identity.
ALIASES = {"sharded": "sharded-hop-command", "redis-server": "redis"}

CLIENTS = {
    "dedicated": Style("#595959", "o"),
    "pooled": Style("#1F9FB4", "o"),
    "shared": Style("#B8860B", "s"),
}
IO_MODELS = {
    "direct": Style("#333333", "o", "-", ""),
    "event-loop": Style("#333333", "s", "--", "//"),
}
# The stages of a request inside the server (INFO stages), in the order it meets them:
# the network and parsing in blues, the two thread crossings of a hop (queue: to the
# executing thread, return: back) in oranges, the engine's work green, the reply's way
# out in purple and grey. One colour per stage in every bar of every figure.
STAGES = {
    "read": Style("#9ECAE1", "o"),
    "parse": Style("#6BAED6", "o"),
    "dispatch": Style("#2171B5", "o"),
    "queue": Style("#E6550D", "o", hatch="//"),
    "execute": Style("#31A354", "o"),
    "return": Style("#FDAE6B", "o", hatch="\\\\"),
    "render": Style("#756BB1", "o"),
    "write": Style("#636363", "o"),
}
# The seeds' own numbers: neutral, so they never pass for one of our servers.
SEED = Style("#7A7A7A", "*", ":", "xx")
# An interval that decided nothing, and the reference lines (1.0, an SLO).
NEUTRAL = "#555555"
REFERENCE_LINE = "#222222"
# What a hollow marker or bar means, in every legend that shows one.
CLIENT_BOUND_TEXT = "hollow: client-bound (load generator ≥ 90% busy; server may be faster)"

# Unknown names draw from hues as far from the known ones as a small set allows.
_FALLBACK_COLOURS = ("#E7298A", "#66A61E", "#7570B3", "#A6761D", "#FB9A99", "#6A3D9A",
                     "#B2DF8A", "#1F3A93")
_FALLBACK_MARKERS = ("o", "s", "^", "v", "D", "P", "X", "h", "<", ">", "p", "*")

_KINDS = {"server": SERVERS, "client": CLIENTS, "io": IO_MODELS, "stage": STAGES}


def _fallback(name: str) -> Style:
    digest = zlib.crc32(name.encode())
    return Style(_FALLBACK_COLOURS[digest % len(_FALLBACK_COLOURS)],
                 _FALLBACK_MARKERS[(digest // len(_FALLBACK_COLOURS)) % len(_FALLBACK_MARKERS)])


def style(kind: str, name: str) -> Style:
    """The style of `name` as a "server", "client", "io" model or "stage"."""
    table = _KINDS[kind]
    name = str(name)
    if kind == "server":
        name = ALIASES.get(name, name)
    return table.get(name) or _fallback(f"{kind}:{name}")


def server(name: str) -> Style:
    return style("server", name)


def client(name: str) -> Style:
    return style("client", name)


def io_model(name: str) -> Style:
    return style("io", name)


def stage(name: str) -> Style:
    return style("stage", name)


def order_key(kind: str, name: str) -> tuple:
    """Sort key: known names in the table's order, then the rest alphabetically."""
    table = list(_KINDS[kind])
    name = str(name)
    if kind == "server":
        name = ALIASES.get(name, name)
    return (table.index(name), "") if name in table else (len(table), name)


def ordered(kind: str, names: Iterable[Any]) -> list[str]:
    """`names` without repeats, in the one legend order."""
    return sorted(dict.fromkeys(str(n) for n in names), key=lambda n: order_key(kind, n))


_REPEAT_LINESTYLES = ("-", "--", ":", "-.")


def server_in(name: str) -> str | None:
    """The server or engine a series name is about, where that is a known name: its first
    word ("redis set p16 ..."), or for a benchmark name without spaces a '/'-separated
    part ("BM_Hop/sharded/get"). A ratio ("concurrent/redis set ...") is about neither."""
    name = str(name)
    candidates = name.split("/") if " " not in name else name.split()[:1]
    return next((ALIASES.get(w, w) for w in candidates if ALIASES.get(w, w) in SERVERS), None)


def _marker_after(marker: str, steps: int) -> str:
    start = _FALLBACK_MARKERS.index(marker) if marker in _FALLBACK_MARKERS else 0
    return _FALLBACK_MARKERS[(start + steps) % len(_FALLBACK_MARKERS)]


def series_styles(names: Iterable[Any]) -> dict[str, Style]:
    """Styles for the series of one plot: a series about a known server wears its colour
    and marker (a second series of the same server a different line style); the rest
    take fallback hues in the order of their sorted names, so the same set of names always
    looks the same and no two of them share a look."""
    styles: dict[str, Style] = {}
    seen: dict[str, int] = {}
    others = 0
    for name in sorted(dict.fromkeys(str(n) for n in names),
                       key=lambda n: (order_key("server", server_in(n) or "~"), n)):
        known = server_in(name)
        if known is not None:
            repeat = seen.get(known, 0)
            seen[known] = repeat + 1
            base = SERVERS[known]
        else:
            repeat = others // len(_FALLBACK_COLOURS)
            base = Style(_FALLBACK_COLOURS[others % len(_FALLBACK_COLOURS)],
                         _FALLBACK_MARKERS[others % len(_FALLBACK_MARKERS)])
            others += 1
        # Past the line styles, the marker changes too.
        styles[name] = Style(base.colour,
                             _marker_after(base.marker, repeat // len(_REPEAT_LINESTYLES)),
                             _REPEAT_LINESTYLES[repeat % len(_REPEAT_LINESTYLES)])
    return styles


# ----------------------------------------------------------------- axis units


def _scaled(value: float, units: Iterable[tuple[float, str]], plain: str) -> str:
    """`value` in the largest of `units` ((factor, suffix), largest first) it reaches,
    else as it is with the suffix `plain`."""
    for factor, suffix in units:
        if abs(value) >= factor:
            return f"{value / factor:.3g}{suffix}"
    return f"{value:.3g}{plain}" if value else "0"


def format_rate(value: float, _position: int | None = None) -> str:
    """ops/s as a tick label: 850, 12K, 1.5M."""
    return _scaled(value, ((1e6, "M"), (1e3, "K")), "")


def format_latency_us(value: float, _position: int | None = None) -> str:
    """A latency given in µs as a tick label: 40 µs, 1.2 ms, 2 s."""
    return _scaled(value, ((1e6, " s"), (1e3, " ms")), " µs")


def rate_axis(axis: Axes, which: str = "y") -> None:
    """ops/s in K/M on `which` axis of `axis`, never an offset or exponent."""
    from matplotlib.ticker import FuncFormatter
    getattr(axis, f"{which}axis").set_major_formatter(FuncFormatter(format_rate))


# A log latency axis spanning more decades than this is labelled once per decade.
DENSE_DECADES = 3


def _latency_locator() -> LogLocator:
    from matplotlib.ticker import LogLocator

    class LatencyLocator(LogLocator):
        """1, 2, 5 per decade, so that a panel spanning less than a decade still has
        labels; once per decade where the axis spans more than DENSE_DECADES."""

        def tick_values(self, vmin: float, vmax: float) -> np.ndarray:
            wide = vmin > 0 and vmax > 0 and abs(math.log10(vmax / vmin)) > DENSE_DECADES
            self.set_params(subs=(1.0,) if wide else (1.0, 2.0, 5.0))
            return super().tick_values(vmin, vmax)

    return LatencyLocator(base=10)


def latency_axis(axis: Axes, which: str = "y") -> None:
    """Latency (data in µs) in µs/ms on `which` axis; on a log axis the minor ticks too."""
    from matplotlib.ticker import FuncFormatter, NullFormatter
    target = getattr(axis, f"{which}axis")
    if target.get_scale() == "log":
        target.set_major_locator(_latency_locator())
        target.set_minor_formatter(NullFormatter())
    target.set_major_formatter(FuncFormatter(format_latency_us))


def ratio_ticks(low: float, high: float) -> list[float]:
    """Tick positions for a log-scaled ratio axis spanning [low, high], 1.0 among them;
    at most about nine."""
    fine = (0.1, 0.2, 0.25, 0.5, 0.67, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 2, 3, 4, 5, 7, 10, 15, 20,
            30, 50, 100)
    coarse = (0.1, 0.2, 0.5, 1.0, 2, 5, 10, 20, 50, 100)
    inside = [t for t in fine if low <= t <= high]
    if len(inside) > 9:
        inside = [t for t in coarse if low <= t <= high]
    return inside or [1.0]
