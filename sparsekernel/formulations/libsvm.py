"""LIBSVM's answers, through scikit-learn, in the notes' convention; names no machine.

A machine with a LIBSVM twin declares it (``Machine.libsvm_twin``, the class
name in ``sklearn.svm``) and three conversions, each in its own module:

- ``libsvm_params()``: the twin's hyperparameters for this machine (LIBSVM's
  units: nu-SVR's C is the notes' C / N);
- ``from_libsvm(estimator, X, t, kernel, sample_weight)``: the machine a fitted
  twin solved;
- ``libsvm_multipliers(coef, intercept)``: the notes' standard-form z and
  LIBSVM's rho from scikit-learn's ``dual_coef_`` (spread over all N points)
  and ``intercept_``.

scikit-learn keeps ``dual_coef_`` for the support vectors only, in LIBSVM's
scaling; ``from_sklearn`` rebuilds the full multiplier vector for all N
points and undoes the rescalings by those declarations.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..errors import SolverError, ValidationError, ignored
from ..validation import check_param
from ..kernels import Kernel, make_kernel
from ..sparse import same_rows, to_dense
from .machine import Machine
from .solution import Solution

__all__ = ["from_sklearn", "machine_from_sklearn", "from_fitted", "machine_from_fitted", "solve_with_libsvm",
           "twin_class", "machine_class_of", "machine_for_twin"]


def _registry() -> dict[str, type[Machine]]:
    from . import MACHINES

    return MACHINES


def machine_class_of(estimator: Any) -> type[Machine]:
    """The registered machine whose LIBSVM twin is the estimator's class (scikit-learn's own)."""
    name = type(estimator).__name__
    twins = sorted(c.libsvm_twin for c in _registry().values() if c.libsvm_twin)
    if not type(estimator).__module__.startswith("sklearn") or name not in twins:
        raise ValidationError(f"estimator must be SVC, NuSVC, SVR, NuSVR or OneClassSVM; got {name}")
    return machine_for_twin(name)


def machine_for_twin(name: str) -> type[Machine]:
    """The registered machine whose LIBSVM twin is scikit-learn's class ``name``."""
    for cls in _registry().values():
        if cls.libsvm_twin == name:
            return cls
    twins = sorted(c.libsvm_twin for c in _registry().values() if c.libsvm_twin)
    raise ValidationError(f"name must be one of scikit-learn's SVMs {twins}; got {name!r}")


def twin_class(machine: Machine) -> type:
    """scikit-learn's estimator class that solves ``machine`` with LIBSVM."""
    from sklearn import svm

    if machine.libsvm_twin is None:
        twins = sorted(c.name for c in _registry().values() if c.libsvm_twin)
        raise ValidationError(f"machine must have a LIBSVM twin ({', '.join(twins)}); got {machine.name}")
    return getattr(svm, machine.libsvm_twin)


def _kernel(est: Any) -> Kernel:
    if callable(est.kernel):
        raise ValidationError(f"estimator.kernel must be a named kernel; got the callable {est.kernel!r}")
    return make_kernel(est.kernel, gamma=float(getattr(est, "_gamma", 1.0)), degree=int(est.degree),
                       coef0=float(est.coef0))


