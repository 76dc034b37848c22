"""Cross-validated grid search over an SVM's hyperparameters, C (or nu) walked warm.

``GridSearchCV(SVC(), {"C": Cs, "gamma": gammas}, cv=5)`` fits every cell
(C, gamma, fold) cold, computing its kernel rows again each time. Along C
the kernel does not change, so ``SVMGridSearchCV`` groups the candidates by
everything but the path parameter (C, or nu for the nu machines: the
estimator's ``path_params``) and, for each group and fold, runs one
``fit_path`` over the group's values: each solve starts from the previous
solution moved into the new box and reads the kernel rows the previous
solves computed (``solvers.warm_start``). Every fitted copy is the cold fit
to the estimator's ``tol``, so the scores, the ranking and the best
parameters are GridSearchCV's.

One task is a (group, fold) pair, dispatched by joblib: ``n_jobs`` processes
or threads, or any joblib backend, so that

    with joblib.parallel_backend("dask"):
        search.fit(X, y)

runs the tasks on a Dask cluster, each worker keeping its row cache along
its C path. The results (``cv_results_``, ``best_params_``, ``best_score_``,
``best_index_``, ``best_estimator_``, ``scorer_``, ``n_splits_``,
``refit_time_``, and the best estimator's ``classes_``, ``n_features_in_`` and
``feature_names_in_``) have GridSearchCV's names, keys and ranking rule (the mean
test score, ties to the first candidate of ``ParameterGrid`` order). Several
metrics (``scoring`` a list, a dict or a callable returning a dict) give
``cv_results_`` one set of keys per metric (``mean_test_<name>``, ...), and
``refit`` names the metric that picks the best, as GridSearchCV's.
"""

from __future__ import annotations

import contextlib
import numbers
import time
import traceback
import warnings
from typing import Any, Iterator

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.stats import rankdata
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone, is_classifier
from sklearn.exceptions import FitFailedWarning
from sklearn.metrics import check_scoring
from sklearn.metrics._scorer import _check_multimetric_scoring, _MultimetricScorer
from sklearn.model_selection import ParameterGrid, check_cv
from sklearn.exceptions import NotFittedError
from sklearn.utils import _safe_indexing, indexable
from sklearn.utils.metaestimators import _safe_split, available_if
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import _check_method_params, _num_samples, check_is_fitted

from ..estimators._fit_state import kept_on_failure
from ..estimators.svm import shared_test_kernel
from ..errors import ValidationError
from ..validation import fail

__all__ = ["SVMGridSearchCV", "path_groups"]

Array = NDArray[np.float64]


def _key(value: Any) -> Any:
    """A hashable stand-in for a hyperparameter value: itself, or for an unhashable one (a dict, an array) its
    identity, the very object of the grid's list. Not its repr, which can be one for different values: numpy
    summarises an array of over 1,000 entries ("[1., 1., 1., ..., 1., 1., 1.]"), scikit-learn's kernels print
    3 digits; two such values were one group, every candidate of it fitted with the first one's value."""
    try:
        hash(value)
        return (type(value).__name__, value)
    except TypeError:
        return (type(value).__name__, "id", id(value))


def path_groups(candidates: list[dict[str, Any]], path: str | None,
                defaults: dict[str, Any]) -> list[tuple[dict[str, Any], list[int], list[Any]]]:
    """The candidates grouped by every parameter but ``path``: (the group's other parameters,
    the candidates' indices, their values of ``path``), in order of first appearance.
    A candidate without ``path`` takes the estimator's value (``defaults``). With no ``path`` each
    candidate is a group of its own, a repeated one too: GridSearchCV fits every candidate of the grid
    (one fit shared by two equal candidates counted half of GridSearchCV's fits in its failure reports)."""
    groups: dict[Any, tuple[dict[str, Any], list[int], list[Any]]] = {}
    for index, params in enumerate(candidates):
        rest = {name: value for name, value in params.items() if name != path}
        key = index if path is None else tuple(sorted((name, _key(value)) for name, value in rest.items()))
        entry = groups.setdefault(key, (rest, [], []))
        entry[1].append(index)
        entry[2].append(params.get(path, defaults.get(path)) if path is not None else None)
    return list(groups.values())


def _path_param(estimator: Any, candidates: list[dict[str, Any]]) -> str | None:
    """The estimator's path parameter that takes the most values in the grid (None: no path, or
    a solver other than the SMO, whose fits are cold anyway). For a Pipeline, its last step's, named as
    the grid names it (``svc__C``), unless the grid replaces that step itself."""
    prefix = ""
    step = _last_step(estimator)
    if step is not None:
        name, estimator = step
        if any(name in c for c in candidates):
            return None
        prefix = f"{name}__"
    names = tuple(getattr(estimator, "path_params", ()))
    if not names or getattr(estimator, "solver", "smo") != "smo":
        return None
    counts = [len({_key(c[prefix + name]) for c in candidates if prefix + name in c}) for name in names]
    return prefix + names[int(np.argmax(counts))]


def _last_step(estimator: Any) -> tuple[str, Any] | None:
    """A Pipeline's last step (its name and estimator); None for any other estimator."""
    from sklearn.pipeline import Pipeline

    return estimator.steps[-1] if isinstance(estimator, Pipeline) and estimator.steps else None


def _fit_path(estimator: Any, X: Any, y: Any, values: list[Any], path: str,
              weights: dict[str, Any]) -> list[Any]:
    """``estimator.fit_path`` along ``path`` (``weights``: its ``sample_weight``, if any). A Pipeline's other
    steps are fitted once (``fit_transform``) and its last step walks the path on their output, weighted by
    ``<step>__sample_weight`` where given: each fitted copy is the Pipeline of those fitted steps and one
    estimator of the path, as a cold fit of the Pipeline at that value would be. The fitted steps are those of
    the head's ``fit_transform``: a Pipeline with ``memory`` fits clones of its steps (joblib's cache), not the
    steps themselves."""
    step = _last_step(estimator)
    if step is None:
        return estimator.fit_path(X, y, values, param=path, **weights)
    name, last = step
    head = estimator[:-1]
    transformed = head.fit_transform(X, y) if head.steps else X
    own = {"sample_weight": weights[f"{name}__sample_weight"]} if weights else {}
    models = last.fit_path(transformed, y, values, param=path[len(name) + 2:], **own)
    return [_with_last_step(estimator, head.steps, name, model) for model in models]


