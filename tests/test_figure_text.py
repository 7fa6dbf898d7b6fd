"""The words of a figure are drawn as they read, and its tick labels fit the figure.

Ids, names and a sweep's titles and labels are the user's text; matplotlib takes what lies
between two "$" for a formula (mathtext), so a link "L$x^$" stopped the figures with a parser
error (exit 3) and a flow "$a$" would have been drawn in italics (found by fuzzing)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from netsim.cli import main
from plot_tool import read_results
from plot_tool.layout import finish_layout, literal_texts, renderer_of, stacked_axes
from plot_tool.png import render
from plot_tool.run_data import plan_figures

DOLLAR_IDS = {"host": "$$", "router": "R$", "link": "L$x^$", "flow": "$a$"}


def _topology(path: Path) -> Path:
    host, router, link, flow = (DOLLAR_IDS[k] for k in ("host", "router", "link", "flow"))
    path.write_text(json.dumps({
        "name": "dollars $x^$", "hosts": [host, "H2"], "routers": [router],
        "links": [{"id": link, "ends": [host, router], "rate_mbps": 10, "delay_ms": 5,
                   "buffer_kb": 50},
                  {"id": "L2", "ends": [router, "H2"], "rate_mbps": 10, "delay_ms": 5,
                   "buffer_kb": 50}],
        "flows": [{"id": flow, "src": host, "dst": "H2", "data_mb": 0.1}]}))
    return path


def _words(fig) -> list:
    """The texts `literal_texts` covers that say something."""
    texts = list(fig.texts)
    if fig._suptitle is not None:
        texts.append(fig._suptitle)
    legends = list(fig.legends)
    for ax in fig.axes:
        texts += [ax.title, ax.xaxis.label, ax.yaxis.label, *ax.texts]
        if ax.get_legend() is not None:
            legends.append(ax.get_legend())
    for legend in legends:
        texts += [*legend.get_texts(), legend.get_title()]
    return [t for t in texts if t.get_text()]


def test_ids_with_dollar_signs_are_drawn_as_they_read(tmp_path):
    out = tmp_path / "out"
    code = main([str(_topology(tmp_path / "t.json")), "--out", str(out), "--quiet",
                 "--pcap"])
    assert code == 0
    assert {"links.png", "flows.png", "hosts.png", "seq_%24a%24.png"} <= {
        p.name for p in out.iterdir()}
    drawn = {}
    for job in plan_figures(read_results(out)):
        fig = render(job)
        words = _words(fig)
        assert words and not any(t.get_parse_math() for t in words), job.filename
        drawn[job.filename] = {t.get_text() for t in words}
    said = set().union(*drawn.values())
    assert {"L$x^$ $$->R$", "$a$", "$$"} <= said
    assert any("dollars $x^$" in text for text in said)          # the title, as written


def test_literal_texts_leaves_the_tick_labels_to_their_formatter():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 4))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.set_yscale("log")
    ax.set_ylim(1, 1000)
    ax.set_title("$a$")
    ax.plot([0, 1], [1, 100], label="$b$")
    ax.legend()
    literal_texts(fig)
    fig.draw_without_rendering()
    assert not ax.title.get_parse_math()
    assert not ax.get_legend().get_texts()[0].get_parse_math()
    ticks = [t for t in ax.get_yticklabels() if t.get_text()]
    assert ticks and all(t.get_parse_math() for t in ticks)       # 10^2, as a formula
    assert any("10^{" in t.get_text() for t in ticks)


def test_a_sweep_titled_and_labelled_with_dollar_signs_draws_its_figures(tmp_path):
    topology = tmp_path / "topo.json"
    topology.write_text(json.dumps({
        "hosts": ["H1", "H2"], "links": [{"id": "L1", "ends": ["H1", "H2"], "rate_mbps": 10,
                                          "delay_ms": 5, "buffer_kb": 50}],
        "flows": [{"id": "F1", "src": "H1", "dst": "H2", "data_mb": 0.05}]}))
    sweep = tmp_path / "s.json"
    sweep.write_text(json.dumps({
        "name": "s", "topology": "topo.json", "seeds": 1,
        "parameters": {"links.L1.delay_ms": {"values": [5, 20], "labels": ["$x^$", "b"]}},
        "metrics": ["flows.F1.goodput_mbps"],
        "plots": [{"file": "g.png", "x": "links.L1.delay_ms", "y": "flows.F1.goodput_mbps",
                   "title": "$\\frac{1}{0$", "xlabel": "$x^$"}]}))
    out = tmp_path / "sw"
    assert main(["sweep", str(sweep), "--jobs", "1", "--out", str(out), "--quiet"]) == 0
    assert (out / "g.png").stat().st_size > 0


def test_sweep_figures_draw_titles_labels_and_categories_as_they_read():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from plot_tool.sweep_figures import draw_sweep_plot

    fig = Figure(figsize=(8, 5), layout="constrained")
    FigureCanvasAgg(fig)
    rows = [{"status": "ok", "algo": a, "y": str(v)} for a, v in (("$x^$", 1.0), ("b", 2.0))]
    ax = draw_sweep_plot(fig, {"file": "t.png", "x": "algo", "y": "y", "title": "$a$",
                               "xlabel": "$x$ ^"}, rows)
    fig.draw_without_rendering()
    labels = [t for t in ax.get_xticklabels() if t.get_text()]
    assert [t.get_text() for t in labels] == ["$x^$", "b"]
    assert not any(t.get_parse_math() for t in labels + _words(fig))


@pytest.mark.parametrize("low, high", [(0.3, 4.0), (0.02, 0.09), (1.0, 1000.0)])
def test_log_tick_labels_minor_ones_included_stay_inside_the_figure(low, high):
    """A log axis spanning less than a decade labels its minor ticks ("6x10^-1"), wider than
    its major ones; the margin measured from the major ones alone let them run off fct.png."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 4))
    [ax] = stacked_axes(fig, 1)
    ax.set_yscale("log")
    ax.set_ylim(low, high)
    ax.plot([1, 2], [low * 1.1, high / 1.1])
    finish_layout(fig, [ax])
    renderer = renderer_of(fig)
    fig.draw_without_rendering()
    assert ax.get_tightbbox(renderer).x0 >= 0
