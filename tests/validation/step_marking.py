"""A stand-in for the ``step`` queue discipline in ECN tests (RFC 8257 §3.1 marking).

`step_marking(monkeypatch, label, k_pkts)` makes the link direction `label` (``"R1->R2"``) set CE
on every ECN-capable packet that arrives while `k_pkts` or more packets wait in its buffer, and
records the queue seen by each arrival (`samples`: (time, packets waiting)). It patches
`components.link.LinkDirection.send` for one test. Tests use the real discipline
(``"queue": {"discipline": "step", ...}``) when the loader knows it (`step_discipline_available`).
"""
from __future__ import annotations

from components.link import LinkDirection


class StepMarking:
    def __init__(self, label: str, k_pkts: int):
        self.label = label
        self.k_pkts = k_pkts
        self.samples: list = []       # (time_s, packets waiting) at each data arrival
        self.marked = 0


def step_marking(monkeypatch, label: str, k_pkts: int) -> StepMarking:
    marking = StepMarking(label, k_pkts)
    original = LinkDirection.send

    def send(self, packet):
        if self.label == label and packet.kind == 0:
            self.settle(self.sim.now)
            waiting = self.q_pkts
            marking.samples.append((self.sim.now, waiting))
            if packet.ect and waiting >= k_pkts:
                packet.ce = True
                marking.marked += 1
        return original(self, packet)

    monkeypatch.setattr(LinkDirection, "send", send)
    return marking


def step_discipline_available() -> bool:
    """Whether the topology loader accepts a link ``queue`` of discipline ``step``."""
    from topologies import load_topology
    from topologies.loader import TopologyError
    topology = {"name": "probe", "hosts": ["A", "B"], "routers": [], "flows": [],
                "links": [{"id": "L", "ends": ["A", "B"], "rate_mbps": 1, "delay_ms": 1,
                           "buffer_kb": 10, "queue": {"discipline": "step", "k_kb": 5}}]}
    try:
        load_topology(topology)
    except (TopologyError, ValueError, KeyError, TypeError):
        return False
    return True
