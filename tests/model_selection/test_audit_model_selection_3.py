"""Audit of SVMGridSearchCV against scikit-learn's GridSearchCV (third pass): an empty cv, and candidates
repeated in the grid where no path is walked."""

from __future__ import annotations

import warnings

import pytest
from sklearn import svm
from sklearn.datasets import make_classification
from sklearn.exceptions import FitFailedWarning
from sklearn.model_selection import GridSearchCV

from sparsekernel.errors import ValidationError
from sparsekernel.estimators import SVC
from sparsekernel.model_selection import SVMGridSearchCV

X, Y = make_classification(90, 5, random_state=21)


@pytest.mark.parametrize("cv", [[], lambda: iter([])], ids=["empty-list", "empty-iterator"])
def test_a_cv_that_gives_no_split_is_refused_naming_cv(cv) -> None:
    """GridSearchCV raises "No fits were performed. Was the CV iterator empty?"; the search fitted nothing, took
    every mean_test_score as NaN (numpy's 'Mean of empty slice'), ranked every candidate first and refitted the
    first one as best_estimator_, a model chosen by no score."""
    cv = cv() if callable(cv) else cv
    with pytest.raises(ValidationError, match=r"^cv must be .* at least one \(train, test\) split.*; got "):
        SVMGridSearchCV(SVC(), {"C": [0.1, 1.0]}, cv=cv).fit(X, Y)
    with pytest.raises(ValueError, match="No fits were performed"):
        GridSearchCV(svm.SVC(), {"C": [0.1, 1.0]}, cv=[]).fit(X, Y)


def _failed_counts(search) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        search.fit(X, Y)
    return [str(w.message).split(".")[0].strip() for w in caught if issubclass(w.category, FitFailedWarning)]


@pytest.mark.parametrize("estimator", [SVC(solver="clarabel"), svm.SVC()], ids=["clarabel", "sklearn-SVC"])
def test_a_repeated_candidate_without_a_path_is_fitted_and_counted_as_gridsearchcv(estimator) -> None:
    """Without a path (another solver, another library's estimator, fit parameters a path cannot take), the
    candidates were grouped by all of their parameters, so that a candidate the grid repeats was fitted once
    for both: GridSearchCV's warning counts "3 fits failed out of a total of 9" for {"C": [1, 1, -1]} on 3
    folds, the search's "out of a total of 6", and its every-fit-failed error counted 3 fits of
    {"C": [-1, -1]} where GridSearchCV counts 6."""
    ours = _failed_counts(SVMGridSearchCV(estimator, {"C": [1.0, 1.0, -1.0]}, cv=3))
    theirs = _failed_counts(GridSearchCV(estimator, {"C": [1.0, 1.0, -1.0]}, cv=3))
    assert ours == theirs == ["3 fits failed out of a total of 9"]
    with pytest.raises(ValueError, match=r"All the 6 fits failed"):
        SVMGridSearchCV(estimator, {"C": [-1.0, -1.0]}, cv=3).fit(X, Y)


def _lines(out: str) -> list[str]:
    """The printed lines, sorted (a path prints its candidates' lines together, GridSearchCV candidate by
    candidate), each fit's time replaced (the dots that right-align it are kept: the time's width is fixed)."""
    import re

    return sorted(re.sub(r"total time=.*$", "total time=T", line) for line in out.splitlines())


@pytest.mark.parametrize("verbose, kwargs", [
    (2, {}),
    (3, {}),
    (3, {"return_train_score": True}),
    (3, {"scoring": ["accuracy", "f1"], "refit": "f1", "return_train_score": True}),
    (10, {}),
])
def test_verbose_prints_gridsearchcvs_line_for_every_fit(capsys, verbose, kwargs) -> None:
    """GridSearchCV prints, above verbose 1, "[CV] END ...C=0.1, gamma=0.3; total time=   0.0s" for each fit,
    above 2 its score ("[CV 1/2] END ..., score=0.833"), above 9 the candidate's number and a START line: a
    user watches a search's scores so. The search printed joblib's "[Parallel(n_jobs=1)]: Done 2 out of 2"
    instead, whatever the verbosity, and no score. A failed fit's line shows error_score, as GridSearchCV's."""
    grid = {"C": [0.1, 1.0, -1.0], "gamma": [0.3, 1.0]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        SVMGridSearchCV(SVC(), grid, cv=2, verbose=verbose, **kwargs).fit(X, Y)
        ours = capsys.readouterr().out
        GridSearchCV(svm.SVC(), grid, cv=2, verbose=verbose, **kwargs).fit(X, Y)
        theirs = capsys.readouterr().out
    assert _lines(ours) == _lines(theirs)
    assert len(ours.splitlines()) == 1 + 2 * 6 * (2 if verbose > 9 else 1)
