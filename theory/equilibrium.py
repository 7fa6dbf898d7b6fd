"""Equilibrium of delay-based flows (FAST TCP, Vegas): rates, queueing delays and backlogs.

Model
-----
A delay-based flow in equilibrium keeps a fixed number ``alpha_i`` of its own packets queued along
its round trip. The network is a set of *resources* ``r = 1..R``: transmitters, i.e. one direction
of a full-duplex link, or a whole half-duplex link (its two directions share one FIFO and one
transmitter). Resource ``r`` serves ``c_r > 0`` bytes/s. Flow ``i = 1..F`` sends ``x_i`` data
packets/s (one ACK per data packet). Two nonnegative ``R x F`` matrices describe the paths:

* ``A[r, i]``: bytes one data packet of flow ``i`` puts on ``r``, its ACK included (a half-duplex
  link on the path: data + ACK bytes; a full-duplex direction: data bytes on the data direction,
  ACK bytes on the reverse direction). The load of ``r`` is ``load_r = sum_i A[r, i] x_i``.
* ``M[r, i]``: how many times one round trip of flow ``i`` waits in the queue of ``r`` (half duplex
  on the path: 2, data and ACK queue in the same FIFO; a full-duplex direction: 1 if the data or
  the ACK passes it).

The *price* ``p_r >= 0`` of a resource is its queueing delay in seconds; flow ``i`` sees the
queueing delay ``q_i = sum_r M[r, i] p_r``. A flow that joined when its path already had the
queueing delay ``e_i >= 0`` measured a base RTT too high by ``e_i`` (the late-joiner error), so it
settles where ``x_i (q_i - e_i) = alpha_i``:

    x_i(p) = alpha_i / (q_i(p) - e_i),        which requires q_i > e_i.

The equilibrium is the nonlinear complementarity problem (NCP): find ``p`` with, for every ``r``,

    p_r >= 0,    load_r(p) <= c_r,    p_r (c_r - load_r(p)) = 0,

i.e. a queue (a positive delay) exists only at a saturated resource. Every flow must queue at
least once (``M[:, i] != 0``) and load some resource it queues at (``A[r, i] M[r, i] > 0`` for
some ``r``); otherwise its rate is unbounded and :func:`solve_equilibrium` raises ``ValueError``.

When ``A[r, i] = kappa_i M[r, i]`` for all ``r`` (every link half duplex, for instance) the NCP is the
KKT system of ``max sum_i kappa_i (alpha_i log x_i + e_i x_i)`` subject to ``A x <= c`` (weighted
proportional fairness when ``e = 0``), whose dual ``D(p) = sum_r c_r p_r - sum_i kappa_i alpha_i
log(q_i - e_i)`` is a convex potential; the rates are then unique. The same holds, after scaling
row ``r`` by ``1 / a_r``, when ``A[r, i] = a_r kappa_i M[r, i]``. In general (full-duplex links,
where ``A`` weighs the data and the ACK directions differently) the map ``p -> c - load(p)`` has the
Jacobian ``-A diag(x_i^2 / alpha_i) M^T``, which need not be symmetric nor P0; the solver treats
the general NCP (whose solutions need not be unique: it returns one).

Degeneracy and the rank rule
----------------------------
The rates may be unique while the prices are not: a flow alone across three equal links in tandem
has the rate ``c`` and the queueing delay ``alpha / c``, but any split of that delay among the three
links solves the NCP. Physically the queue builds at the *first* saturated resource along the path
(downstream resources receive traffic already paced at their rate). The caller gives every
resource a ``rank`` (e.g. the smallest hop index of ``r`` along the data paths crossing it,
0 = first hop); resources of equal rank are ordered by index. With ``pos_r`` the position of ``r``
in the order (rank, index), the rule is: among the solutions with the same queueing delays ``q``
(hence the same rates and loads), the prices are the *lexicographically smallest read from the
highest position down*: first the price of the last resource is made as small as possible, then
that of the one before, and so on. For three equal links in tandem this puts the whole delay on
rank 0; if the first link is faster, on the second. The set of such solutions is the polytope
``{p >= 0 : M^T p = q, p_r = 0 unless load_r = c_r}``, and the rule picks one of its vertices.

Method
------
1. *Newton.* The NCP is written with the Fischer-Burmeister function
   ``phi(a, b) = a + b - sqrt(a^2 + b^2)`` (zero iff ``a, b >= 0`` and ``a b = 0``) on the scaled pair
   ``a_r = u_r = p_r / T_r`` (``T_r`` a delay scale of ``r``: ``sum_i A[r, i] alpha_i / c_r`` plus the
   largest ``e_i`` on ``r``) and ``b_r = s_r = 1 - load_r / c_r``, together with the rate equations
   ``x_i (q_i - e_i) / alpha_i - 1 = 0`` in the unknowns ``(x, u)`` (the bilinear form behaves far
   better under Newton's method than ``x = alpha / (q - e)``). A semismooth Newton method with an
   Armijo line search on ``0.5 ||residual||^2`` solves it, with steps kept inside ``x > 0``,
   ``q > e`` (fraction to the boundary) and a Levenberg-Marquardt step when the Newton direction is
   not a good descent direction. The start is ``p = T`` (scaled up until every ``q_i >= 2 e_i``).
2. *Barrier path following* if step 1 stalls (the Fischer-Burmeister merit has spurious minima
   when the Jacobian ``A diag(x^2/alpha) M^T`` is not a P0 matrix, and converges slowly on badly
   scaled instances): damped Newton on ``s_r(u) = mu / u_r`` with ``mu`` decreased from 1 towards
   0 by factors 10 to 100 once the iterate is centred (``|u_r s_r - mu| <= mu / 2``), inside
   ``u > 0, q > e``. When ``A[r, i] = a_r kappa_i M[r, i]`` (detected) the line search is on the
   convex potential ``sum_r b_r u_r - sum_i kappa_i alpha_i log(q_i - e_i) - mu sum_r b_r log u_r``
   (``b_r = T_r c_r / a_r``), which makes it globally convergent; otherwise on the residual.
   If that fails too, step 1 is retried from up to 39 seeded random starts ``T * lognormal``.
3. *Active set, rank rule.* ``B`` = the saturated resources (``u_r > s_r`` or ``s_r <= 1e-9``). If the
   columns of ``M_B^T`` are independent the price split is unique: ``S = {r in B : u_r > s_r}``.
   Otherwise the lexicographic rule is applied exactly by a small dense simplex (two phases,
   Bland's rule): minimise ``p`` of the highest position over ``{p_B >= 0 : M_B^T p_B = q}``, fix
   the variables with positive reduced costs at zero, minimise the next one, ...; ``S`` = the
   support of the resulting vertex.
4. *Polish.* The square system ``load_r(p) = c_r`` for ``r`` in ``S``, ``p_r = 0`` elsewhere, is
   solved by Newton's method (backtracking on the residual and the domain) to rounding level.
5. *Verify.* ``p_S > 0``, ``x > 0``, ``load <= c (1 + eps_v)`` and ``|load_r / c_r - 1| <= eps_v`` on
   ``S``, with ``eps_v = max(tol, 16 u n, 16 u max_i q_i / (q_i - e_i))`` (``u`` the unit roundoff,
   ``n`` the most flows on one resource; the last term is the precision ``q - e`` can have). On
   failure the active set is repaired one resource at a time -- a resource with a nonpositive
   price leaves, else the most overloaded resource joins, a singular system drops its highest
   positioned member -- and steps 4-5 repeat. If nothing verifies, :class:`EquilibriumError`.

Resources no flow loads (``A[r, :] == 0``) carry no traffic and get ``p_r = 0`` directly. The result
is deterministic: the same input gives bit-identical output. Iterations are counted over all
Newton steps of all stages (``max_iter`` bounds each run of steps 1 and 2).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from theory.ncp import NcpProblem
from theory.ncp_newton import EquilibriumError

__all__ = ["Equilibrium", "EquilibriumError", "solve_equilibrium"]


@dataclass(frozen=True)
class Equilibrium:
    """An equilibrium of :func:`solve_equilibrium` (arrays are read-only)."""

    rates: np.ndarray            # x_i, data packets/s
    prices: np.ndarray           # p_r, seconds of queueing delay per resource
    queue_delays: np.ndarray     # q_i = M^T p, seconds
    backlog_bytes: np.ndarray    # per resource: p_r * c_r (bytes waiting at r)
    backlog_packets: np.ndarray  # per resource: p_r * sum_i M[r,i] x_i (data and ACKs; Little's law)
    flow_backlogs: np.ndarray    # per flow: x_i * (q_i - e_i) (equals alpha_i; a check)
    iterations: int              # Newton iterations, all stages


# ---------------------------------------------------------------------------------------------
# Validation

def _array(name: str, value, ndim: int) -> np.ndarray:
    try:
        arr = np.array(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric: {exc}") from None
    if arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite")
    return arr


def _validate(capacity, A, M, alpha, joined_delay, rank, tol, max_iter):
    c = _array("capacity", capacity, 1)
    alpha = _array("alpha", alpha, 1)
    R, F = c.shape[0], alpha.shape[0]
    empty = R * F == 0
    A = np.zeros((R, F)) if empty and np.size(A) == 0 else _array("A", A, 2)
    M = np.zeros((R, F)) if empty and np.size(M) == 0 else _array("M", M, 2)
    if A.shape != (R, F):
        raise ValueError(f"A must have shape (resources, flows) = {(R, F)}, got {A.shape}")
    if M.shape != (R, F):
        raise ValueError(f"M must have shape (resources, flows) = {(R, F)}, got {M.shape}")
    if np.any(c <= 0):
        raise ValueError(f"capacities must be positive, got {c[c <= 0].tolist()}")
    if np.any(alpha <= 0):
        raise ValueError(f"alpha must be positive, got {alpha[alpha <= 0].tolist()}")
    if np.any(A < 0):
        raise ValueError("A must be nonnegative")
    if np.any(M < 0):
        raise ValueError("M must be nonnegative")
    e = np.zeros(F) if joined_delay is None else _array("joined_delay", joined_delay, 1)
    if e.shape != (F,):
        raise ValueError(f"joined_delay must have shape ({F},), got {e.shape}")
    if np.any(e < 0):
        raise ValueError("joined_delay must be nonnegative")
    rk = np.zeros(R) if rank is None else _array("rank", rank, 1)
    if rk.shape != (R,):
        raise ValueError(f"rank must have shape ({R},), got {rk.shape}")
    if not (isinstance(tol, (int, float)) and 0 < tol < 1e-3):
        raise ValueError(f"tol must be a number in (0, 1e-3), got {tol!r}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer, got {max_iter!r}")
    if F:
        crosses = np.any(M > 0, axis=0)
        if not crosses.all():
            bad = np.flatnonzero(~crosses).tolist()
            raise ValueError(f"every flow must cross at least one resource; flows {bad} cross none")
        loads = np.any((A > 0) & (M > 0), axis=0)
        if not loads.all():
            bad = np.flatnonzero(~loads).tolist()
            raise ValueError(f"flows {bad} load no resource they queue at (need A[r,i] > 0 and "
                             "M[r,i] > 0 for some r); their rate would be unbounded")
    return c, A, M, alpha, e, rk, float(tol), int(max_iter)


def _readonly(*arrays):
    for arr in arrays:
        arr.setflags(write=False)
    return arrays


def solve_equilibrium(capacity, A, M, alpha, *, joined_delay=None, rank=None, tol=1e-12,
                      max_iter=200) -> Equilibrium:
    """Equilibrium rates and queueing delays of delay-based flows (see the module docstring).

    capacity (R,) bytes/s > 0; A (R, F) bytes per data packet (ACK included) on each resource;
    M (R, F) queue visits per round trip; alpha (F,) packets each flow keeps queued > 0;
    joined_delay (F,) seconds of queueing delay already on the path when the flow joined
    (default 0); rank (R,) tie-breaking order, lower ranks take the queue first (default 0, then
    by index); tol: relative tolerance of the verified complementarity conditions.
    Raises ValueError on invalid input, EquilibriumError if no equilibrium is found.
    """
    c, A, M, alpha, e, rk, tol, max_iter = _validate(capacity, A, M, alpha, joined_delay, rank,
                                                     tol, max_iter)
    R, F = A.shape
    prices = np.zeros(R)
    iterations = 0
    if F:
        used = np.flatnonzero(np.any(A > 0, axis=1))
        prob = NcpProblem(c[used], A[used], M[used], alpha, e, rk[used], tol, max_iter)
        p_used, _ = prob.solve()
        prices[used] = p_used
        iterations = prob.iterations
    q = M.T @ prices
    g = q - e
    rates = alpha / g if F else np.zeros(0)
    backlog_bytes = prices * c
    backlog_packets = prices * (M @ rates)
    flow_backlogs = rates * g
    _readonly(rates, prices, q, backlog_bytes, backlog_packets, flow_backlogs)
    return Equilibrium(rates=rates, prices=prices, queue_delays=q, backlog_bytes=backlog_bytes,
                       backlog_packets=backlog_packets, flow_backlogs=flow_backlogs,
                       iterations=iterations)
