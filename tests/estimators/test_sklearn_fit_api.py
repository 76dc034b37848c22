"""The fit API of scikit-learn's five SVMs (issue 17), with scikit-learn's estimator beside ours as the
reference: sample weights (zero and negative ones drop their samples), ``coef_`` for the linear kernel,
callable kernels, ``break_ties``, probabilities on tiny classes, ``C=inf``, probability set after fitting,
gamma='scale' on overflowing data, and the fitted attributes' names, shapes and dtypes."""

from __future__ import annotations

import pickle
import sys
import warnings

import numpy as np
import scipy.sparse as sp
import pytest
from sklearn import datasets as skdata
from sklearn import svm
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.preprocessing import StandardScaler

from sparsekernel import estimators as ours_module
from sparsekernel.errors import InfeasibleError, SolverError, ValidationError

NAMES = ["SVC", "NuSVC", "SVR", "NuSVR", "OneClassSVM"]
CLASSIFIERS = ["SVC", "NuSVC"]
#: (estimator, binary data?): the classifiers on a binary and a multiclass set, the others on theirs
CASES = [(name, False) for name in NAMES] + [(name, True) for name in CLASSIFIERS]
CASE_IDS = [name + ("-binary" if binary else "") for name, binary in CASES]
#: LIBSVM's stopping tolerance for both sides: the models then agree to about this, relative
TOL = 1e-6
#: agreement of decision values, relative to their spread (both sides stop at TOL in LIBSVM's units)
AGREE = 1e-4
#: NuSVC's values are divided by rho, which amplifies both SMOs' stopping errors (0.085 on iris's
#: pair (1, 2) with the linear kernel; there Clarabel's dual agrees with LIBSVM's to 1e-7)
NU_SVC_AGREE = 1e-2


def _pair(name: str, **params):
    """(ours, scikit-learn's), with the same parameters."""
    return getattr(ours_module, name)(**params), getattr(svm, name)(**params)


def _iris() -> tuple[np.ndarray, np.ndarray]:
    X, y = skdata.load_iris(return_X_y=True)
    return StandardScaler().fit_transform(X), y


def _cancer() -> tuple[np.ndarray, np.ndarray]:
    X, y = skdata.load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    keep = np.random.default_rng(0).permutation(X.shape[0])[:250]
    return X[keep], y[keep]


def _regression() -> tuple[np.ndarray, np.ndarray]:
    X, y = skdata.make_friedman1(n_samples=120, n_features=5, noise=0.3, random_state=0)
    return StandardScaler().fit_transform(X), (y - y.mean()) / y.std()


