"""Every line of a figure can be told apart: up to 40 lines (the most link directions a
figure draws as lines) get distinct colours, and analytic predictions that coincide (two flows
with the same predicted rate) share their dashed line, each drawing every n-th dash in its own
colour, instead of the last one hiding the others."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from plot_tool.png.common import assign_colors
from plot_tool.png.panels import DASH, _plot_predictions
from plot_tool.series import PredictionSeries


def test_forty_lines_have_forty_colours_and_ten_keep_tab10():
    for n in (10, 20, 21, 40):
        series = [SimpleNamespace(color=None) for _ in range(n)]
        assign_colors(series)
        assert len({s.color for s in series}) == n
    few = [SimpleNamespace(color=None) for _ in range(10)]
    many = [SimpleNamespace(color=None) for _ in range(40)]
    assign_colors(few)
    assign_colors(many)
    assert few[0].color == "#1f77b4"                  # tab10's first
    twenty = [SimpleNamespace(color=None) for _ in range(20)]
    assign_colors(twenty)
    assert [s.color for s in many[:20]] == [s.color for s in twenty]   # the first 20 as before


def prediction(key: str, value: float) -> PredictionSeries:
    return PredictionSeries(key, "rate_mbps", np.array([0.0, 5.0]), np.array([5.0, 10.0]),
                            np.array([value, 4.0]), np.array([value, 4.0]))


def test_coinciding_predictions_take_turns_along_one_dashed_line():
    fig = Figure()
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    colors = {"F1": "#1f77b4", "F2": "#ff7f0e", "F3": "#2ca02c"}
    line, band = _plot_predictions(ax, [prediction("F1", 5.0), prediction("F2", 5.0),
                                        prediction("F3", 6.0)], colors)
    assert line and not band
    f1, f2, f3 = ax.get_lines()
    period = 2 * sum(DASH)
    assert f1.get_linestyle() == f2.get_linestyle() == "--"
    offsets = [(o, list(d)) for o, d in (line._unscaled_dash_pattern for line in (f1, f2, f3))]
    assert offsets[0] == (0.0, [DASH[0], period - DASH[0]])
    assert offsets[1] == (sum(DASH), [DASH[0], period - DASH[0]])
    assert offsets[2] == (0.0, list(DASH))           # alone on its line: the usual dashes
