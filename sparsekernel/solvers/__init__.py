"""Solvers: the standard-form QP, the direct OSQP/Clarabel path, the SMO and the RVM."""

from typing import Any

from .standard_qp import StandardQP

__all__ = ["StandardQP", "smo"]


def __getattr__(name: str) -> Any:
    """``smo`` on first use: it loads numba, which the other solvers do not need."""
    if name == "smo":
        from .smo import smo
        return smo
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
