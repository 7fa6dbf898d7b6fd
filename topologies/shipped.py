"""The topology files shipped with netsim, found by name: one rule for the command line and sweeps.

A shipped topology is named as it is listed (``test_case_2``, ``lossy_link.json``,
``examples/websearch``): a bare name, with no directory but ``examples/``, that names a regular
``.json`` file of this package's directory. Anything else is a path of the user's and is only
ever read as such: ``../../etc/passwd`` is not looked up here (a sweep's ``"topology"`` once
walked out of this directory that way), nor ``spec.py`` (which read this package's own source
as a topology) nor ``test_case_0.json/``.
"""
from __future__ import annotations

import os
from pathlib import Path

SHIPPED_DIR = Path(__file__).resolve().parent
EXAMPLES = "examples/"


def is_bare_name(name: str) -> bool:
    """Whether `name` is written as a shipped topology's name (``lossy_link``,
    ``examples/websearch``, with or without .json) rather than as a path of the user's
    (``./lossy_link``, ``topologies/lossy_link.json``, ``/tmp/x.json``, ``..``)."""
    rest = name[len(EXAMPLES):] if name.startswith(EXAMPLES) else name
    separators = [sep for sep in ("/", os.sep, os.altsep) if sep]
    return rest not in ("", ".", "..") and not any(sep in rest for sep in separators) \
        and "\0" not in rest


def shipped_file(name: str) -> Path | None:
    """The shipped topology file `name` names (`is_bare_name`, with or without .json), or None."""
    if not is_bare_name(name):
        return None
    path = SHIPPED_DIR / (name if name.endswith(".json") else f"{name}.json")
    try:
        if path.is_file() and SHIPPED_DIR in path.resolve().parents:
            return path
    except (OSError, ValueError):          # a name too long for the file system
        pass
    return None


def shipped_names() -> list:
    """Every shipped topology's name, sorted (those of examples/ as ``examples/NAME``)."""
    return sorted([p.stem for p in SHIPPED_DIR.glob("*.json")]
                  + [f"{EXAMPLES}{p.stem}" for p in SHIPPED_DIR.glob(f"{EXAMPLES}*.json")])
