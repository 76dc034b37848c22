"""Audit of ``fit_path`` (second pass): each copy is the cold fit on inputs a scikit-learn user brings
that the main parametrisation does not cover (weights with zeros, class weights, string labels, unsorted
and repeated values, C = inf, nu at its feasibility bound, sparse, precomputed and callable kernels).
All passed when written; they guard the contract, dual objective to 1e-6 relative and the same support."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.datasets import make_classification

from sparsekernel.estimators import SVC, NuSVC, OneClassSVM

TOL = 1e-6
X_2, Y_2 = make_classification(n_samples=150, n_features=5, random_state=1)
X_3, Y_3 = make_classification(n_samples=150, n_features=5, n_informative=3, n_classes=3, random_state=0)
WEIGHTS = np.random.RandomState(0).rand(150)
WEIGHTS[::4] = 0.0                                   # a quarter of the points out of every fit
LABELS = np.array(["setosa", "versicolor", "virginica"])[Y_3]
BOUND = 2 * min(np.sum(Y_2 == 0), np.sum(Y_2 == 1)) / Y_2.shape[0]     # nu-SVC's largest feasible nu
_rs = np.random.RandomState(0)
X_SEP = _rs.randn(100, 2)
Y_SEP = (X_SEP[:, 0] + 0.5 * X_SEP[:, 1] > 0).astype(int)
X_SEP[Y_SEP == 1] += 0.3                             # a margin: the hard-margin machine (C = inf) is feasible


def _quadratic(A, B):
    return (A @ B.T + 1.0) ** 2


CASES = {
    "unsorted-repeated-weights-zero": (SVC(tol=TOL), X_3, Y_3, "C", [10.0, 0.1, 1.0, 1.0, 1e3], WEIGHTS),
    "class-weight-string-labels": (SVC(tol=TOL, class_weight={"setosa": 1.0, "versicolor": 5.0, "virginica": 0.2}),
                                   X_3, LABELS, "C", [0.1, 1.0, 10.0], None),
    "balanced": (SVC(tol=TOL, class_weight="balanced"), X_3, Y_3, "C", [0.1, 1.0, 10.0], None),
    "hard-margin": (SVC(tol=TOL, kernel="linear"), X_SEP, Y_SEP, "C", [np.inf, 1.0, 1e3], None),
    "sparse": (SVC(tol=TOL), sp.csr_matrix(X_3), Y_3, "C", [0.1, 1.0, 10.0], None),
    "precomputed": (SVC(tol=TOL, kernel="precomputed"), X_2 @ X_2.T, Y_2, "C", [0.01, 0.1, 1.0], None),
    "callable-kernel": (SVC(tol=TOL, kernel=_quadratic), X_2, Y_2, "C", [0.001, 0.01, 0.1], None),
    "nu-at-its-bound": (NuSVC(tol=TOL), X_2, Y_2, "nu", [0.3, BOUND, BOUND - 1e-9], None),
    "nu-weights-zero": (NuSVC(tol=TOL), X_3, Y_3, "nu", [0.05, 0.3, 0.6], WEIGHTS),
    "one-class-weights-zero": (OneClassSVM(tol=TOL), X_2, None, "nu", [1.0, 0.05, 0.5], WEIGHTS),
}


def _solutions(estimator):
    return estimator.solutions_ if hasattr(estimator, "solutions_") else [estimator.solution_]


@pytest.mark.parametrize("case", list(CASES))
def test_each_copy_is_the_cold_fit_on_a_users_inputs(case) -> None:
    estimator, X, y, param, values, weights = CASES[case]
    path = estimator.fit_path(X, y, values, param=param, sample_weight=weights)
    assert [m.get_params()[param] for m in path] == values
    rows = X[:20]                       # a precomputed kernel: K(test, train), the rows of the Gram matrix
    for value, model in zip(values, path):
        cold = clone(estimator).set_params(**{param: value}).fit(X, y, sample_weight=weights)
        for warm, reference in zip(_solutions(model), _solutions(cold), strict=True):
            scale = max(abs(reference.dual_objective), 1e-12)
            assert abs(warm.dual_objective - reference.dual_objective) <= 1e-6 * scale, value
            np.testing.assert_array_equal(warm.support, reference.support)
        np.testing.assert_array_equal(np.sort(model.support_), np.sort(cold.support_))
        np.testing.assert_allclose(model.decision_function(rows), cold.decision_function(rows), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("estimator, y, param, bad", [(SVC(), Y_2, "C", np.nan), (SVC(), Y_2, "C", "10"),
                                                      (NuSVC(), Y_2, "nu", 1.5), (OneClassSVM(), None, "nu", 0.0)])
def test_a_bad_value_is_refused_before_the_path_fits_the_others(monkeypatch, estimator, y, param, bad) -> None:
    """Values are fitted in increasing order, so a bad one (NaN sorts last, as does a nu above 1) was refused only
    once every value before it had been fitted: SVC's path of six C and NaN on 2,000 points ran 0.6 s before its
    ValidationError. Every value is now checked before the first solve, with the fit's own message."""
    from sparsekernel.errors import ValidationError

    fits = []
    original = type(estimator)._fit_along

    def counted(self, *args, **kwargs):
        fits.append(self.get_params()[param])
        return original(self, *args, **kwargs)

    monkeypatch.setattr(type(estimator), "_fit_along", counted)
    values = [0.1, 0.5, bad] if param == "nu" else [0.1, 1.0, bad]
    with pytest.raises(ValidationError, match=f"{param} must be .*got {bad!r}"):
        estimator.fit_path(X_2, y, values, param=param)
    assert fits == []
