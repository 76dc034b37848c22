"""The relevance vector machine (section 7.2): regression and classification.

Regression (section 7.2.1). t = Phi w + noise, noise ~ N(0, beta^-1 I), with
the ARD prior w_i ~ N(0, alpha_i^-1) (7.80). The hyperparameters maximise the
log evidence (7.85)

    ln p(t | alpha, beta) = -1/2 { N ln 2pi + ln|C| + t^T C^-1 t },
    C = beta^-1 I + Phi A^-1 Phi^T                                   (7.86)

by one of three methods:

``"fast"``    Algorithm 7.2 (Tipping and Faul, 2003): one alpha_i at a time,
              each step the exact maximiser (7.101) of lambda(alpha_i) (7.97)
              from q_i, s_i (7.104)-(7.107), with rank-one updates of Sigma
              and m (gap 7.7); see ``_rvm_fast``. It starts from the empty
              model and never decreases the evidence (with a flat prior).
``"mackay"``  all alpha_i at once by (7.87)-(7.89) (Result 7.14).
``"em"``      the EM updates of gap 7.6.

Functions with alpha_i > ``alpha_max`` are pruned (alpha_i = inf). Gamma
hyperpriors (Exercise 7.13) are optional; the default is flat.

Classification (section 7.2.3) is in ``_rvm_laplace``: the Laplace
approximation with IRLS for the mode (7.109)-(7.113), the updates (7.116), the
fast algorithm on the effective targets (7.117)-(7.119), and the softmax model
(7.120)-(7.122) for K > 2 classes.

Units. The solver works with targets of unit variance (t / std t) and columns
of unit mean square (phi_i sqrt(N) / ||phi_i||); the evidence is invariant to
column scaling and shifts by -N ln std(t) under the target scaling, so every
threshold (``alpha_max``, the noise floor) is dimensionless, and results are
mapped back to the caller's units before they are returned.
"""

from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from .._threads import limit_blas

from .._validation import check_matrix, check_param, check_real_targets, check_same_length, fail
from ..errors import ConvergenceWarning, ValidationError
from ._rvm_fast import FastOptions, fast_regression
from ._rvm_iterative import IterativeOptions, iterative_regression
from ._rvm_laplace import ClassOptions, classify
from ._rvm_math import Hyperprior, gamma_of, log_evidence_star, posterior
from .rvm_design import Design, DenseDesign, Scaled, WithBias, as_design

__all__ = [
    "RVMRegression",
    "RVMClassification",
    "AllPrunedWarning",
    "rvm_regression",
    "rvm_classification",
    "predictive_distribution",
    "moderated_probabilities",
    "METHODS",
]

Array = NDArray[np.float64]
IntArray = NDArray[np.intp]
Method = Literal["fast", "mackay", "em"]
METHODS = ("fast", "mackay", "em")
#: Iteration caps when ``max_iter`` is None (the fast method's grows with the basis).
DEFAULT_MAX_ITER = {"fast": 10_000, "mackay": 2_000, "em": 20_000}
FAST_ITER_PER_BASIS = 10
#: Initial noise standard deviation, as a fraction of std(t) (Tipping and Faul's choice).
INITIAL_NOISE_FRACTION = 0.1
#: Initial alpha (solver units) of every function for MacKay and EM.
ALPHA_INIT = 1.0
#: Default ``sweep_tol`` per training point (nats).
SWEEP_TOL_PER_SAMPLE = 1e-3
#: Up to this many basis functions, MacKay and EM run with one BLAS thread.
SMALL_BASIS = 512


class AllPrunedWarning(UserWarning):
    """Every basis function was pruned; the model keeps the bias alone (if any)."""


def _frozen(a: ArrayLike) -> NDArray:
    out = np.array(a, copy=True)
    out.flags.writeable = False
    return out


