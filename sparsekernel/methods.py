"""Solving a machine by name, as the tour, the command line and the demo do.

``solve_by(machine, method)`` is ``formulations.solve.solve`` with one default:
the SMO runs at ``SMO_TOL`` = 1e-6 in LIBSVM's units (converted to the
machine's by ``formulations.solve.libsvm_tol``); ``"libsvm"`` fits
scikit-learn's LIBSVM twin at tol 1e-8. ``auto_method(machine)`` is the
command line's ``--method auto``: the cvxpy dual with Clarabel up to
``AUTO_DUAL_MAX_N`` points, the SMO above, where the cvxpy dual's dense
N x N quadratic term makes it slow and large (measured on 2 shared cores with
make_classification and the RBF kernel: 23 s and 0.3 GB at N = 1,000,
53 s and 0.8 GB at N = 2,000, 230 s at N = 5,000 and over 6 GB at N = 20,000;
the SMO, a few seconds at each).
"""

from __future__ import annotations

from typing import Any

from .formulations import Machine, Solution
from .formulations.solve import SMO_TOL, solve

__all__ = ["solve_by", "SMO_TOL", "has_libsvm_twin", "auto_method", "AUTO_DUAL_MAX_N"]

#: The largest N for which ``auto_method`` chooses the cvxpy dual (Clarabel); the SMO above.
AUTO_DUAL_MAX_N = 1000


def has_libsvm_twin(machine: Machine) -> bool:
    """Whether the machine declares a LIBSVM twin (C-SVC, nu-SVC, epsilon-SVR, nu-SVR, one-class)."""
    return machine.libsvm_twin is not None


def solve_by(machine: Machine, method: str, **opts: Any) -> Solution:
    """Solve ``machine`` by ``method``; the SMO at ``SMO_TOL`` in LIBSVM's units unless ``tol`` is given."""
    if method == "smo" and "tol" not in opts:
        opts = {"tol": SMO_TOL, "tol_units": "libsvm", **opts}
    return solve(machine, method, **opts)


def auto_method(machine: Machine) -> str:
    """``"clarabel"`` (the cvxpy dual) for at most ``AUTO_DUAL_MAX_N`` points, else ``"smo"``."""
    return "clarabel" if machine.N <= AUTO_DUAL_MAX_N else "smo"