def _data(name: str, binary: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
    if name in CLASSIFIERS:
        return _cancer() if binary else _iris()
    if name == "OneClassSVM":
        return _iris()[0], None
    return _regression()


def _fit(est, X, y, **fit_params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)   # scikit-learn 1.9 deprecates probability=True
        return est.fit(X, **fit_params) if y is None else est.fit(X, y, **fit_params)


def _values(est, X) -> np.ndarray:
    return est.predict(X) if not hasattr(est, "decision_function") else est.decision_function(X)


def _assert_agree(a: np.ndarray, b: np.ndarray, rel: float = AGREE) -> None:
    scale = max(1.0, float(np.ptp(b)))
    np.testing.assert_allclose(a, b, rtol=0, atol=rel * scale)


def _weights(n: int) -> np.ndarray:
    w = np.random.default_rng(1).uniform(0.3, 3.0, n)
    w[:6] = 0.0
    w[6:10] = -1.5            # scikit-learn treats a negative weight as zero
    return w


# -- 1. sample_weight ------------------------------------------------------------------------------

@pytest.mark.parametrize("name, binary", CASES, ids=CASE_IDS)
def test_sample_weights_have_scikit_learns_effect(name: str, binary: bool) -> None:
    X, y = _data(name, binary)
    params = {"kernel": "rbf", "gamma": 0.2, "tol": TOL}
    w = _weights(X.shape[0])
    ours, theirs = (_fit(e, X, y, sample_weight=w) for e in _pair(name, **params))
    plain_ours, plain_theirs = (_fit(e, X, y) for e in _pair(name, **params))
    _assert_agree(_values(ours, X), _values(theirs, X))
    # the weights' effect on the model is scikit-learn's, to its tolerance's order
    effect_theirs = _values(theirs, X) - _values(plain_theirs, X)
    _assert_agree(_values(ours, X) - _values(plain_ours, X), effect_theirs)
    assert np.ptp(effect_theirs) > 100 * AGREE            # the weights do change the model
    np.testing.assert_array_equal(ours.n_support_, theirs.n_support_)
    np.testing.assert_allclose(ours.support_vectors_, theirs.support_vectors_)
    _assert_agree(ours.dual_coef_, theirs.dual_coef_)
    _assert_agree(ours.intercept_, theirs.intercept_)


@pytest.mark.parametrize("name", NAMES)
def test_zero_and_negative_weights_drop_their_samples(name: str) -> None:
    X, y = _data(name)
    cls = getattr(ours_module, name)
    w = np.ones(X.shape[0])
    w[:10] = np.where(np.arange(10) % 2 == 0, 0.0, -1.0)
    weighted = _fit(cls(gamma=0.2, tol=TOL), X, y, sample_weight=w)
    dropped = _fit(cls(gamma=0.2, tol=TOL), X[10:], None if y is None else y[10:])
    np.testing.assert_allclose(_values(weighted, X), _values(dropped, X), atol=1e-9)
    # support_ indexes the X given to fit (scikit-learn's indexes the rows of positive weight)
    np.testing.assert_array_equal(weighted.support_, dropped.support_ + 10)
    np.testing.assert_array_equal(weighted.support_vectors_, X[weighted.support_])


@pytest.mark.parametrize("name", NAMES)
def test_weights_that_leave_no_sample_are_a_value_error_as_in_scikit_learn(name: str) -> None:
    X, y = _data(name)
    ours, theirs = _pair(name)
    for est in (ours, theirs):
        with pytest.raises(ValueError):
            _fit(est, X, y, sample_weight=-np.ones(X.shape[0]))
    with pytest.raises(ValidationError, match="sample_weight must"):
        _fit(ours, X, y, sample_weight=np.ones(X.shape[0] - 1))


def test_nu_svc_class_weight_is_accepted_and_ignored_as_by_libsvm() -> None:
    X, y = _iris()
    ours, theirs = (_fit(e, X, y) for e in _pair("NuSVC", class_weight={0: 3.0}, gamma=0.2, tol=TOL))
    plain = _fit(ours_module.NuSVC(gamma=0.2, tol=TOL), X, y)
    np.testing.assert_array_equal(ours.class_weight_, theirs.class_weight_)
    _assert_agree(ours.decision_function(X), theirs.decision_function(X))
    np.testing.assert_allclose(ours.decision_function(X), plain.decision_function(X))


# -- 2. coef_ --------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_coef_for_the_linear_kernel_has_scikit_learns_layout(name: str) -> None:
    X, y = _data(name)
    ours, theirs = (_fit(e, X, y) for e in _pair(name, kernel="linear", tol=TOL))
    assert ours.coef_.shape == theirs.coef_.shape and ours.coef_.dtype == theirs.coef_.dtype
    _assert_agree(ours.coef_, theirs.coef_, rel=NU_SVC_AGREE if name == "NuSVC" else 1e-3)
    assert not ours.coef_.flags.writeable
    with pytest.raises(AttributeError):
        ours.coef_ = np.zeros_like(theirs.coef_)
    rows = X @ ours.coef_.T + ours.intercept_              # each machine's decision value
    if name in ("SVC", "NuSVC"):
        ovo = _fit(getattr(ours_module, name)(kernel="linear", tol=TOL, decision_function_shape="ovo"), X, y)
        np.testing.assert_allclose(rows, ovo.decision_function(X), atol=1e-9)
    elif name == "OneClassSVM":
        np.testing.assert_allclose(rows[:, 0], ours.decision_function(X), atol=1e-9)
    else:
        np.testing.assert_allclose(rows[:, 0], ours.predict(X), atol=1e-9)


@pytest.mark.parametrize("name", NAMES)
def test_a_sparse_fit_gives_sparse_dual_coef_and_coef_as_scikit_learns(name: str) -> None:
    """On a CSR X scikit-learn keeps ``dual_coef_`` and ``coef_`` (linear kernel) as CSR matrices, ``coef_``'s
    data read-only; ours the same, with the w and decision values of the dense fit (kernel rows from sparse
    products: the same to the tolerance, not to the bit)."""
    X, y = _data(name)
    Xs = sp.csr_matrix(np.where(np.abs(X) < 0.5, 0.0, X))         # about 40% zeros
    dense = _fit(getattr(ours_module, name)(kernel="linear", tol=TOL), Xs.toarray(), y)
    ours, theirs = (_fit(e, Xs, y) for e in _pair(name, kernel="linear", tol=TOL))
    assert abs(len(ours.support_) - len(theirs.support_)) <= 2    # a point at a bound, within tol
    for attribute, fixed in (("dual_coef_", 0), ("coef_", slice(None)), ("support_vectors_", 1)):
        a, b = getattr(ours, attribute), getattr(theirs, attribute)
        assert sp.issparse(a) and sp.issparse(b) and a.format == b.format == "csr", attribute
        assert a.shape[fixed] == b.shape[fixed] and a.dtype == b.dtype, attribute
    assert not ours.coef_.data.flags.writeable
    rel = NU_SVC_AGREE if name == "NuSVC" else AGREE              # w is unique where the multipliers need not be
    _assert_agree(ours.coef_.toarray(), dense.coef_, rel=rel)
    _assert_agree(_values(ours, Xs), _values(dense, Xs.toarray()), rel=rel)


@pytest.mark.parametrize("name", NAMES)
def test_coef_is_an_attribute_error_for_other_kernels_as_in_scikit_learn(name: str) -> None:
    X, y = _data(name)
    for est in (_fit(e, X, y) for e in _pair(name, kernel="rbf")):
        with pytest.raises(AttributeError, match="only available when using a linear kernel"):
            _ = est.coef_
        assert not hasattr(est, "coef_")
    assert not hasattr(getattr(ours_module, name)(kernel="linear"), "coef_")   # unfitted


# -- 3. callable kernels ---------------------------------------------------------------------------

def quadratic(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """A module-level kernel (so that the estimators pickle): (x^T x' / 4 + 1)^2."""
    return (A @ B.T / 4.0 + 1.0) ** 2


class Recording:
    """A kernel that keeps the arguments of its calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[np.ndarray, np.ndarray]] = []

    def __call__(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        self.calls.append((np.array(A), np.array(B)))
        return quadratic(A, B)


@pytest.mark.parametrize("name", NAMES)
def test_a_callable_kernel_gives_scikit_learns_model(name: str) -> None:
    X, y = _data(name)
    ours, theirs = (_fit(e, X, y) for e in _pair(name, kernel=quadratic, tol=TOL))
    _assert_agree(_values(ours, X), _values(theirs, X), rel=NU_SVC_AGREE if name == "NuSVC" else AGREE)
    if name in CLASSIFIERS:
        np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    elif name == "OneClassSVM":                            # off the boundary
        clear = np.abs(theirs.decision_function(X)) > 1e-3
        np.testing.assert_array_equal(ours.predict(X)[clear], theirs.predict(X)[clear])
    copy = clone(ours)
    assert copy.kernel is quadratic and copy.get_params()["kernel"] is quadratic
    _assert_agree(_values(_fit(copy, X, y), X), _values(ours, X), rel=1e-9)


def test_an_estimator_with_a_callable_kernel_pickles() -> None:
    X, y = _iris()
    est = ours_module.SVC(kernel=quadratic).fit(X, y)
    copy = pickle.loads(pickle.dumps(est))
    assert copy.kernel is quadratic
    np.testing.assert_array_equal(copy.decision_function(X), est.decision_function(X))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("kernel", ["linear", "poly"])
def test_an_estimator_with_a_kernel_of_explicit_features_pickles(name: str, kernel: str) -> None:
    """SVR, NuSVR and OneClassSVM keep their machine, whose certificate caches the explicit feature
    space of the linear and polynomial kernels with a least-squares expansion: a closure once, which
    pickle refused (differential fuzz against scikit-learn, whose estimators pickle)."""
    X, y = _data(name)
    est = _fit(getattr(ours_module, name)(kernel=kernel, degree=2), X, y)
    copy = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(_values(copy, X), _values(est, X))


@pytest.mark.parametrize("name", NAMES)
def test_predict_calls_the_callable_on_the_test_points_and_the_support_vectors(name: str) -> None:
    X, y = _data(name)
    kernel = Recording()
    est = _fit(getattr(ours_module, name)(kernel=kernel), X, y)
    kernel.calls.clear()
    X_test = X[::7] + 0.01
    est.predict(X_test)
    assert kernel.calls
    for A, B in kernel.calls:
        np.testing.assert_array_equal(A, X_test)
        assert np.all(np.isin(B.view([("", B.dtype)] * B.shape[1]),
                              est.support_vectors_.view([("", B.dtype)] * B.shape[1])))


def test_a_kernel_name_that_is_neither_is_refused_naming_the_argument() -> None:
    X, y = _iris()
    with pytest.raises(ValidationError, match="kernel must be one of .* or a callable"):
        ours_module.SVC(kernel="gaussian").fit(X, y)


# -- 4. break_ties ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", CLASSIFIERS)
@pytest.mark.parametrize("break_ties", [False, True])
def test_break_ties_predicts_as_scikit_learn(name: str, break_ties: bool) -> None:
    X, y = _iris()
    ours, theirs = (_fit(e, X, y) for e in _pair(name, gamma=0.5, tol=TOL, break_ties=break_ties))
    rng = np.random.default_rng(2)
    X_test = np.vstack([X, rng.uniform(-4, 4, size=(400, X.shape[1]))])   # far points: vote ties
    clear = np.all(np.abs(_fit(getattr(ours_module, name)(gamma=0.5, tol=TOL, decision_function_shape="ovo"),
                               X, y).decision_function(X_test)) > 1e-3, axis=1)
    np.testing.assert_array_equal(ours.predict(X_test)[clear], theirs.predict(X_test)[clear])
    if break_ties:
        np.testing.assert_array_equal(ours.predict(X_test),
                                      ours.classes_[np.argmax(ours.decision_function(X_test), axis=1)])


@pytest.mark.parametrize("name", CLASSIFIERS)
def test_break_ties_with_ovo_is_a_value_error_as_in_scikit_learn(name: str) -> None:
    X, y = _iris()
    for est in _pair(name, break_ties=True, decision_function_shape="ovo"):
        _fit(est, X, y)
        with pytest.raises(ValueError, match="break_ties must be False"):
            est.predict(X)
    with pytest.raises(ValidationError, match="break_ties must be True or False"):
        ours_module.SVC(break_ties="yes").fit(X, y)


# -- 5. probabilities on tiny classes --------------------------------------------------------------

@pytest.mark.parametrize("name", CLASSIFIERS)
@pytest.mark.parametrize("counts", [(15, 15, 3), (15, 15, 1), (1, 1), (1, 1, 1)])
def test_probability_fits_when_a_class_has_very_few_samples(name: str, counts: tuple[int, ...]) -> None:
    """A class of one to three points still gets probabilities: rows of the simplex whose largest entry is
    the predicted class's. With 15 points in two classes they are scikit-learn's to a mean difference of
    0.12 (Platt's folds differ: LIBSVM shuffles with its own generator) and put more than half their
    mass on the true class (1/K would be chance). With one point per class both libraries' folds leave a
    one-class training set, whose decision value is that class's label (LIBSVM's rule), and fit the same
    sigmoid (A = log 2 > 0, B = 0): it ranks the classes against the decision values. scikit-learn then
    puts most mass on the wrong class of every training point; ours are projected onto the decision
    function's order (``consistent_with``), which leaves the tie 1/K."""
    y = np.concatenate([np.full(c, k) for k, c in enumerate(counts)])
    X = np.random.default_rng(3).normal(size=(y.shape[0], 2)) + 2.0 * y[:, None]
    nu = {"nu": 0.1} if name == "NuSVC" else {}
    ours, theirs = (_fit(e, X, y) for e in _pair(name, probability=True, random_state=0, **nu))
    P, Q = ours.predict_proba(X), theirs.predict_proba(X)
    assert P.shape == Q.shape
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert np.all((P >= 0.0) & (P <= 1.0))
    predicted = np.searchsorted(ours.classes_, ours.predict(X))
    np.testing.assert_array_equal(P[np.arange(y.size), predicted], P.max(axis=1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)         # scikit-learn 1.9 deprecates probA_
        assert ours.probA_.shape == theirs.probA_.shape == (len(counts) * (len(counts) - 1) // 2,)
        if max(counts) == 1:
            np.testing.assert_allclose(ours.probA_, theirs.probA_, rtol=1e-9)
            np.testing.assert_allclose(ours.probB_, theirs.probB_, atol=1e-12)
            assert np.all(ours.probA_ > 0.0)
            np.testing.assert_allclose(P, 1.0 / len(counts))
        else:
            assert np.abs(P - Q).mean() <= 0.12
            assert P[np.arange(y.size), y].mean() > 0.5


@pytest.mark.parametrize("name", CLASSIFIERS)
def test_binary_probA_probB_are_libsvms_sigmoid_as_scikit_learn_keeps_them(name: str) -> None:
    """scikit-learn keeps LIBSVM's (A, B) of the machine (classes_[0], classes_[1]), whose value is minus
    decision_function: p(classes_[1] | x) = 1 / (1 + exp(A d - B)), d = decision_function(x). probB_
    had the other sign, our pair (1, 0)'s (differential fuzz: breast cancer, probB_ 0.37 against
    scikit-learn's -0.24)."""
    X, y = _cancer()
    nu = {"nu": 0.3} if name == "NuSVC" else {}
    ours, theirs = (_fit(e, X, y) for e in _pair(name, probability=True, random_state=0, **nu))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)         # scikit-learn 1.9 deprecates probA_, probB_
        A, B = ours.probA_[0], ours.probB_[0]
        assert np.sign(B) == np.sign(theirs.probB_[0]) and np.sign(A) == np.sign(theirs.probA_[0])
    d = ours.decision_function(X)
    p = 1.0 / (1.0 + np.exp(A * d - B))
    ranked = (p - 0.5) * d > 0                   # where predict_proba's projection onto d's ranking is idle
    assert ranked.mean() > 0.9
    np.testing.assert_allclose(ours.predict_proba(X)[ranked, 1], p[ranked], rtol=0, atol=1e-12)


# -- 6. C = inf ------------------------------------------------------------------------------------

@pytest.mark.parametrize("kernel, classes", [("linear", (0, 1)), ("rbf", (0, 1, 2))], ids=["binary", "multiclass"])
def test_c_inf_is_the_hard_margin_as_in_scikit_learn(kernel: str, classes: tuple[int, ...]) -> None:
    X, y = _iris()
    keep = np.isin(y, classes)
    X, y = X[keep], y[keep]
    ours, theirs = (_fit(e, X, y) for e in _pair("SVC", C=np.inf, kernel=kernel, gamma=0.5, tol=TOL))
    assert all(m.name == "HardMarginSVC" for m in ours.machines_)
    _assert_agree(ours.decision_function(X), theirs.decision_function(X), rel=1e-3)
    np.testing.assert_array_equal(ours.predict(X), y)


def test_c_inf_on_data_that_are_not_separable_is_infeasible() -> None:
    X, y = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]]), np.array([0, 0, 1, 1])   # XOR
    with pytest.raises(InfeasibleError, match="not separable"):
        ours_module.SVC(C=np.inf, kernel="linear").fit(X, y)


