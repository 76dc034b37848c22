"""Fitting a non-conjugate likelihood (Bernoulli, softmax, Poisson): one path for all of them.

The columns are scaled to unit mean square (see ``checks``); the
hyperparameters are found by Algorithm 7.2 on the effective problem
(``sequential.fast_laplace``) or by (7.116) / EM
(``reestimation.iterative_laplace``, then the fast moves from where they stop,
so that every method stops by the same rule; from ``alpha_init`` and, where some
column is nearly constant beside the bias, from the centred starts
``sequential.centred_alphas``, the higher kept); the Laplace posterior (7.112)-(7.113)
over the kept pairs (function, output) is then mapped back to the caller's
columns and units.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from ..._threads import limit_blas
from ...validation import check_param
from ...errors import ConvergenceWarning, SolverError
from .checks import ALPHA_INIT, DEFAULT_MAX_ITER, check_common, column_scale, frozen, warn_all_pruned
from .design import DenseDesign, Design, WithBias
from .laplace import Laplace, ModeOptions, find_mode, laplace_log_evidence
from .likelihood import Likelihood
from .posterior import covariance_from_factor
from .reestimation import LaplaceIterativeOptions, iterative_laplace
from .results import LaplaceResult
from .sequential import TOP_DOWN_PRUNE, FastOptions, centred_alphas, fast_laplace, worth_replacing

__all__ = ["fit_laplace"]

Array = NDArray[np.float64]
IntArray = NDArray[np.intp]
#: Beta bound and tolerance handed to the sequential run, which has no beta here.
NO_BETA = 1.0


@dataclass(frozen=True)
class _Pairs:
    """The solver's answer over the usable columns: included pairs, their alpha, the mode."""

    basis: IntArray
    output: IntArray
    alpha: Array
    mode: Laplace
    history: list
    iterations: int
    converged: bool
    unfinished: bool = False  # MacKay's / EM's result, which the fast moves could not start from


def fit_laplace(likelihood: Likelihood, design: Design, T: Array, method: str, *, bias: bool, alpha_max: float,
                tol: float, max_iter: int | None, max_newton: int, newton_tol: float, caller: str,
                alpha_init: float = ALPHA_INIT) -> LaplaceResult:
    """Fit ``likelihood`` with targets ``T`` (N, O) on the columns of ``design``; ``caller`` names warnings;
    ``alpha_init``: where MacKay and EM start, and the scale of their centred starts (the fast method's starts
    are its own)."""
    N = design.shape[0]
    alpha_max, tol, max_iter = check_common(alpha_max, tol, max_iter, method, design.shape[1])
    alpha_init = float(check_param("alpha_init", alpha_init, "C"))
    mode_opts = ModeOptions(int(check_param("max_newton", max_newton, "max_iter")),
                            float(check_param("newton_tol", newton_tol, "tol")))
    full = WithBias(design) if bias else design
    _, norms = full.moments(np.zeros(N))
    scale = column_scale(norms, N, bias)
    usable = np.flatnonzero(scale > 0.0)
    Phi = _scaled_columns(full, usable, scale)
    with limit_blas(1):  # matrices of size M O, products N x M: one thread is fastest
        pairs = _solve(likelihood, Phi, T, method, tol, max_iter, alpha_max, mode_opts, alpha_init)
        pairs, all_pruned = _keep_bias_if_empty(likelihood, Phi, T, pairs, bias, alpha_max, mode_opts)
    if pairs.unfinished:
        warnings.warn(f"{caller} (method={method!r}) stopped where its own rule did, but the fast moves that "
                      f"certify every method could not start from there (no Laplace mode found at its alphas): "
                      f"not certified", ConvergenceWarning, stacklevel=3)
    elif not pairs.converged and pairs.iterations < max_iter:  # fast: no move tried raised (7.114)
        warnings.warn(f"{caller} (method={method!r}) stopped after {pairs.iterations} iterations where no single "
                      f"step on the effective problem raises the Laplace evidence, with a step that gains more "
                      f"than tol={tol:g} left on the effective problem (see the report)", ConvergenceWarning,
                      stacklevel=3)
    elif not pairs.converged:
        warnings.warn(f"{caller} (method={method!r}) stopped at max_iter={max_iter} iterations before reaching "
                      f"tol={tol:g}", ConvergenceWarning, stacklevel=3)
    if all_pruned:
        warn_all_pruned(bias)
    return _in_caller_units(pairs, usable, scale, bias, method, all_pruned)


#: Columns of the design gathered at once into the column-major Phi (``_scaled_columns``).
COLUMN_BLOCK = 512


