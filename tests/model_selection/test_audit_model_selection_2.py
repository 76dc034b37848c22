"""Audit of SVMGridSearchCV's drop-in surface against scikit-learn's GridSearchCV (helper's second pass)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn import svm
from sklearn.datasets import make_classification
from sklearn.model_selection import GridSearchCV

from sparsekernel.estimators import SVC
from sparsekernel.model_selection import SVMGridSearchCV


@pytest.mark.parametrize("kwargs", [{}, {"refit": False}, {"scoring": ["accuracy", "f1"], "refit": "f1"}])
def test_best_index_and_best_score_have_gridsearchcvs_types(kwargs) -> None:
    """GridSearchCV's best_index_ is the rank column's argmin (numpy.int64) and its best_score_ an entry of
    mean_test_<metric> (numpy.float64); the search gave a Python int and float, so that code written for
    GridSearchCV (search.best_score_.round(3), best_index_.item()) raised AttributeError on them."""
    X, y = make_classification(60, 4, random_state=0)
    grid = {"C": [0.1, 1.0, 10.0]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = SVMGridSearchCV(SVC(), grid, cv=3, **kwargs).fit(X, y)
        theirs = GridSearchCV(svm.SVC(), grid, cv=3, **kwargs).fit(X, y)
    for name in ("best_index_", "best_score_"):
        assert type(getattr(ours, name)) is type(getattr(theirs, name)), name
        assert getattr(ours, name) == getattr(theirs, name)
    assert ours.best_score_.round(3) == theirs.best_score_.round(3)
    assert ours.best_index_.item() == theirs.best_index_.item()


def test_a_callable_refits_index_is_kept_as_returned_as_gridsearchcv_keeps_it() -> None:
    """GridSearchCV's best_index_ is the callable's own integer (a numpy.int64 stays one)."""
    X, y = make_classification(60, 4, random_state=0)
    grid = {"C": [0.1, 1.0, 10.0]}
    pick = lambda results: np.int64(1)
    ours = SVMGridSearchCV(SVC(), grid, cv=3, refit=pick).fit(X, y)
    theirs = GridSearchCV(svm.SVC(), grid, cv=3, refit=pick).fit(X, y)
    assert type(ours.best_index_) is type(theirs.best_index_) is np.int64
    assert not hasattr(ours, "best_score_") and not hasattr(theirs, "best_score_")