def _walks_with(estimator: Any, sample_weight: Any, fit_params: dict[str, Any]) -> bool:
    """Whether a path can take these fit arguments: none for an estimator; for a Pipeline, its last step's
    ``sample_weight`` alone (``<step>__sample_weight``; a Pipeline refuses a bare ``sample_weight``, as
    GridSearchCV's fits of it then fail, and other parameters may go to its other steps: cold fits)."""
    step = _last_step(estimator)
    if step is None:
        return not fit_params
    return sample_weight is None and set(fit_params) <= {f"{step[0]}__sample_weight"}


def _with_last_step(pipeline: Any, head: list[tuple[str, Any]], name: str, model: Any) -> Any:
    """``pipeline`` with the fitted steps ``head`` and ``model`` as its last step: a shallow copy, so that the
    copies of one path share the fitted steps before it."""
    import copy

    fitted = copy.copy(pipeline)
    fitted.steps = [*head, (name, model)]
    return fitted


def _fit_and_score_path(estimator: Any, params: dict[str, Any], path: str | None, values: list[Any],
                        X: Any, y: Any, train: NDArray[np.intp], test: NDArray[np.intp], scorer: Any,
                        error_score: Any, sample_weight: Any = None, train_score: bool = False,
                        fit_params: dict[str, Any] | None = None, report: "_Report | None" = None
                        ) -> tuple[list[float], list[float], list[float], list[float], list[Any]]:
    """One group on one fold: fit the path on ``train`` (with the training points' ``sample_weight``, and
    with no path, the training points' rows of each of ``fit_params`` of one entry per row of X),
    score each fit on ``test`` (weighted where the scorer takes weights); the scores, each fit's share
    of the path's time and its own scoring time, with ``train_score`` each fit's score on ``train``
    (weighted likewise; else an empty list), and each fit's failure (``_failure``'s; None for a fit
    that succeeded). ``report`` prints GridSearchCV's lines of these fits (``verbose`` above 1)."""
    if report is not None:
        report.start()
    # the values cloned, as GridSearchCV's: an estimator of the grid is set into each fit unfitted, and stays so
    estimator = clone(estimator).set_params(**clone(params, safe=False))
    X_train, y_train = _safe_split(estimator, X, y, train)
    X_test, y_test = _safe_split(estimator, X, y, test, train)
    weights = {} if sample_weight is None else {"sample_weight": _safe_indexing(sample_weight, train)}
    extra = _check_method_params(X, fit_params or {}, train)
    weighed = sample_weight is not None and _takes_weights(scorer)
    scored = {"sample_weight": _safe_indexing(sample_weight, test)} if weighed else {}
    start = time.perf_counter()
    try:
        if path is None:
            fitted: list[Any] = [estimator.fit(X_train, y_train, **weights, **extra)]
        else:
            fitted = _fit_path(estimator, X_train, y_train, values, path, {**weights, **extra})
        fit_times = [(time.perf_counter() - start) / len(fitted)] * len(fitted)
        failures: list[Any] = [None] * len(fitted)
    except Exception as exc:
        if error_score == "raise":
            raise
        if path is None:
            failures = [_failure(exc)]
            fitted, fit_times = [None], [time.perf_counter() - start]
        else:       # a fit of the path failed (cold too): the values one by one, each cold
            fitted, fit_times, failures = [], [], []
            for value in values:
                begin = time.perf_counter()
                model, failure = _fit_or_fail(clone(estimator).set_params(**{path: value}), X_train, y_train,
                                              {**weights, **extra})
                fitted.append(model)
                failures.append(failure)
                fit_times.append(time.perf_counter() - begin)
    scores, score_times = _scores(fitted, scorer, X_test, y_test, scored, error_score)
    train_scores = _scores(fitted, scorer, X_train, y_train, {"sample_weight": weights["sample_weight"]} if weighed
                           else {}, error_score)[0] if train_score else []
    if report is not None:
        report.end(scores, train_scores, [f + s for f, s in zip(fit_times, score_times)])
    return scores, fit_times, score_times, train_scores, failures


class _Report:
    """GridSearchCV's lines (``_fit_and_score``'s) for the fits of one task: above ``verbose`` 1 one line per
    fit, "[CV] END <params>; total time=...", above 2 with the fold's number and the scores, above 9 with the
    candidate's number and a START line before the fit. ``candidates``: (index, parameters) of each value of
    the task's path, in its order; ``metrics``: the names of several metrics, whose failed fit (one
    error_score) GridSearchCV prints as each metric's, else None."""

    def __init__(self, verbose: int, split: int, n_splits: int, candidates: list[tuple[int, dict[str, Any]]],
                 n_candidates: int, metrics: list[str] | None) -> None:
        self.verbose, self.metrics = verbose, metrics
        self.progress = [f" {split + 1}/{n_splits}" + (f"; {index + 1}/{n_candidates}" if verbose > 9 else "")
                         if verbose > 2 else "" for index, _ in candidates]
        self.params = [", ".join(f"{name}={params[name]}" for name in sorted(params)) for _, params in candidates]

    def start(self) -> None:
        if self.verbose > 9:
            for progress, params in zip(self.progress, self.params):
                line = f"[CV{progress}] START {params}"
                print(f"{line}{(80 - len(line)) * '.'}")

    def end(self, scores: list[Any], train_scores: list[Any], times: list[float]) -> None:
        from joblib import logger

        for k, (progress, params) in enumerate(zip(self.progress, self.params)):
            result = params + (";" if params else "")
            if self.verbose > 2:
                test = self._shown(scores[k])
                train = self._shown(train_scores[k]) if train_scores else None
                if isinstance(test, dict) and train is not None and not isinstance(train, dict):
                    train = dict.fromkeys(test, train)          # a callable's metrics, whose training score raised
                if isinstance(test, dict):
                    for name in sorted(test):
                        result += f" {name}: (" + (f"train={train[name]:.3f}, " if train is not None else "")
                        result += f"test={test[name]:.3f})"
                else:
                    result += ", score=" + (f"(train={train:.3f}, test={test:.3f})" if train is not None
                                            else f"{test:.3f}")
            result += f" total time={logger.short_format_time(times[k])}"
            line = f"[CV{progress}] END "
            print(line + "." * (80 - len(line) - len(result)) + result)

    def _shown(self, score: Any) -> Any:
        return {name: score for name in self.metrics} if self.metrics and not isinstance(score, dict) else score


