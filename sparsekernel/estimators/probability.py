"""Probabilities from SVM decision values: Platt's sigmoid (7.43) and pairwise coupling.

``fit_platt`` fits p(t = 1 | y) = 1 / (1 + exp(A y + B)), the sigmoid of (7.43)
with sigma(-(A y + B)), by the Newton method with backtracking of Lin, Lin and
Weng (2007), on targets smoothed towards 1/2 as Platt proposed, so that the
fit never overflows and never puts all its mass on the training labels.
``couple`` turns pairwise probabilities r_ij = p(i | i or j, x) into class
probabilities by the second method of Wu, Lin and Weng (2004): the p in the
simplex minimising sum_i sum_{j != i} (r_ji p_i - r_ij p_j)^2.
``consistent_with`` makes probabilities rank the classes as the decision
function does (the Euclidean projection onto that order, by pool-adjacent-
violators), so that the most probable class is always the predicted one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import ValidationError
from ..validation import fail

__all__ = ["Sigmoid", "fit_platt", "couple", "consistent_with", "MIN_PROBABILITY"]

Array = NDArray[np.float64]

#: LIBSVM's min_prob: every pair's probability, two classes' included, is kept in [1e-7, 1 - 1e-7]
#: (svm_predict_probability), so that predict_log_proba is finite
MIN_PROBABILITY = 1e-7


@dataclass(frozen=True)
class Sigmoid:
    """p(t = 1 | y) = 1 / (1 + exp(A y + B)); A < 0 when larger y means class +1."""

    A: float
    B: float
    iterations: int

    def __call__(self, y: ArrayLike) -> Array:
        return _sigmoid_of(np.asarray(y, dtype=np.float64) * self.A + self.B)


def _sigmoid_of(f: Array) -> Array:
    """1 / (1 + exp(f)) without overflow."""
    out = np.empty_like(f)
    pos = f >= 0
    e = np.exp(-f[pos])
    out[pos] = e / (1.0 + e)
    out[~pos] = 1.0 / (1.0 + np.exp(f[~pos]))
    return out


def _objective(f: Array, target: Array) -> float:
    """sum_n -target log p - (1 - target) log(1 - p) with p = 1/(1 + exp(f)), stably."""
    return float(np.sum(np.where(f >= 0, target * f + np.log1p(np.exp(-np.abs(f))),
                                 (target - 1.0) * f + np.log1p(np.exp(-np.abs(f))))))


def fit_platt(decision: ArrayLike, labels: ArrayLike, max_iter: int = 100, tol: float = 1e-5,
              min_step: float = 1e-10, sigma: float = 1e-12) -> Sigmoid:
    """Fit Platt's sigmoid to held-out decision values (Lin, Lin and Weng, 2007).

    Parameters
    ----------
    decision : array (n,)
        Decision values y(x_n), ideally from data the SVM was not trained on.
    labels : array (n,)
        +1 or -1; or 0 or 1 (booleans too), 1 the positive class.
    max_iter, tol, min_step, sigma
        Newton iteration cap, gradient tolerance, smallest line-search step and
        the ridge added to the Hessian's diagonal.
    """
    y = _finite("decision", decision, 1, "a 1-D array of finite decision values")
    t = np.asarray(labels)
    if t.shape != y.shape or not (np.all((t == 1) | (t == -1)) or np.all((t == 1) | (t == 0))):
        raise fail("labels", f"{y.shape[0]} labels, each +1 or -1, or each 0 or 1 (one per decision value)",
                   labels)
    positive = t > 0
    n_pos, n_neg = int(positive.sum()), int((~positive).sum())
    target = np.where(positive, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))  # Platt's smoothing
    A, B = 0.0, float(np.log((n_neg + 1.0) / (n_pos + 1.0)))
    value = _objective(A * y + B, target)
    for it in range(1, max_iter + 1):
        p = _sigmoid_of(A * y + B)
        d = target - p
        g1, g2 = float(y @ d), float(np.sum(d))                   # gradient in (A, B)
        if abs(g1) < tol and abs(g2) < tol:
            return Sigmoid(A, B, it - 1)
        w = p * (1.0 - p)
        h11, h22, h21 = sigma + float(y * y @ w), sigma + float(np.sum(w)), float(y @ w)
        det = h11 * h22 - h21 * h21
        dA, dB = -(h22 * g1 - h21 * g2) / det, -(-h21 * g1 + h11 * g2) / det   # Newton direction
        slope = g1 * dA + g2 * dB
        step = 1.0
        while step >= min_step:                                    # backtracking (Armijo)
            new = _objective((A + step * dA) * y + (B + step * dB), target)
            if new < value + 1e-4 * step * slope:
                A, B, value = A + step * dA, B + step * dB, new
                break
            step /= 2.0
        else:
            return Sigmoid(A, B, it)                               # no descent possible: at the minimum
    return Sigmoid(A, B, max_iter)


def couple(r: ArrayLike) -> Array:
    """Class probabilities from pairwise ones (Wu, Lin and Weng 2004, method 2).

    Parameters
    ----------
    r : array (n, K, K)
        r[:, i, j] = p(class i | class i or j, x), with r_ij + r_ji = 1.

    Returns
    -------
    array (n, K), rows in the simplex.
    """
    R = _finite("r", r, 3, "an array (n, K, K) of pairwise probabilities in [0, 1]")
    if R.shape[1] != R.shape[2] or np.any((R < 0.0) | (R > 1.0)):
        raise fail("r", "an array (n, K, K) of pairwise probabilities in [0, 1]", R)
    n, K, _ = R.shape
    Rt = np.swapaxes(R, 1, 2)                                      # Rt[:, i, j] = r_ji
    off = ~np.eye(K, dtype=bool)
    Q = -(Rt * R) * off                                            # Q_ij = -r_ji r_ij
    Q[:, np.arange(K), np.arange(K)] = np.sum((Rt**2) * off, axis=2)  # Q_ii = sum_s r_si^2
    system = np.zeros((n, K + 1, K + 1))
    system[:, :K, :K] = Q
    system[:, :K, K] = 1.0
    system[:, K, :K] = 1.0
    rhs = np.zeros((n, K + 1, 1))
    rhs[:, K, 0] = 1.0
    p = np.linalg.solve(system, rhs)[:, :K, 0]
    p = np.clip(p, 0.0, None)
    return p / p.sum(axis=1, keepdims=True)


def consistent_with(p: ArrayLike, scores: ArrayLike, tilt: float = 1e-12) -> Array:
    """Project each row of p onto the probability vectors ordered like ``scores``.

    Pool-adjacent-violators on the classes sorted by score gives the nearest
    (Euclidean) vector that is non-increasing in that order; it keeps the sum
    and non-negativity. Ties, those it creates and those in p (two classes at
    exactly 1/2), are broken in the scores' favour by ``tilt``, so that
    argmax p equals argmax scores.
    """
    P = _finite("p", p, 2, "an array (n, K) of probabilities, rows of positive sum").copy()
    if np.any(P < 0.0) or np.any(P.sum(axis=1) <= 0.0):
        raise fail("p", "an array (n, K) of probabilities, rows of positive sum", P)
    S = _finite("scores", scores, 2, f"an array {P.shape} of finite scores, one per entry of p")
    if S.shape != P.shape:
        raise fail("scores", f"an array {P.shape} of finite scores, one per entry of p", S)
    order = np.argsort(-S, axis=1, kind="stable")
    K = P.shape[1]
    for row in range(P.shape[0]):
        values = P[row, order[row]]
        if np.all(np.diff(values) < 0):
            continue
        fitted = _pav_decreasing(values)
        P[row, order[row]] = fitted + tilt * np.arange(K - 1, -1, -1)  # break PAV's ties in the scores' order
    return P / P.sum(axis=1, keepdims=True)


def _finite(name: str, value: ArrayLike, ndim: int, domain: str) -> Array:
    """``value`` as a float64 array of ``ndim`` dimensions and finite entries, else a ValidationError."""
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise fail(name, domain, value) from None
    if array.ndim != ndim:
        raise fail(name, domain, array)
    bad = int(np.count_nonzero(~np.isfinite(array)))
    if bad:
        raise ValidationError(f"{name} must be {domain}; got {bad} NaN or infinite entries of {array.size}")
    return array


def _pav_decreasing(values: Array) -> Array:
    """Least-squares non-increasing fit (pool adjacent violators)."""
    blocks: list[list[float]] = []                                 # [sum, count]
    for v in values:
        blocks.append([v, 1.0])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] < blocks[-1][0] / blocks[-1][1]:
            s, c = blocks.pop()
            blocks[-1][0] += s
            blocks[-1][1] += c
    return np.concatenate([np.full(int(c), s / c) for s, c in blocks])
