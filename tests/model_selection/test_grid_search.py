"""SVMGridSearchCV: GridSearchCV's answer (best parameters, scores to 1e-3, ranking) from warm C
paths; the same search on a Dask cluster (a real LocalCluster and Client) equals the local one."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from sklearn import svm
from sklearn.datasets import make_classification, make_regression
from sklearn.model_selection import GridSearchCV, GroupKFold

from sparsekernel.estimators import SVC, SVR, NuSVC
from sparsekernel.model_selection import SVMGridSearchCV

X, Y = make_classification(n_samples=240, n_features=6, random_state=0)
GRID = {"C": [0.1, 1.0, 10.0], "gamma": [0.03, 0.3]}


def _compare(ours: SVMGridSearchCV, theirs: GridSearchCV) -> None:
    assert ours.best_params_ == theirs.best_params_
    np.testing.assert_allclose(ours.cv_results_["mean_test_score"], theirs.cv_results_["mean_test_score"],
                               atol=1e-3)
    for f in range(theirs.n_splits_):
        np.testing.assert_allclose(ours.cv_results_[f"split{f}_test_score"],
                                   theirs.cv_results_[f"split{f}_test_score"], atol=1e-3)
    np.testing.assert_array_equal(ours.cv_results_["rank_test_score"], theirs.cv_results_["rank_test_score"])
    assert [p for p in ours.cv_results_["params"]] == [p for p in theirs.cv_results_["params"]]


def test_the_search_is_gridsearchcv_on_svc() -> None:
    ours = SVMGridSearchCV(SVC(), GRID, cv=4).fit(X, Y)
    theirs = GridSearchCV(svm.SVC(), GRID, cv=4).fit(X, Y)
    _compare(ours, theirs)
    assert ours.best_score_ == pytest.approx(theirs.best_score_, abs=1e-3)
    assert ours.best_estimator_.C == theirs.best_estimator_.C
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    assert ours.score(X, Y) == pytest.approx(theirs.score(X, Y), abs=1e-3)


def test_a_nu_path_and_a_regression_search_with_a_scorer() -> None:
    nu_grid = {"nu": [0.2, 0.4, 0.6], "gamma": [0.1]}
    _compare(SVMGridSearchCV(NuSVC(), nu_grid, cv=3).fit(X, Y), GridSearchCV(svm.NuSVC(), nu_grid, cv=3).fit(X, Y))
    Xr, yr = make_regression(n_samples=150, n_features=4, noise=3.0, random_state=0)
    grid = {"C": [1.0, 30.0], "epsilon": [0.5, 2.0]}
    ours = SVMGridSearchCV(SVR(), grid, cv=3, scoring="neg_mean_squared_error").fit(Xr, yr)
    theirs = GridSearchCV(svm.SVR(), grid, cv=3, scoring="neg_mean_squared_error").fit(Xr, yr)
    assert ours.best_params_ == theirs.best_params_
    np.testing.assert_allclose(ours.cv_results_["mean_test_score"], theirs.cv_results_["mean_test_score"],
                               rtol=1e-3)


def test_the_search_on_a_dask_cluster_equals_the_local_one() -> None:
    distributed = pytest.importorskip("dask.distributed")
    import joblib

    local = SVMGridSearchCV(SVC(), GRID, cv=3).fit(X, Y)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        with distributed.get_task_stream(client) as stream, joblib.parallel_backend("dask"):
            remote = SVMGridSearchCV(SVC(), GRID, cv=3, n_jobs=-1).fit(X, Y)
    # the cluster's workers ran every (gamma, fold) C path: joblib names a task "batch_of_<function>_<k>_calls"
    calls = [re.fullmatch(r"batch_of__fit_and_score_path_(\d+)_calls-\w+", str(task["key"])) for task in stream.data]
    assert all(calls) and sum(int(c.group(1)) for c in calls) == len(GRID["gamma"]) * 3
    assert remote.best_params_ == local.best_params_
    np.testing.assert_array_equal(remote.cv_results_["mean_test_score"], local.cv_results_["mean_test_score"])


def _several(estimator_ours, estimator_theirs, grid, *args, weights=None, **kwargs):
    """Our search and GridSearchCV's on the same arguments (GridSearchCV's warnings about scorers that take no
    weights silenced)."""
    fit = {} if weights is None else {"sample_weight": weights}
    ours = SVMGridSearchCV(estimator_ours, grid, *args, **kwargs).fit(X, Y, **fit)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = GridSearchCV(estimator_theirs, grid, *args, **kwargs).fit(X, Y, **fit)
    return ours, theirs


def _accuracy_and_f1(estimator, X, y):
    from sklearn.metrics import accuracy_score, f1_score

    predicted = estimator.predict(X)
    return {"accuracy": accuracy_score(y, predicted), "f1": f1_score(y, predicted)}


@pytest.mark.parametrize("scoring, refit", [
    (["accuracy", "f1"], "f1"),
    (("balanced_accuracy", "roc_auc", "precision"), "roc_auc"),
    ({"acc": "accuracy", "f1": "f1"}, "acc"),
    (_accuracy_and_f1, "f1"),
])
@pytest.mark.parametrize("weighted", [False, True])
def test_several_metrics_are_gridsearchcvs(scoring, refit, weighted) -> None:
    """Several metrics (a list, a tuple, a dict, a callable returning a dict) were refused ("one metric only"):
    a GridSearchCV user's multi-metric search failed on the swap. Now cv_results_ has GridSearchCV's keys, in
    its order, with its values (tol 1e-8 on both sides: equal to rounding), with and without training scores
    and sample weights; refit names the metric that picks best_params_ and best_score_, which score() uses."""
    w = np.random.default_rng(3).uniform(0.2, 5.0, size=Y.shape[0]) if weighted else None
    for train in (False, True):
        ours, theirs = _several(SVC(tol=1e-8), svm.SVC(tol=1e-8), GRID, cv=4, scoring=scoring, refit=refit,
                                return_train_score=train, weights=w)
        assert list(ours.cv_results_) == list(theirs.cv_results_)
        for key in [k for k in theirs.cv_results_ if "test" in k or "train" in k]:
            np.testing.assert_allclose(ours.cv_results_[key], theirs.cv_results_[key], atol=1e-9, err_msg=key)
        assert ours.multimetric_ and theirs.multimetric_
        assert ours.best_params_ == theirs.best_params_ and ours.best_index_ == theirs.best_index_
        assert ours.best_score_ == pytest.approx(theirs.best_score_, abs=1e-9)
        assert ours.score(X, Y) == pytest.approx(theirs.score(X, Y), abs=1e-9)
        names = [k[len("mean_test_"):] for k in ours.cv_results_ if k.startswith("mean_test_")]
        assert len(names) == (2 if scoring is _accuracy_and_f1 else len(scoring)) and refit in names
        # the metrics differ: the search did not score one metric under several names
        assert not np.allclose(ours.cv_results_[f"mean_test_{names[0]}"], ours.cv_results_[f"mean_test_{names[1]}"])


def test_several_metrics_with_refit_false_leave_no_best_as_gridsearchcv() -> None:
    """refit=False with several metrics: cv_results_ alone, no best_index_, best_params_ or best_score_ (those of
    a previous fit removed); predict says the search was not refitted."""

    search = SVMGridSearchCV(SVC(), GRID, cv=3, scoring=["accuracy", "f1"], refit="f1").fit(X, Y)
    assert search.best_params_ in search.cv_results_["params"]
    search.set_params(refit=False).fit(X, Y)
    theirs = GridSearchCV(svm.SVC(), GRID, cv=3, scoring=["accuracy", "f1"], refit=False).fit(X, Y)
    for name in ("best_index_", "best_params_", "best_score_", "best_estimator_"):
        assert hasattr(search, name) == hasattr(theirs, name) == False, name     # noqa: E712
    assert "rank_test_f1" in search.cv_results_
    with pytest.raises(AttributeError, match="has no attribute 'predict'") as refused:    # GridSearchCV's words
        search.predict(X)
    assert "initialized with refit=False" in str(refused.value.__cause__)


def test_a_metric_that_raises_scores_error_score_alone_as_gridsearchcvs() -> None:
    """Of several metrics, one whose scorer raises scores error_score (with GridSearchCV's UserWarning) and the
    others their values; error_score="raise" raises."""
    def fragile(estimator, X, y):
        raise RuntimeError("this metric fails")

    scoring = {"acc": "accuracy", "fragile": fragile}
    with pytest.warns(UserWarning, match="Scoring failed"):
        ours = SVMGridSearchCV(SVC(tol=1e-8), GRID, cv=3, scoring=scoring, refit="acc", error_score=-1.0).fit(X, Y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = GridSearchCV(svm.SVC(tol=1e-8), GRID, cv=3, scoring=scoring, refit="acc", error_score=-1.0).fit(X, Y)
    assert np.all(ours.cv_results_["mean_test_fragile"] == -1.0)
    np.testing.assert_allclose(ours.cv_results_["mean_test_acc"], theirs.cv_results_["mean_test_acc"], atol=1e-9)
    assert ours.cv_results_["mean_test_acc"].min() > 0.5
    assert ours.best_params_ == theirs.best_params_
    with pytest.raises(RuntimeError, match="this metric fails"):
        SVMGridSearchCV(SVC(), GRID, cv=3, scoring=scoring, refit="acc", error_score="raise").fit(X, Y)


def test_a_failed_fit_scores_error_score_in_every_metric() -> None:
    """A candidate whose fits fail scores error_score in each metric (with one FitFailedWarning), ranked last."""
    from sklearn.exceptions import FitFailedWarning

    grid = {"C": [1.0], "kernel": ["rbf", "not-a-kernel"]}
    with pytest.warns(FitFailedWarning):
        search = SVMGridSearchCV(SVC(), grid, cv=3, scoring=["accuracy", "f1"], refit="f1", error_score=0.0).fit(X, Y)
    for name in ("accuracy", "f1"):
        assert search.cv_results_[f"mean_test_{name}"][1] == 0.0 < search.cv_results_[f"mean_test_{name}"][0]
        np.testing.assert_array_equal(search.cv_results_[f"rank_test_{name}"], [1, 2])
    assert search.best_params_["kernel"] == "rbf"


@pytest.mark.parametrize("search, words", [
    (lambda: SVMGridSearchCV(SVC(), GRID, scoring=["accuracy", "f1"]).fit(X, Y),
     r"^refit must be False, a callable or the name of the metric of scoring that picks the best parameters "
     r"\(one of \['accuracy', 'f1'\]\): .*; got True"),
    (lambda: SVMGridSearchCV(SVC(), GRID, scoring=_accuracy_and_f1).fit(X, Y),
     r"^refit must be False, a callable or the name of the metric .* \(one of \['accuracy', 'f1'\]\); got True"),
    (lambda: SVMGridSearchCV(SVC(), GRID, scoring=_accuracy_and_f1, refit="auc").fit(X, Y),
     r"^refit must be .* \(one of \['accuracy', 'f1'\]\); got 'auc'"),
    (lambda: SVMGridSearchCV(SVC(), GRID, scoring=["accuracy", "f1"], refit="auc").fit(X, Y),
     r"^refit must be True, False, a callable or the name of a metric of scoring \(\['accuracy', 'f1'\]\); got 'auc'"),
    (lambda: SVMGridSearchCV(SVC(), GRID, scoring=["accuracy", "accuracy"], refit=False).fit(X, Y),
     r"^scoring must be .* a list of distinct scorer names .*; got \['accuracy', 'accuracy'\]"),
    (lambda: SVMGridSearchCV(SVC(), GRID, scoring=[], refit=False).fit(X, Y), r"^scoring must be .*; got \[\]"),
    (lambda: SVMGridSearchCV(SVC(), GRID, scoring=["accuracy", "acc"], refit=False).fit(X, Y),
     r"^scoring must be .*; got \['accuracy', 'acc'\]"),
    (lambda: SVMGridSearchCV(SVC(), GRID, scoring={"a": 3}, refit=False).fit(X, Y), r"^scoring must be .*; got \{'a': 3\}"),
    (lambda: SVMGridSearchCV(SVC(), GRID, scoring={1: "accuracy"}, refit=False).fit(X, Y),
     r"^scoring must be .*; got \{1: 'accuracy'\}"),
])
def test_bad_metrics_are_a_validation_error_naming_the_argument(search, words: str) -> None:
    from sparsekernel.errors import ValidationError

    with pytest.raises(ValidationError, match=words):
        search()


def test_score_after_several_metrics_and_a_callable_refit_names_refit() -> None:
    search = SVMGridSearchCV(SVC(), GRID, cv=3, scoring=["accuracy", "f1"], refit=lambda results: 0).fit(X, Y)
    assert search.best_index_ == 0 and not hasattr(search, "best_score_")
    from sparsekernel.errors import ValidationError

    with pytest.raises(ValidationError, match=r"^refit must be the name of a metric of scoring for score\(\)"):
        search.score(X, Y)


def test_a_failed_fit_scores_error_score_alone() -> None:
    """A path whose fit raises is fitted value by value: only the failing cell scores error_score."""
    from sklearn.exceptions import FitFailedWarning

    class Fragile(SVC):
        def fit(self, X, y, sample_weight=None):
            if self.C == 10.0:
                raise RuntimeError("no fit at C = 10")
            return super().fit(X, y, sample_weight)

    grid = {"C": [0.1, 1.0, 10.0], "gamma": [0.3]}
    with pytest.warns(FitFailedWarning), pytest.warns(UserWarning, match="test scores are non-finite"):
        search = SVMGridSearchCV(Fragile(), grid, cv=3).fit(X, Y)
    scores = search.cv_results_["mean_test_score"]
    assert np.isnan(scores[2]) and np.all(np.isfinite(scores[:2]))
    with pytest.raises(RuntimeError):
        SVMGridSearchCV(Fragile(), grid, cv=3, error_score="raise").fit(X, Y)


@pytest.mark.parametrize("refit", [True, False])
def test_a_search_whose_every_fit_fails_raises_as_gridsearchcv(refit: bool) -> None:
    """Every fit failing: GridSearchCV's ValueError ("All the 6 fits failed", with each failure and its count),
    not a search that ranks its error_scores and names a best candidate. Where every failure is bad input
    (a C out of its domain at each candidate, an X of text), a ValidationError (a ValueError) that opens
    with the first failure's message, naming the argument; other failures, a plain ValueError."""
    from sparsekernel.errors import ValidationError

    grid = {"C": [-1.0, -2.0]}
    with pytest.raises(ValueError, match="All the 6 fits failed"):
        GridSearchCV(svm.SVC(), grid, cv=3, refit=refit).fit(X, Y)
    with pytest.raises(ValidationError, match=r"(?s)^C must be a positive.*All the 6 fits failed"):
        SVMGridSearchCV(SVC(), grid, cv=3, refit=refit).fit(X, Y)
    with pytest.raises(ValidationError, match=r"(?s)^X must be a 2-D array of real numbers"):
        SVMGridSearchCV(SVC(), {"C": [1.0, 2.0]}, cv=3, refit=refit).fit(X.astype(str), Y)

    class Broken(SVC):
        def fit(self, X, y, sample_weight=None):
            raise RuntimeError("no fit at all")

    with pytest.raises(ValueError, match=r"(?s)^\nAll the 6 fits failed.*RuntimeError: no fit"):
        SVMGridSearchCV(Broken(), {"C": [1.0, 2.0]}, cv=3, refit=refit).fit(X, Y)
    search = SVMGridSearchCV(SVC(), {"C": [-1.0, 1.0]}, cv=3, refit=refit)
    with pytest.warns(Warning):
        assert search.fit(X, Y).best_params_ == {"C": 1.0}       # some fits failing: ranked as before


@pytest.mark.parametrize("n_jobs", [None, 2])
def test_failed_fits_are_warned_in_the_callers_process_as_gridsearchcv(n_jobs) -> None:
    """Some fits failing: one FitFailedWarning (how many of all, each failure with its count) and the
    non-finite means' UserWarnings, GridSearchCV's, raised in the caller's process, so that its filters and
    pytest.warns see them with n_jobs=2 too (a warning in a joblib worker never reached them)."""
    from sklearn.exceptions import FitFailedWarning

    grid = {"C": [-1.0, 1.0, 2.0]}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        SVMGridSearchCV(SVC(), grid, cv=3, n_jobs=n_jobs, return_train_score=True).fit(X, Y)
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        GridSearchCV(svm.SVC(), grid, cv=3, n_jobs=n_jobs, return_train_score=True).fit(X, Y)

    def shown(records):
        return [(w.category, str(w.message).split(":")[0].strip()) for w in records
                if issubclass(w.category, (FitFailedWarning, UserWarning))]

    assert shown(caught) == shown(theirs)
    assert [w.category for w in caught].count(FitFailedWarning) == 1
    assert "3 fits failed out of a total of 9" in str(next(w.message for w in caught if w.category is FitFailedWarning))


def test_fit_params_reach_the_estimators_fit_as_gridsearchcv_passes_them() -> None:
    """fit(X, y, svc__sample_weight=w) on a Pipeline: GridSearchCV passes fit parameters to the estimator's
    fit, each fold's fits taking their training rows; so does the search, scoring as GridSearchCV; an
    estimator whose fit takes no such parameter fails every fit, GridSearchCV's ValueError."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    w = np.random.default_rng(0).uniform(0.1, 3.0, size=Y.shape[0])
    grid = {"svc__C": [10.0, 0.1, 1.0], "svc__gamma": [0.1, 1.0]}
    ours = SVMGridSearchCV(make_pipeline(StandardScaler(), SVC(tol=1e-6)), grid, cv=3).fit(X, Y, svc__sample_weight=w)
    theirs = GridSearchCV(make_pipeline(StandardScaler(), svm.SVC(tol=1e-6)), grid, cv=3).fit(X, Y,
                                                                                          svc__sample_weight=w)
    _compare(ours, theirs)
    unweighted = SVMGridSearchCV(make_pipeline(StandardScaler(), SVC(tol=1e-6)), grid, cv=3).fit(X, Y)
    assert not np.allclose(ours.cv_results_["mean_test_score"], unweighted.cv_results_["mean_test_score"])
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    with pytest.raises(ValueError, match="All the 6 fits failed"):
        SVMGridSearchCV(SVC(), {"C": [1.0, 2.0]}, cv=3).fit(X, Y, foo=1)


def test_the_param_columns_have_gridsearchcvs_dtypes_and_order() -> None:
    """cv_results_'s param_<name> columns: GridSearchCV's order (first appearance along the candidates) and
    dtypes (float64, int64, object for strings and dicts), masks and values; a DataFrame of them has the
    same columns of the same dtypes."""
    grid = [{"kernel": ["linear"], "C": [1.0, 0.1]}, {"kernel": ["rbf"], "gamma": [0.5], "C": [2.0, 0.2]},
            {"kernel": ["poly"], "degree": [2, 3], "class_weight": [None, {0: 2.0, 1: 1.0}]}]
    ours = SVMGridSearchCV(SVC(), grid, cv=3).fit(X, Y).cv_results_
    theirs = GridSearchCV(svm.SVC(), grid, cv=3).fit(X, Y).cv_results_
    assert list(ours) == list(theirs)
    for key in (k for k in theirs if k.startswith("param_")):
        assert ours[key].dtype == theirs[key].dtype, key
        np.testing.assert_array_equal(np.ma.getmaskarray(ours[key]), np.ma.getmaskarray(theirs[key]))
        assert list(ours[key].compressed()) == list(theirs[key].compressed())
    assert ours["param_C"].dtype == np.float64 and ours["param_degree"].dtype == np.int64


def test_a_callable_refit_picks_the_best_index_as_gridsearchcvs() -> None:
    """refit a callable (GridSearchCV's way to choose, say, the smallest C within a tolerance of the best):
    best_index_ is what it returns, best_params_ and best_estimator_ follow it, and there is no best_score_;
    an answer that is no integer or out of range is GridSearchCV's TypeError or IndexError."""
    def smallest_c_within(results):
        means = results["mean_test_score"]
        near = np.flatnonzero(means >= means.max() - 0.05)
        return int(near[np.argmin(results["param_C"][near])])

    ours = SVMGridSearchCV(SVC(), GRID, cv=3, refit=smallest_c_within).fit(X, Y)
    theirs = GridSearchCV(svm.SVC(), GRID, cv=3, refit=smallest_c_within).fit(X, Y)
    assert ours.best_index_ == theirs.best_index_ and ours.best_params_ == theirs.best_params_
    assert not hasattr(ours, "best_score_") and not hasattr(theirs, "best_score_")
    assert ours.best_estimator_.get_params()["C"] == theirs.best_estimator_.C
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    with pytest.raises(TypeError, match="best_index_"):
        SVMGridSearchCV(SVC(), GRID, cv=3, refit=lambda results: "first").fit(X, Y)
    with pytest.raises(IndexError, match="best_index_"):
        SVMGridSearchCV(SVC(), GRID, cv=3, refit=lambda results: 6).fit(X, Y)


def test_a_fit_with_refit_false_drops_the_previous_fits_best_estimator() -> None:
    """Refitted, then fitted again with refit=False on other data: the previous best_estimator_ (5 features)
    does not answer for the new search (3 features): no best_estimator_, predict refused as before a refit."""

    X3, Y3 = make_classification(n_samples=90, n_features=3, n_informative=2, n_redundant=0, random_state=1)
    search = SVMGridSearchCV(SVC(), GRID, cv=3).fit(X, Y)
    search.set_params(refit=False).fit(X3, Y3)
    assert not hasattr(search, "best_estimator_") and not hasattr(search, "refit_time_")
    assert not hasattr(search, "n_features_in_")
    with pytest.raises(AttributeError, match="has no attribute 'predict'") as refused:
        search.predict(X3)
    assert "refit=False" in str(refused.value.__cause__)


@pytest.mark.parametrize("name, grid", [("SVC", {"C": [1.0]}), ("SVR", {"C": [1.0]}), ("OneClassSVM", {"nu": [0.5]}),
                                        ("precomputed", {"C": [1.0]})])
def test_the_search_has_its_estimators_tags_as_gridsearchcv(name: str, grid) -> None:
    """The search's type (is_classifier, is_regressor, is_outlier_detector) and its pairwise and sparse input
    tags are its estimator's, as GridSearchCV's."""
    from sklearn.base import is_classifier, is_outlier_detector, is_regressor
    from sklearn.utils import get_tags

    from sparsekernel import estimators

    make = (lambda module: module.SVC(kernel="precomputed")) if name == "precomputed" else \
        (lambda module: getattr(module, name)())
    ours, theirs = SVMGridSearchCV(make(estimators), grid), GridSearchCV(make(svm), grid)
    for check in (is_classifier, is_regressor, is_outlier_detector):
        assert check(ours) == check(theirs)
    assert get_tags(ours).estimator_type == get_tags(theirs).estimator_type
    assert get_tags(ours).input_tags.pairwise == get_tags(theirs).input_tags.pairwise == (name == "precomputed")
    assert get_tags(ours).input_tags.sparse == get_tags(theirs).input_tags.sparse


def test_nested_cross_validation_of_the_search_is_gridsearchcvs() -> None:
    """cross_val_score over the search: stratified outer folds (the search is a classifier), and on a
    precomputed kernel each outer split takes its Gram blocks; the scores are GridSearchCV's."""
    from sklearn.metrics.pairwise import rbf_kernel
    from sklearn.model_selection import cross_val_score

    grid = {"C": [0.1, 1.0, 10.0]}
    ours = cross_val_score(SVMGridSearchCV(SVC(gamma=0.3), grid, cv=3), X, Y, cv=3)
    theirs = cross_val_score(GridSearchCV(svm.SVC(gamma=0.3), grid, cv=3), X, Y, cv=3)
    np.testing.assert_allclose(ours, theirs, atol=1e-3)
    K = rbf_kernel(X, gamma=0.3)
    ours = cross_val_score(SVMGridSearchCV(SVC(kernel="precomputed"), grid, cv=3), K, Y, cv=3, error_score="raise")
    theirs = cross_val_score(GridSearchCV(svm.SVC(kernel="precomputed"), grid, cv=3), K, Y, cv=3)
    np.testing.assert_allclose(ours, theirs, atol=1e-3)


def test_predict_log_proba_is_the_best_estimators_as_gridsearchcvs() -> None:
    """GridSearchCV offers predict_log_proba where its best estimator does (SVC with probability=True):
    so does the search, the best estimator's own, and neither has it without probabilities."""
    ours = SVMGridSearchCV(SVC(probability=True, random_state=0), {"C": [0.1, 1.0]}, cv=3).fit(X, Y)
    np.testing.assert_array_equal(ours.predict_log_proba(X), ours.best_estimator_.predict_log_proba(X))
    with warnings.catch_warnings():         # scikit-learn >= 1.9 deprecates SVC's probability parameter
        warnings.filterwarnings("ignore", "The `probability` parameter was deprecated", FutureWarning)
        theirs = GridSearchCV(svm.SVC(probability=True), {"C": [1.0]}, cv=3).fit(X, Y)
    assert hasattr(theirs, "predict_log_proba")
    assert not hasattr(SVMGridSearchCV(SVC(), {"C": [1.0]}, cv=3).fit(X, Y), "predict_log_proba")


def test_a_scorer_that_raises_scores_error_score_as_gridsearchcvs() -> None:
    """A scorer raising on one cell: that cell scores error_score with GridSearchCV's UserWarning (the
    exception itself for error_score="raise"); the other cells keep their scores, GridSearchCV's."""
    def fragile(estimator, X, y):
        if estimator.C == 10.0:
            raise RuntimeError("no score at C = 10")
        return estimator.score(X, y)

    with pytest.warns(UserWarning, match="Scoring failed"):
        ours = SVMGridSearchCV(SVC(), GRID, cv=3, scoring=fragile, error_score=-1.0).fit(X, Y)
    with pytest.warns(UserWarning, match="Scoring failed"):
        theirs = GridSearchCV(svm.SVC(), GRID, cv=3, scoring=fragile, error_score=-1.0).fit(X, Y)
    _compare(ours, theirs)
    assert np.all(ours.cv_results_["mean_test_score"][[4, 5]] == -1.0)
    with pytest.raises(RuntimeError, match="no score at C = 10"):
        SVMGridSearchCV(SVC(), GRID, cv=3, scoring=fragile, error_score="raise").fit(X, Y)
    with pytest.raises(ValueError, match="scoring must return a number"):
        SVMGridSearchCV(SVC(), GRID, cv=3, scoring=lambda estimator, X, y: "good").fit(X, Y)


@pytest.mark.parametrize("n_classes, kernel", [(2, "rbf"), (3, "rbf"), (3, "poly")])
def test_a_path_scored_with_one_kernel_evaluation_predicts_as_each_model_alone(n_classes, kernel) -> None:
    """``shared_test_kernel``: the path's models read K(X_test, X_train) computed once; their decision
    values, probabilities and predictions equal each model's own evaluation outside the block."""
    from sparsekernel.estimators.svm import shared_test_kernel

    X3, y3 = make_classification(n_samples=300, n_features=6, n_informative=4, n_classes=n_classes,
                                 random_state=1)
    X_train, y_train, X_test = X3[:200], y3[:200], X3[200:]
    models = SVC(kernel=kernel, gamma=0.2, probability=True, random_state=0).fit_path(
        X_train, y_train, [0.01, 0.1, 1.0, 10.0])
    alone = [(m.decision_function(X_test), m.predict_proba(X_test), m.predict(X_test)) for m in models]
    calls, kernel = [], models[0]._kernel
    assert all(m._kernel == kernel for m in models)

    def counted(A, B):                   # count the kernel evaluations against the training points
        calls.append(A.shape)
        return kernel(A, B)

    for m in models:
        m._kernel = counted
    with shared_test_kernel(models, X_test) as X_scored:
        together = [(m.decision_function(X_scored), m.predict_proba(X_scored), m.predict(X_scored))
                    for m in models]
    assert calls == [X_test.shape]       # one evaluation for the 4 models and their 12 predictions
    assert not any("_held_test" in m.__dict__ for m in models)
    for (d0, p0, y0), (d1, p1, y1) in zip(alone, together):
        np.testing.assert_allclose(d1, d0, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(p1, p0, rtol=1e-10, atol=1e-10)
        np.testing.assert_array_equal(y1, y0)


def test_the_shared_test_kernel_stays_out_where_it_would_cost_more() -> None:
    """Few support vectors in all (separable data, large C), another X, another kernel on the same X, or
    a regressor: each model evaluates its own kernel, and the test X is passed through as given."""
    from sparsekernel.estimators.svm import shared_test_kernel

    rng = np.random.default_rng(0)
    X_train = np.vstack([rng.normal(-4, 1, (100, 2)), rng.normal(4, 1, (100, 2))])
    y_train = np.repeat([0, 1], 100)
    X_test = rng.normal(size=(50, 2))
    models = SVC(gamma=0.5).fit_path(X_train, y_train, [10.0, 100.0])
    assert sum(m.support_.size for m in models) < X_train.shape[0]
    regressors = SVR(gamma=0.5).fit_path(X_train, X_train[:, 0], [1.0, 10.0])
    other = SVC(gamma=0.5).fit(X_train.copy(), y_train)
    soft = SVC(gamma=0.5, C=1e-3).fit_path(X_train, y_train, [1e-3, 1e-2])
    wider = SVC(gamma=0.05, C=1e-3).fit(X_train, y_train)       # the same X_train array, another kernel
    assert sum(m.support_.size for m in soft + [wider]) > X_train.shape[0]
    for group in (models, regressors, [models[0], other], soft[:1] + [wider]):
        with shared_test_kernel(group, X_test) as X_scored:
            assert X_scored is X_test
            assert not any("_held_test" in m.__dict__ for m in group)


def test_a_shared_test_kernel_on_a_training_x_changed_in_place_is_not_used() -> None:
    """The path's models hold their training X by reference; ``shared_test_kernel`` computed
    K(X_test, X_train) from that array. A caller who changed it in place after ``fit_path`` (X *= 3 here)
    got the path scored on the new values beside the old support vectors' coefficients, without a word:
    decision values off by up to 2.5, accuracies 0.29, 0.41, 0.30, 0.23 where each model alone (from its
    support vectors' own copy) scores 0.29, 0.66, 0.79, 0.84 (on iris: 0.32-0.66 against 0.96-1.0). Now
    an X whose CRC-32 is no longer the fit's is not shared: each model evaluates its own kernel."""
    from sparsekernel.estimators.svm import shared_test_kernel

    X3, y3 = make_classification(n_samples=300, n_features=6, n_informative=4, n_classes=3, random_state=1)
    X_train, y_train, X_test = X3[:200].copy(), y3[:200], X3[200:]
    models = SVC(gamma=0.2).fit_path(X_train, y_train, [0.01, 0.1, 1.0, 10.0])
    alone = [m.decision_function(X_test) for m in models]
    X_train *= 3.0
    with shared_test_kernel(models, X_test) as X_scored:
        assert X_scored is X_test
        assert not any("_held_test" in m.__dict__ for m in models)
        together = [m.decision_function(X_scored) for m in models]
    for d0, d1 in zip(alone, together):
        np.testing.assert_array_equal(d1, d0)


def test_a_dataframe_test_set_keeps_its_feature_names() -> None:
    """A DataFrame X_test is scored as given (each model checks its feature names), and a search on
    DataFrames warns about none."""
    import warnings

    import pandas as pd

    from sparsekernel.estimators.svm import shared_test_kernel

    frame = pd.DataFrame(X, columns=[f"f{k}" for k in range(X.shape[1])])
    models = SVC(gamma=0.3).fit_path(frame.iloc[:160], Y[:160], [0.01, 0.1])
    assert sum(m.support_.size for m in models) > 160      # otherwise shared
    with shared_test_kernel(models, frame.iloc[160:]) as X_scored:
        assert isinstance(X_scored, pd.DataFrame)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        SVMGridSearchCV(SVC(), GRID, cv=3).fit(frame, Y)


@pytest.mark.parametrize("frame", [False, True])
def test_the_input_attributes_are_gridsearchcvs(frame: bool) -> None:
    """n_features_in_ and feature_names_in_ as GridSearchCV has them: the best estimator's after a refit
    (names only from a DataFrame), absent before a fit and with refit=False."""
    import pandas as pd

    data = pd.DataFrame(X, columns=[f"f{k}" for k in range(X.shape[1])]) if frame else X
    grid = {"C": [0.1, 1.0]}
    for refit in (True, False):
        ours, theirs = SVMGridSearchCV(SVC(), grid, cv=3, refit=refit), GridSearchCV(svm.SVC(), grid, cv=3, refit=refit)
        for name in ("n_features_in_", "feature_names_in_"):
            assert not hasattr(ours, name) and not hasattr(theirs, name)
        ours.fit(data, Y)
        theirs.fit(data, Y)
        for name in ("n_features_in_", "feature_names_in_"):
            assert hasattr(ours, name) == hasattr(theirs, name) == (refit and (frame or name == "n_features_in_"))
        if refit:
            assert ours.n_features_in_ == theirs.n_features_in_ == X.shape[1]
        if refit and frame:
            np.testing.assert_array_equal(ours.feature_names_in_, theirs.feature_names_in_)


@pytest.mark.parametrize("scoring", [None, "balanced_accuracy"])
def test_train_scores_are_gridsearchcvs(scoring) -> None:
    """return_train_score=True: every fit of the path scored on its own training points, weighted as its
    test points are; the same keys (in the same order: rank_test_score before the training scores) and
    values as GridSearchCV's, with and without sample weights."""
    w = np.random.default_rng(2).uniform(0.2, 5.0, size=Y.shape[0])
    for weights in ({}, {"sample_weight": w}):
        ours = SVMGridSearchCV(SVC(), GRID, cv=4, scoring=scoring, return_train_score=True).fit(X, Y, **weights)
        theirs = GridSearchCV(svm.SVC(), GRID, cv=4, scoring=scoring, return_train_score=True).fit(X, Y, **weights)
        _compare(ours, theirs)
        assert list(ours.cv_results_) == list(theirs.cv_results_)      # the keys in the same order
        for key in [k for k in theirs.cv_results_ if "train" in k]:
            np.testing.assert_allclose(ours.cv_results_[key], theirs.cv_results_[key], atol=1e-3)
        # the training scores are not the test scores (the C = 10, gamma = 0.3 fits overfit)
        assert np.max(ours.cv_results_["mean_train_score"] - ours.cv_results_["mean_test_score"]) > 0.02
    assert "mean_train_score" not in SVMGridSearchCV(SVC(), GRID, cv=4).fit(X, Y).cv_results_


def test_verbose_prints_gridsearchcvs_first_line(capsys) -> None:
    SVMGridSearchCV(SVC(), GRID, cv=4, verbose=1).fit(X, Y)
    ours = capsys.readouterr().out
    GridSearchCV(svm.SVC(), GRID, cv=4, verbose=1).fit(X, Y)
    assert ours == capsys.readouterr().out == "Fitting 4 folds for each of 6 candidates, totalling 24 fits\n"
    SVMGridSearchCV(SVC(), GRID, cv=4).fit(X, Y)
    assert capsys.readouterr().out == ""


def test_the_search_scores_the_same_without_the_shared_kernel(monkeypatch) -> None:
    """SVMGridSearchCV with ``shared_test_kernel`` switched off (no matrix small enough) gives the same
    cv_results_ scores as with it."""
    from sparsekernel.estimators import svm as svm_module

    shared = SVMGridSearchCV(SVC(), GRID, cv=3).fit(X, Y)
    monkeypatch.setattr(svm_module, "SHARED_TEST_ENTRIES", 0)
    separate = SVMGridSearchCV(SVC(), GRID, cv=3).fit(X, Y)
    for f in range(3):
        np.testing.assert_array_equal(shared.cv_results_[f"split{f}_test_score"],
                                      separate.cv_results_[f"split{f}_test_score"])


def test_sample_weight_reaches_every_fit_as_gridsearchcv_routes_it() -> None:
    """GridSearchCV.fit(X, y, sample_weight=w) fits each fold on its training points' weights (and refits
    on all); ours took no sample_weight. With weights of 0.2 to 5, the same scores and the same best."""
    w = np.random.default_rng(1).uniform(0.2, 5.0, size=Y.shape[0])
    ours = SVMGridSearchCV(SVC(), GRID, cv=4).fit(X, Y, sample_weight=w)
    theirs = GridSearchCV(svm.SVC(), GRID, cv=4).fit(X, Y, sample_weight=w)
    _compare(ours, theirs)
    unweighted = SVMGridSearchCV(SVC(), GRID, cv=4).fit(X, Y)
    assert not np.allclose(unweighted.cv_results_["mean_test_score"], ours.cv_results_["mean_test_score"])
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))


def test_refit_false_says_so_where_the_best_estimator_is_asked_for() -> None:
    """With refit=False the best estimator's methods raise AttributeError naming refit, so that hasattr says no,
    as GridSearchCV's (ours raised NotFittedError, and hasattr(search, "predict") was True); before a fit with
    refit=True they raise NotFittedError."""
    from sklearn.exceptions import NotFittedError

    search = SVMGridSearchCV(SVC(), GRID, cv=3, refit=False).fit(X, Y)
    theirs = GridSearchCV(svm.SVC(), GRID, cv=3, refit=False).fit(X, Y)
    assert search.best_params_ in search.cv_results_["params"]
    for name in ("predict", "decision_function", "score_samples", "predict_proba", "classes_", "n_features_in_"):
        assert hasattr(search, name) == hasattr(theirs, name) == False, name        # noqa: E712
    for call in (lambda: search.score(X, Y), lambda: search.classes_):
        with pytest.raises(AttributeError, match="initialized with refit=False"):
            call()
    with pytest.raises(AttributeError, match="has no attribute 'predict'") as refused:    # as GridSearchCV's, its
        search.predict(X)                                                               # reason chained
    assert "initialized with refit=False" in str(refused.value.__cause__)
    assert hasattr(SVMGridSearchCV(SVC(), GRID), "predict") == hasattr(GridSearchCV(svm.SVC(), GRID), "predict")
    with pytest.raises(NotFittedError, match="is not fitted yet"):
        SVMGridSearchCV(SVC(), GRID).predict(X)


def test_sample_weight_with_a_scorer_that_takes_none_weighs_the_fits_alone() -> None:
    """A plain callable scorer without sample_weight: the weights went to it too (a TypeError); GridSearchCV
    weighs the fits only (and warns), and so does ours."""
    import warnings

    def accuracy(estimator, X, y):
        return float(np.mean(estimator.predict(X) == y))

    w = np.random.default_rng(1).uniform(0.2, 5.0, size=Y.shape[0])
    ours = SVMGridSearchCV(SVC(), GRID, cv=4, scoring=accuracy).fit(X, Y, sample_weight=w)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = GridSearchCV(svm.SVC(), GRID, cv=4, scoring=accuracy).fit(X, Y, sample_weight=w)
    _compare(ours, theirs)


_n = X.shape[0]


@pytest.mark.parametrize("search, words", [
    # scikit-learn's ParameterGrid, check_cv, joblib and check_consistent_length errors escaped as they were
    (lambda: SVMGridSearchCV(SVC(), {"C": []}).fit(X, Y), r"^param_grid must be a dict or a list of dicts"),
    (lambda: SVMGridSearchCV(SVC(), {"C": 1.0}).fit(X, Y), r"^param_grid must be .*; got \{'C': 1.0\}"),
    (lambda: SVMGridSearchCV(SVC(), None).fit(X, Y), r"^param_grid must be .*; got None"),
    (lambda: SVMGridSearchCV(SVC(), []).fit(X, Y), r"^param_grid must be .* with at least one candidate; got \[\]"),
    (lambda: SVMGridSearchCV(SVC(), {"foo": [1]}).fit(X, Y),
     r"^param_grid must name parameters of SVC; got 'foo'"),
    (lambda: SVMGridSearchCV(SVC(), GRID, cv=1).fit(X, Y), r"^cv must be .*; got 1 \(k-fold cross-validation"),
    (lambda: SVMGridSearchCV(SVC(), GRID, cv="a").fit(X, Y), r"^cv must be .*; got 'a'"),
    (lambda: SVMGridSearchCV(SVC(), GRID, cv=10_000).fit(X, Y), r"^cv must be .*; got 10000 \(Cannot have number"),
    (lambda: SVMGridSearchCV(SVC(), GRID, n_jobs=0).fit(X, Y), r"^n_jobs must be None or a non-zero integer; got 0"),
    (lambda: SVMGridSearchCV(SVC(), GRID, verbose=-1).fit(X, Y), r"^verbose must be an integer >= 0 .*; got -1"),
    (lambda: SVMGridSearchCV(SVC(), GRID, cv=GroupKFold(3)).fit(X, Y),
     r"^groups must be an array of one group label per row of X, for cv=GroupKFold.*; got None"),
    (lambda: SVMGridSearchCV(SVC(), GRID, scoring="acc").fit(X, Y),
     r"^scoring must be None, a scorer name \(one of sklearn.metrics.get_scorer_names\(\)\), .*; got 'acc'"),
    (lambda: SVMGridSearchCV(SVC(), GRID, scoring=3).fit(X, Y), r"^scoring must be None, a scorer name .*; got 3"),
    (lambda: SVMGridSearchCV(SVC, GRID).fit(X, Y), r"^estimator must be an estimator instance, .*; got <class"),
    (lambda: SVMGridSearchCV(None, GRID).fit(X, Y), r"^estimator must be an estimator instance, .*; got None"),
    (lambda: SVMGridSearchCV(SVC(), GRID, refit="yes").fit(X, Y),
     r"^refit must be True, False, a callable or the name of a metric of scoring \(\[\]\); got 'yes'"),
    (lambda: SVMGridSearchCV(SVC(), GRID, refit=2).fit(X, Y), r"^refit must be True, False, a callable taking cv_results_ .*; got 2"),
    (lambda: SVMGridSearchCV(SVC(), GRID, return_train_score="yes").fit(X, Y),
     r"^return_train_score must be True or False; got 'yes'"),
    (lambda: SVMGridSearchCV(SVC(), GRID, n_jobs="a").fit(X, Y), r"^n_jobs must be None or a non-zero integer; got 'a'"),
    (lambda: SVMGridSearchCV(SVC(), GRID).fit(X, Y[:-1]), rf"^y must have one entry per row of X \({_n}\); got {_n - 1}"),
    (lambda: SVMGridSearchCV(SVC(), GRID).fit(X, Y, groups=Y[:-1]),
     rf"^groups must have one entry per row of X \({_n}\); got {_n - 1}"),
    (lambda: SVMGridSearchCV(SVC(), GRID).fit(X, Y, sample_weight=np.ones(_n - 1)),
     rf"^sample_weight must have one entry per row of X \({_n}\); got {_n - 1}"),
    (lambda: SVMGridSearchCV(SVC(), GRID).fit(X, Y, sample_weight=np.r_[np.nan, np.ones(_n - 1)]),
     r"^sample_weight must contain only finite values; got NaN or inf at index 0"),
    (lambda: SVMGridSearchCV(SVC(), GRID).fit(X, np.where(np.arange(_n) == 3, np.nan, Y)),
     r"^y must contain only finite values; got NaN or inf at index 3"),
    # scikit-learn's TypeError "Expected sequence or array-like, got <class 'NoneType'>" named none of them
    (lambda: SVMGridSearchCV(SVC(), GRID).fit(None, Y), r"^X must be an array-like of shape .*; got None$"),
    (lambda: SVMGridSearchCV(SVC(), GRID).fit(X, 5), rf"^y must be an array-like of one entry per row of X \({_n}\); got 5$"),
    (lambda: SVMGridSearchCV(SVC(), GRID).fit(X, Y, sample_weight=2.0),
     rf"^sample_weight must be an array-like of one entry per row of X \({_n}\); got 2.0$"),
    (lambda: SVMGridSearchCV(SVC(), GRID).fit(X, Y, groups=1), r"^groups must be an array-like of one entry .*; got 1$"),
])
def test_bad_search_input_is_a_validation_error_naming_it(search, words: str) -> None:
    from sparsekernel.errors import ValidationError

    with pytest.raises(ValidationError, match=words):
        search()


@pytest.mark.parametrize("pre_dispatch", [0, -1, "x", "n_jobs/4", 2.5, True])
def test_a_pre_dispatch_joblib_cannot_dispatch_by_is_refused_naming_it(pre_dispatch) -> None:
    """joblib takes int() of pre_dispatch ("n_jobs/4" with n_jobs=2: 0): with 0 it dispatched no task, and the
    search returned every mean_test_score NaN without an error (GridSearchCV: "No fits were performed"); -1 and
    "x" raised joblib's own words ("Stop argument for islice() must be ...", "'x' is not a valid or supported
    arithmetic expression"), which name no argument. Floats and bools are GridSearchCV's InvalidParameterError."""
    from sparsekernel.errors import ValidationError

    with pytest.raises(ValidationError, match=rf"^pre_dispatch must be an integer >= 1, 'all' or an arithmetic "
                                              rf"expression of n_jobs .*; got {re.escape(repr(pre_dispatch))}$"):
        SVMGridSearchCV(SVC(), GRID, cv=3, n_jobs=2, pre_dispatch=pre_dispatch).fit(X, Y)
    for good in (1, "all", "2*n_jobs", "n_jobs") if pre_dispatch == 0 else ():
        search = SVMGridSearchCV(SVC(), GRID, cv=3, n_jobs=2, pre_dispatch=good).fit(X, Y)
        assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))


