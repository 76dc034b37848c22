"""Exceptions and warnings raised by sparsekernel.

``ValidationError`` is raised for bad input, before any work is done; its
message names the argument, the expected domain and the value received
(``SparseInputError``, also a TypeError as scikit-learn's, for a sparse
matrix where dense values are needed).
``InfeasibleError`` is raised when a problem has no solution (hard margin on
data that are not separable in feature space, an infeasible nu).
``SolverError`` carries the status of a solver that failed.
``ConvergenceWarning`` is issued when an iterative solver stops at its
iteration cap before reaching its tolerance. ``NonConvexWarning`` is issued
when the SMO (or LIBSVM) solves a dual whose kernel matrix is not positive
semidefinite: its answer is a KKT point, not a certified optimum.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "SparseKernelError",
    "ValidationError",
    "SparseInputError",
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