def machine_from_sklearn(estimator: Any, X: ArrayLike, t: ArrayLike | None = None,
                         sample_weight: ArrayLike | None = None) -> Machine:
    """The machine a fitted scikit-learn SVM solved, with the notes' hyperparameters.

    ``sample_weight`` is the one given to ``fit`` (positive weights: scikit-learn drops the others).
    """
    cls = machine_class_of(estimator)
    if not hasattr(estimator, "support_"):
        raise ValidationError(f"estimator must be a fitted scikit-learn SVM; got an unfitted {type(estimator).__name__}")
    if cls.task != "novelty" and t is None:
        raise ValidationError(f"t must be the training targets for a {type(estimator).__name__}; got None")
    if cls.task == "classification" and len(estimator.classes_) != 2:
        raise ValidationError(f"estimator must be a two-class classifier; got {len(estimator.classes_)} classes")
    params = dict(estimator.get_params())
    class_weight = getattr(estimator, "class_weight_", None)
    params["class_weight"] = (None if class_weight is None or np.allclose(class_weight, 1.0)
                              else dict(zip((-1.0, 1.0), class_weight.tolist())))
    return cls.from_libsvm(X, t, _kernel(estimator), params, sample_weight)


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
        The (positive) weights given to ``fit``, which set each point's box.

    Returns
    -------
    Solution
        method "libsvm", with all N multipliers in the notes' convention and
        w, xi, rho or epsilon recovered by the notes' formulas; certified at the
        tolerance matched to the estimator's own ``tol`` (twice it, relative:
        ``solve.libsvm_relative_tol``): status "optimal" where its KKT conditions
        hold there, else "inaccurate" with a ConvergenceWarning and its report.
    """
    from .solve import certify, libsvm_relative_tol, matched_tol

    machine, sol = _uncertified(estimator, X, t, sample_weight)
    tol = matched_tol(machine, "libsvm", libsvm_relative_tol(machine, float(getattr(estimator, "tol", 1e-3))))
    converged = getattr(estimator, "fit_status_", 0) == 0
    detail = (f"the fitted {type(estimator).__name__}'s answer (fit_status_ {getattr(estimator, 'fit_status_', 0)}"
              f"{'' if converged else ': not converged'}) is certified at twice its tol")
    return certify(machine, sol, "inaccurate", "dual", "LIBSVM", tol, detail)


def _uncertified(estimator: Any, X: ArrayLike, t: ArrayLike | None,
                 sample_weight: ArrayLike | None) -> tuple[Machine, Solution]:
    """``from_sklearn``'s machine and Solution before its certificate (``solve_with_libsvm`` certifies
    the twin's answer at the tolerance it asked for)."""
    machine = machine_from_sklearn(estimator, X, t, sample_weight)
    _check_training_set(estimator, machine)
    coef = np.zeros(machine.N)
    coef[estimator.support_] = to_dense(estimator.dual_coef_)[0]      # sparse when fitted on a sparse X
    z, rho = machine.libsvm_multipliers(coef, float(estimator.intercept_[0]))
    info = {"solver": "LIBSVM", "method": "libsvm",
            "status": "optimal" if getattr(estimator, "fit_status_", 0) == 0 else "not converged",
            "iterations": int(np.sum(getattr(estimator, "n_iter_", 0))), "solve_time": float("nan")}
    return machine, machine.solution_from_standard(z, info, rho=rho)


def _fitted_kernel(est: Any, X: Any) -> Kernel:
    """The kernel of a scikit-learn-like estimator: ``kernel`` a name, ``_gamma`` (scikit-learn's
    resolved gamma) or ``gamma`` a number, 'scale' (1 / (D var X)) or 'auto' (1 / D)."""
    name = getattr(est, "kernel", "rbf")
    if callable(name) or name not in ("linear", "poly", "rbf", "sigmoid"):
        raise ValidationError(f"estimator.kernel must be 'linear', 'poly', 'rbf' or 'sigmoid'; got {name!r}")
    gamma = getattr(est, "_gamma", getattr(est, "gamma", "scale"))
    if isinstance(gamma, str):
        if gamma not in ("scale", "auto"):
            raise ValidationError(f"estimator.gamma must be a positive number, 'scale' or 'auto'; got {gamma!r}")
        from ..sparse import variance

        D = X.shape[1]
        gamma = 1.0 / D if gamma == "auto" else 1.0 / (D * float(variance(X)))
    return make_kernel(name, gamma=float(gamma), degree=int(getattr(est, "degree", 3)),
                       coef0=float(getattr(est, "coef0", 0.0)))