def _weigh(X, w):
    return X * w[:X.shape[1]]


def test_candidates_whose_values_print_alike_are_fitted_each_with_its_own() -> None:
    """The groups of candidates were keyed by the repr of an unhashable value, which numpy summarises past 1,000
    entries: kw_args {"w": w1} and {"w": w2}, w2 = w1 but for entry 3 (feature 3 weighed 10 times), were one
    group, and every candidate of w2 was fitted with w1 (mean scores 0.892 and 0.917 at C = 0.1 and 10 for
    each, against GridSearchCV's 0.763 and 0.896 for w2's). Now an unhashable value is keyed by itself."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    from sparsekernel.model_selection import path_groups

    w1 = np.ones(1500)
    w2 = w1.copy()
    w2[3] = 10.0
    assert repr({"w": w1}) == repr({"w": w2})
    candidates = [{"t__kw_args": kw_args, "C": C} for kw_args in ({"w": w1}, {"w": w2}) for C in (1.0, 10.0)]
    assert [group[1] for group in path_groups(candidates, "C", {})] == [[0, 1], [2, 3]]
    grid = {"functiontransformer__kw_args": [{"w": w1}, {"w": w2}], "svc__C": [0.1, 10.0]}
    ours = SVMGridSearchCV(make_pipeline(FunctionTransformer(_weigh), SVC()), grid, cv=3).fit(X, Y)
    theirs = GridSearchCV(make_pipeline(FunctionTransformer(_weigh), svm.SVC()), grid, cv=3).fit(X, Y)
    np.testing.assert_allclose(ours.cv_results_["mean_test_score"], theirs.cv_results_["mean_test_score"], atol=1e-3)


def test_a_value_of_the_path_that_is_no_number_names_the_parameter() -> None:
    """{"C": ["a", 1.0]} reached fit_path, whose message named its own argument alone ("values must be a
    non-empty sequence of real numbers; got ['a', 1.0]"): the parameter of the grid is named too."""
    from sparsekernel.errors import ValidationError

    with pytest.raises(ValidationError, match=r"^values must be a non-empty sequence of real numbers \(the values "
                                              r"of C along the path\); got \['a', 1.0\]"):
        SVMGridSearchCV(SVC(), {"C": ["a", 1.0]}, error_score="raise").fit(X, Y)


def _pipeline(svc):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), svc)


