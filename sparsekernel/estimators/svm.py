"""scikit-learn estimators over the SVM machines: SVC, NuSVC, SVR, NuSVR, OneClassSVM.

They take scikit-learn's parameters with scikit-learn's meaning (so that they
drop into pipelines and grid searches in place of ``sklearn.svm``), plus
``solver``: ``"smo"`` (the default) or any ``Machine.solve`` method
(``"clarabel"``, ``"osqp"``, ``"primal-clarabel"``, ``"qp-clarabel"``,
``"qp-osqp"``). Where LIBSVM scales a machine differently from the notes,
the estimator follows LIBSVM, so that its numbers are scikit-learn's: NuSVC's
decision values are the notes' divided by rho, OneClassSVM's are the notes'
times nu N, and NuSVR's ``C`` is the notes' C divided by N. The notes' own
dual, all N multipliers, is ``dual_``; the KKT report of each solve is
``kkt_report_``; the machines' Solutions are ``solutions_``.

Multiclass classification is one-versus-one as in LIBSVM (a machine for each
pair i < j, t = +1 for class i), with ``decision_function_shape`` "ovo" (the
pairwise values) or "ovr" (votes plus a confidence term bounded by 1/3, as
scikit-learn computes it). ``predict`` is LIBSVM's vote, a tie going to the
lowest class index; with ``break_ties=True`` (and "ovr") it is the argmax of
``decision_function``, as in scikit-learn. With ``probability=True``, Platt's
sigmoid (7.43) is fitted per pair on five-fold cross-validated decision
values (seeded by ``random_state``), pairs are coupled by Wu, Lin and Weng's
method, and the result is projected onto the decision function's ranking, so
``predict_proba`` never ranks the classes differently from
``decision_function``.

The fit API is scikit-learn's (``fit(X, y, sample_weight)`` on all five, a zero
or negative weight leaving its sample out; ``coef_`` for the linear kernel;
callable kernels; ``C=inf``; the fitted attributes in LIBSVM's layout, shapes
and dtypes). What differs from ``sklearn.svm``, and why:

- ``solver`` is added, and the fitted ``dual_``, ``kkt_report_``,
  ``solutions_`` (``solution_``), ``machines_`` (``machine_``), ``pairs_``:
  the notes' own answer and its certificate are what this library is for.
  The fitted estimator keeps the support vectors once (``support_vectors_``,
  from which every pair predicts, as LIBSVM does) and a reference to the
  training X (no copy when X is float64), from which a classifier's
  ``machines_`` are built again on first use, so that
  ``duality.check(est.machines_[k], est.solutions_[k])`` can be repeated.
  Its CRC-32 is taken at fit: where the caller has changed that array in place
  since, ``machines_`` (``machine_``) raises ValidationError rather than
  describe another problem than the one solved (prediction reads the
  support vectors' own copy, and is unaffected).
- ``verbose`` is accepted and prints nothing: library code does not print
  (LIBSVM's trace is its own solver's).
- ``predict_proba``'s most probable class is that of ``decision_function``
  (``predict`` with ``break_ties=True``), where scikit-learn's may disagree
  with both; its Platt folds are stratified where each class of a pair has two
  points (LIBSVM's plain shuffled folds otherwise), so the probabilities are
  close to scikit-learn's, not equal.
- A pair's decision value of exactly 0 is a vote for the pair's second class in ``predict``,
  ``decision_function`` "ovr" and ``break_ties`` alike, as LIBSVM's own vote counts it (a value
  above 0 for the first); scikit-learn's "ovr" values count it for the first class, so that there
  its ``break_ties`` prediction can differ from its own ``predict``.
- With zero or negative sample weights ``support_`` indexes the X given to
  ``fit`` (scikit-learn's indexes the rows of positive weight only). A class
  whose every point has weight 0 is refused (a ValidationError naming
  sample_weight and the class): scikit-learn keeps it in ``classes_`` and
  fits the others, and no pair machine can be trained against it.
- With a callable kernel ``support_vectors_`` holds the support vectors (the
  kernel is called on them at prediction), where scikit-learn keeps the whole
  training X privately and leaves ``support_vectors_`` empty; X must be numeric.
- A kernel whose Gram matrix is not positive semidefinite (the sigmoid, a
  callable or precomputed one) is solved by the SMO as LIBSVM solves it, with
  one ``errors.NonConvexWarning`` per fit: the dual is not convex, so the answer
  is a KKT point (``kkt_report_`` certifies it as one, status "kkt_point"),
  which need not be the optimum nor LIBSVM's KKT point; the cvxpy and direct-QP
  ``solver`` values refuse it, naming the smallest eigenvalue.
- ``support_vectors_`` is read-only (its rows are shared with what the
  machines read); scikit-learn's is a writeable copy.
- Where the intercept is not unique (no multiplier strictly inside its box, in
  a class for the nu forms), every b of an interval is optimal and ours is its
  midpoint (``standard_qp.calculate_rho``). LIBSVM takes the midpoint too, but
  it counts a multiplier left within rounding of its bound (8e-16) as free,
  and b is then that point's, an end of the interval: predictions can differ
  from scikit-learn's on such problems (a class of one point with
  ``class_weight="balanced"``; NuSVR at small C and nu), while both answers
  pass the same KKT certificate. Ask for both at a smaller C, or compare
  ``duality.check`` of each.
- ``NuSVC`` refuses a fit whose margin rho is (numerically) 0, naming nu: its
  decision values are the notes' divided by rho, which scikit-learn returns
  as they fall (inf or arbitrary signs).
- ``max_iter=-1`` leaves LIBSVM's own cap of max(10^7, 100 N) steps per solve
  (``solvers.smo.DEFAULT_MAX_ITER``), as LIBSVM itself does; a solve stopped
  there whose answer fails its certificate warns ``ConvergenceWarning`` and is
  "inaccurate".
- ``gamma=0``, ``degree=0`` (a constant kernel), ``max_iter=0`` and a NaN in
  ``sample_weight``, which scikit-learn lets through, are refused: nothing
  sensible is fitted from them.
- Bad input raises ``errors.ValidationError`` (a ``ValueError``, as
  scikit-learn's) naming the argument, the domain and the value; an infeasible
  nu raises ``errors.InfeasibleError`` (a ``ValueError`` too) with its bound; ``C=inf`` on data that
  are not separable raises ``InfeasibleError`` with the proof (the classes'
  convex hulls meet), where LIBSVM iterates until ``max_iter`` (without end at
  the default -1); ``gamma="scale"`` on X whose variance overflows names X.
"""

from __future__ import annotations

import contextlib
import copy
import numbers
import warnings
from typing import Any, Callable, Iterator, Mapping

import numpy as np
import scipy.sparse
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, ClassifierMixin, OutlierMixin, RegressorMixin
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, validate_data

from ..validation import (
    check_dense_targets, check_matrix, check_param, check_real_dtype, check_real_targets, check_target_layout, fail,
    quoted,
)
from ..errors import (
    ConvergenceWarning, InfeasibleError, InputTypeError, NonConvexWarning, SolverError, ValidationError, collected, warn,
)
from ..formulations import Machine, Solution
from ..formulations.libsvm import machine_for_twin
from ..formulations.machine import kernel_means
from ..formulations.solve import solve
from .. import sparse
from .._threads import limit_blas
from ..kernels import Kernel, check_finite_predictions, make_kernel
from ._fit_state import kept_on_failure
from .multiclass import check_no_missing_labels, class_labels, libsvm_dual_coef, one_versus_one_coef, one_versus_one_pairs, votes, votes_and_confidences
from .probability import MIN_PROBABILITY, Sigmoid, consistent_with, couple, fit_platt

__all__ = ["SVC", "NuSVC", "SVR", "NuSVR", "OneClassSVM"]

Array = NDArray[np.float64]
#: scikit-learn's callable kernel: k(X, Y) -> Gram matrix (len(X), len(Y))
KernelFunction = Callable[[Array, Array], ArrayLike]
KERNELS = ("linear", "poly", "rbf", "sigmoid", "precomputed")
#: sparse formats accepted for X (kept sparse, as CSR, through the fit; not for a precomputed kernel)
SPARSE = ("csr", "csc")
#: rows of X per kernel block at prediction (the block is PREDICT_BLOCK x n_SV)
PREDICT_BLOCK = 2048
#: ``shared_test_kernel`` holds K(X_test, X_train) for a path's models when it has at most this many entries.
SHARED_TEST_ENTRIES = 1 << 23