# ---------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RVMRegression:
    """A fitted regression RVM, in the caller's units.

    The kept basis functions are, in this order, the bias (when
    ``bias_used``) and the columns ``relevance`` of Phi; ``alpha``, ``mean``,
    ``covariance`` and ``gamma`` follow that order.

    Attributes
    ----------
    relevance : int array (R,)
        Indices of the kept columns of Phi (the bias is reported apart).
    bias_used : bool
        Whether the constant basis function is kept.
    alpha : array (K,), K = R + bias_used
        Precisions of the kept weights.
    beta : float
        Noise precision.
    mean, covariance : arrays (K,), (K, K)
        Posterior N(w | m, Sigma) of the kept weights, (7.82)-(7.83).
    gamma : array (K,)
        gamma_i = 1 - alpha_i Sigma_ii (7.89).
    log_evidence : array (n_steps,)
        (7.85), constants included: the starting point, then the value after
        each iteration (fast method: after each step taken; an escape attempt
        adds one entry, its end point, and only when it is kept, so the fast
        history never decreases; under a Gamma hyperprior on alpha the steps
        raise the evidence plus the prior, and the evidence alone may fall).
    iterations : int
    converged : bool
    method : str
    all_pruned : bool
        True when the evidence pruned every function and the bias was kept
        anyway (with alpha = alpha_max) so that the model is not empty.
    sweeps : int
        Full passes over the basis made by the fast method outside its pool.
    """

    relevance: IntArray
    bias_used: bool
    alpha: Array
    beta: float
    mean: Array
    covariance: Array
    gamma: Array
    log_evidence: Array
    iterations: int
    converged: bool
    method: str
    all_pruned: bool = False
    sweeps: int = 0

    @property
    def bias(self) -> float:
        """Posterior mean of the bias weight (0 when it is not used)."""
        return float(self.mean[0]) if self.bias_used else 0.0

    @property
    def weights(self) -> Array:
        """Posterior means of the weights of the columns ``relevance``, (R,)."""
        return self.mean[int(self.bias_used) :]

    def predict(self, Phi: ArrayLike, return_std: bool = False) -> Array | tuple[Array, Array]:
        """Predictive mean (7.90) (and standard deviation (7.91)) at new rows of Phi.

        Parameters
        ----------
        Phi : array (n_test, M)
            Design rows of the test points, all M columns of the training Phi.
        """
        Phi = check_matrix(Phi, "Phi")
        mean, var = predictive_distribution(self, Phi[:, self.relevance])
        return (mean, np.sqrt(var)) if return_std else mean


def predictive_distribution(result: RVMRegression, Phi_relevant: ArrayLike) -> tuple[Array, Array]:
    """Mean and variance of p(t | x) (7.90)-(7.91) for many test points.

    Parameters
    ----------
    result : RVMRegression
    Phi_relevant : array (n_test, R)
        The test rows of the kept columns only (``Phi_test[:, result.relevance]``).

    Returns
    -------
    mean, variance : arrays (n_test,)
        m^T phi(x) and beta^-1 + phi(x)^T Sigma phi(x), computed row by row
        as sum((Phi Sigma) * Phi, axis=1): no n_test x n_test matrix.
    """
    Phi_k = _with_bias(np.asarray(Phi_relevant, dtype=np.float64), result.bias_used)
    mean = Phi_k @ result.mean  # (7.90)
    var = 1.0 / result.beta + np.einsum("ij,ij->i", Phi_k @ result.covariance, Phi_k)  # (7.91)
    return mean, var


def _with_bias(Phi: Array, bias: bool) -> Array:
    return np.column_stack([np.ones(Phi.shape[0]), Phi]) if bias else Phi


