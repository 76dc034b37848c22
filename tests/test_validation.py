"""Bad input raises the named error with a message naming the argument, the expected
domain and the value received; inputs are never modified."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from sparsekernel import datasets
from sparsekernel.duality import check
from sparsekernel.estimators import SVC, SVR
from sparsekernel.estimators import NuSVR as NuSVREstimator
from sparsekernel.estimators import OneClassSVM as OneClassSVMEstimator
from sparsekernel.errors import ConvergenceWarning, InfeasibleError, SolverError, ValidationError
from sparsekernel.formulations import (
    SVDD, EpsilonSVR, HardMarginSVC, NuSVC, NuSVR, OneClassSVM, SoftMarginSVC,
)
from sparsekernel.kernels import RBF, Linear, Precomputed, Sigmoid

X, t = datasets.ripley_mixture(n=30)
t_reg = X[:, 0] - X[:, 1]
X_nan = X.copy()
X_nan[3, 1] = np.nan
X_inf = X.copy()
X_inf[5, 0] = np.inf
t_nan = t.copy()
t_nan[2] = np.nan

BAD = [
    # (id, builder, argument, words of the domain, words of the value)
    ("X-nan", lambda: SoftMarginSVC(X_nan, t, RBF(1.0)), "X", "finite values", "NaN or inf at index (3, 1)"),
    ("X-inf", lambda: OneClassSVM(X_inf, RBF(1.0)), "X", "finite values", "index (5, 0)"),
    ("X-1d", lambda: SoftMarginSVC(X[:, 0], t, RBF(1.0)), "X", "2-D array", "1-D array of shape (30,)"),
    ("X-empty", lambda: SoftMarginSVC(np.zeros((0, 2)), t[:0], RBF(1.0)), "X", "non-empty 2-D array", "shape (0, 2)"),
    ("X-text", lambda: SoftMarginSVC([["a", "b"]], [1], RBF(1.0)), "X", "array of real numbers", "'a'"),
    ("t-length", lambda: SoftMarginSVC(X, t[:-1], RBF(1.0)), "t", "one entry per row of X (30)", "got 29"),
    ("t-01", lambda: SoftMarginSVC(X, (t + 1) / 2, RBF(1.0)), "t", "two class labels -1 and +1", "[0.0, 1.0]"),
    ("t-three", lambda: NuSVC(X, np.arange(30) % 3 - 1.0, RBF(1.0)), "t", "-1 and +1", "[-1.0, 0.0, 1.0]"),
    ("t-one-class", lambda: HardMarginSVC(X, np.ones(30), RBF(1.0)), "t", "two classes", "[1.0]"),
    ("t-nan", lambda: SoftMarginSVC(X, t_nan, RBF(1.0)), "t", "finite values", "index 2"),
    ("t-column", lambda: EpsilonSVR(X, t_reg[:, None], RBF(1.0)), "t", "1-D array", "shape (30, 1)"),
    ("C-zero", lambda: SoftMarginSVC(X, t, RBF(1.0), C=0.0), "C", "positive finite number", "0.0"),
    ("C-negative", lambda: EpsilonSVR(X, t_reg, RBF(1.0), C=-1.0), "C", "positive finite number", "-1.0"),
    ("C-nan", lambda: NuSVR(X, t_reg, RBF(1.0), C=float("nan")), "C", "positive finite number", "nan"),
    ("C-inf", lambda: SoftMarginSVC(X, t, RBF(1.0), C=float("inf")), "C", "positive finite number", "inf"),
    ("C-text", lambda: SoftMarginSVC(X, t, RBF(1.0), C="1"), "C", "positive finite number", "'1'"),
    ("nu-zero", lambda: NuSVC(X, t, RBF(1.0), nu=0.0), "nu", "(0, 1]", "0.0"),
    ("nu-big", lambda: OneClassSVM(X, RBF(1.0), nu=1.5), "nu", "(0, 1]", "1.5"),
    # nu N below the smallest normal double: the box 1/(nu N) overflows (the estimator's error named tol)
    ("nu-subnormal-box", lambda: OneClassSVM(X, RBF(1.0), nu=1e-320), "nu", "nu * N (N = 30", "1e-320"),
    ("nu-subnormal-box-svdd", lambda: SVDD(X, RBF(1.0), nu=1e-310), "nu", "1/(nu N) is finite", "1e-310"),
    ("nu-subnormal-estimator", lambda: OneClassSVMEstimator(nu=1e-320).fit(X), "nu", "nu * N (N = 30", "1e-320"),
    ("nu-negative", lambda: NuSVR(X, t_reg, RBF(1.0), nu=-0.2), "nu", "(0, 1]", "-0.2"),
    ("nu-svdd", lambda: SVDD(X, RBF(1.0), nu=2), "nu", "(0, 1]", "2"),
    ("epsilon-negative", lambda: EpsilonSVR(X, t_reg, RBF(1.0), epsilon=-0.1), "epsilon", "non-negative", "-0.1"),
    ("epsilon-inf", lambda: EpsilonSVR(X, t_reg, RBF(1.0), epsilon=float("inf")), "epsilon", "non-negative", "inf"),
    ("gamma-zero", lambda: SoftMarginSVC(X, t, RBF(0.0)), "gamma", "positive finite number", "0.0"),
    ("gamma-negative", lambda: NuSVC(X, t, RBF(-2.0)), "gamma", "positive finite number", "-2.0"),
    # a numpy scalar (a grid from np.logspace) quoted as Python's number, not as np.float64(-2.0)
    ("gamma-numpy-scalar", lambda: NuSVC(X, t, RBF(np.float64(-2.0))), "gamma", "positive finite number",
     "got -2.0"),
    ("kernel-not-psd", lambda: SoftMarginSVC(X, t, Sigmoid(gamma=1.0, coef0=-1.0)).dual(), "kernel",
     "positive semidefinite", "smallest eigenvalue -"),
    ("kernel-name", lambda: SoftMarginSVC(X, t, "cosine"), "kernel", "one of", "'cosine'"),
    ("precomputed-not-square", lambda: SoftMarginSVC(RBF(1.0)(X)[:, :20], t, Precomputed()), "X",
     "square Gram matrix", "shape (30, 20)"),
    ("class-weight-label", lambda: SoftMarginSVC(X, t, RBF(1.0), class_weight={2: 1.0}), "class_weight",
     "keys are the labels +1 and -1", "{2: 1.0}"),
    ("class-weight-string", lambda: SoftMarginSVC(X, t, RBF(1.0), class_weight="auto"), "class_weight",
     "'balanced'", "'auto'"),
    ("class-weight-negative", lambda: SoftMarginSVC(X, t, RBF(1.0), class_weight={1: -1.0}), "class_weight[1]",
     "positive finite number", "-1.0"),
    ("set-params", lambda: SoftMarginSVC(X, t, RBF(1.0)).set_params(gamma=2.0), "parameters",
     "among ['C', 'class_weight']", "['gamma']"),
    ("method", lambda: SoftMarginSVC(X, t, RBF(1.0)).solve("gurobi-pro"), "method",
     "'smo', 'libsvm', 'qp-clarabel', 'qp-osqp'", "'gurobi-pro'"),
    ("method-misspelled", lambda: SoftMarginSVC(X, t, RBF(1.0)).solve("smoo"), "method",
     "installed cvxpy solver (CLARABEL", "'smoo'"),
    ("primal-solver", lambda: SoftMarginSVC(X, t, RBF(1.0)).solve("primal-gurobi-pro"), "solver",
     "installed cvxpy solvers", "'gurobi-pro'"),
    ("gamma-scale-overflow", lambda: SVC().fit(X * 1e200, (t > 0).astype(int)), "X", "finite, non-negligible variance",
     "variance inf"),
    ("X-complex", lambda: SoftMarginSVC(X + 1j, t, RBF(1.0)), "X", "array of real numbers", "complex values"),
    ("t-complex", lambda: EpsilonSVR(X, t_reg + 0j, RBF(1.0)), "t", "array of real numbers", "complex values"),
    ("t-numeric-strings", lambda: EpsilonSVR(X, t_reg.astype(str), RBF(1.0)), "t", "array of real numbers",
     "dtype <U"),
    ("check-none", lambda: check(None, SoftMarginSVC(X, t, RBF(1.0)).solve("smo")), "machine",
     "a sparsekernel machine", "None"),
    ("check-swapped", lambda: check(SoftMarginSVC(X, t, RBF(1.0)).solve("smo"), SoftMarginSVC(X, t, RBF(1.0))),
     "machine", "a sparsekernel machine", "Solution"),
    ("qp-solver", lambda: SoftMarginSVC(X, t, RBF(1.0)).solve("qp-scs"), "solver", "'clarabel' or 'osqp'", "'scs'"),
    ("dual-form", lambda: SoftMarginSVC(X, t, RBF(1.0)).dual(form="dense"), "form", "'psd_wrap' or 'factor'",
     "'dense'"),
]


@pytest.mark.parametrize("build, argument, domain, value", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_input_names_argument_domain_and_value(build, argument: str, domain: str, value: str) -> None:
    with pytest.raises(ValidationError) as info:
        build()
    message = str(info.value)
    assert message.startswith(f"{argument} must ")
    assert domain in message
    assert "got" in message and value in message


def _frozen(*arrays: np.ndarray) -> list[np.ndarray]:
    out = []
    for a in arrays:
        b = np.array(a, copy=True)
        b.flags.writeable = False
        out.append(b)
    return out


MACHINES = [
    lambda A, b, r: HardMarginSVC(A, b, RBF(1.0)),
    lambda A, b, r: SoftMarginSVC(A, b, RBF(1.0), C=2.0, class_weight="balanced"),
    lambda A, b, r: NuSVC(A, b, RBF(1.0), nu=0.6),
    lambda A, b, r: EpsilonSVR(A, r, RBF(1.0), C=2.0, epsilon=0.1),
    lambda A, b, r: NuSVR(A, r, RBF(1.0), C=2.0, nu=0.4),
    lambda A, b, r: OneClassSVM(A, RBF(1.0), nu=0.3),
    lambda A, b, r: SVDD(A, RBF(1.0), nu=0.3),
]


@pytest.mark.parametrize("make", MACHINES)
@pytest.mark.parametrize("method", ["clarabel", "primal-clarabel", "qp-osqp"])
def test_inputs_are_never_modified(make, method: str) -> None:
    """Read-only inputs would raise on any in-place write; the values are compared too."""
    A, b, r = _frozen(X, t, t_reg)
    sol = make(A, b, r).solve(method)
    sol.decision_function(A)
    np.testing.assert_array_equal(A, X)
    np.testing.assert_array_equal(b, t)
    np.testing.assert_array_equal(r, t_reg)
    with pytest.raises(ValueError):
        sol.a[0] = 1.0  # solutions are read-only too


@pytest.mark.parametrize("method", ["clarabel", "osqp", "primal-clarabel", "qp-clarabel", "qp-osqp"])
def test_hard_margin_on_non_separable_data_is_infeasible(method: str) -> None:
    Xo, to = datasets.ripley_mixture(n=60)
    with pytest.raises(InfeasibleError, match="not separable in the feature space"):
        HardMarginSVC(Xo, to, Linear()).solve(method)


def test_nu_above_its_upper_bound_is_infeasible() -> None:
    labels = np.where(np.arange(30) < 9, 1.0, -1.0)  # 9 of 30 positive: nu <= 2 * 9 / 30 = 0.6
    NuSVC(X, labels, RBF(1.0), nu=0.6)
    with pytest.raises(InfeasibleError, match=r"nu must be at most 2 min\(N_\+, N_-\)/N = 0\.6 .*got 0\.7"):
        NuSVC(X, labels, RBF(1.0), nu=0.7)
    m = NuSVC(X, labels, RBF(1.0), nu=0.5)
    with pytest.raises(InfeasibleError, match="at most"):
        m.set_params(nu=0.9)


@pytest.mark.parametrize("method", ["osqp", "qp-osqp"])
def test_a_failing_solver_raises_solver_error_with_its_status(method: str, monkeypatch) -> None:
    """OSQP failing on valid settings (here its solve made to raise cvxpy's SolverError, as cvxpy does for a
    solver that failed) is our SolverError with its status; settings its own validation refuses (eps_abs = -1)
    are the caller's error, a ValidationError naming them, by either route (the cvxpy dual, the direct QP)."""
    import cvxpy as cp
    import osqp

    m = SoftMarginSVC(X, t, RBF(1.0))
    with pytest.raises(ValidationError, match=r"options of OSQP must be settings it takes.*'eps_abs': -1\.0"):
        m.solve(method, eps_abs=-1.0)

    def fail(self, *args, **kwargs):
        raise cp.error.SolverError("Solver 'OSQP' failed")

    monkeypatch.setattr(osqp.OSQP, "solve", fail)
    with pytest.raises(SolverError) as info:
        m.solve(method)
    assert info.value.status == "solver_error"
    assert info.value.solver == "OSQP"


