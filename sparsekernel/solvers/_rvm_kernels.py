"""Compiled loops of the fast RVM step (numba): the choice of the next single-alpha step.

Each runs once per step of Algorithm 7.2 over the P pool members or the M
included functions; as numpy expressions they are a dozen array passes and
temporaries, here one loop. The maths is that of ``_rvm_fast.best_step``
with a flat hyperprior; the numpy path remains for Gamma hyperpriors.
"""

from __future__ import annotations

import math

from numba import njit

__all__ = ["best_excluded_flat", "best_included_flat", "mackay_beta"]


@njit(cache=True)
def best_excluded_flat(S, Q, norms, blocked, included, beta, span_tol, alpha_max):  # pragma: no cover
    """The excluded member of largest x = Q_j^2 / S_j > 1 (gain (x - 1 - ln x)/2, Result 7.18(c)).

    Skipped: included members, ``blocked`` ones (copies of an included
    function), those numerically in the included span (S_j <= span_tol beta
    ||phi_j||^2) and those whose alpha = S_j / (x - 1) (7.101) exceeds
    alpha_max. Returns (j, x), j = -1 when there is none.
    """
    best, best_x = -1, 1.0
    for j in range(S.shape[0]):
        if included[j] or blocked[j]:
            continue
        s = S[j]
        if s <= span_tol * beta * norms[j]:
            continue
        x = Q[j] * Q[j] / s
        if x > best_x and (x - 1.0) * alpha_max > s:
            best, best_x = j, x
    return best, best_x


@njit(cache=True)
def best_included_flat(alpha, Sigma, m, alpha_max):  # pragma: no cover
    """The included function whose re-estimation or deletion gains most.

    s_k = 1/Sigma_kk - alpha_k, q_k = m_k / Sigma_kk ((7.104)-(7.105) via
    ``included_sparsity_quality``); gain lambda(alpha*) - lambda(alpha_k) with
    alpha* = s^2/(q^2 - s) (7.101) when q^2 > s and alpha* <= alpha_max, else
    the deletion's 0 - lambda(alpha_k) (7.97). Returns (k, alpha*, gain),
    alpha* = inf for a deletion, k = -1 when no gain is finite.
    """
    best, best_alpha, best_gain = -1, math.inf, -math.inf
    for k in range(alpha.shape[0]):
        d = Sigma[k, k]
        a = alpha[k]
        s = 1.0 / d - a
        q = m[k] / d
        lam_old = 0.5 * (math.log(a * d) + q * q * d)  # (7.97): a/(a+s) = a d, a + s = 1/d
        new, gain = math.inf, -lam_old
        x = q * q / s if s > 0.0 else -1.0
        if x > 1.0:
            candidate = s / (x - 1.0)
            if candidate <= alpha_max:
                new, gain = candidate, 0.5 * (x - 1.0 - math.log(x)) - lam_old
        if math.isfinite(gain) and gain > best_gain:
            best, best_alpha, best_gain = k, new, gain
    return best, best_alpha, best_gain


@njit(cache=True)
def mackay_beta(tt, PhiTt, active, alpha, Sigma, m, beta, N):  # pragma: no cover
    """(7.88) from the current posterior, in O(M).

    ||t - Phi m||^2 = t^T t - m^T Phi_a^T t - m^T A m / beta (from (7.82)-(7.83)),
    sum gamma = sum (1 - alpha_i Sigma_ii) (7.89). Returns inf for a perfect fit.
    """
    mb, mam, gamma = 0.0, 0.0, 0.0
    for k in range(alpha.shape[0]):
        mb += m[k] * PhiTt[active[k]]
        mam += alpha[k] * m[k] * m[k]
        gamma += 1.0 - alpha[k] * Sigma[k, k]
    misfit = max(tt - mb - mam / beta, 0.0)
    if misfit <= 0.0:
        return math.inf
    return (N - gamma) / misfit