class _BaseSVM(BaseEstimator):
    """Kernel construction, validation and solving shared by the five estimators.

    Each estimator declares its LIBSVM twin (``_twin``, the name in
    ``sklearn.svm``, which the machine in ``formulations`` declares too) and
    the hyperparameters it hands to that machine (``_machine_params``, whose
    domains ``validation.DOMAINS`` holds); ``make_machine`` builds the machine
    of one binary or regression problem from them, and ``_fit_machine`` is the
    one path from a machine to its solution and KKT report.
    """

    _twin: str = ""
    _machine_params: tuple[str, ...] = ()

    def make_machine(self, X: Array, t: Array | None, weight: Array | None, kernel: Kernel) -> Machine:
        """The machine this estimator solves on (X, t) with per-point weights (None: none).

        Override it to fit another machine (a subclass of ``formulations.Machine``)
        through this estimator's fit, predict and probability code.
        """
        params = {name: getattr(self, name) for name in self._machine_params}
        return machine_for_twin(self._twin).from_libsvm(X, t, kernel, params, weight)

    def _check_params(self) -> None:
        """The parameters' checks as a fit begins; the kernel's name recorded for the model it fits."""
        self._check_common()
        for name in self._machine_params:
            value = getattr(self, name)
            if not self._accepts(name, value):
                try:
                    check_param(name, value)
                except ValidationError:
                    if self._accepts(name, np.inf):      # the message's domain is then this estimator's
                        raise fail(name, "a positive finite number or inf (the hard margin)", value) from None
                    raise
        self._fitted_kernel_name = self._kernel_name
        self._fitted_machine_params = {name: getattr(self, name) for name in self._machine_params}

    def _accepts(self, name: str, value: Any) -> bool:
        """Values outside ``validation.DOMAINS`` that this estimator takes (SVC: C = inf)."""
        return False

    def _fit_machine(self, machine: Machine, cache: Any = None) -> tuple[Solution, Any]:
        """Solve ``machine``; its KKT report is the solve's certificate (at the tolerance matched to
        the method and ``tol``, ``formulations.solve.matched_tol``), computed once. ``cache``: the
        SMO's kernel rows, filled already (``_pair_cache``), or None."""
        if hasattr(self, "_convexity"):                  # inside _warned_once: counted for its one warning
            self._convexity.append((machine.convex, machine.eigenvalue_range))
        sol = self._solve(machine, cache)
        return sol, sol.report

    @contextlib.contextmanager
    def _warned_once(self) -> Any:
        """Around a fit: the machines' NonConvexWarnings (one per pair and Platt fold) become one,
        naming how many of the fit's problems are not convex and the smallest eigenvalue; their
        ConvergenceWarnings (a solve that ended inaccurate) become one, as LIBSVM's one warning per fit,
        quoting the first; any other warning is issued as it is raised. The solves' two kinds are gathered
        on this thread (``errors.collected``), the process's warnings filters untouched: fits in several
        threads at once each merge their own."""
        self._convexity: list[tuple[bool | None, tuple[float, float] | None]] = []
        self._solves = 0
        with collected(NonConvexWarning, ConvergenceWarning) as caught:
            yield
        inaccurate = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
        bad = [lam for convex, lam in self._convexity if convex is False]
        total, solves = len(self._convexity), self._solves
        del self._convexity, self._solves
        if bad:
            warnings.warn(
                f"the kernel matrix of {len(bad)} of the {total} problems of this fit is not positive "
                f"semidefinite (smallest eigenvalue {min(lam[0] for lam in bad):.3e}): the dual is not convex, "
                f"and the solver's answer is a KKT point, not a certified optimum (kkt_report_ says so), as "
                f"LIBSVM's is", NonConvexWarning, stacklevel=4)
        if len(inaccurate) == 1:
            warnings.warn(inaccurate[0].message, ConvergenceWarning, stacklevel=4)
        elif inaccurate:
            warnings.warn(
                f"{len(inaccurate)} of the {solves} solves of this fit ended inaccurate (their reports are in "
                f"kkt_report_); the first: {inaccurate[0].message}", ConvergenceWarning, stacklevel=4)

    def _check_common(self) -> None:
        if not (callable(self.kernel) or (isinstance(self.kernel, str) and self.kernel in KERNELS)):
            raise fail("kernel", f"one of {list(KERNELS)}, a Kernel or a callable k(X, Y) -> Gram matrix",
                       self.kernel)
        if not (self.gamma in ("scale", "auto") or (_number(self.gamma) and 0 < self.gamma < np.inf)):
            raise fail("gamma", "'scale', 'auto' or a positive finite number", self.gamma)
        check_param("degree", self.degree)
        check_param("coef0", self.coef0)
        check_param("tol", self.tol)
        check_param("cache_size", self.cache_size, "cache_mb")
        if not (self.max_iter == -1 or (_number(self.max_iter, numbers.Integral) and self.max_iter > 0)):
            raise fail("max_iter", "-1 (no limit) or a positive integer", self.max_iter)
        if not (isinstance(self.verbose, (bool, np.bool_))
                or (_number(self.verbose, numbers.Integral) and self.verbose >= 0)):
            # scikit-learn's domain (it prints nothing here, but a value scikit-learn refuses is no setting)
            raise fail("verbose", "True, False or a non-negative integer", self.verbose)
        if not isinstance(self.solver, str):
            raise fail("solver", "'smo' or a Machine.solve method name", self.solver)

    @property
    def _kernel_name(self) -> str:
        """The kernel's name: the string given, a Kernel's ``name``, or "callable"."""
        if isinstance(self.kernel, str):
            return self.kernel
        return self.kernel.name if isinstance(self.kernel, Kernel) else "callable"

    @property
    def _fit_kernel_name(self) -> str:
        """The kernel's name as of the last fit (``_check_params`` records it as a fit begins), the
        parameter's before any fit: a kernel set by ``set_params`` after a fit takes effect at the next
        fit, as every other parameter does; prediction meanwhile reads the fitted model's (a Gram matrix
        for a precomputed one), not half of each."""
        return self.__dict__.get("_fitted_kernel_name", self._kernel_name)

    @property
    def _precomputed(self) -> bool:
        return self._fit_kernel_name == "precomputed"

    @property
    def coef_(self) -> Array:
        """w in input space for the linear kernel, read-only: (n_pairs, n_features) for the
        classifiers (pair k's decision value is X @ coef_[k] + intercept_[k]), else (1, n_features);
        a CSR matrix when the estimator was fitted on a sparse X, as scikit-learn's.

        Raises AttributeError for any other kernel, as scikit-learn does.
        """
        if self._fit_kernel_name != "linear":
            raise AttributeError("coef_ is only available when using a linear kernel")
        check_is_fitted(self)
        coef = one_versus_one_coef(self._fitted_layout(self._pair_coef, self.support_vectors_), self.support_vectors_)
        (coef.data if sparse.issparse(coef) else coef).flags.writeable = False    # CSR after a sparse fit
        return coef

    @staticmethod
    def _fitted_layout(coef: Array, X: Any) -> Any:
        """``dual_coef_`` as scikit-learn keeps it: a CSR matrix when X was sparse, else the array."""
        return scipy.sparse.csr_matrix(coef) if sparse.issparse(X) else coef

    def _make_kernel(self, X: Array) -> Kernel:
        if isinstance(self.kernel, Kernel) or callable(self.kernel) and not isinstance(self.kernel, str):
            return make_kernel(self.kernel)
        gamma = None if self.gamma == "scale" else (1.0 / X.shape[1] if self.gamma == "auto" else float(self.gamma))
        variance = None
        if gamma is None:                            # X's variance only where gamma is "scale"
            with np.errstate(over="ignore"):         # an overflowing variance is refused by make_kernel
                variance = sparse.variance(X)
        return make_kernel(self.kernel, gamma=gamma, degree=self.degree, coef0=self.coef0,
                           n_features=X.shape[1], X_var=variance)

    def _validate_X(self, X: ArrayLike, reset: bool) -> Array:
        X = _validated(self, X, _NO_Y, reset)
        X = check_matrix(X, "X", sparse=not self._precomputed)
        if self._precomputed and reset and X.shape[0] != X.shape[1]:
            raise ValidationError(f"X must be a square Gram matrix for kernel='precomputed'; got shape {X.shape}")
        if self._precomputed and not reset and X.shape[1] != self.shape_fit_[0]:
            raise ValidationError(
                f"X must be the cross-kernel matrix of shape (n, {self.shape_fit_[0]}); got shape {X.shape}"
            )
        return X

    def _solve(self, machine: Machine, cache: Any = None, tol: float | None = None,
               steps: int | None = None) -> Solution:
        """Solve by the estimator's solver; ``tol`` (default the estimator's) is LIBSVM's on a problem of
        unit output scale (its gradient units there; relative to ``machine.output_scale`` otherwise: README,
        "Tolerances"). Within ``fit_path`` the SMO starts from the previous solution of the same solve
        (``_path``; not for a given ``tol``, a cold solve); given ``cache``, it reads its kernel rows from
        there; ``steps`` caps the SMO's steps below ``max_iter``."""
        if hasattr(self, "_solves"):                     # inside _warned_once: counted for its one warning
            self._solves += 1
        if self.solver == "smo":
            max_iter = None if self.max_iter == -1 else int(self.max_iter)
            if steps is not None:
                max_iter = steps if max_iter is None else min(max_iter, steps)
            path = getattr(self, "_path", None) if tol is None else None
            along = {} if path is None else {"path": path, "path_key": path.slot()}
            if cache is not None:
                along["cache"] = cache
            return solve(machine, "smo", tol=self.tol if tol is None else tol, tol_units="libsvm",
                         shrinking=self.shrinking, cache_mb=self.cache_size, max_iter=max_iter, **along)
        return solve(machine, self.solver)

    #: The hyperparameters ``fit_path`` runs along (the first is its default).
    path_params: tuple[str, ...] = ("C",)

    def fit_path(self, X: ArrayLike, y: ArrayLike | None = None, values: ArrayLike = (), *,
                 param: str | None = None, sample_weight: ArrayLike | None = None) -> list["_BaseSVM"]:
        """Fitted copies of this estimator, one per value of ``param`` in ``values``: a warm-started
        regularisation path.

        The copies are fitted in increasing order of the value, each SMO solve starting from the
        solution of the same solve at the previous value, moved into the new box
        (``solvers.warm_start``), and reading the kernel rows that the previous solves computed (one
        row cache per solve, kept across the path within ``cache_size``). Each copy equals
        ``clone(self).set_params(**{param: value}).fit(X, y, sample_weight)`` to the tolerance
        ``tol``; where a warm solve's answer fails its certificate, that copy is the cold fit; with
        another ``solver``, or with ``max_iter`` set (a solve cut short stops where its steps from its
        start reached, so a warm start would end elsewhere than the cold fit), the copies are such cold fits;
        a path of one value is the plain fit.

        Parameters
        ----------
        X, y, sample_weight : as for ``fit`` (``y`` ignored by ``OneClassSVM``)
        values : sequence of real numbers, length >= 1
        param : str or None
            The hyperparameter the path runs along: ``C`` (SVC, SVR, NuSVR), ``nu`` (NuSVC, NuSVR,
            OneClassSVM) or ``epsilon`` (SVR); None: the first of these the estimator has.

        Returns
        -------
        list of estimators, fitted, in the order of ``values``.
        """
        from sklearn.base import clone

        from ..solvers.warm_start import RegularisationPath

        name = self.path_params[0] if param is None else param
        if name not in self.path_params:
            raise fail("param", f"None or one of {list(self.path_params)}", param)
        items = list(values) if np.ndim(values) == 1 else values
        domain = f"a non-empty sequence of real numbers (the values of {name} along the path)"
        try:
            grid = np.asarray(items, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise fail("values", domain, values) from exc
        if grid.ndim != 1 or grid.shape[0] == 0:
            raise fail("values", domain, values)
        # every value checked as its fit would check it, before the first solve: the fits run in increasing order,
        # and a bad value sorting last (NaN, a nu above 1) was refused only once the others had been fitted (six C
        # and a NaN on 2,000 points: 0.6 s of fits before the ValidationError)
        for value in items:
            clone(self).set_params(**{name: value})._check_params()
        # max_iter cuts a solve short where its steps from its start reached: only the cold start gives the cold fit;
        # one value has no other to start from or share rows with (and a kept cache fills the whole Gram matrix)
        walked = self.solver == "smo" and self.max_iter == -1 and grid.shape[0] > 1
        path = RegularisationPath(self.cache_size) if walked else None
        fitted: list[Any] = [None] * grid.shape[0]
        for k in np.argsort(grid, kind="stable"):
            try:
                fitted[k] = clone(self).set_params(**{name: items[k]})._fit_along(path, X, y, sample_weight)
            except SolverError:
                if path is None:
                    raise
                # a warm solve whose answer fails its certificate: the cold fit decides, as it would
                # without the path (a safeguard; the SMO itself checks a stop on float32 rows)
                fitted[k] = clone(self).set_params(**{name: items[k]}).fit(X, y, sample_weight=sample_weight)
        return fitted

    def _fit_along(self, path: Any, X: ArrayLike, y: ArrayLike | None,
                   sample_weight: ArrayLike | None) -> "_BaseSVM":
        """``fit`` with its SMO solves taken along ``path`` (None: a plain fit)."""
        if path is None:
            return self.fit(X, y, sample_weight=sample_weight)
        path.new_fit()
        self._path = path
        try:
            return self.fit(X, y, sample_weight=sample_weight)
        finally:
            del self._path

    def _rows(self, X: Array, index: NDArray[np.intp]) -> Array:
        """The inputs a sub-machine trained on ``index`` needs at prediction time."""
        return X[:, index] if self._precomputed else X

    def _keep_training_X(self, X: Any, machine: Machine | None = None) -> None:
        """Hold the training X by reference (``machines_``, ``machine_`` read it after fit) with its CRC-32:
        ``machine``'s, taken at its construction, where it was built on this very array (one pass over X
        for the two), else its own."""
        same = machine is not None and machine.X is X and machine.__dict__.get("_X_digest") is not None
        self._fit_X, self._fit_X_digest = X, (machine._X_digest if same else sparse.digest(X))

    def _check_training_X(self) -> None:
        """ValidationError where the training X held by reference has been changed in place since fit."""
        X = self.__dict__.get("_fit_X")
        if X is not None and sparse.digest(X) != self._fit_X_digest:
            raise ValidationError(
                f"X, the array this {type(self).__name__} was fitted on, has been changed in place since fit (its "
                f"CRC-32 differs): the fitted model holds it by reference, not a copy, and its machines would no "
                f"longer be the problem that was solved; fit again, or fit on a copy (fit(X.copy(), ...)) to "
                f"change X afterwards (prediction uses the support vectors' own copy and is unaffected)")

    @property
    def machine_(self) -> Machine:
        """The machine of a regression or one-class fit (the notes' problem on the points of positive
        weight), built at fit. Raises ValidationError where the training X it reads has been changed in
        place since fit; AttributeError on a classifier (``machines_``, one per pair) or before fit."""
        if "_machine" not in self.__dict__:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute 'machine_'")
        self._check_training_X()
        return self._machine

    def _sub(self, X: Array, index: NDArray[np.intp]) -> Array:
        """Training inputs of the points ``index`` (a Gram sub-block when precomputed); X itself,
        not a copy, when ``index`` is every point in order."""
        if index.shape[0] == X.shape[0] and np.array_equal(index, np.arange(X.shape[0])):
            return X
        return X[np.ix_(index, index)] if self._precomputed else X[index]

    def _shared_support_vectors(self, X: Array, support: NDArray[np.intp], sol: Solution,
                                local: NDArray[np.intp]) -> tuple[Array, Solution]:
        """``support_vectors_`` = X[support], read-only and shared with the solution (whose
        support is then ``local``, the same points in the same order): X's rows are kept once."""
        if self._precomputed:
            return np.empty((0, 0)), sol
        rows = sparse.read_only_rows(X, support)          # CSR when X is sparse, as scikit-learn's
        return rows, sol.evolve(support=local, support_vectors=rows)

    def _fit_one(self, X: Array, y: Array | None, sample_weight: ArrayLike | None) -> Solution:
        """The one machine of a regression or one-class fit, on the points of positive weight (the
        others drop out, as in LIBSVM); sets the fitted attributes the two share. The support is LIBSVM's,
        the points of non-zero coefficient (``_nonzero_support``)."""
        weight = None if sample_weight is None else _sample_weight(sample_weight, X.shape[0])
        index = np.arange(X.shape[0]) if weight is None else np.flatnonzero(weight > 0)
        kernel = self._make_kernel(X)
        machine = self.make_machine(self._sub(X, index), None if y is None else y[index],
                                    None if weight is None else weight[index], kernel)
        with self._warned_once():
            sol, self.kkt_report_ = self._fit_machine(machine)
        machine._drop_gram()                # its eigenvalue check's Gram matrix, not kept for the model's life
        sol = _nonzero_support(sol)
        self.shape_fit_ = X.shape
        self._machine, self._index = machine, index
        self._keep_training_X(X, machine)
        support = index[sol.support]
        self.support_ = support.astype(np.int32)
        self.support_vectors_, sol = self._shared_support_vectors(X, support, sol, sol.support)
        self.solution_ = sol
        self.n_support_ = np.array([support.shape[0]], dtype=np.int32)
        self.n_iter_ = int(sol.iterations)
        self.fit_status_ = _fit_status([sol])
        return sol

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self._kernel_name == "precomputed"      # the parameter's, as scikit-learn's
        tags.input_tags.sparse = self._kernel_name != "precomputed"
        return tags


def _nonzero_support(sol: Solution) -> Solution:
    """``sol`` with LIBSVM's support vectors, the points of non-zero coefficient (svm_train counts
    fabs(alpha) > 0): a regression point whose two multipliers cancel, a_n = a_hat_n > 0 (nu-SVR's tube
    closed to epsilon = 0, as on a constant y), is in the notes' support (a multiplier above its bound)
    but has coefficient a_n - a_hat_n = 0 in (7.64) and no term in y(x); ``sol`` itself where there is none."""
    keep = sol.coef[sol.support] != 0
    if keep.all():
        return sol
    rows = None if sol.support_vectors is None else sol.support_vectors[keep]
    note = "support: the points of non-zero coefficient a_n - a_hat_n (LIBSVM's support vectors)"
    return sol.evolve(support=sol.support[keep], support_vectors=rows, notes=(*sol.notes, note))


def _fit_status(solutions: list[Solution]) -> int:
    """scikit-learn's ``fit_status_``: 0 where every solve of the fit ended certified (optimal, or a KKT
    point of a dual that is not convex), 1 where one ended inaccurate (stopped at ``max_iter``, say; the
    fit's ConvergenceWarning says so), as LIBSVM's 1 for a solve it terminated early."""
    return int(any(sol.status == "inaccurate" for sol in solutions))


def _number(value: Any, kind: type = numbers.Real) -> bool:
    """``value`` is a number of ``kind`` and not a bool (no number in ``validation.DOMAINS``)."""
    return isinstance(value, kind) and not isinstance(value, (bool, np.bool_))


_NO_Y = "no_validation"          # validate_data's own default: X alone (a y of None is refused by it)


def _validated(estimator: Any, X: Any, y: Any, reset: bool, **options: Any) -> Any:
    """``validate_data(estimator, X[, y], reset=reset, dtype=float64, ensure_all_finite=False,
    accept_sparse=SPARSE, **options)``: X (and y where given), n_features_in_ and the feature names
    set or checked as it does.

    Its checks of X's type (pandas, narwhals, array API) cost about 140 us, a sixth of a fit at N =
    100. For the input it returns unchanged, a 2-D float64 ndarray with a row and a column, and where
    given a 1-D C-contiguous ndarray y of integers, booleans or finite floats of the same length
    (validate_data returns a view of such a y: the same values), the attributes
    are set here without them (no feature names: an ndarray has none); any other input, an
    estimator fitted with feature names, or a mismatch goes through ``validate_data``, for its
    conversions, warnings and messages (test_fast_validation checks that both agree); a ValueError of
    its checks is raised as a ValidationError naming the argument (``_input_error``), and an X of
    numbers written as text, which it parses, is refused (``validation.check_real_dtype``).
    """
    fast = (type(X) is np.ndarray and X.dtype == np.float64 and X.ndim == 2 and X.shape[0] > 0
            and X.shape[1] > 0)
    if fast and y is not _NO_Y:
        fast = (type(y) is np.ndarray and y.ndim == 1 and y.shape[0] == X.shape[0] and y.flags.c_contiguous
                and (y.dtype.kind in "iub" or (y.dtype.kind == "f" and bool(np.isfinite(y).all()))))
    if fast and reset:
        estimator.n_features_in_ = X.shape[1]
        if hasattr(estimator, "feature_names_in_"):
            del estimator.feature_names_in_
        return X if y is _NO_Y else (X, y)
    if fast and not hasattr(estimator, "feature_names_in_") and X.shape[1] == getattr(estimator, "n_features_in_", -1):
        return X if y is _NO_Y else (X, y)
    if y is not _NO_Y:
        check_dense_targets(y, "y")
    _refuse_np_matrix(X, y)
    try:
        out = validate_data(estimator, X, y, reset=reset, dtype=np.float64, ensure_all_finite=False,
                            accept_sparse=SPARSE, **options)
    except ValidationError:
        raise
    except ValueError as exc:
        raise _input_error(X, y, exc, options.get("y_numeric", False)) from exc
    if not sparse.issparse(X):
        check_real_dtype(X, "X", "a 2-D array of real numbers")     # numbers as text, which it parses
    return out


def _refuse_np_matrix(X: Any, y: Any) -> None:
    """An ``np.matrix`` X or y refused naming the argument (scikit-learn's TypeError, 'np.matrix is not
    supported. Please convert to a numpy array with np.asarray', names neither, for X or for y)."""
    for name, value, domain, cure in (("X", X, "a 2-D array or a scipy.sparse matrix", "np.asarray(X)"),
                                      ("y", y, "a 1-D array of shape (n_samples,)", "np.asarray(y).ravel()")):
        if isinstance(value, np.matrix):
            raise InputTypeError(f"{name} must be {domain}, not an np.matrix (which scikit-learn does not "
                                 f"support); got an np.matrix of shape {value.shape} (pass {cure})")


def _input_error(X: Any, y: Any, exc: ValueError, numeric: bool) -> ValidationError:
    """``validate_data``'s ValueError as a ValidationError naming the argument: where the checks of
    ``validation`` find the fault (X's dtype, dimensions, emptiness; y's dtype where it must be numeric,
    its dimensions, its length; a numeric y's NaN or inf, with its index), their message, with scikit-learn's
    words after it; otherwise scikit-learn's message as it is (a width or feature names that differ from
    the fit's, a y that is None: each names its argument already)."""
    try:
        A = check_matrix(X, "X", sparse=True)
        if y is not _NO_Y and y is not None:
            check_target_layout(y, A.shape[0], "y", numeric=numeric)
            if numeric:                           # a column y (one warning from scikit-learn) read as its entries
                check_real_targets(np.ravel(np.asarray(y)), "y")
    except ValidationError as named:
        return ValidationError(f"{named}; scikit-learn's check: {quoted(exc)}")
    return ValidationError(str(exc))


def _sample_weight(sample_weight: ArrayLike | None, n: int) -> Array:
    """Per-sample weights as scikit-learn takes them (ones when None): a zero or negative weight
    leaves its sample out (LIBSVM's ``remove_zero_weight``), so it comes back as 0."""
    if sample_weight is None:
        return np.ones(n)
    check_dense_targets(sample_weight, "sample_weight")      # a sparse one: np.asarray makes an object scalar
    check_real_dtype(sample_weight, "sample_weight", f"an array of {n} real numbers")    # complex: cut silently
    try:
        w = np.asarray(sample_weight, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise fail("sample_weight", f"an array of {n} real numbers", sample_weight) from exc
    if w.ndim != 1 or w.shape[0] != n:
        raise ValidationError(f"sample_weight must have shape ({n},), one weight per sample; got shape {w.shape}")
    if not np.all(np.isfinite(w)):
        raise ValidationError(f"sample_weight must be finite; got NaN or inf at index "
                              f"{int(np.flatnonzero(~np.isfinite(w))[0])}")
    w = np.where(w > 0, w, 0.0)
    if not np.any(w > 0):
        raise ValidationError("sample_weight must have at least one positive entry (zero and negative weights "
                              "leave their samples out); got none positive")
    return w


def _has_probability(estimator: Any) -> bool:
    if not estimator.probability:
        raise AttributeError("predict_proba is not available when probability=False")
    return True


class _ClassifierBase(ClassifierMixin, _BaseSVM):
    """One-versus-one binary machines, voting, Platt probabilities."""

    def _scale(self, sol: Solution) -> float:
        """Factor from the notes' decision values to LIBSVM's."""
        return 1.0

    #: whether class_weight multiplies the box (LIBSVM's nu-SVC ignores class weights)
    _class_weight_applies = True

    #: what ``machines_`` and ``solutions_`` build on first use and keep (each pair's machine holds a
    #: copy of its classes' rows), and a path's test kernel: left out of a pickle or a deep copy
    _REBUILT_ON_USE = ("_machines", "_full_solutions", "_held_test")

    def __getstate__(self) -> dict[str, Any]:
        state = dict(super().__getstate__())        # a copy: object's own is the live __dict__
        for name in self._REBUILT_ON_USE:
            state.pop(name, None)
        return state

    def _check_params(self) -> None:
        super()._check_params()
        if self.decision_function_shape not in ("ovr", "ovo"):
            raise fail("decision_function_shape", "'ovr' or 'ovo'", self.decision_function_shape)
        if not isinstance(self.break_ties, (bool, np.bool_)):
            raise fail("break_ties", "True or False", self.break_ties)
        if not isinstance(self.probability, (bool, np.bool_)):
            raise fail("probability", "True or False", self.probability)
        seed = self.random_state
        if not (seed is None or isinstance(seed, np.random.RandomState)
                or (isinstance(seed, numbers.Integral) and not isinstance(seed, (bool, np.bool_))
                    and 0 <= seed < 2**32)):
            raise fail("random_state", "None, an integer in [0, 2**32) or a numpy RandomState", seed)

    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> "_ClassifierBase":
        with kept_on_failure(self):
            self._check_params()
            for name in self._REBUILT_ON_USE:       # the previous fit's machines and solutions, not this fit's
                self.__dict__.pop(name, None)
            check_no_missing_labels(y)              # None, NaN or pandas.NA in y, named before validation
            X, y = _validated(self, X, y, True)
            X = check_matrix(X, "X", sparse=not self._precomputed)
            if self._precomputed and X.shape[0] != X.shape[1]:
                raise ValidationError(f"X must be a square Gram matrix for kernel='precomputed'; got shape {X.shape}")
            self.classes_, labels = class_labels(y)
            self.class_weight_ = self._class_weight_vector(y)
            weight = _sample_weight(sample_weight, X.shape[0])
            if self._class_weight_applies:
                weight = weight * self.class_weight_[labels]
            kernel = self._make_kernel(X)
            self.shape_fit_ = X.shape
            with self._warned_once(), limit_blas(self._pairs_blas_threads()):
                self._fit_pairs(X, labels, weight, kernel)
            self._sklearn_attributes(X, labels)
            return self

    def _class_weight_vector(self, y: Array) -> Array:
        """scikit-learn's ``class_weight_``: one weight per class of ``classes_`` (ones for None), each a
        positive finite number (``validation.DOMAINS``): a dict's weight multiplies C, and a zero, negative
        or NaN one is refused here, naming class_weight and the class, not the class's emptied pair."""
        cw = self.class_weight
        if cw is None:
            return np.ones(self.classes_.shape[0])
        if not (cw == "balanced" if isinstance(cw, str) else isinstance(cw, Mapping)):
            raise fail("class_weight", "None, 'balanced' or a dict {label: weight}", cw)
        try:
            weights = np.asarray(compute_class_weight(cw, classes=self.classes_, y=y), dtype=np.float64)
        except (TypeError, ValueError) as exc:       # a key that is no class of y, a weight that is no number
            raise fail("class_weight", f"None, 'balanced' or a dict {{label: weight}} over the classes of y "
                                       f"{self.classes_.tolist()}", cw) from exc
        for label, weight in zip(self.classes_.tolist(), weights.tolist()):
            check_param(f"class_weight[{label!r}]", weight, "class_weight")
        return weights

    def _pairs_blas_threads(self) -> int | None:
        """BLAS threads around the pairs of a multiclass SMO fit: the SMO's own limit, set once for
        the fit rather than once per pair (about 25 us each, 45 pairs on digits), which also holds for
        the class blocks' small products; None (unchanged) with Platt's probabilities, whose folds'
        decision values are products that more threads may speed up, as they did before."""
        from ..solvers.smo import BLAS_THREADS

        many = self.solver == "smo" and self.classes_.shape[0] > 2 and not self.probability
        return BLAS_THREADS if many else None

    def _pairs(self) -> list[tuple[int, int]]:
        return one_versus_one_pairs(self.classes_.shape[0])

    def _fit_pairs(self, X: Array, labels: NDArray[np.intp], weight: Array, kernel: Kernel) -> None:
        """One machine per pair (positive class, negative class), on its non-zero-weight points.

        Each machine is dropped once solved (its KKT report is kept): the fitted estimator holds
        the training X once, by reference, and ``machines_`` builds the pairs' machines from it
        again on first use."""
        self.pairs_, self._solutions, self._problems, self._index, reports = [], [], [], [], []
        self._sigmoids: list[Sigmoid] = []
        self._kernel = kernel
        groups = self._groups(labels, weight)
        blocks = self._group_blocks(X, groups, kernel)
        # a pair's inputs X[index] are its two classes' rows: where the pairs are small enough to share
        # class blocks of the kernel, gathered once per class and joined per pair (a copy of X meanwhile)
        class_rows = None if blocks is None else [X[g] for g in groups]
        for positive, negative in self._pairs():
            index = self._pair_index(labels, weight, groups, positive, negative)
            t = np.where(labels[index] == positive, 1.0, -1.0)
            for c, sign in ((positive, 1.0), (negative, -1.0)):
                if not (t == sign).any():
                    raise ValidationError("sample_weight must leave a positive weight in every class; got "
                                          f"zero weight on every point of class {self.classes_[c].tolist()!r}")
            if class_rows is None:
                points = self._sub(X, index)
            else:                           # X[index], the estimator's own: read-only, so the machine needs no digest
                points = np.concatenate([class_rows[positive], class_rows[negative]])
                points.flags.writeable = False
            machine, sol, report = self._solve_pair(points, t, weight[index], kernel, blocks, (positive, negative))
            self.pairs_.append((positive, negative))
            self._problems.append((t, weight[index]))
            self._solutions.append(sol if self._precomputed else sol.evolve(support_vectors=None))
            reports.append(report)
            self._index.append(index)
            if self.probability:
                self._sigmoids.append(self._platt(X, index, t, weight[index], kernel))
        self._keep_training_X(X, machine)            # a binary fit's one machine read X itself
        self.kkt_report_ = reports[0] if len(reports) == 1 else reports

    def _solve_pair(self, X: Array, t: Array, weight: Array, kernel: Kernel, blocks: Any,
                    pair: tuple[int, int]) -> tuple[Machine, Solution, Any]:
        """The machine of ``pair`` (positive, negative), its solution and KKT report. An InfeasibleError of either
        names, with more than two classes, the pair (whose bound, nu-SVC's 2 min(N_+, N_-)/N on its points, or
        separability, is not that of all the labels), and the parameter that asked for it (``_infeasible_hint``)."""
        try:
            machine = self.make_machine(X, t, weight, kernel)
            return (machine, *self._fit_machine(machine, self._pair_cache(blocks, machine, X, *pair)))
        except InfeasibleError as exc:
            where = "" if self.classes_.shape[0] == 2 else f", {self._pair_named(pair, t)}"
            if not where and not self._infeasible_hint():
                raise
            raise InfeasibleError(f"{exc}{where}{self._infeasible_hint()}") from exc

    def _infeasible_hint(self) -> str:
        """What of this estimator's parameters made a pair's problem infeasible, for its error ('' if none)."""
        return ""

    def _pair_named(self, pair: tuple[int, int], t: Array) -> str:
        """Which pair of classes a multiclass error is about, with their counts (``t``: the pair's +1 and -1)."""
        first, second = (self.classes_[c].tolist() for c in pair)
        return (f"on the pair of classes {first!r} ({int(np.sum(t > 0))} points) and {second!r} "
                f"({int(np.sum(t < 0))} points), which one-versus-one solves on their own points")

    def _pair_scales(self) -> list[float]:
        """``_scale`` of each pair's solution; with more than two classes, its ValidationError names the pair."""
        scales = []
        for pair, sol, (t, _) in zip(self.pairs_, self._solutions, self._problems):
            try:
                scales.append(self._scale(sol))
            except ValidationError as exc:
                if self.classes_.shape[0] == 2:
                    raise
                raise ValidationError(f"{exc}; {self._pair_named(pair, t)}") from exc
        return scales

    def _groups(self, labels: NDArray[np.intp], weight: Array) -> list[NDArray[np.intp]]:
        """Each class's points of positive weight, in X's order."""
        return [((labels == c) & (weight > 0)).nonzero()[0] for c in range(self.classes_.shape[0])]

    def _pair_index(self, labels: NDArray[np.intp], weight: Array, groups: list[NDArray[np.intp]],
                    positive: int, negative: int) -> NDArray[np.intp]:
        """A pair's points of positive weight: in X's order for two classes (the one pair's inputs are
        then X itself, not a copy); with more, the positive class's then the negative's, each in X's
        order (LIBSVM's grouping, whose pair matrices ``GroupBlocks`` assembles from class blocks)."""
        if self.classes_.shape[0] == 2:
            return (((labels == positive) | (labels == negative)) & (weight > 0)).nonzero()[0]
        return np.concatenate([groups[positive], groups[negative]])

    def _group_blocks(self, X: Array, groups: list[NDArray[np.intp]], kernel: Kernel) -> Any:
        """The class blocks of the kernel (``kernel_cache.GroupBlocks``) where each pair of a multiclass
        fit would compute its own whole Gram matrix (every pair within ``smo.SMALL_GRAM_POINTS``, its
        float64 rows within the cache's budget); None for two classes, another solver, a precomputed
        or other kernel, a sparse X, or within ``fit_path`` (whose caches are kept per pair)."""
        from ..solvers.kernel_cache import GroupBlocks, slots_for
        from ..solvers.smo import SMALL_GRAM_POINTS

        if (len(groups) < 3 or self.solver != "smo" or self._precomputed or not GroupBlocks.supports(kernel, X)
                or getattr(self, "_path", None) is not None):
            return None
        sizes = np.sort([g.size for g in groups])
        largest = int(sizes[-1] + sizes[-2])
        if largest > SMALL_GRAM_POINTS or slots_for(self._row_budget(), largest, np.float64) < largest:
            return None
        blocks = GroupBlocks(kernel, X, groups)
        # operands centred at the mean of every class's points whose products round beyond
        # ``kernel_cache.DIRECT_EXPONENT_ROUNDING`` (a class far from the others, or a large gamma): each pair's
        # own, centred at its own mean, round less. With a third class 1e4 away from two unit-spread ones at gamma
        # 300, the blocks' values for the near pair were off by 9.7e-8, the pair's own by 9e-13.
        return None if blocks.direct else blocks

    def _pair_cache(self, blocks: Any, machine: Machine, points: Array, positive: int, negative: int) -> Any:
        """The pair's SMO row cache filled from ``blocks``, where the machine's QP is the kernel on the
        inputs handed to it, one variable per point in their order, with no diagonal term (C-SVC and
        nu-SVC are; a machine of a ``make_machine`` override need not be); else None."""
        if blocks is None or machine.X is not points or machine.kernel != blocks.kernel:
            return None
        n = points.shape[0]
        cache = blocks.cache(positive, negative, points, self._row_budget())
        # a machine whose output_scale reads the kernel's means (nu-SVC's nu times the spread) takes them from the
        # pair's Gram matrix at hand, before its QP reads them: computed by the kernel again, they took half of a
        # ten-class nu-SVC fit (digits, RBF gamma 0.01 / 64: 0.94 of 1.92 s over five fits); C-SVC's unit is 1
        if type(machine).output_scale is not Machine.output_scale:
            machine.__dict__.setdefault("_kernel_means", kernel_means(cache.store[:n]))
        if not machine.standard_qp().reads_rows_of(blocks.kernel, points):
            return None
        # the certificate's bound on a kernel value's rounding is that of the blocks' operands, centred at the
        # mean of every class's points: the machine would compute it about the pair's own mean, which no value
        # here was computed from (and in a pass over the pair's inputs, 100 us a pair on digits)
        machine.__dict__["kernel_entry_error"] = blocks.entry_error(positive, negative)
        return cache

    def _row_budget(self) -> float:
        """The megabytes of the SMO's full kernel rows within ``cache_size`` (the rest holds its compact rows)."""
        from ..solvers.smo import COMPACT_SHARE

        return (1.0 - COMPACT_SHARE) * float(self.cache_size)

    @property
    def machines_(self) -> list[Machine]:
        """Each pair's machine (the notes' problem on its points), built again from the training X
        on first use and then kept. With more than two classes a pair's points are its first class's
        then its second's, each in X's order (LIBSVM's grouping); with two, X's points in order."""
        check_is_fitted(self)
        self._check_training_X()
        if "_machines" not in self.__dict__:
            as_fitted = self._as_fitted()
            self._machines = [as_fitted.make_machine(self._sub(self._fit_X, index), t, w, self._kernel)
                              for index, (t, w) in zip(self._index, self._problems)]
        return self._machines

    def _as_fitted(self) -> "_ClassifierBase":
        """A shallow copy of this estimator with its machines' hyperparameters (C, nu) as of the last fit: one set by
        ``set_params`` since takes effect at the next fit, as the kernel's does, and ``machines_`` are the problems
        that were solved (built from the new C, they failed the KKT check of the fitted ``solutions_``)."""
        return self._with_params(self.__dict__.get("_fitted_machine_params", {}))   # none in a pickle of before it

    def _with_params(self, params: Mapping[str, Any]) -> "_ClassifierBase":
        """A shallow copy of this estimator with ``params`` in place of its own (this one unchanged), whose
        ``make_machine`` (the class's, or an override) builds machines of those values."""
        other = copy.copy(self)
        other.__dict__.update(params)
        return other

    @property
    def solutions_(self) -> list[Solution]:
        """Each pair's Solution; its ``support_vectors`` are rows of ``support_vectors_``, copied on
        first use (prediction reads ``support_vectors_`` and ``dual_coef_`` alone)."""
        check_is_fitted(self)
        if "_full_solutions" not in self.__dict__:
            if self._precomputed:
                self._full_solutions = list(self._solutions)
            else:
                where = np.empty(self.shape_fit_[0], dtype=np.intp)     # a point's row in support_vectors_
                where[self.support_] = np.arange(self.support_.shape[0])
                self._full_solutions = [self._with_rows(where[index[sol.support]], sol) for index, sol in
                                        zip(self._index, self._solutions)]
        return self._full_solutions

    def _with_rows(self, position: NDArray[np.intp], sol: Solution) -> Solution:
        """A pair's Solution with its support vectors as rows of ``support_vectors_`` (``position``:
        each one's row), its support in their order: ``support_vectors_`` itself (shared, not copied)
        where the pair's support is the whole of it, as a binary problem's is."""
        order = np.argsort(position, kind="stable")
        whole = position.shape[0] == self.support_.shape[0]
        rows = self.support_vectors_ if whole else self.support_vectors_[position[order]]
        return sol.evolve(support=sol.support[order], support_vectors=rows)

    def _platt(self, X: Array, index: NDArray[np.intp], t: Array, weight: Array, kernel: Kernel) -> Sigmoid:
        """Platt's sigmoid on five-fold cross-validated decision values (LIBSVM's recipe)."""
        decision = np.zeros(t.shape[0])
        for train, test in self._platt_folds(t):
            if np.unique(t[train]).shape[0] < 2:          # LIBSVM: +1 or -1 for a one-class fold
                decision[test] = t[train][0]
                continue
            sub = index[train]
            machine = self._fold_machine(self._sub(X, sub), t[train], weight[train], kernel)
            sol = self._solve(machine)
            rows = X[np.ix_(index[test], sub)] if self._precomputed else X[index[test]]
            decision[test] = self._fold_values(sol, rows)
        return fit_platt(decision, t)

    def _fold_machine(self, X: Array, t: Array, weight: Array, kernel: Kernel) -> Machine:
        """The machine of a Platt fold's training part: the estimator's own (``make_machine``)."""
        return self.make_machine(X, t, weight, kernel)

    def _fold_values(self, sol: Solution, rows: Array) -> Array:
        """A Platt fold's decision values on its held-out ``rows``, in LIBSVM's scale."""
        return self._scale(sol) * sol.decision_function(rows)

    def _platt_folds(self, t: Array) -> list[tuple[NDArray[np.intp], NDArray[np.intp]]]:
        """Five folds (fewer on few points), stratified where both classes have two points; else
        LIBSVM's plain shuffled folds (it fits on any pair, down to one point per class)."""
        smallest = int(min(np.sum(t > 0), np.sum(t < 0)))
        if smallest >= 2:
            folds: Any = StratifiedKFold(n_splits=min(5, smallest), shuffle=True, random_state=self.random_state)
        else:
            folds = KFold(n_splits=min(5, t.shape[0]), shuffle=True, random_state=self.random_state)
        return list(folds.split(np.zeros(t.shape[0]), t))

    def _sklearn_attributes(self, X: Array, labels: NDArray[np.intp]) -> None:
        """support_, support_vectors_, n_support_, dual_coef_ (LIBSVM's layout), intercept_, n_iter_."""
        K = self.classes_.shape[0]
        N = X.shape[0]
        coef = np.zeros((len(self.pairs_), N))
        scales = self._pair_scales()
        for k, (index, sol) in enumerate(zip(self._index, self._solutions)):
            coef[k, index] = scales[k] * sol.coef
        is_sv = np.zeros(N, dtype=bool)
        for index, sol in zip(self._index, self._solutions):
            is_sv[index[sol.support]] = True
        support = np.concatenate([(is_sv & (labels == c)).nonzero()[0] for c in range(K)])
        self.support_ = support.astype(np.int32)
        self.n_support_ = np.bincount(labels[support], minlength=K).astype(np.int32)
        self.support_vectors_ = (np.empty((0, 0)) if self._precomputed else
                                 sparse.read_only_rows(X, support))  # CSR when X is sparse, as scikit-learn's
        self.dual_coef_ = self._fitted_layout(self._dual_coef(coef, labels, support), X)
        self._pair_coef = coef[:, support]
        self.intercept_ = np.array([scale * s.b for scale, s in zip(scales, self._solutions)])
        self.n_iter_ = np.array([s.iterations for s in self._solutions], dtype=np.int32)
        self.fit_status_ = _fit_status(self._solutions)
        dual = np.zeros((len(self.pairs_), N))
        for k, (index, sol) in enumerate(zip(self._index, self._solutions)):
            dual[k, index] = sol.a
        self.dual_ = dual[0] if K == 2 else dual
        self.probA_, self.probB_ = self._libsvm_sigmoids(K)

    def _libsvm_sigmoids(self, K: int) -> tuple[Array, Array]:
        """``probA_``, ``probB_`` as LIBSVM keeps them (and scikit-learn, unflipped): pair (i, j), i < j,
        p(i | i or j) = 1 / (1 + exp(A f + B)) on its value f, positive for class i. Our pairs are LIBSVM's
        but for two classes, where ours is (1, 0) with f = -y: there A is unchanged and B changes sign."""
        if not self._sigmoids:                       # no probability model (most fits): two empty arrays
            return np.empty(0), np.empty(0)
        A = np.array([s.A for s in self._sigmoids], dtype=np.float64)
        B = np.array([s.B for s in self._sigmoids], dtype=np.float64)
        return (A, -B) if K == 2 else (A, B)

    def _dual_coef(self, coef: Array, labels: NDArray[np.intp], support: NDArray[np.intp]) -> Array:
        return libsvm_dual_coef(coef, labels, support, self.pairs_, self.classes_.shape[0])

    def _pair_decisions(self, X: Array) -> Array:
        """(n, n_pairs): each machine's decision value, positive for its first class, from one
        kernel evaluation against ``support_vectors_`` (LIBSVM's way), in blocks of rows; within
        ``shared_test_kernel``, from the columns of the K(X, X_train) it holds. Values that overflow
        (a polynomial of inputs far larger than the training ones) are refused, naming X."""
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused below, in words
            return check_finite_predictions(self._kernel, self._pair_values(X), X)

    def _pair_values(self, X: Array) -> Array:
        coef, b = self._pair_coef.T, self.intercept_
        if self._precomputed:
            return X[:, self.support_] @ coef + b
        held = self.__dict__.get("_held_test")
        if held is not None and _same_rows(held[0], X):  # within ``shared_test_kernel``: K(X, X_train) at hand
            if coef.shape[1] > 1:            # several pairs: the support's columns, then a small product
                return held[1][:, self.support_] @ coef + b
            W = np.zeros((held[1].shape[1], 1))
            W[self.support_] = coef  # zero off the support: one product, no gathered copy of K's columns
            return held[1] @ W + b
        out = np.empty((X.shape[0], coef.shape[1]))
        for r0 in range(0, X.shape[0], PREDICT_BLOCK):
            rows = X[r0:r0 + PREDICT_BLOCK]
            out[r0:r0 + PREDICT_BLOCK] = self._kernel(rows, self.support_vectors_) @ coef + b
        return out

    def decision_function(self, X: ArrayLike) -> Array:
        """Binary: (n,), positive for classes_[1]. Multiclass: (n, n_pairs) "ovo" or (n, K) "ovr"."""
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        dec = self._pair_decisions(X)
        if self.classes_.shape[0] == 2:
            return dec[:, 0]
        return dec if self.decision_function_shape == "ovo" else votes_and_confidences(dec, self.classes_.shape[0])

    def _ovr_scores(self, X: Array) -> Array:
        dec = self._pair_decisions(X)
        if self.classes_.shape[0] == 2:
            return np.column_stack([-dec[:, 0], dec[:, 0]])
        return votes_and_confidences(dec, self.classes_.shape[0])

    def predict(self, X: ArrayLike) -> NDArray:
        """LIBSVM's vote (a tie goes to the lowest class index); with ``break_ties=True`` and
        ``decision_function_shape="ovr"``, the argmax of ``decision_function``."""
        check_is_fitted(self)
        if self.break_ties and self.decision_function_shape == "ovo":
            raise ValidationError("break_ties must be False when decision_function_shape is 'ovo'; got "
                                  "break_ties=True")
        X = self._validate_X(X, reset=False)
        K = self.classes_.shape[0]
        if self.break_ties and K > 2:
            return self.classes_[np.argmax(self._ovr_scores(X), axis=1)]
        return self.classes_[np.argmax(votes(self._pair_decisions(X), K), axis=1)]

    @available_if(_has_probability)
    def predict_proba(self, X: ArrayLike) -> Array:
        """Class probabilities, ranked as decision_function ranks the classes (probability=True)."""
        check_is_fitted(self)
        if len(self._sigmoids) != len(self.pairs_):
            raise NotFittedError("predict_proba is not available when fitted with probability=False")
        X = self._validate_X(X, reset=False)
        dec = self._pair_decisions(X)
        K = self.classes_.shape[0]
        # decision_function's ranking: votes, ties broken by confidence. For K = 2 it is predict's class (f = 0
        # goes to classes_[1]); for K >= 3 a tie of votes may rank otherwise than predict's first tied class
        scores = votes_and_confidences(dec, K)
        if K == 2:
            p1 = np.clip(self._sigmoids[0](dec[:, 0]), MIN_PROBABILITY, 1.0 - MIN_PROBABILITY)
            return consistent_with(np.column_stack([1.0 - p1, p1]), scores)
        R = np.full((X.shape[0], K, K), 0.5)
        for k, (i, j) in enumerate(self.pairs_):
            r = np.clip(self._sigmoids[k](dec[:, k]), MIN_PROBABILITY, 1.0 - MIN_PROBABILITY)   # p(i | i or j, x)
            R[:, i, j], R[:, j, i] = r, 1.0 - r
        return consistent_with(couple(R), scores)

    @available_if(_has_probability)
    def predict_log_proba(self, X: ArrayLike) -> Array:
        return np.log(self.predict_proba(X))


def _same_rows(held: Array, X: Array) -> bool:
    """Whether ``X`` is the test X whose kernel ``shared_test_kernel`` holds: that array, or one of the same
    values (a Pipeline's steps transform the test X again, into a new array, for each model scored; equal
    values have the same kernel, and comparing them costs a pass over X, not a kernel evaluation)."""
    return held is X or (isinstance(X, np.ndarray) and held.shape == X.shape and held.dtype == X.dtype
                         and np.array_equal(held, X))


@contextlib.contextmanager
def shared_test_kernel(models: list[Any], X_test: Any) -> Iterator[Any]:
    """Score a path's classifiers on one test set with one kernel evaluation.

    The models of a regularisation path (``fit_path``: C or nu changes, the
    kernel and the training X do not) predict from K(X_test, support vectors),
    each a set of columns of K(X_test, X_train). Within the block that matrix
    is computed once and each model's decision values read their columns from
    it (the same products as ``_pair_decisions``' own, in another order).

    Applies when every model is a fitted classifier of this module on the
    same training X (the same array, unchanged in place since fit: its CRC-32 is
    the fit's) with the same kernel, not precomputed;
    when their support vectors together outnumber the training points
    (otherwise the separate evaluations cost less); when the matrix has at
    most ``SHARED_TEST_ENTRIES`` entries; and when ``X_test`` and the training
    X are dense arrays (a DataFrame is passed on as it is, so that its feature
    names are checked; a sparse matrix is validated into a new one by each
    prediction). Otherwise the block changes nothing.

    Parameters
    ----------
    models : list of fitted estimators
    X_test : array-like
        The test set they are all scored on.

    Yields
    ------
    array-like
        The test X to score on: validated once where the kernel is shared (so
        that each model's prediction recognises it), else ``X_test`` as given.
    """
    first = models[0] if models else None
    usable = (isinstance(X_test, np.ndarray) and isinstance(first, _ClassifierBase) and not first._precomputed
              and isinstance(first.__dict__.get("_fit_X"), np.ndarray)
              and all(isinstance(m, _ClassifierBase) and m.__dict__.get("_fit_X") is first._fit_X
                      and m._kernel == first._kernel for m in models))
    if usable:
        X = first._validate_X(X_test, reset=False)
        n_train = first._fit_X.shape[0]
        usable = (sum(m.support_.shape[0] for m in models) > n_train
                  and X.shape[0] * n_train <= SHARED_TEST_ENTRIES)
    if usable:      # the array's values still each model's fit's: a caller may have changed it in place since
        digest = sparse.digest(first._fit_X)
        usable = all(m.__dict__.get("_fit_X_digest") == digest for m in models)
    if not usable:
        yield X_test
        return
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused by each model's prediction
        K = np.asarray(first._kernel(X, first._fit_X))
    for m in models:
        m._held_test = (X, K)
    try:
        yield X
    finally:
        for m in models:
            m.__dict__.pop("_held_test", None)


class SVC(_ClassifierBase):
    """C-support vector classification (the soft-margin machine, (7.20)-(7.37)).

    Parameters as scikit-learn's ``SVC``, plus ``solver``. ``class_weight`` and
    ``sample_weight`` set each point's box C_n = C * class weight * sample
    weight (Veropoulos et al.'s C+/C- boxes); points of zero or negative weight
    are left out, as LIBSVM leaves them. ``C=inf`` is the hard margin: each pair
    is solved by the hard-margin machine ((7.5)-(7.6); ``SoftMarginSVC.from_libsvm``
    maps LIBSVM's infinite box to it); on data that are not separable in
    feature space that is an ``InfeasibleError``. See the module docstring for what else differs from
    scikit-learn's ``SVC`` (nothing in the model does).
    """

    _twin = "SVC"
    _machine_params = ("C",)

    def __init__(self, *, C: float = 1.0, kernel: str | Kernel | KernelFunction = "rbf", degree: int = 3,
                 gamma: str | float = "scale", coef0: float = 0.0, shrinking: bool = True,
                 probability: bool = False, tol: float = 1e-3, cache_size: float = 200,
                 class_weight: Any = None, verbose: bool = False, max_iter: int = -1,
                 decision_function_shape: str = "ovr", break_ties: bool = False,
                 random_state: Any = None, solver: str = "smo") -> None:
        self.C = C
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.shrinking = shrinking
        self.probability = probability
        self.tol = tol
        self.cache_size = cache_size
        self.class_weight = class_weight
        self.verbose = verbose
        self.max_iter = max_iter
        self.decision_function_shape = decision_function_shape
        self.break_ties = break_ties
        self.random_state = random_state
        self.solver = solver

    def _accepts(self, name: str, value: Any) -> bool:
        """C = inf: LIBSVM's infinite box, which the twin's machine maps to the hard margin (7.5)-(7.6)."""
        return name == "C" and isinstance(value, numbers.Real) and value == np.inf

    def _infeasible_hint(self) -> str:
        """C = inf asked for the hard margin, which needs classes separable in feature space."""
        if not self._fitted_machine_params["C"] == np.inf:
            return ""
        return ("; C=inf is the hard margin (7.5)-(7.6), for classes separable in the kernel's feature space: a "
                "finite C (the soft margin (7.20)-(7.21)) fits any data")


class NuSVC(_ClassifierBase):
    """nu-support vector classification (Result 7.7, (7.38)-(7.41)).

    Decision values are LIBSVM's: the notes' y(x) divided by rho, so that the
    margin is at +/-1 as in scikit-learn's ``NuSVC``. ``sample_weight`` W_n sets
    the box W_n / sum W (1/N unweighted; LIBSVM's W_n with sum alpha = nu sum W);
    points of zero or negative weight are left out. ``class_weight`` is accepted
    and reported in ``class_weight_`` but, as in LIBSVM's nu-SVC (and so
    scikit-learn's), does not change the model. See the module docstring for
    what else differs from scikit-learn's ``NuSVC``.
    """

    _twin = "NuSVC"
    _machine_params = ("nu",)
    path_params = ("nu",)

    _class_weight_applies = False

    def __init__(self, *, nu: float = 0.5, kernel: str | Kernel | KernelFunction = "rbf", degree: int = 3,
                 gamma: str | float = "scale", coef0: float = 0.0, shrinking: bool = True,
                 probability: bool = False, tol: float = 1e-3, cache_size: float = 200, class_weight: Any = None,
                 verbose: bool = False, max_iter: int = -1, decision_function_shape: str = "ovr",
                 break_ties: bool = False, random_state: Any = None, solver: str = "smo") -> None:
        self.nu = nu
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.shrinking = shrinking
        self.probability = probability
        self.tol = tol
        self.cache_size = cache_size
        self.class_weight = class_weight
        self.verbose = verbose
        self.max_iter = max_iter
        self.decision_function_shape = decision_function_shape
        self.break_ties = break_ties
        self.random_state = random_state
        self.solver = solver

    def _fold_machine(self, X: Array, t: Array, weight: Array, kernel: Kernel) -> Machine:
        """A Platt fold's machine, at the nearest feasible nu: nu is feasible up to nu_max = 2 min(W_+, W_-) / W
        (Chang and Lin 2001; 2 min(N_+, N_-)/N unweighted), and a fold's training part may keep a smaller share of
        the smaller class than the whole (nu = 0.29 on 3 positives of 20, bound 0.3; a fold's 2 of 16, bound 0.25),
        where the fold is solved at its own nu_max. LIBSVM solves such a fold on from a start that breaks
        sum_n alpha_n t_n = 0, and scikit-learn fits; the fit raised InfeasibleError naming the fold's bound."""
        nu_max = 2.0 * min(float(np.sum(weight[t > 0])), float(np.sum(weight[t < 0]))) / float(np.sum(weight))
        feasible = self if float(self.nu) <= nu_max else self._with_params({"nu": nu_max})
        return feasible.make_machine(X, t, weight, kernel)

    def _fold_values(self, sol: Solution, rows: Array) -> Array:
        """A Platt fold's values y(x) / rho; 0 where the fold's margin rho is not above its resolution (its reduced
        hulls meet, w = 0 to the solve's accuracy, and y(x) = b at every point carries no information), the value
        LIBSVM gives a fold with no points to train on: the whole data's margin is what ``_scale`` judges, and a
        fold's (25 points on a 3 x 3 grid, nu = 0.44: rho 2.8e-3 on all, 0 on a fold) raised its error naming nu."""
        if not sol.rho > _rho_resolution(sol):
            return np.zeros(rows.shape[0])
        return super()._fold_values(sol, rows)

    def _solve(self, machine: Machine, cache: Any = None, tol: float | None = None,
               steps: int | None = None) -> Solution:
        """The SMO's solve and, where rho is not resolved (``_rho_resolution``), once more (cold) at
        ``RHO_TOL_STEP`` times its tol within ``RHO_RESOLVE_STEPS`` (or ``RHO_RESOLVE_FACTOR`` times the first
        solve's) steps: a small margin is then certified, and a zero one refused (``_scale``), not passed
        at the sign its rounding took. One re-solve, capped: a loop down to tol 1e-8 took millions of steps
        on overlapping classes (45 s at N = 400) and still ended at a rho of rounding."""
        sol = super()._solve(machine, cache, tol, steps)
        if self.solver == "smo" and not sol.rho > _rho_resolution(sol):
            budget = max(RHO_RESOLVE_STEPS, RHO_RESOLVE_FACTOR * sol.iterations)
            with collected(ConvergenceWarning) as caught:
                again = super()._solve(machine, cache, float(self.tol if tol is None else tol) * RHO_TOL_STEP, budget)
            if again.status == "inaccurate":
                # stopped at its cap: its rho is resolved only as far as the steps it took, not to the tol it was
                # given, which ``_scale`` would read it at (a rho of 2.9e-9 passed at 9.1e-11 where the first solve,
                # certified, resolves 9.1e-9); the first solve's answer stands and ``_scale`` judges its rho
                return sol
            for w in caught:
                warn(str(w.message), w.category, stacklevel=2)
            sol = again
        return sol

    def _scale(self, sol: Solution) -> float:
        """1 / rho: LIBSVM's nu-SVC values are the notes' divided by the margin rho, which must be positive,
        and above the certificate's tolerance in output units (a rho of 1e-10 at a tolerance of 5e-8 is zero
        to the solve's accuracy, and its sign is rounding: values divided by it mean nothing)."""
        resolution = _rho_resolution(sol)
        if not sol.rho > resolution:
            raise ValidationError(
                f"nu must leave the classes a positive margin rho, since NuSVC's decision values are the notes' "
                f"divided by rho (LIBSVM's scaling); got nu={float(self.nu)!r}, at which rho = {float(sol.rho)!r} on these data, "
                f"not above the solve's resolution {resolution:.3g} (tolerance {sol.tol:g} times the output scale "
                f"{sol.output_scale:.3g}{'; the SMO solved again at a hundredth of tol' if self.solver == 'smo' else ''}"
                f"): the classes' reduced convex hulls touch or meet. A larger nu shrinks "
                f"them (each point's weight in its hull is at most 2/(nu N)), up to 2 min(N+, N-)/N; or take "
                f"formulations.NuSVC for the notes' own values")
        return 1.0 / sol.rho


#: NuSVC's SMO solves again, once, at this factor of its tol where rho is not above the certificate's
#: resolution, within the larger of these steps and this factor times the first solve's steps (its rounds in
#: rho's unit included): at 100 times, a first solve of 1.9 million steps (NuSVC(nu=0.05, gamma=1e-3) on 3,000
#: standardised make_classification points, rho 5e-8 of its unit) gave the re-solve 190 million
RHO_TOL_STEP = 1e-2
RHO_RESOLVE_STEPS = 100_000
RHO_RESOLVE_FACTOR = 2


def _rho_resolution(sol: Solution) -> float:
    """The certificate's resolution of nu-SVC's rho: its tolerance times the output scale (rho's unit)."""
    return (sol.tol if np.isfinite(sol.tol) else 0.0) * sol.output_scale


class _RegressorBase(RegressorMixin, _BaseSVM):

    def _fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None) -> "_RegressorBase":
        with kept_on_failure(self):
            self._check_params()
            X, y = _validated(self, X, y, True, y_numeric=True)
            X = check_matrix(X, "X", sparse=not self._precomputed)
            y = check_real_targets(y, "y")               # text, which y_numeric leaves as it is: named y, not t
            if self._precomputed and X.shape[0] != X.shape[1]:
                raise ValidationError(f"X must be a square Gram matrix for kernel='precomputed'; got shape {X.shape}")
            sol = self._fit_one(X, y, sample_weight)
            self._pair_coef = sol.coef[sol.support][None, :]
            self.dual_coef_ = self._fitted_layout(self._pair_coef, X)
            self.intercept_ = np.array([sol.b])
            dual = np.zeros((2, X.shape[0]))
            dual[0, self._index], dual[1, self._index] = sol.a, sol.a_hat
            self.dual_ = dual
            return self

    def predict(self, X: ArrayLike) -> Array:
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        return self.solution_.decision_function(self._rows(X, self._index))


class SVR(_RegressorBase):
    """epsilon-support vector regression ((7.51)-(7.69)).

    ``sample_weight`` scales each point's box, C_n = C W_n (points of zero or
    negative weight are left out), as in scikit-learn's ``SVR``. ``C`` must be
    finite: the hard tube (C = inf, which LIBSVM accepts) has no machine in
    ``formulations`` yet. See the module docstring for what else differs.
    """

    _twin = "SVR"
    _machine_params = ("C", "epsilon")
    path_params = ("C", "epsilon")

    def __init__(self, *, kernel: str | Kernel | KernelFunction = "rbf", degree: int = 3,
                 gamma: str | float = "scale", coef0: float = 0.0, tol: float = 1e-3, C: float = 1.0,
                 epsilon: float = 0.1, shrinking: bool = True, cache_size: float = 200, verbose: bool = False,
                 max_iter: int = -1, solver: str = "smo") -> None:
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.tol = tol
        self.C = C
        self.epsilon = epsilon
        self.shrinking = shrinking
        self.cache_size = cache_size
        self.verbose = verbose
        self.max_iter = max_iter
        self.solver = solver

    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> "SVR":
        """Fit on (X, y); ``sample_weight`` scales each point's box (zero or negative: left out)."""
        return self._fit(X, y, sample_weight)


class NuSVR(_RegressorBase):
    """nu-support vector regression (Result 7.10).

    ``C`` is scikit-learn's (LIBSVM's), the notes' C divided by N, so the same
    numbers give the same model as ``sklearn.svm.NuSVR``; it must be finite (as SVR's).
    ``sample_weight`` W_n weights each point's term, box C W_n in LIBSVM's units
    (C W_n / N in the notes') with sum (a + a_hat) <= nu C sum W; points of zero
    or negative weight are left out. See the module docstring for what else differs.
    """

    _twin = "NuSVR"
    _machine_params = ("C", "nu")
    path_params = ("C", "nu")

    def __init__(self, *, nu: float = 0.5, C: float = 1.0, kernel: str | Kernel | KernelFunction = "rbf",
                 degree: int = 3, gamma: str | float = "scale", coef0: float = 0.0, shrinking: bool = True,
                 tol: float = 1e-3, cache_size: float = 200, verbose: bool = False, max_iter: int = -1,
                 solver: str = "smo") -> None:
        self.nu = nu
        self.C = C
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.shrinking = shrinking
        self.tol = tol
        self.cache_size = cache_size
        self.verbose = verbose
        self.max_iter = max_iter
        self.solver = solver

    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> "NuSVR":
        """Fit on (X, y); ``sample_weight`` weights each point's term, box C W_n / N as in LIBSVM
        (zero or negative: left out)."""
        return self._fit(X, y, sample_weight)


class OneClassSVM(OutlierMixin, _BaseSVM):
    """One-class SVM (Schölkopf et al., 2001).

    Decision values are LIBSVM's: the notes' sum_n a_n k(x, x_n) - rho times
    nu N (nu sum W with sample weights), as in ``sklearn.svm.OneClassSVM``.
    ``sample_weight`` W_n sets the box W_n / (nu sum W) (LIBSVM's W_n with
    sum alpha = nu sum W); points of zero or negative weight are left out. See
    the module docstring for what else differs.
    """

    _twin = "OneClassSVM"
    _machine_params = ("nu",)
    path_params = ("nu",)

    def __init__(self, *, kernel: str | Kernel | KernelFunction = "rbf", degree: int = 3,
                 gamma: str | float = "scale", coef0: float = 0.0, tol: float = 1e-3, nu: float = 0.5,
                 shrinking: bool = True, cache_size: float = 200, verbose: bool = False, max_iter: int = -1,
                 solver: str = "smo") -> None:
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.tol = tol
        self.nu = nu
        self.shrinking = shrinking
        self.cache_size = cache_size
        self.verbose = verbose
        self.max_iter = max_iter
        self.solver = solver

    def fit(self, X: ArrayLike, y: Any = None, sample_weight: ArrayLike | None = None) -> "OneClassSVM":
        """Fit on X (``y`` is ignored); ``sample_weight`` sets each point's box W_n / (nu sum W) as in
        LIBSVM (zero or negative: left out)."""
        with kept_on_failure(self):
            self._check_params()
            X = self._validate_X(X, reset=True)
            sol = self._fit_one(X, None, sample_weight)
            scale = self._machine.libsvm_scale                       # nu N, or nu sum W
            self._pair_coef = scale * sol.coef[sol.support][None, :]
            self.dual_coef_ = self._fitted_layout(self._pair_coef, X)
            self.intercept_ = np.array([scale * sol.b])
            self.offset_ = -self.intercept_                           # shape (1,), as scikit-learn's
            dual = np.zeros(X.shape[0])
            dual[self._index] = sol.a
            self.dual_ = dual
            return self

    #: scores within this (relative to the offset) of the boundary are put on it
    boundary_tol = 1e-10

    def score_samples(self, X: ArrayLike) -> Array:
        """nu N sum_n a_n k(x, x_n) (nu sum W with sample weights), LIBSVM's scale.

        The free support vectors lie exactly on the boundary, where the
        computed score differs from ``offset_`` only by rounding (which
        changes with the batch the kernel is evaluated in); scores within
        ``boundary_tol`` of it are set to it, so that a point's prediction does
        not depend on the other points it is predicted with.
        """
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        values = self.solution_.decision_function(self._rows(X, self._index))
        score = self._machine.libsvm_scale * (values - self.solution_.b)
        offset = float(self.offset_[0])
        near = np.abs(score - offset) <= self.boundary_tol * max(1.0, abs(offset))
        return np.where(near, offset, score)

    def decision_function(self, X: ArrayLike) -> Array:
        """score_samples - offset_: positive for inliers, zero on the boundary."""
        return self.score_samples(X) - float(self.offset_[0])

    def predict(self, X: ArrayLike) -> NDArray[np.int64]:
        """+1 inside, -1 on the boundary or outside: LIBSVM's rule (a value of exactly 0 is -1), as
        scikit-learn's OneClassSVM predicts."""
        return np.where(self.decision_function(X) > 0, 1, -1)