@pytest.mark.parametrize("name", ["SVR", "NuSVR"])
def test_c_inf_for_regression_is_refused_naming_c(name: str) -> None:
    X, y = _regression()
    with pytest.raises(ValidationError, match="C must be a positive finite number; got inf"):
        getattr(ours_module, name)(C=np.inf).fit(X, y)


# -- 7. probability after fitting; gamma='scale' on overflowing data ----------------------------------

@pytest.mark.parametrize("name", CLASSIFIERS)
def test_probability_set_after_fitting_is_not_fitted_as_in_scikit_learn(name: str) -> None:
    X, y = _iris()
    for est in _pair(name):
        _fit(est, X, y)
        assert not hasattr(est, "predict_proba")
        with pytest.raises(AttributeError, match="predict_proba"):
            est.predict_proba(X)
        est.set_params(probability=True)
        with pytest.raises(NotFittedError, match="fitted with probability=False"):
            est.predict_proba(X)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("scale", [1.2e154, 1e200], ids=["n var X overflows", "var X overflows"])
def test_gamma_scale_on_overflowing_data_names_x(name: str, scale: float) -> None:
    X, y = _data(name)
    with pytest.raises(ValidationError, match="^X must have a finite, non-negligible variance"):
        _fit(getattr(ours_module, name)(), X * scale, y)


