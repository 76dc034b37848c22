"""Solving a machine by name, as the tour, the command line and the demo do.

``solve_by(machine, method)`` is ``formulations.solve.solve`` with one default:
the SMO runs at ``SMO_TOL`` = 1e-6 in LIBSVM's units (converted to the
machine's by ``formulations.solve.libsvm_tol``); ``"libsvm"`` fits
scikit-learn's LIBSVM twin at tol 1e-8.
"""

from __future__ import annotations

from typing import Any

from .formulations import Machine, Solution
from .formulations.solve import SMO_TOL, solve

__all__ = ["solve_by", "SMO_TOL", "has_libsvm_twin"]


def has_libsvm_twin(machine: Machine) -> bool:
    """Whether the machine declares a LIBSVM twin (C-SVC, nu-SVC, epsilon-SVR, nu-SVR, one-class)."""
    return machine.libsvm_twin is not None


def solve_by(machine: Machine, method: str, **opts: Any) -> Solution:
    """Solve ``machine`` by ``method``; the SMO at ``SMO_TOL`` in LIBSVM's units unless ``tol`` is given."""
    if method == "smo" and "tol" not in opts:
        opts = {"tol": SMO_TOL, "tol_units": "libsvm", **opts}
    return solve(machine, method, **opts)