@dataclass(frozen=True)
class RVMClassification:
    """A fitted classification RVM (Laplace approximation).

    Outputs: one logistic output (K = 2 classes, t in {0, 1}, (7.108)) or K
    softmax outputs (K > 2, (7.121)). The kept basis functions are the bias
    (when ``bias_used``) and the columns ``relevance``, in that order; each
    output has its own precisions, and a function is kept when any output
    keeps it.

    Attributes
    ----------
    relevance : int array (R,)
    bias_used : bool
    n_classes : int
    alpha : array (B, O), B = R + bias_used, O = 1 (two classes) or K
        Precisions; inf where output o excludes function b.
    mean : array (B, O)
        Mode w* of the posterior (7.112); 0 where excluded.
    covariance : array (B O, B O)
        Laplace covariance (7.113) over vec(mean) in output-major order
        (index o B + b); rows and columns of excluded weights are 0.
    log_evidence : array
        Laplace approximation (7.114) of ln p(t | alpha) after each iteration.
    iterations, converged, method, all_pruned : as for ``RVMRegression``
    beta : float
        nan: there is no noise precision in the classification model.
    """

    relevance: IntArray
    bias_used: bool
    n_classes: int
    alpha: Array
    mean: Array
    covariance: Array
    log_evidence: Array
    iterations: int
    converged: bool
    method: str
    all_pruned: bool = False
    beta: float = float("nan")

    def latent(self, Phi_relevant: ArrayLike) -> tuple[Array, Array]:
        """Mean and variance of the activations a_o = w_o^T phi(x) under the Laplace posterior.

        Returns arrays (n_test, O): mu_o = phi^T w*_o and sigma_o^2 = phi^T Sigma_oo phi.
        """
        Phi_k = _with_bias(np.asarray(Phi_relevant, dtype=np.float64), self.bias_used)
        B, O = self.mean.shape
        mu = Phi_k @ self.mean
        var = np.empty_like(mu)
        for o in range(O):
            block = self.covariance[o * B : (o + 1) * B, o * B : (o + 1) * B]
            var[:, o] = np.einsum("ij,ij->i", Phi_k @ block, Phi_k)
        return mu, var

    def predict_proba(self, Phi_relevant: ArrayLike) -> Array:
        """Class probabilities (n_test, K) with the probit-moderated output; see ``moderated_probabilities``."""
        mu, var = self.latent(Phi_relevant)
        return moderated_probabilities(mu, var)


def moderated_probabilities(mu: Array, var: Array) -> Array:
    """Predictive class probabilities from the Gaussian activations, (n, K).

    Two classes (one output): p(C_1 | x) = sigma(kappa(s^2) mu) with
    kappa(s^2) = (1 + pi s^2 / 8)^(-1/2), the probit approximation to the
    moderated output (Bishop 4.153-4.155). K classes: softmax of
    kappa(s_k^2) mu_k, a documented approximation (it moderates each
    activation by its own variance and ignores the covariances between
    classes; exact in neither the logistic nor the softmax case).
    """
    z = moderated_logits(mu, var)
    if z.shape[1] == 1:
        p1 = 1.0 / (1.0 + np.exp(-z[:, 0]))
        return np.column_stack([1.0 - p1, p1])
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def moderated_logits(mu: Array, var: Array) -> Array:
    """kappa(sigma^2) mu with kappa(s^2) = (1 + pi s^2 / 8)^(-1/2) (4.154)."""
    return mu / np.sqrt(1.0 + np.pi * var / 8.0)


# ---------------------------------------------------------------------------
# validation and units
# ---------------------------------------------------------------------------


def _check_method(method: object) -> str:
    if method not in METHODS:
        raise fail("method", f"one of {list(METHODS)}", method)
    return str(method)


def _check_hyperprior(hyperprior: object) -> Hyperprior:
    if hyperprior is None:
        return Hyperprior()
    if isinstance(hyperprior, Hyperprior):
        values = (hyperprior.a, hyperprior.b, hyperprior.c, hyperprior.d)
    else:
        try:
            values = tuple(float(v) for v in hyperprior)  # type: ignore[union-attr]
        except (TypeError, ValueError) as exc:
            raise fail("hyperprior", "None or a tuple (a, b, c, d)", hyperprior) from exc
    ok = (
        len(values) == 4
        and all(math.isfinite(v) for v in values)
        and values[0] >= 1.0
        and values[2] >= 1.0
        and values[1] >= 0.0
        and values[3] >= 0.0
    )
    if not ok:
        raise fail(
            "hyperprior",
            "None or (a, b, c, d) for Gam(beta | a, b), Gam(alpha | c, d) with a, c >= 1 and b, d >= 0",
            hyperprior,
        )
    return Hyperprior(*values)


def _check_design(Phi: ArrayLike | Design) -> Design:
    if isinstance(Phi, np.ndarray) or not isinstance(Phi, Design):
        return DenseDesign(check_matrix(Phi, "Phi"))
    return as_design(Phi)


def _check_common(
    alpha_max: object, tol: object, max_iter: object, method: str, n_basis: int
) -> tuple[float, float, int]:
    alpha_max = float(check_param("alpha_max", alpha_max, "C"))
    tol = float(check_param("tol", tol))
    if max_iter is None:
        extra = FAST_ITER_PER_BASIS * n_basis if method == "fast" else 0
        return alpha_max, tol, max(DEFAULT_MAX_ITER[method], extra)
    return alpha_max, tol, int(check_param("max_iter", max_iter))