# -- 8. parameters and fitted attributes -----------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_every_scikit_learn_parameter_is_accepted(name: str) -> None:
    ours, theirs = _pair(name)
    assert set(theirs.get_params()) <= set(ours.get_params())
    assert set(ours.get_params()) - set(theirs.get_params()) == {"solver"}


@pytest.mark.parametrize("name, binary", CASES, ids=CASE_IDS)
def test_fitted_attributes_have_scikit_learns_names_shapes_and_dtypes(name: str, binary: bool) -> None:
    X, y = _data(name, binary)
    ours, theirs = (_fit(e, X, y) for e in _pair(name, gamma=0.2, tol=TOL))
    names = [k for k in vars(theirs) if k.endswith("_") and not k.startswith("_")]
    names += ["probA_", "probB_"] if name in CLASSIFIERS else []
    for attribute in names:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)     # scikit-learn 1.9 deprecates probA_, probB_
            a, b = getattr(ours, attribute), getattr(theirs, attribute)
        if isinstance(b, tuple) or np.isscalar(b):
            assert np.shape(a) == np.shape(b) and type(a) is type(b), attribute
            continue
        assert a.shape == b.shape and a.dtype == b.dtype, (attribute, a.shape, b.shape, a.dtype, b.dtype)
    np.testing.assert_array_equal(ours.support_, theirs.support_)
    np.testing.assert_array_equal(ours.n_support_, theirs.n_support_)
    assert ours.fit_status_ == theirs.fit_status_ == 0
    assert ours.shape_fit_ == theirs.shape_fit_