@pytest.mark.parametrize("method, options, status", [
    ("osqp", {"max_iter": 5}, "user_limit"),
    ("qp-osqp", {"max_iter": 5}, "maximum iterations reached"),
    ("qp-clarabel", {"max_iter": 2}, "MaxIterations"),
])
def test_a_solver_stopped_early_warns_with_its_iterations(method: str, options: dict, status: str) -> None:
    m = SoftMarginSVC(X, t, RBF(1.0))
    with pytest.warns(ConvergenceWarning, match=rf"after {list(options.values())[0]} iterations \(status {status}\)"):
        sol = m.solve(method, **options)
    assert sol.status == "inaccurate" and sol.solver_status == status and not sol.report.ok
    assert sol.iterations == list(options.values())[0]


def test_precomputed_kernel_gives_the_same_solution() -> None:
    K = RBF(0.7)(X)
    ours = SoftMarginSVC(K, t, Precomputed(), C=1.0).solve("qp-clarabel")
    ref = SoftMarginSVC(X, t, RBF(0.7), C=1.0).solve("qp-clarabel")
    np.testing.assert_allclose(ours.a, ref.a, atol=1e-8)
    X_test = datasets.ripley_mixture(n=9, seed=3)[0]
    np.testing.assert_allclose(ours.decision_function(RBF(0.7)(X_test, X)), ref.decision_function(X_test), atol=1e-7)
    with pytest.raises(ValidationError, match=r"X must be the cross-kernel matrix of shape \(n, 30\)"):
        ours.decision_function(X_test)
    svdd = SVDD(K, Precomputed(), nu=0.5).solve("qp-clarabel")
    with pytest.raises(ValidationError, match="diag must give k"):
        svdd.decision_function(RBF(0.7)(X_test, X))
    np.testing.assert_allclose(
        svdd.decision_function(RBF(0.7)(X_test, X), diag=np.ones(9)),
        SVDD(X, RBF(0.7), nu=0.5).solve("qp-clarabel").decision_function(X_test), atol=1e-7)


