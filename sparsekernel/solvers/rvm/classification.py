"""The classification RVM (section 7.2.3): rvm_classification.

Two classes: one logistic output (7.108) with the ``Bernoulli`` likelihood;
K > 2 classes: K softmax outputs (7.120)-(7.122) with the ``Softmax``
likelihood. The posterior over the weights is the Laplace approximation at
the IRLS mode (7.109)-(7.113) (``laplace``); the hyperparameters maximise its
evidence (7.114) by Algorithm 7.2 on the effective problem (7.117)-(7.119)
(``sequential``), or by (7.116) / EM (``reestimation``).

What a converged fit certifies (``laplace_report``): no single move on the
effective problem at the fit's own mode gains more than ``tol``, the fixed
point of Tipping and Faul's algorithm; or, where the moves it predicts no
longer raise (7.114) once the mode is found again, more than
``sequential.STUCK_TOL`` (10) times ``tol``, the tolerance of ``RVC.report_``
(a fuzz of 257 converged fits found 18 between 1 and 3.3 times ``tol``).
The Laplace evidence (7.114) as a function of alpha also moves through the
mode w* and its curvatures B, which the effective problem holds fixed;
recomputed with the mode found again at a changed alpha it can be higher
than at the fit (one gradient step on the kept ln alpha_i gained up to 6.2
nats, and more than 0.01 on 21 of 30 cells, at the certified fast fits of
benchmarks/rvm_accuracy.py's classification matrix), so the fit is a
stationary point of the effective problem, the book's (7.116), not a
certified maximum of (7.114) itself; the report measures that rise beyond
its verdict (``laplace_exact``).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ...validation import check_real_targets, check_same_length, fail
from ...errors import ValidationError
from .checks import ALPHA_INIT, Method, check_bias, check_design, check_method
from .design import Design
from .laplace_fit import fit_laplace
from .likelihood import Bernoulli, Softmax
from .results import RVMClassification

__all__ = ["rvm_classification"]

Array = NDArray[np.float64]
IntArray = NDArray[np.intp]


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
    alpha_init: float = ALPHA_INIT,
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
        as the noise covariance (7.119), the regression's steps with
        beta I -> B (``sequential.fast_laplace``), from several starts (an
        even spread of functions, the empty model and, on at most 500
        (function, output) pairs, MacKay's (7.116) from every function at
        alpha_i = 1, 1e-2, 1e-4 and, where some column is nearly constant
        beside the bias, from the centred starts: see ``alpha_init``), the
        highest Laplace evidence kept; ``"mackay"``: (7.116); ``"em"``:
        alpha_i = 1 / (w_i*^2 + Sigma_ii); both then finish with the fast
        moves, so all three stop by one rule.
    bias, alpha_max, tol, max_iter : as for ``rvm_regression``
        (``tol`` bounds the gain of one move on the effective problem at the
        fit's mode, in nats of (7.114): see the module docstring).
    max_newton : int
        Cap on IRLS (Newton) steps per mode search.
    newton_tol : float
        IRLS stops when the Newton decrement (the rise of the log posterior
        (7.109) that a full step predicts) is below ``newton_tol`` times
        (1 + |log posterior|), after that last step.
    alpha_init : float
        MacKay and EM: the alpha_i every (function, output) pair starts
        from, as for ``rvm_regression``; the fast method ignores it (its
        starts include MacKay's from 1, 1e-2 and 1e-4). Where some column
        (of unit mean square) is nearly constant, its relative variance
        var(phi_i) / mean(phi_i^2) below 1e-2 (a dot-product kernel on
        inputs with a large common offset, a very wide kernel), they also
        run from the centred starts alpha_i = alpha_init x (0.1, 0.01, 1e-3,
        1e-4) x that ratio (the fast method: 1 x those), and the result of
        higher (7.114) is kept (``sequential.centred_alphas``).

    Returns
    -------
    RVMClassification
    """
    method = check_method(method)
    design = check_design(Phi)
    labels, K = _check_class_targets(t)
    check_same_length(np.empty((design.shape[0], 0)), labels, "Phi", "t")
    likelihood = Bernoulli() if K == 2 else Softmax(K)
    fit = fit_laplace(likelihood, design, likelihood.targets(labels), method, bias=check_bias(bias),
                      alpha_max=alpha_max, tol=tol, max_iter=max_iter, max_newton=max_newton,
                      newton_tol=newton_tol, caller="rvm_classification", alpha_init=alpha_init)
    return RVMClassification(n_classes=K, **vars(fit))
