"""The standard-form dual QP solved directly through OSQP's and Clarabel's own APIs.

No cvxpy and no machine: the problem (``standard_qp.StandardQP``)

    minimise 1/2 a^T Q a + p^T a  subject to  y^T a = delta, [e^T a = nu_sum], l <= a <= u

goes to the solvers as matrices, exactly the Q, p, y and box the SMO works
on, and comes back as a ``QPResult``. This is the reference for the
hand-written solvers and the measure of cvxpy's modelling overhead.

OSQP takes l <= A x <= u, here A = [y^T; (e^T); I]. Clarabel takes
A x + s = b with s in a product of cones: the equalities in the zero cone,
and -a + s = -l, a + s = u (finite u only) in the nonnegative cone.
"""

from __future__ import annotations

import functools
import time
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ..errors import SolverError, ValidationError
from .standard_qp import QPResult, StandardQP

__all__ = ["solve_standard_qp", "osqp", "clarabel", "QP_DEFAULTS", "SOLVERS"]

Array = NDArray[np.float64]

#: Default solver settings (a caller's keyword arguments override them).
QP_DEFAULTS: dict[str, dict[str, Any]] = {
    "osqp": {"eps_abs": 1e-6, "eps_rel": 1e-6, "max_iter": 100_000, "polishing": True, "verbose": False},
    "clarabel": {"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12, "tol_feas": 1e-12, "verbose": False},
}

#: The solvers this module drives.
SOLVERS = ("clarabel", "osqp")

#: Each solver's status words by outcome (see ``standard_qp.OUTCOMES``); any other word is "failed".
_OUTCOME_OF = {
    "osqp": {"solved": "solved", "solved inaccurate": "inaccurate", "maximum iterations reached": "inaccurate",
             "run time limit reached": "inaccurate", "primal infeasible": "infeasible",
             "dual infeasible": "infeasible", "primal infeasible inaccurate": "infeasible",
             "dual infeasible inaccurate": "infeasible"},
    "clarabel": {"Solved": "solved", "AlmostSolved": "inaccurate", "MaxIterations": "inaccurate",
                 "MaxTime": "inaccurate", "InsufficientProgress": "inaccurate",
                 "PrimalInfeasible": "infeasible", "DualInfeasible": "infeasible",
                 "AlmostPrimalInfeasible": "infeasible", "AlmostDualInfeasible": "infeasible"},
}


def osqp(qp: StandardQP, **settings: Any) -> QPResult:
    """Solve ``qp`` with OSQP; ``settings`` override ``QP_DEFAULTS["osqp"]``."""
    return solve_standard_qp(qp, "osqp", **settings)


def clarabel(qp: StandardQP, **settings: Any) -> QPResult:
    """Solve ``qp`` with Clarabel; ``settings`` override ``QP_DEFAULTS["clarabel"]``."""
    return solve_standard_qp(qp, "clarabel", **settings)


def solve_standard_qp(qp: StandardQP, solver: str = "clarabel", **opts: Any) -> QPResult:
    """Solve the QP with ``solver`` ("clarabel" or "osqp"); ``opts`` override its defaults.

    Raises
    ------
    ValidationError
        For a solver name outside ``SOLVERS``.
    SolverError
        When the solver itself raises (bad settings or data).
    """
    key = solver.lower()
    if key not in SOLVERS:
        raise ValidationError(f"solver must be 'clarabel' or 'osqp'; got {solver!r}")
    unknown = sorted(set(opts) - settings_names(key))
    if unknown:  # else the solver's own error, read as a failed solve
        raise ValidationError(f"the settings of {key} must be among {sorted(settings_names(key))}; got {unknown}")
    settings = {**QP_DEFAULTS[key], **opts}
    start = time.perf_counter()
    Q = qp.dense_Q()
    P = sp.triu(sp.csc_matrix(Q), format="csc")
    setup_matrix_time = time.perf_counter() - start
    run = _run_osqp if key == "osqp" else _run_clarabel
    try:
        z, info = run(qp, P, settings)
    except ValidationError:
        raise
    except Exception as exc:  # the solvers raise their own exception types on bad settings or data
        raise SolverError(f"{solver} failed: {type(exc).__name__}: {exc}", status="solver_error",
                          solver=solver.upper()) from exc
    status = info.pop("status")
    outcome = _OUTCOME_OF[key].get(status, "failed")
    if outcome in ("solved", "inaccurate") and not bool(np.all(np.isfinite(z))):
        outcome = "failed"
    objective = float(0.5 * z @ (Q @ z) + qp.p @ z) if bool(np.all(np.isfinite(z))) else float("nan")
    return QPResult(a=z, G=None, rho=None, outcome=outcome, status=status, objective=objective,
                    **{**info, "compile_time": info["compile_time"] + setup_matrix_time})


@functools.lru_cache(maxsize=2)
def settings_names(solver: str) -> frozenset[str]:
    """The settings ``solver`` ("clarabel" or "osqp") takes: the fields of its own settings object (and
    OSQP's older names and its two named options, which its ``setup`` translates)."""
    if solver == "clarabel":
        import clarabel

        return frozenset(n for n in dir(clarabel.DefaultSettings()) if not n.startswith("_") and n != "default")
    import osqp

    fields = dir(osqp.OSQP().ext.OSQPSettings())
    return frozenset(n for n in fields if not n.startswith("_")) | {"polish", "warm_start", "solver_type",
                                                                    "cg_preconditioner"}


def _equalities(qp: StandardQP) -> tuple[sp.csc_matrix, Array]:
    rows = [qp.y[None, :]]
    rhs = [qp.delta]
    if qp.nu_sum is not None:
        rows.append(np.ones((1, qp.n)))
        rhs.append(qp.nu_sum)
    return sp.csc_matrix(np.vstack(rows)), np.array(rhs, dtype=np.float64)


def _run_osqp(qp: StandardQP, P: sp.csc_matrix, settings: dict[str, Any]) -> tuple[Array, dict[str, Any]]:
    import osqp

    E, e = _equalities(qp)
    A = sp.vstack([E, sp.identity(qp.n, format="csc")], format="csc")
    lower = np.concatenate([e, qp.lower])
    upper = np.concatenate([e, np.where(np.isfinite(qp.upper), qp.upper, np.inf)])
    problem = osqp.OSQP()
    start = time.perf_counter()
    problem.setup(P, qp.p, A, lower, upper, **settings)
    setup = time.perf_counter() - start
    result = problem.solve(raise_error=False)
    z = np.asarray(result.x, dtype=np.float64)
    return z, {"solver": "OSQP", "status": str(result.info.status), "iterations": int(result.info.iter),
               "solve_time": float(result.info.solve_time), "compile_time": setup,
               "solver_gap": float(result.info.duality_gap)}


def _run_clarabel(qp: StandardQP, P: sp.csc_matrix, settings: dict[str, Any]) -> tuple[Array, dict[str, Any]]:
    import clarabel

    E, e = _equalities(qp)
    finite = np.flatnonzero(np.isfinite(qp.upper))
    identity = sp.identity(qp.n, format="csc")
    A = sp.vstack([E, -identity, identity[finite]], format="csc")
    b = np.concatenate([e, -qp.lower, qp.upper[finite]])
    cones = [clarabel.ZeroConeT(E.shape[0]), clarabel.NonnegativeConeT(qp.n + finite.size)]
    config = clarabel.DefaultSettings()
    for name, value in settings.items():
        try:
            setattr(config, name, value)
        except (TypeError, ValueError) as exc:  # a value of the wrong type for the setting
            raise ValidationError(f"the clarabel setting {name} must be a value of its type; got {value!r} ({exc})") from None
    start = time.perf_counter()
    solver = clarabel.DefaultSolver(P, qp.p, A, b, cones, config)
    setup = time.perf_counter() - start
    result = solver.solve()
    z = np.asarray(result.x, dtype=np.float64)
    return z, {"solver": "CLARABEL", "status": str(result.status), "iterations": int(result.iterations),
               "solve_time": float(result.solve_time), "compile_time": setup,
               "solver_gap": float(result.obj_val - result.obj_val_dual)}
