"""Old path of ``solvers.direct`` (kept so that existing imports work).

``solve_qp(machine, solver)`` is ``machine.solve("qp-" + solver)``: the
machine builds its StandardQP, calls ``direct.solve_standard_qp`` and maps
the answer back; this module only forwards.
"""

from __future__ import annotations

from typing import Any

from .direct import QP_DEFAULTS, SOLVERS, clarabel, osqp, solve_standard_qp

__all__ = ["solve_qp", "solve_standard_qp", "osqp", "clarabel", "QP_DEFAULTS", "SOLVERS"]


def solve_qp(machine: Any, solver: str = "clarabel", **opts: Any) -> Any:
    """``machine.solve("qp-" + solver, **opts)``: a machine's standard-form dual by OSQP or Clarabel."""
    return machine.solve(f"qp-{solver}", **opts)