def _fitted_targets(estimator: Any, cls: type[Machine], y: ArrayLike | None) -> Any:
    """The machine's targets: for a classifier t = +1 for ``classes_[1]`` and -1 for ``classes_[0]``
    (scikit-learn's order: the sorted labels), else y as it is."""
    if cls.task == "novelty":
        return None
    if y is None:
        raise ValidationError(f"y must be the training targets for a {type(estimator).__name__}; got None")
    if cls.task == "regression":
        return y
    y = np.asarray(y).ravel()
    classes = np.asarray(getattr(estimator, "classes_", np.unique(y)))
    if classes.shape[0] != 2 or not np.all(np.isin(y, classes)):
        raise ValidationError(f"y must hold the estimator's two classes {classes.tolist()}; got labels "
                              f"{np.unique(y)[:10].tolist()}")
    return np.where(y == classes[1], 1.0, -1.0)


def machine_from_fitted(estimator: Any, X: ArrayLike, y: ArrayLike | None = None, *, kind: str | None = None,
                        sample_weight: ArrayLike | None = None) -> Machine:
    """The machine that a fitted scikit-learn-like SVM solved (see ``from_fitted`` for what is assumed)."""
    kind = type(estimator).__name__ if kind is None else kind
    cls = machine_for_twin(kind)
    missing = [a for a in ("support_", "dual_coef_", "intercept_") if not hasattr(estimator, a)]
    if missing:
        raise ValidationError(f"estimator must be a fitted SVM with scikit-learn's attributes; got a "
                              f"{type(estimator).__name__} without {missing}")
    params = {k: getattr(estimator, k, None) for k in ("C", "nu", "epsilon")}
    class_weight = getattr(estimator, "class_weight_", None)
    params["class_weight"] = (None if class_weight is None or np.allclose(class_weight, 1.0)
                              else dict(zip((-1.0, 1.0), np.asarray(class_weight, dtype=float).tolist())))
    t = _fitted_targets(estimator, cls, y)
    return cls.from_libsvm(X, t, _fitted_kernel(estimator, X), params, sample_weight)


