"""Legends name what they show, and titles never overlap them (issue 9, part 6).

A half-duplex link is drawn as one line, its two directions summed: its legend says "link", not
"link direction". The figure title has a band of its own above the panels and the legends.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from plot_tool import read_results
from plot_tool.layout import renderer_of
from plot_tool.png import render
from plot_tool.run_data import plan_figures
from plot_tool.series import HALF_DUPLEX_TITLE, LINK_TITLE, MIXED_LINK_TITLE

TIMES = (0.1, 0.2, 0.3)


def _write(out: Path, duplex: dict[str, str], *, name: str = "legends", hosts: int = 2,
           dynamic: bool = True) -> Path:
    """Links L1.. with the given duplex modes, `hosts` hosts, one flow, and routes that changed
    (so that routing.png is drawn) when `dynamic`."""
    out.mkdir(parents=True, exist_ok=True)
    host_ids = [f"H{i}" for i in range(1, hosts + 1)]
    summary = {"topology": name, "interval_s": 0.1, "end_time_s": 0.3,
               "units": {"system": "si", "bits_per_mbit": 1000000, "bytes_per_kb": 1000,
                         "bytes_per_mb": 1000000},
               "links": {link: {"ends": ["A", "B"], "duplex": mode}
                         for link, mode in duplex.items()},
               "flows": {"F1": {}}, "hosts": {h: {} for h in host_ids},
               "routers": {"A": {}, "B": {}}}
    (out / "summary.json").write_text(json.dumps(summary))
    links = ["time_s,link,direction,rate_mbps,buffer_kb,buffer_pkts,backlog_kb,drops,"
             "failure_drops,impairment_drops,routing_rate_mbps"]
    links += [f"{t},{link},{d},5,1,1,1,1,0,0,0" for t in TIMES for link in duplex
              for d in ("A->B", "B->A")]
    (out / "links.csv").write_text("\n".join(links) + "\n")
    (out / "flows.csv").write_text("time_s,flow,send_rate_mbps,recv_rate_mbps,"
                                   "arrival_rate_mbps,window_pkts,rtt_ms\n"
                                   + "".join(f"{t},F1,5,5,5,10,20\n" for t in TIMES))
    (out / "hosts.csv").write_text("time_s,host,send_rate_mbps,recv_rate_mbps\n"
                                   + "".join(f"{t},{h},5,5\n" for t in TIMES for h in host_ids))
    routes = ["time_s,router,destination,next_hop,link,cost_ms", "0,A,H2,B,L1,10"]
    if dynamic:
        routes.append("0.15,A,H2,B,L2,12")
    (out / "routes.csv").write_text("\n".join(routes) + "\n")
    return out


def _figures(results_dir: Path) -> dict:
    return {job.filename: render(job) for job in plan_figures(read_results(results_dir))}


@pytest.mark.parametrize("duplex, title", [
    ({"L1": "full", "L2": "full"}, LINK_TITLE),
    ({"L1": "half", "L2": "half"}, HALF_DUPLEX_TITLE),
    ({"L1": "half", "L2": "full"}, MIXED_LINK_TITLE),
])
def test_link_legends_name_links_or_directions(tmp_path: Path, duplex: dict, title: str) -> None:
    figs = _figures(_write(tmp_path / "run", duplex))
    legend = figs["links.png"].legends[0]
    assert legend.get_title().get_text() == title
    labels = [t.get_text() for t in legend.get_texts()]
    expected = [lab for link, mode in duplex.items()
                for lab in ([link] if mode == "half" else [f"{link} A->B", f"{link} B->A"])]
    assert labels[:len(expected)] == expected      # then the causes of loss
    top = figs["routing.png"].axes[0].get_legend()          # the rate panel of routing.png
    assert top.get_title().get_text() == title
    assert "direction" not in HALF_DUPLEX_TITLE.split("(")[0]


def test_flow_and_host_legends(tmp_path: Path) -> None:
    figs = _figures(_write(tmp_path / "run", {"L1": "full"}))
    assert figs["flows.png"].legends[0].get_title().get_text() == "flow"
    assert figs["hosts.png"].legends[0].get_title().get_text() == "host"
    bottom = figs["routing.png"].axes[-1].get_legend()
    assert bottom.get_title().get_text().startswith("router \u2192 destination")


def _bbox(artist, renderer):
    return artist.get_window_extent(renderer)


@pytest.mark.parametrize("name, links, hosts", [
    ("legends", 1, 2),
    ("a_topology_with_a_rather_long_name_that_spans_much_of_the_figure_width_" * 2, 9, 30),
])
def test_titles_never_overlap_legends(tmp_path: Path, name: str, links: int, hosts: int) -> None:
    duplex = {f"L{i}": "full" for i in range(1, links + 1)}
    figs = _figures(_write(tmp_path / "run", duplex, name=name, hosts=hosts))
    for filename, fig in figs.items():
        renderer = renderer_of(fig)
        fig.canvas.draw()
        title = _bbox(fig._suptitle, renderer)
        assert title.x0 >= 0 and title.x1 <= fig.bbox.x1, filename   # wrapped if need be
        legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
        assert legends, filename
        panels_right = max(_bbox(ax.patch, renderer).x1 for ax in fig.axes)
        for legend in legends:
            box = _bbox(legend, renderer)
            assert box.y1 <= title.y0, filename              # below the title band
            assert box.x0 >= panels_right, filename          # right of the panels
            assert box.x1 <= fig.bbox.x1 + 1, filename       # inside the figure
        for ax in fig.axes:                                  # the title is above every panel
            assert _bbox(ax.patch, renderer).y1 <= title.y0, filename
            assert ax.get_tightbbox(renderer).x0 >= 0, filename   # y labels inside


def test_ids_of_255_characters_are_shortened_in_legends_and_every_figure_is_drawn(tmp_path):
    """An id may have 255 characters (docs/topology-format.md); one of 160 made the legend wider
    than the figure and matplotlib refused the layout (a traceback, no results written)."""
    from netsim import load_topology
    from netsim.run import Run
    from plot_tool import make_figures
    from plot_tool.layout import MAX_LEGEND_FRACTION, shortened

    host, router, link, flow = "H" * 255, "R" * 255, "L" * 255, "F" * 255
    topology = {"name": "long_ids", "hosts": [host, "H2"], "routers": [router],
                "links": [{"id": link, "ends": [host, router], "rate_mbps": 10, "delay_ms": 5,
                           "buffer_kb": 50},
                          {"id": "L2", "ends": [router, "H2"], "rate_mbps": 10, "delay_ms": 5,
                           "buffer_kb": 50}],
                "flows": [{"id": flow, "src": host, "dst": "H2", "data_mb": 0.1}]}
    results = Run(load_topology(topology), trace_dir=tmp_path).execute()
    results.write_summary(tmp_path)
    paths = make_figures(results, tmp_path)
    assert {p.name for p in paths} >= {"flows.png", "links.png", "hosts.png"}
    for name, fig in _figures(tmp_path).items():
        width = fig.bbox.width
        renderer = renderer_of(fig)
        legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
        for legend in legends:
            assert legend.get_window_extent(renderer).width <= MAX_LEGEND_FRACTION * width + 1
            texts = [t.get_text() for t in legend.get_texts()]
            assert any("\u2026" in text for text in texts), (name, texts)
    assert shortened("abcdefghij", 5) == "ab\u2026ij" and shortened("abc", 5) == "abc"
