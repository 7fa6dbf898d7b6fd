"""The drops panel of links.png shows every lost packet, by cause (issue 9, part 6).

links.csv has one column per cause of loss: ``drops`` (buffer full), ``impairment_drops`` (random
loss from the link's ``loss_rate``/``loss_model``) and ``failure_drops`` (link down); any other
numeric ``*_drops`` column is drawn too. A panel with nothing lost says so.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from plot_tool import make_figures, read_results
from plot_tool.entity_series import link_series_of
from plot_tool.png import render
from plot_tool.png.panels import LOSS_AND_MARK_HEADER, LOSS_HEADER, NO_LOSS_TEXT
from plot_tool.run_data import plan_figures
from plot_tool.series import IMPAIRMENT_LOSS, OTHER_LOSS_STYLE

TIMES = (0.1, 0.2, 0.3, 0.4, 0.5)
HEADER = ("time_s,link,direction,rate_mbps,buffer_kb,buffer_pkts,backlog_kb,drops,failure_drops,"
          "impairment_drops,routing_rate_mbps")


def _summary(*, half_duplex: bool = False) -> dict:
    return {"topology": "lossy", "units": {"system": "si", "bits_per_mbit": 1000000,
                                           "bytes_per_kb": 1000, "bytes_per_mb": 1000000},
            "interval_s": 0.1, "end_time_s": 0.5,
            "links": {"L1": {"ends": ["H1", "H2"], "duplex": "half" if half_duplex else "full"}},
            "flows": {}, "hosts": {}}


def write_lossy(out: Path, *, drops=(0,) * 5, impairment=(1, 0, 2, 0, 3), failure=(0,) * 5,
                reverse_impairment=(0,) * 5, half_duplex: bool = False,
                extra: dict | None = None, without: tuple[str, ...] = ()) -> Path:
    """A results directory with one link L1 (H1->H2 and H2->H1) and the given losses per
    interval of H1->H2 (the reverse direction loses `reverse_impairment` only); `extra` adds
    columns (name -> H1->H2 values; 0 for H2->H1), `without` leaves columns out."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(_summary(half_duplex=half_duplex)))
    names = HEADER.split(",") + list(extra or {})
    rows = []
    for i, t in enumerate(TIMES):
        forward = dict(time_s=t, link="L1", direction="H1->H2", rate_mbps=8, buffer_kb=2,
                       buffer_pkts=1, backlog_kb=2.5, drops=drops[i], failure_drops=failure[i],
                       impairment_drops=impairment[i], routing_rate_mbps=0,
                       **{k: v[i] for k, v in (extra or {}).items()})
        reverse = dict(time_s=t, link="L1", direction="H2->H1", rate_mbps=0.2, buffer_kb=0,
                       buffer_pkts=0, backlog_kb=0, drops=0, failure_drops=0,
                       impairment_drops=reverse_impairment[i], routing_rate_mbps=0,
                       **{k: 0 for k in (extra or {})})
        rows += [forward, reverse]
    keep = [n for n in names if n not in without]
    lines = [",".join(keep)] + [",".join(str(row[n]) for n in keep) for row in rows]
    (out / "links.csv").write_text("\n".join(lines) + "\n")
    (out / "flows.csv").write_text("time_s,flow,send_rate_mbps,recv_rate_mbps,window_pkts,"
                                   "rtt_ms\n")
    (out / "hosts.csv").write_text("time_s,host,send_rate_mbps,recv_rate_mbps\n")
    return out


def _drops_panel(results_dir: Path):
    """The links figure of `results_dir`, drawn: (figure, drops axes, legend texts)."""
    job = plan_figures(read_results(results_dir))[0]
    assert job.filename == "links.png"
    fig = render(job)
    texts = [t.get_text() for t in fig.legends[0].get_texts()] if fig.legends else []
    return fig, fig.axes[1], texts


def _styled(ax, style: str) -> list:
    return [line for line in ax.get_lines() if line.get_linestyle() == style]


def test_random_losses_are_drawn(tmp_path: Path) -> None:
    fig, ax, legend = _drops_panel(write_lossy(tmp_path / "run"))
    dotted = _styled(ax, IMPAIRMENT_LOSS.linestyle)
    assert len(dotted) == 2                                   # one per link direction
    forward, reverse = dotted
    # each count held over its interval: a first point at the start of the first interval
    assert forward.get_ydata().tolist() == [1, 1, 0, 2, 0, 3]
    assert forward.get_xdata().tolist() == pytest.approx([0.0, *TIMES])
    assert forward.get_drawstyle() == "steps-pre"
    assert reverse.get_ydata().tolist() == [0] * 6
    assert not _styled(ax, "-")                               # nothing lost to a full buffer
    assert legend == ["L1 H1->H2", "L1 H2->H1", LOSS_HEADER, "random loss (impairment): 6"]
    assert ax.get_ylim()[1] >= 3
    assert not [t for t in ax.texts if t.get_text() == NO_LOSS_TEXT]


