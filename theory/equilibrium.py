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

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

__all__ = ["Equilibrium", "EquilibriumError", "solve_equilibrium"]

_EPS = np.finfo(float).eps
_FB_TOL = 1e-13          # Fischer-Burmeister target (scaled units)
_FB_ACCEPT = 1e-9        # a start whose residual stays above this is abandoned
_STALL_WINDOW = 25       # iterations without a 10% smaller residual = stalled
_STARTS = 40             # starting points tried before giving up
_MU_END = 1e-24          # the barrier path following stops here at the latest (scaled)
_BINDING = 1e-9          # relative slack below which a resource counts as binding
_POLISH_MAX_ITER = 60


class EquilibriumError(RuntimeError):
    """The solver found no point satisfying the equilibrium conditions to the tolerance."""


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


# ---------------------------------------------------------------------------------------------
# The solver proper, on the resources that carry load

def _fb(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Fischer-Burmeister a + b - sqrt(a^2 + b^2), cancellation-free where a, b > 0."""
    r = np.hypot(a, b)
    s = a + b
    out = s - r
    pos = s > 0
    out[pos] = 2.0 * a[pos] * b[pos] / (s[pos] + r[pos])
    return out


def _pivot(T: np.ndarray, basis: list, row: int, col: int) -> None:
    T[row] /= T[row, col]
    others = np.flatnonzero(T[:, col])
    others = others[others != row]
    T[others] -= np.outer(T[others, col], T[row])
    basis[row] = col


def _lexmin(E: np.ndarray, b: np.ndarray, order) -> Optional[np.ndarray]:
    """Lexicographically minimise v[order[0]], then v[order[1]], ... over {v >= 0 : E v = b}.

    A dense two-phase simplex with Bland's rule (no cycling). After each level the variables
    with a positive reduced cost are fixed at zero, so later levels keep the earlier optima.
    Returns None if the set looks empty (to the tolerance).
    """
    m, n = E.shape
    scale = max(float(np.max(np.abs(b))), 1e-300)
    E = E / scale
    b = b / scale
    flip = b < 0
    E[flip] *= -1.0
    b = np.abs(b)
    tol = 1e-9
    # phase 1: minimise the sum of artificials; tableau [E | I | b]
    T = np.hstack([E, np.eye(m), b[:, None]])
    basis = list(range(n, n + m))
    allowed = np.ones(n + m, dtype=bool)

    def optimise(cost: np.ndarray) -> None:
        for _ in range(50 * (n + m) + 50):
            d = cost[:-1] - cost[basis] @ T[:, :-1]
            enter = np.flatnonzero(allowed & (d < -tol))
            if enter.size == 0:
                return
            col = int(enter[0])                                  # Bland: the smallest index
            colv = T[:, col]
            rows = np.flatnonzero(colv > tol)
            if rows.size == 0:
                return                                           # unbounded: cannot happen here
            ratios = T[rows, -1] / colv[rows]
            best = ratios.min()
            ties = rows[ratios <= best + tol * max(1.0, best)]
            row = int(min(ties, key=lambda i: basis[i]))        # Bland: the smallest basic index
            _pivot(T, basis, row, col)

    cost = np.zeros(n + m + 1)
    cost[n:n + m] = 1.0
    optimise(cost)
    if float(T[:, -1] @ (np.array(basis) >= n)) > 1e-8:
        return None
    # drive the artificials out of the basis; a row with no way out is redundant
    keep_rows = []
    for i in range(m):
        if basis[i] >= n:
            cols = np.flatnonzero(np.abs(T[i, :n]) > tol)
            if cols.size:
                _pivot(T, basis, i, int(cols[0]))
                keep_rows.append(i)
        else:
            keep_rows.append(i)
    T = T[keep_rows][:, list(range(n)) + [n + m]]
    basis = [basis[i] for i in keep_rows]
    allowed = np.ones(n, dtype=bool)
    for r in order:
        cost = np.zeros(n + 1)
        cost[r] = 1.0
        optimise(cost)
        d = cost[:-1] - cost[basis] @ T[:, :-1]
        allowed &= ~(d > tol)
    v = np.zeros(n)
    v[basis] = np.maximum(T[:, -1], 0.0)
    return v * scale


class _Problem:
    """The NCP restricted to the resources that carry load."""

    def __init__(self, c, A, M, alpha, e, rank, tol, max_iter):
        self.c, self.A, self.M, self.alpha, self.e = c, A, M, alpha, e
        self.R, self.F = A.shape
        self.tol, self.max_iter = tol, max_iter
        self.iterations = 0
        e_on = np.where(M > 0, e[None, :], 0.0).max(axis=1)
        self.T = (A @ alpha) / c + e_on                       # delay scale per resource, > 0
        order = np.lexsort((np.arange(self.R), rank))       # by rank, then index
        self.pos = np.empty(self.R, dtype=int)
        self.pos[order] = np.arange(self.R)
        n_max = max(1, int(np.count_nonzero(A > 0, axis=1).max()))
        self.vtol = max(tol, 16.0 * _EPS * n_max)                # widened in check() if needed

    # -- evaluation ------------------------------------------------------------------------
    def rates(self, p: np.ndarray) -> Optional[np.ndarray]:
        g = self.M.T @ p - self.e
        if not np.all(g > 0):
            return None
        x = self.alpha / g
        if not np.all(np.isfinite(x)):
            return None
        return x

    def dload(self, x: np.ndarray) -> np.ndarray:
        """-d load / d p  (R x R), nonnegative."""
        return (self.A * (x * x / self.alpha)) @ self.M.T

    def into_domain(self, p: np.ndarray) -> np.ndarray:
        """Scale p up until every q_i >= 2 e_i (and q_i > 0)."""
        g = self.M.T @ p
        need = float(np.max(2.0 * self.e / g)) if np.all(g > 0) else math.inf
        if not math.isfinite(need):
            p = np.maximum(p, self.T)
            g = self.M.T @ p
            need = float(np.max(2.0 * self.e / g))
        return p * need if need > 1.0 else p

    def starts(self):
        """Starting points: the delay scale T, then seeded random multiples of it."""
        yield self.into_domain(self.T.copy())
        rng = np.random.default_rng(0x5EED)
        for k in range(_STARTS - 1):
            spread = 0.5 + 1.5 * (k % 3) / 2.0
            yield self.into_domain(self.T * np.exp(rng.normal(0.0, spread, self.R)))

    # -- step 1: semismooth Newton on the Fischer-Burmeister system --------------------------
    def fb_solve(self, p0: np.ndarray):
        """Semismooth Newton in (x, u) from p0; returns (p, u, s, residual), s and the
        residual evaluated with the rates x(p) of the final prices."""
        T, c, A, M, alpha, e = self.T, self.c, self.A, self.M, self.alpha, self.e
        F, R = self.F, self.R
        MT = M.T * T[None, :]                                     # q = MT @ u

        def evaluate(x, u):
            g = MT @ u - e
            G = x * g / alpha - 1.0
            s = 1.0 - (A @ x) / c
            phi = _fb(u, s)
            z = np.concatenate([G, phi])
            psi = 0.5 * float(z @ z)
            return (g, s, z, psi) if math.isfinite(psi) else None

        u = p0 / T
        x = alpha / (MT @ u - e)
        state = evaluate(x, u)
        if state is None or not np.all(state[0] > 0):
            raise EquilibriumError("internal: a starting point is outside the domain q > e")
        one_minus = 1.0 - 1.0 / math.sqrt(2.0)
        H = np.zeros((F + R, F + R))
        history = []
        for _ in range(self.max_iter):
            g, s, z, psi = state
            res = float(np.max(np.abs(z)))
            if res <= _FB_TOL:
                break
            history.append(res)
            if len(history) > _STALL_WINDOW and res > 0.9 * history[-_STALL_WINDOW - 1]:
                break                                             # stalled (a non-solution minimum)
            self.iterations += 1
            r = np.hypot(u, s)
            small = r < 1e-300
            rr = np.where(small, 1.0, r)
            da = np.where(small, one_minus, 1.0 - u / rr)
            db = np.where(small, one_minus, 1.0 - s / rr)
            # rows: G (F), Phi (R); columns: x (F), u (R)
            H[:F, :F] = np.diag(g / alpha)
            H[:F, F:] = (x / alpha)[:, None] * MT
            H[F:, :F] = -(db / c)[:, None] * A
            H[F:, F:] = np.diag(da)
            grad = H.T @ z
            d = None
            try:
                d = np.linalg.solve(H, -z)
                slope = float(grad @ d)
                if not (np.all(np.isfinite(d)) and slope <= -1e-10 * float(d @ d) ** 1.05):
                    d = None
            except np.linalg.LinAlgError:
                d = None
            if d is None:                                         # Levenberg-Marquardt step
                mu = max(math.sqrt(2.0 * psi), 1e-12)
                d = np.linalg.solve(H.T @ H + mu * np.eye(F + R), -grad)
                slope = float(grad @ d)
            dx, du = d[:F], d[F:]
            dg = MT @ du
            # stay inside x > 0, q > e (fraction to the boundary)
            t = 1.0
            for v, dv in ((x, dx), (g, dg)):
                neg = dv < 0
                if neg.any():
                    t = min(t, 0.995 * float(np.min(-v[neg] / dv[neg])))
            new = None
            while t > 1e-14:
                cand = evaluate(x + t * dx, u + t * du)
                if cand is not None and cand[3] <= psi + 1e-4 * t * slope:
                    new = cand
                    break
                t *= 0.5
            if new is None:
                break                                             # no descent (rounding level)
            x, u = x + t * dx, u + t * du
            state = new
        p = u * T
        xp = self.rates(p)
        if xp is None:
            return p, u, state[1], math.inf
        s = 1.0 - (A @ xp) / c
        return p, u, s, float(np.max(np.abs(_fb(u, s))))

    # -- step 2: barrier path following -----------------------------------------------------
    def potential_weights(self):
        """(b, w) if A[r,i] = a_r kappa_i M[r,i] (then the NCP is the gradient system of a convex
        potential), else None. b_r = T_r c_r / a_r, w_i = kappa_i alpha_i."""
        A, M = self.A, self.M
        if np.any((A > 0) != (M > 0)):
            return None
        W = np.where(M > 0, A / np.where(M > 0, M, 1.0), 0.0)
        a = np.full(self.R, np.nan)
        kappa = np.full(self.F, np.nan)
        for root in range(self.F):                    # each connected component of the support
            if not math.isnan(kappa[root]):
                continue
            kappa[root] = 1.0
            todo = [("f", root)]
            while todo:
                kind, k = todo.pop()
                if kind == "f":
                    for r in np.flatnonzero(M[:, k] > 0):
                        val = W[r, k] / kappa[k]
                        if math.isnan(a[r]):
                            a[r] = val
                            todo.append(("r", r))
                        elif abs(a[r] - val) > 1e-12 * a[r]:
                            return None
                else:
                    for i in np.flatnonzero(M[k] > 0):
                        val = W[k, i] / a[k]
                        if math.isnan(kappa[i]):
                            kappa[i] = val
                            todo.append(("f", i))
                        elif abs(kappa[i] - val) > 1e-12 * kappa[i]:
                            return None
        return self.T * self.c / a, kappa * self.alpha

    def barrier_solve(self, p0: np.ndarray):
        """Path following on the barrier equations  sigma_r(u) = mu / u_r,  mu -> 0  (u = p / T,
        sigma = 1 - load / c), by damped Newton steps kept inside u > 0, q > e. With a potential
        the line search is on  Phi_mu = sum b u - sum w log(q - e) - mu sum b log u  (convex:
        globally convergent), otherwise on the residual norm. Returns (p, u, s, residual)."""
        T, c, A, alpha, e = self.T, self.c, self.A, self.alpha, self.e
        MT = self.M.T * T[None, :]
        Ac = A / c[:, None]
        pot = self.potential_weights()
        u = p0 / T
        g = MT @ u - e
        mu = 1.0
        steps_at_mu = 0

        def merit(u, g, F):
            if pot is None:
                return float(F @ F)
            b, w = pot
            return float(b @ u - w @ np.log(g) - mu * (b @ np.log(u)))

        for _ in range(self.max_iter):
            x = alpha / g
            sig = 1.0 - Ac @ x
            F = sig - mu / u
            if float(np.max(np.abs(_fb(u, sig)))) <= _FB_TOL or steps_at_mu > 40:
                break                                             # done, or stuck
            if float(np.max(np.abs(u * F))) <= 0.5 * mu:          # centred enough
                if mu == _MU_END:
                    break
                mu = max(mu * (0.01 if steps_at_mu <= 1 else 0.1), _MU_END)
                steps_at_mu = 0
                continue
            self.iterations += 1
            steps_at_mu += 1
            J = (Ac * (x / g)) @ MT
            J[np.diag_indices_from(J)] += mu / (u * u)
            try:
                du = np.linalg.solve(J, -F)
            except np.linalg.LinAlgError:
                break
            if not np.all(np.isfinite(du)):
                break
            dg = MT @ du
            t = 1.0
            for v, dv in ((u, du), (g, dg)):
                neg = dv < 0
                if neg.any():
                    t = min(t, 0.99 * float(np.min(-v[neg] / dv[neg])))
            m0 = merit(u, g, F)
            slope = float((pot[0] * F) @ du) if pot is not None else -2.0 * float(F @ F)
            # a potential change below its rounding error is judged by the residual instead
            flat = pot is not None and -slope <= 1e-11 * (1.0 + abs(m0))
            norm = float(F @ F)
            while t > 1e-14:
                un, gn = u + t * du, g + t * dg
                Fn = 1.0 - Ac @ (alpha / gn) - mu / un
                if flat:
                    if float(Fn @ Fn) <= (1.0 - 1e-4 * t) * norm:
                        break
                elif merit(un, gn, Fn) <= m0 + 1e-4 * t * slope:
                    break
                t *= 0.5
            else:
                break
            u, g = un, gn
        p = u * T
        xp = self.rates(p)
        if xp is None:
            return p, u, np.zeros(self.R), math.inf
        s = 1.0 - (A @ xp) / c
        return p, u, s, float(np.max(np.abs(_fb(u, s))))

    # -- step 3: the support, by the rank rule -------------------------------------------------
    def support(self, p: np.ndarray, u: np.ndarray, s: np.ndarray):
        """Active set S and a start for the polish, the price moved to low ranks among ties."""
        binding = (u > s) | (s <= _BINDING)
        B = np.flatnonzero(binding)
        S = np.zeros(self.R, dtype=bool)
        if B.size == 0:
            return S, p
        E = self.M[B].T * self.T[B][None, :]                     # q = E v, p_B = T_B v
        sv = np.linalg.svd(E, compute_uv=False)
        if sv.size == B.size and sv[-1] > 1e-10 * sv[0]:
            S[B] = u[B] > s[B]                                   # the split is unique
            return S, p
        # tied prices: lexicographically minimise the prices of the highest positions first
        q = self.M.T @ p
        v = _lexmin(E, q, list(np.argsort(-self.pos[B])))
        if v is None:                                            # keep the Newton point
            S[B] = u[B] > s[B]
            return S, p
        start = np.zeros(self.R)
        start[B] = v * self.T[B]
        S[B] = v > 1e-9 * float(np.max(v))
        return S, start

    # -- step 4: Newton on load_S(p) = c_S ----------------------------------------------------
    def polish(self, S: np.ndarray, p_start: np.ndarray):
        """Returns (p, x) or a failure string: 'domain' or 'singular'."""
        c, T = self.c, self.T
        idx = np.flatnonzero(S)
        p = np.zeros(self.R)
        p[idx] = p_start[idx]
        if self.rates(p) is None:
            p[idx] = np.maximum(p[idx], T[idx])
            for _ in range(60):
                if self.rates(p) is not None:
                    break
                p[idx] *= 2.0
            else:
                return "domain"
        x = self.rates(p)
        if idx.size == 0:
            return p, x
        G = (self.A[idx] @ x) / c[idx] - 1.0
        err = float(np.max(np.abs(G)))
        for _ in range(_POLISH_MAX_ITER):
            if err <= 2.0 * _EPS:
                break
            self.iterations += 1
            J = -self.dload(x)[np.ix_(idx, idx)] * (T[idx][None, :] / c[idx][:, None])
            try:
                d = np.linalg.solve(J, -G) * T[idx]
            except np.linalg.LinAlgError:
                return "singular"
            if not np.all(np.isfinite(d)) or np.linalg.cond(J) > 1e13:
                return "singular"
            t = 1.0
            accepted = False
            norm = float(np.linalg.norm(G))
            while t > 1e-12:
                trial = p.copy()
                trial[idx] += t * d
                xt = self.rates(trial)
                if xt is not None:
                    Gt = (self.A[idx] @ xt) / c[idx] - 1.0
                    if float(np.linalg.norm(Gt)) <= (1.0 - 1e-4 * t) * norm:
                        accepted = True
                        break
                if err <= 1e3 * _EPS:                           # at rounding level already
                    break
                t *= 0.5
            if not accepted:
                break
            p, x, G = trial, xt, Gt
            err = float(np.max(np.abs(G)))
        return p, x

    # -- step 5: verification, and repair of the active set ------------------------------------
    def check(self, S: np.ndarray, p: np.ndarray, x: np.ndarray):
        """(nonpositive prices in S, overloaded resources outside S, relative load - 1, ok)."""
        rel = (self.A @ x) / self.c - 1.0
        q = self.M.T @ p
        # q - e loses digits when a late joiner's e is close to q: widen the tolerance by that
        cancel = float(np.max(q / (q - self.e)))
        vtol = max(self.vtol, 16.0 * _EPS * cancel)
        neg = S & ~(p > 0)
        over = ~S & (rel > vtol)
        ok = (not neg.any() and not over.any() and bool(np.all(x > 0))
              and bool(np.all(np.abs(rel[S]) <= vtol)))
        return neg, over, rel, ok

    def repair(self, S: np.ndarray, p_start: np.ndarray):
        """Polish S and verify; on failure change S one resource at a time. (p, x) or None."""
        tried = set()
        for _ in range(2 * self.R + 8):
            key = S.tobytes()
            if key in tried:
                return None
            tried.add(key)
            res = self.polish(S, p_start)
            S = S.copy()
            if res == "domain":
                # some flow has no priced resource: give it its lowest-positioned resource
                g = self.M.T @ S.astype(float)
                for i in np.flatnonzero(g <= 0):
                    cand = np.flatnonzero((self.M[:, i] > 0) & (self.A[:, i] > 0))
                    S[cand[np.argmin(self.pos[cand])]] = True
                continue
            if res == "singular":
                members = np.flatnonzero(S)
                S[members[np.argmax(self.pos[members])]] = False
                continue
            p, x = res
            neg, over, rel, ok = self.check(S, p, x)
            if ok:
                return p, x
            if neg.any():
                cand = np.flatnonzero(neg)
                S[cand[np.argmin(p[cand] / self.T[cand])]] = False
            elif over.any():
                cand = np.flatnonzero(over)
                S[cand[np.argmax(rel[cand])]] = True
            else:
                return None                                       # polish did not converge
            p_start = p
        return None

    def attempts(self):
        """Newton from the first start, then path following, then Newton from the others."""
        for k, p0 in enumerate(self.starts()):
            yield self.fb_solve(p0)
            if k == 0:
                yield self.barrier_solve(p0)

    def solve(self):
        best = math.inf
        for p, u, s, res in self.attempts():
            best = min(best, res)
            if not math.isfinite(res):
                continue
            q = self.M.T @ p
            cancel = float(np.max(q / (q - self.e)))                # digits lost in q - e
            if res > max(_FB_ACCEPT, 1e4 * _EPS * cancel):
                continue                                          # a spurious stationary point
            S, start = self.support(p, u, s)
            found = self.repair(S, start)
            if found is not None:
                return found
        raise EquilibriumError(
            f"no equilibrium found from {_STARTS} starting points (resources {self.R}, flows "
            f"{self.F}; best complementarity residual {best:.3g}, tolerance {self.vtol:.3g})")


# ---------------------------------------------------------------------------------------------

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
        prob = _Problem(c[used], A[used], M[used], alpha, e, rk[used], tol, max_iter)
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