def test_a_kernel_that_overflows_is_refused_before_the_smo_runs() -> None:
    """A polynomial of degree 1000 on inputs of size 10 is inf on the diagonal: the SMO used to take NaN
    steps to its iteration cap (10 million) and end "inaccurate"; the kernel is named at once now."""
    import warnings

    rng = np.random.default_rng(0)
    X = 10.0 * rng.normal(size=(30, 2))
    t = np.where(X[:, 0] > 0, 1.0, -1.0)
    from sparsekernel.formulations import solve
    from sparsekernel.kernels import Polynomial

    m = SoftMarginSVC(X, t, Polynomial(degree=1000, gamma=1.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")                    # no numpy overflow warning before the error
        with pytest.raises(ValidationError, match=r"the kernel's values on X must be finite; Polynomial\(degree=1000"):
            solve(m, "smo")


def test_a_ragged_design_is_a_validation_error_naming_it() -> None:
    from sparsekernel.solvers.rvm import rvm_regression

    with pytest.raises(ValidationError, match=r"Phi must be a 2-D array of real numbers; got \[\[1, 2\], \[3\]\]"):
        rvm_regression([[1, 2], [3]], [1.0, 2.0])


# The estimators: scikit-learn's checks of X and y (validate_data) ran first and their ValueErrors escaped
# as they were (a 1-D X, an empty X, a y of the wrong length, complex values): ValidationErrors naming the
# argument now, scikit-learn's words kept after the message.
_y_class = (t > 0).astype(int)
ESTIMATOR_BAD = [
    # (id, fit, argument, words of the domain, words of the value)
    ("svc-1d", lambda: SVC().fit(X[:, 0], _y_class), "X", "2-D array", "1-D array of shape (30,)"),
    ("svc-3d", lambda: SVC().fit(X[:, :, None], _y_class), "X", "non-empty 2-D array", "shape (30, 2, 1)"),
    ("svc-empty", lambda: SVC().fit(X[:0], _y_class[:0]), "X", "non-empty 2-D array", "shape (0, 2)"),
    ("svc-no-features", lambda: SVC().fit(X[:, :0], _y_class), "X", "non-empty 2-D array", "shape (30, 0)"),
    ("svc-complex", lambda: SVC().fit(X + 1j, _y_class), "X", "real numbers", "complex values"),
    ("svc-text", lambda: SVC().fit(np.full((30, 2), "a"), _y_class), "X", "real numbers", "'a'"),
    ("svc-ragged", lambda: SVC().fit([[1.0, 2.0], [3.0]], [0, 1]), "X", "real numbers", "[[1.0, 2.0], [3.0]]"),
    ("svc-y-length", lambda: SVC().fit(X, _y_class[:-1]), "y", "one entry per row of X (30)", "got 29"),
    ("svc-y-2d", lambda: SVC().fit(X, np.column_stack([_y_class, _y_class])), "y", "1-D array", "shape (30, 2)"),
    ("svc-y-complex", lambda: SVC().fit(X, _y_class + 1j), "y", "class labels", "complex values"),
    ("svr-y-length", lambda: SVR().fit(X, t_reg[:-1]), "y", "one entry per row of X (30)", "got 29"),
    ("svr-y-text", lambda: SVR().fit(X, np.array(["a", 1.0] * 15, dtype=object)), "y", "real numbers", "'a'"),
    ("nusvr-y-complex", lambda: NuSVREstimator().fit(X, t_reg + 1j), "y", "real numbers", "complex values"),
    ("oneclass-1d", lambda: OneClassSVMEstimator().fit(X[:, 0]), "X", "2-D array", "1-D array of shape (30,)"),
    ("predict-1d", lambda: SVC().fit(X, _y_class).predict(X[0]), "X", "2-D array", "1-D array of shape (2,)"),
    ("predict-empty", lambda: SVR().fit(X, t_reg).predict(X[:0]), "X", "non-empty 2-D array", "shape (0, 2)"),
]


@pytest.mark.parametrize("fit, argument, domain, value", [b[1:] for b in ESTIMATOR_BAD],
                         ids=[b[0] for b in ESTIMATOR_BAD])
def test_an_estimators_bad_data_names_argument_domain_and_value(fit, argument: str, domain: str, value: str) -> None:
    with pytest.raises(ValidationError) as info:
        fit()
    message = str(info.value)
    assert message.startswith(f"{argument} must ")
    assert domain in message
    assert "got" in message and value in message
    assert "scikit-learn's check: " in message


@pytest.mark.parametrize("fit, words", [
    (lambda: SVC().fit(X, _y_class).predict(np.c_[X, X]), "X has 4 features, but SVC is expecting 2"),
    (lambda: SVR().fit(X, np.where(t_reg > 0.5, np.nan, t_reg)), "Input y contains NaN"),
    (lambda: SVC().fit(X, None), "requires y to be passed"),
])
def test_an_estimators_bad_data_named_by_scikit_learn_keeps_its_message(fit, words: str) -> None:
    """Where scikit-learn's message names the argument already, it is the ValidationError's, unchanged."""
    with pytest.raises(ValidationError, match=words):
        fit()


@pytest.mark.parametrize("estimator", ["SVC", "SVR", "OneClassSVM", "RVR", "RVC", "PoissonRVR"])
def test_numbers_written_as_text_are_refused_by_the_estimators(estimator: str) -> None:
    """validate_data parsed an X of numeric strings silently (the formulations' check_real_dtype refuses
    them): the estimators refuse them too, naming X and the first entry."""
    import sparsekernel.estimators as estimators

    text = X.astype(str)
    y = {"SVC": _y_class, "RVC": _y_class, "PoissonRVR": _y_class, "OneClassSVM": None}.get(estimator, t_reg)
    before = text.copy()
    with pytest.raises(ValidationError, match=r"^X must be a 2-D array of real numbers; got an array of dtype <U"):
        getattr(estimators, estimator)().fit(text, y)
    np.testing.assert_array_equal(text, before)


@pytest.mark.parametrize("estimator, sparse", [(name, sparse) for name in ("SVC", "NuSVC", "SVR", "NuSVR", "OneClassSVM")
                                               for sparse in (False, True)]
                         + [("RVR", False), ("RVC", False), ("PoissonRVR", False)])  # the RVMs take dense X only
def test_a_prediction_whose_kernel_overflows_names_x(estimator: str, sparse: bool) -> None:
    """A cubic kernel fitted on inputs of size 1 and asked about inputs of size 1e150: k(x, x') is inf. SVC
    predicted a class from NaN decisions, SVR and the RVMs returned inf or NaN, each after numpy's overflow
    warning; now a ValidationError names X, the largest entry and the remedy, with no warning first. The
    same inputs at size 1e50 (k ~ 1e300, finite) are still predicted, as finite numbers (but for the Poisson
    rate, exp of such outputs, which is inf)."""
    import scipy.sparse

    import sparsekernel.estimators as estimators

    y = {"SVC": _y_class, "NuSVC": _y_class, "RVC": _y_class, "PoissonRVR": _y_class, "OneClassSVM": None}.get(
        estimator, t_reg)
    model = getattr(estimators, estimator)(kernel="poly", degree=3).fit(X, y)
    if estimator != "PoissonRVR":
        assert np.all(np.isfinite(np.asarray(model.predict(X[:5] * 1e50), dtype=np.float64)))
    huge = X[:5] * 1e150
    given = scipy.sparse.csr_matrix(huge) if sparse else huge
    with warnings.catch_warnings():
        warnings.simplefilter("error")                    # no numpy overflow warning before the error
        with pytest.raises(ValidationError, match=r"^X must be inputs on which the fitted kernel's values stay "
                                                  r"finite; Polynomial\(degree=3.* \(largest \|X\| entry: "
                                                  r"[0-9.]+e\+150\)"):
            model.predict(given)


def test_a_path_scored_on_one_shared_test_kernel_refuses_its_overflow_too() -> None:
    """``shared_test_kernel`` hands every model of a C path the columns of one K(X_test, X_train): the same
    overflow there is refused as in a model's own prediction (it gave NaN decisions, so labels, silently)."""
    from sparsekernel.estimators.svm import shared_test_kernel

    models = SVC(kernel="poly", degree=3).fit_path(X, _y_class, [0.1, 1.0, 10.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValidationError, match=r"^X must be inputs on which the fitted kernel's values stay finite"):
            with shared_test_kernel(models, X * 1e150) as X_test:
                assert all(m.__dict__.get("_held_test") is not None for m in models)  # the shared branch
                models[0].predict(X_test)


@pytest.mark.parametrize("fit, words", [
    # SVR's y of text reached the machine, whose message named its own argument t
    (lambda: SVR().fit(X, t_reg.astype(str)), r"^y must be a 1-D array of real numbers; got an array of dtype <U"),
    # complex weights were cut to their real part (numpy's ComplexWarning) and the fit went on
    (lambda: SVC().fit(X, _y_class, sample_weight=np.ones(30) + 1j),
     r"^sample_weight must be an array of 30 real numbers; got complex values"),
    (lambda: OneClassSVMEstimator().fit(X, sample_weight=np.ones(30) + 1j),
     r"^sample_weight must be an array of 30 real numbers; got complex values"),
])
def test_an_estimators_targets_and_weights_are_named_as_given(fit, words: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")                    # no ComplexWarning on the way
        with pytest.raises(ValidationError, match=words):
            fit()


@pytest.mark.parametrize("fit, words", [
    # np.unique's TypeError "'<' not supported between instances of 'int' and 'str'" escaped
    (lambda: SVC().fit(X, np.array(["a", 1] * 15, dtype=object)),
     r"^y must hold class labels of one kind, all numbers or all strings; got a mix of int and str"),
    (lambda: _rvm("RVC")().fit(X, np.array(["a", 1] * 15, dtype=object)),
     r"^y must hold class labels of one kind, all numbers or all strings; got a mix of int and str"),
    # column_or_1d's ValueError "y should be a 1d array, got an array of shape (30, 2) instead." escaped
    (lambda: _rvm("PoissonRVR")().fit(X, np.ones((30, 2), dtype=int)),
     r"^y must be a 1-D array of shape \(n_samples,\); got shape \(30, 2\)"),
])
def test_an_estimators_bad_labels_and_counts_name_y(fit, words: str) -> None:
    with pytest.raises(ValidationError, match=words):
        fit()


def _rvm(name: str):
    import sparsekernel.estimators as estimators

    return getattr(estimators, name)


@pytest.mark.parametrize("estimator", ["SVC", "SVR", "RVR", "RVC"])
def test_a_cache_too_large_to_count_in_bytes_is_all_the_rows(estimator: str) -> None:
    """cache_size / cache_mb = 1e308 (positive and finite, inside the declared domain) overflowed to inf
    bytes, and int(inf // row bytes) raised numpy's bare ValueError (OverflowError in the SMO's compact
    store): a budget that large holds every kernel row, as a large finite one does."""
    import sparsekernel.estimators as estimators

    cls = getattr(estimators, estimator)
    option = "cache_size" if estimator.startswith("SV") else "cache_mb"
    y = _y_class if estimator in ("SVC", "RVC") else t_reg
    huge = cls(**{option: 1e308}).fit(X, y)
    large = cls(**{option: 1e6}).fit(X, y)
    np.testing.assert_allclose(huge.predict(X), large.predict(X))
    N = X.shape[0]
    if estimator.startswith("SV"):      # the SMO's cache holds every row, in either precision
        from sparsekernel.solvers import smo
        from sparsekernel.solvers.kernel_cache import fitting, slots_for

        assert slots_for(1e308, N) == slots_for(1e308, N, np.float64) == N
        assert fitting(1e308, 8, 10**9) == 10**9
        machine = huge.machines_[0] if estimator == "SVC" else huge.machine_
        assert smo(machine.standard_qp(), cache_mb=1e308).cache_rows == N
    else:                               # the RVM's design stores the whole Gram matrix, its pool every column
        from sparsekernel.solvers.rvm.design import DenseDesign, estimator_design

        design, pool = estimator_design(huge.kernel_, X, 1e308)
        assert isinstance(design, DenseDesign) and pool == N + 1


@pytest.mark.parametrize("fit, words", [
    # make_kernel's `kernel not in kinds` on a list: TypeError "unhashable type: 'list'"
    (lambda: _rvm("RVR")(kernel=[1]).fit(X, t_reg), r"^kernel must be one of .* or a Kernel; got \[1\]"),
    (lambda: _rvm("RVC")(kernel={"rbf": 1}).fit(X, _y_class), r"^kernel must be one of .* or a Kernel; got \{'rbf': 1\}"),
    # a bool is no number in validation.DOMAINS (C=True, degree=True are refused): gamma and max_iter were let through
    (lambda: SVC(gamma=True).fit(X, _y_class), r"^gamma must be 'scale', 'auto' or a positive finite number; got True"),
    (lambda: SVR(max_iter=True).fit(X, t_reg), r"^max_iter must be -1 \(no limit\) or a positive integer; got True"),
])
def test_an_estimators_kernel_gamma_and_max_iter_are_checked(fit, words: str) -> None:
    with pytest.raises(ValidationError, match=words):
        fit()


@pytest.mark.parametrize("method", ["clarabel", "qp-clarabel"])
def test_a_kernel_that_overflows_is_named_by_the_dual_methods_too(method: str) -> None:
    """The command line's `kkt soft --kernel poly --degree 1000` (method auto: the cvxpy dual) printed numpy's
    "overflow encountered in power" and then "K must contain only finite values", naming feature_map's own
    argument: the kernel is named as the SMO names it, with no warning before."""
    from sparsekernel.formulations import solve
    from sparsekernel.kernels import Polynomial

    rng = np.random.default_rng(0)
    big = 10.0 * rng.normal(size=(30, 2))
    m = SoftMarginSVC(big, np.where(big[:, 0] > 0, 1.0, -1.0), Polynomial(degree=1000, gamma=1.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValidationError, match=r"the kernel's values on X must be finite; Polynomial\(degree=1000"):
            solve(m, method)


def test_a_frame_with_a_missing_value_names_that_entry_not_the_first() -> None:
    """The text/object check quoted the first entry of X, a number here, as what is not a number."""
    import pandas as pd

    frame = pd.DataFrame(X[:, :2], columns=["a", "b"]).astype("Float64")
    frame.iloc[5, 1] = pd.NA
    with pytest.raises(ValidationError, match=r"^X must be a 2-D array of real numbers; got an array of dtype object "
                                              r"holding <NA>"):
        SVC().fit(frame, _y_class)
    with pytest.raises(ValidationError, match=r"holding 'x'"):
        SVC().fit(np.array([[1.0, 2.0]] * 29 + [[1.0, "x"]], dtype=object), _y_class)


@pytest.mark.parametrize("X", [np.ones(3), np.arange(300.0)], ids=["short", "long-repr"])
def test_a_1d_X_keeps_scikit_learns_advice_after_the_data_it_omits(X) -> None:
    """validation.quoted stopped at scikit-learn's 'array=[...]' line and dropped the advice after it
    ('Reshape your data either using array.reshape(-1, 1) ...'), which scikit-learn's own
    check_fit2d_predict1d looks for: SVC, NuSVC, SVR, NuSVR and OneClassSVM failed it."""
    fitted = SVC().fit(np.random.default_rng(0).random((10, 3)), [0, 1] * 5)
    with pytest.raises(ValidationError) as info:
        fitted.predict(X)
    message = str(info.value)
    assert "Reshape your data" in message and "array.reshape(1, -1)" in message
    assert "array=" not in message and "\n" not in message
