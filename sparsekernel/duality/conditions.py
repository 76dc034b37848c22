"""``check``: a machine's KKT conditions, in the book's terms, at any Solution."""

from __future__ import annotations

import numpy as np

from ..validation import check_param, fail
from ..errors import ValidationError
from ..formulations.machine import Machine
from ..formulations.solution import Solution
from ..formulations.solve import matched_tol
from .report import Gap, KKTReport, row_from_values

__all__ = ["check", "matched_tol"]


def check(machine: Machine, solution: Solution, tol: float = 1e-6) -> KKTReport:
    """Every KKT condition of ``machine`` at ``solution``.

    Each row gives the equation tag, the condition in words, its largest
    violation relative to the row's scale (the box C for multipliers, the
    margin or the targets' size for outputs), where it occurs and whether it
    is within ``tol``. Where the solution has no primal variables of its own (a
    dual, QP, SMO or LIBSVM solve) they were recovered by the notes' formulas,
    and the report lists which. The primal objective (at the primal point) and
    the dual objective (at the multipliers) and their gap close the report.

    Parameters
    ----------
    machine : Machine
        The machine that was solved (its data, kernel and hyperparameters).
    solution : Solution
        From any method: cvxpy primal or dual, the direct QP, the SMO, LIBSVM.
    tol : float
        Relative tolerance of every row and of the gap.

    Returns
    -------
    KKTReport
    """
    if not isinstance(machine, Machine):
        raise fail("machine", "a sparsekernel machine (formulations.Machine)", machine)
    if not isinstance(solution, Solution):
        raise fail("solution", "a Solution of that machine", solution)
    tol = float(check_param("tol", tol))
    if solution.machine != machine.name or solution.a.shape[0] != machine.N:
        raise ValidationError(
            f"solution must come from {machine.name} with N = {machine.N}; "
            f"got a {solution.machine} solution with {solution.a.shape[0]} multipliers"
        )
    state = machine.kkt_state(solution)
    rows = tuple(row_from_values(c.tag, c.kind, c.text, c.violation, c.scale, tol)
                 for c in machine.kkt_conditions(state))
    primal, dual = machine.objectives(state)
    title = (f"KKT check: {machine.name} (N = {machine.N}, {machine.kernel!r}"
             + "".join(f", {k} = {v!r}" for k, v in machine.get_params().items() if v is not None)
             + f"), {solution.method} solved by {solution.solver} (status {solution.status})")
    notes = tuple(f"note: {n}" for n in solution.notes)
    return KKTReport(title, rows, Gap.of(primal, dual), tol, state.recovered,
                     float(getattr(solution, "solver_gap", np.nan)), notes)
