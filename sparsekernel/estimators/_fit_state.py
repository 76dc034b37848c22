"""A fit that fails leaves the estimator as it was before the call."""

from __future__ import annotations

import contextlib
from typing import Any, Iterator


@contextlib.contextmanager
def kept_on_failure(estimator: Any) -> Iterator[None]:
    """Around the body of an estimator's ``fit``: if it raises, every attribute is restored as it was.

    The estimators validate their input in several stages (scikit-learn's
    ``validate_data``, which resets ``n_features_in_``, then the checks of
    finiteness, targets, counts and parameters, then the solver), so a refit
    on bad input used to leave a fitted estimator with the new input's
    ``n_features_in_`` and the old model: it refused to predict on the data it
    had been fitted to. scikit-learn's own estimators keep their fit on such
    input. Here any exception (a bad argument, a solver failure, a warning the
    caller's filter turned into an error, an interrupt) restores the attributes
    as they were, fitted or not; the exception is raised unchanged.

    A context manager, not a decorator, so that the warnings a fit raises still
    point at the caller's line (a wrapper would add a frame to their
    ``stacklevel``). The restore is shallow: it relies on a fit assigning new
    objects to its attributes rather than changing the previous fit's objects
    in place, which the estimators here do.
    """
    before = dict(estimator.__dict__)
    try:
        yield
    except BaseException:
        estimator.__dict__.clear()
        estimator.__dict__.update(before)
        raise
