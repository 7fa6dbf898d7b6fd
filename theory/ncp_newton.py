"""Steps 1 and 2 of the equilibrium solver (`theory.equilibrium`, whose docstring states the
problem and the method): semismooth Newton on the Fischer-Burmeister form of the NCP
(`fb_solve`), and barrier path following (`barrier_solve`, on a convex potential when the
problem has one: `potential_weights`). Both work on an `theory.ncp.NcpProblem` and count their
Newton steps in its ``iterations``.
"""
from __future__ import annotations

import math

import numpy as np

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


def _fb(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Fischer-Burmeister a + b - sqrt(a^2 + b^2), cancellation-free where a, b > 0."""
    r = np.hypot(a, b)
    s = a + b
    out = s - r
    pos = s > 0
    out[pos] = 2.0 * a[pos] * b[pos] / (s[pos] + r[pos])
    return out


def _fb_direction(H: np.ndarray, z: np.ndarray, psi: float):
    """(step, slope of the merit along it): the Newton step of the Fischer-Burmeister system if
    it is a good descent direction, else a Levenberg-Marquardt step."""
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
        d = np.linalg.solve(H.T @ H + mu * np.eye(H.shape[0]), -grad)
        slope = float(grad @ d)
    return d, slope


def fb_solve(problem, p0: np.ndarray):
    """Semismooth Newton in (x, u) from p0; returns (p, u, s, residual), s and the
    residual evaluated with the rates x(p) of the final prices."""
    T, c, A, M, alpha, e = problem.T, problem.c, problem.A, problem.M, problem.alpha, problem.e
    F, R = problem.F, problem.R
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
    for _ in range(problem.max_iter):
        g, s, z, psi = state
        res = float(np.max(np.abs(z)))
        if res <= _FB_TOL:
            break
        history.append(res)
        if len(history) > _STALL_WINDOW and res > 0.9 * history[-_STALL_WINDOW - 1]:
            break                                             # stalled (a non-solution minimum)
        problem.iterations += 1
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
        d, slope = _fb_direction(H, z, psi)
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
    xp = problem.rates(p)
    if xp is None:
        return p, u, state[1], math.inf
    s = 1.0 - (A @ xp) / c
    return p, u, s, float(np.max(np.abs(_fb(u, s))))


def potential_weights(problem):
    """(b, w) if A[r,i] = a_r kappa_i M[r,i] (then the NCP is the gradient system of a convex
    potential), else None. b_r = T_r c_r / a_r, w_i = kappa_i alpha_i."""
    A, M = problem.A, problem.M
    if np.any((A > 0) != (M > 0)):
        return None
    W = np.where(M > 0, A / np.where(M > 0, M, 1.0), 0.0)
    a = np.full(problem.R, np.nan)
    kappa = np.full(problem.F, np.nan)
    for root in range(problem.F):                    # each connected component of the support
        if not math.isnan(kappa[root]):
            continue
        kappa[root] = 1.0
        todo: list = [("f", root)]
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
    return problem.T * problem.c / a, kappa * problem.alpha


def barrier_solve(problem, p0: np.ndarray):
    """Path following on the barrier equations  sigma_r(u) = mu / u_r,  mu -> 0  (u = p / T,
    sigma = 1 - load / c), by damped Newton steps kept inside u > 0, q > e. With a potential
    the line search is on  Phi_mu = sum b u - sum w log(q - e) - mu sum b log u  (convex:
    globally convergent), otherwise on the residual norm. Returns (p, u, s, residual)."""
    T, c, A, alpha, e = problem.T, problem.c, problem.A, problem.alpha, problem.e
    MT = problem.M.T * T[None, :]
    Ac = A / c[:, None]
    pot = potential_weights(problem)
    u = p0 / T
    g = MT @ u - e
    mu = 1.0
    steps_at_mu = 0

    def merit(u, g, F):
        if pot is None:
            return float(F @ F)
        b, w = pot
        return float(b @ u - w @ np.log(g) - mu * (b @ np.log(u)))

    for _ in range(problem.max_iter):
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
        problem.iterations += 1
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
    xp = problem.rates(p)
    if xp is None:
        return p, u, np.zeros(problem.R), math.inf
    s = 1.0 - (A @ xp) / c
    return p, u, s, float(np.max(np.abs(_fb(u, s))))
