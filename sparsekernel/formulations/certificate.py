"""A machine's KKT report at a Solution: the certificate of every solve (``solve.certify``)
and the body of ``duality.check``."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from .machine import Machine
from .report import Gap, KKTReport, row_from_values
from .solution import Solution

__all__ = ["kkt_report"]

Array = NDArray[np.float64]


def kkt_report(machine: Machine, solution: Solution, tol: float, Ku: Array | None = None) -> KKTReport:
    """Every KKT condition of ``machine`` at ``solution`` and the relative gap, within ``tol``
    (arguments already validated; ``duality.check`` is the public form, which always computes the
    outputs K u itself; a solver's certificate may pass them from its kernel rows as ``Ku``)."""
    state = machine.kkt_state(solution, Ku)
    conditions = [*machine.kkt_conditions(state), machine.model_condition(solution, state)]
    rows = tuple(row_from_values(c.tag, c.kind, c.text, c.violation, c.scale, tol) for c in conditions)
    primal, dual = machine.objectives(state)
    title = (f"KKT check: {machine.name} (N = {machine.N}, {machine.kernel!r}"
             + "".join(f", {k} = {v!r}" for k, v in machine.get_params().items() if v is not None)
             + f"), {solution.method} solved by {solution.solver} (status {solution.status})")
    notes = tuple(f"note: {n}" for n in solution.notes)
    return KKTReport(title, rows, Gap.of(primal, dual, machine.gap_scale), tol, state.recovered,
                     float(getattr(solution, "solver_gap", np.nan)), notes, convex=machine.convex is not False)