def _scores(fitted: list[Any], scorer: Any, X_test: Any, y_test: Any, scored: dict[str, Any],
            error_score: Any) -> tuple[list[float], list[float]]:
    """Each fitted model's score on (X_test, y_test) (``error_score`` for a failed fit, None) and its time,
    the kernel between X_test and the models' support vectors evaluated once for all."""
    scores, score_times = [], []
    begin = time.perf_counter()
    with _held_kernel([m for m in fitted if m is not None], X_test) as X_scored:
        shared = (time.perf_counter() - begin) / len(fitted)  # the one kernel evaluation, shared out
        for model in fitted:
            begin = time.perf_counter()
            scores.append(float(error_score) if model is None else _score(model, scorer, X_scored, y_test, scored,
                                                                          error_score))
            score_times.append(time.perf_counter() - begin + shared)
    return scores, score_times


@contextlib.contextmanager
def _held_kernel(models: list[Any], X_test: Any) -> Iterator[Any]:
    """``_shared_kernel``, or where holding the kernel raises (a step, or the SVM's validation, refusing the
    test X), ``X_test`` as given: each model's scoring then meets that error itself, scored ``error_score``
    with GridSearchCV's warning (or raised, for "raise")."""
    with contextlib.ExitStack() as stack:
        try:
            X_scored = stack.enter_context(_shared_kernel(models, X_test))
        except Exception:
            X_scored = X_test
        yield X_scored


@contextlib.contextmanager
def _shared_kernel(models: list[Any], X_test: Any) -> Iterator[Any]:
    """``shared_test_kernel`` for the models of one path: the estimators themselves, or Pipelines whose
    steps before the last are the same fitted objects (``_fit_path``), whose last steps then hold the
    kernel of the test X as those steps transform it (each Pipeline's prediction transforms it again, into
    equal values, which ``shared_test_kernel`` recognises)."""
    step = _last_step(models[0]) if models else None
    if step is None:
        with shared_test_kernel(models, X_test) as X_scored:
            yield X_scored
        return
    head = models[0].steps[:-1]
    if not head or not all(_last_step(m) is not None and m.steps[:-1] == head for m in models):
        yield X_test
        return
    with shared_test_kernel([m.steps[-1][1] for m in models], models[0][:-1].transform(X_test)):
        yield X_test


def _score(model: Any, scorer: Any, X_test: Any, y_test: Any, scored: dict[str, Any],
           error_score: Any) -> float | dict[str, float]:
    """``scorer(model, X_test, y_test)``, as GridSearchCV's ``_score``: where the scorer raises, ``error_score``
    with a UserWarning (or the exception, for "raise"); a score that is no number is a ValueError either way.
    Several metrics (a ``_MultimetricScorer``, or a callable that returns a dict) give a dict {name: score},
    each metric that raised scored ``error_score`` alone (its traceback in the warning)."""
    try:
        score = scorer(model, X_test, y_test, **scored)
    except Exception:
        if error_score == "raise":
            raise
        warnings.warn(f"Scoring failed. The score on this train-test partition for these parameters will be set to "
                      f"{error_score}. Details: \n{traceback.format_exc()}", UserWarning, stacklevel=2)
        return float(error_score)
    if isinstance(score, dict):
        raised = isinstance(scorer, _MultimetricScorer)      # its metrics that raised: their tracebacks
        return {name: _metric(value, name, error_score, raised) for name, value in score.items()}
    return _metric(score, scorer, error_score)


def _metric(score: Any, scorer: Any, error_score: Any, raised: bool = False) -> float:
    """One score as a float: a 0-d array's item; with ``raised``, a string (the traceback of a metric of a
    ``_MultimetricScorer`` that raised) ``error_score`` with GridSearchCV's UserWarning; anything else that is
    no number a ValueError."""
    if raised and isinstance(score, str):
        warnings.warn(f"Scoring failed. The score on this train-test partition for these parameters will be set to "
                      f"{error_score}. Details: \n{score}", UserWarning, stacklevel=3)
        return float(error_score)
    if hasattr(score, "item"):
        try:
            score = score.item()
        except ValueError:
            pass
    if not isinstance(score, numbers.Number):
        raise ValueError(f"scoring must return a number, got {score!r} ({type(score).__name__}) instead. "
                         f"(scorer={scorer!r})")
    return float(score)


def _takes_weights(scorer: Any) -> bool:
    """Whether ``scorer`` takes ``sample_weight`` (GridSearchCV then passes the test points' weights to it):
    a scikit-learn scorer says so itself (its metric's or, for scoring None, ``estimator.score``'s
    signature); a plain callable by its own signature."""
    import inspect

    accepts = getattr(scorer, "_accept_sample_weight", None)
    if callable(accepts):
        return bool(accepts())
    try:
        return "sample_weight" in inspect.signature(scorer).parameters
    except (TypeError, ValueError):
        return False


