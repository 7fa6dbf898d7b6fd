"""Characters the figures' font cannot draw, said once.

matplotlib warns once per character and text it cannot find in its font ("Glyph 38142 (...)
missing from font(s) DejaVu Sans."), each warning two lines naming matplotlib's source, and
draws an empty box in its place. Ids in another script (a host called 主机1) gave a dozen such
lines per run. `glyphs_reported` collects them while figures are drawn and logs one line naming
the characters, the font and what to do; any other warning passes through unchanged.
"""
from __future__ import annotations

import logging
import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

log = logging.getLogger(__name__)

# matplotlib's text (matplotlib/_text_helpers.py, warn_on_missing_glyph)
_MISSING = re.compile(r"Glyph (\d+) .*missing from (?:current font|font\(s\) (.+?))\.?$")
SHOWN_CHARACTERS = 12           # characters named in the line (then "and N more")


def missing_glyph(message: str) -> tuple[str, str] | None:
    """(the character, the font) of matplotlib's missing-glyph warning `message`, else None."""
    found = _MISSING.match(message)
    if found is None:
        return None
    return chr(int(found.group(1))), found.group(2) or "the current font"


def describe(characters: dict, fonts: dict) -> str:
    """The one line for the missing `characters` (in the order met) of `fonts`."""
    first = list(characters)[:SHOWN_CHARACTERS]
    more = len(characters) - len(first)
    shown = ", ".join(first) + (f" and {more} more" if more else "")
    plural = "s" if len(characters) > 1 else ""
    return (f"the figures' font ({', '.join(fonts)}) has no glyph for {len(characters)} "
            f"character{plural} of their texts ({shown}): each is drawn as an empty "
            f"box; a font that has them, installed and named after the figures' font in "
            f"matplotlib's font.family setting, draws them (a matplotlibrc line such as "
            f"'font.family: DejaVu Sans, Noto Sans CJK JP')")


@contextmanager
def glyphs_reported() -> Iterator[None]:
    """Draw figures inside: matplotlib's missing-glyph warnings become one logged line at the
    end (`describe`); other warnings are shown as they would have been."""
    characters: dict = {}
    fonts: dict = {}
    with warnings.catch_warnings(record=True) as caught:
        try:
            yield
        finally:
            others = []
            for item in caught:
                found = missing_glyph(str(item.message)) if item.category is UserWarning \
                    else None
                if found is None:
                    others.append(item)
                    continue
                characters.setdefault(found[0], None)
                fonts.setdefault(found[1], None)
    for item in others:         # (outside the block: the filters in force again decide)
        warnings.warn_explicit(item.message, item.category, item.filename, item.lineno,
                               source=item.source)
    if characters:
        log.warning(describe(characters, fonts))