PIPELINE_GRID = {"svc__C": [0.1, 1.0, 10.0], "svc__gamma": [0.03, 0.3]}


@pytest.mark.parametrize("grid", [PIPELINE_GRID, {**PIPELINE_GRID, "standardscaler__with_mean": [True, False]}])
def test_a_pipelines_svm_walks_its_path_as_gridsearchcv_fits_it_cold(monkeypatch, grid) -> None:
    """make_pipeline(StandardScaler(), SVC()) with a grid over svc__C: every cell was fitted cold (SVC has no
    path of the Pipeline's), 2.3 times GridSearchCV's time at N = 1,000. Now the steps before the SVM are fitted
    once per group and fold and the SVM walks the C path on their output: one fit_path per (gamma, scaler
    setting, fold), the Pipeline's test X transformed and its kernel evaluated once per path, and the scores,
    ranks and best parameters are GridSearchCV's (tol 1e-8 on both sides: equal to rounding)."""
    from sparsekernel.kernels import RBF

    paths, kernels = [], []
    fit_path, call = SVC.fit_path, RBF.__call__
    monkeypatch.setattr(SVC, "fit_path", lambda self, *a, **k: paths.append(k["param"]) or fit_path(self, *a, **k))
    monkeypatch.setattr(RBF, "__call__", lambda self, *a, **k: kernels.append(1) or call(self, *a, **k))
    ours = SVMGridSearchCV(_pipeline(SVC(tol=1e-8)), grid, cv=4).fit(X, Y)
    theirs = GridSearchCV(_pipeline(svm.SVC(tol=1e-8)), grid, cv=4).fit(X, Y)
    groups = len(grid["svc__gamma"]) * len(grid.get("standardscaler__with_mean", [True]))
    assert paths == ["C"] * groups * 4
    assert len(kernels) == groups * 4          # one test kernel per path (the fits read the row cache)
    _compare(ours, theirs)
    for f in range(4):
        np.testing.assert_allclose(ours.cv_results_[f"split{f}_test_score"], theirs.cv_results_[f"split{f}_test_score"],
                                   atol=1e-12)
    assert ours.best_score_ == pytest.approx(theirs.best_score_, abs=1e-12)
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    assert ours.best_estimator_.named_steps["svc"].C == theirs.best_estimator_.named_steps["svc"].C


