"""The Laplace evidence (7.114) itself, with the mode found again at every alpha, beside the book's fixed point.

Algorithm 7.2 on the effective problem (7.117)-(7.119) holds the curvature B
and the mode w* fixed; its fixed point is not a stationary point of (7.114)
as a function of alpha, because B moves with w* (``laplace.alpha_gradient``).
Measured at the fast method's certified fits of ``benchmarks/rvm_accuracy.py``
(30 classification cells), the gradient of (7.114) in ln alpha was up to 1.4
and (7.114) over the kept alphas alone still rose by up to 22 nats (Pima,
standardised, ten times gamma "scale": -87.0 to -64.3).

The book's (7.116) sets that derivative to zero with B held fixed, and so
defines the classification RVM by the effective problem's fixed point, which
``certificate.laplace_report`` certifies. Beyond its verdict the report
measures how far (7.114) itself could still rise: ``gradient_step_gain``,
the rise one gradient step in ln alpha makes (the mode found again), and
``addition_step_gain``, the rise from adding the function that the exact
test at alpha_i = inf (``laplace.addition_correction``) ranks first.

Maximising (7.114) itself instead (L-BFGS-B over the kept ln alpha, then
additions by the exact test) was measured on eight of those cells: it rose
by 0.2-43 nats, but it kept up to twice the functions (Pima, standardised:
88 for 41; breast cancer: 76 for 26) at alphas near 1e-10, where (7.114)
approaches a limit on separable classes, and its test error rose on one
cell and fell on three. That is another model than the book's, not a
better solver of it; it is left as a measurement.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ...errors import SolverError
from .laplace import Laplace, ModeOptions, alpha_gradient, find_mode, laplace_log_evidence
from .likelihood import Likelihood

__all__ = ["Kept", "evaluate", "gradient_step_gain", "addition_step_gain"]

Array = NDArray[np.float64]
Index = NDArray[np.intp]

#: ``gradient_step_gain``: step lengths tried, from the first down by halves, and up by doubling while it rises.
FIRST_STEP = 1.0
HALVINGS = 20
DOUBLINGS = 8


@dataclass(frozen=True)
class Kept:
    """A model of kept pairs (column ``basis``, output ``output``) at ``alpha``, its Laplace mode and (7.114)."""

    basis: Index
    output: Index
    alpha: Array
    mode: Laplace
    value: float


def evaluate(likelihood: Likelihood, Phi: Array, T: Array, basis: Index, output: Index, alpha: Array,
             w0: Array, mode_opts: ModeOptions) -> Kept | None:
    """The mode at ``alpha`` (Newton from ``w0``) and (7.114) there; None where no mode is found."""
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            mode = find_mode(likelihood, Phi, basis, output, T, alpha, w0, mode_opts)
    except SolverError:
        return None
    value = laplace_log_evidence(mode, alpha)
    return Kept(basis, output, alpha, mode, value) if math.isfinite(value) else None


def gradient(likelihood: Likelihood, Phi: Array, kept: Kept) -> Array:
    """d(7.114)/d ln alpha over the kept pairs (``laplace.alpha_gradient``)."""
    return alpha_gradient(likelihood, Phi[:, kept.basis], kept.output, kept.alpha, kept.mode)


def gradient_step_gain(likelihood: Likelihood, Phi: Array, T: Array, kept: Kept,
                       mode_opts: ModeOptions) -> tuple[float, int]:
    """The largest rise of (7.114) that one step eta g along its gradient g in ln alpha makes, eta from
    ``FIRST_STEP`` halved until (7.114) rises (then doubled while it rises more), and the position of the
    largest |g_p| (-1 with no kept pair). 0.0 where no step rises."""
    if kept.alpha.size == 0:
        return 0.0, -1
    g = gradient(likelihood, Phi, kept)
    where = int(np.argmax(np.abs(g)))
    x = np.log(kept.alpha)
    def rise(eta: float) -> float:
        trial = evaluate(likelihood, Phi, T, kept.basis, kept.output, np.exp(x + eta * g), kept.mode.w, mode_opts)
        return -math.inf if trial is None else trial.value - kept.value

    if not np.any(g):
        return 0.0, where
    eta, best = FIRST_STEP, -math.inf
    for _ in range(HALVINGS):
        best = rise(eta)
        if best > 0.0:
            break
        eta /= 2.0
    if best <= 0.0:
        return 0.0, where
    for _ in range(DOUBLINGS):
        more = rise(2.0 * eta)
        if more <= best:
            break
        eta, best = 2.0 * eta, more
    return best, where


#: ``addition_step_gain``: the alphas tried, the optimum's times each, until (7.114) rises.
ADD_FACTORS = (1.0, 10.0, 100.0, 1e3, 1e4)


def addition_step_gain(likelihood: Likelihood, Phi: Array, T: Array, kept: Kept, column: Array, output: int,
                       optimum: float, mode_opts: ModeOptions) -> float:
    """The rise of (7.114) from adding the weight (``column``, ``output``) at alpha_i = ``optimum`` times each of
    ``ADD_FACTORS`` in turn, the first that rises (the mode found again; 0.0 if none does).
    ``Phi`` holds the kept functions' columns, which ``kept.basis`` indexes; the new one is appended."""
    if not math.isfinite(optimum):
        return 0.0
    both = np.column_stack([Phi, column])
    basis = np.append(kept.basis, Phi.shape[1])
    for factor in ADD_FACTORS:
        trial = evaluate(likelihood, both, T, basis, np.append(kept.output, output),
                         np.append(kept.alpha, factor * optimum), np.append(kept.mode.w, 0.0),
                         mode_opts)
        if trial is not None and trial.value > kept.value:
            return trial.value - kept.value
    return 0.0
