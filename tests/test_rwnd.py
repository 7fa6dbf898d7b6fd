"""The receive window (`rwnd_kb`, flows/linux_stack.py): a window-limited transfer runs at
rwnd / RTT on every stack, and on the Linux stack the window stops growing."""
from __future__ import annotations

import pytest

from topologies.spec import TransportSpec

RWND_KB = 5                  # five 1000-byte packets


def _goodput_bps(flow):
    return flow.data_bytes * 8.0 / (flow.finish_s - flow.start_s)


@pytest.mark.parametrize("stack", ["classic", "linux"])
def test_a_window_limited_transfer_runs_at_rwnd_per_round_trip(make_flow, stack):
    transport = TransportSpec(stack=stack, rwnd_kb=RWND_KB, initial_cwnd_pkts=10,
                              min_rto_s=0.2, linux_acks=False)
    sim, _h1, _h2, flow = make_flow(packets=2000, transport=transport)
    sim.run()
    assert flow.finished and flow.delivered_all() and flow.retransmissions == 0
    # with 5 packets in flight there is no queue: RTT = propagation both ways + a data packet's
    # and an ACK's transmission (make_flow: 8 Mb/s, 5 ms, 1000 B data, 40 B ACKs)
    rate = make_flow.RATE_BPS
    rtt_s = 2 * make_flow.DELAY_S + 1000 * 8 / rate + 40 * 8 / rate
    expected = RWND_KB * 1000 * 8 / rtt_s
    assert expected < rate                            # the window, not the link, limits
    assert _goodput_bps(flow) == pytest.approx(expected, rel=0.01)
    assert max(flow.sender.snd_nxt - flow.sender.snd_una, 0) <= RWND_KB


def test_without_rwnd_the_same_transfer_fills_the_link(make_flow):
    transport = TransportSpec(initial_cwnd_pkts=10, min_rto_s=0.2)
    sim, _h1, _h2, flow = make_flow(packets=2000, transport=transport)
    sim.run()
    assert _goodput_bps(flow) > 0.9 * make_flow.RATE_BPS


def test_flight_never_exceeds_rwnd(make_flow, drop_at):
    transport = TransportSpec(stack="linux", rwnd_kb=8)
    sim, h1, h2, flow = make_flow(packets=600, transport=transport)
    rng = sim.rng
    drop_at(h2, lambda p: rng.random() < 0.03)
    flights = []
    send = h1.send

    def spy(packet):
        if not packet.retx:
            flights.append(packet.seq + 1 - flow.sender.snd_una)
        return send(packet)
    h1.send = spy
    sim.run()
    assert flow.finished and flow.delivered_all()
    assert max(flights) <= 8


def test_the_linux_window_stops_growing_when_the_receive_window_limits(make_flow):
    transport = TransportSpec(stack="linux", rwnd_kb=RWND_KB, initial_cwnd_pkts=2)
    sim, _, _, flow = make_flow(packets=2000, transport=transport)
    sim.run()
    # tcp_is_cwnd_limited: in slow start the window grows only while cwnd < 2 x packets out
    assert flow.cwnd <= 2 * RWND_KB
    classic = TransportSpec(rwnd_kb=RWND_KB, initial_cwnd_pkts=2)
    sim, _h1, _h2, free = make_flow(packets=2000, transport=classic)
    sim.run()
    assert free.cwnd > 10 * RWND_KB                   # classic: grows without bound


def test_the_linux_default_bound_is_half_of_tcp_rmem_max(make_flow):
    _, _, _, flow = make_flow(transport=TransportSpec(stack="linux"))
    assert flow.sender.rwnd_pkts == 6 * 1024 * 1024 // 2 // 1000
