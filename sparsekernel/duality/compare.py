"""Solutions side by side: objectives, multipliers, b, decision values, support sets, categories."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from typing import Any, Mapping

import numpy as np
import scipy.sparse
from numpy.typing import ArrayLike

from ..errors import ValidationError
from ..sparse import as_rows, issparse
from ..formulations.machine import Machine
from ..formulations.solution import Solution
from .categories import categories
from .conditions import check, require_solution_of
from ..formulations.report import html_table
from .report import Gap, _clean

__all__ = ["gap", "compare", "Comparison", "compare_many"]


def gap(machine: Machine, primal_solution: Solution, dual_solution: Solution) -> Gap:
    """The primal objective at one solution's primal point against the dual objective at
    another's multipliers: weak duality says primal >= dual for feasible points."""
    require_solution_of(machine, primal_solution, "primal_solution")
    require_solution_of(machine, dual_solution, "dual_solution")
    primal, _ = machine.objectives(machine.kkt_state(primal_solution))
    _, dual = machine.objectives(machine.kkt_state(dual_solution))
    return Gap.of(primal, dual, machine.gap_scale)


@dataclass(frozen=True)
class Comparison:
    """Two solutions of one machine compared."""

    names: tuple[str, str]
    primal: tuple[float, float]
    dual: tuple[float, float]
    max_delta_a: float
    max_delta_a_hat: float
    delta_b: float
    max_delta_decision: float
    n_support: tuple[int, int]
    only_in_first: tuple[int, ...]
    only_in_second: tuple[int, ...]
    categories_changed: int | None

    @property
    def same_support(self) -> bool:
        return not self.only_in_first and not self.only_in_second

    def to_dict(self) -> dict[str, Any]:
        return _clean(asdict(self))

    def _rows(self) -> list[tuple[str, str, str, str]]:
        """(quantity, first, second, difference) for ``__str__`` and ``_repr_html_``."""
        a, b = self.names
        rows = [
            ("primal objective", f"{self.primal[0]:.10g}", f"{self.primal[1]:.10g}", f"{self.primal[1] - self.primal[0]:.1e}"),
            ("dual objective", f"{self.dual[0]:.10g}", f"{self.dual[1]:.10g}", f"{self.dual[1] - self.dual[0]:.1e}"),
            ("support vectors", str(self.n_support[0]), str(self.n_support[1]),
             f"{len(self.only_in_first)} only in {a}, {len(self.only_in_second)} only in {b}"),
            ("max |delta a|", "", "", f"{self.max_delta_a:.1e}"),
            ("|delta b|", "", "", f"{self.delta_b:.1e}"),
            ("max |delta y(x)|", "", "", f"{self.max_delta_decision:.1e}"),
        ]
        if not math.isnan(self.max_delta_a_hat):
            rows.insert(4, ("max |delta a_hat|", "", "", f"{self.max_delta_a_hat:.1e}"))
        if self.categories_changed is not None:
            rows.append(("points changing case", "", "", str(self.categories_changed)))
        return rows

    def __str__(self) -> str:
        a, b = self.names
        rows = self._rows()
        w = max(len(r[0]) for r in rows)
        wa = max(len(a), *(len(r[1]) for r in rows))
        wb = max(len(b), *(len(r[2]) for r in rows))
        lines = [f"  {'':<{w}}  {a:>{wa}}  {b:>{wb}}  difference"]
        lines += [f"  {r[0]:<{w}}  {r[1]:>{wa}}  {r[2]:>{wb}}  {r[3]}" for r in rows]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """The table of ``str(self)`` for a notebook, every text escaped."""
        a, b = self.names
        return html_table(f"{a} against {b}", ["", a, b, "difference"], self._rows())


def compare(sol_a: Solution, sol_b: Solution, X: ArrayLike | None = None,
            machine: Machine | None = None) -> Comparison:
    """Compare two solutions of the same machine.

    Decision values are compared on ``X`` if given, else on the machine's
    training points, else on the union of both solutions' support vectors.
    With ``machine`` the objectives are re-evaluated at each solution's point
    and the points that change case in Result 7.6's table are counted.
    """
    for name, sol in (("sol_a", sol_a), ("sol_b", sol_b)):
        if not isinstance(sol, Solution):
            raise ValidationError(f"{name} must be a Solution (machine.solve(...), Machine.solution(...)); "
                                  f"got {type(sol).__name__} {sol!r:.60}")
    if sol_a.machine != sol_b.machine or sol_a.a.shape != sol_b.a.shape:
        raise ValidationError(
            f"solutions must be of the same machine and size; got {sol_a.machine} ({sol_a.a.shape[0]}) "
            f"and {sol_b.machine} ({sol_b.a.shape[0]})"
        )
    if machine is not None:
        # the objectives and cases read each solution's multipliers against the machine's points
        require_solution_of(machine, sol_a, "sol_a")
        require_solution_of(machine, sol_b, "sol_b")
    points = _points(sol_a, sol_b, X, machine)
    if machine is not None:
        pa, da = machine.objectives(machine.kkt_state(sol_a))
        pb, db = machine.objectives(machine.kkt_state(sol_b))
        ca, cb = categories(machine, sol_a).labels, categories(machine, sol_b).labels
        changed: int | None = int(sum(x != y for x, y in zip(ca, cb)))
    else:
        pa, da, pb, db = sol_a.primal_objective, sol_a.dual_objective, sol_b.primal_objective, sol_b.dual_objective
        changed = None
    delta_hat = (float(np.max(np.abs(sol_a.a_hat - sol_b.a_hat)))
                 if sol_a.a_hat is not None and sol_b.a_hat is not None else math.nan)
    sa, sb = set(sol_a.support.tolist()), set(sol_b.support.tolist())
    decision = np.abs(sol_a.decision_function(points) - sol_b.decision_function(points))
    return Comparison(
        names=(_name(sol_a), _name(sol_b)), primal=(pa, pb), dual=(da, db),
        max_delta_a=float(np.max(np.abs(sol_a.a - sol_b.a))), max_delta_a_hat=delta_hat,
        delta_b=abs(sol_a.b - sol_b.b), max_delta_decision=float(np.max(decision)) if decision.size else 0.0,
        n_support=(len(sa), len(sb)), only_in_first=tuple(sorted(sa - sb)), only_in_second=tuple(sorted(sb - sa)),
        categories_changed=changed,
    )


