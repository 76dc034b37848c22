"""LIBSVM's answers, through scikit-learn, in the notes' convention.

scikit-learn keeps ``dual_coef_`` for the support vectors only, in LIBSVM's
scaling. ``from_sklearn`` rebuilds the full multiplier vector for all N
points and undoes the rescalings:

- SVC: dual_coef_ = a_n t_n, the notes' a directly; b = intercept_.
- NuSVC: LIBSVM solves with 0 <= alpha <= 1, sum alpha = nu N and then divides
  by its r; the notes' a sums to nu, so a = |dual_coef_| nu / sum |dual_coef_|,
  rho = nu / sum |dual_coef_| and b = intercept_ * rho (LIBSVM's decision
  values are ours divided by rho).
- SVR and NuSVR: dual_coef_ = a_n - a_hat_n (at most one is non-zero);
  LIBSVM's nu-SVR C is ours divided by N.
- OneClassSVM: LIBSVM's alpha sums to nu N; a = alpha / (nu N) and
  b = intercept_ / (nu N) = -rho.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ValidationError
from ..formulations import EpsilonSVR, Machine, NuSVC, NuSVR, OneClassSVM, SoftMarginSVC, Solution
from ..kernels import Kernel, make_kernel
from ..solvers.standard_qp import RhoEstimate

__all__ = ["from_sklearn", "machine_from_sklearn", "solve_with_libsvm"]


def _kernel(est: Any) -> Kernel:
    if callable(est.kernel):
        raise ValidationError(f"estimator.kernel must be a named kernel; got the callable {est.kernel!r}")
    return make_kernel(est.kernel, gamma=float(getattr(est, "_gamma", 1.0)), degree=int(est.degree),
                       coef0=float(est.coef0))


def machine_from_sklearn(estimator: Any, X: ArrayLike, t: ArrayLike | None = None,
                         sample_weight: ArrayLike | None = None) -> Machine:
    """The machine a fitted scikit-learn SVM solved, with the notes' hyperparameters.

    ``sample_weight`` is the one given to ``fit`` (C-SVC and epsilon-SVR only).
    """
    from sklearn import svm

    kind = type(estimator)
    if kind not in (svm.SVC, svm.NuSVC, svm.SVR, svm.NuSVR, svm.OneClassSVM):
        raise ValidationError(f"estimator must be SVC, NuSVC, SVR, NuSVR or OneClassSVM; got {kind.__name__}")
    if not hasattr(estimator, "support_"):
        raise ValidationError(f"estimator must be a fitted scikit-learn SVM; got an unfitted {kind.__name__}")
    kernel = _kernel(estimator)
    if kind is svm.OneClassSVM:
        return OneClassSVM(X, kernel, nu=estimator.nu)
    if t is None:
        raise ValidationError(f"t must be the training targets for a {kind.__name__}; got None")
    if kind is svm.SVC or kind is svm.NuSVC:
        if len(estimator.classes_) != 2:
            raise ValidationError(f"estimator must be a two-class classifier; got {len(estimator.classes_)} classes")
        if kind is svm.NuSVC:
            return NuSVC(X, t, kernel, nu=estimator.nu)
        weights = dict(zip((-1.0, 1.0), estimator.class_weight_.tolist()))
        class_weight = None if np.allclose(estimator.class_weight_, 1.0) else weights
        return SoftMarginSVC(X, t, kernel, C=estimator.C, class_weight=class_weight, sample_weight=sample_weight)
    if kind is svm.SVR:
        return EpsilonSVR(X, t, kernel, C=estimator.C, epsilon=estimator.epsilon, sample_weight=sample_weight)
    N = np.asarray(X).shape[0]
    return NuSVR(X, t, kernel, C=estimator.C * N, nu=estimator.nu)


def from_sklearn(estimator: Any, X: ArrayLike, t: ArrayLike | None = None,
                 sample_weight: ArrayLike | None = None) -> Solution:
    """A fitted scikit-learn SVC, NuSVC, SVR, NuSVR or OneClassSVM as a Solution.

    Parameters
    ----------
    estimator : fitted scikit-learn SVM
    X : array (N, D)
        The training inputs the estimator was fitted on.
    t : array (N,), optional
        The training targets (needed for the classifiers and regressors); for
        the classifiers, labels -1 and +1.
    sample_weight : array (N,), optional
        The weights given to ``fit`` (SVC and SVR), which set each point's box.

    Returns
    -------
    Solution
        method "libsvm", with all N multipliers in the notes' convention and
        w, xi, rho or epsilon recovered by the notes' formulas.
    """
    machine = machine_from_sklearn(estimator, X, t, sample_weight)
    _check_training_set(estimator, machine)
    coef = np.zeros(machine.N)
    coef[estimator.support_] = estimator.dual_coef_[0]
    z, b, rho = _notes_multipliers(estimator, machine, coef)
    info = {"solver": "LIBSVM", "method": "libsvm",
            "status": "optimal" if getattr(estimator, "fit_status_", 0) == 0 else "not converged",
            "iterations": int(np.sum(getattr(estimator, "n_iter_", 0))), "solve_time": float("nan")}
    return machine.solution_from_standard(z, info, rho=_libsvm_rho(machine, z, b, rho))


def _check_training_set(estimator: Any, machine: Machine) -> None:
    if estimator.shape_fit_[0] != machine.N:
        raise ValidationError(
            f"X must be the {estimator.shape_fit_[0]} training points the estimator was fitted on; got {machine.N}"
        )
    if machine.kernel.name != "precomputed" and not np.allclose(machine.X[estimator.support_], estimator.support_vectors_):
        raise ValidationError("X must be the training data the estimator was fitted on (its support vectors differ)")


def _notes_multipliers(est: Any, m: Machine, coef: np.ndarray) -> tuple[np.ndarray, float, float]:
    """(standard-form z, b, rho) from LIBSVM's coefficients."""
    b = float(est.intercept_[0])
    if isinstance(m, NuSVC):
        total = float(np.sum(np.abs(coef)))
        rho = m.nu / total
        return np.abs(coef) * rho, b * rho, rho
    if isinstance(m, SoftMarginSVC):
        return coef * m.t, b, float("nan")
    if isinstance(m, OneClassSVM):
        scale = 1.0 / (m.nu * m.N)
        return coef * scale, b * scale, -b * scale
    return np.concatenate([np.maximum(coef, 0.0), np.maximum(-coef, 0.0)]), b, float("nan")