def _fit_or_fail(estimator: Any, X: Any, y: Any, weights: dict[str, Any]) -> tuple[Any, Any]:
    """The fitted estimator and None, or None and the failure (``_failure``) where its fit raises."""
    try:
        return estimator.fit(X, y, **weights), None
    except Exception as exc:
        return None, _failure(exc)


def _failure(exc: Exception) -> tuple[str, bool]:
    """A failed fit: its exception's type and message, and whether it is a ValidationError
    (bad input). Not warned here, in a task that may run in another process, where a warning would
    not reach the caller's filters: ``_report_failures`` warns or raises in the caller's."""
    return f"{type(exc).__name__}: {exc}", isinstance(exc, ValidationError)


def _masked_params(candidates: list[dict[str, Any]]) -> dict[str, np.ma.MaskedArray]:
    """``param_<name>``: each parameter's value per candidate, masked where a candidate lacks it, as
    GridSearchCV's: the names in order of first appearance, each column of the dtype numpy infers from its
    values (float64 for floats, int64 for ints; object for strings, sequences and mixtures numpy cannot
    make one 1-D array of)."""
    columns: dict[str, dict[int, Any]] = {}
    for k, params in enumerate(candidates):
        for name, value in params.items():
            columns.setdefault(f"param_{name}", {})[k] = value
    out = {}
    for key, values in columns.items():
        try:
            inferred = np.array(list(values.values()))
        except ValueError:          # sequences of different lengths
            dtype = np.dtype(object)
        else:
            dtype = inferred.dtype if inferred.dtype.kind != "U" and inferred.ndim == 1 else np.dtype(object)
        column = np.ma.MaskedArray(np.empty(len(candidates), dtype=dtype), mask=True)
        for k, value in values.items():
            column[k] = value
        out[key] = column
    return out


def _check_lengths(X: Any, **others: Any) -> None:
    """Each of ``others`` (y, groups, sample_weight) that is given has one entry per row of X, and y (where
    numeric) and sample_weight are finite: a ValidationError naming the first that is not, before
    scikit-learn's check_consistent_length and check_cv, whose messages name none."""
    try:
        n = _num_samples(X)
    except TypeError as exc:        # scikit-learn's "Expected sequence or array-like", which names no argument
        raise fail("X", "an array-like of shape (n_samples, n_features) (or a sparse matrix)", X) from exc
    for name, value in others.items():
        if value is None:
            continue
        try:
            m = _num_samples(value)
        except TypeError as exc:
            raise fail(name, f"an array-like of one entry per row of X ({n})", value) from exc
        if m != n:
            raise ValidationError(f"{name} must have one entry per row of X ({n}); got {m}")
        array = np.asarray(value)
        if name != "groups" and array.dtype.kind in "fc" and not np.isfinite(array).all():
            raise ValidationError(f"{name} must contain only finite values; got NaN or inf at index "
                                  f"{int(np.flatnonzero(~np.isfinite(array.ravel()))[0])}")


def _report_failures(failures: list[Any], error_score: Any) -> None:
    """GridSearchCV's report of the failed fits, in the caller's process (joblib's workers keep their
    warnings): where some failed, one FitFailedWarning, how many of all and each distinct failure with its
    count; where every fit failed (their scores, all error_score, would rank nothing), GridSearchCV's
    ValueError, or where every failure is a ValidationError (bad input: X, y or a parameter every candidate
    shares), a ValidationError (a ValueError too) that opens with the first one's message, naming the
    argument."""
    failed = [failure for failure in failures if failure is not None]
    if not failed:
        return
    counts: dict[str, int] = {}
    for text, _ in failed:
        counts[text] = counts.get(text, 0) + 1
    details = "\n".join(f"{'-' * 80}\n{n} fits failed with the following error:\n{text}" for text, n in counts.items())
    if len(failed) < len(failures):
        warnings.warn(f"\n{len(failed)} fits failed out of a total of {len(failures)}.\nThe score on these train-test "
                      f"partitions for these parameters will be set to {error_score}.\nIf these failures are not "
                      f"expected, you can try to debug them by setting error_score='raise'.\n\nBelow are more details "
                      f"about the failures:\n{details}", FitFailedWarning, stacklevel=3)
        return
    if all(invalid for _, invalid in failures):
        first = failures[0][0].split(": ", 1)[1]
        raise ValidationError(f"{first}\n(All the {len(failures)} fits failed: bad input for every candidate. "
                              f"Below are more details about the failures:\n{details})")
    raise ValueError(f"\nAll the {len(failures)} fits failed.\nIt is very likely that your model is misconfigured.\n"
                     f"You can try to debug the error by setting error_score='raise'.\n\n"
                     f"Below are more details about the failures:\n{details}")


def _warn_non_finite(kind: str, means: Array) -> None:
    """GridSearchCV's UserWarning where a mean score (of a failed fit or score, say) is not finite."""
    if not np.all(np.isfinite(means)):
        warnings.warn(f"One or more of the {kind} scores are non-finite: {means}", UserWarning, stacklevel=5)


def _metric_names(out: list[tuple[list, list, list, list, list]]) -> list[str] | None:
    """The metrics a callable ``scoring`` scored: the keys of the first score that is a dict (several
    metrics), else None (one; every score a number, a failed fit's ``error_score`` included)."""
    for result in out:
        for value in result[0]:
            if isinstance(value, dict):
                return list(value)
    return None


def _of_metric(value: float | dict[str, float], name: str) -> float:
    """A fit's score of metric ``name``: a number stands for every metric (a failed fit's ``error_score``)."""
    return value[name] if isinstance(value, dict) else value


