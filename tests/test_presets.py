"""The scenario presets (docs/presets.md): their key numbers and one behaviour each."""
from __future__ import annotations

from pathlib import Path

import json
import re
from collections import deque

import numpy as np
import pytest

from netsim import check_conservation, load_topology, simulate

ROOT = Path(__file__).resolve().parent.parent

PRESET_DIR = ROOT / "topologies"
DOC = ROOT / "docs" / "presets.md"

PROFILES = ("profile_1990s_internet", "profile_user_to_cdn", "profile_cross_country",
            "profile_data_center")
PRESETS = PROFILES + ("dumbbell", "dumbbell_two_rtt", "lossy_link", "parking_lot")

MBPS = 1e6
KB = 1000
MB = 10**6


def load(name: str, algorithm: str | None = None):
    return load_topology(PRESET_DIR / f"{name}.json", algorithm=algorithm)


def path_links(spec, src: str, dst: str) -> list:
    """The links from host `src` to host `dst`, in order (hosts do not forward)."""
    routers = set(spec.routers)
    previous = {src: None}
    queue = deque([src])
    while queue:
        node = queue.popleft()
        if node == dst:
            break
        if node != src and node not in routers:
            continue
        for link in spec.links:
            if node in link.ends:
                other = link.ends[1] if link.ends[0] == node else link.ends[0]
                if other not in previous:
                    previous[other] = (node, link)
                    queue.append(other)
    links, node = [], dst
    while previous[node] is not None:
        node, link = previous[node]
        links.append(link)
    return links[::-1]


def base_rtt_s(spec, flow) -> float:
    """Propagation round-trip time of a flow: twice the delays of the links on its path."""
    return 2.0 * sum(link.delay_s for link in path_links(spec, flow.src, flow.dst))


def doc_rows() -> dict:
    """docs/presets.md table rows, keyed by file stem."""
    rows = {}
    for line in DOC.read_text().splitlines():
        match = re.match(r"\|\s*`([a-z0-9_]+)\.json`\s*\|(.*)", line)
        if match:
            rows[match.group(1)] = match.group(2)
    return rows


# -- what every preset shares ----------------------------------------------------------------

@pytest.mark.parametrize("name", PRESETS)
def test_preset_loads_with_the_shared_conventions(name):
    spec = load(name)
    assert spec.name == name
    assert spec.units.name == "si" and spec.seed == 1
    assert spec.routing.protocol == "static"
    assert all(link.duplex == "full" for link in spec.links)
    assert spec.flows and all(flow.data_bytes is not None for flow in spec.flows)
    # Reno everywhere but in the data center, which runs DCTCP with ECN (and step marking)
    algorithm = "dctcp" if name == "profile_data_center" else "reno"
    assert all(flow.algorithm == algorithm for flow in spec.flows)
    assert all(flow.ecn == (algorithm == "dctcp") for flow in spec.flows)
    assert "typical" in spec.description.lower()
    assert "not measurements" in spec.description.lower()


def test_every_preset_is_in_the_doc_table():
    rows = doc_rows()
    for name in PRESETS:
        assert name in rows, name
        assert f"topologies/{name}.json" in rows[name], name   # an example command line


# -- the four classic profiles: sender - R1 - LB - R2 - receiver ------------------------------

# name: (bottleneck Mb/s, one-way ms, buffer kB, access Mb/s, base RTT ms, data bytes, packet B,
#        initial window, doc strings)
PROFILE_NUMBERS = {
    "profile_1990s_internet": (1.544, 100, 8, 10, 204, [1 * MB], 576, 1,
                               ["1.544 Mb/s", "100 ms", "8 kB", "204 ms", "1 MB"]),
    "profile_user_to_cdn": (50, 10, 150, 1000, 24, [25 * MB], 1500, 10,
                            ["50 Mb/s", "10 ms", "150 kB", "24 ms", "25 MB"]),
    "profile_cross_country": (100, 38, 1000, 1000, 80, [40 * MB], 1500, 10,
                              ["100 Mb/s", "38 ms", "1000 kB", "80 ms", "40 MB"]),
    "profile_data_center": (10_000, 1, 5000, 40_000, 2.04, [50 * MB] * 2, 1500, 10,
                            ["10 Gb/s", "1 ms", "5000 kB", "2.04 ms", "50 MB", "DCTCP",
                             "K = 400 kB"]),
}


