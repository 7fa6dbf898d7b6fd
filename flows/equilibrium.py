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
KKT system of weighted proportional fairness, ``max sum_i alpha_i log x_i`` subject to
``A x <= c``, whose dual ``D(p) = sum_r c_r p_r - sum_i kappa_i alpha_i log(q_i - e_i)`` is a convex
potential; the rates are then unique. In general (full-duplex links, where ``A`` weighs the data
and the ACK directions differently) the map ``p -> c - load(p)`` has the Jacobian
``A diag(x_i^2 / alpha_i) M^T >= 0``, which need not be symmetric; the solver treats the general NCP.

Degeneracy and the rank rule
----------------------------
The rates may be unique while the prices are not: a flow alone across three equal links in tandem
has the rate ``c`` and the queueing delay ``alpha / c``, but any split of that delay among the three
links solves the NCP. Physically the queue builds at the *first* saturated resource along the path
(downstream resources receive traffic already paced at their rate). The caller gives every
resource an integer ``rank`` (e.g. the smallest hop index of ``r`` along the data paths crossing it,
0 = first hop), and among tied solutions the price goes to the lower ranks; resources of equal
rank are ordered by their index (the lower index first). Precisely, with ``pos_r`` the position of
``r`` in the order (rank, index), the solution returned is the limit, as ``delta -> 0+``, of the
solution of the NCP with the capacities ``c_r (1 + delta w_r)``, ``w_r = pos_r + 0.5 frac(pos_r g)``
(``g`` the golden ratio; the fractional offsets keep accidental sums of weights from tying again).
In the proportionally fair case this is the tied solution minimising ``sum_r c_r w_r p_r``.

Method
------
1. *Perturbed solve.* The NCP with capacities ``c_r (1 + delta w_r)`` (``delta`` about 1e-7, spread so
   that the largest perturbation is at most 1e-5) is written with the Fischer-Burmeister function
   ``phi(a, b) = a + b - sqrt(a^2 + b^2)`` (zero iff ``a, b >= 0`` and ``a b = 0``) on the scaled pair
   ``a_r = p_r / T_r`` (``T_r`` a delay scale of ``r``: ``sum_i A[r, i] alpha_i / c_r`` plus the largest
   ``e_i`` on ``r``) and ``b_r = 1 - load_r / c_r``, and solved by a semismooth Newton method with an
   Armijo line search on ``0.5 ||Phi||^2``; the step also backtracks to stay where every
   ``q_i > e_i`` (the merit grows without bound at that boundary). When the Newton direction is not
   a good descent direction, a Levenberg-Marquardt step is taken instead. The start ``p = T`` (scaled
   up if needed) is strictly inside the domain.
2. *Active set.* ``S = {r : a_r > b_r}`` (price larger than slack in the scaled units).
3. *Polish.* The unperturbed square system ``load_r(p) = c_r`` for ``r`` in ``S``, ``p_r = 0``
   elsewhere, is solved by Newton's method (backtracking on the residual and on the domain) from
   the perturbed solution, to rounding level.
4. *Verify.* ``p_S > 0``, ``load <= c (1 + eps_v)``, ``|load_r / c_r - 1| <= eps_v`` on ``S``, ``x > 0``
   (``eps_v = max(tol, 16 u n)``, ``u`` the unit roundoff, ``n`` the most flows on one resource). If
   verification fails (the perturbation moved a nearly binding resource across, or a tie was not
   separated), the active set is repaired one resource at a time -- a resource with a nonpositive
   price leaves, else the most overloaded resource joins, a singular system drops its highest
   ranked member -- and steps 3-4 repeat; as a last resort the unperturbed NCP is solved by
   step 1 and polished. If nothing verifies, :class:`EquilibriumError` is raised.

Resources no flow loads (``A[r, :] == 0``) carry no traffic and get ``p_r = 0`` directly.
The result is deterministic: the same input gives bit-identical output.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Tuple

import numpy as np

__all__ = ["Equilibrium", "EquilibriumError", "solve_equilibrium"]

_EPS = np.finfo(float).eps
_FB_TOL = 1e-13          # Fischer-Burmeister target (scaled units)
_FB_ACCEPT = 1e-9        # a start whose residual stays above this is abandoned
_STALL_WINDOW = 12       # iterations without halving the residual = stalled
_STARTS = 40             # starting points tried before giving up
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

    # -- stage 1: semismooth Newton on the Fischer-Burmeister system -------------------------
    def fb_solve(self, p0: np.ndarray):
        """Returns (p, u, s, residual) at the best point reached from p0."""
        T, c = self.T, self.c

        def evaluate(u):
            x = self.rates(u * T)
            if x is None:
                return None
            s = 1.0 - (self.A @ x) / c
            phi = _fb(u, s)
            psi = 0.5 * float(phi @ phi)
            if not math.isfinite(psi):
                return None
            return x, s, phi, psi

        u = p0 / T
        state = evaluate(u)
        if state is None:
            raise EquilibriumError("internal: a starting point is outside the domain q > e")
        one_minus = 1.0 - 1.0 / math.sqrt(2.0)
        history = []
        for _ in range(self.max_iter):
            x, s, phi, psi = state
            res = float(np.max(np.abs(phi)))
            if res <= _FB_TOL:
                break
            history.append(res)
            if len(history) > _STALL_WINDOW and res > 0.5 * history[-_STALL_WINDOW - 1]:
                break                                             # stalled (a non-solution minimum)
            self.iterations += 1
            Js = self.dload(x) * (T[None, :] / c[:, None])        # d s / d u
            r = np.hypot(u, s)
            small = r < 1e-300
            rr = np.where(small, 1.0, r)
            da = np.where(small, one_minus, 1.0 - u / rr)
            db = np.where(small, one_minus, 1.0 - s / rr)
            H = db[:, None] * Js
            H[np.diag_indices_from(H)] += da
            grad = H.T @ phi
            d = None
            try:
                d = np.linalg.solve(H, -phi)
                slope = float(grad @ d)
                if not (np.all(np.isfinite(d)) and slope <= -1e-10 * float(d @ d) ** 1.05):
                    d = None
            except np.linalg.LinAlgError:
                d = None
            if d is None:                                         # Levenberg-Marquardt step
                mu = max(math.sqrt(2.0 * psi), 1e-12)
                d = np.linalg.solve(H.T @ H + mu * np.eye(self.R), -grad)
                slope = float(grad @ d)
            t = 1.0
            new = None
            while t > 1e-14:
                cand = evaluate(u + t * d)
                if cand is not None and cand[3] <= psi + 1e-4 * t * slope:
                    new = cand
                    break
                t *= 0.5
            if new is None:
                break                                             # no descent (rounding level)
            u = u + t * d
            state = new
        x, s, phi, psi = state
        return u * T, u, s, float(np.max(np.abs(phi)))

    # -- stage 2: the support, by the rank rule ------------------------------------------------
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

    # -- stage 3: Newton on load_S(p) = c_S ---------------------------------------------------
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

    # -- stage 4: verification, and repair of the active set -----------------------------------
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

    def solve(self):
        best = math.inf
        for p0 in self.starts():
            p, u, s, res = self.fb_solve(p0)
            best = min(best, res)
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
