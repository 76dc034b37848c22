"""``fit_path``: each warm-started solution along a C (or nu) path is the cold fit, for every machine
with a C or a nu: the same dual objective to 1e-6 relative and the same support set."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification, make_regression

from sparsekernel.errors import ValidationError
from sparsekernel.estimators import SVC, SVR, NuSVC, NuSVR, OneClassSVM

TOL = 1e-6
X_C, Y_C = make_classification(n_samples=160, n_features=5, random_state=0)
X_3, Y_3 = make_classification(n_samples=150, n_features=5, n_informative=3, n_classes=3, random_state=1)
X_R, Y_R = make_regression(n_samples=160, n_features=5, noise=5.0, random_state=0)

PATHS = [
    (SVC(tol=TOL), X_C, Y_C, "C", [0.1, 1.0, 10.0, 100.0]),
    (SVC(tol=TOL), X_3, Y_3, "C", [0.1, 1.0, 10.0]),                 # one-versus-one: a path per pair
    (NuSVC(tol=TOL), X_C, Y_C, "nu", [0.1, 0.3, 0.5, 0.7]),
    (SVR(tol=TOL), X_R, Y_R, "C", [1.0, 10.0, 100.0]),
    (SVR(tol=TOL, C=100.0), X_R, Y_R, "epsilon", [0.1, 1.0, 10.0]),
    (NuSVR(tol=TOL), X_R, Y_R, "C", [1.0, 10.0, 100.0]),
    (NuSVR(tol=TOL, C=10.0), X_R, Y_R, "nu", [0.1, 0.3, 0.6]),
    (OneClassSVM(tol=TOL), X_C, None, "nu", [0.05, 0.2, 0.5, 0.8]),
]


def _solutions(estimator):
    return estimator.solutions_ if hasattr(estimator, "solutions_") else [estimator.solution_]


@pytest.mark.parametrize("estimator, X, y, param, values", PATHS,
                         ids=["SVC-C", "SVC-C-3-classes", "NuSVC-nu", "SVR-C", "SVR-epsilon", "NuSVR-C", "NuSVR-nu",
                              "OneClassSVM-nu"])
def test_each_solution_of_a_path_is_the_cold_fit(estimator, X, y, param, values) -> None:
    path = estimator.fit_path(X, y, values[::-1] if param == "C" else values, param=param)
    for model in path:
        value = model.get_params()[param]
        cold = clone(estimator).set_params(**{param: value}).fit(X, y)
        for warm, reference in zip(_solutions(model), _solutions(cold)):
            assert warm.status == "optimal"
            scale = max(abs(reference.dual_objective), 1e-12)
            assert abs(warm.dual_objective - reference.dual_objective) <= 1e-6 * scale
            np.testing.assert_array_equal(warm.support, reference.support)


def test_the_path_is_returned_in_the_order_given_and_the_estimator_is_left_unfitted() -> None:
    estimator = SVC()
    path = estimator.fit_path(X_C, Y_C, [10.0, 0.1, 1.0])
    assert [m.C for m in path] == [10.0, 0.1, 1.0]
    assert not hasattr(estimator, "support_")
    assert all(not hasattr(m, "_path") for m in path)


def test_warm_starts_save_steps_where_the_solution_stops_changing() -> None:
    """Past the C at which no multiplier is at its bound the solution is the same: a step or two
    (the ray's minimiser is 1 to the tolerance) where the cold fit takes its full count."""
    path = SVC(gamma=1.0).fit_path(X_C, Y_C, [1e3, 1e4, 1e5])
    cold = SVC(gamma=1.0, C=1e5).fit(X_C, Y_C)
    assert path[1].n_iter_[0] <= 5 and path[2].n_iter_[0] <= 5 < cold.n_iter_[0]


@pytest.mark.parametrize("kwargs, match", [(dict(param="gamma"), "param must be"),
                                          (dict(values=[]), "values must be"),
                                          (dict(values="abc"), "values must be")])
def test_bad_path_arguments_are_refused(kwargs, match) -> None:
    kwargs = dict(dict(values=[1.0]), **kwargs)
    with pytest.raises(ValidationError, match=match):
        SVC().fit_path(X_C, Y_C, **kwargs)


def test_a_warm_fit_that_fails_its_certificate_is_replaced_by_the_cold_fit(monkeypatch) -> None:
    from sparsekernel.errors import SolverError

    plain = SVC._fit_along

    def failing(self, path, X, y, sample_weight):
        if path is not None and self.C == 10.0:
            raise SolverError("certificate failed", status="optimal", solver="SMO")
        return plain(self, path, X, y, sample_weight)

    monkeypatch.setattr(SVC, "_fit_along", failing)
    path = SVC().fit_path(X_C, Y_C, [1.0, 10.0, 100.0])
    cold = SVC(C=10.0).fit(X_C, Y_C)
    np.testing.assert_array_equal(path[1].dual_coef_, cold.dual_coef_)


def test_a_nu_path_keeps_the_support_of_the_cold_fits() -> None:
    """The warm start refills nu's sums, which can leave a multiplier at ~1e-16 where the cold fit has 0:
    it is rounding, not a support vector (the SMO's support is every a_n above 1e-12 of the largest)."""
    from sklearn.datasets import make_classification

    from sparsekernel.estimators import NuSVC

    X, y = make_classification(n_samples=300, n_features=5, random_state=0)
    path = NuSVC().fit_path(X, y, [0.5, 0.7], param="nu")
    for nu, model in zip([0.5, 0.7], path):
        cold = NuSVC(nu=nu).fit(X, y)
        np.testing.assert_array_equal(model.n_support_, cold.n_support_)
        assert np.abs(model.dual_coef_).min() > 1e-8


def test_a_multiplier_left_at_rounding_of_a_bound_is_at_the_bound() -> None:
    """Along epsilon the warm SMO emptied a multiplier to 5.6e-17 (the rounding of its warm start, 0.402),
    which counted as free and set rho alone at the end of its KKT interval: b = 0.2285 against the cold
    fit's (and LIBSVM's) midpoint 0.1569, every multiplier the same. Differential fuzz: SVMGridSearchCV's
    score of that cell differed from GridSearchCV's (0.690 against 0.739 on a fold)."""
    D = np.array([
        [-1.060590893328603, -0.8362992364522829, -1.4536978310817434],
        [-0.398409797852216, 0.27542168326867805, -0.532274767944017],
        [-1.2216885610320107, -0.9214597529040012, -1.1762012086026217],
        [0.5972971743862014, -0.019270814968247386, 0.5928949690353791],
        [-0.219127807052517, -1.1762404005587954, -0.12896564267400995],
        [0.17719334680802634, -0.5032578052434034, 0.21375667683469496],
        [1.1317577556215999, 0.016245490139729722, 1.4021618968080836],
        [0.3273412974915236, 0.3859963245462748, 0.5459660718698148],
        [-0.23583489289093965, 1.5995952246033098, -0.23396692568853603],
        [1.169916676082773, -0.5961675089414598, 1.6340644230769512],
        [1.3773285729087674, -1.3414974956300871, 1.7536008058744579],
        [-1.2119303414017888, -0.9720023940062877, -1.525352952993529],
        [0.5845559608913025, 0.9400779494594222, 0.3809640292867809]])
    X, y = D[:, :2], D[:, 2]
    values = [0.34493407528745856, 0.62575991587932]
    base = SVR(kernel="rbf", gamma=0.1, tol=1e-7)
    for value, warm in zip(values, base.fit_path(X, y, values=values, param="epsilon")):
        cold = clone(base).set_params(epsilon=value).fit(X, y)
        np.testing.assert_allclose(warm.intercept_, cold.intercept_, rtol=0, atol=1e-9)
        np.testing.assert_array_equal(warm.support_, cold.support_)


@pytest.mark.parametrize("kernel", [dict(kernel="sigmoid"), dict(kernel="poly", coef0=-1.0, degree=3)],
                         ids=["sigmoid", "poly-coef0-negative"])
def test_a_path_whose_dual_is_not_convex_is_the_cold_fits(kernel) -> None:
    """A kernel that is not positive semidefinite on X makes the dual non-convex: the SMO stops at a KKT point
    that depends on where it starts. Warm-started, a sigmoid SVC's path on X_C ended elsewhere than the cold fits
    (decision values 5.5 off at C = 1, 43 at C = 10), so SVMGridSearchCV scored other models than GridSearchCV's
    cold fits. Such a path now solves cold, each copy the cold fit."""
    from sparsekernel.errors import NonConvexWarning

    estimator = SVC(tol=1e-8, **kernel)
    values = [0.1, 1.0, 10.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonConvexWarning)      # what this test is about: said by every fit
        path = estimator.fit_path(X_C, Y_C, values)
        colds = [clone(estimator).set_params(C=C).fit(X_C, Y_C) for C in values]
    for model, cold in zip(path, colds):
        np.testing.assert_allclose(model.decision_function(X_C), cold.decision_function(X_C), rtol=0, atol=1e-9)


@pytest.mark.parametrize("estimator, X, y, param, values", [
    (SVC(max_iter=5), X_C, Y_C, "C", [0.1, 1.0, 10.0]),
    (SVC(max_iter=5), X_3, Y_3, "C", [0.1, 1.0, 10.0]),
    (NuSVR(max_iter=10, C=10.0), X_R, Y_R, "nu", [0.1, 0.3, 0.6]),
], ids=["SVC", "SVC-3-classes", "NuSVR-nu"])
def test_a_path_cut_short_by_max_iter_is_the_cold_fits(estimator, X, y, param, values) -> None:
    """A solve cut short by max_iter stops where its steps from its start reached: warm-started, an SVC's path
    with max_iter=5 ended elsewhere than the cold fits (decision values 1.07 off at C = 1 on X_C, 3.3 at C = 10;
    on standardised wine, 3 folds, SVMGridSearchCV's mean CV accuracy 0.977 against the cold fits' 0.966 at
    C = 1, and a best C of 100 against GridSearchCV's 10). Such a path now fits cold, each copy the cold fit."""
    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)      # what this test is about: said by every fit
        path = estimator.fit_path(X, y, values, param=param)
        colds = [clone(estimator).set_params(**{param: value}).fit(X, y) for value in values]
    for model, cold in zip(path, colds):
        predict = "decision_function" if hasattr(cold, "decision_function") else "predict"
        np.testing.assert_allclose(getattr(model, predict)(X), getattr(cold, predict)(X), rtol=0, atol=1e-9)


def test_a_path_of_one_value_is_the_plain_fit_without_a_kept_cache(monkeypatch) -> None:
    """A path of one value has no other value to start from or share kernel rows with, yet it kept a row cache,
    which fills the whole Gram matrix where it fits: on make_classification(4000, 20, class_sep=3), C = 10 (329
    support vectors), fit_path(X, y, [10]) took 0.3-0.5 s against the fit's 0.05-0.07 s, and an
    SVMGridSearchCV over gamma alone (one C: a path of one value per candidate and fold) 1.3-1.7 s against
    0.6-0.8 s. Now such a path is the plain fit."""
    from sparsekernel.solvers import warm_start

    def refused(self, *args, **kwargs):
        raise AssertionError("a RegularisationPath for a path of one value")

    plain = SVC(C=10.0).fit(X_C, Y_C)
    monkeypatch.setattr(warm_start.RegularisationPath, "__init__", refused)
    (model,) = SVC().fit_path(X_C, Y_C, [10.0])
    np.testing.assert_array_equal(model.dual_coef_, plain.dual_coef_)
    np.testing.assert_array_equal(model.support_, plain.support_)