def _scaled_columns(full: Design, usable: IntArray, scale: Array) -> Array:
    """Phi[:, usable] * scale[usable], (N, len(usable)), in column-major order: one pass when every
    column of [1, stored Phi] is usable.

    Column-major because the fast method reads Phi by columns: the pool's and
    the mode's columns gathered, each a contiguous block then (the fast RVC
    at N = 5,000: 4.2-4.3 s against 4.6-4.7 s in row-major order).
    """
    if (isinstance(full, WithBias) and isinstance(full.inner, DenseDesign) and usable.size == full.shape[1]):
        inner = full.inner.Phi
        Phi = np.empty(full.shape, order="F")
        Phi[:, 0] = scale[0]
        np.multiply(inner, scale[1:], out=Phi[:, 1:])
        return Phi
    Phi = np.empty((full.shape[0], usable.size), order="F")
    for start in range(0, usable.size, COLUMN_BLOCK):  # a block of columns at a time: no second N x M copy
        block = usable[start:start + COLUMN_BLOCK]
        Phi[:, start:start + block.size] = full.columns(block) * scale[block]
    return Phi


def _solve(likelihood, Phi, T, method, tol, max_iter, alpha_max, mode_opts, alpha_init) -> _Pairs:
    fast_iter = max_iter if method == "fast" else DEFAULT_MAX_ITER["fast"]
    opts = FastOptions(tol, fast_iter, alpha_max, NO_BETA, Phi.shape[1] * T.shape[1], NO_BETA,
                       restarts=0, update_beta=False)
    if method == "fast":
        out, mode = fast_laplace(likelihood, Phi, T, opts, mode_opts)
        basis, output = np.divmod(out.active, T.shape[1])
        return _Pairs(basis, output, out.alpha, mode, list(out.log_evidence), out.iterations, out.converged)
    iterative = LaplaceIterativeOptions(method, tol, max_iter, alpha_max, alpha_init, mode_opts)
    pairs = _iterative_and_finish(likelihood, Phi, T, iterative, opts, mode_opts)
    for alpha in centred_alphas(Phi, alpha_init):  # max_iter caps each start; the kept one's iterations count
        try:
            trial = _iterative_and_finish(likelihood, Phi, T, replace(iterative, alpha_init=alpha), opts, mode_opts)
        except SolverError:  # no Laplace mode at that weak a prior (nearly collinear columns): the others stand
            continue
        if _higher(trial, pairs, tol):
            pairs = trial
    return pairs


def _iterative_and_finish(likelihood, Phi, T, iterative: LaplaceIterativeOptions, opts: FastOptions,
                          mode_opts: ModeOptions) -> _Pairs:
    """MacKay's (7.116) or EM from ``iterative.alpha_init``, then the fast moves from where it stops (``_finished``)."""
    out = iterative_laplace(likelihood, Phi, T, iterative)
    pairs = _Pairs(out.basis, out.output, out.alpha, out.mode, list(out.log_evidence), out.iterations,
                   out.converged)
    return _finished(likelihood, Phi, T, pairs, opts, mode_opts) if out.converged or out.broken else pairs


def _higher(trial: _Pairs, run: _Pairs, tol: float) -> bool:
    """Whether a centred start's result ``trial`` replaces ``run`` (the start from ``alpha_init``): never when
    ``run`` converged and ``trial`` did not; else when its (7.114), recomputed at its own mode, is higher by
    more than ``tol``, or by more than ``TOP_DOWN_GAIN`` when it keeps more pairs (``worth_replacing``).

    As for the regression's two schedules (``regression._higher``), by the value at the returned point: the
    last value of a run's history is, where it pruned its last pair, that of the model before (``_finished``).
    """
    if run.converged and not trial.converged:
        return False
    return worth_replacing(laplace_log_evidence(trial.mode, trial.alpha), trial.basis.size,
                           laplace_log_evidence(run.mode, run.alpha), run.basis.size, tol)