def test_a_grid_that_replaces_the_pipelines_last_step_fits_cold_as_gridsearchcv() -> None:
    grid = {"svc": [SVC(C=1.0, tol=1e-8), SVC(C=10.0, tol=1e-8)]}
    ours = SVMGridSearchCV(_pipeline(SVC()), grid, cv=3).fit(X, Y)
    theirs = GridSearchCV(_pipeline(SVC()), grid, cv=3).fit(X, Y)
    np.testing.assert_array_equal(ours.cv_results_["mean_test_score"], theirs.cv_results_["mean_test_score"])
    assert ours.best_index_ == theirs.best_index_


def test_the_held_test_kernel_serves_equal_values_and_no_others() -> None:
    """A Pipeline's prediction transforms the test X into a new array each time: the held kernel is read for
    an array of the same values (no kernel evaluation), and not for one that differs in one entry."""
    from sparsekernel.estimators.svm import shared_test_kernel
    from sparsekernel.kernels import RBF

    models = SVC(gamma=0.3).fit_path(X, Y, [0.1, 1.0, 10.0])
    X_test = X[:50] + 0.01
    expected = [m.decision_function(X_test) for m in models]
    calls = []
    call = RBF.__call__
    RBF.__call__ = lambda self, *a, **k: calls.append(1) or call(self, *a, **k)
    try:
        with shared_test_kernel(models, X_test) as X_scored:
            assert len(calls) == 1
            for m, e in zip(models, expected):
                np.testing.assert_allclose(m.decision_function(X_scored.copy()), e, rtol=0, atol=1e-12)
            assert len(calls) == 1
            other = X_scored.copy()
            other[3, 2] += 1.0
            models[0].decision_function(other)
            assert len(calls) == 2
    finally:
        RBF.__call__ = call


