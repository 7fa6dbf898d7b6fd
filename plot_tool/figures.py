"""Figures of a simulation run: ``links.png``, ``flows.png``, ``hosts.png``, ``fct.png`` when the
run had workloads and, when dynamic routing changed a forwarding table, ``routing.png`` (see
docs/outputs.md, "Figures"). Big runs get aggregate lines (a group's mean and 10th-90th
percentile band) instead of one line per entity.

Like arviz's plots, the work is split into a front end that computes each figure's data once and
a backend that only draws it:

* the front end (no matplotlib): `plot_tool.run_data.plan_figures` turns the result tables into
  one `FigureData` per figure (`plot_tool.series`): for links, flows and hosts a `FigureSpec`
  (panels: column, y label, drawing style; whether a gap in the rows means "idle" or "no data")
  and a list of `Series` (one per plotted line, `plot_tool.entity_series`, with the analytic
  predictions of a ``--check`` run matched to them), for ``routing.png`` the `RouteSeries` whose
  next hop changed, coincident routes merged (`plot_tool.routes_data`), for ``fct.png`` the
  workload flows (`plot_tool.fct_data`). `plot_tool.lines.line_arrays` is the one place that
  decides where a line breaks: at NaN values, and where consecutive samples are more than
  ``GAP_FACTOR`` sampling intervals apart, except, for links and hosts, across a gap bounded by
  two zero values (an idle entity writes no rows, and the rows around the gap are zero);
* the backend (`plot_tool.png`): draws a `FigureData` into a matplotlib Figure, one panel per
  `Panel`, the shared legend, the geometry from measured text (`plot_tool.layout`: no layout
  engine, so each figure is drawn once), and writes it as an RGB PNG (`plot_tool.png.png_file`:
  zlib, one fixed row filter).

Saving uses the object-oriented API (`matplotlib.figure.Figure` with an Agg canvas), so nothing
needs a display; pyplot is imported only when ``show=True``. numpy and matplotlib are imported on
the first call, not with this module: numpy without OpenBLAS's idle threads spinning
(`plot_tool.numpy_loader`), matplotlib without the generated docstrings of its ``Artist.set``
methods (`plot_tool.matplotlib_loader`). Garbage collection is postponed while the
modules are imported, the results read and the figures drawn. ``bench/bench_figures.py``
measures the cost against the simulation's and the command's.
"""
from __future__ import annotations

import gc
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plot_tool.figure_files import refuse_foreign_figures
from plot_tool.matplotlib_loader import load_matplotlib
from plot_tool.numpy_loader import load_numpy

if TYPE_CHECKING:     # the modules that need numpy are imported with the collector paused
    from plot_tool.series import IdSelection, PathLike

log = logging.getLogger(__name__)


