"""The release of netsim, in one place: the package metadata (pyproject.toml), ``--version`` and
the results (summary.json, iperf3.json) read it from here. A module of its own, importing
nothing, so that any module can read it without importing the package's API."""
__version__ = "0.1.0"
