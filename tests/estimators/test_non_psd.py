"""Kernels whose Gram matrix is not PSD (the sigmoid): solved by the SMO as LIBSVM solves them, with
one NonConvexWarning, a report that certifies a KKT point and says it is not a certified optimum;
refused by the methods that need convexity, with the smallest eigenvalue named."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from sklearn import datasets, svm
from sklearn.preprocessing import StandardScaler

from sparsekernel.duality import check
from sparsekernel.errors import NonConvexWarning, ValidationError
from sparsekernel.estimators import SVC, NuSVC, OneClassSVM
from sparsekernel.formulations import EpsilonSVR, NuSVC as NuSVCMachine, SoftMarginSVC
from sparsekernel.kernels import RBF, Sigmoid


def _standardised(name: str) -> tuple[np.ndarray, np.ndarray]:
    X, y = getattr(datasets, f"load_{name}")(return_X_y=True)
    return StandardScaler().fit_transform(X), y


def _reports(estimator) -> list:
    report = estimator.kkt_report_
    return report if isinstance(report, list) else [report]


@pytest.mark.parametrize("ours, reference, name, agreement", [
    (SVC(kernel="sigmoid"), svm.SVC(kernel="sigmoid"), "iris", 1.0),
    (SVC(kernel="sigmoid"), svm.SVC(kernel="sigmoid"), "breast_cancer", 0.995),
    (NuSVC(kernel="sigmoid", nu=0.3), svm.NuSVC(kernel="sigmoid", nu=0.3), "iris", 0.98),
    (OneClassSVM(kernel="sigmoid"), svm.OneClassSVM(kernel="sigmoid"), "breast_cancer", 0.99),
])
def test_the_sigmoid_kernel_is_solved_as_libsvm_solves_it(ours, reference, name: str, agreement: float) -> None:
    X, y = _standardised(name)
    args = (X,) if isinstance(ours, OneClassSVM) else (X, y)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ours.fit(*args)
    reference.fit(*args)
    nonconvex = [w for w in caught if issubclass(w.category, NonConvexWarning)]
    assert len(nonconvex) == 1, [str(w.message) for w in nonconvex]      # one per fit, not per pair
    assert "smallest eigenvalue -" in str(nonconvex[0].message)
    for report in _reports(ours):
        assert report.ok and report.convex is False
        assert "not a certified optimum" in str(report)
        assert json.loads(report.to_json())["convex"] is False
    solutions = ours.solutions_ if hasattr(ours, "solutions_") else [ours.solution_]
    assert all(sol.status == "kkt_point" for sol in solutions)
    # the same KKT point as LIBSVM's (a non-convex dual has several; on these data the two solvers,
    # with the same working-set rule and tau, reach the same one up to a few points)
    assert np.mean(ours.predict(X) == reference.predict(X)) >= agreement


def test_a_non_convex_regression_is_certified_as_a_kkt_point_and_so_is_libsvms() -> None:
    """Where the two solvers reach different KKT points (SVR's sigmoid on breast cancer), each is
    certified by the same conditions: neither is an optimum that the other misses."""
    X, y = _standardised("breast_cancer")
    t = X[:, 0] + 0.1 * y
    with pytest.warns(NonConvexWarning):
        machine = EpsilonSVR(X, t, Sigmoid(gamma=1 / X.shape[1]), C=1.0, epsilon=0.1)
        ours, theirs = machine.solve("smo"), machine.solve("libsvm")
    for sol in (ours, theirs):
        assert sol.status == "kkt_point" and sol.report.ok and not sol.report.convex
        assert check(machine, sol, tol=sol.tol).ok


@pytest.mark.parametrize("method", ["clarabel", "osqp", "primal-clarabel", "qp-clarabel", "qp-osqp"])
def test_methods_that_need_convexity_refuse_a_non_psd_kernel_naming_its_smallest_eigenvalue(method: str) -> None:
    X, y = _standardised("iris")
    t = np.where(y == 0, 1.0, -1.0)
    machine = SoftMarginSVC(X, t, Sigmoid(gamma=0.5, coef0=-1.0))
    assert machine.convex is False
    lam_min = machine.eigenvalue_range[0]
    lam = np.linalg.eigvalsh(machine.gram())[0]            # the eigenvalue the message names, recomputed
    assert lam_min == pytest.approx(lam, rel=1e-8) and lam < 0
    with pytest.raises(ValidationError, match=r"smallest eigenvalue -\d") as info:
        machine.solve(method)
    assert "not convex" in str(info.value) and "'smo'" in str(info.value)


def test_the_gap_vanishes_at_a_kkt_point_of_a_non_convex_dual() -> None:
    """P - D = u^T K u + C sum xi - sum a vanishes by complementary slackness whatever the sign of
    K's eigenvalues: the report's gap row checks the KKT point, not convexity."""
    X, y = _standardised("iris")
    t = np.where(y == 1, 1.0, -1.0)
    machine = NuSVCMachine(X, t, Sigmoid(gamma=0.1, coef0=-0.5), nu=0.4)
    with pytest.warns(NonConvexWarning):
        sol = machine.solve("smo", tol=1e-8)
    assert sol.report.ok and sol.report.gap.relative <= 1e-6


def test_psd_kernels_and_psd_sigmoid_gram_matrices_stay_certified_optima() -> None:
    X, y = _standardised("iris")
    t = np.where(y == 0, 1.0, -1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonConvexWarning)
        sol = SoftMarginSVC(X, t, RBF(0.5)).solve("smo")
        # tanh(gamma x^T y) at gamma = 1e-4 is gamma x^T y less a cubic term of order 1e-12: its smallest
        # eigenvalue, -1.0e-9 on these 150 points, is within the check's 1e-8; at coef0 = 1 it is -2.6e-6
        tiny = SoftMarginSVC(X, t, Sigmoid(gamma=1e-4, coef0=0.0))
        near_linear = tiny.solve("smo", tol=1e-8)
    assert np.linalg.eigvalsh(Sigmoid(gamma=1e-4, coef0=0.0)(X)).min() >= -1e-8
    assert tiny.convex is True and near_linear.status == "optimal" and near_linear.report.convex
    assert check(tiny, near_linear).ok
    reference = svm.SVC(kernel="sigmoid", gamma=1e-4, coef0=0.0, C=1.0, tol=1e-8).fit(X, t)
    np.testing.assert_allclose(near_linear.decision_function(X), reference.decision_function(X), atol=1e-5)
    assert sol.status == "optimal" and sol.report.convex


@pytest.mark.parametrize("name", ["SVR", "NuSVR", "OneClassSVM"])
def test_a_fitted_machine_keeps_no_gram_matrix_of_its_eigenvalue_check(name: str) -> None:
    """A sigmoid kernel's machine computes its Gram matrix at construction for the eigenvalue check (N <=
    PSD_CHECK_MAX_N) and cached it: the fitted ``machine_`` held the N x N matrix for the estimator's
    life, and its pickle carried it (8.3 MB at N = 1000, scikit-learn's 52 kB). The fit now drops it,
    and a machine pickles without it; ``gram()`` computes it again where asked."""
    import pickle

    import sparsekernel.estimators as estimators

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    estimator = getattr(estimators, name)(kernel="sigmoid", gamma=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonConvexWarning)
        estimator.fit(X, X[:, 0]) if name != "OneClassSVM" else estimator.fit(X)
    assert estimator.machine_.eigenvalue_range is not None          # the check ran
    held = [k for k, v in vars(estimator.machine_).items() if getattr(v, "shape", None) == (400, 400)]
    assert held == []
    assert len(pickle.dumps(estimator)) < 400 * 400 * 8 / 4
    again = pickle.loads(pickle.dumps(estimator))
    np.testing.assert_array_equal(again.predict(X), estimator.predict(X))
    np.testing.assert_allclose(again.machine_.gram(), Sigmoid(gamma=0.1, coef0=0.0)(X, X))
    machine = EpsilonSVR(X, X[:, 0], Sigmoid(gamma=0.1, coef0=0.0), C=1.0, epsilon=0.1)
    assert len(pickle.dumps(machine)) < 400 * 400 * 8 / 4
