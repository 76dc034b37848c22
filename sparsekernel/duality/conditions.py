"""``check``: a machine's KKT conditions, in the book's terms, at any Solution."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..validation import check_param, fail
from ..errors import ValidationError
from ..formulations.machine import Machine
from ..formulations.solution import Solution
from ..formulations.solve import matched_tol, method_name
from ..formulations.certificate import kkt_report
from ..formulations.report import KKTReport

__all__ = ["check", "matched_tol"]


def check(machine: Machine, solution: Solution | None = None, tol: float | None = None, *,
          a: ArrayLike | None = None, b: float | None = None, a_hat: ArrayLike | None = None,
          rho: float | None = None, epsilon: float | None = None, R2: float | None = None,
          convention: str = "notes") -> KKTReport:
    """Every KKT condition of ``machine`` at ``solution`` (or at your own multipliers ``a``).

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
    solution : Solution, optional
        From any method: cvxpy primal or dual, the direct QP, the SMO, LIBSVM, or
        ``machine.solution(...)``. Omit it to give the multipliers instead.
    tol : float, optional
        Relative tolerance of every row and of the gap (relative to the
        machine's ``output_scale`` and ``gap_scale``). By default the
        tolerance the solution was certified at (``solution.tol``), else the
        one matched to its method (``matched_tol``).

    a, b, a_hat, rho, epsilon, R2, convention
        Instead of ``solution``: ``check(m, a=..., b=...)`` is
        ``check(m, m.solution(a, b, a_hat, rho=..., epsilon=..., R2=..., convention=...))``
        (see ``Machine.solution``; what is not given is recovered by the notes' formulas).

    Returns
    -------
    KKTReport
    """
    if not isinstance(machine, Machine):
        raise fail("machine", "a sparsekernel machine (formulations.Machine)", machine)
    if solution is None and a is None:
        raise fail("solution", "a Solution of that machine, or the multipliers a=", None)
    if a is not None:
        if solution is not None:
            raise fail("a", "None when a solution is given (give one or the other)", a)
        solution = machine.solution(a, b, a_hat, rho=rho, epsilon=epsilon, R2=R2, convention=convention)
    require_solution_of(machine, solution)
    if tol is None:
        tol = solution.tol if np.isfinite(solution.tol) else matched_tol(machine, method_name(solution))
    tol = float(check_param("tol", tol))
    return kkt_report(machine, solution, tol)


def require_solution_of(machine: Machine, solution: Solution, name: str = "solution") -> None:
    """A ValidationError naming ``name`` unless ``solution`` is a Solution of ``machine``'s kind and size
    (``check``, ``categories`` and ``gap`` read its multipliers against the machine's points)."""
    if not isinstance(machine, Machine):
        raise fail("machine", "a sparsekernel machine (formulations.Machine)", machine)
    machine.check_unchanged()                   # its X not changed in place since it was built
    if not isinstance(solution, Solution):
        raise fail(name, "a Solution of that machine", solution)
    if solution.machine != machine.name or solution.a.shape[0] != machine.N:
        raise ValidationError(
            f"{name} must come from {machine.name} with N = {machine.N}; "
            f"got a {solution.machine} solution with {solution.a.shape[0]} multipliers"
        )