@pytest.mark.parametrize("name", PROFILES)
def test_profile_key_numbers(name):
    rate, delay, buffer, access, rtt_ms, data, packet, iw, doc = PROFILE_NUMBERS[name]
    spec = load(name)
    assert len(spec.hosts) == 2 and len(spec.routers) == 2 and len(spec.links) == 3
    bottleneck = spec.link("LB")
    assert bottleneck.rate_bps == pytest.approx(rate * MBPS)
    assert bottleneck.delay_s == pytest.approx(delay / 1e3)
    assert bottleneck.buffer_bytes == buffer * KB
    assert [flow.data_bytes for flow in spec.flows] == data
    assert spec.packet_sizes.data_bytes == packet
    for flow in spec.flows:
        path = path_links(spec, flow.src, flow.dst)
        assert [link.id for link in path] == ["LA1", "LB", "LA2"]
        assert base_rtt_s(spec, flow) == pytest.approx(rtt_ms / 1e3)
        assert flow.transport.initial_cwnd_pkts == iw
    for link_id in ("LA1", "LA2"):   # access links are faster than the bottleneck
        assert spec.link(link_id).rate_bps == pytest.approx(access * MBPS)
        assert spec.link(link_id).rate_bps > bottleneck.rate_bps
    row = doc_rows()[name]
    for text in doc:
        assert text in row, (name, text)


# DCTCP's marking threshold on the data center's bottleneck (RFC 8257 section 3.1), and the bound
# of Alizadeh et al. 2010 (K > C * RTT / 7 for full throughput) that it is chosen above
DC_K_BYTES = 400 * KB
DC_RATE_BPS = 10e9


def test_the_data_center_bottleneck_is_10_gbps_and_1_ms():
    spec = load("profile_data_center")
    assert spec.link("LB").rate_bps == DC_RATE_BPS and spec.link("LB").delay_s == 0.001
    # the buffer is large: at least one bandwidth-delay product
    bdp_bytes = DC_RATE_BPS * base_rtt_s(spec, spec.flows[0]) / 8
    assert bdp_bytes == pytest.approx(2.55e6) and bdp_bytes / 1500 == pytest.approx(1700)
    assert spec.link("LB").buffer_bytes >= bdp_bytes
    # DCTCP step marking with K just above C * RTT / 7 (364 kB), far below the buffer
    queue = spec.link("LB").queue
    assert queue["discipline"] == "step" and queue["k_bytes"] == DC_K_BYTES
    assert bdp_bytes / 7 < DC_K_BYTES < 1.2 * bdp_bytes / 7
    assert [flow.start_s for flow in spec.flows] == [0, 0.02]          # the transfers overlap
    assert all(flow.algorithm == "dctcp" and flow.ecn for flow in spec.flows)
    for text in ("step", "RFC 8257", "C x RTT / 7", "364 kB"):
        assert text in spec.description, text

def test_1990s_small_buffer_overflows_and_bounds_the_rtt():
    spec = load("profile_1990s_internet")
    assert spec.link("LB").buffer_bytes < 0.5 * 1.544e6 * 0.204 / 8   # well under the BDP
    results = simulate(spec)
    flow = results.summary["flows"]["F1"]
    lb = results.summary["links"]["LB"]["directions"]["R1->R2"]
    assert flow["completed"] and flow["in_order"] and flow["retransmissions"] > 0
    assert lb["drops"] > 0 and flow["goodput_mbps"] < 1.544
    # the small buffer caps the queueing delay: RTT <= base + buffer drain time + transmissions
    drain_ms = 8000 * 8 / 1.544e6 * 1e3
    assert 204 <= flow["avg_rtt_ms"] <= 204 + drain_ms + 10


def test_cdn_download_is_limited_by_the_50_mbps_access_only():
    results = simulate(load("profile_user_to_cdn"))
    flow = results.summary["flows"]["F1"]
    links = results.summary["links"]
    assert flow["completed"] and flow["in_order"]
    assert 25 < flow["goodput_mbps"] < 50
    assert links["LB"]["directions"]["R1->R2"]["drops"] > 0
    assert all(d["drops"] == 0 for lid in ("LA1", "LA2") for d in links[lid]["directions"].values())
    assert flow["avg_rtt_ms"] <= 24 + 150_000 * 8 / 50e6 * 1e3 + 5   # base + a full buffer


