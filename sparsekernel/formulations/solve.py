"""The one dispatch: a method's name, the path that solves a machine by it, and one status policy.

Methods (``solve(machine, method, **opts)``; ``Machine.solve`` is this):

``"smo"``
    The hand-written SMO (``solvers.smo``) on the machine's StandardQP.
``"qp-clarabel"``, ``"qp-osqp"``
    The StandardQP through Clarabel's or OSQP's own API (``solvers.direct``).
``"libsvm"``
    The machine's LIBSVM twin through scikit-learn (``formulations.libsvm``).
``"primal-<solver>"``, ``"hinge-<solver>"``
    The cvxpy primal (or the unconstrained (7.44)) by any cvxpy solver.
``"clarabel"``, ``"osqp"``, any other cvxpy solver name
    The cvxpy dual.

The machine builds its QP, the solver answers in the QP's terms
(``QPResult``), and the machine maps the answer back
(``Machine.solution_from_standard``): the solvers know no machine.

Units of ``tol``. Every method takes its solver's own tolerance. The SMO's
``tol`` bounds the maximal violation m(a) - M(a) of the notes' multipliers;
LIBSVM's gradients are ``machine.libsvm_scale`` times larger (nu-SVC: N;
one-class: nu N), so a tolerance in LIBSVM's units is converted here and only
here, by ``libsvm_tol``.

Status policy (``accept``), the same for every solver: a solver that met
its tolerance returns the Solution; one that stopped early with a point
(iteration cap, an inaccurate status) warns with ``ConvergenceWarning``
naming its iterations and status, and returns the point; one that reports
infeasibility lets the machine raise ``InfeasibleError`` where that status
proves the problem has no solution, else raises ``SolverError``; anything
else raises ``SolverError`` with the solver's own status.
"""

from __future__ import annotations

import warnings
from typing import Any

from .._lazy import cvxpy as cp
from ..errors import ConvergenceWarning, SolverError, ValidationError
from ..solvers.standard_qp import QPResult
from .machine import BOUND_TOL, Machine
from .solution import Solution

__all__ = ["solve", "solve_smo", "solve_direct", "accept", "cvxpy_outcome", "libsvm_tol", "matched_tol",
           "SMO_TOL"]

#: The SMO's tolerance in LIBSVM's gradient units where the caller gives none (tour, CLI, demo).
SMO_TOL = 1e-6


def solve(machine: Machine, method: str = "clarabel", **opts: Any) -> Solution:
    """Solve ``machine`` by ``method`` (see the module docstring); ``opts`` go to the solver."""
    name = _check_method(method)
    if name == "smo":
        return solve_smo(machine, **opts)
    if name.startswith("qp-"):
        return solve_direct(machine, name[len("qp-"):], **opts)
    if name == "libsvm":
        from .libsvm import solve_with_libsvm

        return solve_with_libsvm(machine, **opts)
    if name.startswith("primal-"):
        return machine.primal().solve(name[len("primal-"):], **opts)
    if name.startswith("hinge-"):
        hinge = getattr(machine, "hinge", None)
        if hinge is None:
            raise ValidationError(f"method must name a form {machine.name} has: it has no hinge form; got {method!r}")
        return hinge().solve(name[len("hinge-"):], **opts)
    form = opts.pop("form", "auto")
    return machine.dual(form).solve(name, **opts)


_METHOD_DOMAIN = ("'smo', 'libsvm', 'qp-clarabel', 'qp-osqp', 'primal-<solver>', 'hinge-<solver>' or an "
                  "installed cvxpy solver")


def _check_method(method: Any) -> str:
    if not isinstance(method, str) or not method:
        raise ValidationError(f"method must be {_METHOD_DOMAIN}; got {method!r}")
    name = method.lower()
    if name in ("smo", "libsvm") or name.startswith(("qp-", "primal-", "hinge-")):
        return name
    if name.upper() not in cp.installed_solvers():
        raise ValidationError(f"method must be {_METHOD_DOMAIN} ({', '.join(cp.installed_solvers())}); "
                              f"got {method!r}")
    return name