@pytest.mark.parametrize("name, binary", CASES, ids=CASE_IDS)
def test_fit_status_is_1_where_a_solve_stopped_at_max_iter_as_scikit_learns(name: str, binary: bool) -> None:
    """fit_status_ was 0 after every fit: at max_iter=5 scikit-learn's is 1 ('Solver terminated early')
    and ours 0 beside its own ConvergenceWarning; a fit that converges keeps 0."""
    X, y = _data(name, binary)
    for max_iter, status in ((5, 1), (-1, 0)):
        ours, theirs = _pair(name, max_iter=max_iter)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")          # both warn ConvergenceWarning at max_iter=5
            _fit(ours, X, y), _fit(theirs, X, y)
        assert ours.fit_status_ == theirs.fit_status_ == status, (max_iter, ours.fit_status_, theirs.fit_status_)
        assert type(ours.fit_status_) is type(theirs.fit_status_)

# -- the same exception classes as scikit-learn's ------------------------------------------------------

def _raised(call) -> type[BaseException]:
    try:
        call()
    except Exception as exc:        # noqa: BLE001 - the class is what is compared
        return type(exc)
    raise AssertionError("no exception was raised")


@pytest.mark.parametrize("name", NAMES)
def test_unfitted_and_mis_shaped_use_raise_scikit_learns_exception_classes(name: str) -> None:
    X, y = _data(name)
    ours, theirs = _pair(name)
    for est in (ours, theirs):
        assert issubclass(_raised(lambda: est.predict(X)), NotFittedError)
    _fit(ours, X, y), _fit(theirs, X, y)
    for est in (ours, theirs):                      # a test X with a different number of features
        assert issubclass(_raised(lambda: est.predict(X[:, :-1])), ValueError)
    for est in (getattr(ours_module, name)(tol=-1.0), getattr(svm, name)(tol=-1.0)):
        assert issubclass(_raised(lambda: _fit(est, X, y)), ValueError)