def make_figures(results: Any, out_dir: PathLike | None = None, *,
                 links: IdSelection = None, flows: IdSelection = None, hosts: IdSelection = None,
                 routers: IdSelection = None, predictions: bool | None = None,
                 show: bool = False) -> list[Path]:
    """Write ``links.png``, ``flows.png``, ``hosts.png`` (and ``routing.png``); return the paths.

    Args:
        results: a results directory (str or path; read with `read_results`), or any object with
            attributes ``summary``, ``links``, ``flows``, ``hosts`` (and optionally ``routes``) in
            the documented format (a `ResultSet`, or the simulator's in-memory results).
        out_dir: where to write the PNG files (created if needed). Defaults to the results
            directory when `results` is a path; required otherwise.
        links, flows, hosts: ids to plot (an id or an iterable of ids); None means every one in
            the summary. A figure is written only when at least one of its entities is selected.
            An id that is not in the summary raises ValueError.
        routers: routers whose routes ``routing.png`` shows (None: every router). ``routing.png``
            is written only when dynamic routing changed a forwarding table (the routes table
            has entries after t = 0 and the run's routing is not static: a static run's later
            rows are a workload's entries, logged when first used) and at least one router is
            selected; its rate panel shows the selected `links`.
        predictions: draw the analytic predictions of ``predictions.csv`` (written by a run with
            ``--check``) over the simulated lines: None (default) draws them when the results have
            them (`ResultSet.predictions` is not None), False never, True always (ValueError when
            the results have none). They appear as dashed steps in the colour of the line they
            predict (a shaded band where the prediction is an interval, for Vegas) on the arrival
            rate and RTT panels of ``flows.png`` and the buffer panel of ``links.png``, which then
            shows the simulated ``backlog_kb`` instead of ``buffer_kb``.
        show: after saving, also show the figures with pyplot (blocks until they are closed).

    A run with workloads (``fct.csv``) also gets ``fct.png``: each finished workload flow's FCT
    slowdown against its size, with the median and 99th percentile of each size bucket.

    The paths are returned in the order links, flows, hosts, fct, routing (figures not written
    are left out). An existing file of one of those names that is not a figure netsim wrote (a
    file of the user's, a symbolic link) raises ValueError before anything is drawn.
    """
    # Importing numpy and matplotlib, reading the tables and drawing allocate many small
    # objects, which trigger garbage collections that traverse every live object (after a run,
    # the simulation's too); they free theirs when they are dropped, so collecting is postponed
    # to the end, and the modules are imported here, with the collector paused.
    collecting = gc.isenabled()
    gc.disable()
    try:
        written, jobs = _write_figures(results, out_dir, links=links, flows=flows, hosts=hosts,
                                       routers=routers, predictions=predictions)
    finally:
        if collecting:
            gc.enable()

    if show and jobs:
        import matplotlib.pyplot as plt  # only here: pyplot may need a display

        from plot_tool.png import draw

        for job in jobs:
            draw(plt.figure(figsize=job.figsize), job)
        plt.show()
    return written


def _write_figures(results: Any, out_dir: PathLike | None, **selection: Any
                   ) -> tuple[list[Path], list[Any]]:
    """`make_figures` without its collector pause and ``show``: the paths written, the jobs."""
    load_numpy()                # without OpenBLAS's idle spinning (plot_tool.numpy_loader)
    from plot_tool.results import read_results
    from plot_tool.run_data import plan_figures

    source_dir: Path | None = None
    if isinstance(results, (str, os.PathLike)):
        source_dir = Path(results)
        # the traces stay on disk: a long run's lines are streamed and reduced (plot_tool.run_data)
        results = read_results(source_dir, traces_in_memory=False)
        source_dir = results.directory or source_dir
    for attribute in ("summary", "links", "flows", "hosts"):
        if not hasattr(results, attribute):
            raise TypeError(f"make_figures needs a results directory or an object with attributes "
                            f"summary, links, flows, hosts; got {type(results).__name__} "
                            f"without {attribute!r}")
    if out_dir is None:
        if source_dir is None:
            raise ValueError("out_dir is required when results is not a results directory")
        out_dir = source_dir
    out_dir = Path(out_dir)
    jobs = plan_figures(results, **selection)
    written: list[Path] = []
    if not jobs:
        return written, jobs
    refuse_foreign_figures(out_dir / job.filename for job in jobs)
    out_dir.mkdir(parents=True, exist_ok=True)
    load_matplotlib()           # without the docstrings of Artist.set (plot_tool.matplotlib_loader)
    from plot_tool.missing_glyphs import glyphs_reported
    from plot_tool.png import TextMemo, render, save_png

    # each string measured and shaped once (plot_tool.png.agg_text); a character the font does
    # not have is said once (plot_tool.missing_glyphs)
    with glyphs_reported(), TextMemo():
        for job in jobs:
            path = out_dir / job.filename
            save_png(render(job), path)
            log.debug("wrote %s", path)
            written.append(path)
    return written, jobs


__all__ = ["make_figures"]
