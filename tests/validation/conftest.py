"""The validation tests compare whole simulations with published theory; they build their
networks with the shared builders of tests/networks.py. Every test of this folder is a soak test.
"""
from __future__ import annotations


def pytest_collection_modifyitems(config, items):
    """Every validation test is a soak test (whole simulations, seconds each): the `slow` marker
    keeps them out of the default run; CI runs them with `python -m pytest -m slow`."""
    import pytest
    here = __file__.rsplit("/", 1)[0]
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(pytest.mark.slow)