def _name(sol: Solution) -> str:
    return f"{sol.method}/{sol.solver.lower()}"


def _points(sol_a: Solution, sol_b: Solution, X: ArrayLike | None, machine: Machine | None) -> np.ndarray:
    if X is not None:
        return as_rows(X)
    if machine is not None:
        return machine.X
    if sol_a.support_vectors is None or sol_b.support_vectors is None:
        raise ValidationError("X must be given to compare decision values of precomputed-kernel solutions; got None")
    if issparse(sol_a.support_vectors) or issparse(sol_b.support_vectors):
        return scipy.sparse.vstack([sol_a.support_vectors, sol_b.support_vectors], format="csr")
    return np.vstack([sol_a.support_vectors, sol_b.support_vectors])


def compare_many(machine: Machine, solutions: Mapping[str, Solution], tol: float = 1e-6) -> dict[str, Any]:
    """Several solutions of one machine against the first: a JSON-ready summary.

    Raises
    ------
    ValidationError
        Where ``solutions`` is not a non-empty mapping of names to Solutions of ``machine``.
    """
    if not isinstance(solutions, Mapping) or not solutions:
        raise ValidationError(f"solutions must be a non-empty mapping of names to Solutions of the machine (the "
                              f"first the reference); got {type(solutions).__name__} {solutions!r:.60}")
    names = list(solutions)
    for name in names:
        require_solution_of(machine, solutions[name], f"solutions[{name!r}]")
    first = solutions[names[0]]
    rows = []
    for name in names:
        sol = solutions[name]
        c = compare(first, sol, machine=machine)
        report = check(machine, sol, tol)
        rows.append({
            "method": name, "primal": c.primal[1], "dual": c.dual[1], "gap": report.gap.relative,
            "max_kkt_violation": report.max_violation, "kkt_ok": report.ok, "n_support": c.n_support[1],
            "max_delta_a": c.max_delta_a, "delta_b": c.delta_b, "max_delta_decision": c.max_delta_decision,
            "support_differences": len(c.only_in_first) + len(c.only_in_second),
            "categories_changed": c.categories_changed, "seconds": sol.solve_time + sol.compile_time,
        })
    return _clean({"machine": machine.name, "reference": names[0], "tol": tol, "rows": rows})


def format_many(summary: dict[str, Any]) -> str:
    """The compare_many summary as a table (differences against the first method).

    A value the summary holds as None (``_clean``'s JSON form of NaN or inf: the seconds of
    ``Machine.solution``'s multipliers, which no solver timed; an objective that overflowed) is
    shown as n/a, as the KKT report shows a row it could not evaluate.
    """
    head = (f"{'method':<16} {'primal':>14} {'dual':>14} {'rel.gap':>8} {'max KKT':>8} {'SVs':>5} "
            f"{'|da|':>8} {'|db|':>8} {'|dy|':>8} {'SV diff':>7} {'moved':>5} {'time':>8}")
    lines = [f"{summary['machine']}: differences against {summary['reference']} (KKT tolerance {summary['tol']:.1e})",
             head, "-" * len(head)]
    for r in summary["rows"]:
        moved = "-" if r["categories_changed"] is None else str(r["categories_changed"])
        seconds = "n/a" if r["seconds"] is None else f"{r['seconds']:.3f}s"
        lines.append(
            f"{r['method']:<16} {_cell(r['primal'], '.8g'):>14} {_cell(r['dual'], '.8g'):>14} "
            f"{_cell(r['gap'], '.1e'):>8} {_cell(r['max_kkt_violation'], '.1e'):>8} {r['n_support']:>5} "
            f"{_cell(r['max_delta_a'], '.1e'):>8} {_cell(r['delta_b'], '.1e'):>8} "
            f"{_cell(r['max_delta_decision'], '.1e'):>8} {r['support_differences']:>7} {moved:>5} {seconds:>8}"
        )
    return "\n".join(lines)


def _cell(value: float | None, spec: str) -> str:
    """A number of the summary in ``spec``, or n/a where the summary holds None."""
    return "n/a" if value is None else format(value, spec)


def dumps(summary: dict[str, Any]) -> str:
    return json.dumps(summary, indent=2)