@dataclass(frozen=True)
class _Units:
    """Column scales c_i (phi_i -> c_i phi_i) and the target scale (t -> t / t_scale)."""

    scale: Array  # (n_basis,), 0 for unusable (zero) columns
    t_scale: float

    @property
    def usable(self) -> IntArray:
        return np.flatnonzero(self.scale > 0.0)


def _target_scale(t: Array) -> float:
    sd = float(np.std(t))
    if sd > 0.0:
        return sd
    return float(np.abs(t).max()) or 1.0


def _column_scale(norms: Array, N: int) -> Array:
    """sqrt(N) / ||phi_i||: columns of unit mean square; 0 for columns that are zero."""
    scale = np.zeros_like(norms)
    ok = np.isfinite(norms) & (norms > 0.0)
    scale[ok] = np.sqrt(N / norms[ok])
    return scale


# ---------------------------------------------------------------------------
# regression
# ---------------------------------------------------------------------------


def rvm_regression(
    Phi: ArrayLike | Design,
    t: ArrayLike,
    method: Method = "fast",
    *,
    bias: bool = True,
    alpha_max: float = 1e9,
    tol: float = 1e-3,
    max_iter: int | None = None,
    beta_init: float | None = None,
    noise_floor: float = 1e-6,
    hyperprior: tuple[float, float, float, float] | Hyperprior | None = None,
    pool_size: int = 2000,
    beta_tol: float = 1e-2,
    sweep_tol: float | None = None,
    restarts: int = 5,
) -> RVMRegression:
    """Fit the regression RVM by maximising the evidence (7.85).

    Parameters
    ----------
    Phi : array (N, M) or Design
        Design matrix, Phi_ni = phi_i(x_n) (for the RVM proper, k(x_n, x_i),
        (7.78)); a ``rvm_design.KernelDesign`` computes kernel columns on
        demand so that the fast method never stores N x N.
    t : array (N,)
        Real targets.
    method : {"fast", "mackay", "em"}
    bias : bool
        Add the constant basis function (reported apart from ``relevance``).
    alpha_max : float
        Pruning threshold on alpha_i, in units where t has unit variance and
        every column unit mean square.
    tol : float
        Convergence tolerance in nats: the fast method stops when no single
        step can raise the log evidence by more than ``tol`` (and ln beta
        moves by less than ``beta_tol``); MacKay and EM stop when the
        objective changes by less than ``tol`` between iterations.
    max_iter : int or None
        Iteration cap (None: max(10,000, 10 M) fast, 2,000 MacKay, 20,000 EM).
    beta_init : float or None
        Starting noise precision (None: noise std = 0.1 std(t)).
    noise_floor : float
        Lower bound on the noise variance beta^-1, relative to var(t).
    hyperprior : None or (a, b, c, d)
        Gam(beta | a, b) and Gam(alpha_i | c, d) of Exercise 7.13, in the
        caller's units; None is flat (a = c = 1, b = d = 0). As Gamma
        densities are not scale-invariant, a non-flat hyperprior makes the
        solver work in the caller's units (no rescaling; ``alpha_max`` and
        ``noise_floor`` then refer to the caller's units too).
    pool_size : int
        Fast method: candidates whose Gram matrix is held in memory
        (pool_size^2 values); the whole basis when it has fewer functions.
    beta_tol : float
        Fast method: before each step the (7.88) estimate of beta is computed
        from Sigma and m; beta is re-estimated (and Sigma, m, S, Q recomputed
        from a Cholesky factor; rank-one updates in between) only when that
        estimate would move ln beta by more than ``beta_tol``, and then when
        the move's estimated gain outweighs the best alpha step's by the
        relative cost of a re-estimation. Also the convergence tolerance on
        ln beta.
    sweep_tol : float or None
        Fast method with a pool smaller than the basis: after the pool
        converges, one pass over the whole basis computes the exact S_i, Q_i
        of every function outside it, and those that would raise the evidence
        by more than ``sweep_tol`` nats (None: 1e-3 N, at least ``tol``) are
        brought into the pool. Each pass costs an N x N kernel evaluation, so
        this threshold trades the last fractions of a nat for minutes.
    restarts : int
        Fast method: attempts to leave a local maximum where the noise
        estimate is too high (beta doubled and held while the alpha steps
        converge, then released; kept only if the evidence rises). Escapes
        stop at the first one that raises the log evidence by less than
        1 nat. 0 gives the plain Algorithm 7.2.

    Returns
    -------
    RVMRegression

    Warns
    -----
    ConvergenceWarning
        When ``max_iter`` is reached before ``tol``.
    AllPrunedWarning
        When every basis function is pruned.
    """
    method = _check_method(method)
    design = _check_design(Phi)
    t = check_real_targets(t, "t")
    N = design.shape[0]
    check_same_length(np.empty((N, 0)), t, "Phi", "t")
    alpha_max, tol, max_iter = _check_common(alpha_max, tol, max_iter, method, design.shape[1])
    prior = _check_hyperprior(hyperprior)
    problem = _scaled_problem(design, t, bias, prior, noise_floor, beta_init)
    if method == "fast":
        opts = FastOptions(
            tol,
            max_iter,
            alpha_max,
            problem.beta_max,
            int(check_param("pool_size", pool_size, "max_iter")),
            float(check_param("beta_tol", beta_tol, "tol")),
            sweep_tol=_check_sweep_tol(sweep_tol, N),
            restarts=_check_restarts(restarts),
            prior=prior,
        )
        run = _run_fast(problem, opts)
    else:
        run = _run_iterative(problem, IterativeOptions(
            method, tol, max_iter, alpha_max, problem.beta_max, ALPHA_INIT, prior))
    if not run.converged:
        warnings.warn(
            f"rvm_regression (method={method!r}) stopped at max_iter={max_iter} iterations "
            f"before reaching tol={tol:g}",
            ConvergenceWarning,
            stacklevel=2,
        )
    with limit_blas(1):  # (R x R) matrices: one thread is fastest
        return _regression_result(problem, run, method, alpha_max)