def test_cross_country_window_must_cover_a_large_bdp():
    results = simulate(load("profile_cross_country"))
    flow = results.summary["flows"]["F1"]
    assert flow["completed"] and flow["in_order"]
    bdp_pkts = 100e6 * 0.080 / 8 / 1500            # about 667 packets
    _, window = results.trace("flows", "F1", "window_pkts")
    assert window.max() >= bdp_pkts
    assert flow["goodput_mbps"] < 100
    # ramping up to the BDP takes several RTTs: the run is longer than the line-rate time
    assert flow["finish_s"] > 40e6 * 8 / 100e6 + 5 * 0.080


def without_ecn(name: str, algorithm: str) -> dict:
    """A preset as a dict, every flow running `algorithm` without ECN (its queue then drops
    where it would have marked: the step discipline is plain drop-tail for such packets)."""
    data = json.loads((PRESET_DIR / f"{name}.json").read_text())
    for flow in data["flows"]:
        flow["algorithm"] = algorithm
        flow.pop("ecn", None)
    return data


@pytest.fixture(scope="module")
def data_center_run():
    """The data-center preset as shipped (DCTCP, step marking), run once for the tests below."""
    return simulate(load("profile_data_center"))


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_data_center_dctcp_marks_at_k_and_never_overflows(data_center_run):
    results = data_center_run
    summary = results.summary
    assert summary["stop_reason"] == "completed" and check_conservation(results.network) == []
    lb = summary["links"]["LB"]["directions"]["R1->R2"]
    # step marking on the data direction only; nothing dropped anywhere (5000 kB never fills)
    assert lb["marks"] > 1000 and lb["aqm_drops"] == 0
    assert all(d["drops"] == 0 and (d["marks"] == 0 or (lid, label) == ("LB", "R1->R2"))
               for lid, link in summary["links"].items()
               for label, d in link["directions"].items())
    for flow_id, flow in summary["flows"].items():
        assert flow["algorithm"] == "dctcp", flow_id
        assert flow["completed"] and flow["in_order"], flow_id
        assert flow["ecn_echoes"] > 0 and flow["ecn_reactions"] >= 1, flow_id
        assert flow["retransmissions"] == 0 and flow["timeouts"] == 0, flow_id
        # 50 MB is 40 ms at line rate; slow start and the windows below the BDP cost more
        assert 0.040 < flow["finish_s"] - flow["start_s"] < 0.12, flow_id
    # F2's slow start pushes the queue past K while F1 runs: F1 reacts again
    assert summary["flows"]["F1"]["ecn_reactions"] > summary["flows"]["F2"]["ecn_reactions"]
    # the queue stays near K: marks reach the senders a round trip after it passes K, so 99 % of
    # packets wait more than nothing but less than the time 2 K takes to drain at 10 Gb/s
    k_drain_ms = DC_K_BYTES * 8 / DC_RATE_BPS * 1e3                  # 0.32 ms
    assert k_drain_ms < lb["p99_sojourn_ms"] < 2 * k_drain_ms
    assert lb["avg_sojourn_ms"] < 0.25 * k_drain_ms                   # mostly an empty queue
    # together the two transfers carry 100 MB at well over half the link's rate
    last_s = max(flow["finish_s"] for flow in summary["flows"].values())
    assert 100 * MB * 8 / last_s > 0.6 * DC_RATE_BPS


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_data_center_reno_without_ecn_overflows_where_dctcp_marks(data_center_run):
    dctcp = data_center_run.summary
    reno = simulate(load_topology(without_ecn("profile_data_center", "reno"))).summary
    lb_dctcp = dctcp["links"]["LB"]["directions"]["R1->R2"]
    lb_reno = reno["links"]["LB"]["directions"]["R1->R2"]
    assert reno["stop_reason"] == "completed"
    assert all(flow["completed"] and flow["in_order"] for flow in reno["flows"].values())
    # Reno's slow start overshoots the 5000 kB buffer: the queue fills and overflows
    assert lb_reno["marks"] == 0 and lb_reno["drops"] > 1000 and lb_dctcp["drops"] == 0
    full_drain_ms = 5000 * KB * 8 / DC_RATE_BPS * 1e3                 # 4 ms
    assert lb_reno["p99_sojourn_ms"] > 0.9 * full_drain_ms > 5 * lb_dctcp["p99_sojourn_ms"]
    # so many losses in one window end in retransmission timeouts (minimum RTO 1 s)
    assert sum(flow["timeouts"] for flow in reno["flows"].values()) >= 1
    assert sum(flow["retransmissions"] for flow in reno["flows"].values()) > 1000
    reno_last = max(flow["finish_s"] for flow in reno["flows"].values())
    dctcp_last = max(flow["finish_s"] for flow in dctcp["flows"].values())
    assert reno_last > 1.0 and reno_last > 10 * dctcp_last


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_data_center_dctcp_cuts_less_than_reno_with_ecn(data_center_run):
    # --algorithm reno keeps the flows' ECN: Reno halves its window on a mark (RFC 3168), DCTCP
    # cuts it by alpha / 2 (RFC 8257 section 3.3), so DCTCP keeps more of the link busy
    dctcp = data_center_run.summary
    reno = simulate(load("profile_data_center", algorithm="reno")).summary
    for summary in (dctcp, reno):
        lb = summary["links"]["LB"]["directions"]["R1->R2"]
        assert lb["marks"] > 0 and lb["drops"] == 0
        assert all(flow["completed"] and flow["retransmissions"] == 0
                   for flow in summary["flows"].values())
    assert all(flow["algorithm"] == "reno" and flow["ecn_reactions"] >= 1
               for flow in reno["flows"].values())
    last = {name: max(flow["finish_s"] for flow in summary["flows"].values())
            for name, summary in (("dctcp", dctcp), ("reno", reno))}
    assert last["dctcp"] < last["reno"]


