"""The RTT of a delivery-rate sample (flows/rate_sampler.py `RateSample.rtt_s`, Linux's
``rs->rtt_us``) follows Karn's rule as Linux's tcp_clean_rtx_queue and tcp_sacktag_one do: never
from a packet that was retransmitted. BBR on the Linux stack feeds it to its RTprop filter: a
reordered packet retransmitted spuriously, whose original's ACK came back just after the
retransmission, set RTprop to about 1 ms on a 20 ms path and cut the flow to a tenth of its rate."""
from __future__ import annotations

import pytest

from flows.rate_sampler import RateSampler
from netsim.run import simulate
from topologies.loader import load_topology


def sampler_with(sent: list[tuple[int, float]]) -> RateSampler:
    """A sampler after sending `sent` (seq, time) in order (a seq sent again: a retransmission)."""
    rates = RateSampler()
    in_flight = set()
    for seq, now in sent:
        in_flight.add(seq)
        rates.on_send(seq, now, len(in_flight), False)
    return rates


def test_an_in_order_ack_of_a_packet_sent_once_gives_its_rtt():
    rates = sampler_with([(0, 0.0), (1, 0.001)])
    rs = rates.on_ack(0.020, 0, 1, 0, False, set())
    assert rs is not None and rs.rtt_s == pytest.approx(0.020)


def test_the_ack_of_a_retransmitted_packet_gives_no_rtt():
    rates = sampler_with([(0, 0.0), (1, 0.001), (0, 0.019)])     # 0 resent at 19 ms
    rs = rates.on_ack(0.020, 0, 1, 0, False, set())               # the original's ACK
    assert rs is not None and rs.rtt_s is None                    # not 1 ms
    assert rs.delivery_rate_pps > 0                               # the rate sample stays


def test_a_cumulative_ack_covering_a_retransmission_gives_no_rtt_but_a_sack_does():
    rates = sampler_with([(0, 0.0), (1, 0.001), (2, 0.002), (3, 0.003), (0, 0.019)])
    rs = rates.on_ack(0.021, 0, 3, 0, False, set())               # 0..2 cumulatively, 0 resent
    assert rs is not None and rs.rtt_s is None
    rates = sampler_with([(0, 0.0), (1, 0.001), (2, 0.002), (3, 0.003), (0, 0.019)])
    rs = rates.on_ack(0.024, 0, 2, 3, True, set())                # ... and SACKs 3, sent once
    assert rs is not None and rs.rtt_s == pytest.approx(0.021)


def test_a_cumulative_ack_of_packets_sent_once_gives_the_last_ones_rtt():
    rates = sampler_with([(0, 0.0), (1, 0.001), (2, 0.002)])
    rs = rates.on_ack(0.025, 0, 3, 0, False, set())
    assert rs is not None and rs.rtt_s == pytest.approx(0.023)


def reordering_link(stack: str) -> dict:
    """One 100 Mb/s, 10 ms link that holds back 2 % of the packets by 2 ms (no loss): the
    reordered ones are retransmitted spuriously."""
    return {"hosts": ["H1", "H2"], "packet_bytes": {"data": 1500, "ack": 40}, "seed": 1,
            "links": [{"id": "L1", "ends": ["H1", "H2"], "rate_mbps": 100, "delay_ms": 10,
                       "buffer_kb": 1000,
                       "impairments": {"H1->H2": {"reorder_rate": 0.02,
                                                  "reorder_delay_ms": 2}}}],
            "flows": [{"id": "F1", "src": "H1", "dst": "H2", "data_mb": 3, "algorithm": "bbr",
                       "transport": {"stack": stack}}]}


@pytest.mark.parametrize("stack", ["classic", "linux"])
def test_bbr_keeps_the_path_rtt_and_its_rate_under_reordering(stack):
    flow = simulate(load_topology(reordering_link(stack))).summary["flows"]["F1"]
    assert flow["retransmissions"] >= 1
    assert flow["base_rtt_ms"] >= 20.0                            # 2 x 10 ms + transmissions
    assert flow["base_rtt_ms"] == pytest.approx(flow["min_rtt_ms"])
    assert flow["goodput_mbps"] > 50                              # (6.9 with RTprop at 1 ms)