@pytest.mark.parametrize("name", CLASSIFIERS)
@pytest.mark.parametrize("param, value", [("probability", 1), ("probability", "yes"), ("random_state", "x"),
                                          ("random_state", -1), ("random_state", 1.5)])
def test_bad_probability_and_random_state_are_value_errors_as_in_scikit_learn(name, param, value) -> None:
    X, y = _data(name)
    ours, theirs = _pair(name, **{param: value})
    with pytest.raises(ValueError):                     # scikit-learn's InvalidParameterError
        _fit(theirs, X, y)
    with pytest.raises(ValidationError, match=f"{param} must be"):
        _fit(ours, X, y)


@pytest.mark.parametrize("name", CLASSIFIERS)
def test_a_fit_whose_pairs_stop_early_warns_once_as_scikit_learn(name: str) -> None:
    """Iris's three pairs each stopped after 2 steps: scikit-learn warns once per fit, ours too, counting
    the solves and quoting the first pair's warning; every pair's report is kept."""
    from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning

    X, y = _data(name)
    counts = []
    for estimator in _pair(name, max_iter=2):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _fit(estimator, X, y)
        counts.append([w for w in caught if issubclass(w.category, SklearnConvergenceWarning)])
    ours, theirs = counts
    assert len(ours) == len(theirs) == 1
    assert str(ours[0].message).startswith("3 of the 3 solves of this fit ended inaccurate")
    assert ours[0].filename == __file__                  # the user's line, as scikit-learn's


def test_a_nu_at_which_the_margin_is_zero_is_a_value_error_as_in_scikit_learn() -> None:
    """Two classes on the same points: the nu-SVC optimum has rho = 0, so LIBSVM's values (the notes' over
    rho) are not finite; scikit-learn raises ValueError, ours a ValidationError naming nu."""
    X, y = np.ones((10, 2)), np.repeat([0, 1], 5)
    ours, theirs = _pair("NuSVC")
    with pytest.raises(ValueError):
        _fit(theirs, X, y)
    with pytest.raises(ValidationError, match=r"nu must leave the classes a positive margin rho.*got nu=0\.5"):
        _fit(ours, X, y)


def test_a_sigmoid_nu_svc_point_with_a_negative_margin_is_refused_as_not_convex() -> None:
    """The sigmoid kernel's nu-SVC dual is not convex: the SMO can stop at a stationary point of the
    standard form (sum a = nu) whose rho is negative, which (7.41)'s rho >= 0 forbids. LIBSVM returns it,
    dividing by that rho, and its predictions there are worse than chance on these data; ours is a
    SolverError that says the kernel is not PSD and names the failing condition and the kernel."""
    X, y = skdata.make_classification(n_samples=120, n_features=5, random_state=16)
    theirs = svm.NuSVC(kernel="sigmoid", nu=0.1).fit(X, y)
    assert theirs.intercept_.shape == (1,) and np.mean(theirs.predict(X) == y) < 0.5
    with pytest.raises(SolverError, match=r"not positive semidefinite .*not convex.*rho >= 0 violated.*Sigmoid"):
        ours_module.NuSVC(kernel="sigmoid", nu=0.1).fit(X, y)


def test_an_infeasible_nu_is_a_value_error_as_in_scikit_learn() -> None:
    """nu above 2 min(N+, N-) / N has no solution: scikit-learn raises ValueError, ours
    InfeasibleError (a ValueError) with the bound."""
    X, y = _cancer()
    keep = np.concatenate([np.flatnonzero(y == 0)[:10], np.flatnonzero(y == 1)[:90]])
    X, y = X[keep], y[keep]
    assert issubclass(_raised(lambda: svm.NuSVC(nu=0.5).fit(X, y)), ValueError)
    with pytest.raises(InfeasibleError, match="nu") as info:
        ours_module.NuSVC(nu=0.5).fit(X, y)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("y", [
    np.array([0, 1] * 20), np.array([3, -1, 7] * 10), np.array([True, False] * 15), np.arange(30) % 25,
    np.array([0.0, 1.0, 2.0] * 10), np.array([0.5, 1.0] * 15), np.array(["a", "b", "c"] * 10),
    np.array([1, 2], dtype=np.uint8), np.arange(21), np.arange(20),
], ids=["binary", "multiclass", "bool", "warns", "float-integral", "continuous", "strings", "uint8", "all-distinct",
        "twenty-distinct"])