def _store(results: dict[str, Any], key: str, scores: Array, ranked: bool) -> None:
    """``split<k>_<key>``, ``mean_<key>``, ``std_<key>`` (and ``rank_<key>``: failed candidates tie with the
    worst, as in GridSearchCV) of per-split ``scores`` (candidates x splits), with GridSearchCV's warning
    where a mean is not finite."""
    for f in range(scores.shape[1]):
        results[f"split{f}_{key}"] = scores[:, f]
    means = scores.mean(axis=1)
    results[f"mean_{key}"], results[f"std_{key}"] = means, scores.std(axis=1)
    _warn_non_finite(key.split("_")[0], means)
    if not ranked:
        return
    if np.all(np.isnan(means)):
        results[f"rank_{key}"] = np.ones(scores.shape[0], dtype=np.int32)
    else:
        filled = np.where(np.isnan(means), np.nanmin(means) - 1, means)
        results[f"rank_{key}"] = rankdata(-filled, method="min").astype(np.int32)


def _refit_or_raise(search: Any, name: str) -> None:
    """GridSearchCV's AttributeError for a method or attribute of the best estimator where ``refit`` is False
    (so that ``hasattr(search, "predict")`` is False then, as for GridSearchCV)."""
    if not search.refit:
        raise AttributeError(f"This {type(search).__name__} instance was initialized with refit=False: {name} is "
                             f"available only after refitting on the best parameters (best_params_); set "
                             f"refit=True and fit again")


def _estimator_has(name: str):
    def check(self: "SVMGridSearchCV") -> bool:
        _refit_or_raise(self, name)
        target = getattr(self, "best_estimator_", self.estimator)
        getattr(target, name)
        return True
    return check


def _dispatched(pre_dispatch: Any, n_jobs: int | None) -> int | float | None:
    """How many tasks joblib dispatches at first for ``pre_dispatch`` (inf for "all"), with the active backend's
    count of ``n_jobs``, as ``joblib.Parallel`` evaluates it; None where that is no integer >= 1 (a bool, a float,
    an expression joblib cannot evaluate). joblib takes ``int()`` of an expression's value: below 1 it dispatched
    no task at all with n_jobs=2, and the search's every score was NaN."""
    if isinstance(pre_dispatch, str):
        if pre_dispatch == "all":
            return float("inf")
        from joblib import effective_n_jobs
        try:
            from joblib._utils import eval_expr      # joblib's own evaluator (joblib >= 1.3), private
        except ImportError:
            return 1                                  # left to joblib
        try:
            amount = int(eval_expr(pre_dispatch.replace("n_jobs", str(effective_n_jobs(n_jobs)))))
        except (ValueError, TypeError):
            return None
        return amount if amount >= 1 else None
    if isinstance(pre_dispatch, numbers.Integral) and not isinstance(pre_dispatch, (bool, np.bool_)):
        return int(pre_dispatch) if pre_dispatch >= 1 else None
    return None


def _is_scorer_name(name: Any) -> bool:
    from sklearn.metrics import get_scorer_names

    return isinstance(name, str) and name in get_scorer_names()


