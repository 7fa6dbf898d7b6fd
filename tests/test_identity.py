"""Speed-ups keep every event: runs give the figures the code gave before them, bit for bit.

Each case (test cases 0 and 2, test case 1 with a link failure, the dumbbell with impairments and
with CoDel) runs a topology and digests (SHA-256) two things: every packet arrival at a node, in
order (simulated time, node, and the packet's fields), and the final figures of every flow and
link direction (exact float reprs). The pinned digests were computed with the code of commit
70212d8, before link directions kept their packets in flight on event lines instead of one heap
entry per packet (simulator/engine.py, components/link.py): the arrivals must be unchanged.
The figures are pinned since a transmitter free within the clock's rounding of a packet's
arrival takes it at once (components/direction.py CLOCK_ROUNDING): that changed no arrival, and
only the buffer-occupancy integrals and sojourn sums of test cases 1 and 2, by their float noise
(at most 1.1e-14 of their value; tests/test_clock_rounding.py). The engine's `events` count is not pinned here because it also counts the statistics
sampler's ticks (simulator/sampling.py decides how many); bench/identity.py compares it, with
every other figure, against a saved run.

A change that is meant to alter behaviour updates the pins, saying why in its commit.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from run_digests import digests

from netsim.run import Run
from topologies import load_topology

TOPOLOGY_DIR = Path(__file__).resolve().parent.parent / "topologies"


def _file(name: str) -> dict:
    return json.loads((TOPOLOGY_DIR / f"{name}.json").read_text())


def _failing_test_case_1() -> dict:
    """Test case 1 with one branch down from 3 s to 9 s (packets cut in flight, rerouting)."""
    data = _file("test_case_1")
    data["events"] = [{"at_s": 3.0, "link": "L1", "action": "down"},
                      {"at_s": 9.0, "link": "L1", "action": "up"}]
    return data


def _impaired_dumbbell() -> dict:
    """The dumbbell with loss, jitter, reordering and duplication on its bottleneck."""
    data = _file("dumbbell")
    data["links"][0].update({"loss_rate": 0.002, "jitter_ms": 2.0, "reorder_rate": 0.01,
                             "reorder_delay_ms": 3.0, "duplicate_rate": 0.005})
    return data


def _codel_dumbbell() -> dict:
    """The dumbbell with CoDel on its bottleneck (the queue disciplines' own dequeue events)."""
    data = _file("dumbbell")
    data["links"][0]["queue"] = {"discipline": "codel"}
    return data


CASES = {
    "test_case_0": lambda: _file("test_case_0"),
    "test_case_2": lambda: _file("test_case_2"),
    "test_case_1_failure": _failing_test_case_1,
    "dumbbell_impaired": _impaired_dumbbell,
    "dumbbell_codel": _codel_dumbbell,
}

# (arrivals digest, figures digest, arrivals): arrivals as computed with the code of commit
# 70212d8, figures since CLOCK_ROUNDING; test case 1 with a failure since Bellman-Ford's
# feasibility condition (routing/distance_vector.py): R2, cut from H1 at 3 s, has no feasible
# route and asks R1 for a newer sequence number, so 6 more routing packets arrive and R2's
# route to H1 (on no flow's path) is installed at 3.232 s instead of 3.171 s; the flow's
# figures are the same, the links' routing counts include the 6 packets; the two dumbbells
# (Reno) since ssthresh counts at most the packets the window lets out (flows/congestion.py
# `ssthresh`: a second loss after Reno's exit at a partial ACK halves the window again) and a
# backed-off RTO stays until new data is acknowledged (flows/rtt.py `sample_backed_off`); test
# case 1 with a failure (FAST) again since FAST's update waits, after a timeout, for an ACK
# (flows/fast.py): its flow times out once when L1 goes down, and the window no longer grows on
# the clock before the retransmission is acknowledged (8 arrivals fewer, F1 finishes at 19.43 s
# against 19.29 s)
PINNED = {
    'dumbbell_codel': ('3bc70838e3c6e20bc1efd5b7', 'cfa559da144684058af12078', 64115),
    'dumbbell_impaired': ('cca1fdc205e09bbacd265749', 'c67b392e036b2ee66f3535aa', 64498),
    'test_case_0': ('d0964ad052c905405398371a', '823f9afdda17701a3d11e085', 40960),
    'test_case_1_failure': ('69cd79f0261f2e103635977f', '2477a1411a086c582ead3e0f', 163823),
    'test_case_2': ('54df04c69aad6b76bba7b202', '84af1d3e4185c4fe030a97d8', 635036),
}


def case_digests(case: str) -> tuple:
    """(arrivals digest, figures digest, number of arrivals) of one case."""
    return digests(Run(load_topology(CASES[case]())))


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_arrival_and_figure_as_before(case):
    assert case_digests(case) == PINNED[case]


if __name__ == "__main__":          # print the digests of this tree (to pin them)
    for name in sorted(CASES):
        print(f"    {name!r}: {case_digests(name)!r},")
