"""Each training point's case in Result 7.6's table (or its regression / one-class analogue)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..formulations.machine import CATEGORY_NAMES, Machine, bound_tol_of, check_bound_tol
from ..formulations.report import html_table
from ..formulations.solution import Solution
from ..solvers.standard_qp import bound_masks
from .conditions import require_solution_of

__all__ = ["Categories", "categories", "CATEGORY_NAMES"]


@dataclass(frozen=True)
class Categories:
    """``labels[n]`` is point n's case; ``counts`` counts each case (zeros included)."""

    labels: tuple[str, ...]
    counts: dict[str, int]
    task: str

    def __str__(self) -> str:
        width = max(len(k) for k in self.counts)
        return "\n".join(f"  {k:<{width}}  {v:>6}" for k, v in self.counts.items())

    def _repr_html_(self) -> str:
        """The counts of ``str(self)`` for a notebook, with the total, every text escaped."""
        rows = [[k, str(v)] for k, v in self.counts.items()] + [["all points", str(len(self.labels))]]
        return html_table(f"points by case ({self.task})", ["case", "points"], rows)


def categories(machine: Machine, solution: Solution, bound_tol: float | None = None) -> Categories:
    """Classify every point by its multiplier (and, at the bound, its slack); ``bound_tol`` (None: the
    solution's own, ``formulations.machine.bound_tol_of``: the SMO's exact bounds, or BOUND_TOL) tells
    a multiplier at a bound, as ``solution.support`` does.

    Classification (Result 7.6): a_n = 0, not a support vector (on or outside
    the margin, correct side); 0 < a_n < C, on the margin (t_n y_n = 1, or rho
    for nu-SVC); a_n = C, inside the margin (0 <= xi_n <= 1, correctly
    classified) or misclassified (t_n y_n < 0). Regression: a_n = a_hat_n = 0
    inside the tube; a free multiplier on the tube's edge; a bounded one outside.
    One-class and SVDD: inside, on the boundary, outside.
    """
    require_solution_of(machine, solution)
    bound_tol = bound_tol_of(solution) if bound_tol is None else check_bound_tol(bound_tol)
    qp = machine.standard_qp()
    z = solution.a if solution.a_hat is None else np.concatenate([solution.a, solution.a_hat])
    at_lower, at_upper = bound_masks(np.asarray(z, dtype=np.float64), qp.lower, qp.upper, bound_tol,
                                     qp.multiplier_unit)
    all_zero = _both(at_lower, machine.N)          # every multiplier of the point is 0
    none_at_box = _both(~at_upper, machine.N)      # no multiplier of the point is at its upper bound
    names = machine.category_names
    case = np.where(all_zero, 0, np.where(none_at_box, 1, 2))  # 0: a = 0, 1: free, 2: at the bound
    if machine.task == "classification":
        wrong = machine.t * solution.decision_function(_points(machine)) < 0
        case = np.where((case == 2) & wrong, 3, case)
    labels = tuple(names[c] for c in case)
    counts = {name: int(np.sum(case == i)) for i, name in enumerate(names)}
    return Categories(labels, counts, machine.task)


def _both(mask: NDArray[np.bool_], N: int) -> NDArray[np.bool_]:
    """Per point: for the 2N regression variables, both a_n and a_hat_n have the property."""
    return mask if mask.shape[0] == N else mask[:N] & mask[N:]


def _points(machine: Machine) -> NDArray[np.float64]:
    return machine.X  # for a precomputed kernel X is the Gram matrix: the cross-kernel of the training set
