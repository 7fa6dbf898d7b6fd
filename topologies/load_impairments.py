"""A link's impairments: loss (a rate or a Gilbert-Elliott model), duplication, reordering and
jitter, given for the whole link or per direction in its `impairments` object
(docs/topology-format.md, "Link impairments")."""
from __future__ import annotations

from dataclasses import dataclass

from topologies.load_fields import (
    LOSS_PROBABILITY,
    NON_NEGATIVE,
    POSITIVE,
    PROBABILITY,
    TRANSITION_PROBABILITY,
    Where,
    as_object,
    boolean,
    check_fields,
    choice,
    number,
    unknown,
)
from topologies.spec import NO_IMPAIRMENT, GilbertElliottSpec, ImpairmentSpec
from topologies.validation import quote, show

IMPAIRMENT_FIELDS = ("loss_rate", "loss_model", "duplicate_rate", "reorder_rate", "reorder_delay_ms",
                     "jitter_ms", "jitter_reorder", "jitter_mode")
JITTER_MODES = ("added", "netem")      # components/impairment.py
LOSS_MODEL_TYPES = ("gilbert-elliott",)
GILBERT_ELLIOTT_FIELDS = ("type", "p_good_to_bad", "p_bad_to_good", "loss_good", "loss_bad")
GILBERT_ELLIOTT_REQUIRED = ("type", "p_good_to_bad", "p_bad_to_good")
_NONE_GIVEN = frozenset((*IMPAIRMENT_FIELDS, "impairments"))   # a link without any: no impairment


@dataclass(frozen=True)
class _Given:
    """An impairment field's checked value and the object (link or direction) that gave it."""

    value: object
    where: Where


def _loss_model(where: Where, name: str, value) -> GilbertElliottSpec:
    block = as_object(where, name, value)
    inner = where.inner(name)
    if "type" not in block:
        raise inner.error('missing field "type"')
    choice(inner, "type", block["type"], LOSS_MODEL_TYPES)
    check_fields(inner, block, GILBERT_ELLIOTT_FIELDS, GILBERT_ELLIOTT_REQUIRED)
    return GilbertElliottSpec(
        p_good_to_bad=number(inner, "p_good_to_bad", block["p_good_to_bad"], TRANSITION_PROBABILITY),
        p_bad_to_good=number(inner, "p_bad_to_good", block["p_bad_to_good"], TRANSITION_PROBABILITY),
        loss_good=number(inner, "loss_good", block.get("loss_good", 0.0), PROBABILITY),
        loss_bad=number(inner, "loss_bad", block.get("loss_bad", 1.0), PROBABILITY),
    )


IMPAIRMENT_READERS = {
    "loss_rate": lambda where, name, value: number(where, name, value, LOSS_PROBABILITY),
    "loss_model": _loss_model,
    "duplicate_rate": lambda where, name, value: number(where, name, value, PROBABILITY),
    "reorder_rate": lambda where, name, value: number(where, name, value, PROBABILITY),
    "reorder_delay_ms": lambda where, name, value: number(where, name, value, POSITIVE),
    "jitter_ms": lambda where, name, value: number(where, name, value, NON_NEGATIVE),
    "jitter_reorder": boolean,
    "jitter_mode": lambda where, name, value: choice(where, name, value, JITTER_MODES),
}


def _impairment_fields(where: Where, obj: dict) -> dict:
    """The impairment fields given in `obj` (read at `where`), checked: name -> _Given."""
    return {name: _Given(IMPAIRMENT_READERS[name](where, name, obj[name]), where)
            for name in IMPAIRMENT_FIELDS if name in obj}


def _direction_fields(where: Where, item: dict, labels: tuple) -> list:
    """Per direction (as `labels`), the fields given by its object in the link's `impairments`."""
    if "impairments" not in item:
        return [{} for _ in labels]
    block = as_object(where, "impairments", item["impairments"], "an object of directions")
    if labels[0] == labels[1] and block:
        raise where.field_error("impairments", f"both directions are labelled {quote(labels[0])}; "
                                               f"give the impairments at link level or rename a node")
    for label in block:
        if label not in labels:
            raise where.field_error("impairments", unknown("direction", label, labels))
    outer = where.inner("impairments")
    given = {}
    for label, obj in block.items():
        inner = outer.inner(label)
        check_fields(inner, as_object(outer, label, obj), IMPAIRMENT_FIELDS)
        given[label] = _impairment_fields(inner, obj)
    return [given.get(label, {}) for label in labels]