def from_fitted(estimator: Any, X: ArrayLike, y: ArrayLike | None = None, *, kind: str | None = None,
                sample_weight: ArrayLike | None = None) -> Solution:
    """Any fitted SVM that exposes scikit-learn's attributes (ThunderSVM, cuML, your own) as a Solution.

    ``from_sklearn`` for estimators that are not scikit-learn's own; nothing the estimator says
    about its own convergence is trusted: ``duality.check(machine, solution)`` certifies it.

    What is assumed of the estimator (scikit-learn's conventions, which LIBSVM-based libraries keep):

    - its class name, or ``kind``, is the scikit-learn class it mirrors: ``"SVC"``, ``"NuSVC"``,
      ``"SVR"``, ``"NuSVR"`` or ``"OneClassSVM"``;
    - ``support_`` (n_SV,) are the indices of the support vectors in X; ``dual_coef_`` (1, n_SV),
      dense or sparse, holds LIBSVM's coefficients y_n alpha_n (alpha_n - alpha*_n for
      regression, alpha_n for one-class), in LIBSVM's scaling (nu-SVC's divided by its r,
      one-class summing to nu N); ``intercept_`` (1,) is -rho, so that the decision value is
      sum_n dual_coef_n k(x, x_n) + intercept_;
    - for a classifier, two classes, ``classes_`` sorted, positive decision values for
      ``classes_[1]`` (scikit-learn flips LIBSVM's two-class signs to have this);
    - ``kernel`` is 'linear', 'poly', 'rbf' or 'sigmoid' with ``gamma`` (or scikit-learn's resolved
      ``_gamma``; 'scale' and 'auto' as scikit-learn computes them), ``degree`` and ``coef0``;
    - the hyperparameters ``C``, ``nu``, ``epsilon`` are attributes in LIBSVM's units (nu-SVR's C is
      the notes' C / N); ``class_weight_`` (n_classes,), if present, the per-class factors on C.

    Parameters
    ----------
    estimator : fitted estimator
    X : array or sparse matrix (N, D)
        The training inputs it was fitted on.
    y : array (N,), optional
        The training labels (any two, mapped by ``classes_``) or targets; None for one-class.
    kind : str, optional
        The scikit-learn class it mirrors, where its own class name is not that.
    sample_weight : array (N,), optional
        The positive weights given to its ``fit``.

    Returns
    -------
    Solution
        method ``"libsvm"``, solver the estimator's class name, status ``"given"``; the missing
        nu-SVR epsilon recovered by the notes' formulas.
    """
    machine = machine_from_fitted(estimator, X, y, kind=kind, sample_weight=sample_weight)
    support = np.asarray(estimator.support_, dtype=np.intp).ravel()
    dual = np.asarray(to_dense(estimator.dual_coef_), dtype=np.float64)
    if dual.ndim != 2 or dual.shape[0] != 1 or dual.shape[1] != support.shape[0]:
        raise ValidationError(f"estimator.dual_coef_ must have shape (1, {support.shape[0]}) (a two-class or "
                              f"single problem); got {dual.shape}")
    if support.size and (support.min() < 0 or support.max() >= machine.N):
        raise ValidationError(f"estimator.support_ must index the {machine.N} rows of X; got {support.max()}")
    if hasattr(estimator, "support_vectors_") and machine.kernel.name != "precomputed" and not same_rows(
            machine.X[support], to_dense(estimator.support_vectors_)):
        raise ValidationError("X must be the training data the estimator was fitted on (its support vectors differ)")
    coef = np.zeros(machine.N)
    np.add.at(coef, support, dual[0])
    intercept = float(np.asarray(estimator.intercept_, dtype=np.float64).ravel()[0])
    return machine.solution(coef, rho=-intercept, convention="libsvm", solver=type(estimator).__name__)


def _check_training_set(estimator: Any, machine: Machine) -> None:
    if estimator.shape_fit_[0] != machine.N:
        raise ValidationError(
            f"X must be the {estimator.shape_fit_[0]} training points the estimator was fitted on; got {machine.N}"
        )
    if machine.kernel.name != "precomputed" and not same_rows(machine.X[estimator.support_], estimator.support_vectors_):
        raise ValidationError("X must be the training data the estimator was fitted on (its support vectors differ)")


def solve_with_libsvm(machine: Machine, tol: float = 1e-8, cache_size: float = 200.0,
                      max_iter: int | None = None) -> Solution:
    """Fit scikit-learn's LIBSVM twin of ``machine`` and return its certified Solution.

    ``tol`` is relative, as every method's (``formulations.solve``): LIBSVM is
    given ``tol * libsvm_scale * qp.tol_scale`` in its own gradient units, and
    its answer (``from_sklearn``'s) is certified at ``matched_tol(machine, "libsvm", tol)``.
    ``max_iter`` caps LIBSVM's iterations (None: LIBSVM's own cap, max(1e7, 100 N); scikit-learn's
    -1 would let a tolerance its float kernel values cannot reach run for ever).

    LIBSVM computes its gradients from float32 kernel rows (its cache): where their rounding
    (``cache_rounding``) is not far below the certificate's tolerance, an answer that fails it is
    "inaccurate" with a ConvergenceWarning that says so, not a SolverError (a 60-point epsilon-SVR
    failed at 1.1e-6 of 1e-6, and its Gram matrix rounded to float32 beforehand passed at 2e-9).
    """
    from .solve import OUTPUT_ERROR_SHARE, certify, matched_tol

    tol = float(check_param("tol", tol))
    machine.warn_if_not_convex("LIBSVM")
    est, seconds = fit_twin(machine, tol, cache_size, max_iter)
    weights = getattr(machine, "sample_weight", None)
    sol = replace(_uncertified(est, machine.X, machine.t, weights)[1], solve_time=seconds)
    outcome = "solved" if getattr(est, "fit_status_", 0) == 0 else "inaccurate"
    certificate_tol = matched_tol(machine, "libsvm", tol)
    rounding = cache_rounding(machine, sol)
    detail = None
    if outcome == "solved" and machine.convex is not False and rounding > OUTPUT_ERROR_SHARE * certificate_tol:
        outcome = "inaccurate"
        detail = (f"LIBSVM reported 'optimal' on the dual of {machine.name}, but it computes its gradients from "
                  f"float32 kernel values (its cache), whose rounding (up to {rounding:.1e} of the output scale: "
                  f"sum |coef| times 2^-24 max k(x, x)) is not far below the tolerance")
    return certify(machine, sol, outcome, "dual", "LIBSVM", certificate_tol, detail)