def test_a_pipelines_path_takes_its_last_steps_sample_weight_as_gridsearchcv_routes_it(monkeypatch) -> None:
    """fit(X, y, svc__sample_weight=w), GridSearchCV's way of weighing a Pipeline's SVM: every cell was fitted
    cold; now the path is walked with each fold's training weights, with GridSearchCV's scores (unweighted
    scoring, as GridSearchCV scores without metadata routing)."""
    w = np.random.default_rng(4).uniform(0.2, 5.0, size=Y.shape[0])
    paths = []
    fit_path = SVC.fit_path
    monkeypatch.setattr(SVC, "fit_path", lambda self, *a, **k: paths.append(k) or fit_path(self, *a, **k))
    ours = SVMGridSearchCV(_pipeline(SVC(tol=1e-8)), PIPELINE_GRID, cv=4).fit(X, Y, svc__sample_weight=w)
    theirs = GridSearchCV(_pipeline(svm.SVC(tol=1e-8)), PIPELINE_GRID, cv=4).fit(X, Y, svc__sample_weight=w)
    assert len(paths) == 2 * 4 and all(k["sample_weight"].shape[0] == 180 for k in paths)
    _compare(ours, theirs)
    np.testing.assert_allclose(ours.cv_results_["mean_test_score"], theirs.cv_results_["mean_test_score"], atol=1e-12)
    unweighted = SVMGridSearchCV(_pipeline(SVC(tol=1e-8)), PIPELINE_GRID, cv=4).fit(X, Y)
    assert not np.allclose(unweighted.cv_results_["mean_test_score"], ours.cv_results_["mean_test_score"])


