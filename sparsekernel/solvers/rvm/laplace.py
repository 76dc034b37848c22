"""The Laplace approximation around the IRLS mode (section 7.2.3), for any likelihood.

Weights. Each of the O outputs of the likelihood has its own weights and
precisions; an included weight is a pair (basis function i, output k), and
the activations are a_nk = sum over included pairs (i, k) of w_ik phi_i(x_n)
(7.120). Two classes (``Bernoulli``) and Poisson counts have one output,
K > 2 classes (``Softmax``) K outputs.

Mode. Newton's method (IRLS) on the log posterior (7.109)
ln p(t | w) - w^T A w / 2 with gradient Phi^T (t - y) - A w (7.110) and
Hessian -(Phi^T B Phi + A) (7.111), read from the likelihood's residual and
curvature; for O outputs B is the N O x N O matrix with blocks B_kj and the
Hessian is P x P over the P included pairs. Steps are halved until the log
posterior does not decrease; a start where it is not finite (a log link's
exp(a) overflowing far above the mode) is damped first, to the best point of
the line from it to 0 (``_finite_start``), and a gradient or Hessian that is
still not finite is a SolverError. At the mode (7.112) Sigma = (Phi^T B Phi + A)^-1
(7.113), through a Cholesky factor.

Effective problem. At the mode the model is the Gaussian regression
t_hat = Phi w + noise, noise ~ N(0, B^-1), t_hat = Phi w* + B^-1 (t - y)
(7.117)-(7.119): the regression formulas with beta I replaced by B. The
sequential algorithm reads it through the products ``effective_problem``
returns, which need neither t_hat nor B^-1:

    Phi^T B Phi,   Phi^T B t_hat = Phi^T B Phi w* + Phi^T (t - y),

so they hold for the softmax too, where B is singular.

The log evidence is the Laplace approximation (7.114),
ln p(t | w*) + 1/2 sum ln alpha_i - 1/2 w*^T A w* + 1/2 ln |Sigma|.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.linalg
from numpy.typing import NDArray

from ...errors import SolverError
from .likelihood import Likelihood
from .posterior import covariance_from_factor, precision_factor

__all__ = ["ModeOptions", "Laplace", "Effective", "activations", "find_mode", "laplace_log_evidence",
           "effective_problem", "curvature_roots", "whitened_problem"]

Array = NDArray[np.float64]
Index = NDArray[np.intp]
#: Eigenvalues of B_n below this share of its largest are its null space (the softmax's B_n 1 = 0).
NULL_SHARE = 1e-12


@dataclass(frozen=True)
class ModeOptions:
    """Named thresholds of the IRLS mode search."""

    max_newton: int = 50
    newton_tol: float = 1e-10
    max_halvings: int = 40


@dataclass(frozen=True)
class Laplace:
    """The Gaussian approximation N(w*, Sigma) at the mode for the included pairs."""

    w: Array  # (P,)
    Y: Array  # (N, O) the likelihood's mean at the mode
    Bmat: Array  # (N, O, O) curvature blocks
    R: Array  # (P, P) upper Cholesky factor of Phi^T B Phi + A
    log_lik: float
    converged: bool


def activations(Phi: Array, basis: Index, output: Index, w: Array, O: int) -> Array:
    """a_nk = sum over included pairs (i, k) of w_ik phi_i(x_n), (N, O) (7.120)."""
    return kept_activations(Phi[:, basis], output, w, O)


def kept_activations(Phi_a: Array, output: Index, w: Array, O: int) -> Array:
    """``activations`` from the columns of the included pairs, Phi_a = Phi[:, basis] (no copy of Phi)."""
    if O == 1:
        return (Phi_a @ w)[:, None]
    a = np.zeros((Phi_a.shape[0], O))
    for k in range(O):
        sel = output == k
        if np.any(sel):
            a[:, k] = Phi_a[:, sel] @ w[sel]
    return a


def hessian(Phi_a: Array, output: Index, Bmat: Array, alpha: Array) -> Array:
    """Phi^T B Phi + A over the included pairs (the negative of (7.111))."""
    O = Bmat.shape[1]
    if O == 1:  # one output: B = diag(b_n); X^T X with X = B^(1/2) Phi_a, a symmetric rank-k update
        X = np.sqrt(Bmat[:, 0, :]) * Phi_a
        H = X.T @ X
        H[np.diag_indices_from(H)] += alpha
        return H
    H = np.diag(alpha)
    for k in range(O):
        rk = np.flatnonzero(output == k)
        for j in range(O):
            rj = np.flatnonzero(output == j)
            if rk.size and rj.size:
                H[np.ix_(rk, rj)] += Phi_a[:, rk].T @ (Bmat[:, k, j][:, None] * Phi_a[:, rj])
    return H


def gradient(Phi_a: Array, output: Index, residual: Array, alpha: Array, w: Array) -> Array:
    """Phi^T (t - y) - A w (7.110) over the included pairs."""
    return np.einsum("np,np->p", Phi_a, residual[:, output]) - alpha * w


def find_mode(likelihood: Likelihood, Phi: Array, basis: Index, output: Index, T: Array, alpha: Array,
              w0: Array, opts: ModeOptions) -> Laplace:
    """IRLS (Newton with step halving) for the mode w* of the log posterior (7.109)-(7.112).

    Stops when the Newton decrement g^T H^-1 g / 2, the rise of the log
    posterior that the next full step predicts, is below
    ``newton_tol (1 + |log posterior|)``, after taking that last step.
    """
    O = T.shape[1]
    Phi_a = Phi[:, basis]
    w, a, f = _finite_start(likelihood, Phi_a, output, T, alpha, w0, opts)
    converged = basis.size == 0
    for _ in range(0 if converged else opts.max_newton):
        Y = likelihood.mean(a)
        g = gradient(Phi_a, output, likelihood.residual(T, Y), alpha, w)  # (7.110)
        H = hessian(Phi_a, output, likelihood.curvature(Y), alpha)  # -(7.111)
        if not (np.all(np.isfinite(g)) and np.all(np.isfinite(H))):
            raise _not_finite(w.size)
        R = _laplace_factor(H, alpha)
        step = scipy.linalg.cho_solve((R, False), g, check_finite=False)  # Newton: H^-1 grad
        if 0.5 * float(g @ step) <= opts.newton_tol * (1.0 + abs(f)):  # Newton decrement
            w = w + step  # the last step, within the quadratic region: it squares the error of the mode
            a = kept_activations(Phi_a, output, w, O)
            converged = True
            break
        w_new, a, f = _halve(likelihood, Phi_a, output, T, alpha, w, step, f, opts)
        if w_new is w:  # no rise left within rounding
            converged = True
            break
        w = w_new
    return _at_mode(likelihood, Phi_a, output, T, alpha, w, a, converged)


def _log_posterior(likelihood, Phi_a, output, T, alpha, w) -> tuple[Array, float]:
    """The activations (7.120) at w and the log posterior (7.109) there (-inf or nan where a log link
    overflows)."""
    a = kept_activations(Phi_a, output, w, T.shape[1])
    with np.errstate(over="ignore", invalid="ignore"):
        return a, likelihood.log_likelihood(a, T) - 0.5 * float(np.sum(alpha * w**2))


def _finite_start(likelihood, Phi_a, output, T, alpha, w0, opts) -> tuple[Array, Array, float]:
    """w0, or, where the log posterior (7.109) or the mean is not finite there (a log link's exp(a)
    overflowing at a start far above the mode), the best of w0 / 2, w0 / 4, ... and 0.

    Newton's method from such a start cannot begin (its gradient (7.110) and Hessian (7.111) are inf or
    nan), and the first finite point of the line to 0 may still lie so far above the mode that Newton on
    exp(a) needs a step per unit of a; the highest log posterior on that line is the damped start. The log
    posterior is concave (Bernoulli, softmax, Poisson), so any finite start reaches the same mode.
    """
    w = w0.copy()
    a, f = _log_posterior(likelihood, Phi_a, output, T, alpha, w)
    with np.errstate(over="ignore", invalid="ignore"):
        finite = math.isfinite(f) and bool(np.all(np.isfinite(likelihood.mean(a))))
    if finite:
        return w, a, f
    best = (np.zeros_like(w0), *_log_posterior(likelihood, Phi_a, output, T, alpha, np.zeros_like(w0)))
    for k in range(1, opts.max_halvings + 1):
        trial = w0 * 0.5**k
        a_k, f_k = _log_posterior(likelihood, Phi_a, output, T, alpha, trial)
        if f_k > best[2]:                                   # nan and -inf never win
            best = (trial, a_k, f_k)
    return best


def _laplace_factor(H: Array, alpha: Array) -> Array:
    """The upper Cholesky factor of H = Phi^T B Phi + A (7.113), or a SolverError that says what to change
    for this likelihood: the regression's advice (lower alpha_max, raise noise_floor) named a parameter
    the classification and Poisson RVMs do not have (fuzzed: alpha_init = 1e-300 under MacKay; Poisson
    counts near 1e12, whose curvature B is the rate)."""
    try:
        return precision_factor(H)
    except SolverError as exc:
        curvature = float(np.max(np.diag(H) - alpha, initial=0.0))
        raise SolverError(
            f"the Laplace posterior precision Phi^T B Phi + A (7.113) over {H.shape[0]} weights is not "
            f"numerically positive definite: its smallest alpha_i, {float(np.min(alpha)):.3g}, is below double "
            f"precision's resolution of the largest diagonal of Phi^T B Phi, {curvature:.3g} (B is the "
            f"likelihood's curvature: the rate, for counts); raise alpha_init or use method='fast'",
            status="cholesky", solver="rvm") from exc


def _not_finite(P: int) -> SolverError:
    """The error for a mode search whose gradient or Hessian left the finite numbers."""
    return SolverError(
        f"the Laplace mode search over {P} weights reached a point where the gradient (7.110) or the "
        "Hessian (7.111) is not finite (the mean of the likelihood overflows)",
        status="overflow",
        solver="rvm",
    )


def _at_mode(likelihood, Phi_a, output, T, alpha, w, a, converged) -> Laplace:
    """The Laplace approximation at w: Sigma^-1 = Phi^T B Phi + A = R^T R (7.113)."""
    Y = likelihood.mean(a)
    Bmat = likelihood.curvature(Y)
    R = _laplace_factor(hessian(Phi_a, output, Bmat, alpha), alpha) if w.size else np.zeros((0, 0))  # (7.113)
    return Laplace(w=w, Y=Y, Bmat=Bmat, R=R, log_lik=likelihood.log_likelihood(a, T), converged=converged)


def _halve(likelihood, Phi_a, output, T, alpha, w, step, f, opts):
    """The first of step, step/2, ... that does not lower the log posterior."""
    O = T.shape[1]
    size = 1.0
    for _ in range(opts.max_halvings):
        w_try = w + size * step
        a_try = kept_activations(Phi_a, output, w_try, O)
        with np.errstate(over="ignore"):  # a log link overflows on a step too long: halved
            f_try = likelihood.log_likelihood(a_try, T) - 0.5 * float(np.sum(alpha * w_try**2))
        if f_try >= f:
            return w_try, a_try, f_try
        size /= 2.0
    return w, kept_activations(Phi_a, output, w, O), f


def laplace_log_evidence(mode: Laplace, alpha: Array) -> float:
    """ln of (7.114): ln p(t | w*) + 1/2 sum ln alpha - 1/2 w*^T A w* + 1/2 ln |Sigma|."""
    log_det_Sigma = -2.0 * float(np.sum(np.log(np.diag(mode.R)))) if alpha.size else 0.0
    return mode.log_lik + 0.5 * float(np.sum(np.log(alpha))) - 0.5 * float(np.sum(alpha * mode.w**2)) + 0.5 * log_det_Sigma


#: The activations' change h da at which ``alpha_gradient`` differences the curvature B (largest |h da_n|).
CURVATURE_STEP = 1e-5


def _spread(Phi_a: Array, output: Index, Sigma: Array, O: int) -> Array:
    """S_n = Phi_n Sigma Phi_n^T (N, O, O): the posterior covariance of the activations a_n (7.113)."""
    S = np.empty((Phi_a.shape[0], O, O))
    for k in range(O):
        rk = output == k
        for j in range(O):
            rj = output == j
            S[:, k, j] = np.einsum("nq,nq->n", Phi_a[:, rk] @ Sigma[np.ix_(rk, rj)], Phi_a[:, rj])
    return S


def _curvature_change(likelihood: Likelihood, a: Array, dA: Array) -> Array:
    """dB_n along each column of dA (N, P, O), a central difference: (N, P, O, O)."""
    N, P, O = dA.shape
    reach = np.max(np.abs(dA), axis=(0, 2))
    h = np.divide(CURVATURE_STEP, reach, out=np.zeros(P), where=reach > 0.0)
    dB = np.empty((N, P, O, O))
    for sign in (1.0, -1.0):
        moved = a[:, None, :] + sign * h[None, :, None] * dA
        with np.errstate(over="ignore"):
            B = likelihood.curvature(likelihood.mean(moved.reshape(-1, O))).reshape(dB.shape)
        if sign > 0:
            dB[:] = B
        else:
            dB -= B
    return dB * np.divide(0.5, h, out=np.zeros(P), where=h > 0.0)[None, :, None, None]


def alpha_gradient(likelihood: Likelihood, Phi_a: Array, output: Index, alpha: Array, mode: Laplace) -> Array:
    """d(7.114)/d ln alpha_p for every kept pair p, the mode w*(alpha) moving with alpha.

    (7.114) is ln p(t | w*) - w*^T A w* / 2 + sum ln alpha / 2 - ln |H| / 2
    with H = Phi^T B Phi + A (7.111). At the mode (7.110) is zero, so w*
    enters the first two terms to second order only, and differentiating
    (7.110) = 0 gives dw* / d ln alpha_p = -Sigma e_p alpha_p w_p. B depends
    on w* through the activations, da = Phi dw*, so

        d/d ln alpha_p = 1/2 - alpha_p (w_p^2 + Sigma_pp) / 2 - 1/2 sum_n <S_n, dB_n>

    with S_n = Phi_n Sigma Phi_n^T (O x O, Phi_n the activations' rows of
    x_n) and dB_n the change of B_n along da (a central difference of the
    likelihood's curvature, ``CURVATURE_STEP``). The first two terms alone
    are the effective problem's (MacKay's fixed point (7.116)); the last is
    what it leaves out: the curvature moving with the mode.
    """
    P, O = alpha.size, mode.Y.shape[1]
    if P == 0:
        return np.zeros(0)
    Sigma = covariance_from_factor(mode.R)  # (7.113)
    a = kept_activations(Phi_a, output, mode.w, O)
    dW = Sigma * (-alpha * mode.w)[None, :]  # column p: dw* / d ln alpha_p
    dA = np.empty((Phi_a.shape[0], P, O))  # (n, p, k): da_nk / d ln alpha_p
    for k in range(O):
        rk = output == k
        dA[:, :, k] = Phi_a[:, rk] @ dW[rk]
    moved = np.einsum("nkj,npkj->p", _spread(Phi_a, output, Sigma, O), _curvature_change(likelihood, a, dA))
    return 0.5 - 0.5 * alpha * (mode.w**2 + np.diag(Sigma)) - 0.5 * moved


def addition_correction(likelihood: Likelihood, project, Phi_a: Array, output: Index, mode: Laplace) -> Array:
    """c (M, O) such that adding pair (column i, output k) with a large alpha_i changes (7.114) by
    (Q^2 - S - Q c) / (2 alpha_i) + O(alpha_i^-2), S and Q the effective problem's factors; ``project(V)`` is
    Phi^T V over the candidate columns.

    The new weight starts at w_i = Q / alpha_i and the kept ones move by
    -Sigma g w_i (g = Phi_a^T B phi_i), so the activations move by r w_i
    with r = e_k phi_i - Phi_a Sigma g; ln |H| then gains ln(alpha_i + S)
    and tr(Sigma Phi^T dB Phi) = sum_n <S_n, dB_n>, which the effective
    problem leaves out. With v_nl = <S_n, dB_n / da_nl> that last term is
    c Q / alpha_i, c = Phi^T (v - B z) with z the activations of Sigma u,
    u_p = sum_n v_{n, o_p} Phi_np. So Q^2 - S - Q c > 0 is the exact test
    of Result 7.18 for (7.114) at alpha_i = inf.
    """
    N, O = mode.Y.shape
    a = kept_activations(Phi_a, output, mode.w, O)
    Sigma = covariance_from_factor(mode.R) if output.size else np.zeros((0, 0))
    S = _spread(Phi_a, output, Sigma, O)
    unit = np.broadcast_to(np.eye(O)[None, :, :], (N, O, O))  # da_nl = 1 for each output l in turn
    v = np.einsum("nkj,nlkj->nl", S, _curvature_change(likelihood, a, unit))
    u = np.einsum("np,np->p", Phi_a, v[:, output])
    z = kept_activations(Phi_a, output, Sigma @ u, O) if output.size else np.zeros((N, O))
    return project(v - np.einsum("nkl,nl->nk", mode.Bmat, z))


@dataclass(frozen=True)
class Effective:
    """The effective problem (7.117)-(7.119) over every pair j = i O + k, in the regression's terms.

    With beta I replaced by B: ``G`` = Phi^T B Phi_a against the included
    pairs (n_pairs, P), ``norms`` = phi_j^T B phi_j, ``b`` = Phi^T B t_hat and
    ``tt`` = t_hat^T B t_hat, so that (7.106)-(7.107) with beta = 1 give
    S_j = phi_j^T B phi_j - g_j^T Sigma g_j and Q_j = phi_j^T (t - y).
    """

    G: Array
    norms: Array
    b: Array
    tt: float


def effective_problem(likelihood: Likelihood, Phi: Array, Phi2: Array, basis: Index, output: Index, T: Array,
                      mode: Laplace) -> Effective:
    """Phi^T B Phi_a, diag(Phi^T B Phi), Phi^T B t_hat and t_hat^T B t_hat at the mode (7.117)-(7.119)."""
    O = T.shape[1]
    r = likelihood.residual(T, mode.Y)  # t - y at the mode
    norms = np.stack([Phi2.T @ mode.Bmat[:, k, k] for k in range(O)], axis=1).ravel()  # phi_i^T B_kk phi_i
    G = np.empty((Phi.shape[1] * O, basis.size))
    Phi_a = Phi[:, basis]
    for k in range(O):
        G[k::O] = Phi.T @ (Phi_a * mode.Bmat[:, k, output])  # rows (i, k): phi_i^T B_{k o_p} phi_p
    Phi_w = activations(Phi, basis, output, mode.w, O)
    b = G @ mode.w + (Phi.T @ r).ravel()  # Phi^T B t_hat = Phi^T B Phi w* + Phi^T (t - y)  (7.117)
    t_hat = Phi_w + likelihood.newton_offset(T, mode.Y)  # (7.117)
    tt = float(np.einsum("nk,nkj,nj->", t_hat, mode.Bmat, t_hat))
    return Effective(G=G, norms=norms, b=b, tt=tt)


def curvature_roots(Bmat: Array) -> tuple[Array, Array]:
    """B_n^(1/2) and its pseudo-inverse B_n^(+1/2) for every n, both (N, O, O).

    One output: sqrt(b_n) and 1 / sqrt(b_n) (0 where b_n = 0, a saturated
    mean). Several: from the eigenvectors of each block, eigenvalues below
    ``NULL_SHARE`` of the largest taken as 0 (the softmax's B_n is singular).
    """
    if Bmat.shape[1] == 1:
        root = np.sqrt(np.maximum(Bmat, 0.0))
        return root, np.divide(1.0, root, out=np.zeros_like(root), where=root > 0.0)
    lam, V = np.linalg.eigh(Bmat)
    keep = lam > NULL_SHARE * np.maximum(lam[:, -1:], 0.0)
    sqrt_lam = np.sqrt(np.where(keep, lam, 0.0))
    inv_sqrt = np.divide(1.0, sqrt_lam, out=np.zeros_like(sqrt_lam), where=keep)
    return (np.einsum("nij,nj,nkj->nik", V, sqrt_lam, V), np.einsum("nij,nj,nkj->nik", V, inv_sqrt, V))


def whitened_problem(likelihood: Likelihood, Phi: Array, basis: Index, output: Index, T: Array,
                     mode: Laplace) -> tuple[Array | None, Array, Array]:
    """The effective problem (7.117)-(7.119) as a regression with unit noise: (B^(1/2) Phi, B^(1/2) t_hat).

    With noise covariance B^-1 (7.119), t_hat ~ N(Phi w, B^-1) is
    B^(1/2) t_hat ~ N(B^(1/2) Phi w, I): Algorithm 7.2 of the regression at
    beta = 1 on the whitened columns. The columns are the pairs j = i O + k
    (row n O + l holds (B_n^(1/2))_lk phi_i(x_n)); the targets are
    B^(1/2) Phi w* + B^(+1/2) (t - y), which is B^(1/2) t_hat (7.117) as
    t - y lies in the range of B. Returns (B^(1/2) Phi, B^(1/2) t_hat, B^(1/2)):
    arrays (N O, M O), (N O,) and (N, O, O); for one output the first is
    None (it is sqrt(b_n) Phi, see ``WeightedDesign``).
    """
    N, O = T.shape
    a = activations(Phi, basis, output, mode.w, O)
    r = likelihood.residual(T, mode.Y)
    root, inv_root = curvature_roots(mode.Bmat)
    t_white = np.einsum("nlk,nk->nl", root, a) + np.einsum("nlk,nk->nl", inv_root, r)  # B^(1/2) t_hat (7.117)
    if O == 1:
        return None, t_white[:, 0], root
    Phi_white = np.einsum("nlk,ni->nlik", root, Phi).reshape(N * O, Phi.shape[1] * O)
    return Phi_white, t_white.ravel(), root
