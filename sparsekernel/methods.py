"""Every way to solve a machine, by name: the one dispatch the tour, the command line and the demo share.

``"smo"`` runs the hand-written SMO at tol 1e-6 in LIBSVM's units (scaled to
the machine by ``libsvm_scale``); ``"libsvm"`` fits scikit-learn's LIBSVM twin
(at tol 1e-8) and converts its answer with ``duality.from_sklearn``; every
other name is a ``Machine.solve`` method (``"clarabel"``, ``"osqp"``,
``"primal-clarabel"``, ``"qp-clarabel"``, ``"qp-osqp"``, ...).
"""

from __future__ import annotations

from typing import Any

from .formulations import Machine, Solution

__all__ = ["solve_by", "SMO_TOL", "has_libsvm_twin"]

#: the SMO's tolerance in LIBSVM's gradient units
SMO_TOL = 1e-6


def has_libsvm_twin(machine: Machine) -> bool:
    """LIBSVM solves C-SVC, nu-SVC, epsilon-SVR, nu-SVR and the one-class SVM (not hard margin, not SVDD)."""
    return machine.name not in ("HardMarginSVC", "SVDD")


def solve_by(machine: Machine, method: str, **opts: Any) -> Solution:
    """Solve ``machine`` by ``method`` (see the module docstring)."""
    if method == "libsvm":
        from .duality import solve_with_libsvm

        return solve_with_libsvm(machine, **opts)
    if method == "smo":
        return machine.solve("smo", **{"tol": SMO_TOL / machine.libsvm_scale, **opts})
    return machine.solve(method, **opts)