class SVMGridSearchCV(MetaEstimatorMixin, BaseEstimator):
    """Exhaustive cross-validated search over ``param_grid``, each C (or nu) path walked warm.

    Parameters
    ----------
    estimator : a sparsekernel SVM estimator (SVC, NuSVC, SVR, NuSVR, OneClassSVM), or any
        scikit-learn estimator (fitted cold per candidate then)
    param_grid : dict or list of dicts
        As GridSearchCV's (``ParameterGrid``).
    scoring : None, str, callable, list, tuple, set or dict
        One metric, as ``sklearn.metrics.check_scoring`` takes it (None: ``estimator.score``), or several,
        as GridSearchCV takes them: distinct scorer names, a dict {name: scorer name or callable}, or a
        callable returning a dict {name: score}; ``cv_results_`` then has ``mean_test_<name>`` (and the
        rest) for each, ``scorer_`` is the dict of scorers and ``multimetric_`` is True.
    n_jobs : int or None
        Tasks (one group of candidates on one fold) run at once by joblib; the active joblib
        backend (``joblib.parallel_backend("dask")``) decides where.
    refit : bool, str or callable
        Fit ``best_estimator_`` on all of X with ``best_params_``. A callable, as GridSearchCV's, takes
        ``cv_results_`` and returns ``best_index_`` (an integer index of a candidate); the search then has
        no ``best_score_``. With several metrics, the name of the one whose ranks pick the best (True names
        none: refused, as GridSearchCV refuses it), or False, which leaves no ``best_index_``,
        ``best_params_`` or ``best_score_``; with one metric named by a string, that string is True.
    cv : int, cross-validation generator or iterable
        As GridSearchCV's (``check_cv``: stratified k-fold for classifiers).
    verbose : int
        GridSearchCV's: 0 silent; above 0 its first line (folds, candidates, fits); above 1 a line for each
        fit ("[CV] END C=0.1, gamma=0.3; total time=   0.0s"), above 2 with the fold and the scores, above 9
        with the candidate's number and a START line before each fit (a path's lines come together, printed
        by the task that fits them).
    pre_dispatch : int or str
        joblib's ``pre_dispatch``: an integer >= 1, "all" or an arithmetic expression of ``n_jobs`` ("2*n_jobs")
        that joblib evaluates to at least 1 (below 1 it would dispatch no task).
    error_score : "raise" or a number
        The score of a failed fit (with a ``FitFailedWarning``), or "raise".
    return_train_score : bool
        Also score every fit on its own training points: ``split{k}_train_score``, ``mean_train_score``
        and ``std_train_score`` in ``cv_results_``, as GridSearchCV's.
    """

    def __init__(self, estimator: Any, param_grid: dict[str, Any] | list[dict[str, Any]], *,
                 scoring: Any = None, n_jobs: int | None = None, refit: Any = True, cv: Any = None,
                 verbose: int = 0, pre_dispatch: int | str = "2*n_jobs", error_score: Any = np.nan,
                 return_train_score: bool = False) -> None:
        self.estimator = estimator
        self.param_grid = param_grid
        self.scoring = scoring
        self.n_jobs = n_jobs
        self.refit = refit
        self.cv = cv
        self.verbose = verbose
        self.pre_dispatch = pre_dispatch
        self.error_score = error_score
        self.return_train_score = return_train_score

    def __sklearn_tags__(self):
        """The estimator's type, its classifier and regressor tags, and whether it takes sparse input or a
        precomputed kernel, as GridSearchCV's: ``is_classifier(search)`` is the estimator's (an outer
        ``cross_val_score`` stratifies its folds) and an outer split of a precomputed kernel takes the
        Gram block of its rows and columns."""
        from copy import deepcopy

        from sklearn.utils import get_tags

        tags = super().__sklearn_tags__()
        inner = get_tags(self.estimator)
        tags.estimator_type = inner.estimator_type
        tags.classifier_tags = deepcopy(inner.classifier_tags)
        tags.regressor_tags = deepcopy(inner.regressor_tags)
        tags.input_tags.pairwise = inner.input_tags.pairwise
        tags.input_tags.sparse = inner.input_tags.sparse
        tags.array_api_support = inner.array_api_support
        return tags

    def _check_params(self) -> None:
        if not (isinstance(self.refit, (bool, np.bool_, str)) or callable(self.refit)):
            raise fail("refit", "True, False, a callable taking cv_results_ and returning best_index_, or the name "
                                "of a metric of scoring", self.refit)
        if not isinstance(self.return_train_score, (bool, np.bool_)):
            raise fail("return_train_score", "True or False", self.return_train_score)
        verbose = self.verbose
        if not (isinstance(verbose, (numbers.Integral, np.bool_)) and verbose >= 0):
            raise fail("verbose", "an integer >= 0 (or True / False)", verbose)
        if not (self.error_score == "raise" or isinstance(self.error_score, numbers.Real)):
            raise fail("error_score", "'raise' or a number", self.error_score)
        estimator = self.estimator
        if isinstance(estimator, type) or not (hasattr(estimator, "fit") and hasattr(estimator, "get_params")):
            raise fail("estimator", "an estimator instance, with fit and get_params (SVC(), say)", estimator)
        self._check_scoring()
        jobs = self.n_jobs
        if not (jobs is None or isinstance(jobs, numbers.Integral) and not isinstance(jobs, bool) and jobs != 0):
            raise fail("n_jobs", "None or a non-zero integer", jobs)
        if _dispatched(self.pre_dispatch, jobs) is None:
            raise fail("pre_dispatch", "an integer >= 1, 'all' or an arithmetic expression of n_jobs that joblib "
                                       "evaluates to at least 1 ('2*n_jobs', say)", self.pre_dispatch)

    def _check_scoring(self) -> None:
        """``scoring`` one metric (None, a scorer name, a callable) or several (a list, tuple or set of
        distinct scorer names, a dict {name: scorer name or callable}); a ``refit`` given as a string names
        one of them (for one metric named by a string, that string)."""
        scoring = self.scoring
        domain = ("None, a scorer name (one of sklearn.metrics.get_scorer_names()), a callable, a list of distinct "
                  "scorer names or a dict {name: scorer name or callable}")
        if isinstance(scoring, (list, tuple, set)):
            names = list(scoring)
            if not names or len(set(map(repr, names))) < len(names) or not all(map(_is_scorer_name, names)):
                raise fail("scoring", domain, scoring)
        elif isinstance(scoring, dict):
            names = list(scoring)
            if not names or not all(isinstance(k, str) for k in names) or not all(
                    callable(v) or _is_scorer_name(v) for v in scoring.values()):
                raise fail("scoring", domain, scoring)
        elif scoring is None or callable(scoring) or _is_scorer_name(scoring):
            names = [scoring] if isinstance(scoring, str) else []
        else:
            raise fail("scoring", domain, scoring)
        several = isinstance(scoring, (list, tuple, set, dict))
        if isinstance(self.refit, str) and self.refit not in names and not callable(scoring):
            raise fail("refit", f"True, False, a callable or the name of a metric of scoring ({names})", self.refit)
        if several and (self.refit is True or isinstance(self.refit, np.bool_) and self.refit):
            raise fail("refit", f"False, a callable or the name of the metric of scoring that picks the best "
                                f"parameters (one of {names}): with several metrics, GridSearchCV's True names "
                                f"none", self.refit)

    def _candidates(self) -> list[dict[str, Any]]:
        """``ParameterGrid(param_grid)``, each name a parameter of the estimator; its TypeErrors and
        ValueErrors (an empty list of values, a value not in a list) as ValidationErrors naming param_grid."""
        try:
            candidates = list(ParameterGrid(self.param_grid))
        except (TypeError, ValueError) as exc:
            raise fail("param_grid", "a dict or a list of dicts {parameter name: non-empty list of values}",
                       self.param_grid) from exc
        if not candidates:      # an empty list of grids: numpy's "argmin of an empty sequence" otherwise
            raise fail("param_grid", "a dict or a list of dicts {parameter name: non-empty list of values}, "
                                     "with at least one candidate", self.param_grid)
        known = self.estimator.get_params() if hasattr(self.estimator, "get_params") else {}
        unknown = sorted({name for c in candidates for name in c} - set(known))
        if unknown and known:
            raise ValidationError(f"param_grid must name parameters of {type(self.estimator).__name__}; got "
                                  f"{', '.join(map(repr, unknown))} (its parameters: {sorted(known)})")
        return candidates

    def _splits(self, X: Any, y: Any, groups: Any) -> list[tuple[NDArray[np.intp], NDArray[np.intp]]]:
        """The folds of ``cv`` (``check_cv``), its ValueErrors as ValidationErrors naming cv (groups, where
        a splitter by groups was given none), and a cv that gives no split a ValidationError naming it."""
        try:
            cv = check_cv(self.cv, y, classifier=is_classifier(self.estimator))
            splits = list(cv.split(X, y, groups))
            if not splits:      # GridSearchCV's "No fits were performed": every score NaN, the first candidate refitted
                raise fail("cv", "None, an integer k >= 2 of folds, a cross-validation generator or an iterable that "
                                 "gives at least one (train, test) split", self.cv)
            return splits
        except ValidationError:
            raise
        except ValueError as exc:
            if groups is None and "'groups' parameter should not be None" in str(exc):
                raise fail("groups", f"an array of one group label per row of X, for cv={self.cv!r}, which splits "
                                     f"by groups (fit(X, y, groups=...))", groups) from exc
            raise ValidationError(f"cv must be None, an integer k >= 2 of folds (at most the number of samples, "
                                  f"and of each class's for a classifier), a cross-validation generator or an "
                                  f"iterable of (train, test) splits; got {self.cv!r} ({exc})") from exc

    def fit(self, X: ArrayLike, y: ArrayLike | None = None, groups: ArrayLike | None = None, *,
            sample_weight: ArrayLike | None = None, **fit_params: Any) -> "SVMGridSearchCV":
        """Score every candidate on every fold (one warm path per group and fold); refit the best.

        ``sample_weight`` weighs the training points of every fit (each fold's fits take their own
        points' weights) and, where the scorer takes weights, the test points of every score: what
        GridSearchCV does with it without metadata routing. Other ``fit_params`` go to the estimator's
        ``fit``, as GridSearchCV passes them (``svc__sample_weight`` for a Pipeline, say): each fold's
        fits take the training rows of those with one entry per row of X, the others whole; every
        candidate is then fitted cold, as ``fit_path`` takes no other fit parameter, except that a
        Pipeline's path is walked with its last step's ``sample_weight`` (``svc__sample_weight``)."""
        with kept_on_failure(self):
            self._check_params()
            _check_lengths(X, y=y, groups=groups, sample_weight=sample_weight)
            X, y, groups, sample_weight = indexable(X, y, groups, sample_weight)
            estimator = self.estimator
            scorer = self._scorer()
            candidates = self._candidates()
            splits = self._splits(X, y, groups)
            self.n_splits_ = len(splits)
            path = _path_param(estimator, candidates) if _walks_with(estimator, sample_weight, fit_params) else None
            grouped = path_groups(candidates, path, estimator.get_params())
            tasks = [(g, f) for g in range(len(grouped)) for f in range(len(splits))]
            if self.verbose > 0:
                print(f"Fitting {len(splits)} folds for each of {len(candidates)} candidates, totalling "
                      f"{len(splits) * len(candidates)} fits")
            metrics = list(self.scorer_) if isinstance(self.scorer_, dict) else None
            reports = [_Report(int(self.verbose), f, len(splits), [(i, candidates[i]) for i in grouped[g][1]],
                               len(candidates), metrics) if self.verbose > 1 else None for g, f in tasks]
            out = Parallel(n_jobs=self.n_jobs, pre_dispatch=self.pre_dispatch)(
                delayed(_fit_and_score_path)(estimator, grouped[g][0], path, grouped[g][2], X, y, *splits[f],
                                             scorer, self.error_score, sample_weight,
                                             bool(self.return_train_score), fit_params, report)
                for (g, f), report in zip(tasks, reports))
            _report_failures([failure for result in out for failure in result[4]], self.error_score)
            names = list(self.scorer_) if isinstance(self.scorer_, dict) else _metric_names(out)
            self.multimetric_ = names is not None
            self.cv_results_ = self._results(candidates, grouped, tasks, out, names or ["score"])
            self._best(candidates)
            if self.refit:
                start = time.perf_counter()
                weights = {} if sample_weight is None else {"sample_weight": sample_weight}
                best = clone(estimator).set_params(**clone(self.best_params_, safe=False))
                self.best_estimator_ = best.fit(X, y, **weights, **fit_params)
                self.refit_time_ = time.perf_counter() - start
            else:       # a previous fit's refit is not this fit's best estimator
                for name in ("best_estimator_", "refit_time_"):
                    self.__dict__.pop(name, None)
            return self

    def _scorer(self) -> Any:
        """What each task calls to score a fit; ``scorer_`` set as GridSearchCV's: the one scorer, or for several
        metrics the dict {name: scorer} (their ``_MultimetricScorer`` scores each fit, predicting once)."""
        if not isinstance(self.scoring, (list, tuple, set, dict)):
            self.scorer_ = check_scoring(self.estimator, self.scoring)
            return self.scorer_
        self.scorer_ = _check_multimetric_scoring(self.estimator, self.scoring)
        return _MultimetricScorer(scorers=self.scorer_, raise_exc=self.error_score == "raise")

    @property
    def _refit_metric(self) -> str:
        """The metric whose ranks pick the best: ``refit``'s name with several metrics, else "score"."""
        return self.refit if self.multimetric_ else "score"

    def _best(self, candidates: list[dict[str, Any]]) -> None:
        """``best_index_``, ``best_params_`` and ``best_score_`` as GridSearchCV sets them: none with several
        metrics and ``refit=False`` (a previous fit's removed), no ``best_score_`` for a callable ``refit``. A
        callable ``scoring`` that returned several metrics is checked against ``refit`` here, as GridSearchCV
        does once it knows."""
        names = [key[len("rank_test_"):] for key in self.cv_results_ if key.startswith("rank_test_")]
        if self.multimetric_ and not (callable(self.refit) or not self.refit or self.refit in names):
            raise fail("refit", f"False, a callable or the name of the metric of scoring that picks the best "
                                f"parameters (one of {names})", self.refit)
        for name in ("best_index_", "best_params_", "best_score_"):
            self.__dict__.pop(name, None)
        if not (self.refit or not self.multimetric_):
            return
        self.best_index_ = self._best_index(self.cv_results_)
        self.best_params_ = candidates[self.best_index_]
        if not callable(self.refit):        # GridSearchCV's: no best_score_ for a chosen index
            # the column's entry, a numpy.float64 as GridSearchCV's (a float has no .round() or .item())
            self.best_score_ = self.cv_results_[f"mean_test_{self._refit_metric}"][self.best_index_]

    def _best_index(self, results: dict[str, Any]) -> numbers.Integral:
        """The best candidate: the first of rank 1, or where ``refit`` is a callable, the index it returns
        from ``cv_results_`` (GridSearchCV's TypeError for one that is no integer, IndexError for one out of
        range)."""
        if not callable(self.refit):        # numpy.int64, as GridSearchCV's argmin of the ranks
            return results[f"rank_test_{self._refit_metric}"].argmin()
        index = self.refit(results)
        if not isinstance(index, numbers.Integral) or isinstance(index, (bool, np.bool_)):
            raise TypeError(f"refit, a callable, must return best_index_, an integer; got {index!r}")
        if not 0 <= index < len(results["params"]):
            raise IndexError(f"refit, a callable, must return best_index_ in [0, {len(results['params'])}), the "
                             f"index of a candidate; got {index}")
        return index                        # the callable's own integer, as GridSearchCV keeps it

    def _results(self, candidates: list[dict[str, Any]], grouped: list, tasks: list[tuple[int, int]],
                 out: list[tuple[list, list[float], list[float], list, list]], names: list[str]) -> dict[str, Any]:
        """GridSearchCV's ``cv_results_``: per-split scores, means, stds, ranks, times, params (and the
        training scores with ``return_train_score``), under ``<kind>_<name>`` for each metric of ``names``
        (["score"] for one), in GridSearchCV's order of keys."""
        shape = (len(candidates), self.n_splits_)
        fit_times, score_times = np.zeros(shape), np.zeros(shape)
        scores = {name: np.full(shape, np.nan) for name in names}
        train_scores = {name: np.full(shape, np.nan) for name in names}
        for (g, f), (s, ft, st, ts, _) in zip(tasks, out):
            rows = grouped[g][1]
            fit_times[rows, f], score_times[rows, f] = ft, st
            for name in names:
                scores[name][rows, f] = [_of_metric(value, name) for value in s]
                if self.return_train_score:
                    train_scores[name][rows, f] = [_of_metric(value, name) for value in ts]
        results: dict[str, Any] = {}
        for name, array in (("fit_time", fit_times), ("score_time", score_times)):
            results[f"mean_{name}"], results[f"std_{name}"] = array.mean(axis=1), array.std(axis=1)
        results.update(_masked_params(candidates))
        results["params"] = candidates
        for name in names:
            _store(results, f"test_{name}", scores[name], ranked=True)
            if self.return_train_score:       # after the ranks, as GridSearchCV orders its keys
                _store(results, f"train_{name}", train_scores[name], ranked=False)
        return results

    # -- the refitted best estimator ----------------------------------------------------
    def _check_refitted(self, name: str) -> None:
        """GridSearchCV's AttributeError where ``refit`` is False (``_refit_or_raise``), and NotFittedError
        before a fit that refitted the best estimator."""
        _refit_or_raise(self, name)
        check_is_fitted(self, "best_estimator_")

    @property
    def classes_(self) -> NDArray:
        self._check_refitted("classes_")
        return self.best_estimator_.classes_

    def _of_best(self, name: str) -> Any:
        """The best estimator's attribute ``name``; an AttributeError (so ``hasattr`` says no, as for
        GridSearchCV) before a refit."""
        try:
            self._check_refitted(name)
        except NotFittedError as exc:
            raise AttributeError(f"{type(self).__name__} has no {name} before it is fitted with refit=True") from exc
        return getattr(self.best_estimator_, name)

    @property
    def n_features_in_(self) -> int:
        """The best estimator's, as GridSearchCV's."""
        return self._of_best("n_features_in_")

    @property
    def feature_names_in_(self) -> NDArray:
        """The best estimator's column names (fitted on a DataFrame with string names), as GridSearchCV's."""
        return self._of_best("feature_names_in_")

    def score(self, X: ArrayLike, y: ArrayLike | None = None) -> float:
        """``scorer_`` on the best estimator; with several metrics, the one ``refit`` names, as GridSearchCV's."""
        self._check_refitted("score")
        if not self.multimetric_:
            return float(self.scorer_(self.best_estimator_, X, y))
        if not isinstance(self.refit, str):
            raise fail("refit", "the name of a metric of scoring for score() to use after a search of several "
                                "metrics", self.refit)
        if isinstance(self.scorer_, dict):
            return float(self.scorer_[self.refit](self.best_estimator_, X, y))
        return float(self.scorer_(self.best_estimator_, X, y)[self.refit])

    @available_if(_estimator_has("predict"))
    def predict(self, X: ArrayLike) -> NDArray:
        self._check_refitted("predict")
        return self.best_estimator_.predict(X)

    @available_if(_estimator_has("decision_function"))
    def decision_function(self, X: ArrayLike) -> Array:
        self._check_refitted("decision_function")
        return self.best_estimator_.decision_function(X)

    @available_if(_estimator_has("predict_proba"))
    def predict_proba(self, X: ArrayLike) -> Array:
        self._check_refitted("predict_proba")
        return self.best_estimator_.predict_proba(X)

    @available_if(_estimator_has("predict_log_proba"))
    def predict_log_proba(self, X: ArrayLike) -> Array:
        self._check_refitted("predict_log_proba")
        return self.best_estimator_.predict_log_proba(X)

    @available_if(_estimator_has("score_samples"))
    def score_samples(self, X: ArrayLike) -> Array:
        self._check_refitted("score_samples")
        return self.best_estimator_.score_samples(X)
