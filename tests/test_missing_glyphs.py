"""A character the figures' font cannot draw is said once, in one line (plot_tool.missing_glyphs).

matplotlib warns once per character and text it cannot draw, two lines each; ids in another
script gave a dozen such lines per run, and a sweep figure with such a title was drawn five
times taller, its fitting loop taking the warning for a layout that found no room.
"""
from __future__ import annotations

import logging
import warnings

import pytest

from plot_tool.missing_glyphs import SHOWN_CHARACTERS, describe, glyphs_reported, missing_glyph

MATPLOTLIBS = "Glyph 38142 (\\N{CJK UNIFIED IDEOGRAPH-94FE}) missing from font(s) DejaVu Sans."
TOPOLOGY = {"name": "cjk", "hosts": ["主机1", "主机2"],
            "links": [{"id": "链路1", "ends": ["主机1", "主机2"], "rate_mbps": 10,
                       "delay_ms": 10, "buffer_kb": 64}],
            "flows": [{"id": "流1", "src": "主机1", "dst": "主机2", "data_mb": 0.05}]}


def test_matplotlibs_message_is_read():
    assert missing_glyph(MATPLOTLIBS) == ("链", "DejaVu Sans")
    assert missing_glyph("Glyph 8722 (\\N{MINUS SIGN}) missing from current font.") == \
        ("\N{MINUS SIGN}", "the current font")
    assert missing_glyph("constrained_layout not applied") is None


def test_the_line_names_the_characters_the_font_and_the_remedy():
    line = describe(dict.fromkeys("链路"), dict.fromkeys(["DejaVu Sans"]))
    assert line.startswith("the figures' font (DejaVu Sans) has no glyph for 2 characters of "
                           "their texts (链, 路): each is drawn as an empty box")
    assert "font.family" in line and "\n" not in line
    many = describe(dict.fromkeys(chr(0x4E00 + i) for i in range(SHOWN_CHARACTERS + 3)),
                    dict.fromkeys(["DejaVu Sans"]))
    assert f"for {SHOWN_CHARACTERS + 3} characters" in many and "and 3 more)" in many
    assert describe({"x": None}, {"F": None}).count("1 character of") == 1


def test_other_warnings_pass_through(caplog):
    with pytest.warns(RuntimeWarning, match="something else"):
        with glyphs_reported():
            warnings.warn(MATPLOTLIBS, UserWarning, stacklevel=1)
            warnings.warn("something else", RuntimeWarning, stacklevel=1)
    assert [r.getMessage()[:43] for r in caplog.records] == \
        ["the figures' font (DejaVu Sans) has no glyp"]


def test_a_run_with_ids_in_another_script_gets_one_line(tmp_path, caplog):
    from netsim import load_topology, simulate
    from plot_tool import make_figures

    with simulate(load_topology(TOPOLOGY), interval_s=0.05) as results:
        results.write(tmp_path / "run")
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        with caplog.at_level(logging.WARNING, logger="plot_tool.missing_glyphs"):
            paths = make_figures(tmp_path / "run")
    assert {p.name for p in paths} == {"links.png", "flows.png", "hosts.png"}
    assert not [w for w in shown if "missing from" in str(w.message)]
    lines = [r.getMessage() for r in caplog.records if r.name == "plot_tool.missing_glyphs"]
    assert len(lines) == 1
    for character in "主机流路链":
        assert character in lines[0]


def test_a_sweep_figure_is_not_made_taller_by_a_missing_glyph():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from plot_tool.sweep_figures import FIGSIZE_IN, _grow_to_fit

    heights = []
    for title in ("goodput of flow F1", "goodput of flow 流1"):
        fig = Figure(figsize=FIGSIZE_IN, layout="constrained")
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        ax.plot([0, 1], [0, 1])
        ax.set_title(title)
        with glyphs_reported():
            _grow_to_fit(fig)
        heights.append(fig.get_figheight())
    assert heights == [FIGSIZE_IN[1], FIGSIZE_IN[1]]       # (25.3 in before)
