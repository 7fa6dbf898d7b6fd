"""Drawing what changed on the plotted links (`plot_tool.link_changes.LinkChanges`), the same in
links.png and routing.png: each link's down spans shaded in the colour of its first line across
the panels, and a time-varying link's capacity as a dashed step line in the rate panel, in a
darker shade of that colour. Each returns its legend entries; the lines that fall to 0, or step
down without the link being saturated, then say why.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from matplotlib.colors import to_rgb
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from plot_tool.link_changes import LinkChanges

# the capacity line: dashed, over the rate lines (a saturated link's rate runs along it)
CAPACITY_DASH = (0, (5.0, 2.0))
CAPACITY_WIDTH = 1.5
CAPACITY_SHADE = 0.6          # its colour: the link's, each component times this


def shade_down_spans(axes: Sequence[Any], changes: Sequence[LinkChanges],
                     colors: Mapping[str, str | None]) -> list[Any]:
    """Each link's down spans shaded in its colour over every panel of `axes`, with a legend
    entry per link that failed (`LinkChanges.down_label`)."""
    handles: list[Any] = []
    for change in changes:
        if not change.down_s:
            continue
        color = colors.get(change.key)
        for ax in axes:
            for start, end in change.down_s:
                ax.axvspan(start, end, color=color, alpha=0.12, linewidth=0, zorder=0.5)
        handles.append(Patch(facecolor=color, alpha=0.25, edgecolor="none",
                             label=change.down_label))
    return handles


def draw_capacities(ax: Any, changes: Sequence[LinkChanges],
                    colors: Mapping[str, str | None]) -> list[Any]:
    """Each time-varying link's capacity as a dashed step line in `ax` (a rate panel), with a
    legend entry per link ("L1 capacity (rate_schedule)")."""
    handles: list[Any] = []
    for change in changes:
        if change.capacity_time is None or change.capacity_mbps is None:
            continue
        color = capacity_color(colors.get(change.key))
        ax.plot(change.capacity_time, change.capacity_mbps, drawstyle="steps-post", color=color,
                linestyle=CAPACITY_DASH, linewidth=CAPACITY_WIDTH, zorder=2.5,
                label="_nolegend_")
        handles.append(Line2D([], [], color=color, linestyle=CAPACITY_DASH,
                              linewidth=CAPACITY_WIDTH, label=change.capacity_label))
    return handles


def capacity_color(color: str | None) -> str:
    """A darker shade of a link's colour (its capacity line shows over its rate line)."""
    r, g, b = (CAPACITY_SHADE * c for c in to_rgb(color or "0.5"))
    return f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"
