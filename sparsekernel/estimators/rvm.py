"""scikit-learn estimators over the relevance vector machine: RVR, RVC and PoissonRVR.

The basis functions are kernels centred on the training points (7.78) plus an
optional bias, fitted by evidence maximisation (``solvers.rvm``).
``__init__`` only stores hyperparameters; ``fit`` validates, works and
returns ``self``; fitted state ends in ``_``.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from ..kernels import Kernel, check_finite_predictions
from ..solvers.rvm.certificate import evidence_report, laplace_report
from ..sparse import check_sparse_matrix, issparse
from ..validation import (check_dense_targets, check_finite, check_matrix, check_real_dtype, check_real_targets,
                          check_same_length, quoted)
from ..errors import ConvergenceWarning, SparseInputError, ValidationError
from ..solvers.rvm import (
    moderated_log_probabilities,
    moderated_logits,
    moderated_probabilities,
    predictive_distribution,
    rvm_classification,
    rvm_poisson,
    rvm_regression,
)
from ..solvers.rvm.checks import check_target_scale
from ..solvers.rvm.design import estimator_design, estimator_kernel
from ..solvers.rvm.poisson import COUNTS, check_counts
from ._fit_state import kept_on_failure
from .multiclass import check_no_missing_labels, class_labels

__all__ = ["RVR", "RVC", "PoissonRVR", "RVMEstimatorBase", "LaplaceRVMBase"]

Array = NDArray[np.float64]
_NO_Y = "no_validation"          # validate_data's own default: X alone


def _validated(estimator: BaseEstimator, X: ArrayLike, y: ArrayLike = _NO_Y, reset: bool = True,
               **options) -> Array | tuple[Array, NDArray]:
    """``validate_data`` (float64 X, n_features_in_ and feature names set or checked), its ValueErrors
    raised as ValidationErrors naming X and y (scikit-learn's own words kept after them), and every entry
    of X finite (``validation.check_matrix``: the index of the first NaN or inf), none of it text (numbers written
    as text, which validate_data parses, are refused by ``validation.check_real_dtype``). A scipy.sparse X is kept
    sparse (CSR: the kernels take its rows by sparse products, as the SVMs' do), but a sparse precomputed Gram
    matrix is refused with a SparseInputError (a ValidationError and a TypeError) naming X, as the SVMs refuse it
    (the kernel given as "precomputed" or as ``Precomputed()``; at prediction, the fitted one: ``_kernel_name``)."""
    sparse = issparse(X)
    if sparse and _kernel_name(estimator, fitted=not reset) == "precomputed":
        raise SparseInputError(f"X must be a dense Gram matrix for {type(estimator).__name__} with "
                               f"kernel='precomputed'; got a scipy.sparse matrix of shape {X.shape} (pass "
                               f"X.toarray())")
    if y is not _NO_Y:
        check_dense_targets(y, "y")
    try:
        out = validate_data(estimator, X, y, reset=reset, dtype=np.float64, ensure_all_finite=False,
                            accept_sparse="csr", **options)
    except ValidationError:
        raise
    except ValueError as exc:
        _check_finite_first(X)      # a NaN or inf named with its index, before a width of another fit's
        what = "X (2-D, a row per sample, real numbers)" + ("" if y is _NO_Y else " and y (one target per row of X)")
        raise ValidationError(f"{what} must be valid input for {type(estimator).__name__}; got: {quoted(exc)}") from exc
    if not sparse:
        check_real_dtype(X, "X", "a 2-D array of real numbers")     # numbers as text, which validate_data parses
    checked = check_matrix(out if y is _NO_Y else out[0], "X", sparse=sparse)    # CSR, its entries finite
    return checked if y is _NO_Y else (checked, out[1])



def _check_finite_first(X: ArrayLike) -> None:
    """A 2-D float X holding a NaN or inf refused as such (``validation.check_finite``, or for a scipy.sparse X
    ``sparse.check_sparse_matrix``: its index) where ``validate_data`` failed: its width check comes before the
    finite check of ``_validated``, so a precomputed test block with a NaN and another width than the fit's Gram
    matrix was refused for its width alone ('X has 3 features, but RVR is expecting 10'), failing scikit-learn's
    check_estimators_nan_inf, which the SVMs pass (their ``_input_error`` names the NaN first, dense or sparse)."""
    if issparse(X):
        if X.ndim == 2 and np.asarray(X.data).dtype.kind == "f":
            check_sparse_matrix(X, "X")
        return
    try:
        A = np.asarray(X)
    except (TypeError, ValueError):
        return
    if A.ndim == 2 and A.dtype.kind == "f":
        check_finite(A, "X")


def _kernel_name(estimator: BaseEstimator, fitted: bool = False) -> str | None:
    """The name of an RVM's kernel: ``kernel_.name`` where ``fitted`` and the estimator is fitted (a kernel
    set by ``set_params`` since takes effect at the next fit), else the parameter's: the string given, a
    Kernel's ``name`` (``Precomputed()`` is "precomputed", as the SVMs read it), "callable" for a function.
    Comparing the parameter with "precomputed" missed ``Precomputed()``: its Gram matrix rows were kept as
    relevance vectors, and predict raised numpy's matmul ValueError."""
    kernel = getattr(estimator, "kernel_", None) if fitted else None
    kernel = getattr(estimator, "kernel", None) if kernel is None else kernel
    if kernel is None or isinstance(kernel, str):
        return kernel
    return kernel.name if isinstance(kernel, Kernel) else "callable"


def _certificate_tol(tol: float) -> float:
    """The tolerance of a fit's certificate: ten times ``tol``, at least 0.01 nats, and finite (ten times a
    ``tol`` above a tenth of the largest double is inf, which the certificate refused as 'tol must be a
    positive finite number; got inf', a value the user never gave, after the whole fit)."""
    return min(max(10 * tol, 1e-2), np.finfo(np.float64).max)


def _warn_if_uncertified(estimator: Any, converged: bool) -> None:
    """A ConvergenceWarning where the solver reported convergence and the certificate (``report_``, recomputed
    on its own factorisation at ten times tol) fails: at an extreme noise floor (1e-300 on noise-free
    targets) the two disagreed, and the fit was returned as converged without a word."""
    report = estimator.report_
    if converged and not report.ok:
        warnings.warn(f"{type(estimator).__name__} reported convergence, but its certificate fails at tol "
                      f"{report.tol:g} (the largest gain of one move: {report.largest_gain:.3g} nats; report_ says "
                      f"which check fails): the fit is not certified", ConvergenceWarning, stacklevel=3)


class RVMEstimatorBase(BaseEstimator):
    """Shared helpers of ``RVR`` and ``RVC`` (the hyperparameters live in their ``__init__``)."""

    def _kernel_and_design(self, X: Array):
        kernel = estimator_kernel(self.kernel, self.gamma, self.degree, self.coef0, X)
        design, pool = estimator_design(kernel, X, self.cache_mb)
        return kernel, design, pool

    def _store(self, X: Array, kernel, result) -> None:
        self.kernel_ = kernel
        self.relevance_vectors_ = np.asarray(result.relevance)
        self.bias_used_ = bool(result.bias_used)
        self.alpha_ = np.asarray(result.alpha)
        self.mean_ = np.asarray(result.mean)
        self.covariance_ = np.asarray(result.covariance)
        self.log_evidence_ = np.asarray(result.log_evidence)
        self.n_iter_ = int(result.iterations)
        self.all_pruned_ = bool(result.all_pruned)
        self.beta_ = float(result.beta)
        self.result_ = result
        precomputed = kernel.name == "precomputed"      # the fitted kernel: "precomputed" or Precomputed()
        self.X_relevance_ = None if precomputed else X[self.relevance_vectors_].copy()

    def _relevant_columns(self, X: ArrayLike) -> Array:
        """Kernel values k(x, x_i) of test points against the relevance vectors, (n_test, R)."""
        check_is_fitted(self)
        X = _validated(self, X, reset=False)
        if self.X_relevance_ is None:    # the fitted kernel is precomputed (a kernel set since: the next fit's)
            return X[:, self.relevance_vectors_]
        if self.X_relevance_.shape[0] == 0:
            return np.zeros((X.shape[0], 0))
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused below, in words
            columns = np.asarray(self.kernel_(X, self.X_relevance_))
        return check_finite_predictions(self.kernel_, columns, X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = _kernel_name(self) == "precomputed"      # the parameter's, as scikit-learn's
        tags.input_tags.sparse = _kernel_name(self) != "precomputed"
        return tags


class LaplaceRVMBase(RVMEstimatorBase):
    """The hyperparameters of the RVMs fitted under the Laplace approximation (``RVC``, ``PoissonRVR``)."""

    def __init__(
        self,
        *,
        kernel="rbf",
        gamma="scale",
        degree=3,
        coef0=0.0,
        method="fast",
        bias=True,
        alpha_max=1e9,
        tol=1e-3,
        max_iter=None,
        alpha_init=1.0,
        cache_mb=256,
    ):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.method = method
        self.bias = bias
        self.alpha_max = alpha_max
        self.tol = tol
        self.max_iter = max_iter
        self.alpha_init = alpha_init
        self.cache_mb = cache_mb


class RVR(RegressorMixin, RVMEstimatorBase):
    """Relevance vector regression (section 7.2.1).

    Parameters
    ----------
    kernel : {"rbf", "linear", "poly", "sigmoid", "precomputed"} or Kernel
        Basis functions k(x, x_n); no positive definiteness is needed.
    gamma : "scale", "auto" or float
        Kernel coefficient, as in scikit-learn ("scale": 1 / (n_features X.var())).
    degree, coef0 : polynomial and sigmoid kernel parameters.
    method : {"fast", "mackay", "em"}
        Evidence maximisation: Algorithm 7.2, (7.87)-(7.88), or EM.
    bias : bool
        Add the constant basis function.
    alpha_max, tol, max_iter, beta_init, noise_floor, hyperprior, restarts, alpha_init :
        as in ``solvers.rvm.rvm_regression`` (``alpha_init``: where MacKay and
        EM start; the fast method ignores it).
    cache_mb : float
        Memory for kernel values: the N x N Gram matrix is stored when it
        fits, otherwise kernel columns are computed on demand and the fast
        method keeps as many candidate columns as fit (more only when the
        model itself keeps that many functions). Its top-down starts then run
        over those candidates alone, so a cache too small for the Gram matrix
        can end at another maximum of the evidence (report_ certifies each).
        MacKay's and EM's fits, finished by the fast steps over those
        candidates, can move slightly too (EM on 300 points at 0.05 MB:
        predictions 0.018 apart, the evidence 0.02 nats).

    Attributes
    ----------
    relevance_vectors_ : int array (R,)
        Indices of the training points kept.
    bias_used_ : bool
    alpha_ : array (R + bias_used_,)
        Precisions of the kept weights (bias first).
    beta_ : float
        Noise precision.
    mean_, covariance_ : posterior of the kept weights (7.82)-(7.83).
    log_evidence_ : array
        (7.85) at each state the fit kept (each step of the fast method's last
        run, each iteration of MacKay's and EM's); the last is the fit's.
    n_iter_ : int
    all_pruned_ : bool
        The evidence pruned every basis function, the bias included (``result_.all_pruned``; an
        ``AllPrunedWarning`` says so): the model is empty, or with ``bias=True`` keeps the bias as a
        placeholder at alpha = ``alpha_max`` in the solver's units (targets of unit variance, columns of
        unit mean square; ``alpha_`` is in the caller's): at the default 1e9 its weight is near 0. A fit that keeps
        the bias alone at a finite alpha (constant targets: no kernel function, the bias their mean) is
        not all-pruned: ``relevance_vectors_`` is empty there and ``all_pruned_`` False.
    X_relevance_ : array (R, n_features) or None (precomputed kernel)
    kernel_ : Kernel
    result_ : solvers.rvm.RVMRegression
    report_ : solvers.rvm.certificate.EvidenceReport
        The fit's certificate (``solvers.rvm.evidence_report`` at ten times ``tol``, at least 0.01 nats):
        the largest gain of (7.85) one move of Algorithm 7.2 (a re-estimate, deletion or addition, or beta
        to its fixed point) would still make at the returned alpha and beta, and (7.85) recomputed there;
        a fit reported converged whose certificate fails warns (ConvergenceWarning). ``str`` is a table.
    """

    def __init__(
        self,
        *,
        kernel="rbf",
        gamma="scale",
        degree=3,
        coef0=0.0,
        method="fast",
        bias=True,
        alpha_max=1e9,
        tol=1e-3,
        max_iter=None,
        beta_init=None,
        noise_floor=1e-6,
        hyperprior=None,
        restarts=5,
        alpha_init=1.0,
        cache_mb=256,
    ):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.method = method
        self.bias = bias
        self.alpha_max = alpha_max
        self.tol = tol
        self.max_iter = max_iter
        self.beta_init = beta_init
        self.noise_floor = noise_floor
        self.hyperprior = hyperprior
        self.restarts = restarts
        self.alpha_init = alpha_init
        self.cache_mb = cache_mb

    def fit(self, X: ArrayLike, y: ArrayLike) -> "RVR":
        """Fit the RVM to (X, y); returns self."""
        with kept_on_failure(self):
            X, y = _validated(self, X, y, y_numeric=True)
            y = check_target_scale(check_real_targets(y, "y"), "y")
            kernel, design, pool = self._kernel_and_design(X)
            result = rvm_regression(
                design,
                y,
                self.method,
                bias=self.bias,
                alpha_max=self.alpha_max,
                tol=self.tol,
                max_iter=self.max_iter,
                beta_init=self.beta_init,
                noise_floor=self.noise_floor,
                hyperprior=self.hyperprior,
                restarts=self.restarts,
                alpha_init=self.alpha_init,
                pool_size=pool,
            )
            self._store(X, kernel, result)
            # the certificate: the largest evidence gain one move would still make (solvers.rvm.certificate)
            self.report_ = evidence_report(design, y, result, tol=_certificate_tol(self.tol),
                                           noise_floor=self.noise_floor, hyperprior=self.hyperprior,
                                           alpha_max=self.alpha_max, bias=self.bias)
            _warn_if_uncertified(self, result.converged)
            return self

    def predict(self, X: ArrayLike, return_std: bool = False):
        """Predictive mean (7.90), and with ``return_std`` the standard deviation from (7.91)."""
        if not (isinstance(return_std, (bool, np.bool_)) or (isinstance(return_std, (int, np.integer))
                                                               and return_std in (0, 1))):
            raise ValidationError(f"return_std must be True or False (or 1 or 0); got {return_std!r}")
        columns = self._relevant_columns(X)
        mean, var = predictive_distribution(self.result_, columns)
        return (mean, np.sqrt(var)) if return_std else mean


class RVC(ClassifierMixin, LaplaceRVMBase):
    """Relevance vector classification (section 7.2.3), any labels, softmax for K > 2.

    Probabilities use the probit approximation to the moderated output,
    sigma(kappa(s^2) mu) with kappa(s^2) = (1 + pi s^2 / 8)^(-1/2) (Bishop
    4.153-4.155); for K > 2 classes, the same for each pair of classes (an
    approximation, see ``solvers.rvm.moderated_probabilities``).
    ``decision_function`` returns the moderated logit for two classes and the
    log of these probabilities otherwise, so that it ranks points as
    ``predict_proba`` does.

    Parameters
    ----------
    kernel, gamma, degree, coef0, method, bias, alpha_max, tol, max_iter, alpha_init, cache_mb :
        as for ``RVR`` (``tol`` on one move of the effective problem at the mode; ``rvm_classification``).

    Attributes
    ----------
    classes_ : array (K,)
    relevance_vectors_, bias_used_, n_iter_, all_pruned_,
    X_relevance_, kernel_ : as for ``RVR``.
    log_evidence_ : array
        The Laplace evidence (7.114) at each state the fit kept, not one per iteration as RVR's (7.85)
        (measured on 100 points: the fast method kept 4 to 9 states over 313 to 611 iterations, EM 21 to 92
        over 61 to 178); the last is the fit's, as ``report_`` recomputes it.
    alpha_, mean_ : arrays (R + bias_used_, O), O = 1 for two classes, K otherwise.
        For K > 2 a function may be kept for some classes only: its alpha is inf and its weight 0
        in the others (the rows and columns of ``covariance_`` for those pairs are 0).
    covariance_ : array (O (R + bias_used_), same)
    beta_ : float
        nan (no noise precision in classification).
    result_ : solvers.rvm.RVMClassification
    report_ : solvers.rvm.certificate.EvidenceReport
        The certificate: at the returned alpha and mode, the largest gain (nats)
        one move of Algorithm 7.2 would still make on the effective problem
        (7.117)-(7.119) (``laplace_report``); ``str`` is a table, ``to_json`` the same.
        A pass certifies a fixed point of that linearised problem (B and the
        mode held fixed), not a maximum of the Laplace evidence (7.114), which
        may still rise when the mode moves with alpha (the rows beyond the
        verdict measure by how much: up to 6.2 nats for one gradient step on
        the benchmark's cells).
    """

    def fit(self, X: ArrayLike, y: ArrayLike) -> "RVC":
        """Fit the RVM classifier to (X, y); returns self."""
        with kept_on_failure(self):
            check_no_missing_labels(y)              # None, NaN or pandas.NA in y, named before validate_data
            X, y = _validated(self, X, y)
            self.classes_, labels = class_labels(y)
            kernel, design, _ = self._kernel_and_design(X)
            result = rvm_classification(
                design,
                labels,
                self.method,
                bias=self.bias,
                alpha_max=self.alpha_max,
                tol=self.tol,
                max_iter=self.max_iter,
                alpha_init=self.alpha_init,
            )
            self._store(X, kernel, result)
            # the certificate on the effective problem (7.117)-(7.119) at the mode (solvers.rvm.certificate)
            self.report_ = laplace_report(design, labels, result, tol=_certificate_tol(self.tol), bias=self.bias)
            _warn_if_uncertified(self, result.converged)
            return self

    def decision_function(self, X: ArrayLike) -> Array:
        """The moderated logit kappa(s^2) mu, (n,), for two classes; log ``predict_proba``, (n, K), otherwise, as
        ``predict_log_proba`` forms it (finite where a probability rounds to 0: np.log of ``predict_proba`` gave
        -inf there)."""
        columns = self._relevant_columns(X)
        mu, var = self.result_.latent(columns)
        if mu.shape[1] == 1:
            return moderated_logits(mu, var)[:, 0]
        return moderated_log_probabilities(mu, var)

    def predict_proba(self, X: ArrayLike) -> Array:
        """Predictive class probabilities, (n, K), columns in the order of ``classes_``."""
        columns = self._relevant_columns(X)
        mu, var = self.result_.latent(columns)
        return moderated_probabilities(mu, var)

    def predict_log_proba(self, X: ArrayLike) -> Array:
        """The log of ``predict_proba``, (n, K), formed in logs (``solvers.rvm.moderated_log_probabilities``):
        finite and accurate where a probability rounds to 0 or 1."""
        columns = self._relevant_columns(X)
        mu, var = self.result_.latent(columns)
        return moderated_log_probabilities(mu, var)

    def predict(self, X: ArrayLike) -> NDArray:
        """The class of largest predictive probability."""
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]


class PoissonRVR(RegressorMixin, LaplaceRVMBase):
    """Relevance vector regression of counts: the Poisson RVM with a log link.

    y_n ~ Poisson(exp(w^T phi(x_n))), phi(x) = (1, k(x, x_1), ..., k(x, x_N))
    with the ARD prior (7.80), fitted as the classification RVM is: the
    Laplace approximation at the IRLS mode (7.109)-(7.114) and Algorithm 7.2
    on the effective problem (7.117)-(7.119) (``solvers.rvm.rvm_poisson``).
    ``predict`` returns the rate at the posterior mode, exp(w*^T phi(x))
    (Tipping's prediction at w_MP, as scikit-learn's ``PoissonRegressor``
    predicts at its weights), the median of the rate under the Laplace
    posterior; ``score`` is scikit-learn's R^2 of it. The Laplace posterior
    mean exp(mu + sigma^2 / 2) is ``result_.rate(columns)``: where the counts
    are 0 over a region, the evidence is highest with the weights there at
    -inf, the Laplace variance is the prior's, and that mean overflows (inf
    on training points of rate 0) though the mode's rate is near 0.

    Parameters
    ----------
    kernel, gamma, degree, coef0, method, bias, alpha_max, tol, max_iter, alpha_init, cache_mb :
        as for ``RVR`` (``tol`` on one move of the effective problem at the mode; ``rvm_classification``).

    Attributes
    ----------
    relevance_vectors_ : int array (R,)
        Indices of the training points kept.
    bias_used_ : bool
    alpha_ : array (R + bias_used_,)
        Precisions of the kept weights (bias first).
    mean_ : array (R + bias_used_,)
        Mode w* of the weights' posterior (7.112).
    covariance_ : array (R + bias_used_, R + bias_used_)
        Laplace covariance (Phi^T diag(exp(Phi w*)) Phi + A)^-1 (7.113).
    log_evidence_ : array
        The Laplace evidence (7.114) at each state the fit kept (the fast
        method keeps a state per block of steps that raised it); the last is
        the fit's.
    n_iter_, all_pruned_, X_relevance_, kernel_ : as for ``RVR``.
    beta_ : float
        nan (no noise precision in the Poisson model).
    result_ : solvers.rvm.RVMPoisson
    report_ : solvers.rvm.certificate.EvidenceReport
        The fit's certificate (``solvers.rvm.laplace_report`` at ten times ``tol``, at least 0.01 nats):
        the largest gain one move of Algorithm 7.2 would still make on the effective problem at the
        Laplace mode, found again from the returned alpha; a fit reported converged whose certificate
        fails warns (ConvergenceWarning).

    Raises
    ------
    ValidationError
        From ``fit`` when ``y`` holds a negative, non-integer, NaN or
        infinite count.
    """

    def fit(self, X: ArrayLike, y: ArrayLike) -> "PoissonRVR":
        """Fit the Poisson RVM to (X, y), y counts; returns self."""
        with kept_on_failure(self):
            if y is None:
                raise ValidationError(f"y must be {COUNTS}; got None ({type(self).__name__} requires y to be passed, "
                                      "but the target y is None)")
            X = _validated(self, X)
            check_dense_targets(y, "y")
            y = np.asarray(y)
            if y.ndim == 2 and y.shape[1] != 1:
                raise ValidationError(f"y must be a 1-D array of shape (n_samples,); got shape {y.shape}")
            # a column warns, as in scikit-learn
            y = check_counts(column_or_1d(y, warn=True) if y.ndim == 2 else y, "y")
            check_same_length(X, y, "X", "y")
            kernel, design, _ = self._kernel_and_design(X)
            result = rvm_poisson(design, y, self.method, bias=self.bias, alpha_max=self.alpha_max, tol=self.tol,
                                 max_iter=self.max_iter, alpha_init=self.alpha_init)
            self._store(X, kernel, result)
            # the certificate on the effective problem (7.117)-(7.119) at the mode, as RVC's
            self.report_ = laplace_report(design, y, result, tol=_certificate_tol(self.tol), bias=self.bias)
            _warn_if_uncertified(self, result.converged)
            return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.positive_only = True        # counts, as scikit-learn's PoissonRegressor declares
        return tags

    def predict(self, X: ArrayLike) -> Array:
        """The rate at the posterior mode at X, exp(w*^T phi(x)), (n,) (the class docstring says why not
        the Laplace posterior mean)."""
        columns = self._relevant_columns(X)
        return self.result_.mode_rate(columns)
