"""Loading a large network (topologies/load_links.py, load_fields.py, spec.py): links with and
without optional fields are read as LinkSpec's constructor makes them; an entry's name
(``links[7] "L7"``) is written only for a message, and every message still names it; the digest,
hashed a part at a time, is the SHA-256 of the whole text."""
from __future__ import annotations

import dataclasses
import hashlib

import pytest

from topologies.generate import Common, random_graph
from topologies.loader import TopologyError, load_topology
from topologies.spec import (
    _PIECES_PER_UPDATE,
    LinkSpec,
    config_digest,
    config_pieces,
    config_text,
)


def network(routers: int = 120) -> dict:
    return random_graph(routers, hosts=8, common=Common(flows=4))


def test_the_links_of_a_generated_network_are_those_of_the_constructor():
    data = network()
    data["links"][3]["cost"] = 2                 # a link with an optional field among them
    spec = load_topology(data)
    assert spec.links[3].cost_s == 0.002
    for link in spec.links:
        values = {f.name: getattr(link, f.name) for f in dataclasses.fields(LinkSpec)}
        built = LinkSpec(**values)
        assert link == built and list(vars(link).items()) == list(vars(built).items())


def broken(index: int, **fields) -> dict:
    data = network()
    data["links"][index].update(fields)
    return data


@pytest.mark.parametrize("fields, message", [
    ({"ends": ["r1", "X9"]}, 'field "ends": unknown node "X9"'),
    ({"ends": ["r1", "r1"]}, 'field "ends": expected two different nodes, got "r1" twice'),
    ({"rate_mbps": 0}, 'field "rate_mbps": expected a positive number, got 0'),
    ({"queue": {"discipline": "red", "min_kb": 5}},
     ': field "queue": missing field "max_kb"'),
    ({"queue": {"discipline": "codel", "target_ms": -1}},
     ': field "queue.target_ms": expected a positive number, got -1'),
    ({"loss_rate": 2}, 'field "loss_rate": expected a number in [0, 1), got 2'),
    ({"colour": "red"}, ': unknown field "colour"'),
])
def test_a_problem_deep_in_a_large_network_names_its_entry(fields, message):
    data = broken(57, **fields)
    link_id = data["links"][57]["id"]
    with pytest.raises(TopologyError) as caught:
        load_topology(data, label="big.json")
    assert str(caught.value).startswith(f'big.json: links[57] "{link_id}"')
    assert message in str(caught.value)


def test_an_entry_without_a_usable_id_is_named_by_its_index():
    data = network()
    data["links"][40]["id"] = data["links"][12]["id"]
    with pytest.raises(TopologyError) as caught:
        load_topology(data, label="big.json")
    assert str(caught.value) == (f'big.json: links[40]: duplicate link id '
                                 f'"{data["links"][12]["id"]}" (already used by links[12])')
    data["links"][40]["id"] = "=SUM(A1)"
    with pytest.raises(TopologyError) as caught:
        load_topology(data, label="big.json")
    assert str(caught.value).startswith('big.json: links[40]: field "id": expected an id not '
                                        'starting with "="')


@pytest.mark.parametrize("node, message", [
    (7, "expected a non-empty string node id, got 7"),
    ("", 'expected a non-empty string node id, got ""'),
    ("+R", 'expected an id not starting with "+"'),
    ("R\x1b", "expected an id without control characters"),
    ("r3", 'duplicate node id "r3" (already a router)'),
    ("h2", 'duplicate node id "h2" (already a host)'),
])
def test_a_bad_node_id_among_many_is_named_by_its_index(node, message):
    data = network()
    data["routers"][90] = node
    with pytest.raises(TopologyError) as caught:
        load_topology(data, label="big.json")
    assert str(caught.value).startswith(f"big.json: routers[90]: {message}")


def test_the_digest_of_a_large_network_is_that_of_its_whole_text():
    spec = load_topology(network(600))
    pieces = config_pieces(spec, None, 1, 0.1)
    assert len(pieces) > 3 * _PIECES_PER_UPDATE              # hashed in several parts
    text = config_text(spec, None, 1, 0.1)
    assert "".join(pieces) == text
    assert config_digest(spec, duration_s=None, seed=1, interval_s=0.1) == \
        hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.mark.parametrize("change, field, kind, first", [
    (lambda d: d["flows"][0].update(src="qqqqqqq"), 'flows[0] "F1": field "src"', "node", "h0, h1, "),
    (lambda d: d.update(events=[{"at_s": 1, "link": "qqqqqqq", "action": "down"}]),
     'events[0]: field "link"', "link", "h0-r"),
])
def test_an_unknown_reference_in_a_large_network_lists_only_what_fits_one_line(change, field,
                                                                              kind, first):
    """A reference to no node (or link) of 5 000 listed them all: a line of 34 KB (124 KB)."""
    data = network(2000)
    change(data)
    with pytest.raises(TopologyError) as info:
        load_topology(data)
    message = str(info.value)
    assert message.startswith(f'<dict>: {field}: unknown {kind} "qqqqqqq"; known: {first}')
    assert message.endswith(" more") and len(message) < 400