# -- dumbbells ---------------------------------------------------------------------------------

def test_dumbbell_has_4_equal_flows_sharing_one_link():
    spec = load("dumbbell")
    assert len(spec.flows) == 4
    assert {flow.data_bytes for flow in spec.flows} == {4 * MB}
    assert {flow.start_s for flow in spec.flows} == {0}
    bottleneck = spec.link("LB")
    assert bottleneck.rate_bps == 10e6 and bottleneck.delay_s == 0.020
    assert bottleneck.buffer_bytes == 55 * KB
    shared = set.intersection(*({link.id for link in path_links(spec, f.src, f.dst)}
                                for f in spec.flows))
    assert shared == {"LB"}
    assert {round(base_rtt_s(spec, f) * 1e3, 9) for f in spec.flows} == {44}
    for text in ("4 pairs", "10 Mb/s", "20 ms", "55 kB", "44 ms", "4 MB"):
        assert text in doc_rows()["dumbbell"], text


def test_dumbbell_reno_flows_share_fairly_and_fill_the_link():
    results = simulate(load("dumbbell"))
    flows = results.summary["flows"]
    goodputs = np.array([flow["goodput_mbps"] for flow in flows.values()])
    jain = goodputs.sum() ** 2 / (len(goodputs) * (goodputs ** 2).sum())
    assert jain > 0.95
    last_finish_s = max(flow["finish_s"] for flow in flows.values())
    assert 4 * 4 * MB * 8 / last_finish_s <= 10e6                 # never above the bottleneck
    assert results.summary["links"]["LB"]["directions"]["R1->R2"]["utilization"] > 0.9


def test_two_rtt_dumbbell_base_rtts_differ_by_a_factor_4():
    spec = load("dumbbell_two_rtt")
    f1, f2 = spec.flow("F1"), spec.flow("F2")
    assert base_rtt_s(spec, f1) == pytest.approx(0.020)
    assert base_rtt_s(spec, f2) == pytest.approx(0.080)
    assert base_rtt_s(spec, f2) / base_rtt_s(spec, f1) == pytest.approx(4.0)
    shared = ({link.id for link in path_links(spec, f1.src, f1.dst)}
              & {link.id for link in path_links(spec, f2.src, f2.dst)})
    assert shared == {"LB"} and spec.link("LB").rate_bps == 10e6
    assert f1.data_bytes == f2.data_bytes == 8 * MB and f1.start_s == f2.start_s == 0
    for text in ("10 Mb/s", "20 ms and 80 ms", "factor 4", "8 MB"):
        assert text in doc_rows()["dumbbell_two_rtt"], text


