"""The scikit-learn estimators: scikit-learn's own checks, agreement with scikit-learn's SVMs on
its bundled data, consistent probabilities, class and sample weights, pipelines and pickling."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from sklearn import datasets as skdata
from sklearn import svm
from sklearn.base import clone
from sklearn.metrics import accuracy_score, r2_score
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import check_sample_weight_equivalence_on_dense_data, parametrize_with_checks

from sparsekernel.estimators import SVC, SVR, NuSVC, NuSVR, OneClassSVM


def _expected_failures(estimator) -> dict[str, str]:
    why = ("gamma='scale' is 1/(D var X) of the data as given, and repeating rows changes var X; with a "
           "fixed gamma the equivalence holds (test_sample_weight_equivalence_with_a_fixed_gamma)")
    failures = {"check_sample_weight_equivalence_on_dense_data": why,
                "check_sample_weight_equivalence_on_sparse_data": why}
    if isinstance(estimator, NuSVC):
        failures["check_class_weight_classifiers"] = "class_weight is ignored (by LIBSVM's nu-SVC too)"
    return failures


@parametrize_with_checks([SVC(), NuSVC(), SVR(), NuSVR(), OneClassSVM()], expected_failed_checks=_expected_failures)
def test_scikit_learn_estimator_checks(estimator, check) -> None:
    check(estimator)


def test_one_class_predicts_a_value_of_exactly_zero_as_an_outlier_as_libsvm_does() -> None:
    """Identical points: every decision value is 0 (each on the boundary); LIBSVM's rule (sum > 0 ? 1 : -1)
    makes them -1, and ours made them +1."""
    X = np.ones((30, 3))
    ours, theirs = OneClassSVM().fit(X), svm.OneClassSVM().fit(X)
    np.testing.assert_array_equal(ours.decision_function(X), theirs.decision_function(X))
    assert not ours.decision_function(X).any()
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))


@pytest.mark.parametrize("estimator, tol", [(SVC(gamma=1.0), 1e-8), (NuSVC(gamma=1.0, nu=0.3), 1e-11),
                                            (SVR(gamma=1.0), 1e-8), (NuSVR(gamma=1.0), 1e-11),
                                            (OneClassSVM(gamma=1.0), 1e-11)])
def test_sample_weight_equivalence_with_a_fixed_gamma(estimator, tol: float) -> None:
    """Weight 2 is the same as a repeated row: scikit-learn's own check, which raises AssertionError
    when the two fits' predictions differ; at a tol small enough for both fits to be accurate to its
    tolerance (1e-9 absolute, on decision values of nu machines that lie on the boundary)."""
    check_sample_weight_equivalence_on_dense_data(type(estimator).__name__, estimator.set_params(tol=tol))


def _split(loader, regression: bool = False):
    X, y = loader(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    if regression:
        y = (y - y.mean()) / y.std()
        return train_test_split(X, y, test_size=0.3, random_state=0)
    return train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)


CLASSIFICATION = {"iris": skdata.load_iris, "wine": skdata.load_wine, "breast cancer": skdata.load_breast_cancer,
                  "digits": skdata.load_digits}


@pytest.mark.parametrize("name", list(CLASSIFICATION))
@pytest.mark.parametrize("ours, theirs", [(SVC(C=1.0), svm.SVC(C=1.0)), (NuSVC(nu=0.3), svm.NuSVC(nu=0.3))],
                         ids=["SVC", "NuSVC"])
def test_classifiers_agree_with_scikit_learn(name: str, ours, theirs) -> None:
    X_train, X_test, y_train, y_test = _split(CLASSIFICATION[name])
    a = clone(ours).fit(X_train, y_train)
    b = clone(theirs).fit(X_train, y_train)
    pa, pb = a.predict(X_test), b.predict(X_test)
    assert abs(accuracy_score(y_test, pa) - accuracy_score(y_test, pb)) <= 0.01
    assert np.mean(pa == pb) >= 0.995
    # both stop at tol 1e-3: support sets may differ by a point or two with multipliers near zero
    assert len(set(a.support_) ^ set(b.support_)) <= max(2, 0.01 * len(b.support_))


@pytest.mark.parametrize("ours, theirs", [(SVR(C=1.0, epsilon=0.1), svm.SVR(C=1.0, epsilon=0.1)),
                                          (NuSVR(C=1.0, nu=0.5), svm.NuSVR(C=1.0, nu=0.5))], ids=["SVR", "NuSVR"])
def test_regressors_agree_with_scikit_learn(ours, theirs) -> None:
    X_train, X_test, y_train, y_test = _split(skdata.load_diabetes, regression=True)
    a = clone(ours).fit(X_train, y_train)
    b = clone(theirs).fit(X_train, y_train)
    pa, pb = a.predict(X_test), b.predict(X_test)
    assert abs(r2_score(y_test, pa) - r2_score(y_test, pb)) <= 0.01
    # "identical" predictions: equal to the SMO's tolerance on targets of unit variance
    assert np.mean(np.abs(pa - pb) <= 1e-2) >= 0.995


def test_decision_values_follow_libsvm_conventions() -> None:
    X_train, X_test, y_train, _ = _split(skdata.load_iris)
    for ours, theirs in ((SVC(tol=1e-8), svm.SVC(tol=1e-8)), (NuSVC(tol=1e-8), svm.NuSVC(tol=1e-8))):
        a, b = ours.fit(X_train, y_train), theirs.fit(X_train, y_train)
        for shape in ("ovo", "ovr"):
            a.set_params(decision_function_shape=shape)
            b.set_params(decision_function_shape=shape)
            np.testing.assert_allclose(a.decision_function(X_test), b.decision_function(X_test), atol=1e-4)
        np.testing.assert_allclose(a.dual_coef_, b.dual_coef_, atol=1e-4)
        np.testing.assert_allclose(a.intercept_, b.intercept_, atol=1e-4)
    X_train, X_test, y_train, _ = _split(skdata.load_breast_cancer)
    a, b = SVC(tol=1e-8).fit(X_train, y_train), svm.SVC(tol=1e-8).fit(X_train, y_train)
    np.testing.assert_allclose(a.decision_function(X_test), b.decision_function(X_test), atol=1e-4)
    oc_a, oc_b = OneClassSVM(nu=0.2, tol=1e-8).fit(X_train), svm.OneClassSVM(nu=0.2, tol=1e-8).fit(X_train)
    np.testing.assert_allclose(oc_a.decision_function(X_test), oc_b.decision_function(X_test), atol=1e-4)
    np.testing.assert_array_equal(oc_a.predict(X_test), oc_b.predict(X_test))


@pytest.mark.parametrize("name", list(CLASSIFICATION))
def test_probabilities_agree_with_predict_and_are_calibrated(name: str) -> None:
    X_train, X_test, y_train, y_test = _split(CLASSIFICATION[name])
    ours = SVC(probability=True, random_state=0).fit(X_train, y_train)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # scikit-learn 1.9 deprecates probability=True
        theirs = svm.SVC(probability=True, random_state=0).fit(X_train, y_train)
        p_theirs = theirs.predict_proba(X_test)
    for X in (X_train, X_test):
        P = ours.predict_proba(X)
        np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-9)
        np.testing.assert_array_equal(ours.classes_[np.argmax(P, axis=1)], ours.predict(X))
        scores = ours.decision_function(X)
        scores = np.column_stack([-scores, scores]) if scores.ndim == 1 else scores
        # never ranks two classes differently from the decision function
        for k in range(P.shape[1]):
            for j in range(P.shape[1]):
                assert not np.any((scores[:, k] > scores[:, j]) & (P[:, k] < P[:, j]))
    Y = (y_test[:, None] == ours.classes_[None, :]).astype(float)
    brier_ours = np.mean(np.sum((ours.predict_proba(X_test) - Y) ** 2, axis=1))
    brier_theirs = np.mean(np.sum((p_theirs - Y) ** 2, axis=1))
    assert brier_ours <= brier_theirs + 0.01


def test_platt_fit_matches_scikit_learns_sigmoid_calibration() -> None:
    from sklearn.calibration import _sigmoid_calibration

    from sparsekernel.probability import fit_platt

    rng = np.random.default_rng(0)
    f = rng.normal(size=400)
    y = np.where(rng.uniform(size=400) < 1 / (1 + np.exp(-2 * f + 0.3)), 1, -1)
    ours = fit_platt(f, y)
    A, B = _sigmoid_calibration(f, (y > 0).astype(int))
    assert ours.A == pytest.approx(A, rel=1e-5) and ours.B == pytest.approx(B, rel=1e-5)
    for labels in ((y > 0).astype(int), y > 0):            # scikit-learn's 0/1 and booleans: 1 is positive
        assert fit_platt(f, labels) == ours


def test_a_decision_value_of_zero_is_the_same_class_for_predict_and_predict_proba() -> None:
    """At f(x) = 0 predict gives classes_[1] (LIBSVM's vote, scikit-learn's rule). predict_proba ranked
    the classes by the scores (-f, f), a tie, and its tie-break sent the point to classes_[0]: on a point
    of the boundary where the sigmoid says 0.508 for classes_[1], and on identical training points
    (f = 0 and a sigmoid of exactly 1/2 everywhere)."""
    X = np.array([[-2.0], [-1.0], [-1.5], [-3.0], [-2.5], [1.0], [2.0], [1.5], [3.0], [2.5], [-0.2], [0.3]])
    y = np.array([0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0])
    on_boundary = SVC(kernel="linear", probability=True, random_state=0).fit(X, y)
    identical = SVC(probability=True, random_state=0).fit(np.zeros((10, 2)), [0, 1] * 5)
    for est, point in ((on_boundary, [[0.0]]), (identical, [[0.0, 0.0]])):
        assert est.decision_function(point)[0] == 0.0 and est.predict(point)[0] == 1
        P = est.predict_proba(point)
        assert P[0, 1] > P[0, 0] and np.argmax(P[0]) == 1
        np.testing.assert_allclose(P[0, 1], est._sigmoids[0](np.zeros(1))[0], atol=1e-9)


@pytest.mark.parametrize("centers", [[[0, 0], [4, 4]], [[0, 0], [4, 4], [8, 0]]])
def test_probabilities_stay_within_libsvms_min_prob_and_their_logs_are_finite(centers) -> None:
    """LIBSVM keeps every pair's probability within [1e-7, 1 - 1e-7] (min_prob), two classes too; our
    two-class branch did not clip, so a far point had probability 1e-173 or 0 and predict_log_proba -inf
    with numpy's divide-by-zero warning (test_libsvm_model compares the clipped values with LIBSVM's)."""
    X, y = skdata.make_blobs(30 * len(centers), centers=centers, cluster_std=1.0, random_state=2)
    est = SVC(kernel="linear", probability=True, random_state=0).fit(X, y)
    far = np.array([[-200.0, -200.0], [300.0, 300.0], [300.0, -300.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")                     # numpy's divide-by-zero warning included
        P, log_P = est.predict_proba(far), est.predict_log_proba(far)
    assert np.all(np.isfinite(log_P)) and P.min() >= 0.5e-7
    assert P.min() <= 1.01e-7                              # at the clip: the points are far
    np.testing.assert_allclose(np.exp(log_P), P, rtol=1e-12)


@pytest.mark.parametrize("call, words", [
    (lambda f: f.fit_platt([np.nan, 1.0, 2.0], [1, -1, 1]), r"^decision must be a 1-D array .* got 1 NaN"),
    (lambda f: f.fit_platt([1.0, 2.0, 3.0], [1, -1]), r"^labels must be 3 labels, each \+1 or -1"),
    (lambda f: f.fit_platt([1.0, 2.0], [1, 2]), r"^labels must be 2 labels, each \+1 or -1, or each 0 or 1"),
    (lambda f: f.fit_platt([1.0, 2.0], [-1, 0]), r"^labels must be 2 labels, each \+1 or -1, or each 0 or 1"),
    (lambda f: f.couple(np.full((1, 2, 3), 0.5)), r"^r must be an array \(n, K, K\)"),
    (lambda f: f.couple(np.full((1, 2, 2), 1.5)), r"^r must be an array \(n, K, K\) of pairwise probabilities in"),
    (lambda f: f.consistent_with(np.full((2, 3), 1 / 3), np.zeros((2, 2))), r"^scores must be an array \(2, 3\)"),
    (lambda f: f.consistent_with(np.zeros((1, 2)), np.ones((1, 2))), r"^p must be an array \(n, K\) of probab"),
])
def test_the_probability_helpers_name_a_bad_argument(call, words: str) -> None:
    """fit_platt, couple and consistent_with are public: NaN decision values gave a flat sigmoid (A = 0)
    without a word, other lengths numpy's broadcast errors, and consistent_with returned an answer for 3
    classes of p and 2 of scores."""
    from sparsekernel import probability
    from sparsekernel.errors import ValidationError

    with pytest.raises(ValidationError, match=words):
        call(probability)


def test_sample_weights_times_0_01_with_c_times_100_give_the_same_dual() -> None:
    X_train, _, y_train, _ = _split(skdata.load_breast_cancer)
    w = np.random.default_rng(2).uniform(0.5, 2.0, size=len(y_train))
    a = SVC(C=1.0, tol=1e-8).fit(X_train, y_train, sample_weight=w)
    b = SVC(C=100.0, tol=1e-8).fit(X_train, y_train, sample_weight=0.01 * w)
    np.testing.assert_allclose(a.dual_, b.dual_, atol=1e-6)
    X_train, _, y_train, _ = _split(skdata.load_diabetes, regression=True)
    w = np.random.default_rng(3).uniform(0.5, 2.0, size=len(y_train))
    a = SVR(C=1.0, tol=1e-8).fit(X_train, y_train, sample_weight=w)
    b = SVR(C=100.0, tol=1e-8).fit(X_train, y_train, sample_weight=0.01 * w)
    np.testing.assert_allclose(a.dual_, b.dual_, atol=1e-6)


@pytest.mark.parametrize("class_weight", ["balanced", {0: 2.0, 1: 0.5}])
def test_class_weights_equal_scikit_learns(class_weight) -> None:
    X_train, X_test, y_train, _ = _split(skdata.load_breast_cancer)
    a = SVC(class_weight=class_weight, tol=1e-8).fit(X_train, y_train)
    b = svm.SVC(class_weight=class_weight, tol=1e-8).fit(X_train, y_train)
    np.testing.assert_allclose(a.decision_function(X_test), b.decision_function(X_test), atol=1e-4)


def test_full_dual_and_kkt_report_are_exposed() -> None:
    X_train, _, y_train, _ = _split(skdata.load_breast_cancer)
    est = SVC(tol=1e-6).fit(X_train, y_train)
    assert est.dual_.shape == (len(y_train),)
    assert np.all(est.dual_ >= 0) and np.all(est.dual_ <= est.C + 1e-12)
    assert set(np.flatnonzero(est.dual_ > 0)) >= set(est.support_)
    assert est.kkt_report_.ok, str(est.kkt_report_)
    iris = SVC(tol=1e-6).fit(*_split(skdata.load_iris)[::2])
    assert iris.dual_.shape == (3, 105) and len(iris.kkt_report_) == 3
    assert all(r.ok for r in iris.kkt_report_)


@pytest.mark.parametrize("solver", ["qp-clarabel", "clarabel", "qp-osqp"])
def test_other_solvers_give_the_same_model(solver: str) -> None:
    X_train, X_test, y_train, _ = _split(skdata.load_wine)
    a = SVC(solver="smo", tol=1e-8).fit(X_train, y_train)
    b = SVC(solver=solver).fit(X_train, y_train)
    np.testing.assert_allclose(a.decision_function(X_test), b.decision_function(X_test), atol=1e-4)


def test_pipeline_grid_search_clone_and_pickle() -> None:
    X_train, X_test, y_train, y_test = _split(skdata.load_wine)
    pipe = make_pipeline(StandardScaler(), SVC())
    search = GridSearchCV(pipe, {"svc__C": [0.1, 1.0, 10.0], "svc__gamma": ["scale", 0.1]}, cv=3).fit(X_train, y_train)
    assert search.best_score_ > 0.9
    restored = pickle.loads(pickle.dumps(search.best_estimator_))
    np.testing.assert_array_equal(restored.predict(X_test), search.best_estimator_.predict(X_test))
    for est in (SVC(C=3.0, probability=True), NuSVC(nu=0.2), SVR(epsilon=0.3), NuSVR(nu=0.1), OneClassSVM(nu=0.2)):
        copy = clone(est)
        assert copy.get_params() == est.get_params() and copy is not est


def test_precomputed_kernel_and_bad_parameters() -> None:
    from sklearn.metrics.pairwise import rbf_kernel

    from sparsekernel.errors import ValidationError

    X_train, X_test, y_train, _ = _split(skdata.load_iris)
    a = SVC(kernel="precomputed", tol=1e-8).fit(rbf_kernel(X_train, gamma=0.3), y_train)
    b = SVC(kernel="rbf", gamma=0.3, tol=1e-8).fit(X_train, y_train)
    np.testing.assert_allclose(a.decision_function(rbf_kernel(X_test, X_train, gamma=0.3)),
                               b.decision_function(X_test), atol=1e-6)
    # SVC takes C = inf (the hard margin): its message said "a positive finite number", not its domain
    for bad, message in ((SVC(C=-1.0), r"^C must be a positive finite number or inf \(the hard margin\); got -1.0$"),
                         (SVR(C=-1.0), "^C must be a positive finite number; got -1.0$"),
                         (SVC(gamma=-2.0), "gamma must be 'scale', 'auto' or a positive finite number; got -2.0"),
                         (NuSVC(nu=1.5), r"nu must be a number in \(0, 1\]; got 1.5"),
                         (SVC(kernel="cosine"), "kernel must be one of"),
                         (SVC(decision_function_shape="ova"), "decision_function_shape must be 'ovr' or 'ovo'")):
        with pytest.raises(ValidationError, match=message):
            bad.fit(X_train, y_train)


@pytest.mark.parametrize("class_weight, message", [
    ({0: -1.0, 1: 1.0}, r"class_weight\[0\] must be a positive finite number; got -1.0"),
    ({0: 0.0}, r"class_weight\[0\] must be a positive finite number; got 0.0"),
    ({1: float("nan")}, r"class_weight\[1\] must be a positive finite number; got nan"),
    ({5: 2.0}, r"class_weight must be None, 'balanced' or a dict \{label: weight\} over the classes of y \[0, 1\]"),
    ([1.0, 2.0], r"class_weight must be None, 'balanced' or a dict \{label: weight\}; got \[1.0, 2.0\]"),
])
def test_a_bad_class_weight_is_refused_naming_class_weight(class_weight, message) -> None:
    """A zero, negative or NaN class weight emptied its class's pairs and was refused as a bad
    *sample_weight*; a dict over other labels or a list reached scikit-learn's own errors (differential
    fuzz: y in {-1, +1} with class_weight {0: w, 1: w})."""
    from sparsekernel.errors import ValidationError

    X, y = skdata.make_classification(n_samples=40, n_features=3, n_informative=2, n_redundant=0, random_state=0)
    for est in (SVC(class_weight=class_weight), NuSVC(class_weight=class_weight)):
        with pytest.raises(ValidationError, match=message):
            est.fit(X, y)


@pytest.mark.parametrize("solver", ["smo", "clarabel", "osqp", "primal-clarabel", "qp-clarabel", "qp-osqp"])
def test_a_fitted_estimator_pickles_whatever_its_solver(solver: str) -> None:
    import pickle

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] + 0.3 * rng.normal(size=40) > 0).astype(int)
    est = SVC(solver=solver, kernel="rbf", gamma=0.5).fit(X, y)
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.decision_function(X), est.decision_function(X))
    machine = again.machines_[0]
    assert machine.solve("clarabel").dual_objective == pytest.approx(est.solutions_[0].dual_objective, rel=1e-5)


def test_a_multiclass_fit_frees_each_pairs_machine_once_solved() -> None:
    """Each pair's machine (with its copy of the pair's rows, and its Gram matrix where one was computed)
    is dropped once solved; its QP's ``gram`` was the machine's bound method, a reference cycle, so the
    machines stayed until the cyclic collector ran: 10 pairs of 4 classes' rows held at the end of a fit
    (26 MB for 4000 points of 200 features). Now none is left for the collector."""
    import gc

    from sparsekernel.formulations.machine import Machine

    X, y = skdata.load_digits(return_X_y=True)
    X, y = X[:300] / 16, y[:300] % 5
    gc.collect()
    gc.disable()
    try:
        SVC().fit(X, y)
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        left = [o for o in gc.garbage if isinstance(o, Machine)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert left == []


def test_a_qp_that_outlives_its_machine_computes_the_kernel_and_pickles() -> None:
    """The QP refers to its machine weakly: once the machine is gone its ``gram`` computes the kernel
    matrix itself, and a pickle of it (whose machine reference is then None) raised TypeError from
    weakref.ref(None)."""
    import gc

    from sparsekernel.formulations import SoftMarginSVC
    from sparsekernel.kernels import RBF

    rng = np.random.default_rng(1)
    X = rng.normal(size=(25, 2))
    machine = SoftMarginSVC(X, np.where(X[:, 0] > 0, 1.0, -1.0), RBF(0.7), C=2.0)
    qp = machine.standard_qp()
    K = RBF(0.7)(X, X)
    del machine
    gc.collect()
    np.testing.assert_allclose(qp.gram(), K, rtol=1e-12)
    np.testing.assert_allclose(pickle.loads(pickle.dumps(qp)).gram(), K, rtol=1e-12)


@pytest.mark.parametrize("cls", [SVC, NuSVC])
def test_a_pickle_leaves_out_the_pairs_machines_and_solutions_rebuilt_on_first_use(cls) -> None:
    """``machines_`` and ``solutions_`` are built from the training X on first use and kept: each pair's
    machine holds a copy of its two classes' rows, so after reading them a 10-class pickle was 3.4 times
    as large (machines_, 600 digits) and 1.6 times (solutions_). The pickle (and a deep copy) leaves
    them out, to be built again; the estimator pickled keeps its own."""
    import copy

    X, y = skdata.load_digits(return_X_y=True)
    X, y = X[:200] / 16, y[:200]
    est = cls(nu=0.1) if cls is NuSVC else cls()
    est.fit(X, y)
    size = len(pickle.dumps(est))
    machines, solutions = est.machines_, est.solutions_
    assert len(pickle.dumps(est)) == size
    assert est.machines_ is machines and est.solutions_ is solutions
    for again in (pickle.loads(pickle.dumps(est)), copy.deepcopy(est)):
        np.testing.assert_array_equal(again.decision_function(X), est.decision_function(X))
        assert [m.N for m in again.machines_] == [m.N for m in machines]
        for a, b in zip(again.solutions_, solutions):
            np.testing.assert_array_equal(a.support_vectors, b.support_vectors)


@pytest.mark.parametrize("name", ["SVC", "NuSVC"])
def test_a_binary_decision_of_exactly_zero_predicts_the_second_class_as_libsvm_does(name) -> None:
    """LIBSVM's binary machine is (classes_[0], classes_[1]) with minus our decision value and votes for
    classes_[0] where its value is > 0: a point on the boundary (x = 0 between -1 and 1, or every point of a
    constant X) goes to classes_[1]. The vote of our pair (1, 0) sent it to classes_[0] (a fuzz run's
    report); multiclass pairs (i, j), i < j, already voted for j at 0, as LIBSVM."""
    from sparsekernel import estimators

    ours, theirs = getattr(estimators, name), getattr(svm, name)
    X, y = np.array([[-1.0], [1.0], [-2.0], [2.0]]), np.array(["a", "b", "a", "b"])
    at = np.array([[0.0], [0.5], [-0.5]])
    fitted = ours(kernel="linear").fit(X, y)
    assert fitted.decision_function(at)[0] == 0.0
    np.testing.assert_array_equal(fitted.predict(at), theirs(kernel="linear").fit(X, y).predict(at))
    np.testing.assert_array_equal(fitted.predict(at), ["b", "b", "a"])
    if name == "SVC":                   # NuSVC refuses a margin rho of 0 (its values are divided by rho)
        constant, labels = np.ones((10, 2)), np.arange(10) % 2
        np.testing.assert_array_equal(ours().fit(constant, labels).predict(constant[:3]),
                                      theirs().fit(constant, labels).predict(constant[:3]))


def test_a_kernel_set_after_fit_takes_effect_at_the_next_fit_and_prediction_reads_the_fitted_one() -> None:
    """set_params(kernel=...) after a fit, without a refit: prediction read the new parameter to decide
    whether X is a Gram matrix and the fitted model for the rest (a bare numpy matmul error, or an RBF
    model demanding a Gram matrix; a fuzz run's report). Now the fitted model's kernel decides until the
    next fit, as every other parameter (gamma, C) does; the refit takes the new kernel."""
    rng = np.random.default_rng(0)
    X, Xt = rng.normal(size=(40, 3)), rng.normal(size=(5, 3))
    y = np.digitize(X[:, 0], [-0.4, 0.4])
    est = SVC(kernel="precomputed").fit(X @ X.T, y)
    before = est.decision_function(Xt @ X.T)
    est.set_params(kernel="rbf")
    np.testing.assert_array_equal(est.decision_function(Xt @ X.T), before)
    assert est.fit(X, y).decision_function(Xt).shape == (5, 3)        # the refit: RBF on the inputs
    reg = SVR().fit(X, X[:, 1])
    predicted = reg.predict(Xt)
    reg.set_params(kernel="linear")
    np.testing.assert_array_equal(reg.predict(Xt), predicted)
    with pytest.raises(AttributeError, match="linear kernel"):
        reg.coef_                                                     # an RBF model has no w in input space
    assert reg.fit(X, X[:, 1]).coef_.shape == (1, 3)
    one = OneClassSVM().fit(X)
    scores = one.score_samples(Xt)
    one.set_params(kernel="precomputed")
    np.testing.assert_array_equal(one.score_samples(Xt), scores)
    assert one.__sklearn_tags__().input_tags.pairwise                  # tags follow the parameter
