"""Reliable flows: the transport (`flows.transport`) and one module per congestion-control algorithm."""
from __future__ import annotations

import importlib
from collections.abc import Iterator, MutableMapping

from flows.congestion import CongestionControl, check_algorithm_class

# The algorithms netsim ships, in the order they are listed: name -> "module:class". A module is
# imported when its algorithm is first looked up, so a run imports the algorithms its flows use.
BUILTIN_CLASSES = {
    "tahoe": "flows.tahoe:Tahoe", "reno": "flows.reno:Reno", "newreno": "flows.newreno:NewReno",
    "fast": "flows.fast:Fast", "vegas": "flows.vegas:Vegas", "cubic": "flows.cubic:Cubic",
    "bbr": "flows.bbr:Bbr", "dctcp": "flows.dctcp:Dctcp",
}


class AlgorithmTable(MutableMapping):
    """Every algorithm a topology or the CLI can name: name -> CongestionControl subclass. A
    built-in's class is imported when first looked up (`BUILTIN_CLASSES`); names, `in` and
    `len` import nothing. Others are added by `register_algorithm`."""

    def __init__(self, lazy: dict) -> None:
        self._classes: dict = {}
        self._lazy = dict(lazy)
        self._names = dict.fromkeys(lazy)          # (an ordered set: listing order)

    def __getitem__(self, name):
        cls = self._classes.get(name)
        if cls is None:
            module, _, attribute = self._lazy[name].partition(":")    # (KeyError: unknown)
            cls = self._classes[name] = getattr(importlib.import_module(module), attribute)
        return cls

    def __setitem__(self, name, cls) -> None:
        self._lazy.pop(name, None)
        self._classes[name] = cls
        self._names[name] = None

    def __delitem__(self, name) -> None:
        if name not in self._names:
            raise KeyError(name)
        self._lazy.pop(name, None)
        self._classes.pop(name, None)
        del self._names[name]

    def __contains__(self, name) -> bool:
        return name in self._names

    def __iter__(self) -> Iterator:
        return iter(list(self._names))

    def __len__(self) -> int:
        return len(self._names)

    def __repr__(self) -> str:
        return f"AlgorithmTable({', '.join(self._names)})"


ALGORITHMS: MutableMapping[str, type[CongestionControl]] = AlgorithmTable(BUILTIN_CLASSES)

_CLASS_NAMES = {where.partition(":")[2]: name for name, where in BUILTIN_CLASSES.items()}


def __getattr__(attribute: str):
    """``flows.Reno`` and the other built-in classes, imported when first asked for."""
    name = _CLASS_NAMES.get(attribute)
    if name is None:
        raise AttributeError(f"module 'flows' has no attribute {attribute!r}")
    return ALGORITHMS[name]

# The algorithms netsim ships; others are registered at run time (`register_algorithm`: plugin
# files given with --plugin, packages' `netsim.algorithms` entry points; netsim/plugins.py).
BUILTIN_ALGORITHMS = frozenset(BUILTIN_CLASSES)


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
