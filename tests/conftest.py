"""Shared fixtures: paths of the shipped topologies."""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOPOLOGIES = sorted((ROOT / "topologies").glob("*.json"))


@pytest.fixture
def root() -> Path:
    return ROOT
