"""TopologySpec.link and .flow: entries by id through an index made once per list (--check
looks up a link for every hop of every flow's paths), which follows changes to the lists."""
from __future__ import annotations

import dataclasses
import pickle

import pytest

from topologies import load_topology
from topologies.generate import Common, fat_tree


@pytest.fixture()
def spec():
    return load_topology(fat_tree(4, common=Common(flows=8, seed=1)))


def test_every_link_and_flow_is_found_by_its_id(spec):
    assert all(spec.link(link.id) is link for link in spec.links)
    assert all(spec.flow(flow.id) is flow for flow in spec.flows)
    for missing in ("nope", ""):
        with pytest.raises(KeyError):
            spec.link(missing)
        with pytest.raises(KeyError):
            spec.flow(missing)


def test_the_index_follows_entries_replaced_added_and_removed(spec):
    spec.link(spec.links[0].id)                           # (the index is made)
    first = spec.links[0]
    renamed = dataclasses.replace(first, id="renamed")
    spec.links[0] = renamed                               # replaced in place
    assert spec.link("renamed") is renamed
    with pytest.raises(KeyError):
        spec.link(first.id)
    spec.links.append(first)                              # added
    assert spec.link(first.id) is first
    spec.links.remove(renamed)                            # removed
    with pytest.raises(KeyError):
        spec.link("renamed")
    spec.flows = spec.flows[:2]                           # another list
    with pytest.raises(KeyError):
        spec.flow("F3")


def test_a_spec_with_its_index_pickles_and_compares_as_before(spec):
    spec.link(spec.links[-1].id)
    again = pickle.loads(pickle.dumps(spec))
    assert again == spec and again.link(spec.links[-1].id) == spec.links[-1]
    assert dataclasses.replace(spec) == spec