def _two_scalers_pipeline(svc, memory):
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import MinMaxScaler, StandardScaler

    return Pipeline([("standard", StandardScaler()), ("minmax", MinMaxScaler()), ("svc", svc)], memory=memory)


def test_a_pipeline_with_memory_walks_its_path_on_the_steps_it_fitted(tmp_path) -> None:
    """A Pipeline with ``memory`` fits clones of its steps (joblib's cache), not the steps themselves: the path's
    models were built from the Pipeline's own steps, never fitted, and with two steps before the SVM the search
    raised NotFittedError (StandardScaler) from scoring. The fitted copies now take the steps that were fitted."""
    from joblib import Memory

    ours = SVMGridSearchCV(_two_scalers_pipeline(SVC(tol=1e-8), Memory(tmp_path / "ours", verbose=0)),
                           PIPELINE_GRID, cv=3).fit(X, Y)
    theirs = GridSearchCV(_two_scalers_pipeline(svm.SVC(tol=1e-8), Memory(tmp_path / "theirs", verbose=0)),
                          PIPELINE_GRID, cv=3).fit(X, Y)
    _compare(ours, theirs)
    np.testing.assert_allclose(ours.cv_results_["mean_test_score"], theirs.cv_results_["mean_test_score"], atol=1e-12)