def _libsvm_rho(machine: Machine, z: np.ndarray, b: float, rho: float) -> RhoEstimate:
    """LIBSVM's own intercept (and nu-SVC's rho); nu-SVR's epsilon, which scikit-learn
    does not keep, is recovered from the free multipliers."""
    if isinstance(machine, NuSVC):
        return RhoEstimate(-b, rho)
    if isinstance(machine, NuSVR):
        r = machine.recover_rho(z, machine.kernel_times(machine.aggregate(z))).r
        return RhoEstimate(-b, r)
    return RhoEstimate(-b)


def solve_with_libsvm(machine: Machine, tol: float = 1e-8, cache_size: float = 200.0) -> Solution:
    """Fit scikit-learn's LIBSVM twin of ``machine`` and return its Solution (``from_sklearn``)."""
    from sklearn import svm

    k = machine.kernel
    params: dict[str, Any] = {"kernel": k.name, "tol": tol, "cache_size": cache_size}
    for name in ("gamma", "degree", "coef0"):
        if hasattr(k, name):
            params[name] = getattr(k, name)
    if isinstance(machine, NuSVC):
        est = svm.NuSVC(nu=machine.nu, **params)
    elif isinstance(machine, SoftMarginSVC):
        est = svm.SVC(C=machine.C, class_weight=machine.class_weight, **params)
    elif isinstance(machine, EpsilonSVR):
        est = svm.SVR(C=machine.C, epsilon=machine.epsilon, **params)
    elif isinstance(machine, NuSVR):
        est = svm.NuSVR(C=machine.C / machine.N, nu=machine.nu, **params)
    elif isinstance(machine, OneClassSVM):
        est = svm.OneClassSVM(nu=machine.nu, **params)
    else:
        raise ValidationError(
            f"machine must have a LIBSVM twin (C-SVC, nu-SVC, epsilon-SVR, nu-SVR, one-class); got {machine.name}"
        )
    weights = getattr(machine, "sample_weight", None)
    start = time.perf_counter()
    if isinstance(machine, OneClassSVM):
        est.fit(machine.X)
    else:
        est.fit(machine.X, machine.t, sample_weight=weights)
    seconds = time.perf_counter() - start
    return replace(from_sklearn(est, machine.X, machine.t, weights), solve_time=seconds)
