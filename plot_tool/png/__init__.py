"""The matplotlib backend of the run figures: draws the `FigureData` that the front end
(`plot_tool.run_data`) computed, and writes it as a PNG.

`draw(fig, data)` draws into any matplotlib Figure (`show=True` uses pyplot's); `render(data)`
into a new Figure on an Agg canvas at the saved resolution; `save_png` writes it. The drawing of
each kind of figure is in its own module: `panels` (links, flows, hosts), `fct`, `routing`;
`common` holds what they share (axes, legends, colours, units); `agg_text` the canvas, whose text
is measured and shaped once per `make_figures` call.
"""
from __future__ import annotations

from matplotlib.figure import Figure

from plot_tool.png.agg_text import Canvas, TextMemo
from plot_tool.png.common import DPI, save_png
from plot_tool.png.fct import draw_fct_figure
from plot_tool.png.panels import draw_figure
from plot_tool.png.routing import draw_routing_figure
from plot_tool.series import FigureData

__all__ = ["TextMemo", "draw", "render", "save_png"]


def draw(fig: Figure, data: FigureData) -> None:
    """Draw the figure `data` into `fig`."""
    if data.kind == "panels":
        assert data.spec is not None
        draw_figure(fig, data.spec, list(data.series), data.summary, data.predictions,
                    notes=data.notes, link_changes=data.link_changes)
    elif data.kind == "fct":
        assert data.fct is not None
        draw_fct_figure(fig, data.fct, data.summary, data.workloads)
    elif data.kind == "routing":
        draw_routing_figure(fig, list(data.series), list(data.routes), data.omitted, data.summary,
                            link_changes=data.link_changes)
    else:
        raise ValueError(f"unknown kind of figure {data.kind!r}")


def render(data: FigureData) -> Figure:
    """`data` drawn into a new Figure on an Agg canvas (`plot_tool.png.agg_text.Canvas`: text
    measured and shaped once while a `TextMemo` is active), at the resolution it is saved with."""
    fig = Figure(figsize=data.figsize, dpi=DPI)
    Canvas(fig)
    draw(fig, data)
    return fig
