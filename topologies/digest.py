"""The canonical text of a run's configuration, whose SHA-256 is its ``config_digest``.

The text is by definition ``json.dumps(resolved_config(...), sort_keys=True, separators=(",",
":"), default=repr, allow_nan=True)`` (topologies/spec.py). `config_text` writes that same text
without building `resolved_config`'s dicts first: each dataclass of the spec is written straight
from its fields (in name order, leaving out what `resolved_config` leaves out), a dataclass
instance met again (the links' shared impairments, the flows' shared transport) is the text
written the first time, and everything that holds no dataclass is written by the json module's
encoder with the same options. On a network of 20 000 links that is about a fifth of the time.
tests/test_config_digest.py checks the two texts equal.
"""
from __future__ import annotations

import json
from dataclasses import fields, is_dataclass
from json.encoder import encode_basestring_ascii
from operator import attrgetter

from topologies.spec import (
    STACK_FIELDS,
    ImpairmentSpec,
    RoutingSpec,
    TopologySpec,
    TransportSpec,
    WorkloadSpec,
    plain_data,
)

_INF = float("inf")


def _leave_out_transport(name: str, value) -> bool:
    return name == "defaulted" or (name == "stack" and value == "classic") or \
        (name in STACK_FIELDS and value is None)


# What `resolved_config` leaves out of a dataclass's fields (so that earlier runs keep their
# digests), by class: (field name, value) -> left out. Each of these classes appears only where
# `_resolved_config` applies its rule (the topology, its routing, its workloads, its links'
# impairments, its flows' and workloads' transports).
_LEFT_OUT = {
    TopologySpec: lambda name, value: name == "source",
    RoutingSpec: lambda name, value: name == "ecmp" and value is None,
    WorkloadSpec: lambda name, value: name == "ecn" and not value,
    ImpairmentSpec: lambda name, value: name == "jitter_mode" and value == "added",
    TransportSpec: _leave_out_transport,
}


def config_text(spec: TopologySpec, duration_s, seed, interval_s) -> str:
    """``json.dumps(resolved_config(spec, ...), sort_keys=True, separators=(",", ":"),
    default=repr, allow_nan=True)``, written directly."""
    writer = _Writer()
    return (f'{{"duration_s":{writer.text(duration_s)},"interval_s":{writer.text(interval_s)},'
            f'"seed":{writer.text(seed)},"topology":{writer.text(spec)}}}')


class _Writer:
    """One `config_text`: the texts of dataclass instances by identity (valid while the spec
    is alive, i.e. for this call), field names and getters by class."""

    def __init__(self):
        self.done: dict = {}
        self.classes: dict = {}
        self.dumps = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=repr,
                                      allow_nan=True).encode      # json.dumps with those options

    def text(self, value) -> str:
        kind = type(value)
        if kind is str:
            return encode_basestring_ascii(value)
        if kind is int:
            return int.__repr__(value)
        if kind is float:                 # as the json module writes floats (allow_nan)
            if value != value:
                return "NaN"
            if value in (_INF, -_INF):
                return "Infinity" if value > 0 else "-Infinity"
            return float.__repr__(value)
        if value is None:
            return "null"
        if kind is bool:
            return "true" if value else "false"
        if kind is list or kind is tuple:
            return "[" + ",".join([self.text(item) for item in value]) + "]"
        if kind is dict:
            if not all(type(key) is str for key in value):
                return self.dumps(plain_data(value))
            return "{" + ",".join([encode_basestring_ascii(key) + ":" + self.text(item)
                                   for key, item in sorted(value.items())]) + "}"
        text = self.done.get(id(value))         # a dataclass instance met again
        if text is None:
            text = self.done[id(value)] = self.instance_text(value, kind)
        return text

    def instance_text(self, value, kind) -> str:
        """The text of a dataclass instance (or, of any other object, json.dumps's)."""
        described = self.classes.get(kind)
        if described is None:
            if not is_dataclass(value) or isinstance(value, type):
                return self.dumps(plain_data(value))
            described = self.classes[kind] = _described(value)
        names, keys, getter, left_out = described
        parts = []
        text = self.text
        for name, key, item in zip(names, keys, getter(value)):
            if left_out is not None and left_out(name, item):
                continue
            item_kind = type(item)
            if item_kind is str:
                parts.append(key + encode_basestring_ascii(item))
            elif item_kind is int:
                parts.append(key + int.__repr__(item))
            elif item is None:
                parts.append(key + "null")
            elif not item and (item_kind is tuple or item_kind is list):
                parts.append(key + "[]")
            else:
                parts.append(key + text(item))
        return "{" + ",".join(parts) + "}"


def _described(value) -> tuple:
    """(field names in name order, their JSON keys, a getter of their values in that order,
    the class's rule of what is left out or None)."""
    names = sorted(f.name for f in fields(value))
    getter = attrgetter(*names) if len(names) > 1 else (lambda v: tuple(getattr(v, n) for n in names))
    keys = tuple(encode_basestring_ascii(name) + ":" for name in names)
    return tuple(names), keys, getter, _LEFT_OUT.get(type(value))
