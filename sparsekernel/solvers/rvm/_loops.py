"""Compiled loops of the fast RVM (numba): the choice of the next single-alpha step and its update.

Each runs once per step of Algorithm 7.2 over the tier (the pool members
whose S, Q the steps keep, see ``sequential``) or the M included functions; as
numpy expressions they would be a dozen array passes and temporaries, here
one loop each. ``pool_steps`` runs the steps themselves until one needs the
caller (a beta re-estimation, a refresh, more room). The maths is that of
``sequential.best_step`` and ``sequential.apply_step`` with a flat
hyperprior; the numpy path remains for Gamma hyperpriors.

Inside the steps Sigma is kept in its lower triangle only: ``shift``,
``add_function`` and ``drop_function`` read and write that half (half the
work of a rank-one update), and ``symmetrize`` restores the upper half before
Sigma is handed back. ``assemble_gram`` finishes the pool's Gram matrix for
``design.gram_matrix``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

LOG_2PI = math.log(2.0 * math.pi)

__all__ = [
    "add_function", "aligned", "assemble_gram", "best_excluded_flat", "best_included_flat", "beta_step_due",
    "column_of_lower", "delete_function", "drop_function", "factors_over_rows", "gather_rows", "gemv_columns",
    "mackay_beta", "moves_beta", "pool_steps", "posterior_factor", "shift", "symmetric_product", "symmetrize",
    "tier_rows",
]
#: what Python calls (the exports of the ahead-of-time build, see solvers/_aot and _bound_loops)
ENTRY_POINTS = ("add_function", "aligned", "assemble_gram", "best_excluded_flat", "best_included_flat",
                "beta_step_due", "delete_function", "factors_over_rows", "gather_rows", "moves_beta", "pool_steps",
                "posterior_factor", "shift", "symmetrize", "tier_rows")


@njit(cache=True, error_model="numpy")
def best_excluded_flat(S, Q, norms, blocked, included, rows, beta, span_tol, alpha_max):  # pragma: no cover
    """The excluded member of largest x = Q_j^2 / S_j > 1 (gain (x - 1 - ln x)/2, Result 7.18(c)).

    Looked at: the pool members ``rows`` (the tier). Skipped: included members, ``blocked`` ones (copies of an included
    function), those numerically in the included span (S_j <= span_tol beta
    ||phi_j||^2) and those whose alpha = S_j / (x - 1) (7.101) exceeds
    alpha_max. Returns (j, x), j = -1 when there is none.
    """
    best, best_x = -1, 1.0
    for r in range(rows.shape[0]):
        j = rows[r]
        if included[j] or blocked[j]:
            continue
        s = S[j]
        if s <= span_tol * beta * norms[j]:
            continue
        x = Q[j] * Q[j] / s
        if x > best_x and (x - 1.0) * alpha_max > s:
            best, best_x = j, x
    return best, best_x


@njit(cache=True, error_model="numpy")
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
        # lambda(alpha_k) = (ln(a d) + q^2 d)/2 (7.97), as a/(a+s) = a d and a + s = 1/d;
        # lambda(alpha*) = (x - 1 - ln x)/2. Their difference is (y - 1 - ln y)/2 with y = x a d, since
        # x - q^2 d = q^2 (1/s - 1/(a + s)) = x a d exactly: taken as x - 1 - q^2 d - ln y it subtracted two
        # values of up to 1e14 (a << s) and kept rounding gains of 2^-6 that drove runs of 10,000 steps.
        # Each gain is first bounded above with ln y >= 1 - 1/y; the logarithm is taken only for a
        # function whose bound beats the best gain so far (most of them do not).
        qqd = q * q * d
        x = q * q / s if s > 0.0 else -1.0
        if x > 1.0 and s / (x - 1.0) <= alpha_max:
            y = x * a * d
            if 0.5 * (y - 2.0 + 1.0 / y) <= best_gain:
                continue
            new = s / (x - 1.0)
            gain = 0.5 * (y - 1.0 - math.log(y))
        else:
            y = a * d
            if -0.5 * (qqd + 1.0 - 1.0 / y) <= best_gain:
                continue
            new = math.inf
            gain = -0.5 * (math.log(y) + qqd)
        if math.isfinite(gain) and gain > best_gain:
            best, best_alpha, best_gain = k, new, gain
    return best, best_alpha, best_gain


@njit(cache=True, error_model="numpy")
def mackay_beta(tt, PhiTt, active, alpha, Sigma, m, beta, N):  # pragma: no cover
    """(7.88) from the current posterior, in O(M): returns (N - sum gamma, beta_new).

    ||t - Phi m||^2 = t^T t - m^T Phi_a^T t - m^T A m / beta (from (7.82)-(7.83)),
    sum gamma = sum (1 - alpha_i Sigma_ii) (7.89); beta_new = inf for a perfect fit.
    """
    mb, mam, gamma = 0.0, 0.0, 0.0
    for k in range(alpha.shape[0]):
        mb += m[k] * PhiTt[active[k]]
        mam += alpha[k] * m[k] * m[k]
        gamma += 1.0 - alpha[k] * Sigma[k, k]
    misfit = max(tt - mb - mam / beta, 0.0)
    if misfit <= 0.0:
        return N - gamma, math.inf
    return N - gamma, (N - gamma) / misfit


@njit(cache=True, error_model="numpy")
def gemv_columns(G, M, x, out):  # pragma: no cover
    """out = G[:, :M] x for a column-major buffer G (P, capacity): four columns per pass over out."""
    P = G.shape[0]
    for p in range(P):
        out[p] = 0.0
    c = 0
    while c + 4 <= M:
        x0, x1, x2, x3 = x[c], x[c + 1], x[c + 2], x[c + 3]
        for p in range(P):
            out[p] += G[p, c] * x0 + G[p, c + 1] * x1 + G[p, c + 2] * x2 + G[p, c + 3] * x3
        c += 4
    while c < M:
        xc = x[c]
        for p in range(P):
            out[p] += G[p, c] * xc
        c += 1


@njit(cache=True, error_model="numpy")
def column_of_lower(Sigma, k):  # pragma: no cover
    """Sigma e_k from the lower triangle of a symmetric Sigma (row k left of the diagonal, column k below)."""
    M = Sigma.shape[0]
    out = np.empty(M)
    for i in range(k):
        out[i] = Sigma[k, i]
    for i in range(k, M):
        out[i] = Sigma[i, k]
    return out


@njit(cache=True, error_model="numpy")
def symmetrize(Sigma):  # pragma: no cover
    """Copy the lower triangle of Sigma onto its upper triangle, in place."""
    M = Sigma.shape[0]
    for i in range(M):
        for j in range(i + 1, M):
            Sigma[i, j] = Sigma[j, i]


@njit(cache=True, error_model="numpy")
def symmetric_product(Sigma, g, scale):  # pragma: no cover
    """scale Sigma g from the lower triangle of a symmetric Sigma, in one pass over it.

    Row i gives the dot product of its part left of the diagonal with g
    (four partial sums) and adds g_i times that part to the entries above i.
    """
    M = g.shape[0]
    z = np.zeros(M)
    for i in range(M):
        row = Sigma[i]
        g_i = g[i]
        a0, a1, a2, a3 = 0.0, 0.0, 0.0, 0.0
        j = 0
        while j + 4 <= i:
            a0 += row[j] * g[j]
            a1 += row[j + 1] * g[j + 1]
            a2 += row[j + 2] * g[j + 2]
            a3 += row[j + 3] * g[j + 3]
            z[j] += row[j] * g_i
            z[j + 1] += row[j + 1] * g_i
            z[j + 2] += row[j + 2] * g_i
            z[j + 3] += row[j + 3] * g_i
            j += 4
        while j < i:
            a0 += row[j] * g[j]
            z[j] += row[j] * g_i
            j += 1
        z[i] += (a0 + a1) + (a2 + a3) + row[i] * g_i
    for i in range(M):
        z[i] *= scale
    return z


@njit(cache=True, error_model="numpy")
def shift(Sigma, m, T, rows, S, Q, k, kappa, beta, work):  # pragma: no cover
    """Sigma^-1 += (1/kappa - Sigma_kk)^-1 e_k e_k^T in place (Sherman-Morrison, gap 7.7).

    Sigma -= kappa s s^T, m -= kappa m_k s with s = Sigma e_k, and S, Q of the
    tier (pool members ``rows``) by (7.106)-(7.107) after the update, from
    v = beta Phi_T^T Phi_a s (T holds Phi_T^T Phi_a in its first M columns;
    ``work`` is a scratch of the tier's size). Sigma is read and updated in
    its lower triangle only (half the work; ``symmetrize`` restores the rest).
    """
    M = m.shape[0]
    sigma_k = column_of_lower(Sigma, k)
    m_k = m[k]
    gemv_columns(T, M, sigma_k, work)
    for i in range(M):
        c = kappa * sigma_k[i]
        row = Sigma[i]
        for j in range(i + 1):
            row[j] -= c * sigma_k[j]
    c = kappa * m_k
    for i in range(M):
        m[i] -= c * sigma_k[i]
    for r in range(rows.shape[0]):
        p = rows[r]
        v = beta * work[r]
        Q[p] += c * v
        S[p] += kappa * (v * v)


@njit(cache=True, error_model="numpy")
def add_function(G, T, rows, gram, Sigma, m, S, Q, j, alpha_j, beta, work):  # pragma: no cover
    """Include pool member j with alpha_j (Tipping and Faul, appendix; gap 7.7); returns (Sigma, m).

    With g = Phi_a^T phi_j (row j of G), Sigma_jj = 1/(alpha_j + S_j),
    z = beta Sigma g and m_j = Sigma_jj Q_j: the new covariance is
    [[Sigma + Sigma_jj z z^T, -Sigma_jj z], [-Sigma_jj z^T, Sigma_jj]], the new
    mean [m - m_j z, m_j], and over the tier, with h = Phi_T^T phi_j and
    u = beta (h - beta Phi_T^T Phi_a z), S -= Sigma_jj u^2, Q -= m_j u.
    Column M of G becomes Phi_P^T phi_j (row j of the pool's Gram matrix)
    and column M of T its tier rows.
    """
    M = m.shape[0]
    g = G[j, :M].copy()
    Sigma_jj = 1.0 / (alpha_j + S[j])
    z = symmetric_product(Sigma, g, beta)
    m_j = Sigma_jj * Q[j]
    gemv_columns(T, M, z, work)
    new_Sigma = np.zeros((M + 1, M + 1))  # its lower triangle
    new_m = np.empty(M + 1)
    for a in range(M):
        c = Sigma_jj * z[a]
        for b in range(a + 1):
            new_Sigma[a, b] = Sigma[a, b] + c * z[b]
        new_Sigma[M, a] = -c
        new_m[a] = m[a] - m_j * z[a]
    new_Sigma[M, M] = Sigma_jj
    new_m[M] = m_j
    for r in range(rows.shape[0]):
        p = rows[r]
        h = gram[j, p]
        u = beta * (h - work[r])
        S[p] -= Sigma_jj * (u * u)
        Q[p] -= m_j * u
        T[r, M] = h
    for p in range(G.shape[0]):
        G[p, M] = gram[j, p]
    return new_Sigma, new_m


@njit(cache=True, error_model="numpy")
def delete_function(G, T, rows, Sigma, m, alpha, active, S, Q, k, beta, work):  # pragma: no cover
    """Delete included function k (alpha_k -> inf) by ``shift`` and ``drop_function``.

    Returns (Sigma, m, alpha, active) of size M - 1.

    Its own S, Q become its s_k = 1/Sigma_kk - alpha_k and q_k = m_k / Sigma_kk
    (7.104)-(7.105), taken before the update: they do not depend on alpha_k,
    and at alpha_k = inf S_k = s_k, Q_k = q_k. (The steps update S, Q over the
    tier only, which holds excluded functions and those added since the tier
    was chosen, so a deleted function's S, Q are otherwise out of date.)
    """
    p = active[k]
    s_k, q_k = 1.0 / Sigma[k, k] - alpha[k], m[k] / Sigma[k, k]
    shift(Sigma, m, T, rows, S, Q, k, 1.0 / Sigma[k, k], beta, work)  # the limit Delta^-1 -> 0
    S[p], Q[p] = s_k, q_k
    return drop_function(G, T, Sigma, m, alpha, active, k)


@njit(cache=True, error_model="numpy")
def drop_function(G, T, Sigma, m, alpha, active, k):  # pragma: no cover
    """Remove included function k (after its ``shift`` to alpha = inf): the last one takes its place.

    Column M-1 of G and T moves to column k, and likewise entry k of m, alpha,
    active and row and column k of Sigma. Returns (Sigma, m, alpha, active) of size M - 1.
    """
    M = m.shape[0]
    last = M - 1
    order = np.arange(last)
    if k < last:
        order[k] = last
        for p in range(G.shape[0]):
            G[p, k] = G[p, last]
        for r in range(T.shape[0]):
            T[r, k] = T[r, last]
    new_Sigma = np.zeros((last, last))  # its lower triangle, from that of Sigma
    for a in range(last):
        for b in range(a + 1):
            i, j = order[a], order[b]
            new_Sigma[a, b] = Sigma[i, j] if i >= j else Sigma[j, i]
    return new_Sigma, m[order], alpha[order], active[order]


@njit(cache=True, error_model="numpy")
def aligned(G, M, j, norms, active, align_max):  # pragma: no cover
    """Whether pool member j is (nearly) parallel to an included column (cosine > align_max)."""
    for k in range(M):
        if G[j, k] / math.sqrt(norms[j] * norms[active[k]]) > align_max:
            return True
    return False


@njit(cache=True, error_model="numpy")
def moves_beta(proposal, beta, beta_tol, beta_max):  # pragma: no cover
    """Whether moving beta to ``proposal`` (capped at beta_max) changes ln beta by more than beta_tol;
    a proposal that is not a positive number always counts as a move."""
    if not (math.isfinite(proposal) and proposal > 0.0):
        return True
    return abs(math.log(min(proposal, beta_max) / beta)) > beta_tol


@njit(cache=True, error_model="numpy")
def beta_step_due(tt, PhiTt, active, alpha, Sigma, m, beta, N, beta_tol, beta_max, cost, best_gain):  # pragma: no cover
    """Whether to re-estimate beta (step 8) before the next alpha step, whose gain is ``best_gain``.

    At fixed alphas the log evidence is near its maximum over ln beta at the
    (7.88) value, with curvature about -(N - sum gamma)/2, so moving there
    gains about (N - sum gamma) delta^2 / 4, delta = ln(beta_new / beta). The
    beta step is taken when delta exceeds beta_tol and that gain exceeds
    ``cost`` M times the best alpha step's: a beta step refactorises the
    posterior (O(M^3 + |T| M^2)), about M/2 alpha steps' work (O(|T| M) each)
    for ``cost`` = 1/2. A proposal that is not a positive number is always due.
    """
    dof, target = mackay_beta(tt, PhiTt, active, alpha, Sigma, m, beta, N)
    if not (math.isfinite(target) and target > 0.0):
        return True
    delta = math.log(min(target, beta_max) / beta)
    return abs(delta) > beta_tol and 0.25 * dof * delta * delta > cost * alpha.shape[0] * best_gain


@njit(cache=True, error_model="numpy")
def pool_steps(G, T, rows, Sigma, m, alpha, active, S, Q, gram, norms, blocked, included, PhiTt, tt, N, beta,
               value, tol, alpha_max, span_tol, align_max, beta_tol, beta_max, beta_cost, check_beta_from,
               check_first, iterations, max_iter, since_refresh, refresh_at, values, work):  # pragma: no cover
    """Steps of Algorithm 7.2 over the pool (flat prior) until one needs the caller.

    The same choice, update and bookkeeping as ``sequential.pool_step``: the
    included function of largest gain (``best_included_flat``: re-estimate by
    (7.101) or delete) against the excluded one of largest gain
    (``best_excluded_flat``: add), the included one winning ties, unless beta
    is to be re-estimated first (``beta_step_due``, from iteration
    ``check_beta_from`` on and, when ``check_first`` is False, not before the
    first step); an addition that copies an included column is blocked
    instead (``aligned``); the rank-one updates ``shift``, ``add_function``
    and ``delete_function``; then whether a refresh is due. ``values[i]`` is the log
    evidence after step i. Returns (steps, Sigma, m, alpha, active,
    since_refresh, pending): pending 0 when no step gains more than tol (or
    ``values`` is full, or max_iter is reached), 1 when beta is to be
    re-estimated, 2 when a refresh is due, 3 when G has no room for an addition.
    """
    steps = 0
    pending = 0
    while iterations + steps < max_iter and steps < values.shape[0]:
        M = m.shape[0]
        k, alpha_in, gain_in = -1, math.inf, -math.inf
        if M > 0:
            k, alpha_in, gain_in = best_included_flat(alpha, Sigma, m, alpha_max)
        j, x = best_excluded_flat(S, Q, norms, blocked, included, rows, beta, span_tol, alpha_max)
        gain_out = 0.5 * (x - 1.0 - math.log(x)) if j >= 0 else -math.inf
        if (steps > 0 or check_first) and iterations + steps >= check_beta_from and beta_step_due(
                tt, PhiTt, active, alpha, Sigma, m, beta, N, beta_tol, beta_max, beta_cost, max(gain_in, gain_out)):
            pending = 1
            break
        if k >= 0 and gain_in >= gain_out:
            if not gain_in > tol:
                break
            gain = gain_in
            if math.isinf(alpha_in):  # delete
                blocked[:] = False
                included[active[k]] = False
                Sigma, m, alpha, active = delete_function(G, T, rows, Sigma, m, alpha, active, S, Q, k, beta, work)
            else:  # re-estimate
                delta = alpha_in - alpha[k]
                if delta != 0.0:
                    shift(Sigma, m, T, rows, S, Q, k, 1.0 / (Sigma[k, k] + 1.0 / delta), beta, work)
                alpha[k] = alpha_in
        else:
            if j < 0 or not gain_out > tol:
                break
            if aligned(G, M, j, norms, active, align_max):
                blocked[j] = True
                continue
            if M == G.shape[1]:
                pending = 3
                break
            gain = gain_out
            alpha_j = S[j] / (x - 1.0)  # (7.101)
            Sigma, m = add_function(G, T, rows, gram, Sigma, m, S, Q, j, alpha_j, beta, work)
            alpha = np.append(alpha, alpha_j)
            active = np.append(active, j)
            included[j] = True
        value = value + gain
        values[steps] = value
        steps += 1
        since_refresh += 1
        if since_refresh >= max(refresh_at, alpha.shape[0]):
            pending = 2
            break
    symmetrize(Sigma)
    return steps, Sigma, m, alpha, active, since_refresh, pending


@njit(cache=True, error_model="numpy")
def posterior_factor(G, active, alpha, beta, PhiTt, tt, N):  # pragma: no cover
    """Result 7.12 over the included functions by one Cholesky factorisation; the evidence (*).

    Sigma^-1 = A + beta Phi_a^T Phi_a = L L^T (7.83) with Phi_a^T Phi_a the
    rows ``active`` of G; m = beta Sigma Phi_a^T t (7.82) by two triangular
    solves; ln p = (N ln beta - N ln 2pi + sum ln alpha + ln|Sigma|
    - beta t^T t + beta m^T Phi_a^T t) / 2, the (*) form of Result 7.13 with
    beta E_D + m^T A m = beta (t^T t - m^T Phi_a^T t). Returns (L, m, value);
    raises numpy's LinAlgError when Sigma^-1 is not numerically positive definite.
    """
    M = active.shape[0]
    H = np.empty((M, M))
    b = np.empty(M)
    for j in range(M):  # row j of the symmetric H from column j of G (contiguous in G's layout)
        b[j] = PhiTt[active[j]]
        for i in range(M):
            H[j, i] = beta * G[active[i], j]
        H[j, j] += alpha[j]
    L = np.linalg.cholesky(H)
    y = np.empty(M)
    for i in range(M):  # L y = b
        acc = b[i]
        for j in range(i):
            acc -= L[i, j] * y[j]
        y[i] = acc / L[i, i]
    m = np.empty(M)
    for i in range(M - 1, -1, -1):  # L^T m = y
        acc = y[i]
        for j in range(i + 1, M):
            acc -= L[j, i] * m[j]
        m[i] = acc / L[i, i]
    fit, log_det, log_alpha = 0.0, 0.0, 0.0
    for i in range(M):
        m[i] *= beta
        fit += m[i] * b[i]
        log_det += math.log(L[i, i])
        log_alpha += math.log(alpha[i])
    value = 0.5 * (N * math.log(beta) - N * LOG_2PI + log_alpha - 2.0 * log_det
                   - beta * (tt - fit))
    return L, m, value


@njit(cache=True, error_model="numpy")
def factors_over_rows(W, G, m, norms, PhiTt, rows, beta, S, Q):  # pragma: no cover
    """S_p, Q_p (7.106)-(7.107) of the pool members ``rows`` from W = G L^-T, in place.

    Row r of W and G belongs to member rows[r]: S = beta ||phi||^2 - beta^2 ||w_r||^2
    (phi^T Sigma phi = ||L^-1 g||^2) and Q = beta phi^T t - beta g_r^T m.
    """
    n, M = W.shape
    ww = np.zeros(n)
    gm = np.zeros(n)
    for c in range(M):
        mc = m[c]
        for r in range(n):
            w = W[r, c]
            ww[r] += w * w
            gm[r] += G[r, c] * mc
    for r in range(n):
        p = rows[r]
        S[p] = beta * norms[p] - beta * beta * ww[r]
        Q[p] = beta * PhiTt[p] - beta * gm[r]


@njit(cache=True, error_model="numpy")
def tier_rows(S, Q, norms, included, blocked, beta, span_tol, size):  # pragma: no cover
    """The tier: the ``size`` excluded members of largest x = Q^2 / S, or every one with x > 1 when
    there are more (those numerically in the included span and blocked copies left out); sorted
    pool positions."""
    P = S.shape[0]
    x = np.full(P, -np.inf)
    over, finite = 0, 0
    for p in range(P):
        if included[p] or blocked[p] or not S[p] > span_tol * beta * norms[p]:
            continue
        x[p] = Q[p] * Q[p] / S[p]
        if math.isfinite(x[p]):
            finite += 1
        if x[p] > 1.0:
            over += 1
    extra = min(max(size, over), finite)
    if extra == 0:
        return np.empty(0, dtype=np.intp)
    cutoff = -math.inf  # the extra-th largest x (a partial sort): every member at or above it joins
    if extra < finite:
        values = np.empty(finite)
        n = 0
        for p in range(P):
            if math.isfinite(x[p]):
                values[n] = x[p]
                n += 1
        cutoff = np.partition(values, finite - extra)[finite - extra]
    chosen = np.empty(P, dtype=np.intp)
    n = 0
    for p in range(P):
        if math.isfinite(x[p]) and x[p] >= cutoff:
            chosen[n] = p
            n += 1
    return chosen[:n].copy()


@njit(cache=True, error_model="numpy")
def gather_rows(buffer, rows, M, out):  # pragma: no cover
    """out[r, :M] = buffer[rows[r], :M] (both column-major)."""
    for c in range(M):
        for r in range(rows.shape[0]):
            out[r, c] = buffer[rows[r], c]


@njit(cache=True, error_model="numpy")
def assemble_gram(U, colsum, N, scale, bias, out):  # pragma: no cover
    """out = D [[N, 1^T Phi], [Phi^T 1, Phi^T Phi]] D (the bordered part only when ``bias``), D = diag(scale).

    U holds Phi^T Phi in its upper triangle (BLAS syrk); each 32 x 32 tile of
    it is written with its mirror image, so that both stay in cache.
    """
    n = U.shape[0]
    o = 1 if bias else 0
    if bias:
        out[0, 0] = N * scale[0] * scale[0]
        for j in range(n):
            v = colsum[j] * scale[0] * scale[j + 1]
            out[0, j + 1] = v
            out[j + 1, 0] = v
    B = 32
    for j0 in range(0, n, B):
        j1 = min(j0 + B, n)
        for i0 in range(0, j1, B):
            i1 = min(i0 + B, n)
            for j in range(j0, j1):
                for i in range(i0, min(i1, j + 1)):
                    v = U[i, j] * scale[i + o] * scale[j + o]
                    out[i + o, j + o] = v
                    out[j + o, i + o] = v
