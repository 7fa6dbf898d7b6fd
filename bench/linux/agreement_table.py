"""The before/after agreement table of docs/validation.md from two ``compare.py --json`` outputs.

    python bench/linux/compare.py --stack classic --netsim-root /tmp/netsim-before --json before.json
    python bench/linux/compare.py --json after.json
    python bench/linux/agreement_table.py before.json after.json > table.md

One row per case and flow: Linux's mean [min, max] of each compared figure, then netsim before
and after, a figure that disagrees in bold with a cross.  The bottleneck's mean queue goes on
the first flow's row.  Ends with the fraction of figures that agree, overall and per figure.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

FIGURES = (("goodput_mbps", "goodput Mb/s"), ("rtos", "RTOs"),
           ("queue_mean_pkts", "mean queue pkts"), ("cwnd_median_pkts", "cwnd median pkts"),
           ("share", "share"))


def fmt(v: float, fig: str) -> str:
    if fig == "share":
        return f"{100 * v:.1f} %"
    if fig == "rtos":
        return f"{v:.0f}"
    return f"{v:.2f}" if abs(v) < 10 else f"{v:.1f}" if abs(v) < 100 else f"{v:.0f}"


def cell(row: dict[str, Any] | None, fig: str) -> str:
    if row is None:
        return "n/a"
    text = fmt(row["netsim"], fig)
    return text if row["agrees"] else f"**{text}** ✗"


def linux_cell(row: dict[str, Any], fig: str) -> str:
    return (f"{fmt(row['linux_mean'], fig)} [{fmt(row['linux_min'], fig)}, "
            f"{fmt(row['linux_max'], fig)}]")


def render(before: dict[str, Any], after: dict[str, Any] | None) -> str:
    def index(doc: dict[str, Any] | None) -> dict[tuple[str, str, str], dict[str, Any]]:
        out = {}
        for r in (doc or {}).get("rows", []):
            flow = r["flow"] or "F1"          # the queue goes on the first flow's row
            if r["figure"] == "queue_mean_pkts":
                flow = next(x["flow"] for x in doc["rows"]       # type: ignore[index]
                            if x["case"] == r["case"] and x["flow"])
            out[(r["case"], flow, r["figure"])] = r
        return out

    b, a = index(before), index(after)
    keys = list(dict.fromkeys((c, f) for (c, f, _) in b))
    head = "| case | flow | " + " | ".join(
        f"{name}: Linux / before / after" for _, name in FIGURES) + " |"
    lines = [head, "|---|---|" + "---|" * len(FIGURES)]
    for case, flow in keys:
        cells = []
        for fig, _ in FIGURES:
            rb = b.get((case, flow, fig))
            if rb is None:
                cells.append("")
                continue
            cells.append(f"{linux_cell(rb, fig)} / {cell(rb, fig)} / "
                         f"{cell(a.get((case, flow, fig)), fig) if after else 'n/a'}")
        lines.append(f"| {case} | {flow} | " + " | ".join(cells) + " |")
    lines.append("")
    for label, idx in (("before", b), ("after", a)):
        if not idx:
            continue
        rows = list(idx.values())
        ok = sum(r["agrees"] for r in rows)
        per = ", ".join(
            f"{name} {sum(r['agrees'] for r in rows if r['figure'] == fig)}/"
            f"{sum(r['figure'] == fig for r in rows)}" for fig, name in FIGURES)
        lines.append(f"- **{label}**: {ok} of {len(rows)} figures agree "
                     f"({100 * ok / len(rows):.0f} %): {per}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not 1 <= len(args) <= 2:
        print("usage: agreement_table.py BEFORE.json [AFTER.json]", file=sys.stderr)
        return 2
    before = json.loads(Path(args[0]).read_text())
    after = json.loads(Path(args[1]).read_text()) if len(args) > 1 else None
    sys.stdout.write(render(before, after))
    return 0


if __name__ == "__main__":
    sys.exit(main())
