"""Reliable flows: the transport (`flows.transport`) and one module per congestion-control algorithm."""
from __future__ import annotations

from flows.bbr import Bbr
from flows.congestion import CongestionControl, check_algorithm_class
from flows.cubic import Cubic
from flows.dctcp import Dctcp
from flows.fast import Fast
from flows.newreno import NewReno
from flows.reno import Reno
from flows.tahoe import Tahoe
from flows.vegas import Vegas

# Every algorithm a topology or the CLI can name.
ALGORITHMS: dict[str, type[CongestionControl]] = {
    cls.name: cls for cls in (Tahoe, Reno, NewReno, Fast, Vegas, Cubic, Bbr, Dctcp)}

# The algorithms netsim ships; others are registered at run time (`register_algorithm`: plugin
# files given with --plugin, packages' `netsim.algorithms` entry points; netsim/plugins.py).
BUILTIN_ALGORITHMS = frozenset(ALGORITHMS)


def register_algorithm(cls: type) -> None:
    """Make the CongestionControl subclass `cls` usable under its `name`. Raises ValueError
    when the name is not a non-empty string, is a built-in's, or another class's already, and
    when the class fails `flows.congestion.check_algorithm_class` (no growth hook overridden, a
    misspelt hook, a class attribute the transport cannot use)."""
    if not (isinstance(cls, type) and issubclass(cls, CongestionControl)):
        raise ValueError(f"{cls!r} is not a subclass of flows.congestion.CongestionControl")
    name = cls.__dict__.get("name")
    if name is not None and not isinstance(name, str):
        raise ValueError(f"class {cls.__name__}: name must be a string, got {name!r} "
                         f"({type(name).__name__}): set name = \"...\" in its class body")
    if not name or name == CongestionControl.name:
        raise ValueError(f"class {cls.__name__} has no name: set name = \"...\" in its class body")
    if name in BUILTIN_ALGORITHMS:
        raise ValueError(f"class {cls.__name__}: name \"{name}\" is a built-in algorithm's; "
                         f"choose another")
    problem = check_algorithm_class(cls)
    if problem is not None:
        raise ValueError(problem)
    known = ALGORITHMS.get(name)
    if known is not None and known is not cls and (known.__module__, known.__qualname__) != (
            cls.__module__, cls.__qualname__):
        raise ValueError(f"class {cls.__name__}: name \"{name}\" is already taken by "
                         f"{known.__module__}.{known.__qualname__}")
    ALGORITHMS[name] = cls


__all__ = ["ALGORITHMS", "BUILTIN_ALGORITHMS", "CongestionControl", "register_algorithm"]