def cache_rounding(machine: Machine, solution: Solution) -> float:
    """A bound on the rounding of LIBSVM's outputs sum_m coef_m k(x_n, x_m), relative to the output
    scale: LIBSVM's cache holds kernel values as float32 (``Qfloat``), each within 2^-24 of max k(x, x)."""
    unit = float(np.finfo(np.float32).eps) / 2.0
    return float(np.abs(solution.coef).sum()) * unit * machine.kernel_diagonal_max / machine.output_scale


def _no_answer(machine: Machine, twin: str, exc: Exception) -> str:
    """The SolverError's message for a LIBSVM fit that raised: the machine's own cause of a non-finite
    answer first where it has one (scikit-learn's words blame large input values whatever the cause)."""
    cause = machine.libsvm_no_answer() if "finite" in str(exc) else ""
    if not cause:
        return f"LIBSVM (scikit-learn's {twin}) gave no answer on the dual of {machine.name}: {exc}"
    return (f"LIBSVM (scikit-learn's {twin}) gave no finite answer on the dual of {machine.name}: {cause}. "
            f"Solve it with method 'smo' or a cvxpy solver, which return the optimum (scikit-learn said: {exc})")


def fit_twin(machine: Machine, tol: float, cache_size: float = 200.0,
             max_iter: int | None = None) -> tuple[Any, float]:
    """scikit-learn's LIBSVM twin of ``machine`` fitted at the relative ``tol`` (in LIBSVM's units
    ``tol * libsvm_scale * qp.tol_scale``), and the seconds the fit took; uncertified."""
    from .solve import libsvm_own_tol

    k = machine.kernel
    own_tol = libsvm_own_tol(machine, tol)
    # LIBSVM counts its iterations in a C int: a cap beyond INT_MAX (scikit-learn's OverflowError 'value too
    # large to convert to int' at 2**31) caps nothing more than INT_MAX does
    cap = (max(10_000_000, 100 * machine.N) if max_iter is None
           else min(int(check_param("max_iter", max_iter)), int(np.iinfo(np.intc).max)))
    cache_size = float(check_param("cache_size", cache_size, "cache_mb"))
    params: dict[str, Any] = {"kernel": k.name, "tol": own_tol, "cache_size": cache_size, "max_iter": cap}
    for name in ("gamma", "degree", "coef0"):
        if hasattr(k, name):
            params[name] = getattr(k, name)
    est = twin_class(machine)(**params, **machine.libsvm_params())
    weights = getattr(machine, "sample_weight", None)
    start = time.perf_counter()
    with ignored("Solver terminated early"):       # scikit-learn's own warning at the cap: certify issues ours
        try:
            if machine.t is None:
                est.fit(machine.X, sample_weight=weights)
            else:
                est.fit(machine.X, machine.t, sample_weight=weights)
        except ValueError as exc:        # e.g. coefficients that are not finite, on kernel values that overflow
            raise SolverError(_no_answer(machine, type(est).__name__, exc), status="error", solver="LIBSVM") from exc
    return est, time.perf_counter() - start
