"""The classification RVM (section 7.2.3): rvm_classification.

Two classes: one logistic output (7.108) with the ``Bernoulli`` likelihood;
K > 2 classes: K softmax outputs (7.120)-(7.122) with the ``Softmax``
likelihood. The posterior over the weights is the Laplace approximation at
the IRLS mode (7.109)-(7.113) (``laplace``); the hyperparameters maximise its
evidence (7.114) by Algorithm 7.2 on the effective problem (7.117)-(7.119)
(``sequential``), or by (7.116) / EM (``reestimation``).
"""

from __future__ import annotations

import warnings

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..._threads import limit_blas
from ..._validation import check_param, check_real_targets, check_same_length, fail
from ...errors import ConvergenceWarning, ValidationError
from .checks import ALPHA_INIT, Method, check_common, check_design, check_method, column_scale, frozen, warn_all_pruned
from .design import Design, WithBias
from .laplace import ClassOptions, classify
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
    method = check_method(method)
    design = check_design(Phi)
    labels, K = _check_class_targets(t)
    N = design.shape[0]
    check_same_length(np.empty((N, 0)), labels, "Phi", "t")
    alpha_max, tol, max_iter = check_common(alpha_max, tol, max_iter, method, design.shape[1])
    max_newton = int(check_param("max_newton", max_newton, "max_iter"))
    newton_tol = float(check_param("newton_tol", newton_tol, "tol"))
    full = WithBias(design) if bias else design
    _, norms = full.moments(np.zeros(N))
    scale = column_scale(norms, N)
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
        warn_all_pruned(bias)
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
        relevance=frozen(relevance.astype(np.intp)),
        bias_used=bias_used,
        n_classes=K,
        alpha=frozen(alpha),
        mean=frozen(mean),
        covariance=frozen(cov),
        log_evidence=frozen(out.log_evidence),
        iterations=int(out.iterations),
        converged=bool(out.converged),
        method=method,
        all_pruned=bool(out.all_pruned),
    )
