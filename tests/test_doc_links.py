"""Every relative link of the documentation leads somewhere: the file exists and, for a link into
a Markdown file, the heading its anchor names exists (GitHub's anchors: the heading lower-cased,
punctuation other than hyphens dropped, spaces as hyphens, a repeated heading numbered)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "bench" / "README.md"]
FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.M)


def anchor_of(heading: str) -> str:
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set:
    seen: dict = {}
    out = set()
    for heading in HEADING.findall(FENCE.sub("", path.read_text(encoding="utf-8"))):
        slug = anchor_of(heading)
        count = seen.get(slug, 0)
        out.add(slug if count == 0 else f"{slug}-{count}")
        seen[slug] = count + 1
    return out


def test_anchors_follow_githubs_rule():
    assert anchor_of("Routing (`routing/static.py`, `routing/ecmp.py`)") == \
        "routing-routingstaticpy-routingecmppy"
    assert anchor_of("Event loop: simulator/engine.py") == "event-loop-simulatorenginepy"


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_lead_to_a_file_and_heading(document):
    broken = []
    for target in LINK.findall(FENCE.sub("", document.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):
            continue                                   # http:, https:, mailto:, file:
        path, _, anchor = target.partition("#")
        linked = (document.parent / path).resolve() if path else document
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target}: no such heading")
    assert broken == []
