"""The tick locator of the run figures (plot_tool.png.common.ViewLocator): the tick values of
matplotlib's MaxNLocator that lie in the view, and only those, so that no Tick is made that is
never drawn; the figures' ticks are then exactly the drawn ones."""
from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from matplotlib.ticker import MaxNLocator

from plot_tool.png import render
from plot_tool.png.common import ViewLocator
from plot_tool.results import read_results
from plot_tool.run_data import plan_figures

STEPS = [1, 2, 2.5, 5, 10]


@given(low=st.floats(-1e6, 1e6), span=st.floats(1e-6, 1e7), nbins=st.sampled_from([5, "auto"]),
       integer=st.booleans())
def test_the_values_in_view_are_matplotlibs_and_nothing_beyond(low, span, nbins, integer):
    high = low + span
    ours = ViewLocator(nbins=nbins, steps=STEPS, integer=integer).tick_values(low, high)
    theirs = MaxNLocator(nbins=nbins, steps=STEPS, integer=integer).tick_values(low, high)
    slack = 1e-6 * span
    assert all(low - slack <= v <= high + slack for v in ours)
    close = 1e-10 * span          # matplotlib draws a tick this close to the view (relative)
    in_view = [v for v in theirs if low - close <= v <= high + close]
    assert set(in_view) <= set(ours) <= set(theirs)


def test_every_tick_of_a_run_figure_is_drawn(root, tmp_path):
    """On the figures of test case 0 (its results written by a run without figures)."""
    from netsim.cli import main

    out = tmp_path / "r"
    assert main([str(root / "topologies" / "test_case_0.json"), "--quiet", "--no-plots",
                 "--out", str(out)]) == 0
    for job in plan_figures(read_results(out)):
        fig = render(job)
        fig.canvas.draw()
        for ax in fig.axes:
            for axis, (low, high) in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
                locs = np.asarray(axis.get_majorticklocs())
                assert len(axis.get_major_ticks(len(locs))) == len(locs)
                lo, hi = min(low, high), max(low, high)
                assert np.all((locs >= lo - 1e-6 * (hi - lo)) & (locs <= hi + 1e-6 * (hi - lo)))
