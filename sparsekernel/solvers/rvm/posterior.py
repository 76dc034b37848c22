"""The closed forms of section 7.2, one small function each.

Every function works on arrays that are already in the solver's units; none of
them iterates. The equation tag of the notes stands beside the line that
implements it. No explicit inverse is formed: the posterior covariance comes
from a Cholesky factor of its inverse,

    Sigma^-1 = A + beta Phi^T Phi = R^T R,                       (7.83)

and every product with Sigma is a triangular solve with R.

Hyperpriors (Exercise 7.13). ``Hyperprior(a, b, c, d)`` holds the Gamma
densities Gam(beta | a, b) and Gam(alpha_i | c, d) over the precisions
themselves. Their logarithms add (a - 1) ln beta - b beta and
(c - 1) ln alpha_i - d alpha_i to the objective; a = c = 1, b = d = 0 is the
flat (improper) prior, under which every update reduces to the book's.
(Tipping (2001) writes his densities over ln alpha and ln beta, so his shapes
are ours minus one: his a = b = c = d = 0 is our flat default.)
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.linalg.lapack
from numpy.typing import NDArray

from ...errors import SolverError

__all__ = [
    "Hyperprior",
    "FLAT",
    "Posterior",
    "precision_factor",
    "not_positive_definite",
    "covariance_from_factor",
    "posterior",
    "gamma_of",
    "log_evidence_direct",
    "evidence_rounding",
    "Whitened",
    "whitened_posterior",
    "log_evidence_star",
    "factors_from_posterior",
    "sparsity_quality",
    "included_sparsity_quality",
    "lam",
    "alpha_star",
    "alpha_gain",
    "lam_change",
]

Array = NDArray[np.float64]
LOG_2PI = math.log(2.0 * math.pi)


@dataclass(frozen=True)
class Hyperprior:
    """Gamma hyperpriors Gam(beta | a, b) and Gam(alpha_i | c, d) (Exercise 7.13)."""

    a: float = 1.0
    b: float = 0.0
    c: float = 1.0
    d: float = 0.0

    @property
    def flat(self) -> bool:
        return self.a == 1.0 and self.b == 0.0 and self.c == 1.0 and self.d == 0.0

    def log_alpha(self, alpha: Array) -> float:
        """sum_i (c - 1) ln alpha_i - d alpha_i over finite alpha_i (unnormalised)."""
        alpha = np.asarray(alpha, dtype=np.float64)
        if self.c == 1.0 and self.d == 0.0:
            return 0.0
        return float(np.sum((self.c - 1.0) * np.log(alpha) - self.d * alpha))

    def log_beta(self, beta: float) -> float:
        """(a - 1) ln beta - b beta (unnormalised)."""
        if self.a == 1.0 and self.b == 0.0:
            return 0.0
        return (self.a - 1.0) * math.log(beta) - self.b * beta

    def log_density(self, alpha: Array, beta: float) -> float:
        """ln Gam(beta | a, b) + sum_i ln Gam(alpha_i | c, d) (unnormalised): what the fit adds to (7.85)."""
        return self.log_alpha(alpha) + self.log_beta(beta)


FLAT = Hyperprior()


@dataclass(frozen=True)
class Posterior:
    """N(w | m, Sigma) of Result 7.12, held as m and the Cholesky factor of Sigma^-1.

    Attributes
    ----------
    m : array (M,)
        Posterior mean (7.82).
    R : array (M, M)
        Upper triangular, R^T R = Sigma^-1.
    Sigma : array (M, M)
        Posterior covariance (7.83), formed on first use (LAPACK potri).
    Sigma_diag : array (M,)
        Its diagonal, from the rows of R^-1 when Sigma was not formed: MacKay's
        and EM's updates need only the diagonal, and a triangular inverse costs
        half of potri's full one (an M^3 / 3 against 2 M^3 / 3 flops).
    """

    m: Array
    R: Array

    @functools.cached_property
    def Sigma(self) -> Array:
        return covariance_from_factor(self.R)

    @functools.cached_property
    def Sigma_diag(self) -> Array:
        if "Sigma" in self.__dict__ or self.R.shape[0] == 0:
            return np.diag(self.Sigma).copy()
        R_inv, info = scipy.linalg.lapack.dtrtri(self.R, lower=0)
        if info != 0:
            raise SolverError(f"LAPACK trtri failed with info={info}", status=f"trtri info={info}", solver="rvm")
        return np.einsum("ij,ij->i", R_inv, R_inv)  # Sigma = R^-1 R^-T: row i of R^-1 squared

    @property
    def log_det_Sigma(self) -> float:
        """ln |Sigma| = -2 sum ln R_ii."""
        return -2.0 * float(np.sum(np.log(np.diag(self.R))))


def precision_factor(H: Array, overwrite: bool = False) -> Array:
    """Upper Cholesky factor R of a symmetric positive definite H = R^T R.

    ``overwrite``: H may be overwritten; a column-major H (LAPACK's layout) is then factorised in place,
    by the same potrf call, with no copy. Raises SolverError when H is not numerically positive definite
    (a posterior precision A + beta Phi^T Phi whose conditioning is beyond double precision).
    """
    try:
        return scipy.linalg.cholesky(H, lower=False, overwrite_a=overwrite, check_finite=False)
    except np.linalg.LinAlgError as exc:
        raise not_positive_definite(H.shape[0]) from exc


def not_positive_definite(M: int) -> SolverError:
    """The error for a posterior precision (M x M) that Cholesky cannot factor."""
    return SolverError(
        f"the posterior precision ({M} x {M}) is not numerically positive definite; "
        "lower alpha_max or raise noise_floor",
        status="cholesky",
        solver="rvm",
    )


def covariance_from_factor(R: Array) -> Array:
    """Sigma = (R^T R)^-1 from the Cholesky factor (LAPACK potri; no general inverse)."""
    if R.shape[0] == 0:
        return np.zeros((0, 0))
    Sigma, info = scipy.linalg.lapack.dpotri(R, lower=False)
    if info != 0:
        raise SolverError(f"LAPACK potri failed with info={info}", status=f"potri info={info}", solver="rvm")
    Sigma = np.triu(Sigma)
    return Sigma + np.triu(Sigma, 1).T


def posterior(PhiTPhi: Array, PhiTt: Array, alpha: Array, beta: float) -> Posterior:
    """Result 7.12 from the Gram matrix Phi^T Phi and the vector Phi^T t.

    Parameters
    ----------
    PhiTPhi : array (M, M), symmetric
    PhiTt : array (M,)
    alpha : array (M,)
    beta : float
    """
    # (7.83): Sigma^-1 = A + beta Phi^T Phi, formed column-major (LAPACK's layout, so that the factorisation
    # works in place rather than on a copy: Phi^T Phi is symmetric, so its transpose is the same matrix in
    # that layout) with A added on the diagonal in place
    H = np.multiply(PhiTPhi.T, beta)
    H.flat[:: H.shape[0] + 1] += alpha
    R = precision_factor(H, overwrite=True)
    m = beta * scipy.linalg.cho_solve((R, False), PhiTt, check_finite=False)  # (7.82)
    return Posterior(m=m, R=R)


def gamma_of(alpha: Array, Sigma_diag: Array) -> Array:
    """gamma_i = 1 - alpha_i Sigma_ii (7.89)."""
    return 1.0 - alpha * Sigma_diag  # (7.89)


def log_evidence_direct(Phi: Array, t: Array, alpha: Array, beta: float) -> float:
    """(7.85) evaluated with the N x N matrix C of (7.86): for tests and small N.

    ln p(t | alpha, beta) = -1/2 { N ln 2pi + ln|C| + t^T C^-1 t },
    C = beta^-1 I + Phi A^-1 Phi^T.
    """
    N = t.shape[0]
    C = np.eye(N) / beta + (Phi / alpha) @ Phi.T  # (7.86)
    L = scipy.linalg.cholesky(C, lower=True)
    z = scipy.linalg.solve_triangular(L, t, lower=True)
    log_det_C = 2.0 * float(np.sum(np.log(np.diag(L))))
    return -0.5 * (N * LOG_2PI + log_det_C + float(z @ z))  # (7.85)


def evidence_rounding(Phi: Array, alpha: Array, beta: float) -> float:
    """An estimate (not a bound) of the rounding error of (7.85) computed with C formed, in nats.

    C = beta^-1 I + Phi A^-1 Phi^T has its eigenvalues in [beta^-1, trace C],
    so cond(C) <= beta trace C, and each of its N eigenvalues near beta^-1 is
    computed to about eps cond(C) relative: sqrt(N) eps beta trace(C) for
    ln|C| (the t^T C^-1 t term can err more when t lies along the small
    eigenvalues). Large weights on nearly collinear columns (alpha_i -> 0)
    make it grow without bound; on the benchmark's cells it was 3-30 times
    the spread of (7.85) under relative perturbations of Phi by eps
    (friedman2 with raw inputs at a weak prior: cond(C) = 5e15, an estimate
    of 18 nats for a spread of 2.3).

    Parameters
    ----------
    Phi : array (N, M)
        The kept columns.
    alpha : array (M,)
    beta : float

    Returns
    -------
    float
        The estimate, in nats.
    """
    N = Phi.shape[0]
    trace_C = N / beta + float(np.sum(np.sum(Phi * Phi, axis=0) / alpha))
    return math.sqrt(N) * float(np.finfo(np.float64).eps) * beta * trace_C


#: ``Whitened.addition_factors``: S_i by Pythagoras is trusted to decide that no addition gains when it
#: exceeds Q_i^2 by this times ||sqrt(beta) phi_i||^2 (both forms round to about (N + M) eps times that).
SCREEN_MARGIN = 1e-8


@dataclass(frozen=True)
class Whitened:
    """Result 7.12 and (7.85) from an orthogonal factorisation of the whitened design.

    With B = Phi A^-1/2 (each column phi_i scaled by alpha_i^-1/2) the
    augmented matrix [sqrt(beta) B; I] = Q R (Householder, ``whitened_posterior``)
    gives every quantity of the posterior without forming C or
    A + beta Phi^T Phi:

    - R^T R = I + beta B^T B = A^-1/2 Sigma^-1 A^-1/2 (7.83), so
      ln|C| = -N ln beta + 2 sum ln|R_ii| (7.86);
    - w minimises beta ||t - B w||^2 + ||w||^2, its residual r = [sqrt(beta)
      (t - Phi m); -w] has ||r||^2 = t^T C^-1 t, and m = A^-1/2 w (7.82);
    - h_i = ((R^T R)^-1)_ii = alpha_i Sigma_ii, so gamma_i = 1 - h_i (7.89).

    Householder QR is backward stable column by column, so the scale of a
    column (alpha_i -> 0 makes it huge) costs no digits, and collinear columns
    cost only through their angles. Forming C instead loses about
    eps beta trace(C) nats (``evidence_rounding``): 19 nats on friedman2 with
    raw inputs, where this form's estimate (``rounding``) is 1e-5 nats and
    its value agrees with (7.85) computed in extended precision
    (tests/solvers/rvm/test_evidence_certificate.py).

    Attributes
    ----------
    m, Sigma_diag, h, w : arrays (M,)
    residual : array (N,)
        t - Phi m.
    evidence : float
        (7.85).
    rounding : float
        An estimate (not a bound) of the rounding error of ``evidence``, in nats.
    """

    h: Array
    w: Array
    residual: Array
    evidence: float
    rounding: float
    root_beta: float
    Q: Array  # the orthogonal factor, (N + M, M)
    R_inv: Array  # R^-1, upper triangular (M, M)
    root_alpha: Array

    @property
    def m(self) -> Array:
        """(7.82): A^-1/2 w."""
        return self.w / self.root_alpha

    @property
    def Sigma_diag(self) -> Array:
        """diag(Sigma) = h / alpha."""
        return self.h / self.root_alpha**2

    @property
    def Sigma(self) -> Array:
        """(7.83): A^-1/2 R^-1 R^-T A^-1/2."""
        V = self.R_inv / self.root_alpha[:, None]
        return V @ V.T

    def factors(self, columns: Array) -> tuple[Array, Array]:
        """S_i = phi_i^T C^-1 phi_i and Q_i = phi_i^T C^-1 t (7.102)-(7.103) of the given columns (N, k).

        S_i is the squared distance of [sqrt(beta) phi_i; 0] from the range of
        [sqrt(beta) B; I] (the regularised least squares problem with phi_i as
        its right-hand side): the norm of a projected vector, not a difference
        of two large numbers. Q_i = beta phi_i^T (t - Phi m)."""
        N = columns.shape[0]
        a = self.root_beta * columns
        coef = self.Q[:N].T @ a                                      # Q^T [sqrt(beta) phi; 0]
        top = a - self.Q[:N] @ coef
        bottom = self.Q[N:] @ coef
        S = np.einsum("ij,ij->j", top, top) + np.einsum("ij,ij->j", bottom, bottom)
        Q = self.root_beta**2 * (columns.T @ self.residual)
        return S, Q

    def addition_factors(self, columns: Array) -> tuple[Array, Array]:
        """S_i, Q_i as ``factors`` gives them wherever an addition can gain (Q_i^2 > S_i, Result 7.18), and
        elsewhere an S_i >= Q_i^2 with the same verdict, at about half the cost.

        The projected norm needs Q^T [sqrt(beta) phi; 0] (one product) and the
        residual (a second). By Pythagoras S_i = ||sqrt(beta) phi_i||^2 - ||Q^T [sqrt(beta) phi_i; 0]||^2
        from the first alone, exact but for a rounding of about (N + M) eps ||sqrt(beta) phi_i||^2;
        where that value exceeds Q_i^2 by ``SCREEN_MARGIN`` ||sqrt(beta) phi_i||^2 (far beyond the rounding
        of either form) the projected norm exceeds Q_i^2 too, and no addition of phi_i gains: those keep
        the difference. The rest (the candidates, and any S_i that rounding may have left without
        digits) get the projected norm of ``factors``.
        """
        N = columns.shape[0]
        a = self.root_beta * columns
        coef = self.Q[:N].T @ a                                      # Q^T [sqrt(beta) phi; 0]
        norm = np.einsum("ij,ij->j", a, a)
        S = norm - np.einsum("ij,ij->j", coef, coef)                # Pythagoras
        Q = self.root_beta**2 * (columns.T @ self.residual)
        open_ = ~(Q * Q <= S - SCREEN_MARGIN * norm)                # NaN (no digits) stays open
        if np.any(open_):
            S[open_] = self.factors(columns[:, open_])[0]
        return S, Q


def whitened_posterior(Phi: Array, t: Array, alpha: Array, beta: float) -> Whitened:
    """Result 7.12 and (7.85) at (alpha, beta) over the columns Phi (N, M) by ``Whitened``'s factorisation.

    Parameters
    ----------
    Phi : array (N, M)
    t : array (N,)
    alpha : array (M,), positive and finite
    beta : float > 0
    """
    N, M = Phi.shape
    alpha = np.asarray(alpha, dtype=np.float64)
    if not np.all(np.isfinite(alpha) & (alpha > 0.0)) or not (math.isfinite(beta) and beta > 0.0):
        raise ValueError(f"alpha must be positive and finite and beta positive; got alpha in "
                         f"[{np.min(alpha, initial=np.inf):.3g}, {np.max(alpha, initial=-np.inf):.3g}], beta {beta!r}")
    root_alpha = np.sqrt(alpha)
    root_beta = math.sqrt(beta)
    aug = np.empty((N + M, M))
    np.multiply(Phi, root_beta / root_alpha, out=aug[:N])
    aug[N:] = np.eye(M)
    norms = np.sqrt(np.einsum("ij,ij->j", aug, aug))
    if M:
        Q, R = scipy.linalg.qr(aug, mode="economic", check_finite=False)
    else:
        Q, R = np.zeros((N, 0)), np.zeros((0, 0))
    c_top = root_beta * np.asarray(t, dtype=np.float64)
    Qc = Q[:N].T @ c_top                                            # Q^T [sqrt(beta) t; 0]
    R_inv = scipy.linalg.solve_triangular(R, np.eye(M), check_finite=False) if M else R
    w = R_inv @ Qc
    r_top, r_bottom = _projected_residual(Q, c_top, Qc)
    quad = float(r_top @ r_top) + float(r_bottom @ r_bottom)        # t^T C^-1 t
    log_det_C = -N * math.log(beta) + 2.0 * float(np.sum(np.log(np.abs(np.diag(R)))))   # (7.86)
    evidence = -0.5 * (N * LOG_2PI + log_det_C + quad)                                  # (7.85)
    h = np.einsum("ij,ij->i", R_inv, R_inv)
    # first-order effect of a columnwise relative perturbation eps ||a_j|| on ln|R^T R| and on ||r||^2
    eps = float(np.finfo(np.float64).eps)
    spread = float(np.sum(norms * (np.sqrt(h) + math.sqrt(quad) * np.abs(w))))
    rounding = math.sqrt(N + M) * eps * (spread + quad + N)
    return Whitened(h=h, w=w, residual=r_top / root_beta,
                    evidence=evidence, rounding=rounding, root_beta=root_beta, Q=Q, R_inv=R_inv,
                    root_alpha=root_alpha)


def _projected_residual(Q: Array, c_top: Array, Qc: Array) -> tuple[Array, Array]:
    """The residual r = c - Q Q^T c of [sqrt(beta) t; 0] off the range of the whitened design, projected twice:
    (r_top, r_bottom), r_top = sqrt(beta) (t - Phi m) and r_bottom minus the last M rows of r.

    One projection leaves an error of eps ||c|| in every direction; the second removes its part in the
    range of Q, so Q_i = sqrt(beta) a_i^T r_top of a column a_i nearly in that range (S_i small) keeps
    its digits: fuzzed, targets near -2.2e5 with spread 0.14 (N = 3, wide RBF) had Q_i = -0.0088 with a
    rounding of 0.005, and the report claimed an addition gaining 1.47 nats where (7.85) computed in
    exact rational arithmetic falls by 0.75.
    """
    N = c_top.shape[0]
    r_top = c_top - Q[:N] @ Qc                                      # sqrt(beta) (t - Phi m)
    r_bottom = Q[N:] @ Qc                                           # (minus) the last M rows of r: w
    again = Q[:N].T @ r_top - Q[N:].T @ r_bottom                    # Q^T r: zero but for rounding
    return r_top - Q[:N] @ again, r_bottom + Q[N:] @ again


def log_evidence_star(
    N: int, beta: float, alpha: Array, post: Posterior, data_misfit: float
) -> float:
    """The (*) form of Result 7.13, with E_D = ||t - Phi m||^2 given.

    ln p = N/2 ln beta - N/2 ln 2pi + 1/2 ln|A| + 1/2 ln|Sigma|
           - beta/2 ||t - Phi m||^2 - 1/2 m^T A m.
    """
    return 0.5 * (
        N * math.log(beta)
        - N * LOG_2PI
        + float(np.sum(np.log(alpha)))
        + post.log_det_Sigma
        - beta * data_misfit
        - float(np.sum(alpha * post.m**2))
    )  # (*)


def factors_from_posterior(
    G: Array, PhiTt: Array, norms: Array, Sigma: Array, m: Array, beta: float
) -> tuple[Array, Array]:
    """S_i, Q_i of (7.102)-(7.103) for many candidates by (7.106)-(7.107).

    Parameters
    ----------
    G : array (P, M)
        phi_i^T Phi_a for the P candidates against the M included columns.
    PhiTt, norms : arrays (P,)
        phi_i^T t and ||phi_i||^2.
    Sigma, m : the posterior over the included weights, (M, M) and (M,).
    """
    S = beta * norms - beta**2 * np.einsum("ij,ij->i", G @ Sigma, G)  # (7.107)
    Q = beta * PhiTt - beta * (G @ m)  # (7.106), using beta Sigma Phi_a^T t = m
    return S, Q


def sparsity_quality(S: Array, Q: Array, alpha: Array) -> tuple[Array, Array]:
    """s_i, q_i from S_i, Q_i (7.104)-(7.105); alpha_i = inf gives s = S, q = Q."""
    finite = np.isfinite(alpha)
    factor = np.ones_like(S)
    a = alpha[finite]
    factor[finite] = a / (a - S[finite])
    return factor * S, factor * Q  # (7.105), (7.104)


def included_sparsity_quality(alpha: Array, Sigma: Array, m: Array) -> tuple[Array, Array]:
    """s_i, q_i of the included functions from the posterior: gamma_i / Sigma_ii and m_i / Sigma_ii.

    Over the included functions (7.106)-(7.107) give, with beta Phi^T Phi =
    Sigma^-1 - A, S = A - A Sigma A and Q = A m, so S_i = alpha_i - alpha_i^2
    Sigma_ii, Q_i = alpha_i m_i and alpha_i - S_i = alpha_i^2 Sigma_ii. Then
    (7.104)-(7.105) read q_i = m_i / Sigma_ii and s_i = 1/Sigma_ii - alpha_i =
    gamma_i / Sigma_ii, free of the cancellation in alpha_i - S_i. ``Sigma`` may be the
    covariance or its diagonal alone (all they need).
    """
    d = np.diag(Sigma) if np.ndim(Sigma) == 2 else Sigma
    # Sigma_ii rounded to 0 (a Gamma prior on alpha at targets of 1e8): s_i = inf, q_i inf or nan, which
    # alpha_star reads as no maximiser (numpy's divide-by-zero RuntimeWarnings reached the caller)
    with np.errstate(divide="ignore", invalid="ignore"):
        return 1.0 / d - alpha, m / d  # (7.105), (7.104)


def lam(alpha: Array, s: Array, q: Array) -> Array:
    """lambda(alpha_i) of (7.97); lambda(inf) = 0."""
    alpha = np.asarray(alpha, dtype=np.float64)
    out = np.zeros(np.broadcast(alpha, s, q).shape)
    a, s_, q_ = np.broadcast_arrays(alpha, s, q)
    finite = np.isfinite(a)
    af, sf, qf = a[finite], s_[finite], q_[finite]
    out[finite] = 0.5 * (np.log(af) - np.log(af + sf) + qf**2 / (af + sf))  # (7.97)
    return out


def lam_change(alpha_old: Array, alpha_new: Array, s: Array, q: Array) -> Array:
    """lambda(alpha_new) - lambda(alpha_old) of (7.97), either alpha possibly inf, without cancellation.

    Between two finite values the difference is taken term by term,

        1/2 [ ln(a'/a) - ln(1 + (a' - a)/(a + s)) - q^2 (a' - a) / ((a' + s)(a + s)) ],

    not as lambda(a') - lambda(a): where alpha_i << s_i both lambdas hold q^2 / s of up to 1e14, and
    their difference was rounding (a re-estimation's gain of 2^-5 nats where it is 0.015, fuzzed on a
    poly kernel whose every h_i = alpha_i Sigma_ii was 1e-15).
    """
    a, b, s_, q_ = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (alpha_old, alpha_new, s, q)))
    out = np.zeros(a.shape)
    both = np.isfinite(a) & np.isfinite(b)
    af, bf, sf, qf = a[both], b[both], s_[both], q_[both]
    step = bf - af
    out[both] = 0.5 * (np.log(bf / af) - np.log1p(step / (af + sf)) - qf**2 * step / ((bf + sf) * (af + sf)))
    new_only = ~np.isfinite(a) & np.isfinite(b)
    out[new_only] = lam(b[new_only], s_[new_only], q_[new_only])
    old_only = np.isfinite(a) & ~np.isfinite(b)
    out[old_only] = -lam(a[old_only], s_[old_only], q_[old_only])
    return out if out.ndim else out[()]


def alpha_star(s: Array, q: Array, prior: Hyperprior = FLAT) -> Array:
    """The maximiser of lambda(alpha) (+ the alpha hyperprior), inf when there is none.

    Flat prior: alpha = s^2 / (q^2 - s) if q^2 > s, else inf (7.101).
    Gamma prior Gam(alpha | c, d): the stationary points of
    lambda(alpha) + (c - 1) ln alpha - d alpha solve, after multiplying the
    derivative (7.100) + (c - 1)/alpha - d by 2 alpha (alpha + s)^2, the cubic
        -2d alpha^3 + (2(c-1) - 4ds) alpha^2
          + (s - q^2 + 4(c-1)s - 2ds^2) alpha + (2c - 1) s^2 = 0;
    the best positive root is kept when it beats exclusion (objective 0).
    """
    s = np.asarray(s, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):   # s_i = q_i = inf (Sigma_ii rounded to 0): no maximiser
        theta = q**2 - s
    if prior.c == 1.0 and prior.d == 0.0:
        with np.errstate(divide="ignore"):
            return np.where(theta > 0.0, s**2 / np.where(theta > 0.0, theta, 1.0), np.inf)  # (7.101)
    return _alpha_star_gamma(s, q, prior.c, prior.d)


def _alpha_star_gamma(s: Array, q: Array, c: float, d: float) -> Array:
    """Vectorised cubic solve of ``alpha_star`` under Gam(alpha | c, d)."""
    with np.errstate(over="ignore", invalid="ignore"):    # s_i = inf (q_i nan): no root, below
        c3 = np.full_like(s, -2.0 * d)
        c2 = 2.0 * (c - 1.0) - 4.0 * d * s
        c1 = s - q**2 + 4.0 * (c - 1.0) * s - 2.0 * d * s**2
        c0 = (2.0 * c - 1.0) * s**2
    roots = _cubic_roots(c3, c2, c1, c0)  # (..., 3), nan where absent
    with np.errstate(invalid="ignore", divide="ignore"):
        valid = np.isfinite(roots) & (roots > 0.0)
        safe = np.where(valid, roots, 1.0)
        value = lam(safe, s[..., None], q[..., None]) + (c - 1.0) * np.log(safe) - d * safe
    value = np.where(valid, value, -np.inf)
    k = np.argmax(value, axis=-1)
    best_value = np.take_along_axis(value, k[..., None], axis=-1)[..., 0]
    best = np.take_along_axis(roots, k[..., None], axis=-1)[..., 0]
    return np.where(best_value > 0.0, best, np.inf)


def _cubic_roots(c3: Array, c2: Array, c1: Array, c0: Array) -> Array:
    """Real roots of c3 x^3 + c2 x^2 + c1 x + c0 (companion eigenvalues), nan-padded.

    No roots where a coefficient is not finite (an included function whose s_i overflowed, q_i nan: the
    flat prior's test q^2 > s finds none there either); numpy's eigvals raised LinAlgError on them, and
    the fast RVR with Gam(alpha | 1, 1e-30) on targets of 1e8 stopped with it. Where c3 is so small
    that the companion matrix overflows, the root near -c2 / c3 lies beyond every float and the other
    two are the quadratic's.
    """
    shape = c0.shape
    out = np.full(shape + (3,), np.nan)
    finite = np.isfinite(c3) & np.isfinite(c2) & np.isfinite(c1) & np.isfinite(c0)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        ratios = -np.stack([c2, c1, c0], axis=-1) / c3[..., None]
    cubic = finite & (c3 != 0.0) & np.all(np.isfinite(ratios), axis=-1)
    if np.any(cubic):
        comp = np.zeros((int(cubic.sum()), 3, 3))
        comp[:, 0, :] = ratios[cubic]
        comp[:, 1, 0] = comp[:, 2, 1] = 1.0
        ev = _smallest_by_product(np.linalg.eigvals(comp), comp[:, 0, 2])
        real = np.abs(ev.imag) <= 1e-9 * np.maximum(np.abs(ev), 1.0)
        out[cubic] = np.where(real, ev.real, np.nan)
    quad = finite & ~cubic & (c2 != 0.0)
    if np.any(quad):
        a, b, cc = c2[quad], c1[quad], c0[quad]
        disc = b**2 - 4.0 * a * cc
        root = np.sqrt(np.where(disc >= 0.0, disc, np.nan))
        # the roots as (-b -+ root) / 2a lost the small one to cancellation where 4 a cc << b^2 (its numerator
        # 0): with the product of the roots cc / a, each is taken without it
        half = -0.5 * (b + np.copysign(root, b))
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):    # a root beyond every float: inf
            out[quad, 0] = half / a
            out[quad, 1] = np.where(half != 0.0, cc / half, np.nan)
    linear = finite & ~cubic & ~quad & (c1 != 0.0)
    out[linear, 0] = -c0[linear] / c1[linear]
    return out


def _smallest_by_product(ev: NDArray[np.complex128], product: Array) -> NDArray[np.complex128]:
    """The companion eigenvalues ``ev`` (n, 3) with the smallest of each row replaced by the product of
    the roots (``product`` = -c0 / c3) over the other two. The eigenvalues are found to about eps times
    the matrix's norm: Gam(alpha | 1, 1e-300) puts two roots near 1e150 and left the third, the
    maximiser s^2 / (q^2 - s) of the flat prior, no digits (no root found: the function was pruned)."""
    order = np.argsort(np.abs(ev), axis=1)
    big = np.take_along_axis(ev, order[:, 1:], axis=1)
    others = big[:, 0] * big[:, 1]
    out = ev.copy()
    rows = np.flatnonzero(others != 0.0)
    out[rows, order[rows, 0]] = product[rows] / others[rows]
    return out


def alpha_gain(
    alpha_old: Array, alpha_new: Array, s: Array, q: Array, prior: Hyperprior = FLAT
) -> Array:
    """Change of the objective when alpha_i moves from alpha_old to alpha_new.

    lambda(alpha_new) - lambda(alpha_old) (Result 7.17, (7.96)), plus the
    change of the alpha hyperprior over included functions.
    """
    gain = lam_change(alpha_old, alpha_new, s, q)
    if prior.c == 1.0 and prior.d == 0.0:
        return gain
    return gain + _prior_term(alpha_new, prior) - _prior_term(alpha_old, prior)


def _prior_term(alpha: Array, prior: Hyperprior) -> Array:
    alpha = np.asarray(alpha, dtype=np.float64)
    out = np.zeros(alpha.shape)
    finite = np.isfinite(alpha)
    out[finite] = (prior.c - 1.0) * np.log(alpha[finite]) - prior.d * alpha[finite]
    return out
