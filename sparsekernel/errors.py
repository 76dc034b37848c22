"""Exceptions and warnings raised by sparsekernel.

``ValidationError`` is raised for bad input, before any work is done; its
message names the argument, the expected domain and the value received
(``SparseInputError``, also a TypeError as scikit-learn's, for a sparse
matrix where dense values are needed; ``InputTypeError``, also a TypeError,
for an ``np.matrix``, which scikit-learn refuses so).
``InfeasibleError`` is raised when a problem has no solution (hard margin on
data that are not separable in feature space, an infeasible nu).
``SolverError`` carries the status of a solver that failed.
``ConvergenceWarning`` is issued when an iterative solver stops at its
iteration cap before reaching its tolerance. ``NonConvexWarning`` is issued
when the SMO (or LIBSVM) solves a dual whose kernel matrix is not positive
semidefinite: its answer is a KKT point, not a certified optimum.
``warn`` issues both where no ``collected`` block of this thread gathers them.
"""

from __future__ import annotations

import contextlib
import re
import sys
import threading
import warnings
from typing import Any, Iterator

__all__ = [
    "SparseKernelError",
    "ValidationError",
    "SparseInputError",
    "InputTypeError",
    "InfeasibleError",
    "SolverError",
    "NonConvexWarning",
    "ConvergenceWarning",  # noqa: F822 (defined on first use by __getattr__)
]


class SparseKernelError(Exception):
    """Base class of the library's exceptions."""


class ValidationError(SparseKernelError, ValueError):
    """Bad input: wrong shape, non-finite value, parameter outside its domain."""


class SparseInputError(ValidationError, TypeError):
    """A scipy.sparse matrix where a step needs dense values (a precomputed Gram matrix, say): a
    ValidationError, and a TypeError as scikit-learn's for sparse input it does not accept."""


class InputTypeError(ValidationError, TypeError):
    """An input of a type scikit-learn refuses with a TypeError (an ``np.matrix``): a ValidationError
    naming the argument, and a TypeError as scikit-learn's, so that ``except TypeError`` keeps working."""


class InfeasibleError(SparseKernelError, ValueError):
    """The optimisation problem has no solution for the given data and parameters (a ValueError,
    as scikit-learn's "specified nu is infeasible")."""


class SolverError(SparseKernelError, RuntimeError):
    """A solver failed; ``status`` holds the solver's own status string and ``report`` the
    failing KKT report where the solver returned an answer that fails its certificate."""

    def __init__(self, message: str, status: str = "unknown", solver: str = "", report: Any = None) -> None:
        super().__init__(message)
        self.status = status
        self.solver = solver
        self.report = report


class NonConvexWarning(UserWarning):
    """The kernel matrix is not positive semidefinite: the dual is not convex, and a solver that
    accepts it (the SMO, LIBSVM) returns a KKT point, which need not be the optimum."""


#: per thread, the (categories, list) of the ``collected`` blocks it is inside, innermost last
_COLLECTING = threading.local()


@contextlib.contextmanager
def collected(*categories: type[Warning]) -> Iterator[list[warnings.WarningMessage]]:
    """A block in which the warnings of ``categories`` that this thread issues through ``warn`` are
    appended to the list it yields, not issued (an estimator's fit merges its solves' warnings into one).

    Nothing of the process's ``warnings`` state is touched: ``warnings.catch_warnings`` swaps the
    filters and ``showwarning`` for every thread, and two threads' blocks that overlap, the first
    to start ending first, left the second's copy of the first's in place for good (its filters, and
    a recorder nobody reads as ``showwarning``), and each recorded the other's warnings."""
    stack = _COLLECTING.__dict__.setdefault("stack", [])
    log: list[warnings.WarningMessage] = []
    stack.append((categories, log))
    try:
        yield log
    finally:                                         # this block's entry (equal lists are not the same)
        del stack[next(i for i, (_, held) in enumerate(stack) if held is log)]


def warn(message: str, category: type[Warning], stacklevel: int = 1) -> None:
    """``warnings.warn(message, category, stacklevel)``, or, inside a ``collected`` block of this thread
    for ``category``, the warning appended to that block's list (with the line it names)."""
    for categories, log in reversed(_COLLECTING.__dict__.get("stack", ())):
        if issubclass(category, categories):
            try:
                frame = sys._getframe(stacklevel)
                filename, lineno = frame.f_code.co_filename, frame.f_lineno
            except ValueError:                       # fewer frames than stacklevel
                filename, lineno = "sys", 1
            log.append(warnings.WarningMessage(category(message), category, filename, lineno))
            return
    warnings.warn(message, category, stacklevel=stacklevel + 1)


_IGNORED_LOCK = threading.Lock()
#: (message, category) -> [blocks inside it, the filter they share, the filters list it went into]
_IGNORED: dict[tuple[str, type[Warning]], list[Any]] = {}


@contextlib.contextmanager
def ignored(message: str, category: type[Warning] = Warning) -> Iterator[None]:
    """``warnings.filterwarnings("ignore", message, category)`` for the block, in every thread (the
    filters are the process's), safe where several threads' blocks overlap: the first to enter adds
    the filter, the last to leave removes that one filter, and nothing else of the filters changes.
    ``warnings.catch_warnings`` restores the whole list as it found it, so of two overlapping blocks,
    the first to start ending first, the second left the first's filter in place for good."""
    key = (message, category)
    with _IGNORED_LOCK:
        entry = _IGNORED.get(key)
        if entry is None:                 # filterwarnings would move an equal filter of the caller's
            item = ("ignore", re.compile(message, re.IGNORECASE), category, None, 0)
            warnings.filters.insert(0, item)
            _filters_mutated()
            entry = _IGNORED[key] = [0, item, warnings.filters]
        entry[0] += 1
    try:
        yield
    finally:
        with _IGNORED_LOCK:
            entry[0] -= 1
            if entry[0] == 0:
                del _IGNORED[key]
                for filters in (entry[2], warnings.filters):     # the list it went into, and any copy now
                    filters[:] = [f for f in filters if f is not entry[1]]
                _filters_mutated()


def _filters_mutated() -> None:
    """Tell ``warnings`` its filters changed (it resets the registries of warnings already shown), where
    it has that hook (Python <= 3.13); an "ignore" filter added or removed leaves no registry stale."""
    mutated = getattr(warnings, "_filters_mutated", None)
    if mutated is not None:
        mutated()


def __getattr__(name: str) -> Any:
    """``ConvergenceWarning`` on first use: it subclasses scikit-learn's, whose import takes
    about a second, so importing this module stays cheap (PEP 562)."""
    if name != "ConvergenceWarning":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from sklearn.exceptions import ConvergenceWarning as sklearn_warning

    cls = type("ConvergenceWarning", (sklearn_warning,), {
        "__doc__": "An iterative solver stopped at its iteration cap before its tolerance.",
        "__module__": __name__, "__qualname__": "ConvergenceWarning"})
    globals()["ConvergenceWarning"] = cls
    return cls
