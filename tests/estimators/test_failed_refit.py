"""A fit that fails leaves the estimator as it was: a fitted one keeps its model and still predicts on
the data it was fitted to (as scikit-learn's SVC does on the same bad input), an unfitted one stays
unfitted; this holds for a bad input, a bad parameter, a solver failure and the grid search."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn import svm
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from sparsekernel import estimators
from sparsekernel.errors import InfeasibleError
from sparsekernel.model_selection import SVMGridSearchCV

RNG = np.random.default_rng(3)
X = RNG.normal(size=(40, 3))
LABELS = np.where(X[:, 0] + 0.3 * RNG.normal(size=40) > 0, 1, 0)
TARGETS = {"labels": LABELS, "values": np.sin(X[:, 0]) + 0.1 * RNG.normal(size=40),
           "counts": RNG.poisson(np.exp(0.5 * X[:, 0] + 1.0)).astype(float), None: None}
#: (estimator, its target); RVR and RVC with fewer restarts and a short pool only to keep the test fast
CASES = [("SVC", "labels"), ("NuSVC", "labels"), ("SVR", "values"), ("NuSVR", "values"), ("OneClassSVM", None),
         ("RVR", "values"), ("RVC", "labels"), ("PoissonRVR", "counts")]
#: refits that must fail: another number of features with NaN in it (validate_data resets n_features_in_
#: before the finiteness check), targets of another length, and targets the estimator cannot take
BAD = {
    "nan-x": lambda y: (np.full((40, 4), np.nan), y),
    "short-y": lambda y: (np.c_[X, X], None if y is None else y[:10]),
    "inf-x": lambda y: (np.c_[X, X] * np.inf, y),
}


def _fitted_state(model) -> dict:
    """The estimator's attributes but its parameters (``set_params`` changes those, not ``fit``)."""
    params = model.get_params(deep=False)
    return {key: value for key, value in vars(model).items() if key not in params}


def _fit(model, y):
    return model.fit(X) if y is None else model.fit(X, y)


#: every estimator with every bad refit, but the one-class SVM's short targets (it takes none: a valid refit)
REFITS = [(name, target, bad) for name, target in CASES for bad in sorted(BAD) if target or bad != "short-y"]


@pytest.mark.parametrize("name, target, bad", REFITS, ids=[f"{n}-{b}" for n, _, b in REFITS])
def test_a_refit_on_bad_input_keeps_the_fitted_model(name: str, target, bad: str) -> None:
    y = TARGETS[target]
    model = _fit(getattr(estimators, name)(), y)
    before, predicted = _fitted_state(model), model.predict(X)
    X_bad, y_bad = BAD[bad](y)
    with pytest.raises(ValueError):
        model.fit(X_bad) if y is None else model.fit(X_bad, y_bad)
    after = _fitted_state(model)
    assert after.keys() == before.keys()
    assert all(after[key] is before[key] for key in before), [k for k in before if after[k] is not before[k]]
    assert model.n_features_in_ == 3
    np.testing.assert_array_equal(model.predict(X), predicted)


def test_scikit_learns_svc_keeps_its_model_on_the_same_bad_refits() -> None:
    """The reference the test above holds ours to."""
    model = svm.SVC().fit(X, LABELS)
    predicted = model.predict(X)
    for bad in ("nan-x", "short-y"):
        with pytest.raises(ValueError):
            model.fit(*BAD[bad](LABELS))
        assert model.n_features_in_ == 3
        np.testing.assert_array_equal(model.predict(X), predicted)


@pytest.mark.parametrize("name, target", CASES, ids=[c[0] for c in CASES])
def test_a_first_fit_that_fails_leaves_the_estimator_unfitted(name: str, target) -> None:
    y = TARGETS[target]
    model = getattr(estimators, name)()
    fresh = _fitted_state(model)
    with pytest.raises(ValueError):
        model.fit(np.full((40, 4), np.nan)) if y is None else model.fit(np.full((40, 4), np.nan), y)
    assert _fitted_state(model) == fresh
    with pytest.raises(NotFittedError):
        check_is_fitted(model)


def test_a_refit_whose_solver_fails_keeps_the_fitted_model() -> None:
    """C = inf on data that are not separable: the hard margin is infeasible, found after validation, once
    the new n_features_in_, classes_ and class_weight_ were set."""
    model = estimators.SVC(kernel="linear").fit(X, LABELS)
    before, predicted = _fitted_state(model), model.decision_function(X)
    overlapping = np.r_[X, X]
    with pytest.raises(InfeasibleError):
        model.set_params(C=np.inf).fit(overlapping[:, :2], np.r_[LABELS, 1 - LABELS])
    after = _fitted_state(model)
    assert after.keys() == before.keys()
    assert all(after[key] is before[key] for key in before)
    assert model.n_features_in_ == 3
    np.testing.assert_array_equal(model.set_params(C=1.0).decision_function(X), predicted)


def test_a_grid_search_whose_refit_fails_keeps_its_search() -> None:
    search = SVMGridSearchCV(estimators.SVC(), {"C": [0.1, 1.0]}, cv=3).fit(X, LABELS)
    before, predicted = _fitted_state(search), search.predict(X)
    with pytest.raises(ValueError, match="^X must contain only finite values"):      # every fit failed on X
        search.fit(np.full((40, 4), np.nan), LABELS)
    after = _fitted_state(search)
    assert after.keys() == before.keys()
    assert all(after[key] is before[key] for key in before)
    np.testing.assert_array_equal(search.predict(X), predicted)
