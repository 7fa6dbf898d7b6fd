"""What every section of a topology file shares: `TopologyError`, `Where` a problem is, and the
checks of one field.

A problem is reported as one line naming the file, the entry, the field, what was expected and
what was found (see `topologies.loader`). `Where` builds that line; the checks (`number`,
`string`, `boolean`, `choice`, `as_object`, `as_list`, `check_fields`) raise it. `entries`
walks a list of objects with ids (links, flows, workloads), and `node_ref`/`host_ref` check a
reference to a node.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from topologies.bounds import time_problem
from topologies.validation import InputError, id_problem, known_list, quote, show, suggestion


class TopologyError(InputError):
    """A topology file (or dict) is unreadable or invalid (an `InputError`, so a `ValueError`).

    The message is one user-facing line naming the file, the entry (``links[1] "L2"``), the field,
    what was expected and what was found, with the closest valid name when a name looks mistyped.
    Input characters that could break the line are escaped.
    """


# -- message helpers -------------------------------------------------------------------------------

def unknown(kind: str, name, known, *, list_known: bool = True) -> str:
    """'unknown field "x" (did you mean "y"?); known: a, b' (the list only when asked or no match;
    the ids of a reference, listed only then, as many as fit one line: `known_list`)."""
    hint = suggestion(name, known)
    message = f"unknown {kind} {show(name)}{hint}"
    if known and (list_known or not hint):
        names = sorted(str(k) for k in known)
        message += "; known: " + (", ".join(names) if list_known else known_list(names))
    return message


def one_of(choices) -> str:
    quoted = [quote(c) for c in choices]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


class Where:
    """Where a problem is: the file, the entry, and (inside the entry) the object being read.

    The entry is given as its text (``top level``, ``events[2]``) or, for an object of a list
    of objects with ids (`entries`), as (list name, index, id): its text (``links[1] "L2"``)
    is then written only when a message names it (most entries have no problem)."""

    __slots__ = ("source", "given", "block")

    def __init__(self, source: str, entry, block: str = ""):
        self.source = source
        self.given = entry   # the entry's text, or (list name, index, id)
        self.block = block   # dotted field path of a nested object inside the entry ("transport")

    @property
    def entry(self) -> str:
        """The entry as messages name it."""
        given = self.given
        if type(given) is tuple:
            key, index, item_id = given
            return f"{key}[{index}] {quote(item_id)}"
        return given

    def error(self, message: str) -> TopologyError:
        """A problem with the object itself (unknown/missing field, inconsistency)."""
        head = f"{self.source}: {self.entry}"
        if self.block:
            head += f': field "{self.block}"'
        return TopologyError(f"{head}: {message}")

    def field_error(self, name: str, message: str) -> TopologyError:
        return TopologyError(f'{self.source}: {self.entry}: field "{self.path(name)}": {message}')

    def path(self, name: str) -> str:
        return f"{self.block}.{name}" if self.block else name

    def inner(self, name: str) -> Where:
        return Where(self.source, self.given, self.path(name))


# -- field checks ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Rule:
    """A numeric constraint: value > minimum (or >= when inclusive), optionally an integer, and
    optionally value <= maximum (or < when not max_inclusive). A value past the maximum is
    refused with `above` when given (e.g. "at most 1e+12 (1e18 bit/s)"), so that a value below
    the minimum keeps the plain `expected` ("a positive number")."""

    expected: str
    minimum: float
    inclusive: bool
    integer: bool = False
    maximum: float | None = None
    max_inclusive: bool = True
    above: str | None = None


POSITIVE = Rule("a positive number", 0, False)
NON_NEGATIVE = Rule("a number >= 0", 0, True)
POSITIVE_INT = Rule("a positive integer", 1, True, integer=True)
NON_NEGATIVE_INT = Rule("an integer >= 0", 0, True, integer=True)
PROBABILITY = Rule("a number in [0, 1]", 0, True, maximum=1, max_inclusive=True)
LOSS_PROBABILITY = Rule("a number in [0, 1)", 0, True, maximum=1, max_inclusive=False)
TRANSITION_PROBABILITY = Rule("a number in (0, 1]", 0, False, maximum=1, max_inclusive=True)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_finite(value) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:   # an int too large for a float
        return False


def number(where: Where, name: str, value, rule: Rule, *, nullable: bool = False):
    """Check one numeric field; returns float (int for integer rules) or None."""
    kind = type(value)     # the common case first: a finite float or int within the rule
    if ((kind is float and value - value == 0.0 and not rule.integer)
            or (kind is int and _is_finite(value))):
        low_ok = value >= rule.minimum if rule.inclusive else value > rule.minimum
        high_ok = (rule.maximum is None or
                   (value <= rule.maximum if rule.max_inclusive else value < rule.maximum))
        if low_ok and high_ok:
            _check_time(where, name, value)
            return value if rule.integer else float(value)
    return _number_checked(where, name, value, rule, nullable)


def _number_checked(where: Where, name: str, value, rule: Rule, nullable: bool):
    """`number`, every check in order: None, a null or any problem (raised)."""
    or_null = " or null" if nullable else ""
    if value is None and nullable:
        return None
    if not _is_number(value):
        kind = "an integer" if rule.integer else "a number"
        raise where.field_error(name, f"expected {kind}{or_null}, got {show(value)}")
    if not _is_finite(value):
        raise where.field_error(name, f"expected a finite number{or_null}, got {show(value)}")
    if rule.integer and not isinstance(value, int):
        raise where.field_error(name, f"expected an integer{or_null}, got {show(value)}")
    low_ok = value >= rule.minimum if rule.inclusive else value > rule.minimum
    high_ok = (rule.maximum is None or
               (value <= rule.maximum if rule.max_inclusive else value < rule.maximum))
    if not (low_ok and high_ok):
        expected = rule.above if low_ok and rule.above else rule.expected
        raise where.field_error(name, f"expected {expected}{or_null}, got {show(value)}")
    _check_time(where, name, value)
    return int(value) if rule.integer else float(value)


def _check_time(where: Where, name: str, value) -> None:
    """A time field (named *_s, *_ms or cost) must stay resolvable (topologies/bounds.py)."""
    unit = ("s" if name.endswith("_s") and not name.endswith("_per_s") else
            "ms" if name.endswith("_ms") or name == "cost" else None)
    if unit is not None:
        problem = time_problem(value, unit=unit)
        if problem:
            raise where.field_error(name, f"{problem}, got {show(value)}")


def scaled(where: Where, name: str, value: float, factor: float) -> float:
    result = value * factor
    if not math.isfinite(result):
        raise where.field_error(name, f"value {show(value)} is too large")
    return result


def string(where: Where, name: str, value, *, allow_empty: bool = False) -> str:
    if not isinstance(value, str) or (not value and not allow_empty):
        expected = "a string" if allow_empty else "a non-empty string"
        raise where.field_error(name, f"expected {expected}, got {show(value)}")
    return value


def boolean(where: Where, name: str, value) -> bool:
    if not isinstance(value, bool):
        raise where.field_error(name, f"expected true or false, got {show(value)}")
    return value


def choice(where: Where, name: str, value, choices) -> str:
    if not isinstance(value, str) or value not in choices:
        raise where.field_error(name, f"expected {one_of(choices)}, got {show(value)}"
                                      f"{suggestion(value, choices)}")
    return value


def as_object(where: Where, name: str, value, what: str = "an object") -> dict:
    if not isinstance(value, dict):
        raise where.field_error(name, f"expected {what}, got {show(value)}")
    return value


def as_list(where: Where, name: str, value, what: str) -> list:
    if not isinstance(value, (list, tuple)):
        raise where.field_error(name, f"expected {what}, got {show(value)}")
    return list(value)


def check_fields(where: Where, obj: dict, allowed, required=()) -> None:
    for key in obj:
        if key not in allowed:
            raise where.error(unknown("field", key, allowed))
    for key in required:
        if key not in obj:
            raise where.error(f'missing field "{key}"')


class Fields:
    """The fields of one kind of object, `check_fields`'s `allowed` and `required`, prepared once
    for objects read by the thousand (links, flows): `check` costs two set tests when every field
    is known and the required ones are there, and gives `check_fields`'s message otherwise."""

    __slots__ = ("allowed", "required", "known", "needed")

    def __init__(self, allowed, required=()):
        self.allowed, self.required = tuple(allowed), tuple(required)
        self.known, self.needed = frozenset(allowed), frozenset(required)

    def check(self, where: Where, obj: dict) -> None:
        if not (self.known.issuperset(obj) and self.needed.issubset(obj)):
            check_fields(where, obj, self.allowed, self.required)     # (it raises: which field)