def _finished(likelihood, Phi, T, pairs: _Pairs, opts: FastOptions, mode_opts: ModeOptions) -> _Pairs:
    """MacKay's or EM's result, then Algorithm 7.2's moves from there (``fast_laplace`` from its pairs).

    As for the regression (``regression._run_iterative``): their own stopping
    rule leaves alphas running off to infinity and never tests the pruned
    pairs again; the moves from their point make every method stop by the
    same rule, no single move gaining more than ``tol``. The pairs whose
    alpha has run past ``TOP_DOWN_PRUNE`` on its way to infinity start
    excluded (the moves add back any that gains more than ``tol``), and the
    result replaces MacKay's or EM's unless theirs keeps more pairs and is
    higher by ``TOP_DOWN_GAIN`` (``worth_replacing``), or the moves fail.
    """
    O = T.shape[1]
    keep = pairs.alpha <= TOP_DOWN_PRUNE
    index = pairs.basis[keep] * O + pairs.output[keep]
    order = np.argsort(index)
    try:
        fin, mode = fast_laplace(likelihood, Phi, T, opts, mode_opts,
                                 start=(index[order], pairs.alpha[keep][order]))
    except SolverError:  # no mode at their alphas: their own rule stopped, the moves' rule is not checked
        return replace(pairs, converged=False, unfinished=True)
    # a run that pruned every pair recorded the evidence of the model before its last pair went, not of the
    # empty model it returns (EM on two far-apart classes: -2.7 nats recorded, -27.7 for the empty model): kept
    # by that value over the moves' 1-pair model, it was returned 'converged' with a failing certificate
    if pairs.basis.size and worth_replacing(pairs.history[-1], pairs.basis.size, fin.log_evidence[-1],
                                            fin.active.size, opts.tol):
        return pairs
    basis, output = np.divmod(fin.active, O)
    # the moves' start is a state of its own where it excluded pairs (7.114 without them): with no move
    # after it, the history ended at MacKay's model with them in (6.4e-5 nats off; 5.9e-4 on a softmax draw)
    moves = fin.log_evidence if not keep.all() else fin.log_evidence[1:]
    return _Pairs(basis, output, fin.alpha, mode, pairs.history + list(moves),
                  pairs.iterations + fin.iterations, fin.converged)


def _keep_bias_if_empty(likelihood, Phi, T, pairs: _Pairs, bias, alpha_max, mode_opts) -> tuple[_Pairs, bool]:
    """When every pair is pruned: with a bias, keep it (alpha = alpha_max) for every output; without,
    the empty model. Either way the last evidence is that model's (7.114) (the run's own last value was
    that of the model before its last pair went), and whether every pair was pruned."""
    if pairs.basis.size:
        return pairs, False
    O = T.shape[1] if bias else 0
    basis, output, alpha = np.zeros(O, dtype=np.intp), np.arange(O, dtype=np.intp), np.full(O, alpha_max)
    try:
        mode = find_mode(likelihood, Phi, basis, output, T, alpha, np.zeros(O), mode_opts)
    except SolverError:  # the K softmax biases' Hessian is singular (the outputs' shift), and an alpha_max below
        # its resolution (1e-20) leaves no mode: the empty model (the SolverError named alpha_init and 'fast')
        basis, output, alpha = basis[:0], output[:0], alpha[:0]
        mode = find_mode(likelihood, Phi, basis, output, T, alpha, np.zeros(0), mode_opts)
    history = pairs.history + [laplace_log_evidence(mode, alpha)]
    return _Pairs(basis, output, alpha, mode, history, pairs.iterations, pairs.converged), True


def _in_caller_units(pairs: _Pairs, usable, scale, bias, method, all_pruned) -> LaplaceResult:
    """Map the pairs (function, output) back to the caller's columns: alpha / c^2, c w, c Sigma c.

    ``alpha`` and ``mean`` are (B, O) over the kept functions (bias first)
    and the outputs, inf and 0 where an output excludes a function;
    ``covariance`` is (B O, B O) in output-major order.
    """
    kept = np.unique(pairs.basis)  # positions in ``usable``
    basis = usable[kept]
    B, O = kept.size, pairs.mode.Y.shape[1]
    row = np.searchsorted(kept, pairs.basis)
    c = scale[basis]
    alpha, mean, cov = np.full((B, O), np.inf), np.zeros((B, O)), np.zeros((B * O, B * O))
    alpha[row, pairs.output] = pairs.alpha / c[row] ** 2  # alpha (caller) = alpha / c^2
    mean[row, pairs.output] = pairs.mode.w * c[row]  # w (caller) = c w
    flat = pairs.output * B + row
    Sigma = covariance_from_factor(pairs.mode.R)  # (7.113)
    cov[np.ix_(flat, flat)] = Sigma * np.outer(c[row], c[row])
    return LaplaceResult(
        relevance=frozen((basis[basis > 0] - 1 if bias else basis).astype(np.intp)),
        bias_used=bool(bias and B and basis[0] == 0),
        alpha=frozen(alpha),
        mean=frozen(mean),
        covariance=frozen(cov),
        log_evidence=frozen(np.asarray(pairs.history, dtype=np.float64)),
        iterations=int(pairs.iterations),
        converged=bool(pairs.converged),
        method=method,
        all_pruned=bool(all_pruned),
    )
