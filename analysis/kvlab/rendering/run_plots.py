"""Every figure of a run, first to last (the order plots.py's docstring gives), and the
files they are saved to: plots/<stem>.png and .svg."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from .plots import latency_figure, plt, throughput_figure  # plots chooses the backend
from .plots_latency import curve_figures, percentile_figure
from .plots_seeds import seed_figures
from .plots_stages import stages_figure
from .plots_verdicts import verdicts_figure
from .report import measured_only, point_table
from ..running.results import load_meta, load_points

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def save(figure: Figure, out_dir: Path, stem: str, written: list[Path]) -> None:
    for suffix in ("png", "svg"):
        path = out_dir / f"{stem}.{suffix}"
        figure.savefig(path, dpi=100)
        written.append(path)
    plt.close(figure)


def figures_of_run(run_dir: str | Path) -> Iterator[tuple[str, Figure]]:
    """Every figure of a run, first to last, as (file stem, figure); each figure is drawn
    when the caller takes it, so a caller closes one before the next is made."""
    run_dir = Path(run_dir)
    meta = load_meta(run_dir)
    points = load_points(run_dir)
    table = measured_only(point_table(points, run_dir))
    figure = verdicts_figure(run_dir, meta)
    if figure is not None:
        yield "verdicts", figure
    if not table.empty:
        yield from seed_figures(table, meta)
        figure = stages_figure(points, table, meta)
        if figure is not None:
            yield "stages", figure
    for sweep, frame in ([] if table.empty else table.groupby("sweep", sort=False)):
        yield f"{sweep}-throughput", throughput_figure(frame, sweep)
        if frame["p50_us"].notna().any():
            yield f"{sweep}-latency", latency_figure(frame, sweep)
        figure = percentile_figure(run_dir, points, frame, sweep, meta)
        if figure is not None:
            yield f"{sweep}-percentiles", figure
    yield from curve_figures(run_dir, table)


def write_plots(run_dir: str | Path) -> list[Path]:
    run_dir = Path(run_dir)
    out_dir = run_dir / "plots"
    out_dir.mkdir(exist_ok=True)
    written: list[Path] = []
    for stem, figure in figures_of_run(run_dir):
        save(figure, out_dir, stem, written)
    return written