def test_class_labels_is_scikit_learns_check_then_unique(y) -> None:
    """``class_labels`` (the classifiers' y check, skipping type_of_target where its answer is known)
    gives scikit-learn's outcome on every kind of y: the same classes and labels, the same warning,
    the same error (a ValidationError, a ValueError, that names y before scikit-learn's message)."""
    import warnings

    from sklearn.utils.multiclass import check_classification_targets

    from sparsekernel.estimators.multiclass import class_labels

    def run(f):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                out = f()
            except ValueError as exc:
                return ("error", str(exc)), []
        return out, [str(w.message) for w in caught]

    ours, our_warnings = run(lambda: class_labels(y))
    theirs, their_warnings = run(lambda: (check_classification_targets(y), np.unique(y, return_inverse=True))[1])
    assert our_warnings == their_warnings
    assert bool(our_warnings) == ((y.size, np.unique(y).size) in {(30, 25), (21, 21)})  # "warns", "all-distinct"
    if isinstance(ours[0], str):           # the same error, named: a ValidationError on y, scikit-learn's words kept
        assert ours[0] == theirs[0] == "error"
        assert ours[1].startswith("y must hold class labels") and ours[1].endswith(": " + theirs[1])
    else:
        np.testing.assert_array_equal(ours[0], theirs[0])
        np.testing.assert_array_equal(ours[1], theirs[1])


def test_a_margin_rho_within_the_solves_resolution_is_refused_at_every_nu_where_it_is_zero() -> None:
    """Overlapping classes (two Gaussians 1.4 apart): Clarabel's nu-SVC optimum has rho ~ 0 (below 1e-8) for
    nu up to 0.4 and rho > 0.1 from nu = 0.7 (the reduced hulls, whose weights are capped at 2/(nu N),
    separate once nu is large). Where rho is zero to the solve's accuracy its sign is rounding, and the
    estimator refused some such nu and divided by a rho of 1e-10 at others; now every one is refused with
    the advice to raise nu, and at nu = 0.7 the values are the notes' divided by rho."""
    from sparsekernel.estimators import NuSVC
    from sparsekernel.formulations import NuSVC as NuSVCMachine
    from sparsekernel.kernels import Linear

    rng = np.random.default_rng(1)
    X = np.vstack([rng.normal(size=(20, 2)) + [0.7, 0], rng.normal(size=(20, 2)) - [0.7, 0]])
    y = np.repeat([1, 0], 20)
    t = np.where(y == 1, 1.0, -1.0)
    rho = {nu: NuSVCMachine(X, t, Linear(), nu=nu).solve("qp-clarabel").rho for nu in (0.05, 0.1, 0.3, 0.7)}
    assert all(abs(rho[nu]) < 1e-8 for nu in (0.05, 0.1, 0.3)) and rho[0.7] > 0.1
    for nu in (0.05, 0.1, 0.3):
        with pytest.raises(ValidationError, match=r"got nu=.*not above the solve's resolution.*A larger nu"):
            NuSVC(kernel="linear", nu=nu, tol=1e-6).fit(X, y)
    fitted = NuSVC(kernel="linear", nu=0.7, tol=1e-6).fit(X, y)
    notes = fitted.solutions_[0]
    assert notes.rho > 0.1 and notes.status == "optimal"
    np.testing.assert_allclose(fitted.decision_function(X), notes.decision_function(X) / notes.rho, rtol=1e-9)


def test_a_margin_of_rounding_on_overlapping_classes_is_refused_quickly() -> None:
    """Overlapping classes, RBF: re-solving at ever tighter tol down to 1e-8 took ten million SMO steps here and
    accepted a rho of 1.4e-9 (Clarabel: 6e-9), dividing the values by it (up to 1197); one capped re-solve
    refuses it. (The step count is the SMO's, not a timing.)"""
    from sparsekernel.estimators import NuSVC
    from sparsekernel.formulations import NuSVC as NuSVCMachine
    from sparsekernel.kernels import RBF

    rng = np.random.default_rng(1)
    X = rng.normal(size=(80, 2))
    y = (X[:, 0] + 0.8 * rng.normal(size=80) > 0).astype(int)
    gamma = 1.0 / (2 * X.var())
    assert abs(NuSVCMachine(X, np.where(y == 1, 1.0, -1.0), RBF(gamma), nu=0.1).solve("qp-clarabel").rho) < 1e-7
    with pytest.raises(ValidationError, match="A larger nu"):
        NuSVC(nu=0.1).fit(X, y)


