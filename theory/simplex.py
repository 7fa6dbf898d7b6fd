"""The rank rule of the equilibrium solver (step 3 of `theory.equilibrium`): a small dense
two-phase simplex with Bland's rule that minimises variables lexicographically (`lexmin`).
"""
from __future__ import annotations

import numpy as np


def pivot(T: np.ndarray, basis: list, row: int, col: int) -> None:
    T[row] /= T[row, col]
    others = np.flatnonzero(T[:, col])
    others = others[others != row]
    T[others] -= np.outer(T[others, col], T[row])
    basis[row] = col


def lexmin(E: np.ndarray, b: np.ndarray, order) -> np.ndarray | None:
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
            pivot(T, basis, row, col)

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
                pivot(T, basis, i, int(cols[0]))
                keep_rows.append(i)
        else:
            keep_rows.append(i)
    T = T[keep_rows][:, [*range(n), n + m]]
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
