"""Classification RVM: the Laplace approximation around the IRLS mode (section 7.2.3).

Outputs. Two classes use one logistic output, y = sigma(w^T phi) (7.108),
targets t in {0, 1}; K > 2 classes use K softmax outputs
y_k = exp(a_k) / sum_j exp(a_j) (7.120)-(7.121) with 1-of-K targets and the
log likelihood sum_n sum_k t_nk ln y_nk (the corrected (7.122)). Each output
has its own weights and precisions; an included weight is a pair
(basis function i, output k).

Mode. Newton's method (IRLS) on the log posterior (7.109) with gradient
Phi^T (t - y) - A w (7.110) and Hessian -(Phi^T B Phi + A) (7.111); for the
softmax B is the N K x N K matrix with blocks B_kj = diag(y_k (delta_kj - y_j))
and the Hessian is M K x M K. Steps are halved until the log posterior does
not decrease. At the mode Sigma = (Phi^T B Phi + A)^-1 (7.113), through a
Cholesky factor.

Hyperparameters.
``"mackay"``: alpha_i = gamma_i / w_i*^2, gamma_i = 1 - alpha_i Sigma_ii (7.116).
``"em"``:     alpha_i = 1 / (w_i*^2 + Sigma_ii).
``"fast"``:   Algorithm 7.2 on the effective regression problem (7.117)-(7.119):
              targets t_hat = Phi w* + B^-1 (t - y), noise covariance B^-1. Its
              factors need neither t_hat nor B^-1:
                  Q_i = phi_i^T B t_hat - phi_i^T B Phi Sigma Phi^T B t_hat = phi_i^T (t - y),
                  S_i = phi_i^T B phi_i - phi_i^T B Phi Sigma Phi^T B phi_i,
              (because Phi^T B t_hat = Sigma^-1 w*), so they hold for the
              softmax too, where B is singular. After each single-alpha step
              the mode is found again, warm-started.
The log evidence recorded is the Laplace approximation (7.114),
ln p(t | w*) + 1/2 sum ln alpha_i - 1/2 w*^T A w* + 1/2 ln |Sigma|.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg
from numpy.typing import NDArray
from scipy.special import expit, log_expit, logsumexp

from .posterior import (
    alpha_gain,
    alpha_star,
    covariance_from_factor,
    included_sparsity_quality,
    precision_factor,
)

__all__ = ["ClassOptions", "ClassOutcome", "classify", "Laplace", "find_mode", "laplace_log_evidence"]

Array = NDArray[np.float64]
Index = NDArray[np.intp]


@dataclass(frozen=True)
class ClassOptions:
    """Named thresholds of the classification runs (solver units)."""

    method: str
    tol: float
    max_iter: int
    alpha_max: float
    alpha_init: float
    max_newton: int
    newton_tol: float
    max_halvings: int = 40
    span_tol: float = 1e-6
    keep_if_empty: int | None = 0  # column kept (bias) when everything is pruned


@dataclass(frozen=True)
class Laplace:
    """The Gaussian approximation N(w*, Sigma) at the mode for the included pairs."""

    w: Array  # (P,)
    Y: Array  # (N, O) probabilities
    Bmat: Array  # (N, O, O) curvature blocks
    R: Array  # (P, P) upper Cholesky factor of Phi^T B Phi + A
    log_lik: float
    converged: bool


@dataclass(frozen=True)
class ClassOutcome:
    basis: Index  # (P,) column of each included pair
    output: Index  # (P,) output of each included pair
    alpha: Array
    w: Array
    Sigma: Array
    n_outputs: int
    log_evidence: Array
    iterations: int
    converged: bool
    all_pruned: bool


# ---------------------------------------------------------------------------
# the likelihood and its derivatives
# ---------------------------------------------------------------------------


def activations(Phi: Array, basis: Index, output: Index, w: Array, O: int) -> Array:
    """a_nk = sum over included pairs (i, k) of w_ik phi_i(x_n), (N, O) (7.120)."""
    a = np.zeros((Phi.shape[0], O))
    for k in range(O):
        sel = output == k
        if np.any(sel):
            a[:, k] = Phi[:, basis[sel]] @ w[sel]
    return a


def probabilities(a: Array) -> Array:
    """sigma(a) (7.108) for one output, softmax (7.121) for several."""
    if a.shape[1] == 1:
        return expit(a)
    return np.exp(a - logsumexp(a, axis=1, keepdims=True))


def log_likelihood(a: Array, T: Array) -> float:
    """sum t ln y + (1 - t) ln(1 - y) (7.109), or sum t_nk ln y_nk (7.122)."""
    if a.shape[1] == 1:
        return float(np.sum(T * log_expit(a) + (1.0 - T) * log_expit(-a)))
    return float(np.sum(T * a) - np.sum(logsumexp(a, axis=1)))


def curvature(Y: Array) -> Array:
    """B blocks (N, O, O): y(1 - y) for one output, y_k (delta_kj - y_j) for the softmax."""
    if Y.shape[1] == 1:
        return (Y * (1.0 - Y))[:, :, None]
    return np.einsum("nk,kj->nkj", Y, np.eye(Y.shape[1])) - Y[:, :, None] * Y[:, None, :]


def hessian(Phi_a: Array, output: Index, Bmat: Array, alpha: Array) -> Array:
    """Phi^T B Phi + A over the included pairs (the negative of (7.111))."""
    H = np.diag(alpha)
    O = Bmat.shape[1]
    for k in range(O):
        rk = np.flatnonzero(output == k)
        for j in range(O):
            rj = np.flatnonzero(output == j)
            if rk.size and rj.size:
                H[np.ix_(rk, rj)] += Phi_a[:, rk].T @ (Bmat[:, k, j][:, None] * Phi_a[:, rj])
    return H


def gradient(Phi_a: Array, output: Index, T: Array, Y: Array, alpha: Array, w: Array) -> Array:
    """Phi^T (t - y) - A w (7.110) over the included pairs."""
    return np.einsum("np,np->p", Phi_a, (T - Y)[:, output]) - alpha * w


def find_mode(
    Phi: Array, basis: Index, output: Index, T: Array, alpha: Array, w0: Array, opts: ClassOptions
) -> Laplace:
    """IRLS (Newton with step halving) for the mode w* of (7.109).

    Stops when the Newton decrement g^T H^-1 g / 2, the rise of the log
    posterior that the next full step predicts, is below
    ``newton_tol (1 + |log posterior|)``.
    """
    O = T.shape[1]
    Phi_a = Phi[:, basis]
    w = w0.copy()
    a = activations(Phi, basis, output, w, O)
    if basis.size == 0:
        Y = probabilities(a)
        return Laplace(w=w, Y=Y, Bmat=curvature(Y), R=np.zeros((0, 0)), log_lik=log_likelihood(a, T), converged=True)
    f = log_likelihood(a, T) - 0.5 * float(np.sum(alpha * w**2))
    converged = False
    for _ in range(opts.max_newton):
        Y = probabilities(a)
        g = gradient(Phi_a, output, T, Y, alpha, w)
        R = precision_factor(hessian(Phi_a, output, curvature(Y), alpha))
        step = scipy.linalg.cho_solve((R, False), g)  # Newton: H^-1 grad
        if 0.5 * float(g @ step) <= opts.newton_tol * (1.0 + abs(f)):  # Newton decrement
            converged = True
            break
        w_new, a, f = _halve(Phi, basis, output, T, alpha, w, step, f, opts)
        if w_new is w:  # no rise left within rounding
            converged = True
            break
        w = w_new
    Y = probabilities(a)
    Bmat = curvature(Y)
    R = precision_factor(hessian(Phi_a, output, Bmat, alpha))  # (7.113): Sigma^-1 = R^T R
    return Laplace(w=w, Y=Y, Bmat=Bmat, R=R, log_lik=log_likelihood(a, T), converged=converged)


def _halve(Phi, basis, output, T, alpha, w, step, f, opts):
    """The first of step, step/2, ... that does not lower the log posterior."""
    O = T.shape[1]
    size = 1.0
    for _ in range(opts.max_halvings):
        w_try = w + size * step
        a_try = activations(Phi, basis, output, w_try, O)
        f_try = log_likelihood(a_try, T) - 0.5 * float(np.sum(alpha * w_try**2))
        if f_try >= f:
            return w_try, a_try, f_try
        size /= 2.0
    return w, activations(Phi, basis, output, w, O), f


def laplace_log_evidence(mode: Laplace, alpha: Array) -> float:
    """ln of (7.114): ln p(t | w*) + 1/2 sum ln alpha - 1/2 w*^T A w* + 1/2 ln |Sigma|."""
    log_det_Sigma = -2.0 * float(np.sum(np.log(np.diag(mode.R)))) if alpha.size else 0.0
    return mode.log_lik + 0.5 * float(np.sum(np.log(alpha))) - 0.5 * float(np.sum(alpha * mode.w**2)) + 0.5 * log_det_Sigma


# ---------------------------------------------------------------------------
# sparsity and quality factors of every (function, output) pair
# ---------------------------------------------------------------------------


def factors(Phi: Array, Phi2: Array, basis: Index, output: Index, T: Array, mode: Laplace) -> tuple[Array, Array]:
    """S_ik, Q_ik of the effective problem (7.117)-(7.119), arrays (n_basis, O)."""
    O = T.shape[1]
    Q = Phi.T @ (T - mode.Y)  # phi_i^T (t_k - y_k)
    S = np.empty_like(Q)
    Phi_a = Phi[:, basis]
    for k in range(O):
        S[:, k] = Phi2.T @ mode.Bmat[:, k, k]  # phi_i^T B_kk phi_i
        if basis.size:
            U = (Phi_a * mode.Bmat[:, output, k]).T @ Phi  # rows: phi_p^T B_{o_p k} phi_i
            W = scipy.linalg.solve_triangular(mode.R, U, trans="T")
            S[:, k] -= np.einsum("pi,pi->i", W, W)
    return S, Q


# ---------------------------------------------------------------------------
# the runs
# ---------------------------------------------------------------------------


def classify(Phi: Array, T: Array, opts: ClassOptions) -> ClassOutcome:
    """Fit by ``opts.method`` on the scaled design ``Phi`` (N, M) and targets T (N, O)."""
    if opts.method == "fast":
        return _fast(Phi, T, opts)
    return _iterative(Phi, T, opts)


def _best_pair(S: Array, Q: Array, alpha_full: Array, active: tuple[Index, Index], mode: Laplace,
               alpha: Array, norms_B: Array, opts: ClassOptions):
    """The single-alpha step of largest gain over all pairs (Result 7.18)."""
    s, q = S.copy(), Q.copy()  # excluded pairs: s = S, q = Q
    if alpha.size:
        s[active], q[active] = included_sparsity_quality(alpha, covariance_from_factor(mode.R), mode.w)
    s, q, a_old = s.ravel(), q.ravel(), alpha_full.ravel()
    alpha_new = alpha_star(s, q)  # (7.101)
    alpha_new = np.where(alpha_new > opts.alpha_max, np.inf, alpha_new)
    with np.errstate(invalid="ignore", divide="ignore"):
        gain = alpha_gain(a_old, alpha_new, s, q)
    out = ~np.isfinite(a_old)
    in_span = out & (S.ravel() <= opts.span_tol * norms_B.ravel())
    gain[(out & ~np.isfinite(alpha_new))] = 0.0
    gain[in_span | np.isnan(gain) | np.isinf(gain)] = -np.inf
    j = int(np.argmax(gain))
    return j, float(alpha_new[j]), float(gain[j])


def _fast(Phi: Array, T: Array, opts: ClassOptions) -> ClassOutcome:
    N, M = Phi.shape
    O = T.shape[1]
    Phi2 = Phi**2
    basis, output = np.zeros(0, np.intp), np.zeros(0, np.intp)
    alpha, w = np.zeros(0), np.zeros(0)
    mode = find_mode(Phi, basis, output, T, alpha, w, opts)
    history = [laplace_log_evidence(mode, alpha)]
    converged, iterations = False, 0
    while iterations < opts.max_iter:
        S, Q = factors(Phi, Phi2, basis, output, T, mode)
        alpha_full = np.full((M, O), np.inf)
        alpha_full[basis, output] = alpha
        norms_B = np.stack([Phi2.T @ mode.Bmat[:, k, k] for k in range(O)], axis=1)
        j, alpha_j, gain = _best_pair(S, Q, alpha_full, (basis, output), mode, alpha, norms_B, opts)
        if gain <= opts.tol:
            converged = True
            break
        i, k = divmod(j, O)
        basis, output, alpha, w = _apply(basis, output, alpha, mode.w, i, k, alpha_j)
        mode = find_mode(Phi, basis, output, T, alpha, w, opts)
        history.append(laplace_log_evidence(mode, alpha))
        iterations += 1
    return _outcome(Phi, T, basis, output, alpha, mode, history, iterations, converged, opts)


def _apply(basis, output, alpha, w, i, k, alpha_new):
    """Add, re-estimate or delete the pair (i, k)."""
    hit = np.flatnonzero((basis == i) & (output == k))
    if hit.size == 0:
        return (np.append(basis, i), np.append(output, k), np.append(alpha, alpha_new), np.append(w, 0.0))
    p = int(hit[0])
    if np.isinf(alpha_new):
        keep = np.arange(basis.size) != p
        return basis[keep], output[keep], alpha[keep], w[keep]
    alpha = alpha.copy()
    alpha[p] = alpha_new
    return basis, output, alpha, w


def _iterative(Phi: Array, T: Array, opts: ClassOptions) -> ClassOutcome:
    N, M = Phi.shape
    O = T.shape[1]
    basis = np.repeat(np.arange(M), O)
    output = np.tile(np.arange(O), M)
    alpha = np.full(basis.size, opts.alpha_init)
    w = np.zeros(basis.size)
    history: list[float] = []
    converged, iterations, mode = False, 0, None
    while iterations < opts.max_iter and basis.size:
        mode = find_mode(Phi, basis, output, T, alpha, w, opts)
        value = laplace_log_evidence(mode, alpha)
        history.append(value)
        if len(history) > 1 and abs(value - history[-2]) <= opts.tol:
            converged = True
            break
        Sigma_ii = np.diag(covariance_from_factor(mode.R))
        with np.errstate(divide="ignore"):
            if opts.method == "mackay":
                alpha = (1.0 - alpha * Sigma_ii) / mode.w**2  # (7.116)
            else:
                alpha = 1.0 / (mode.w**2 + Sigma_ii)  # EM, gap 7.6 with the Laplace posterior
        keep = np.isfinite(alpha) & (alpha > 0.0) & (alpha <= opts.alpha_max)
        basis, output, alpha, w = basis[keep], output[keep], alpha[keep], mode.w[keep]
        iterations += 1
    if not basis.size:
        converged = True
    if mode is None or mode.w.size != basis.size:
        mode = find_mode(Phi, basis, output, T, alpha, w, opts)
    return _outcome(Phi, T, basis, output, alpha, mode, history, iterations, converged, opts)


def _outcome(Phi, T, basis, output, alpha, mode, history, iterations, converged, opts) -> ClassOutcome:
    O = T.shape[1]
    all_pruned = basis.size == 0 and opts.keep_if_empty is not None
    if all_pruned:
        basis = np.full(O, opts.keep_if_empty, dtype=np.intp)
        output = np.arange(O, dtype=np.intp)
        alpha = np.full(O, opts.alpha_max)
        mode = find_mode(Phi, basis, output, T, alpha, np.zeros(O), opts)
        history = list(history) + [laplace_log_evidence(mode, alpha)]
    Sigma = covariance_from_factor(mode.R) if basis.size else np.zeros((0, 0))
    return ClassOutcome(
        basis=basis,
        output=output,
        alpha=alpha,
        w=mode.w,
        Sigma=Sigma,
        n_outputs=O,
        log_evidence=np.asarray(history),
        iterations=iterations,
        converged=converged,
        all_pruned=all_pruned,
    )
