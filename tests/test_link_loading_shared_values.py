"""Links that share their rate, delay and buffer (topologies/load_links.py): the values are
checked and converted once per distinct (value, type), and every link's spec is the one it gets
read alone; float zeros (whose sign counts) and problems are never taken from another link."""
from __future__ import annotations

import math

import pytest

from topologies.loader import TopologyError, load_topology

VARIANTS = [(100, 1, 100), (100.0, 1, 100), (100, 1.0, 100.0), (100, 0, 100), (100, 0.0, 100),
            (100, -0.0, 100), (1e-3, 2.5, 0), (100, 1, 100), (100, 0.0, 100), (100, -0.0, 100)]


def chain(variants, extra=None) -> dict:
    extra = extra or {}
    routers = [f"R{i}" for i in range(len(variants) + 1)]
    links = [{"id": f"L{i}", "ends": [routers[i], routers[i + 1]], "rate_mbps": rate,
              "delay_ms": delay, "buffer_kb": buffer, **extra.get(i, {})}
             for i, (rate, delay, buffer) in enumerate(variants)]
    return {"hosts": [], "routers": routers, "links": links}


def test_each_link_is_as_read_alone():
    together = load_topology(chain(VARIANTS * 3)).links
    for link in together:
        alone = load_topology(chain([VARIANTS[int(link.id[1:]) % len(VARIANTS)]])).links[0]
        for field in ("rate_bps", "delay_s", "buffer_bytes"):
            mine, theirs = getattr(link, field), getattr(alone, field)
            assert type(mine) is type(theirs) and repr(mine) == repr(theirs), (link.id, field)
    assert [math.copysign(1, link.delay_s) for link in together[:6]] == [1, 1, 1, 1, 1, -1]


@pytest.mark.parametrize("bad, message", [
    ({"cost": -1}, 'field "cost": expected a positive number'),
    ({"rate_mbps": True}, 'field "rate_mbps": expected a number'),
    ({"delay_ms": [1]}, 'field "delay_ms": expected a number'),
    ({"buffer_kb": "100"}, 'field "buffer_kb": expected a number'),
    ({"duplex": "both"}, 'field "duplex": expected'),
])
def test_a_problem_after_links_of_the_same_values_is_still_reported(bad, message):
    with pytest.raises(TopologyError) as caught:
        load_topology(chain([(100, 1, 100)] * 4, {3: bad}))
    assert 'links[3] "L3"' in str(caught.value) and message in str(caught.value)
