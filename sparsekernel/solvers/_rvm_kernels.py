"""Compiled loops of the fast RVM step (numba): the choice of the next single-alpha step.

Each runs once per step of Algorithm 7.2 over the P pool members or the M
included functions; as numpy expressions they are a dozen array passes and
temporaries, here one loop. The maths is that of ``_rvm_fast.best_step``
with a flat hyperprior; the numpy path remains for Gamma hyperpriors.
"""

from __future__ import annotations

import math

from numba import njit

__all__ = ["best_excluded_flat", "best_included_flat", "beta_would_move", "mackay_beta", "moves_beta", "reestimate_steps", "shift"]


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


@njit(cache=True)
def shift(Sigma, m, G, S, Q, k, kappa, beta):  # pragma: no cover
    """Sigma^-1 += (1/kappa - Sigma_kk)^-1 e_k e_k^T in place (Sherman-Morrison, gap 7.7).

    Sigma -= kappa s s^T, m -= kappa m_k s with s = Sigma e_k, and S, Q of the
    pool by (7.106)-(7.107) after the update, from v = beta Phi_P^T Phi_a s.
    """
    M = m.shape[0]
    sigma_k = Sigma[:, k].copy()
    m_k = m[k]
    v = beta * (G @ sigma_k)
    for i in range(M):
        c = kappa * sigma_k[i]
        for j in range(M):
            Sigma[i, j] -= c * sigma_k[j]
    c = kappa * m_k
    for i in range(M):
        m[i] -= c * sigma_k[i]
    for p in range(S.shape[0]):
        Q[p] += c * v[p]
        S[p] += kappa * (v[p] * v[p])


@njit(cache=True)
def moves_beta(proposal, beta, beta_tol, beta_max):  # pragma: no cover
    """Whether moving beta to ``proposal`` (capped at beta_max) changes ln beta by more than beta_tol;
    a proposal that is not a positive number always counts as a move."""
    if not (math.isfinite(proposal) and proposal > 0.0):
        return True
    return abs(math.log(min(proposal, beta_max) / beta)) > beta_tol


@njit(cache=True)
def beta_would_move(tt, PhiTt, active, alpha, Sigma, m, beta, N, beta_tol, beta_max):  # pragma: no cover
    """Whether (7.88) would move ln beta by more than beta_tol (flat prior)."""
    return moves_beta(mackay_beta(tt, PhiTt, active, alpha, Sigma, m, beta, N), beta, beta_tol, beta_max)


@njit(cache=True)
def reestimate_steps(alpha, Sigma, m, G, S, Q, norms, blocked, included, active, PhiTt, tt, N, beta,
                     value, tol, alpha_max, span_tol, beta_tol, beta_max, check_beta_from,
                     iterations, max_iter, since_refresh, refresh_at, values):  # pragma: no cover
    """Steps of Algorithm 7.2 while the best step of the pool is a re-estimation (flat prior).

    The same choice, update and bookkeeping as ``_rvm_fast.pool_step`` for a
    step that re-estimates an included alpha_k (7.101): the largest gain over
    the included (``best_included_flat``) and excluded (``best_excluded_flat``)
    functions, the included one winning ties; the rank-one update ``shift``
    with kappa = 1/(Sigma_kk + 1/Delta); then whether (7.88) would move ln beta
    by more than beta_tol (from iteration ``check_beta_from`` on) or a refresh
    is due. Stops before any other step (an addition, a deletion, no gain above
    tol), when ``values`` is full, and after a step that needs beta
    re-estimated (``pending`` 1) or a refresh (``pending`` 2), which the
    caller then does. ``values[i]`` is the log evidence after step i.
    Returns (steps, since_refresh, pending).
    """
    steps = 0
    while iterations + steps < max_iter and steps < values.shape[0]:
        k, alpha_new, gain = best_included_flat(alpha, Sigma, m, alpha_max)
        if k < 0 or not math.isfinite(alpha_new) or not gain > tol:
            return steps, since_refresh, 0
        j, x = best_excluded_flat(S, Q, norms, blocked, included, beta, span_tol, alpha_max)
        if j >= 0 and 0.5 * (x - 1.0 - math.log(x)) > gain:
            return steps, since_refresh, 0
        delta = alpha_new - alpha[k]
        if delta != 0.0:
            shift(Sigma, m, G, S, Q, k, 1.0 / (Sigma[k, k] + 1.0 / delta), beta)
        alpha[k] = alpha_new
        value = value + gain
        values[steps] = value
        steps += 1
        since_refresh += 1
        if iterations + steps >= check_beta_from and beta_would_move(
                tt, PhiTt, active, alpha, Sigma, m, beta, N, beta_tol, beta_max):
            return steps, since_refresh, 1
        if since_refresh >= max(refresh_at, alpha.shape[0]):
            return steps, since_refresh, 2
    return steps, since_refresh, 0
