"""Solvers: the standard-form QP, the direct OSQP/Clarabel path, the SMO and the RVM."""

from typing import Any

from .rvm import rvm_classification, rvm_regression
from .standard_qp import StandardQP

__all__ = ["StandardQP", "smo", "rvm_regression", "rvm_classification"]


def __getattr__(name: str) -> Any:
    """``smo`` on first use: it loads numba, which the other solvers do not need.

    As with any function exported under its module's name, the package attribute
    is then the function; the module's other names come by
    ``from sparsekernel.solvers.smo import smo_standard, SMOTrace``.
    """
    if name == "smo":
        from .smo import smo
        globals()["smo"] = smo    # importing the submodule bound the name to the module
        return smo
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