def _check_sweep_tol(sweep_tol: float | None, N: int) -> float:
    if sweep_tol is None:
        return SWEEP_TOL_PER_SAMPLE * N
    return float(check_param("sweep_tol", sweep_tol, "psd_tol"))


def _check_restarts(restarts: object) -> int:
    if isinstance(restarts, bool) or not isinstance(restarts, numbers.Integral) or restarts < 0:
        raise fail("restarts", "a non-negative integer", restarts)
    return int(restarts)


@dataclass(frozen=True)
class _Problem:
    """The regression problem in the solver's units."""

    design: Design  # scaled, with the bias column first when ``bias``
    t: Array  # t / t_scale
    PhiTt: Array  # Phi^T t, every column
    norms: Array  # ||phi_i||^2, every column
    units: _Units
    bias: bool
    beta0: float
    beta_max: float


def _scaled_problem(design, t, bias, prior, noise_floor, beta_init) -> _Problem:
    """Targets of unit variance, columns of unit mean square (flat prior), one pass over Phi."""
    N = t.shape[0]
    full = WithBias(design) if bias else design
    t_scale = _target_scale(t) if prior.flat else 1.0  # Gamma densities are not scale-invariant
    t_s = t / t_scale
    PhiTt, norms = full.moments(t_s)
    scale = _column_scale(norms, N) if prior.flat else (norms > 0).astype(np.float64)
    beta_max = 1.0 / float(check_param("noise_floor", noise_floor, "C"))
    beta0 = min(_initial_beta(beta_init, t_scale), beta_max)
    return _Problem(Scaled(full, scale), t_s, PhiTt * scale, norms * scale**2, _Units(scale, t_scale),
                    bool(bias), beta0, beta_max)


@dataclass(frozen=True)
class _RunResult:
    active: IntArray  # columns of the scaled design
    alpha: Array
    beta: float
    history: Array
    iterations: int
    converged: bool
    sweeps: int


def _run_fast(problem: _Problem, opts: FastOptions) -> _RunResult:
    out = fast_regression(problem.design, problem.t, problem.PhiTt, problem.norms,
                          problem.units.usable, problem.beta0, opts)
    return _RunResult(out.active, out.alpha, out.beta, out.log_evidence, out.iterations,
                      out.converged, out.sweeps)