def test_fits_in_two_threads_leave_the_warnings_filters_and_each_fit_its_own_warning() -> None:
    """Two threads' fits that overlap, the first to start ending first: each fit's warnings are gathered on
    its own thread, so the process's filters and ``showwarning`` are as they were (the fits swapped them by
    ``warnings.catch_warnings``, and the second to end left the first's in place: NonConvexWarning ignored and
    every later warning recorded into a list nobody reads), and each fit warns once, from its own thread."""
    import threading

    from sparsekernel.errors import ConvergenceWarning

    X, y = _data("SVC")
    first_in, second_in, first_done = threading.Event(), threading.Event(), threading.Event()

    def kernel(event_set, event_wait):
        def k(A, B):
            event_set.set()
            event_wait.wait(5)
            return A @ B.T
        return k

    seen: dict[str, list] = {}

    def fit(name, k):
        estimator = ours_module.SVC(kernel=k, max_iter=2)
        try:
            estimator.fit(X, y)
        finally:
            if name == "first":
                first_done.set()
        seen[name] = [threading.current_thread().name]

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        filters, show = list(warnings.filters), warnings.showwarning
        first = threading.Thread(target=fit, args=("first", kernel(first_in, second_in)), name="first")
        second = threading.Thread(target=fit, args=("second", kernel(second_in, first_done)), name="second")
        first.start()
        assert first_in.wait(5)
        second.start()
        first.join(10)
        second.join(10)
        assert warnings.filters == filters and warnings.showwarning is show
        warnings.warn("after the fits", UserWarning)
    assert set(seen) == {"first", "second"}
    ours = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(ours) == 2 and all(str(w.message).startswith("3 of the 3 solves") for w in ours)
    assert [str(w.message) for w in caught if w.category is UserWarning] == ["after the fits"]


@pytest.mark.parametrize("solver", ["libsvm", "primal-clarabel"])
def test_fits_in_two_threads_leave_no_filter_of_their_solvers_behind(solver: str, monkeypatch) -> None:
    """LIBSVM's "Solver terminated early" and cvxpy's "Solution may be inaccurate" are ignored during a
    solve (ours say it); two threads' solves that overlap, the first to start ending first, left the
    second's copy of the first's filter in the process for good (``warnings.catch_warnings``)."""
    import cvxpy
    from overlap import Overlap
    from sklearn.svm import SVC as SklearnSVC

    X, y = _data("SVC")
    X, y = X[y < 2][::2], y[y < 2][::2]
    cls, attribute = (SklearnSVC, "fit") if solver == "libsvm" else (cvxpy.Problem, "solve")
    original = getattr(cls, attribute)
    overlap = Overlap()

    def blocking(self, *args, **kwargs):
        overlap.wait_inside()
        return original(self, *args, **kwargs)

    monkeypatch.setattr(cls, attribute, blocking)
    errors, filters_unchanged = overlap.run(lambda: ours_module.SVC(solver=solver).fit(X, y))
    assert not errors
    assert filters_unchanged


def test_nested_blocks_gathering_warnings_each_keep_their_own() -> None:
    """An inner ``errors.collected`` block that ends (its list empty, as the outer's) left the outer's entry
    gone and its own in place: the outer block's later warnings went to the inner's list."""
    from sparsekernel.errors import ConvergenceWarning, collected, warn

    with collected(ConvergenceWarning) as outer:
        with collected(ConvergenceWarning) as inner:
            pass
        warn("after the inner block", ConvergenceWarning)
    assert [str(w.message) for w in outer] == ["after the inner block"] and inner == []
    assert outer[0].filename == __file__


def test_a_re_solve_for_rho_that_stops_at_its_cap_leaves_the_first_solve_to_judge_rho(monkeypatch) -> None:
    """NuSVC solves again at a hundredth of tol where rho is not above the first solve's resolution. A re-solve
    that stopped at its step cap was kept, inaccurate, and its rho read at the resolution of the tol it was given,
    not reached: on 60 points (nu = 0.05, gamma = 1e-3) a capped re-solve's rho of 2.9e-9 passed at 9.1e-11, and
    the values were divided by it, where the re-solve run to its tol finds rho = 3e-12 (refused: the classes'
    reduced hulls meet) and the certified first solve resolves only 9.1e-9. Now the first solve's answer stands
    and its rho is refused, as the converged re-solve's is."""
    from sparsekernel.errors import ConvergenceWarning
    from sparsekernel.estimators import NuSVC

    svm_module = sys.modules["sparsekernel.estimators.svm"]
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] + rng.normal(size=60) > 0).astype(int)
    refused = r"got nu=0\.05, at which rho = .*not above the solve's resolution"
    with pytest.raises(ValidationError, match=refused):          # the step budget as shipped: converged, refused
        NuSVC(nu=0.05, gamma=1e-3).fit(X, y)
    monkeypatch.setattr(svm_module, "RHO_RESOLVE_STEPS", 5)
    monkeypatch.setattr(svm_module, "RHO_RESOLVE_FACTOR", 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)            # the capped re-solve's warning is not issued
        with pytest.raises(ValidationError, match=refused):
            NuSVC(nu=0.05, gamma=1e-3).fit(X, y)
