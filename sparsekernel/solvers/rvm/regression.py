"""The regression RVM (section 7.2.1): rvm_regression.

t = Phi w + noise, noise ~ N(0, beta^-1 I), with the ARD prior
w_i ~ N(0, alpha_i^-1) (7.80). The hyperparameters maximise the log evidence
(7.85)

    ln p(t | alpha, beta) = -1/2 { N ln 2pi + ln|C| + t^T C^-1 t },
    C = beta^-1 I + Phi A^-1 Phi^T                                   (7.86)

by one of three methods:

``"fast"``    Algorithm 7.2 (Tipping and Faul, 2003): one alpha_i at a time,
              each step the exact maximiser (7.101) of lambda(alpha_i) (7.97)
              from q_i, s_i (7.104)-(7.107), with rank-one updates of Sigma
              and m (gap 7.7); see ``sequential``. It starts from the empty
              model (and, on small bases, also from the full one, keeping
              the higher maximum) and no step decreases the evidence (with
              a flat prior).
``"mackay"``  all alpha_i at once by (7.87)-(7.89) (Result 7.14), ``reestimation``.
``"em"``      the EM updates of gap 7.6, ``reestimation``.

One definition of convergence for the three: no single alpha step (add,
re-estimate, delete; Result 7.18) nor the beta step gains more than ``tol``
nats, over every basis function. MacKay and EM stop by their own rule (the
objective changes by less than ``tol`` in an iteration) and then finish with
the fast steps from their point, which delete the functions still running
off to infinity and test the pruned ones again. The last test, and the last
few moves, are made on an orthogonal factorisation of the kept columns
(``_settle``, ``posterior.Whitened``), where the steps' own factor of
A + beta Phi^T Phi has lost digits (wide kernels on raw inputs); the result's
posterior and evidence come from it too.

Functions with alpha_i > ``alpha_max`` are pruned (alpha_i = inf). Gamma
hyperpriors (Exercise 7.13) are optional; the default is flat. Units: see
``checks``.
"""

from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..._threads import limit_blas
from ...validation import check_param, check_real_targets, check_same_length, fail
from ...errors import ConvergenceWarning, SolverError
from .checks import (
    ALPHA_INIT,
    Method,
    Units,
    check_bias,
    check_common,
    check_design,
    check_hyperprior,
    check_method,
    check_target_scale,
    column_scale,
    frozen,
    target_scale,
    warn_all_pruned,
)
from .certificate import add_row, beta_fixed_point, beta_optimum, factors_over, kept_gains, resolved_kept_sq
from .design import Design, Scaled, WithBias, gram_matrix
from .posterior import Hyperprior, Whitened, gamma_of, posterior, whitened_posterior
from .reestimation import IterativeOptions, Whitening, iterative_regression
from .results import RVMRegression
from .sequential import (CENTRED_BELOW, TOP_DOWN_GAIN, TOP_DOWN_SIZE, TOP_DOWN_WIDE_SIZE, FastOptions, centred_starts,
                         fast_regression)

__all__ = ["rvm_regression"]

