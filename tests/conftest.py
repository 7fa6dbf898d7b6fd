"""Shared fixtures: paths of the shipped topologies."""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOPOLOGIES = sorted((ROOT / "topologies").glob("*.json"))


@pytest.fixture
def root() -> Path:
    return ROOT

# Property tests are deterministic: the same examples on every machine and every run (no local
# example database), so a red or green result never depends on where the suite ran.
from hypothesis import settings as _hypothesis_settings  # noqa: E402

_hypothesis_settings.register_profile("deterministic", derandomize=True, database=None,
                                      print_blob=True)
_hypothesis_settings.load_profile("deterministic")
