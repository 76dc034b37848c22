"""Re-estimation of all hyperparameters at once: MacKay's updates and EM, for every likelihood.

Both start with every basis function included and alternate

    posterior (7.82)-(7.83)  ->  new alpha and beta  ->  prune alpha_i > alpha_max

MacKay (Result 7.14):  alpha_i = gamma_i / m_i^2                         (7.87)
                       beta^-1 = ||t - Phi m||^2 / (N - sum gamma)       (7.88)
EM (gap 7.6):          alpha_i = 1 / (m_i^2 + Sigma_ii)
                       beta^-1 = (||t - Phi m||^2 + beta^-1 sum gamma) / N

and with Gamma hyperpriors (Exercise 7.13) the MacKay updates become
alpha_i = (gamma_i + 2(c - 1)) / (m_i^2 + 2d) and
beta = (N + 2(a - 1) - sum gamma) / (||t - Phi m||^2 + 2b); the EM updates
alpha_i = (2c - 1) / (m_i^2 + Sigma_ii + 2d) and
beta = (N + 2(a - 1)) / (||t - Phi m||^2 + beta^-1 sum gamma + 2b).
The run stops when the objective ((7.85) plus the log hyperpriors) changes by
less than ``tol`` (nats) between iterations. EM, whose irrelevant alphas grow
only linearly, also prunes the functions with q_i^2 <= s_i once it crawls
(``_hopeless``).

Non-conjugate likelihoods (``iterative_laplace``) alternate the Laplace mode
(7.110)-(7.113) with alpha_i = gamma_i / w_i*^2 (7.116) or the EM update
alpha_i = 1 / (w_i*^2 + Sigma_ii), and stop on the Laplace evidence (7.114). Everything is in the solver's units (see ``checks``); the design
is dense here (these methods cost O(M^3) per iteration anyway).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from ...errors import SolverError
from .laplace import Laplace, ModeOptions, find_mode, laplace_log_evidence
from .likelihood import Likelihood
from .posterior import (Hyperprior, Posterior, Whitened, covariance_from_factor, gamma_of, included_sparsity_quality,
                        log_evidence_star, posterior, whitened_posterior)

__all__ = ["IterativeOptions", "IterativeOutcome", "Whitening", "iterative_regression", "LaplaceIterativeOptions",
           "LaplaceIterativeOutcome", "iterative_laplace"]

Array = NDArray[np.float64]
Index = NDArray[np.intp]
#: EM prunes the functions whose own optimum is alpha_i = inf once its objective changes by less than
#: CRAWL x tol per iteration (``_hopeless``); before that, joint pruning at the start would cut functions
#: that only look useless beside the others' initial alphas.
CRAWL = 100.0
#: At most this many updates of a run's continuation on the whitened columns (``iterative_regression``), each a
#: Householder QR of the (N + M) x M whitened design: on benchmarks/rvm_accuracy.py's raw cells (N = 250-354) the
#: continuations of the top-down starts converged in 34-172 (0.6-2.4 s each on a loaded two-core machine); EM's own
#: cap (20,000) would be minutes.
#: Its end is finished and certified by the last moves on that factorisation (``regression._settle``) either way.
WHITENED_MAX_ITER = 300


@dataclass(frozen=True)
class IterativeOptions:
    """Named thresholds of the MacKay and EM runs (solver units)."""

    method: str  # "mackay" or "em"
    tol: float
    max_iter: int
    alpha_max: float
    beta_max: float
    alpha_init: float | Array  # one value for every column, or one per column
    prior: Hyperprior
    hopeless_ratio: float = 0.0  # > 0: prune q_i^2 <= hopeless_ratio s_i from the first iteration (``_hopeless``)
    #: beta held at its initial value until the alpha updates converge (their objective changes by at most tol),
    #: then re-estimated with them: block coordinate ascent, alpha first (``iterative_regression``)
    hold_beta: bool = False


@dataclass(frozen=True)
class IterativeOutcome:
    active: Index  # positions in the design's columns
    alpha: Array
    beta: float
    log_evidence: Array
    iterations: int
    converged: bool
    broken: bool = False  # stopped where A + beta Phi^T Phi no longer factored (``_factored_posterior``)
    #: where the run went on, from the update that A + beta Phi^T Phi no longer factored at, on the whitened
    #: columns (``Whitening``): (active, alpha, beta) at its own stop, or None (it factored throughout, no
    #: columns were given, or the continuation kept no function)
    whitened_end: tuple[Index, Array, float] | None = None
    #: False where not even the start factored: then no state above is a factored one (the run's fields are
    #: its whitened continuation's)
    factored: bool = True


@dataclass(frozen=True)
class Whitening:
    """The columns themselves, for ``iterative_regression`` to go on where the Gram matrix's Cholesky
    factor fails: ``columns(positions)`` gives the design's columns (N, k) at those positions of the
    Gram matrix, ``t`` the targets (both in the solver's units)."""

    columns: Callable[[Index], Array]
    t: Array


def _misfit(PhiTPhi: Array, b: Array, tt: float, m: Array) -> float:
    """||t - Phi m||^2 from Phi^T Phi, Phi^T t and t^T t."""
    return max(tt - 2.0 * float(m @ b) + float(m @ PhiTPhi @ m), 0.0)


def new_hyperparameters(
    post: Posterior, alpha: Array, beta: float, E_D: float, N: int, opts: IterativeOptions
) -> tuple[Array, float]:
    """One MacKay or EM update of (alpha, beta)."""
    prior, m2, Sigma_ii = opts.prior, post.m**2, post.Sigma_diag
    gamma = gamma_of(alpha, Sigma_ii)  # (7.89)
    with np.errstate(divide="ignore", invalid="ignore"):
        if opts.method == "mackay":
            alpha_new = (gamma + 2.0 * (prior.c - 1.0)) / (m2 + 2.0 * prior.d)  # (7.87), Ex. 7.13
            beta_new = (N + 2.0 * (prior.a - 1.0) - gamma.sum()) / (E_D + 2.0 * prior.b)  # (7.88)
        else:
            alpha_new = (2.0 * prior.c - 1.0) / (m2 + Sigma_ii + 2.0 * prior.d)  # EM, gap 7.6
            beta_new = (N + 2.0 * (prior.a - 1.0)) / (E_D + gamma.sum() / beta + 2.0 * prior.b)
    alpha_new = np.where(np.isfinite(alpha_new) & (alpha_new > 0.0), alpha_new, np.inf)
    if not (math.isfinite(beta_new) and beta_new > 0.0):
        beta_new = opts.beta_max
    return alpha_new, min(beta_new, opts.beta_max)


def _hopeless(alpha: Array, Sigma_diag: Array, m: Array, ratio: float = 1.0) -> NDArray[np.bool_]:
    """The included functions whose own optimum is alpha_i = inf: q_i^2 <= s_i (Result 7.18), or, with
    ``ratio`` < 1, those clearly so: q_i^2 <= ratio s_i.

    EM's update raises an irrelevant alpha_i by about s_i per iteration (it
    tends to alpha_i + s_i), so it would take ~alpha_max / s_i iterations to
    reach the pruning threshold, and EM kept every function. Once EM crawls
    (its objective changes by less than ``CRAWL`` tol per iteration, so the
    alphas of the functions it keeps have settled) these are pruned instead:
    the deletion step of Algorithm 7.2 applied to all at once. The fast steps
    that finish every run test each pruned function again.
    """
    s, q = included_sparsity_quality(alpha, Sigma_diag, m)  # (7.104)-(7.105); at a Laplace mode: of
    # the effective problem (7.117)-(7.119), whose Gaussian posterior has the mode's w and Sigma
    return q * q <= ratio * s


def _principal(G: Array, kept: Index) -> Array:
    """The principal submatrix G[kept][:, kept] (``kept`` increasing): two contiguous gathers, rows then
    columns, where ``np.ix_`` indexes element by element (0.6 against 1.4 ms for 711 of 1,001)."""
    return G.take(kept, axis=0).take(kept, axis=1)


def iterative_regression(
    PhiTPhi: Array, b: Array, tt: float, N: int, beta: float, opts: IterativeOptions,
    whitening: Whitening | None = None,
) -> IterativeOutcome:
    """MacKay or EM over the M columns whose Gram matrix is ``PhiTPhi`` and Phi^T t is ``b``; with
    ``opts.hold_beta`` beta keeps its initial value until the alpha updates converge, and only then is
    re-estimated (7.88) with them.

    Where an update leaves A + beta Phi^T Phi beyond Cholesky (nearly collinear
    columns under a weak prior), the run stops at the last state that factored
    (``broken``); given the columns (``whitening``), the update also goes on
    with the posterior of their orthogonal factorisation (``posterior.Whitened``),
    which such columns cost no digits, to its own stop (``whitened_end``): a
    linear kernel on inputs offset by 1,000 broke at the third iteration (48.4
    nats, solver units), the steps from there fell to the bias alone (-170.3),
    and the run goes on to 167-169.
    """
    alpha = np.broadcast_to(np.asarray(opts.alpha_init, dtype=np.float64), b.shape).copy()
    method = opts.method if whitening is None else None   # a SolverError where the start cannot factor

    def factored(active: Index, alpha: Array, beta: float, G: Array, ba: Array, start: bool) -> Posterior | None:
        return _factored_posterior(G, ba, alpha, beta, method if start else None)

    out, failed = _iterate(factored, PhiTPhi, b, tt, N, np.arange(b.size), alpha, beta, opts, opts.hold_beta, 0)
    if failed is None or whitening is None:
        return out
    active, alpha, beta, G, ba, held = failed
    capped = replace(opts, max_iter=min(opts.max_iter, out.iterations + WHITENED_MAX_ITER))
    end, _ = _iterate(lambda active, alpha, beta, G, ba, start: _whitened_posterior(whitening, active, alpha, beta),
                      G, ba, tt, N, active, alpha, beta, capped, held, out.iterations)
    if not out.log_evidence.size:       # not even the start factored: the continuation alone, if it went anywhere
        if not end.log_evidence.size:
            _factored_posterior(G, ba, alpha, beta, opts.method)             # its SolverError names what to change
        return IterativeOutcome(end.active, end.alpha, end.beta, end.log_evidence, end.iterations, end.converged,
                                broken=end.broken, factored=False)
    kept = (end.active, end.alpha, end.beta) if end.active.size else None
    return IterativeOutcome(out.active, out.alpha, out.beta, out.log_evidence, out.iterations, out.converged,
                            broken=True, whitened_end=kept)


def _iterate(factor, G: Array, ba: Array, tt: float, N: int, active: Index, alpha: Array, beta: float,
             opts: IterativeOptions, held: bool, iterations: int) -> tuple[IterativeOutcome, tuple | None]:
    """The updates from (active, alpha, beta), the posterior of each state by ``factor`` (None where it fails;
    its last argument says whether the state is the start); the outcome and, where an update failed to factor,
    (active, alpha, beta, G, b, held) at that update."""
    history: list[float] = []
    converged, previous, failed = False, -math.inf, None
    last = None  # the last state whose posterior factored
    while iterations < opts.max_iter and active.size:
        post = factor(active, alpha, beta, G, ba, last is None)
        if post is None:  # the update left A + beta Phi^T Phi beyond Cholesky: back to the last state
            failed = (active, alpha, beta, G, ba, held)
            if last is not None:
                active, alpha, beta, G, ba = last
            break
        last = (active, alpha, beta, G, ba)
        if isinstance(post, Whitened):
            E_D, value = float(post.residual @ post.residual), post.evidence  # (7.85) on the orthogonal factor
        else:
            E_D = _misfit(G, ba, tt, post.m)
            value = log_evidence_star(N, beta, alpha, post, E_D)  # (7.85) by (*)
        objective = value + opts.prior.log_density(alpha, beta)
        history.append(value)
        change, previous = abs(objective - previous), objective
        if held and change <= opts.tol:       # the alphas have settled at the held beta: beta moves from here
            held = False
        elif change <= opts.tol:
            converged = True
            break
        crawling = opts.method == "em" and opts.prior.flat and change <= CRAWL * opts.tol
        ratio = 1.0 if crawling else opts.hopeless_ratio if opts.prior.flat else 0.0
        hopeless = _hopeless(alpha, post.Sigma_diag, post.m, ratio) if ratio else np.zeros(alpha.size, dtype=bool)
        alpha, beta_new = new_hyperparameters(post, alpha, beta, E_D, N, opts)
        beta = beta if held else beta_new
        keep = (alpha <= opts.alpha_max) & ~hopeless
        if not keep.all():  # gathered again only after a pruning, from the last (smaller) Gram matrix
            kept = np.flatnonzero(keep)
            active, alpha, G, ba = active[kept], alpha[kept], _principal(G, kept), ba[kept]
        iterations += 1
    if not active.size:
        # the last value recorded is of the model before its last function went (or none: no usable column),
        # not of the empty model returned: recorded, it kept the empty model at a beta never re-estimated
        # over the fast moves' finish (rvm_regression took the finish's -56.8 for worse than the 0.67 of a
        # model it no longer held, and returned -44,560 nats, 'converged'); with no column, an IndexError
        history.append(0.5 * (N * math.log(beta) - N * math.log(2.0 * math.pi) - beta * tt))  # (7.85), Phi empty
        converged = True
    outcome = IterativeOutcome(active=active, alpha=alpha, beta=beta, log_evidence=np.asarray(history),
                               iterations=iterations, converged=converged, broken=failed is not None)
    return outcome, failed


def _whitened_posterior(whitening: Whitening, active: Index, alpha: Array, beta: float) -> Whitened | None:
    """Result 7.12 and (7.85) on the orthogonal factorisation of the included columns, or None where even
    that has no finite answer (an alpha or beta that is not positive and finite)."""
    try:
        post = whitened_posterior(whitening.columns(active), whitening.t, alpha, beta)
    except (ValueError, np.linalg.LinAlgError):
        return None
    return post if math.isfinite(post.evidence) and np.all(np.isfinite(post.h)) else None


def _factored_posterior(G: Array, b: Array, alpha: Array, beta: float, first: str | None) -> Posterior | None:
    """Result 7.12 by the Cholesky factor of A + beta Phi^T Phi (7.83), or None where that matrix is not
    numerically positive definite after an update. At the start (``first``, the method's name) a SolverError
    that says what to change: the generic advice (lower alpha_max, raise noise_floor) does not apply there
    (fuzzed: a poly kernel under a Gamma hyperprior, whose fit works in the caller's units, Phi^T Phi ~ 1e28).

    MacKay's and EM's updates can drive alpha_i to ~1e-12 of beta ||phi_i||^2 on nearly collinear columns
    (wide kernels, targets whose offset is 1e6 times their spread), where the factor fails: fuzzed, RVR
    with method "em" or "mackay" raised SolverError on 6 of 500 small random problems that the fast
    method fits. The run then stops at the last state that factored and the fast steps finish from it.
    """
    try:
        return posterior(G, b, alpha, beta)
    except SolverError as exc:
        if first is None:
            return None
        raise SolverError(
            f"method={first!r} cannot start: with every alpha_i = {float(np.min(alpha)):.3g} (alpha_init, in the "
            f"units of alpha_max) and beta = {beta:.3g}, the posterior precision A + beta Phi^T Phi ({G.shape[0]} x "
            f"{G.shape[0]}) is not numerically positive definite (largest diagonal of Phi^T Phi: "
            f"{float(np.max(np.diag(G), initial=0.0)):.3g}); raise alpha_init, rescale Phi, or use method='fast'",
            status="cholesky", solver="rvm") from exc


@dataclass(frozen=True)
class LaplaceIterativeOptions:
    """Named thresholds of MacKay and EM under the Laplace approximation (solver units)."""

    method: str  # "mackay" or "em"
    tol: float
    max_iter: int
    alpha_max: float
    alpha_init: float | Array  # one value for every column, or one per column (of Phi)
    mode: ModeOptions


@dataclass(frozen=True)
class LaplaceIterativeOutcome:
    basis: Index  # column of each included pair
    output: Index  # output of each included pair
    alpha: Array
    mode: Laplace
    log_evidence: Array
    iterations: int
    converged: bool
    broken: bool = False  # stopped where the next mode search found no positive definite Hessian


def laplace_alpha(alpha: Array, Sigma_ii: Array, w: Array, method: str) -> Array:
    """(7.116) alpha_i = gamma_i / w_i*^2, or EM alpha_i = 1 / (w_i*^2 + Sigma_ii), at the mode w* (its
    covariance's diagonal Sigma_ii). Where gamma_i and w_i* are both 0 (a start at alpha_init = 1e300: the
    prior holds the weight at 0) (7.116) is 0/0, nan, which the caller prunes as the inf of w_i* = 0 alone;
    numpy's 'invalid value' RuntimeWarning reached the RVC's caller."""
    with np.errstate(divide="ignore", invalid="ignore"):
        if method == "mackay":
            return gamma_of(alpha, Sigma_ii) / w**2  # (7.116)
        return 1.0 / (w**2 + Sigma_ii)  # EM, gap 7.6 with the Laplace posterior


def iterative_laplace(likelihood: Likelihood, Phi: Array, T: Array,
                      opts: LaplaceIterativeOptions) -> LaplaceIterativeOutcome:
    """MacKay or EM over every pair (column of ``Phi``, output), pruning alpha_i > ``alpha_max``."""
    M, O = Phi.shape[1], T.shape[1]
    basis, output = np.repeat(np.arange(M), O), np.tile(np.arange(O), M)
    alpha = np.broadcast_to(np.asarray(opts.alpha_init, dtype=np.float64), (M,))[basis]  # a copy: per column
    w = np.zeros(basis.size)
    history: list[float] = []
    converged, iterations, broken = False, 0, False
    mode = find_mode(likelihood, Phi, basis, output, T, alpha, w, opts.mode)
    while iterations < opts.max_iter and basis.size:
        value = laplace_log_evidence(mode, alpha)  # (7.114)
        history.append(value)
        if len(history) > 1 and abs(value - history[-2]) <= opts.tol:
            converged = True
            break
        crawling = opts.method == "em" and len(history) > 1 and abs(value - history[-2]) <= CRAWL * opts.tol
        Sigma_ii = np.diag(covariance_from_factor(mode.R))  # (7.113), once for both uses
        hopeless = _hopeless(alpha, Sigma_ii, mode.w) if crawling else np.zeros(alpha.size, dtype=bool)
        alpha_old, alpha = alpha, laplace_alpha(alpha, Sigma_ii, mode.w, opts.method)
        keep = np.isfinite(alpha) & (alpha > 0.0) & (alpha <= opts.alpha_max) & ~hopeless
        last = (basis, output, alpha_old, mode)
        basis, output, alpha, w = basis[keep], output[keep], alpha[keep], mode.w[keep]
        try:
            mode = find_mode(likelihood, Phi, basis, output, T, alpha, w, opts.mode)
        except SolverError:  # the update left no positive definite Hessian: back to the last state (as
            basis, output, alpha, mode = last  # ``_factored_posterior``); the fast moves finish from it
            broken = True
            break
        iterations += 1
    return LaplaceIterativeOutcome(basis=basis, output=output, alpha=alpha, mode=mode,
                                   log_evidence=np.asarray(history), iterations=iterations,
                                   converged=converged or not basis.size, broken=broken)