def _run_iterative(problem: _Problem, opts: IterativeOptions) -> _RunResult:
    usable = problem.units.usable
    Phi_u = problem.design.columns(usable)
    threads = 1 if usable.size <= SMALL_BASIS else None  # small matrices: one BLAS thread
    with limit_blas(threads):
        out = iterative_regression(Phi_u.T @ Phi_u, problem.PhiTt[usable], float(problem.t @ problem.t),
                                   problem.t.shape[0], problem.beta0, opts)
    return _RunResult(usable[out.active], out.alpha, out.beta, out.log_evidence, out.iterations,
                      out.converged, 0)


def _initial_beta(beta_init: float | None, t_scale: float) -> float:
    if beta_init is None:
        return 1.0 / INITIAL_NOISE_FRACTION**2
    return float(check_param("beta_init", beta_init, "C")) * t_scale**2


def _regression_result(problem: _Problem, run: _RunResult, method: str, alpha_max: float) -> RVMRegression:
    """Final posterior from a fresh factorisation, mapped back to the caller's units."""
    order = np.argsort(run.active, kind="stable")
    active, alpha = np.asarray(run.active)[order], np.asarray(run.alpha)[order]
    all_pruned = active.size == 0
    if all_pruned:
        _warn_all_pruned(problem.bias)
        if problem.bias:
            active, alpha = np.array([0]), np.array([alpha_max])
    post, final = _final_posterior(problem, active, alpha, run.beta)
    history = np.append(np.asarray(run.history, dtype=np.float64)[:-1], final)
    units = problem.units
    shift = problem.t.shape[0] * math.log(units.t_scale)  # ln p(t) = ln p(t / s) - N ln s
    D = units.t_scale * units.scale[active]  # w_i (caller) = t_scale c_i w_i (solver)
    return RVMRegression(
        relevance=_frozen((active[active > 0] - 1 if problem.bias else active).astype(np.intp)),
        bias_used=bool(problem.bias and active.size and active[0] == 0),
        alpha=_frozen(alpha / D**2),
        beta=float(run.beta / units.t_scale**2),
        mean=_frozen(post.m * D),
        covariance=_frozen(post.Sigma * np.outer(D, D)),
        gamma=_frozen(gamma_of(alpha, np.diag(post.Sigma))),
        log_evidence=_frozen(history - shift),
        iterations=int(run.iterations),
        converged=bool(run.converged),
        method=method,
        all_pruned=all_pruned,
        sweeps=int(run.sweeps),
    )


def _final_posterior(problem: _Problem, active: IntArray, alpha: Array, beta: float):
    """Result 7.12 over the kept columns and the evidence (*) there (solver units)."""
    Phi_a = problem.design.columns(active)
    t = problem.t
    post = posterior(Phi_a.T @ Phi_a, Phi_a.T @ t, alpha, beta)
    if not active.size:
        return post, _empty_evidence(t, beta)
    E_D = float(np.sum((t - Phi_a @ post.m) ** 2))
    return post, log_evidence_star(t.shape[0], beta, alpha, post, E_D)


def _warn_all_pruned(bias: bool) -> None:
    warnings.warn(
        "every basis function was pruned"
        + ("; the model keeps the bias alone (alpha = alpha_max)" if bias else "; the model is empty"),
        AllPrunedWarning,
        stacklevel=4,
    )


def _empty_evidence(t_s: Array, beta: float) -> float:
    N = t_s.shape[0]
    return 0.5 * (N * math.log(beta) - N * math.log(2.0 * math.pi) - beta * float(t_s @ t_s))


# ---------------------------------------------------------------------------
# classification
# ---------------------------------------------------------------------------


def _check_class_targets(t: ArrayLike) -> tuple[IntArray, int]:
    """Integer labels 0..K-1 (K >= 2); {-1, +1} is read as {0, 1}."""
    v = check_real_targets(t, "t")
    labels = np.unique(v)
    if labels.size < 2:
        raise ValidationError(
            f"t must hold at least two classes; got 1 class (label {labels.tolist()})"
        )
    if labels.size == 2 and labels.tolist() == [-1.0, 1.0]:
        return (v > 0).astype(np.intp), 2
    K = labels.size
    if not np.array_equal(labels, np.arange(K)):
        raise fail("t", "class labels 0, ..., K-1 (or -1 and +1 for two classes)", labels[:10].tolist())
    return v.astype(np.intp), K