def test_every_cause_has_its_line_style(tmp_path: Path) -> None:
    run = write_lossy(tmp_path / "run", drops=(0, 4, 0, 0, 0), failure=(0, 0, 0, 5, 1))
    _, ax, legend = _drops_panel(run)
    assert [line.get_ydata().tolist() for line in _styled(ax, "-")] == \
        [[0, 0, 4, 0, 0, 0], [0] * 6]
    assert _styled(ax, ":")[0].get_ydata().tolist() == [1, 1, 0, 2, 0, 3]
    assert [line.get_ydata().tolist() for line in _styled(ax, "--")] == \
        [[0, 0, 0, 0, 5, 1], [0] * 6]
    assert legend[2:] == [LOSS_HEADER, "buffer full: 4", "random loss (impairment): 6",
                          "link down: 6"]
    colors = [line.get_color() for line in ax.get_lines()]
    assert colors == [colors[0], colors[1]] * 3                # each line keeps its colour


def test_nothing_lost_says_so(tmp_path: Path) -> None:
    fig, ax, legend = _drops_panel(write_lossy(tmp_path / "run", impairment=(0,) * 5))
    assert not ax.get_lines()
    assert [t.get_text() for t in ax.texts] == [NO_LOSS_TEXT]
    assert ax.get_ylim() == (0, 1) and ax.get_yticks().tolist() == [0]
    assert LOSS_HEADER not in legend
    assert ax.get_ylabel() == "packets lost per\n0.1 s interval"


def test_other_loss_columns_are_drawn(tmp_path: Path) -> None:
    """A future links.csv column such as policer_drops is a cause of its own (dash-dot)."""
    run = write_lossy(tmp_path / "run", impairment=(0,) * 5,
                      extra={"policer_drops": (0, 0, 7, 0, 0)})
    _, ax, legend = _drops_panel(run)
    lines = _styled(ax, OTHER_LOSS_STYLE)
    assert [line.get_ydata().tolist() for line in lines] == [[0, 0, 0, 7, 0, 0], [0] * 6]
    assert legend[2:] == [LOSS_HEADER, "policer_drops: 7"]
    assert len(ax.get_lines()) == 2


def test_queue_discipline_drops_and_marks_are_drawn(tmp_path: Path) -> None:
    """aqm_drops and CE marks (queue disciplines) have their own lines and legend entries."""
    run = write_lossy(tmp_path / "run", impairment=(0,) * 5,
                      extra={"aqm_drops": (0, 0, 7, 0, 0), "marks": (9, 9, 9, 9, 9)})
    _, ax, legend = _drops_panel(run)
    assert legend[2:] == [LOSS_AND_MARK_HEADER, "dropped by the queue discipline: 7",
                          "CE marked (not lost): 45"]
    assert ax.get_ylabel() == "packets lost or CE-marked\nper 0.1 s interval"
    assert len(ax.get_lines()) == 4


def test_half_duplex_link_sums_its_directions(tmp_path: Path) -> None:
    run = write_lossy(tmp_path / "run", half_duplex=True, reverse_impairment=(0, 1, 0, 0, 0))
    _, ax, legend = _drops_panel(run)
    (line,) = _styled(ax, ":")
    assert line.get_ydata().tolist() == [1, 1, 1, 2, 0, 3]
    assert legend[-1] == "random loss (impairment): 7"


def test_results_without_impairment_column(tmp_path: Path) -> None:
    """Results written before impairment_drops existed: buffer drops only, as before."""
    run = write_lossy(tmp_path / "run", drops=(0, 2, 0, 0, 0), without=("impairment_drops",))
    rs = read_results(run)
    assert "impairment_drops" not in rs.links
    series = link_series_of(rs.summary, rs.links, ["L1"])
    assert all(s.values["impairment_drops"].tolist() == [0] * 5 for s in series)
    _, ax, legend = _drops_panel(run)
    assert legend[2:] == [LOSS_HEADER, "buffer full: 2"]
    assert len(ax.get_lines()) == 2 and len(_styled(ax, "-")) == 2


def test_simulated_lossy_link(tmp_path: Path, root: Path) -> None:
    """End to end: the shipped lossy_link (1 MB instead of 10, 2 % loss) through results.write
    and make_figures; the random losses drawn add up to the summary's."""
    from netsim import load_topology, simulate

    data = json.loads((root / "topologies" / "lossy_link.json").read_text())
    data["flows"][0]["data_mb"] = 1
    data["links"][0]["impairments"]["H1->H2"]["loss_rate"] = 0.02
    results = simulate(load_topology(data))
    results.write(tmp_path / "run")
    lost = results.summary["links"]["L1"]["directions"]["H1->H2"]["impairment_drops"]
    assert lost > 0
    _, ax, legend = _drops_panel(tmp_path / "run")
    drawn = sum(np.nansum(line.get_ydata()[1:]) for line in _styled(ax, ":"))
    assert drawn == lost
    assert f"random loss (impairment): {lost}" in legend
    assert [p.name for p in make_figures(tmp_path / "run")] == ["links.png", "flows.png",
                                                               "hosts.png"]
