"""theory.equilibrium: closed forms, the rank rule on tied prices, the general (full-duplex) NCP
against a brute-force enumeration of active sets, random instances, timing and bad input."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from theory.equilibrium import Equilibrium, EquilibriumError, solve_equilibrium

DATA, ACK = 1024.0, 64.0


# ---------------------------------------------------------------------------------------------
# Helpers

def assert_equilibrium(eq: Equilibrium, c, A, M, alpha, e=None, rtol=1e-12):
    """The NCP conditions and the derived fields, to rtol (relative)."""
    c, A, M, alpha = (np.asarray(v, dtype=float) for v in (c, A, M, alpha))
    e = np.zeros(alpha.shape) if e is None else np.asarray(e, dtype=float)
    x, p = eq.rates, eq.prices
    assert np.all(x > 0)
    assert np.all(p >= 0)
    load = A @ x
    assert np.all(load <= c * (1 + rtol))
    priced = p > 0
    np.testing.assert_allclose(load[priced], c[priced], rtol=rtol)
    q = M.T @ p
    np.testing.assert_allclose(eq.queue_delays, q, rtol=1e-14, atol=0)
    assert np.all(q > e)
    np.testing.assert_allclose(x * (q - e), alpha, rtol=rtol)
    np.testing.assert_allclose(eq.flow_backlogs, alpha, rtol=rtol)
    np.testing.assert_allclose(eq.backlog_bytes, p * c, rtol=1e-14)
    np.testing.assert_allclose(eq.backlog_packets, p * (M @ x), rtol=1e-14)


def fd_newton(resid, v, iters=100):
    """Damped Newton with a central-difference Jacobian on resid(v) = 0 (resid returns None
    outside its domain). The root, or None."""
    r = resid(v)
    for _ in range(iters):
        if r is None:
            return None
        if np.max(np.abs(r)) < 1e-13:
            return v
        J = np.empty((len(v), len(v)))
        for j in range(len(v)):
            h = 1e-7 * max(abs(v[j]), 1e-3)
            step = np.zeros(len(v))
            step[j] = h
            rp, rm = resid(v + step), resid(v - step)
            if rp is None or rm is None:
                return None
            J[:, j] = (rp - rm) / (2 * h)
        d = np.linalg.lstsq(J, -r, rcond=None)[0]
        t = 1.0
        while True:
            rn = resid(v + t * d)
            if rn is not None and np.linalg.norm(rn) < np.linalg.norm(r):
                break
            t /= 2
            if t < 1e-10:
                return v if np.max(np.abs(r)) < 1e-11 else None
        v, r = v + t * d, rn
    return v if np.max(np.abs(r)) < 1e-11 else None


def brute_force(c, A, M, alpha, e=None):
    """Every equilibrium found by enumerating the active sets S and solving load_S(p_S) = c_S
    from a few starts with fd_newton (independent of the module's method): (rates, prices)."""
    c, A, M, alpha = (np.asarray(v, dtype=float) for v in (c, A, M, alpha))
    R, F = A.shape
    e = np.zeros(F) if e is None else np.asarray(e, dtype=float)
    scale = (A @ alpha) / c + e.max()
    found = []

    def prices(S, v):
        p = np.zeros(R)
        p[S] = scale[S] * v
        return p

    def rates(p):
        g = M.T @ p - e
        return alpha / g if np.all(g > 0) else None

    for k in range(1, R + 1):
        for S in map(list, itertools.combinations(range(R), k)):
            def resid(v, S=S):
                x = rates(prices(S, v))
                return None if x is None else (A[S] @ x) / c[S] - 1.0

            for start in (1.0, 0.3, 3.0):
                v = fd_newton(resid, np.full(k, start))
                if v is None or np.any(v <= 0):
                    continue
                p = prices(S, v)
                x = rates(p)
                if np.all(A @ x <= c * (1 + 1e-10)):
                    found.append((x, p))
    return found


def assert_matches_brute_force(eq, c, A, M, alpha, e=None, unique=True):
    sols = brute_force(c, A, M, alpha, e)
    assert sols, "the brute force found no equilibrium"
    close = [np.allclose(eq.rates, x, rtol=1e-9, atol=0) for x, _ in sols]
    assert any(close)
    if unique:
        for x, _ in sols:
            np.testing.assert_allclose(eq.rates, x, rtol=1e-9)


# ---------------------------------------------------------------------------------------------
# Closed forms

@pytest.mark.parametrize("n", [1, 2, 5, 50])
def test_one_link_identical_flows(n):
    C, alpha = 1250.0, 3.0
    ones = np.ones((1, n))
    eq = solve_equilibrium([C], ones, ones, np.full(n, alpha))
    np.testing.assert_allclose(eq.rates, C / n, rtol=1e-13)
    np.testing.assert_allclose(eq.prices, [n * alpha / C], rtol=1e-13)
    np.testing.assert_allclose(eq.queue_delays, n * alpha / C, rtol=1e-13)
    np.testing.assert_allclose(eq.backlog_packets, [n * alpha], rtol=1e-13)
    np.testing.assert_allclose(eq.backlog_bytes, [n * alpha], rtol=1e-13)   # 1 byte per packet
    assert_equilibrium(eq, [C], ones, ones, np.full(n, alpha))


def test_one_link_rates_proportional_to_alpha():
    C = 800.0
    alpha = np.array([1.0, 3.0])
    eq = solve_equilibrium([C], [[1, 1]], [[1, 1]], alpha)
    np.testing.assert_allclose(eq.rates, C * alpha / alpha.sum(), rtol=1e-13)
    np.testing.assert_allclose(eq.prices, [alpha.sum() / C], rtol=1e-13)


def test_half_duplex_link_weights():
    """One half-duplex link: every data packet brings DATA + ACK bytes and queues twice."""
    C, n, alpha = 1.25e6, 4, 20.0
    A = np.full((1, n), DATA + ACK)
    M = np.full((1, n), 2.0)
    eq = solve_equilibrium([C], A, M, np.full(n, alpha))
    x = C / (n * (DATA + ACK))
    np.testing.assert_allclose(eq.rates, x, rtol=1e-13)
    np.testing.assert_allclose(eq.prices, [alpha / (2 * x)], rtol=1e-13)
    np.testing.assert_allclose(eq.backlog_packets, [n * alpha], rtol=1e-13)  # data + ACKs
    assert_equilibrium(eq, [C], A, M, np.full(n, alpha))


def parking_lot(c1, c2):
    A = np.array([[1.0, 1.0, 0.0], [1.0, 0.0, 1.0]])   # long flow 0; short flows 1 and 2
    return np.array([c1, c2]), A


def test_parking_lot_equal_capacities():
    C = 900.0
    c, A = parking_lot(C, C)
    eq = solve_equilibrium(c, A, A, [2.0, 2.0, 2.0])
    np.testing.assert_allclose(eq.rates, [C / 3, 2 * C / 3, 2 * C / 3], rtol=1e-13)
    assert_equilibrium(eq, c, A, A, [2.0, 2.0, 2.0])


@pytest.mark.parametrize("c1,c2", [(100.0, 300.0), (1000.0, 999.0), (5.0, 7.0)])
def test_parking_lot_unequal_capacities(c1, c2):
    # 1/y = 1/(c1 - y) + 1/(c2 - y)  =>  3 y^2 - 2 (c1 + c2) y + c1 c2 = 0, the smaller root
    y = ((c1 + c2) - math.sqrt((c1 + c2) ** 2 - 3 * c1 * c2)) / 3
    c, A = parking_lot(c1, c2)
    eq = solve_equilibrium(c, A, A, [1.0, 1.0, 1.0])
    np.testing.assert_allclose(eq.rates, [y, c1 - y, c2 - y], rtol=1e-12)
    assert_equilibrium(eq, c, A, A, [1.0, 1.0, 1.0])
    assert_matches_brute_force(eq, c, A, A, [1.0, 1.0, 1.0])


def test_late_joiner_golden_split():
    C, alpha = 500.0, 2.0
    e = [0.0, alpha / C]                      # flow 1 alone had q = alpha / C when flow 2 joined
    eq = solve_equilibrium([C], [[1, 1]], [[1, 1]], [alpha, alpha], joined_delay=e)
    np.testing.assert_allclose(eq.rates / C, [(3 - math.sqrt(5)) / 2, (math.sqrt(5) - 1) / 2],
                               rtol=1e-13)
    np.testing.assert_allclose(eq.prices, [(3 + math.sqrt(5)) / 2 * alpha / C], rtol=1e-13)
    assert_equilibrium(eq, [C], [[1, 1]], [[1, 1]], [alpha, alpha], e)


# ---------------------------------------------------------------------------------------------
# Degeneracy: the rank rule

def test_tandem_price_at_rank_zero():
    C = 1000.0
    col = np.ones((3, 1))
    eq = solve_equilibrium([C, C, C], col, col, [4.0], rank=[0, 1, 2])
    np.testing.assert_allclose(eq.rates, [C], rtol=1e-14)
    np.testing.assert_allclose(eq.prices, [4.0 / C, 0.0, 0.0], rtol=1e-14, atol=0)
    eq = solve_equilibrium([C, C, C], col, col, [4.0], rank=[2, 1, 0])
    np.testing.assert_allclose(eq.prices, [0.0, 0.0, 4.0 / C], rtol=1e-14, atol=0)
    eq = solve_equilibrium([C, C, C], col, col, [4.0])               # equal ranks: by index
    np.testing.assert_allclose(eq.prices, [4.0 / C, 0.0, 0.0], rtol=1e-14, atol=0)


def test_tandem_faster_first_hop_moves_the_queue():
    C = 1000.0
    col = np.ones((3, 1))
    eq = solve_equilibrium([2 * C, C, C], col, col, [4.0], rank=[0, 1, 2])
    np.testing.assert_allclose(eq.rates, [C], rtol=1e-14)
    np.testing.assert_allclose(eq.prices, [0.0, 4.0 / C, 0.0], rtol=1e-14, atol=0)


def test_tandem_half_duplex_with_late_joiner():
    C = 1.25e6
    A = np.full((3, 2), DATA + ACK)
    M = np.full((3, 2), 2.0)
    e = [0.0, 0.01]
    eq = solve_equilibrium([C, C, C], A, M, [10.0, 10.0], joined_delay=e, rank=[0, 1, 2])
    assert eq.prices[0] > 0 and eq.prices[1] == 0 and eq.prices[2] == 0
    assert_equilibrium(eq, [C, C, C], A, M, [10.0, 10.0], e)
    assert_matches_brute_force(eq, [C, C, C], A, M, [10.0, 10.0], e)


def test_multi_flow_tie_follows_ranks():
    """r0 = {a}, r1 = {b}, r2 = {a, b} with c2 = c0 + c1: all three saturate, and the price can
    sit on r2 or on r0 and r1; it goes to the lower ranks."""
    M = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    c = [5.0, 5.0, 10.0]
    eq = solve_equilibrium(c, M, M, [1.0, 1.0], rank=[1, 1, 0])
    np.testing.assert_allclose(eq.rates, [5.0, 5.0], rtol=1e-14)
    np.testing.assert_allclose(eq.prices, [0.0, 0.0, 0.2], rtol=1e-14, atol=0)
    eq = solve_equilibrium(c, M, M, [1.0, 1.0], rank=[0, 0, 1])
    np.testing.assert_allclose(eq.prices, [0.2, 0.2, 0.0], rtol=1e-14, atol=0)
    # r0 first, then r2, then r1: p1 = 0 is minimised first, which leaves everything on r2
    eq = solve_equilibrium(c, M, M, [1.0, 1.0], rank=[0, 2, 1])
    np.testing.assert_allclose(eq.prices, [0.0, 0.0, 0.2], rtol=1e-14, atol=0)
    assert_equilibrium(eq, c, M, M, [1.0, 1.0])


def lexicographic_vertex(c, M, eq, rank):
    """Brute force of the rank rule: among the price vectors with the same queueing delays,
    supported on saturated resources, the lexicographically smallest when read from the highest
    (rank, index) down. The minimum of a lexicographic LP is at a vertex: enumerate them."""
    R = len(c)
    B = np.flatnonzero(M @ eq.rates >= np.asarray(c) * (1 - 1e-12))
    q = eq.queue_delays
    order = np.lexsort((np.arange(R), rank))[::-1]
    best = None
    for k in range(1, len(B) + 1):
        for S in map(list, itertools.combinations(B, k)):
            E = M[S].T
            if np.linalg.matrix_rank(E) < k:
                continue
            v = np.linalg.lstsq(E, q, rcond=None)[0]
            if np.linalg.norm(E @ v - q) > 1e-9 * np.linalg.norm(q) or np.any(v <= 1e-12):
                continue
            p = np.zeros(R)
            p[S] = v
            key = tuple(np.round(p[order] / np.max(q), 9))
            if best is None or key < best[0]:
                best = (key, p)
    return best[1]


def test_rank_rule_random_ties():
    """Equal integer capacities make ties common; the prices are the lexicographic vertex."""
    rng = np.random.default_rng(143)
    ties = 0
    for _ in range(300):
        R, F = int(rng.integers(2, 7)), int(rng.integers(1, 6))
        M = (rng.random((R, F)) < 0.5).astype(float)
        M[rng.integers(0, R, F), np.arange(F)] = 1
        c = rng.integers(1, 3, R).astype(float)
        rank = rng.integers(0, 3, R)
        eq = solve_equilibrium(c, M, M, np.ones(F), rank=rank)
        assert_equilibrium(eq, c, M, M, np.ones(F))
        best = lexicographic_vertex(c, M, eq, rank)
        np.testing.assert_allclose(eq.prices, best, rtol=1e-9, atol=1e-12)
        saturated = M[M @ eq.rates >= c * (1 - 1e-12)]
        ties += np.linalg.matrix_rank(saturated) < len(saturated)   # prices not unique
    assert ties > 30                                       # the test does exercise ties


# ---------------------------------------------------------------------------------------------
# Full duplex: the general NCP (A is not kappa * M)

def full_duplex_chain(n_links, flows, data=DATA, ack=ACK):
    """Links 0..n-1 joining nodes 0..n; resource 2l = link l left-to-right, 2l+1 = right-to-left.
    flows: (src node, dst node). Data on the forward direction of each hop, ACKs on the reverse;
    both directions of every link on the path are visited once per round trip. The rank of a
    direction is the smallest round-trip hop index at which a flow's packets enter it."""
    R, F = 2 * n_links, len(flows)
    A = np.zeros((R, F))
    M = np.zeros((R, F))
    rank = np.full(R, 10 ** 6)
    for i, (s, d) in enumerate(flows):
        step = 1 if d > s else -1
        links = list(range(s, d)) if step == 1 else list(range(s - 1, d - 1, -1))
        for hop, l in enumerate(links):
            fwd, rev = (2 * l, 2 * l + 1) if step == 1 else (2 * l + 1, 2 * l)
            A[fwd, i] += data
            A[rev, i] += ack
            M[fwd, i] = M[rev, i] = 1.0
            rank[fwd] = min(rank[fwd], hop)
            rank[rev] = min(rank[rev], 2 * len(links) - 1 - hop)
    return A, M, rank


def test_full_duplex_saturated_ack_direction():
    """Link 0 (C) carries flow 0 left-to-right and flows 1, 2 right-to-left; link 1 (fast)
    carries flow 1 only. Right-to-left on link 0 (the ACK direction of flow 0) saturates: it
    carries two data streams plus flow 0's ACKs."""
    A, M, rank = full_duplex_chain(2, [(0, 1), (2, 0), (1, 0)])
    C = 1.25e6
    c = np.array([C, C, 10 * C, 10 * C])
    alpha = np.array([5.0, 5.0, 5.0])
    eq = solve_equilibrium(c, A, M, alpha, rank=rank)
    assert_equilibrium(eq, c, A, M, alpha)
    load = A @ eq.rates
    assert load[1] == pytest.approx(C, rel=1e-13)          # the ACK direction of flow 0 is full
    assert load[0] < C * (1 - 1e-3)                        # the data direction of flow 0 is not
    assert eq.prices[1] > 0 and eq.prices[0] == 0
    # all three flows see the same queue (they all cross both directions of link 0 once)
    x = alpha / eq.queue_delays
    np.testing.assert_allclose(eq.rates, x, rtol=1e-13)
    np.testing.assert_allclose(eq.rates, C / (ACK + 2 * DATA), rtol=1e-12)
    assert_matches_brute_force(eq, c, A, M, alpha, unique=True)


def test_full_duplex_two_bottlenecks_brute_force():
    A, M, rank = full_duplex_chain(3, [(0, 3), (1, 0), (1, 2), (3, 2), (2, 3)])
    c = np.array([1.0e6, 1.0e6, 2.0e6, 2.0e6, 0.7e6, 0.7e6])
    alpha = np.array([4.0, 2.0, 6.0, 3.0, 1.0])
    e = np.array([0.0, 0.0, 1e-3, 0.0, 2e-3])
    eq = solve_equilibrium(c, A, M, alpha, joined_delay=e, rank=rank)
    assert_equilibrium(eq, c, A, M, alpha, e)
    assert np.count_nonzero(eq.prices) >= 2
    assert_matches_brute_force(eq, c, A, M, alpha, e, unique=False)


def test_full_duplex_random_chains():
    rng = np.random.default_rng(7)
    for _ in range(150):
        n = int(rng.integers(1, 5))
        flows = []
        for _ in range(int(rng.integers(1, 7))):
            s, d = rng.choice(n + 1, size=2, replace=False)
            flows.append((int(s), int(d)))
        A, M, rank = full_duplex_chain(n, flows)
        keep = A.any(axis=1)
        A, M, rank = A[keep], M[keep], rank[keep]
        c = np.repeat(rng.choice([1.0e6, 1.25e6, 2.5e6], size=n), 2)[keep]
        alpha = rng.uniform(1, 20, len(flows))
        e = np.where(rng.random(len(flows)) < 0.3, rng.uniform(0, 0.02, len(flows)), 0.0)
        eq = solve_equilibrium(c, A, M, alpha, joined_delay=e, rank=rank)
        assert_equilibrium(eq, c, A, M, alpha, e)


# ---------------------------------------------------------------------------------------------
# Random instances

@st.composite
def instances(draw):
    R = draw(st.integers(1, 8))
    F = draw(st.integers(1, 10))
    cells = draw(st.lists(st.booleans(), min_size=R * F, max_size=R * F))
    M = np.array(cells, dtype=float).reshape(R, F)
    for i in range(F):
        if not M[:, i].any():
            M[draw(st.integers(0, R - 1)), i] = 1.0
    kappa = np.array(draw(st.lists(st.sampled_from([1.0, DATA + ACK, 1.5]),
                                   min_size=F, max_size=F)))
    twice = draw(st.booleans())                               # half duplex: queue twice
    A = M * kappa[None, :]
    M = 2 * M if twice else M
    floats = dict(allow_nan=False, allow_infinity=False)
    c = np.array(draw(st.lists(st.floats(0.5, 1000.0, **floats), min_size=R, max_size=R)))
    alpha = np.array(draw(st.lists(st.floats(0.1, 50.0, **floats), min_size=F, max_size=F)))
    late = draw(st.lists(st.floats(0.0, 1.0, **floats), min_size=F, max_size=F))
    # a late joiner's error is at most half the delay its least loaded resource could have
    # (all backlogs there): large enough to matter, not so large that q - e loses most digits
    delay = (A @ alpha) / c
    scale = np.array([delay[(A[:, i] > 0) & (M[:, i] > 0)].min() for i in range(F)])
    e = np.array([0.0 if v < 0.5 else v - 0.5 for v in late]) * scale
    rank = np.array(draw(st.lists(st.integers(0, 3), min_size=R, max_size=R)))
    return c, A, M, alpha, e, rank


@pytest.mark.slow   # a whole simulation of several seconds: CI runs it with -m slow
@settings(max_examples=300, deadline=None)
@given(instances())
def test_random_instances(inst):
    c, A, M, alpha, e, rank = inst
    eq = solve_equilibrium(c, A, M, alpha, joined_delay=e, rank=rank)
    assert_equilibrium(eq, c, A, M, alpha, e, rtol=1e-9)
    again = solve_equilibrium(c, A, M, alpha, joined_delay=e, rank=rank)
    for name in ("rates", "prices", "queue_delays", "backlog_bytes", "backlog_packets",
                 "flow_backlogs"):
        assert np.array_equal(getattr(eq, name), getattr(again, name))
    assert eq.iterations == again.iterations


def test_random_instances_match_brute_force():
    """Proportionally fair instances have unique rates: the brute force finds only them."""
    rng = np.random.default_rng(11)
    for _ in range(40):
        R, F = int(rng.integers(1, 4)), int(rng.integers(1, 5))
        M = (rng.random((R, F)) < 0.6).astype(float)
        M[rng.integers(0, R, F), np.arange(F)] = 1
        c = rng.uniform(1, 10, R)
        alpha = rng.uniform(0.5, 3, F)
        e = np.where(rng.random(F) < 0.3, rng.uniform(0, 0.3, F), 0.0)
        eq = solve_equilibrium(c, M, M, alpha, joined_delay=e)
        assert_matches_brute_force(eq, c, M, M, alpha, e, unique=True)


HARD = {
    # packet sizes 1 and 1088 mixed on one resource, late joiners close to the final delay: the
    # Fischer-Burmeister Newton stalls from the first start; the barrier path following solves them
    "mixed sizes, late joiner": (
        [3.0, 2.0],
        [[1, 1, 1, 1, 1088, 1, 0], [0, 0, 0, 0, 1088, 0, 1]],
        [1, 1, 1, 1, 1, 1, 1], [0, 0, 0, 0, 0, 182.16666667, 0], 1),
    "half duplex, several late joiners": (
        [498.3147, 380.811, 86.6475, 611.4675],
        [[1088, 1, 0, 1088], [1088, 0, 1, 0], [0, 0, 1, 1088], [1088, 1, 1, 0]],
        [36.2215, 1.0, 25.6101, 2.0], [0.0, 10.5412, 6.9008, 3.1443], 2),
}


@pytest.mark.parametrize("name", sorted(HARD))
def test_hard_instances(name):
    c, A, alpha, e, visits = HARD[name]
    A = np.array(A, dtype=float)
    M = visits * (A > 0)
    eq = solve_equilibrium(c, A, M, alpha, joined_delay=e)
    assert_equilibrium(eq, c, A, M, alpha, e, rtol=1e-11)
    assert_matches_brute_force(eq, c, A, M, alpha, e)


def test_failure_is_reported():
    c, A = parking_lot(100.0, 300.0)
    with pytest.raises(EquilibriumError, match="no equilibrium found"):
        solve_equilibrium(c, A, A, [1.0, 1.0, 1.0], max_iter=1)


# ---------------------------------------------------------------------------------------------
# Timing, edge cases, bad input

def test_a_30_by_30_network_reaches_its_equilibrium():
    rng = np.random.default_rng(3)
    M = (rng.random((30, 30)) < 0.15).astype(float)
    M[rng.integers(0, 30, 30), np.arange(30)] = 1
    c = rng.integers(1, 4, 30) * 1.25e6
    alpha = rng.uniform(1, 20, 30)
    A = M * (DATA + ACK)
    eq = solve_equilibrium(c, A, 2 * M, alpha, rank=rng.integers(0, 5, 30))
    assert_equilibrium(eq, c, A, 2 * M, alpha)


def test_no_flows_and_unused_resources():
    eq = solve_equilibrium([1.0, 2.0], np.zeros((2, 0)), np.zeros((2, 0)), [])
    assert eq.rates.shape == (0,) and np.array_equal(eq.prices, [0.0, 0.0])
    assert eq.iterations == 0
    # resource 1 carries nothing: no price, whatever M says
    eq = solve_equilibrium([10.0, 1.0], [[1.0], [0.0]], [[1.0], [1.0]], [2.0])
    np.testing.assert_allclose(eq.prices, [0.2, 0.0], rtol=1e-14, atol=0)
    np.testing.assert_allclose(eq.rates, [10.0], rtol=1e-14)


def test_result_is_read_only():
    eq = solve_equilibrium([1.0], [[1.0]], [[1.0]], [1.0])
    with pytest.raises(ValueError):
        eq.rates[0] = 5.0
    with pytest.raises(AttributeError):
        eq.iterations = 3


@pytest.mark.parametrize("kwargs,match", [
    (dict(capacity=[0.0]), "capacities must be positive"),
    (dict(capacity=[math.inf]), "capacity must be finite"),
    (dict(alpha=[0.0]), "alpha must be positive"),
    (dict(alpha=[1.0, 1.0]), "A must have shape"),
    (dict(A=[[1.0, 1.0]]), "A must have shape"),
    (dict(M=[[1.0], [1.0]]), "M must have shape"),
    (dict(A=[[-1.0]]), "A must be nonnegative"),
    (dict(M=[[math.nan]]), "M must be finite"),
    (dict(M=[[0.0]]), "every flow must cross"),
    (dict(A=[[0.0]]), "load no resource"),
    (dict(joined_delay=[-1.0]), "joined_delay must be nonnegative"),
    (dict(joined_delay=[1.0, 2.0]), "joined_delay must have shape"),
    (dict(rank=[0, 1]), "rank must have shape"),
    (dict(tol=0.0), "tol"),
    (dict(max_iter=0), "max_iter"),
    (dict(capacity=[[1.0]]), "capacity must be 1-dimensional"),
])
def test_bad_input(kwargs, match):
    args = dict(capacity=[1.0], A=[[1.0]], M=[[1.0]], alpha=[1.0])
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        solve_equilibrium(args.pop("capacity"), args.pop("A"), args.pop("M"), args.pop("alpha"),
                          **args)
