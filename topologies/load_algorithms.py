"""Algorithm names and parameters: the top-level `algorithms` block, a flow's `algorithm` and
`params`, and the command line's --algorithm override (docs/topology-format.md, "`algorithms`").

Names are looked up in `flows.ALGORITHMS` only: a topology file never loads code.
"""
from __future__ import annotations

from flows import ALGORITHMS
from topologies.bounds import time_problem
from topologies.load_fields import TopologyError, Where, as_object, unknown
from topologies.spec import DEFAULT_ALGORITHM
from topologies.validation import quote, show, suggestion


def unknown_algorithm(name) -> str:
    """`unknown` for an algorithm name, pointing at --plugin (topologies never load code)."""
    return (unknown("algorithm", name, ALGORITHMS)
            + "; an algorithm of your own is loaded with --plugin FILE.py")


def algorithm_params(where: Where, algorithm: str, block) -> dict:
    """Validated parameter overrides of `algorithm` from the params object `block` (at `where`):
    each accepted by the class's `param_problem`, and a time (a name ending in _s or _ms) within
    the bounds of every time value (topologies/bounds.py)."""
    cls = ALGORITHMS[algorithm]
    known = tuple(cls.PARAMETERS)
    checked = {}
    for key, value in block.items():
        if key not in cls.PARAMETERS:
            if not known:
                raise where.error(f"unknown parameter {show(key)}: algorithm "
                                  f"{quote(algorithm)} has no parameters")
            raise where.error(f"unknown parameter {show(key)} of algorithm {quote(algorithm)}"
                              f"{suggestion(key, known)}; known: {', '.join(sorted(known))}")
        problem = cls.param_problem(key, value)
        if not problem and key.endswith(("_s", "_ms")) and not key.endswith("_per_s"):
            problem = time_problem(value, unit="ms" if key.endswith("_ms") else "s",
                                   zero=False)          # a time (topologies/bounds.py)
        if problem:
            raise where.field_error(key, f"{problem}, got {show(value)}")
        checked[key] = value
    return checked


def read_file_algorithms(top: Where, data: dict) -> dict:
    if "algorithms" not in data:
        return {}
    block = as_object(top, "algorithms", data["algorithms"])
    where = Where(top.source, "algorithms")
    result = {}
    for name, params in block.items():
        if name not in ALGORITHMS:
            raise where.error(unknown_algorithm(name))
        params = as_object(where, name, params, "an object of parameters")
        result[name] = algorithm_params(where.inner(name), name, params)
    return result


def flow_algorithm(where: Where, item: dict, override: str | None, file_algorithms: dict):
    """(effective algorithm, its merged params) of a flow or workload `item`, following the
    --algorithm `override` rules; `file_algorithms`: the file's per-algorithm parameters."""
    algorithm = item.get("algorithm", DEFAULT_ALGORITHM)
    if not isinstance(algorithm, str):
        raise where.field_error("algorithm", f"expected an algorithm name, got {show(algorithm)}")
    if algorithm not in ALGORITHMS:
        raise where.field_error("algorithm", unknown_algorithm(algorithm))
    own = {}
    if "params" in item:
        block = as_object(where, "params", item["params"], "an object of parameters")
        own = algorithm_params(where.inner("params"), algorithm, block)
    effective = override or algorithm
    params = dict(ALGORITHMS[effective].PARAMETERS)
    params.update(file_algorithms.get(effective, {}))
    if effective == algorithm:
        params.update(own)
    problem = ALGORITHMS[effective].params_problem(params)
    if problem:
        raise where.field_error("params", problem)
    return effective, params


def check_override(algorithm, named: str = "algorithm") -> str | None:
    """`algorithm` (every flow's, overriding the file's), if a known one; `named` is how the
    caller gave it (``--algorithm`` on the command line, ``algorithm`` to `load_topology`)."""
    if algorithm is None:
        return None
    if not isinstance(algorithm, str):
        raise TopologyError(f"{named}: expected an algorithm name, got {show(algorithm)}")
    if algorithm not in ALGORITHMS:
        raise TopologyError(f"{named}: {unknown_algorithm(algorithm)}")
    return algorithm