Array = NDArray[np.float64]
IntArray = NDArray[np.intp]
#: Initial noise standard deviation, as a fraction of std(t) (Tipping and Faul's choice).
INITIAL_NOISE_FRACTION = 0.1
#: At most this many moves of ``_settle`` (each one orthogonal factorisation of the kept columns, N x M), fewer
#: where, at N M^2 multiply-adds each, they would cost more than SETTLE_WORK together, but at least SETTLE_MIN_ROUNDS
#: (``settle_budget``). On nearly collinear columns single-alpha moves crawl: friedman2 with raw inputs at N = 800
#: (gamma "scale") needed 255 (an addition of 274 nats the span test had refused, then 224 re-estimates), and the
#: fit ended unconverged at 50 with a move of 0.009 nats left; with them it is certified at -5098.0 (15 functions),
#: above MacKay's best start. Over 148 other fits (rvm_fuzz.py's seeds 4-5, 17 cells at N = 800) no settle took
#: more than 26 moves.
SETTLE_ROUNDS = 1000
SETTLE_MIN_ROUNDS = 50
SETTLE_WORK = 2e9
#: Default ``sweep_tol`` per training point (nats).
SWEEP_TOL_PER_SAMPLE = 1e-3
#: The fast method's alignment test (a cosine above this: a copy of an included column). With a flat prior
#: only copies to rounding (duplicated points); nearly parallel columns of a very wide kernel are real
#: functions (refusing them stopped friedman1 at gamma 1e-4 on 2 functions, 90 nats below).
ALIGN_MAX_FLAT = 1.0 - 1e-12
ALIGN_MAX_PRIOR = 1.0 - 1e-6
#: Up to this many basis functions MacKay and EM run with one BLAS thread, as the fast method's top-down
#: start does on the same bases: the same rounding as that start, and one answer whatever the threads (on
#: friedman1, N = 1,000, raw inputs, MacKay's ended with 60 functions on one thread and 61 on two, and two
#: were slower on a 2-core machine: 0.89 s against 0.53 s).
SMALL_BASIS = TOP_DOWN_WIDE_SIZE
#: Tipping's start (``raw_units_starts``) at these multiples of 1 / M^2 for t in units of std(t), two decades
#: apart around it. On 208 fuzzed cells (benchmarks/rvm_fuzz.py's sets, seeds 10-13; 31 more where every
#: variant interpolates) the fits lost, to the best variant of each cell, 41.8 nats in all (12 cells over
#: 1 nat, at most 8.2); with (1e-3, 1e-1, 10, 1e3) 39.8 (11); (1e-2, 1, 1e2) 50.0 (7, at most 14.6);
#: (1, 1e2, 1e4) 90.2 (11, at most 33.9); the one start in t's own units as before, 100.7 (16, at most 33.9).
#: Weaker priors reach the denser, higher maxima of wide kernels more often.
RAW_START_FACTORS = (1e-3, 1e-1, 10.0)


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
    alpha_init: float = ALPHA_INIT,
) -> RVMRegression:
    """Fit the regression RVM by maximising the evidence (7.85).

    Parameters
    ----------
    Phi : array (N, M) or Design
        Design matrix, Phi_ni = phi_i(x_n) (for the RVM proper, k(x_n, x_i),
        (7.78)); a ``design.KernelDesign`` computes kernel columns on
        demand so that the fast method never stores N x N.
    t : array (N,)
        Real targets, of standard deviation (max |t| when constant) in
        [1e-150, 1e150] (``checks.TARGET_SCALE_LIMIT``: its square and the
        noise precision must be representable doubles).
    method : {"fast", "mackay", "em"}
        Algorithm 7.2 (with the starts of ``restarts``), MacKay's re-estimation (7.87)-(7.88) or EM;
        under the flat prior MacKay and EM run twice, beta re-estimated from the first iteration and
        beta held until the alphas settle, and the higher (7.85) is kept.
    bias : bool
        Add the constant basis function (reported apart from ``relevance``).
    alpha_max : float
        Pruning threshold on alpha_i, in units where t has unit variance and
        every column unit mean square.
    tol : float
        Convergence tolerance in nats: the fast method stops when no single
        step can raise the log evidence by more than ``tol`` (and ln beta
        moves by less than ``beta_tol``); MacKay and EM iterate until the
        objective changes by less than ``tol`` between iterations, then
        finish with the fast steps to the same test. Every method's last
        test is made on an orthogonal factorisation of the kept columns
        (``posterior.Whitened``, the certificate's): no move of beta, of a
        kept alpha_i or a deletion, and no addition, gains more than ``tol``
        there (the last few such moves are taken there). A result that fails
        it, such as one whose remaining gains the fast method's numerical
        safeguards refused, is reported not converged (with a
        ConvergenceWarning).
    max_iter : int or None
        Iteration cap (None: max(10,000, 25 M) fast, 2,000 MacKay, 20,000 EM).
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
        A pool whose every member is in the model grows by what a sweep
        brings in.
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
        brought into the pool; when none would, those that would gain more
        than ``tol``, so the fit stops by the same rule as with a pool of the
        whole basis. A larger ``sweep_tol`` brings the large gains in first,
        in fewer passes (each a pass over the kernel); ``tol`` sets where the
        fit stops.
    restarts : int
        Fast method: attempts to leave a local maximum where the noise
        estimate is too high (beta doubled and held while the alpha steps
        converge, then released; kept only if the evidence rises). Escapes
        stop at the first one that raises the log evidence by less than
        1 nat. With restarts > 0 the fast method also tries a second start
        with beta held at a quarter of its initial value
        (``sequential.HOLD_FACTORS``; on bases of at most 1,500 functions a
        second one with the bias column out of its pool until its steps
        converge, ``sequential.withheld_start``), a joint MacKay polish and, on bases
        of at most 500 functions (``sequential.TOP_DOWN_SIZE``), twelve (or
        sixteen) starts from every function (MacKay's re-estimation from alpha_i = 1,
        1e-2, 1e-4 and 1e-6 on the solver's unit-norm columns and from Tipping's
        one alpha for the columns of Phi as given, for t in units of its
        standard deviation, at 1e-3, 0.1 and 10 times it, ``raw_units_starts``;
        MacKay's from 1, 1e-4 and 1e-6 with beta held until the alphas settle,
        and four more from the centred starts where some column is nearly
        constant beside the bias (``_centred``);
        EM's from alpha_i = 1, with beta re-estimated and with beta held; then
        the steps; on bases of up to 1,500 functions the start from 1e-4 alone),
        and keeps the highest evidence that is not at the noise floor, the
        starts compared by (7.85) recomputed (``posterior.Whitened``), beyond
        its estimated rounding. A start whose steps meet a posterior precision Cholesky cannot
        factor (nearly collinear columns) is dropped, the steps from the empty model too, and the fit
        goes on from the others (SolverError where none is left); a re-estimation whose update Cholesky
        cannot factor also goes on on the whitened columns, and the last moves on that factorisation
        finish from where it stops (``_settled_ends``). 0 gives the plain Algorithm 7.2.
    alpha_init : float
        MacKay and EM: the alpha_i every function starts from, in the units
        of ``alpha_max``. The evidence of wide kernels has several maxima and
        weaker starts (1e-4, 1e-6) can reach higher ones. Where some column
        (of unit mean square) is nearly constant beside the bias, its
        relative variance var(phi_i) / mean(phi_i^2) below 1e-5 (a
        dot-product kernel on inputs with a large common offset), they also
        run from the centred starts alpha_i = alpha_init x (0.1, 0.01, 1e-3,
        1e-4) x that ratio, beta held, and the result of higher (7.85) is
        kept (``sequential.centred_alphas``, ``ITERATIVE_CENTRED_BELOW``).
        The fast method ignores it (it tries such starts itself, the centred
        ones from alpha_init = 1 below a relative variance of 1e-2:
        ``restarts``).

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
    method = check_method(method)
    design = check_design(Phi)
    t = check_target_scale(check_real_targets(t, "t"), "t")
    N = design.shape[0]
    check_same_length(np.empty((N, 0)), t, "Phi", "t")
    alpha_max, tol, max_iter = check_common(alpha_max, tol, max_iter, method, design.shape[1])
    prior = check_hyperprior(hyperprior)
    alpha_init = float(check_param("alpha_init", alpha_init, "C"))
    problem = _scaled_problem(design, t, check_bias(bias), prior, noise_floor, beta_init)
    fast_max_iter = max_iter if method == "fast" else check_common(alpha_max, tol, None, "fast", design.shape[1])[2]
    opts = FastOptions(
        tol,
        fast_max_iter,
        alpha_max,
        problem.beta_max,
        int(check_param("pool_size", pool_size, "max_iter")),
        float(check_param("beta_tol", beta_tol, "tol")),
        sweep_tol=_check_sweep_tol(sweep_tol, N),
        restarts=_check_restarts(restarts),
        prior=prior,
        align_max=ALIGN_MAX_FLAT if prior.flat else ALIGN_MAX_PRIOR,
        raw_starts=raw_units_starts(problem, design, bias) if method == "fast" and prior.flat else (),
        centred_starts=(tuple(_centred(problem, np.arange(problem.design.shape[1]), ALPHA_INIT, CENTRED_BELOW))
                        if method == "fast" and prior.flat and problem.design.shape[1] <= TOP_DOWN_SIZE else ()),
    )
    if method == "fast":
        run = _run_fast(problem, opts)
    else:
        run = _run_iterative(problem, IterativeOptions(
            method, tol, max_iter, alpha_max, problem.beta_max, alpha_init, prior), opts)
    # the last moves factorise N x M kept columns, M small: one BLAS thread, as the steps (friedman2 with raw
    # inputs at N = 800: 255 moves took 54 s with two threads on a loaded two-core machine, 0.6 s with one)
    with limit_blas(1 if N <= SMALL_BASIS else None):
        ends = run.ends
        settled = _settle(problem, run, opts, max_iter) if prior.flat else None
        run, post = settled if settled is not None else (run, None)
        run, post = _settled_ends(problem, run, post, ends, opts, max_iter)
    if not run.converged:
        if run.undone:
            reason = ("stopped where a move of Algorithm 7.2 that should gain more than tol did not raise the "
                      "evidence recomputed on an orthogonal factorisation (rounding): not certified a maximum")
        elif run.refused > tol:
            reason = _refused_reason(run.refused, tol, prior.flat)
        elif run.left > tol:
            reason = (f"stopped when its last moves on the orthogonal factorisation (each confirmed by a new "
                      f"factorisation; their budget: regression.settle_budget) ran out, with a move of Algorithm 7.2 "
                      f"that would still "
                      f"gain {run.left:.3g} nats (> tol={tol:g}): not certified a maximum")
        elif run.broken:
            reason = ("stopped where the Cholesky factor of A + beta Phi^T Phi (7.83) failed (not numerically "
                      "positive definite) and the fast steps could not finish from its last factored state")
        elif run.unfinished:    # not max_iter: it converged by its own rule, in fewer iterations
            reason = (f"converged by its own rule in {run.iterations} iterations, but the fast steps that test "
                      f"its point (Result 7.18) failed or did not raise (7.85) plus the log hyperpriors from it, "
                      f"and under a hyperprior no last moves follow: not certified a maximum")
        else:
            reason = f"stopped at max_iter={max_iter} iterations before reaching tol={tol:g}"
        warnings.warn(f"rvm_regression (method={method!r}) {reason}", ConvergenceWarning, stacklevel=2)
    with limit_blas(1):  # (R x R) matrices: one thread is fastest
        return _regression_result(problem, run, method, alpha_max, post)


def _refused_reason(gain: float, tol: float, flat: bool) -> str:
    """The warning's words for an addition the steps refused. Under a Gamma prior on alpha the gain is of
    (7.97) + ln Gam(alpha | c, d), and no last moves follow the steps (``_settle`` takes the flat prior):
    the words said "q^2 > s, with a flat prior" and named a budget of last moves there too."""
    rule = "q^2 > s, with a flat prior" if flat else "whose (7.97) + ln Gam(alpha | c, d) would rise"
    why = ("it lies numerically in the span of the included ones or copies one, or the last moves' budget ran out"
           if flat else "it lies numerically in the span of the included ones or copies one; under a hyperprior "
                        "no last moves on an orthogonal factorisation follow the steps")
    return (f"stopped at a point that is not a stationary point of the evidence: an excluded function ({rule}) "
            f"would gain {gain:.3g} nats (> tol={tol:g}) but was not added ({why})")


def raw_units_starts(problem: _Problem, design: Design, bias: bool) -> tuple[Array, ...]:
    """alpha_i (solver units) of more top-down starts: one prior precision for the design's own columns.

    The solver's columns have unit mean square, so its top-down starts from
    one alpha for all (``sequential.TOP_DOWN_REGRESSION_ALPHAS``) give every column the
    same prior scale there. Tipping (2001), and sklearn-rvm after PRoNTO,
    start MacKay's re-estimation from alpha = 1 / M^2 for every column of
    Phi / c (c^2 the mean entry of Phi, the bias column left as it is): a
    prior that is weaker on the columns of small norm (points far from the
    others, under a kernel). The evidence of wide kernels has several maxima,
    and this start reaches higher ones on some data (Boston housing, friedman).
    Tipping's alpha is in the units of t, so the fit would depend on them
    (multiplying t by 1e3 moved the fast fit's maximum by up to 13 nats on
    the cells of benchmarks/rvm_accuracy.py); here t is in units of its own
    standard deviation, and the start is taken at 1e-3, 0.1 and 10 times
    that alpha (``RAW_START_FACTORS``: prior scales of about 32 M, 3.2 M and
    M / 3.2 times std(t) on Phi / c), so that the result does not depend on
    the units of t.
    A weight w on phi_i / c_i is w / (c_i s_i) on the solver's column
    s_i phi_i for the target t / t_scale, so alpha_i = (c_i s_i / M)^2 times a factor.
    No start (an empty tuple) when the basis is too large for top-down starts (no extra pass over Phi).
    """
    M = problem.design.shape[1]
    if M > TOP_DOWN_SIZE:
        return ()
    N = problem.t.shape[0]
    sums, norms = design.moments(np.ones(N))  # Phi^T 1 and ||phi_i||^2 of the caller's columns
    mean_entry = float(np.sum(sums)) / (N * sums.size)
    if not (math.isfinite(mean_entry) and mean_entry > 0.0):  # no positive mean: the mean square instead
        mean_entry = math.sqrt(float(np.sum(norms)) / (N * norms.size))
    c = np.full(M, math.sqrt(mean_entry) if mean_entry > 0.0 else 1.0)
    if bias:
        c[0] = 1.0
    alpha = (c * problem.units.scale / M) ** 2
    return tuple(factor * alpha for factor in RAW_START_FACTORS)


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
    units: Units
    bias: bool
    beta0: float
    beta_max: float


def _scaled_problem(design, t, bias, prior, noise_floor, beta_init) -> _Problem:
    """Targets of unit variance, columns of unit mean square (flat prior), one pass over Phi."""
    N = t.shape[0]
    full = WithBias(design) if bias else design
    t_scale = target_scale(t) if prior.flat else 1.0  # Gamma densities are not scale-invariant
    t_s = t / t_scale
    PhiTt, norms = full.moments(t_s)
    scale = column_scale(norms, N, bias) if prior.flat else (norms > 0).astype(np.float64)
    beta_max = 1.0 / float(check_param("noise_floor", noise_floor, "C"))
    beta0 = min(_initial_beta(beta_init, t_scale), beta_max)
    return _Problem(Scaled(full, scale), t_s, PhiTt * scale, norms * scale**2, Units(scale, t_scale),
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
    refused: float = 0.0  # the largest gain a safeguard refused at the end (nats)
    undone: bool = False  # a last move that did not raise the evidence was undone (``_settle``)
    left: float = 0.0  # the gain of the move ``_settle`` found when its moves (``settle_budget``) ran out (nats)
    broken: bool = False  # MacKay / EM stopped where A + beta Phi^T Phi no longer factored
    unfinished: bool = False  # MacKay / EM converged, but the fast steps could not finish from their point
    #: where top-down re-estimations on the whitened columns stopped (``FastOutcome.whitened_ends``)
    ends: tuple = ()


def _run_fast(problem: _Problem, opts: FastOptions) -> _RunResult:
    withheld = np.zeros(1 if problem.bias else 0, dtype=np.intp)  # the bias column, first in the design
    out = fast_regression(problem.design, problem.t, problem.PhiTt, problem.norms,
                          problem.units.usable, problem.beta0, opts, withheld=withheld)
    return _RunResult(out.active, out.alpha, out.beta, out.log_evidence, out.iterations,
                      out.converged, out.sweeps, out.refused, ends=out.whitened_ends)


def _run_iterative(problem: _Problem, opts: IterativeOptions, finish: FastOptions) -> _RunResult:
    """MacKay or EM, then Algorithm 7.2's single-alpha steps from where they stop (``finish``); under the
    flat prior from two schedules, beta re-estimated from the first iteration and beta held until the alphas
    settle (``IterativeOptions.hold_beta``), the result of the higher (7.85) kept, with its own iterations and
    history (``max_iter`` caps each schedule).

    MacKay's and EM's own stopping rule (the objective changes by less than
    ``tol`` in one iteration) stops while alphas are still running off to
    infinity, and pruned functions are never tested again. The fast steps from
    their point delete, re-estimate and add functions until none gains more
    than ``tol``, so every method ends at a point certified the same way.

    From its initial beta the first update can set the noise to the misfit of a poor first posterior, and the
    alphas then climb, (7.85) rising, in the basin of a noise that is too high to a model that explains nothing
    or little, where no single function is worth adding (Result 7.18): a linear kernel on 90 points of 4 inputs
    offset by 100 (nearly collinear columns) took MacKay and EM there, 180 nats below the fast method's maximum,
    and with beta held they reach it. On wide Gaussian kernels either schedule can end higher, by nats either
    way (test_rvm_maxima's matrix, both interior: EM 5.1 nats higher not held on friedman2, standardised X, gamma
    0.1 / (D var X); MacKay 47 higher held on sinc at that gamma), so both run. Where some column is nearly
    constant beside the bias, the held schedule also runs from the centred starts (``_centred``).
    """
    usable = problem.units.usable
    # the Gram matrix as the fast method's top-down starts form it (``gram_matrix``, at the BLAS threads it
    # has): on nearly collinear columns (cond ~ 1e15) MacKay's path from the same start follows its rounding,
    # and the two products of one matrix led the two methods to different maxima, 1.2 nats apart
    G = gram_matrix(problem.design, usable)
    run = _iterative_and_finish(problem, G, opts, finish)
    if not opts.prior.flat:
        return run
    best, ends = run, run.ends
    for alpha_init in [opts.alpha_init] + _centred(problem, usable, opts.alpha_init, ITERATIVE_CENTRED_BELOW):
        held = _iterative_and_finish(problem, G, replace(opts, alpha_init=alpha_init, hold_beta=True), finish)
        ends += held.ends
        if _higher(problem, held, best, opts.tol):
            best = held
    return replace(best, ends=ends)


#: ``method="mackay"`` / ``"em"`` also run from the centred starts (``_centred``) where some column's relative
#: variance var(phi_i) / mean(phi_i^2) is below this: a dot-product kernel on inputs with a large common offset
#: (3e-5 at an offset of 100, 3e-7 at 1,000, 3e-9 at 10,000, for 3 standard normal inputs), and few Gaussian
#: kernels: in the matrix of benchmarks/rvm_accuracy.py the smallest is 9.4e-5 (Boston housing, raw inputs, 0.1 x
#: gamma "scale"; most 1e-3 to 1e-1), and only its extra cell friedman1 standardised at gamma 1e-4 lies below
#: (1.7e-7), where from alpha_init = 1e-4 they reach 1.49 nats above the fast method (-621.92 against -623.41).
#: On those cells, from alpha_i = 1, both schedules end at maxima the certificate passes (none collapsed), and
#: with the centred starts at 1e-2 the benchmark's MacKay column took 12 to 40 times as long where they ran
#: (Boston housing, raw inputs, 0.1 x "scale": 13 s a fit for 354 points against 0.9), for higher maxima on
#: some; the fast method runs them there (``CENTRED_BELOW``)
ITERATIVE_CENTRED_BELOW = 1e-5


def _centred(problem: _Problem, columns: IntArray, alpha_init: float, below: float) -> list[Array]:
    """The centred starts of ``sequential.centred_alphas`` over ``columns`` of the design (none unless some
    column's relative variance lies below ``below``): the fast method's top-down starts (``FastOptions``), and
    MacKay's and EM's with beta held (``_run_iterative``).

    A linear kernel on inputs offset by 1,000 to 10,000 (120 points of 3 inputs, t = x^T v + noise sd 0.1) makes
    every column c 1 + v with |v| / |c| ~ 1e-3 to 1e-4: from alpha_i = 1, MacKay and EM ended at the bias alone
    or near it (R^2 below 0.19, (7.85) 180-360 nats below the fast method's maximum) in 13 of 24 fits (the two
    methods, offsets 100, 1,000, 3,000 and 10,000, three draws; none at 100); with these starts all 24 end within
    0.3 nats of the fast method's maximum or above it (R^2 0.999-1.000), at 0.1-2.8 s a fit. Held only: the
    schedule with beta re-estimated from the first iteration rescued the same fits, at more time.

    For the fast method they are four more top-down starts (MacKay's, beta held) wherever a column is nearly
    constant beside the bias (``sequential.CENTRED_BELOW``, the classification's rule): on wide Gaussian kernels
    they reach maxima the other starts miss, each factor on some data (benchmarks/rvm_accuracy.py, one BLAS
    thread: Boston housing, raw inputs, 0.1 x gamma "scale" -1088.55 -> -1054.99 from 0.1, at 2.6 times the time;
    at "scale" -1028.65 -> -1023.26 from 0.01, 3.5 times; friedman3 raw 0.1 x -28.45 -> -26.54; test_rvm_maxima's
    sinc at 0.1 / var(x) 4.33 -> 21.46 from 1e-4, friedman2 standardised -962.59 -> -961.88 from 1e-3).

    The relative variance var(phi_i) / mean(phi_i^2) = 1 - mean(phi_i)^2 / mean(phi_i^2) from one pass over the
    columns (``Design.moments``: nothing N x M is stored); its rounding, about 1e-16 absolute, is far below
    either threshold.
    """
    N = problem.t.shape[0]
    sums, norms = problem.design.moments(np.ones(N))
    mean, square = sums[columns] / N, norms[columns] / N
    with np.errstate(divide="ignore", invalid="ignore"):
        relative = np.maximum(square - mean * mean, 0.0) / square
    return centred_starts(relative, alpha_init, below)


def _higher(problem: _Problem, trial: _RunResult, run: _RunResult, tol: float) -> bool:
    """Whether ``trial`` replaces ``run``: converged where ``run`` is (or neither is), and then, of one at the noise
    floor and one not, the interior one whatever their (7.85) (``sequential._chosen_start``'s rule: the floor is the
    solver's bound, not a maximum; the two schedules are peers, so the rule holds both ways), else (7.85) higher by
    more than ``tol``, each recomputed from the whitened kept columns (``_final_posterior``: on nearly collinear
    columns the steps' tracked values lose their digits).

    Only one way, a run with beta re-estimated at the floor was kept over the held schedule's interior maximum
    because it was higher there: friedman1 (test_rvm_maxima's matrix_data, raw X, gamma 1 / (D var X)),
    method="mackay" returned 148 functions for 150 points at the floor (noise sd 0.0048, std(t) 4.8) where the
    held run ends certified at noise sd 0.42."""
    if run.converged and not trial.converged:
        return False
    trial_floor, run_floor = trial.beta >= problem.beta_max, run.beta >= problem.beta_max
    if trial_floor != run_floor:
        return run_floor
    return _final_posterior(problem, trial.active, trial.alpha, trial.beta)[1] > \
        _final_posterior(problem, run.active, run.alpha, run.beta)[1] + tol


def _iterative_and_finish(problem: _Problem, G: Array, opts: IterativeOptions, finish: FastOptions) -> _RunResult:
    """One MacKay or EM run over the usable columns (Gram matrix ``G``), then the fast steps from its point."""
    usable = problem.units.usable
    threads = 1 if usable.size <= SMALL_BASIS else None  # small matrices: one BLAS thread
    with limit_blas(threads):
        # on past a failed Cholesky factor on the whitened columns where ``_settle`` certifies the end (flat prior)
        whitening = Whitening(lambda at: problem.design.columns(usable[at]), problem.t) if opts.prior.flat else None
        out = iterative_regression(G, problem.PhiTt[usable], float(problem.t @ problem.t), problem.t.shape[0],
                                   problem.beta0, opts, whitening=whitening)
    ends = () if out.whitened_end is None else ((usable[out.whitened_end[0]],) + out.whitened_end[1:],)
    result = _RunResult(usable[out.active], out.alpha, out.beta, out.log_evidence, out.iterations,
                        out.converged, 0, broken=out.broken, ends=ends)
    if not out.factored:    # the run on the whitened columns alone (not even the start factored): ``_settle`` finishes it
        return result
    if not (out.converged or out.broken):  # a broken run: the fast steps finish from its last factored state
        return result
    finish = replace(finish, restarts=0, hold_factors=(), polish_sweeps=0)
    # kept without the fast moves: certified later by ``_settle`` (flat prior), not at all under a hyperprior
    unfinished = result if opts.prior.flat else replace(result, converged=False, unfinished=True)
    try:
        fin = fast_regression(problem.design, problem.t, problem.PhiTt, problem.norms, usable, out.beta,
                              finish, start=(usable[out.active], out.alpha))
    except SolverError:  # the fast factorisation failed at this point: keep the iterative result
        return unfinished
    # compared by what the fit maximises, (7.85) plus the hyperpriors' logarithm: by (7.85) alone a finish that
    # raised the objective was dropped (fuzzed, EM under a hyperprior: moves of 0.1 to 57 nats left)
    before = out.log_evidence[-1] + opts.prior.log_density(out.alpha, out.beta)
    after = fin.log_evidence[-1] + opts.prior.log_density(fin.alpha, fin.beta)
    if not after >= before - abs(before) * 1e-12:
        return unfinished
    history = np.concatenate([out.log_evidence, fin.log_evidence[1:]])
    return _RunResult(fin.active, fin.alpha, fin.beta, history, out.iterations + fin.iterations,
                      fin.converged, fin.sweeps, fin.refused, ends=ends)


def _settle(problem: _Problem, run: _RunResult, opts: FastOptions,
            max_iter: int) -> tuple[_RunResult, Whitened | None] | None:
    """The last moves, on the whitened posterior (``posterior.Whitened``): beta to its fixed point
    (7.88), a kept alpha_i to its optimum (7.101), a kept function deleted (7.99) or an excluded one
    added (Result 7.18(c)), the best one at a time, until none gains more than ``tol`` (at most
    ``settle_budget`` moves, within ``max_iter`` for a run that stopped at it; flat prior).

    The steps track the evidence through the Cholesky factor of A + beta Phi^T Phi,
    which loses digits where large weights sit on nearly collinear columns (wide
    kernels on raw inputs): there they can stop where one of these moves still
    gains (friedman2, raw inputs, gamma "scale": 0.05 nats for beta), and their
    span test refuses to add a function nearly in the span of the kept ones, whose
    S_i, Q_i the rank-one updates no longer resolve. Here S_i, Q_i of an excluded
    function are projected norms on the orthogonal factor, which such columns cost
    no digits, so the additions the span test refused are made here when they
    gain (friedman2, raw inputs, N = 250, gamma 1.2e-6, one BLAS thread: 0.0073
    nats refused, the run reported unconverged). Each move's gain is exact
    (7.97) and is confirmed by the next factorisation: a move after which the
    evidence did not rise is undone, and the run is not converged. The additions
    are looked for where no other move gains (one pass over the excluded
    functions, which a run the steps called converged also gets: their own
    test, on the rank-one updates, missed gains of up to 0.01 nats in about
    one fit in 2,000 of random problems). So a run that the steps' own factor called unconverged (a refused
    addition of 0.36 nats on sinc at gamma 0.3 / var(x), which the whitened
    factors put at 0, after 10,000 steps) is converged when the certificate says
    so, and one they called converged is not when it does not.

    Returns the run and the whitened posterior at its state (the kept columns
    in increasing order, as the result holds them), or None for the posterior
    where the last move came after it; None when there is nothing to test.
    """
    order = np.argsort(run.active, kind="stable")
    active = np.asarray(run.active)[order]
    alpha, beta = np.asarray(run.alpha, dtype=np.float64)[order], float(run.beta)
    rounds = settle_budget(problem.t.shape[0], active.size)
    budget = rounds if run.converged else min(rounds, max(max_iter - run.iterations, 0))
    if not active.size or not np.all(np.isfinite(alpha) & (alpha > 0.0)):
        return None
    history, settled, add, before, undone, left = list(run.history), False, None, None, False, 0.0
    for round_ in range(budget + 1):  # the last round tests, moves only within the caller's cap
        add = None
        post = whitened_posterior(problem.design.columns(active), problem.t, alpha, beta) if active.size else None
        value = post.evidence if post is not None else _empty_evidence(problem.t, beta)  # (7.85), exact
        if before is not None and not value > before[3]:    # the last move did not raise it: undone
            active, alpha, beta, _ = before
            history.pop()
            undone = True
            break
        if post is None:  # a deletion left the empty model
            settled = True
            break
        move, i, value = _kept_move(problem, active, alpha, beta, post)
        if not value > opts.tol:
            i, value, alpha_new = _add_move(problem, active, post)
            add, move = value, "add"
            if not value > opts.tol:
                # (7.88) is beta's stationarity, not its maximiser: on a plateau of (7.85) one step of it gained
                # 5.5e-4 nats where the maximum over beta was 0.69 higher, and the fit was called converged
                i, value = beta_optimum(problem.design.columns(active), problem.t, alpha, beta, post,
                                        beta_max=problem.beta_max)
                move = "beta"
            if not value > opts.tol:
                settled = True
                break
        if round_ == budget:
            left = value if budget == rounds else 0.0  # out of its own moves, not of max_iter's
            break
        before = (active, alpha.copy(), beta, post.evidence)
        if move == "beta":
            beta = i
        elif move == "re-estimate":
            s, q = resolved_kept_sq(alpha, post, problem.design.columns(active))
            alpha[i] = s[i] ** 2 / (q[i] ** 2 - s[i])  # (7.101)
        elif move == "add":
            at = int(np.searchsorted(active, i))
            active, alpha = np.insert(active, at, i), np.insert(alpha, at, alpha_new)
        else:  # a deletion, or a re-estimate to alpha_i = inf (q_i^2 <= s_i): the same move (7.99)
            keep = np.arange(active.size) != i
            active, alpha = active[keep], alpha[keep]
        history.append(post.evidence + value)
    moves = len(history) - len(run.history)
    current = post if settled and active.size else None  # the last factorisation, if no move followed it
    if not moves and run.converged and settled:
        return run, current
    if add is None and active.size:
        at = current or whitened_posterior(problem.design.columns(active), problem.t, alpha, beta)
        add = _add_move(problem, active, at)[1]
    add = 0.0 if add is None else add
    converged = settled and not add > opts.tol
    refused = 0.0 if converged else add if run.converged else run.refused  # what the warning names
    return _RunResult(active, alpha, beta, np.asarray(history), run.iterations + moves, converged, run.sweeps,
                      refused, undone, left, run.broken), current


def _settled_ends(problem: _Problem, run: _RunResult, post: Whitened | None, ends: tuple, opts: FastOptions,
                  max_iter: int) -> tuple[_RunResult, Whitened | None]:
    """The run, or the highest of the whitened top-down ends (``FastOutcome.whitened_ends``) each finished by
    ``_settle``'s moves where it is higher (``_higher``; by ``TOP_DOWN_GAIN`` nats where it keeps more functions,
    as ``sequential.worth_replacing``): its history is the run's and then its own (7.85).

    The steps from such an end lose every digit of S_i and Q_i (a linear kernel on 120 points of 3 inputs
    offset by 1,000: from a re-estimation that ended at 167 nats they fell to 22-29, and the fit to the bias
    alone at -170, R^2 0); the moves on the orthogonal factorisation keep them.
    """
    for active, alpha, beta in ends:
        if not active.size:
            continue
        start = _RunResult(np.asarray(active), np.asarray(alpha), float(beta), np.asarray(run.history),
                           run.iterations, True, run.sweeps)
        settled = _settle(problem, start, opts, max_iter)
        # a denser maximum only where it is clearly more probable (``sequential.worth_replacing``)
        margin = TOP_DOWN_GAIN if settled is not None and settled[0].active.size > run.active.size else opts.tol
        if settled is None or not _higher(problem, settled[0], run, margin):
            continue
        trial, post = settled
        # (7.85) at the end: the last factorisation, where no move followed it
        value = post.evidence if post is not None else _final_posterior(problem, trial.active, trial.alpha,
                                                                         trial.beta)[1]
        run = replace(trial, history=np.append(run.history, value))
    return run, post


def settle_budget(N: int, M: int) -> int:
    """The number of ``_settle``'s moves for M kept functions of N: ``SETTLE_ROUNDS``, fewer where, at N M^2
    multiply-adds each (a move factorises the N x M kept columns), they would cost more than ``SETTLE_WORK``
    together, at least ``SETTLE_MIN_ROUNDS`` (never more than ``SETTLE_ROUNDS``)."""
    affordable = int(SETTLE_WORK // max(N * max(M, 1) ** 2, 1))
    return min(SETTLE_ROUNDS, max(SETTLE_MIN_ROUNDS, affordable))


def _kept_move(problem: _Problem, active: IntArray, alpha: Array, beta: float,
               post: Whitened) -> tuple[str, Any, float]:
    """The best move of beta or of a kept alpha_i at ``post``: ("beta", its new value, gain) or
    ("re-estimate" / "delete", the kept function's position, gain)."""
    # s_i, q_i also where alpha_i >> s_i (the certificate's): such a function's re-estimate can still gain
    # (alpha = 1.53 over s = 2.6e-13 with q^2 / s = 1.32: 0.0215 nats), which the fit called converged
    s, q = resolved_kept_sq(alpha, post, problem.design.columns(active))
    reestimate, delete = kept_gains(alpha, s, q, resolved=True)
    beta_new = min(beta_fixed_point(post), problem.beta_max)  # (7.88)
    beta_gain = 0.0
    if math.isfinite(beta_new) and beta_new != beta:
        beta_gain = whitened_posterior(problem.design.columns(active), problem.t, alpha, beta_new).evidence \
            - post.evidence
    gains = (beta_gain, float(np.max(reestimate)), float(np.max(delete)))
    best = int(np.argmax(gains))
    if best == 0:
        return "beta", beta_new, gains[0]
    i = int(np.argmax(reestimate if best == 1 else delete))
    # a re-estimate to alpha_i = inf (q_i^2 <= s_i) is the deletion (7.99)
    return ("re-estimate" if best == 1 and q[i] ** 2 > s[i] else "delete"), i, gains[best]


def _add_move(problem: _Problem, active: IntArray, post: Whitened) -> tuple[int, float, float]:
    """The best addition of an excluded usable function on the whitened posterior ``post`` of the kept
    columns (the certificate's ``add_row``): (its column, its gain in nats, alpha_i = S_i^2 / (Q_i^2 - S_i));
    the gain NaN where rounding left some S_i no digits."""
    excluded = np.setdiff1d(problem.units.usable, active)
    S, Q = factors_over(problem.design, excluded, post, additions=True)  # exact where an addition can gain
    row = add_row(S, Q, list(range(S.size)), 0.0)  # where: the position of the largest gain, None if none
    if row.where is None:
        return -1, row.gain, math.nan
    j = int(row.where)
    return int(excluded[j]), row.gain, float(S[j] ** 2 / (Q[j] ** 2 - S[j]))  # Result 7.18(c)


def _initial_beta(beta_init: float | None, t_scale: float) -> float:
    if beta_init is None:
        return 1.0 / INITIAL_NOISE_FRACTION**2
    return float(check_param("beta_init", beta_init, "C")) * t_scale**2


def _regression_result(problem: _Problem, run: _RunResult, method: str, alpha_max: float,
                       post: Whitened | None = None) -> RVMRegression:
    """Final posterior from a fresh factorisation (or ``post``, ``_settle``'s at the run's state), mapped back
    to the caller's units."""
    order = np.argsort(run.active, kind="stable")
    active, alpha = np.asarray(run.active)[order], np.asarray(run.alpha)[order]
    all_pruned = active.size == 0
    if all_pruned:
        warn_all_pruned(problem.bias)
        if problem.bias:
            active, alpha = np.array([0]), np.array([alpha_max])
    post, final = (post, post.evidence) if post is not None and not all_pruned else \
        _final_posterior(problem, active, alpha, run.beta)
    if all_pruned:   # the empty model's (7.85), as the certificate computes it, not its placeholder bias's
        final = _empty_evidence(problem.t, run.beta)     # (0.024 nats apart on y = 0 at the noise floor)
    history = np.append(np.asarray(run.history, dtype=np.float64)[:-1], final)
    units = problem.units
    shift = problem.t.shape[0] * math.log(units.t_scale)  # ln p(t) = ln p(t / s) - N ln s
    D = units.t_scale * units.scale[active]  # w_i (caller) = t_scale c_i w_i (solver)
    return RVMRegression(
        relevance=frozen((active[active > 0] - 1 if problem.bias else active).astype(np.intp)),
        bias_used=bool(problem.bias and active.size and active[0] == 0),
        alpha=frozen(alpha / D**2),
        beta=float(run.beta / units.t_scale**2),
        mean=frozen(post.m * D),
        covariance=frozen(post.Sigma * np.outer(D, D)),
        gamma=frozen(gamma_of(alpha, post.Sigma_diag)),
        log_evidence=frozen(history - shift),
        iterations=int(run.iterations),
        converged=bool(run.converged),
        method=method,
        all_pruned=all_pruned,
        sweeps=int(run.sweeps),
    )


def _final_posterior(problem: _Problem, active: IntArray, alpha: Array, beta: float):
    """Result 7.12 over the kept columns and (7.85) there (solver units), by the orthogonal
    factorisation of ``posterior.Whitened``: the steps' own factor of A + beta Phi^T Phi loses digits
    where large weights sit on nearly collinear columns (0.5 nats of (7.85) on friedman3 with raw
    inputs), and so did C formed (up to 19 nats); the result reports the evidence its certificate
    recomputes."""
    Phi_a = problem.design.columns(active)
    t = problem.t
    if not active.size:
        return posterior(Phi_a.T @ Phi_a, Phi_a.T @ t, alpha, beta), _empty_evidence(t, beta)
    post = whitened_posterior(Phi_a, t, alpha, beta)
    return post, post.evidence


def _empty_evidence(t_s: Array, beta: float) -> float:
    N = t_s.shape[0]
    return 0.5 * (N * math.log(beta) - N * math.log(2.0 * math.pi) - beta * float(t_s @ t_s))