def _positive(merged: dict, name: str) -> bool:
    return name in merged and merged[name].value > 0


def _check_direction(merged: dict, own: dict) -> None:
    """Consistency of one direction's effective fields (`own`: those its direction object gave)."""
    if _positive(merged, "reorder_rate") and "reorder_delay_ms" not in merged:
        raise merged["reorder_rate"].where.field_error("reorder_delay_ms", "required when reorder_rate > 0")
    if "loss_model" in merged and _positive(merged, "loss_rate"):
        model, rate = merged["loss_model"], merged["loss_rate"]
        model_path, rate_path = model.where.path("loss_model"), rate.where.path("loss_rate")
        if "loss_rate" in own and "loss_model" not in own:   # blame the more specific of the two
            raise rate.where.field_error("loss_rate", f"expected 0 when {quote(model_path)} is given "
                                                      f"(use one loss model), got {show(rate.value)}")
        raise model.where.field_error("loss_model", f"not allowed together with a non-zero "
                                                    f"{quote(rate_path)} ({show(rate.value)}); "
                                                    f"use one loss model")
    for name, needs in (("reorder_delay_ms", "reorder_rate"), ("jitter_reorder", "jitter_ms"),
                        ("jitter_mode", "jitter_ms")):
        if name in own and not _positive(merged, needs):
            raise own[name].where.field_error(name, f"not allowed without {needs} > 0")
    mode = merged.get("jitter_mode")
    if mode is not None and mode.value == "netem" and "jitter_reorder" in merged:
        given = merged["jitter_reorder"]
        raise given.where.field_error("jitter_reorder", 'not allowed with jitter_mode "netem" '
                                                        "(netem jitter reorders by itself)")


def _impairment_spec(merged: dict) -> ImpairmentSpec:
    def value(name, default):
        return merged[name].value if name in merged else default

    reorder_rate = value("reorder_rate", 0.0)
    jitter_ms = value("jitter_ms", 0.0)
    spec = ImpairmentSpec(
        loss_rate=value("loss_rate", 0.0),
        loss_model=value("loss_model", None),
        duplicate_rate=value("duplicate_rate", 0.0),
        reorder_rate=reorder_rate,
        reorder_delay_s=value("reorder_delay_ms", 0.0) / 1000.0 if reorder_rate > 0 else 0.0,
        jitter_s=jitter_ms / 1000.0,
        jitter_reorder=value("jitter_reorder", False) if jitter_ms > 0 else False,
        jitter_mode=value("jitter_mode", "added") if jitter_ms > 0 else "added",
    )
    return NO_IMPAIRMENT if spec == NO_IMPAIRMENT else spec


def read_impairments(where: Where, item: dict, ends: tuple, duplex: str = "full") -> tuple:
    """(ImpairmentSpec of ends[0] -> ends[1], of ends[1] -> ends[0]); see docs/topology-format.md.

    Per direction and field: the direction object's value, else the link's, else the default. The
    consistency rules are checked on these effective values. Netem jitter needs a full-duplex
    link (`duplex`): a direction's delay is drawn per packet on its own transmitter.
    """
    if _NONE_GIVEN.isdisjoint(item):              # the common case: nothing to check or merge
        return (NO_IMPAIRMENT, NO_IMPAIRMENT)
    link_fields = _impairment_fields(where, item)
    labels = (f"{ends[0]}->{ends[1]}", f"{ends[1]}->{ends[0]}")
    merged = []
    for own in _direction_fields(where, item, labels):
        effective = link_fields | own
        _check_direction(effective, own)
        merged.append(effective)
    for name, needs in (("reorder_delay_ms", "reorder_rate"), ("jitter_reorder", "jitter_ms"),
                        ("jitter_mode", "jitter_ms")):
        if name in link_fields and not any(_positive(effective, needs) for effective in merged):
            raise where.field_error(name, f"not allowed without {needs} > 0")
    specs = tuple(_impairment_spec(effective) for effective in merged)
    if duplex == "half":
        for effective, spec in zip(merged, specs):
            if spec.jitter_mode == "netem":
                raise effective["jitter_mode"].where.field_error(
                    "jitter_mode", '"netem" needs a full-duplex link (this one is half-duplex: '
                                   "its directions share one transmitter)")
    return specs


