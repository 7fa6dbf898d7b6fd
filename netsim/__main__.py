"""``python -m netsim ...``: the same command line as ``python initializer.py ...``."""
from netsim.command import entry

entry()