# -- entries of lists (links, flows) ---------------------------------------------------------------


def entries(top: Where, data: dict, key: str, kind: str):
    """Yield (where, item) for each object of the list `key`, ids checked present and unique."""
    items = as_list(top, key, data.get(key, []), f"a list of {kind} objects")
    first_index: dict = {}
    source = top.source
    for index, item in enumerate(items):
        item_id: Any = item.get("id") if type(item) is dict else None
        if item_id is None or id_problem(item_id) or item_id in first_index:
            _entry_problem(Where(source, f"{key}[{index}]"), item, kind, key, first_index)
        first_index[item_id] = index
        yield Where(source, (key, index, item_id)), item


def _entry_problem(where: Where, item, kind: str, key: str, first_index: dict) -> None:
    """Raise what is wrong with the entry `item` of the list `key` (`entries`, in its order)."""
    if not isinstance(item, dict):
        raise where.error(f"expected a {kind} object, got {show(item)}")
    if "id" not in item:
        raise where.error('missing field "id"')
    item_id = item["id"]
    problem = id_problem(item_id)
    if problem:
        raise where.field_error("id", problem)
    raise where.error(f"duplicate {kind} id {quote(item_id)} "
                      f"(already used by {key}[{first_index[item_id]}])")


def node_ref(where: Where, name: str, value, kinds: dict) -> str:
    if not isinstance(value, str):
        raise where.field_error(name, f"expected a node id, got {show(value)}")
    if value not in kinds:
        raise where.field_error(name, unknown("node", value, kinds, list_known=False))
    return value


def host_ref(where: Where, name: str, value, kinds: dict) -> str:
    node = node_ref(where, name, value, kinds)
    if kinds[node] != "host":
        raise where.field_error(name, f"{quote(node)} is a router; flows run between hosts")
    return node


def seconds(value: float) -> str:
    """A time in a message: 12 for 12.0, else the shortest float spelling."""
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