def test_a_pipelines_failed_path_fits_its_values_cold_with_the_last_steps_sample_weight() -> None:
    """A path that fails (here C = -1 among the values) is fitted value by value, cold: those fits left out
    ``svc__sample_weight``, so the values that succeed were scored unweighted (up to 0.008 off GridSearchCV's
    means)."""
    w = np.random.default_rng(4).uniform(0.2, 5.0, size=Y.shape[0])
    grid = {"svc__C": [-1.0, 0.1, 1.0, 10.0]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = SVMGridSearchCV(_pipeline(SVC(tol=1e-8)), grid, cv=4).fit(X, Y, svc__sample_weight=w)
        theirs = GridSearchCV(_pipeline(svm.SVC(tol=1e-8)), grid, cv=4).fit(X, Y, svc__sample_weight=w)
    assert np.isnan(ours.cv_results_["mean_test_score"][0])
    np.testing.assert_allclose(ours.cv_results_["mean_test_score"][1:], theirs.cv_results_["mean_test_score"][1:],
                               atol=1e-12)


def test_estimators_in_the_grid_are_cloned_for_each_fit_as_gridsearchcv_clones_them() -> None:
    """GridSearchCV clones a grid's values (clone(params, safe=False)) before each fit and the refit: the search
    set the grid's own StandardScaler into every fit, fitted in place (the caller's object changed, the tasks of a
    threading backend fitting one object at once, a refitted best_params_ the best estimator's own step)."""
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler()
    grid = {"scale": [scaler, "passthrough"], "svc__C": [0.1, 1.0, 10.0]}
    ours = SVMGridSearchCV(Pipeline([("scale", "passthrough"), ("svc", SVC(tol=1e-8))]), grid, cv=3).fit(X, Y)
    theirs = GridSearchCV(Pipeline([("scale", "passthrough"), ("svc", svm.SVC(tol=1e-8))]), grid, cv=3).fit(X, Y)
    assert not hasattr(scaler, "mean_")
    np.testing.assert_allclose(ours.cv_results_["mean_test_score"], theirs.cv_results_["mean_test_score"], atol=1e-12)
    assert ours.best_params_ == theirs.best_params_ and not hasattr(scaler, "mean_")       # after the refit too


def test_a_pipeline_whose_steps_refuse_the_test_x_scores_error_score_as_gridsearchcv() -> None:
    """A step whose output for the test rows the SVM refuses (an inf) fails each score, error_score with a
    warning, in GridSearchCV: the search transformed the test X for its shared kernel outside the scoring, and
    the SVM's ValidationError ended the search."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    def inf_in_small_sets(Z):
        Z = np.array(Z, dtype=np.float64)
        if Z.shape[0] < 100:        # the test folds (80 rows), not the training ones (160)
            Z[0, 0] = np.inf
        return Z

    grid = {"svc__C": [0.1, 1.0, 10.0]}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ours = SVMGridSearchCV(make_pipeline(FunctionTransformer(inf_in_small_sets), SVC(tol=1e-8)), grid,
                               cv=3).fit(X, Y)
    # GridSearchCV's two warnings: each failed score, and the means that are not finite
    assert any("Scoring failed" in str(w.message) for w in caught)
    assert any("test scores are non-finite" in str(w.message) for w in caught)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = GridSearchCV(make_pipeline(FunctionTransformer(inf_in_small_sets), svm.SVC(tol=1e-8)), grid,
                              cv=3).fit(X, Y)
    assert np.isnan(theirs.cv_results_["mean_test_score"]).all()
    assert np.isnan(ours.cv_results_["mean_test_score"]).all()