def rvm_classification(
    Phi: ArrayLike | Design,
    t: ArrayLike,
    method: Method = "fast",
    *,
    bias: bool = True,
    alpha_max: float = 1e9,
    tol: float = 1e-3,
    max_iter: int | None = None,
    max_newton: int = 50,
    newton_tol: float = 1e-10,
) -> RVMClassification:
    """Fit the classification RVM (Laplace approximation, section 7.2.3).

    Parameters
    ----------
    Phi : array (N, M) or Design
        Design matrix (materialised: classification stores N x M values).
    t : array (N,)
        Class labels 0..K-1 (two classes: {0, 1} as in the book, or {-1, +1}).
    method : {"fast", "mackay", "em"}
        ``"fast"``: Algorithm 7.2 on the effective targets (7.117) with B^-1
        as the noise covariance (7.119); ``"mackay"``: (7.116);
        ``"em"``: alpha_i = 1 / (w_i*^2 + Sigma_ii).
    bias, alpha_max, tol, max_iter : as for ``rvm_regression``
        (``tol`` applies to the Laplace evidence (7.114)).
    max_newton : int
        Cap on IRLS (Newton) steps per mode search.
    newton_tol : float
        IRLS stops when the Newton decrement (the rise of the log posterior
        (7.109) that a full step predicts) is below ``newton_tol`` times
        (1 + |log posterior|).

    Returns
    -------
    RVMClassification
    """
    method = _check_method(method)
    design = _check_design(Phi)
    labels, K = _check_class_targets(t)
    N = design.shape[0]
    check_same_length(np.empty((N, 0)), labels, "Phi", "t")
    alpha_max, tol, max_iter = _check_common(alpha_max, tol, max_iter, method, design.shape[1])
    max_newton = int(check_param("max_newton", max_newton, "max_iter"))
    newton_tol = float(check_param("newton_tol", newton_tol, "tol"))
    full = WithBias(design) if bias else design
    _, norms = full.moments(np.zeros(N))
    scale = _column_scale(norms, N)
    usable = np.flatnonzero(scale > 0.0)
    Phi_u = full.columns(usable) * scale[usable]
    T = np.eye(K)[labels][:, 1:] if K == 2 else np.eye(K)[labels]
    opts = ClassOptions(
        method, tol, max_iter, alpha_max, ALPHA_INIT, max_newton, newton_tol, keep_if_empty=0 if bias else None
    )
    with limit_blas(1):  # matrices of size MK: one thread is fastest
        out = classify(Phi_u, T, opts)
    if not out.converged:
        warnings.warn(
            f"rvm_classification (method={method!r}) stopped at max_iter={max_iter} iterations "
            f"before reaching tol={tol:g}",
            ConvergenceWarning,
            stacklevel=2,
        )
    if out.all_pruned:
        _warn_all_pruned(bias)
    return _classification_result(out, usable, scale, bias, K, method)


def _classification_result(out, usable, scale, bias, K, method) -> RVMClassification:
    """Map the solver's pairs (function, output) back to the caller's columns and units."""
    kept = np.unique(out.basis)  # positions in ``usable``
    basis = usable[kept]
    B, O = kept.size, out.n_outputs
    row = np.searchsorted(kept, out.basis)
    c = scale[basis]
    alpha = np.full((B, O), np.inf)
    mean = np.zeros((B, O))
    alpha[row, out.output] = out.alpha * 1.0 / c[row] ** 2  # alpha (caller) = alpha / c^2
    mean[row, out.output] = out.w * c[row]  # w (caller) = c w
    flat = out.output * B + row
    cov = np.zeros((B * O, B * O))
    cov[np.ix_(flat, flat)] = out.Sigma * np.outer(c[row], c[row])
    bias_used = bool(bias and B and basis[0] == 0)
    relevance = basis[basis > 0] - 1 if bias else basis
    return RVMClassification(
        relevance=_frozen(relevance.astype(np.intp)),
        bias_used=bias_used,
        n_classes=K,
        alpha=_frozen(alpha),
        mean=_frozen(mean),
        covariance=_frozen(cov),
        log_evidence=_frozen(out.log_evidence),
        iterations=int(out.iterations),
        converged=bool(out.converged),
        method=method,
        all_pruned=bool(out.all_pruned),
    )