def libsvm_tol(machine: Machine, tol: float) -> float:
    """A tolerance in LIBSVM's gradient units as the SMO's tolerance on the notes' multipliers."""
    return float(tol) / machine.libsvm_scale


def solve_smo(machine: Machine, tol: float = 1e-3, *, tol_units: str = "notes", **opts: Any) -> Solution:
    """The SMO on the machine's StandardQP; ``tol_units`` is ``"notes"`` or ``"libsvm"``."""
    from ..solvers.smo import smo

    if tol_units not in ("notes", "libsvm"):
        raise ValidationError(f"tol_units must be 'notes' or 'libsvm'; got {tol_units!r}")
    if tol_units == "libsvm":
        tol = libsvm_tol(machine, tol)
    result = smo(machine.standard_qp(), tol=tol, **opts)
    detail = (f"SMO stopped at the iteration cap after {result.iterations} iterations with maximal KKT "
              f"violation {result.violation:.3e} >= tol = {tol:g}")
    accept(machine, result.outcome, result.status, "standard-form dual", "SMO", result.iterations, detail)
    return machine.solution_from_standard(result.a, _info(result, "smo"), rho=result.rho, G=result.G,
                                          trace=result.trace)


def solve_direct(machine: Machine, solver: str = "clarabel", bound_tol: float = BOUND_TOL,
                 **opts: Any) -> Solution:
    """The StandardQP through Clarabel's or OSQP's own API; ``opts`` are the solver's settings."""
    from ..solvers.direct import solve_standard_qp

    result = solve_standard_qp(machine.standard_qp(), solver, **opts)
    accept(machine, result.outcome, result.status, "dual", result.solver, result.iterations)
    return machine.solution_from_standard(result.a, _info(result, "qp"), bound_tol=float(bound_tol))


def _info(result: QPResult, method: str) -> dict[str, Any]:
    return dict(solver=result.solver, method=method, status=result.status, iterations=result.iterations,
                solve_time=result.solve_time, compile_time=result.compile_time, solver_gap=result.solver_gap)


def accept(machine: Machine, outcome: str, status: str, kind: str, solver: str, iterations: int | None,
           detail: str | None = None) -> None:
    """The status policy (module docstring): return, warn, or raise, by ``outcome``."""
    if outcome == "solved":
        return
    if outcome == "inaccurate":
        warnings.warn(detail or (f"{solver} stopped before its tolerance on the {kind} of {machine.name} "
                                 f"after {iterations} iterations (status {status}); the solution is inaccurate"),
                      ConvergenceWarning, stacklevel=4)
        return
    if outcome == "infeasible":
        machine._infeasible(status, kind, solver)
    raise SolverError(f"{solver} did not solve the {kind} of {machine.name}: status {status}",
                      status=status, solver=solver)


def cvxpy_outcome(status: str, has_values: bool) -> str:
    """A cvxpy status as an outcome of ``standard_qp.OUTCOMES``."""
    if status == cp.OPTIMAL:
        return "solved"
    if status in (cp.OPTIMAL_INACCURATE, cp.USER_LIMIT) and has_values:
        return "inaccurate"
    if status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE, cp.UNBOUNDED, cp.UNBOUNDED_INACCURATE):
        return "infeasible"
    return "failed"


def matched_tol(machine: Machine, method: str) -> float:
    """A KKT tolerance matched to a method's accuracy at its default settings.

    Clarabel (run at 1e-12) and LIBSVM (at 1e-8): 1e-6; OSQP (at 1e-6) and the
    SMO: 1e-5; a primal the machine solves less accurately (``primal_tol``,
    SVDD's second-order cone primal at Clarabel's default 1e-8): the larger.
    """
    name = method.lower()
    base = 1e-5 if name in ("smo", "osqp", "qp-osqp", "primal-osqp", "hinge-osqp") else 1e-6
    return max(base, machine.primal_tol) if name.startswith(("primal", "hinge")) else base