def test_two_rtt_dumbbell_reno_favours_the_short_rtt():
    results = simulate(load("dumbbell_two_rtt"), duration_s=4.0)   # both flows still running
    flows = results.summary["flows"]
    assert not flows["F1"]["completed"] and not flows["F2"]["completed"]
    assert flows["F1"]["delivered_bytes"] > 2 * flows["F2"]["delivered_bytes"] > 0
    assert check_conservation(results.network) == []


# -- lossy link --------------------------------------------------------------------------------

def test_lossy_link_key_numbers():
    spec = load("lossy_link")
    assert len(spec.links) == 1 and len(spec.flows) == 1
    link, flow = spec.links[0], spec.flows[0]
    assert link.ends == ("H1", "H2")
    assert link.rate_bps == 100e6 and link.delay_s == 0.010 and link.buffer_bytes == 1000 * KB
    forward, backward = link.impairments
    assert forward.loss_rate == 0.01 and not backward.active
    assert base_rtt_s(spec, flow) == pytest.approx(0.020)
    assert flow.data_bytes == 10 * MB
    for text in ("100 Mb/s", "10 ms", "20 ms", "1 %", "10 MB"):
        assert text in doc_rows()["lossy_link"], text


def test_lossy_link_flow_loses_packets_and_still_delivers_every_byte():
    results = simulate(load("lossy_link"))
    flow = results.summary["flows"]["F1"]
    forward = results.summary["links"]["L1"]["directions"]["H1->H2"]
    assert flow["completed"] and flow["in_order"] and flow["delivered_bytes"] == 10 * MB
    assert forward["drops"] == 0                               # the buffer never overflows
    assert forward["impairment_drops"] > 0
    assert 0.005 < forward["impairment_drops"] / forward["packets_transmitted"] < 0.02
    assert flow["retransmissions"] >= forward["impairment_drops"]
    # loss, not the 100 Mb/s link, limits the rate: at most about the Mathis rate
    mathis_mbps = 1.5e3 * 8 / 0.020 * np.sqrt(1.5) / np.sqrt(0.01) / 1e6   # about 7.3
    assert flow["goodput_mbps"] < 1.2 * mathis_mbps < 0.1 * 100
    assert flow["avg_rtt_ms"] < 1.1 * 20 + 1                   # no queue builds up
    assert check_conservation(results.network) == []


# -- parking lot -------------------------------------------------------------------------------

def test_parking_lot_topology():
    spec = load("parking_lot")
    chain = ("L1", "L2", "L3")
    for link_id in chain:
        link = spec.link(link_id)
        assert link.rate_bps == 10e6 and link.delay_s == 0.010 and link.buffer_bytes == 50 * KB
    crossed = {f.id: [link.id for link in path_links(spec, f.src, f.dst) if link.id in chain]
               for f in spec.flows}
    assert crossed == {"F0": ["L1", "L2", "L3"], "F1": ["L1"], "F2": ["L2"], "F3": ["L3"]}
    assert base_rtt_s(spec, spec.flow("F0")) == pytest.approx(0.064)
    for short in ("F1", "F2", "F3"):
        assert base_rtt_s(spec, spec.flow(short)) == pytest.approx(0.024)
    assert {f.data_bytes for f in spec.flows} == {4 * MB} and {f.start_s for f in spec.flows} == {0}
    for text in ("three 10 Mb/s", "64 ms", "24 ms", "4 MB"):
        assert text in doc_rows()["parking_lot"], text


def test_parking_lot_long_flow_gets_less_than_each_short_flow_with_reno():
    results = simulate(load("parking_lot"), duration_s=3.0)   # every flow still running
    flows = results.summary["flows"]
    assert not any(flow["completed"] for flow in flows.values())
    long_bytes = flows["F0"]["delivered_bytes"]
    for short in ("F1", "F2", "F3"):
        assert long_bytes < flows[short]["delivered_bytes"], short
    assert check_conservation(results.network) == []
