"""``python -m netsim ...``: the same command line as ``python initializer.py ...``."""
from netsim.cli import entry

entry()
