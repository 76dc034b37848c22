"""Solving a machine by name, as the tour, the command line and the demo do.

``solve_by(machine, method)`` is ``formulations.solve.solve`` with one default:
the SMO runs at ``SMO_TOL`` = 1e-6 in LIBSVM's units (converted to the
machine's by ``formulations.solve.libsvm_tol``); ``"libsvm"`` fits
scikit-learn's LIBSVM twin at tol 1e-8. ``auto_method(machine)`` is the
command line's ``--method auto``: the cvxpy dual with Clarabel up to
``AUTO_DUAL_MAX_N`` points, the SMO above, where the cvxpy dual's dense
N x N quadratic term makes it slow and large (``sparsekernel kkt soft`` on
make_classification with the RBF kernel, 2 cores, whole command: 5 s and
0.3 GB at N = 1,000, 35 s and 0.8 GB at 2,000, 45 s and 1.5 GB at 3,000;
issue 19 measured 230 s at 5,000 and over 6 GB at 20,000; the SMO, 4 s at
1,001 and 18 to 26 s at 20,000, report included).
"""

from __future__ import annotations

from typing import Any

from .formulations import Machine, Solution
from .formulations.solve import SMO_TOL, solve

__all__ = ["solve_by", "SMO_TOL", "has_libsvm_twin", "auto_method", "auto_rule", "dual_is_solvable", "AUTO_DUAL_MAX_N"]

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
    """``"clarabel"`` (the cvxpy dual) for at most ``AUTO_DUAL_MAX_N`` points, else ``"smo"``; the SMO too where
    the Gram matrix is not positive semidefinite (``Machine.convex`` False: a sigmoid kernel), whose dual the
    cvxpy forms and the direct QP refuse and the SMO solves to a KKT point, as LIBSVM does."""
    return "clarabel" if machine.N <= AUTO_DUAL_MAX_N and dual_is_solvable(machine) else "smo"


def dual_is_solvable(machine: Machine) -> bool:
    """Whether the cvxpy forms and the direct QP take the machine's dual: not one known to be non-convex."""
    return machine.convex is not False


def auto_rule(machine: Machine) -> str:
    """Why ``auto_method`` chose what it did, in words for the command line's note."""
    if machine.N > AUTO_DUAL_MAX_N:
        return f"N = {machine.N} > {AUTO_DUAL_MAX_N}"
    if not dual_is_solvable(machine):
        return (f"the Gram matrix is not positive semidefinite (smallest eigenvalue "
                f"{machine.eigenvalue_range[0]:.3e}): the dual is not convex")
    return f"N = {machine.N} <= {AUTO_DUAL_MAX_N}"
