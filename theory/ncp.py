"""The equilibrium NCP restricted to the resources that carry load (`NcpProblem`), and steps 3 to
5 of the solver: the support by the rank rule, the polish, verification and repair of the active
set (`theory.equilibrium`'s docstring states the problem and the method; steps 1 and 2 are in
`theory.ncp_newton`).
"""
from __future__ import annotations

import math

import numpy as np

from theory.ncp_newton import (
    _BINDING,
    _EPS,
    _FB_ACCEPT,
    _POLISH_MAX_ITER,
    _STARTS,
    EquilibriumError,
    barrier_solve,
    fb_solve,
)
from theory.simplex import lexmin


class NcpProblem:
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
    def rates(self, p: np.ndarray) -> np.ndarray | None:
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
        v = lexmin(E, q, list(np.argsort(-self.pos[B])))
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
        assert x is not None                    # the loop above found prices in the domain
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
            assert xt is not None                # accepted: the trial prices are in the domain
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
            yield fb_solve(self, p0)
            if k == 0:
                yield barrier_solve(self, p0)

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
