"""The standard-form dual QP solved directly through OSQP's and Clarabel's own APIs.

No cvxpy and no machine: the problem (``standard_qp.StandardQP``)

    minimise 1/2 a^T Q a + p^T a  subject to  y^T a = delta, [e^T a = nu_sum], l <= a <= u

goes to the solvers as matrices, exactly the Q, p, y and box the SMO works
on, and comes back as a ``QPResult``. This is the reference for the
hand-written solvers and the measure of cvxpy's modelling overhead.

OSQP takes l <= A x <= u, here A = [y^T; (e^T); I]. Clarabel takes
A x + s = b with s in a product of cones: the equalities in the zero cone,
and -a + s = -l, a + s = u (finite u only) in the nonnegative cone.

Both solvers stop on absolute tolerances, so the QP goes to them in units
where its answer and its objective are of order one (``Units``): a = size a',
f = value f'. Without them the hard-margin dual of inputs of scale 1e4 (a
of order 1e-8) came back from Clarabel "AlmostSolved" with b = -0.82 for
-0.145, OSQP called the same dual at scale 1e-4 (a of order 1e8)
infeasible, and an epsilon-SVR with targets of scale 1e-6 came back
"Solved" from both, failing its KKT conditions. A machine's usual scale (an
RBF kernel, boxes of 1) is its own unit: size = value = 1, the matrices as
they were.
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass, replace
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
    units = Units.of(qp, Q)
    P = sp.triu(sp.csc_matrix(units.Q(Q)), format="csc")
    setup_matrix_time = time.perf_counter() - start
    run = _run_osqp if key == "osqp" else _run_clarabel
    try:
        z, info = run(units.problem(qp), P, settings)
        for regularisation in _regularisations(key, info["status"], opts):
            z, info = run(units.problem(qp), P, {**settings, "static_regularization_constant": regularisation})
            if info["status"] != CLARABEL_NUMERICAL_ERROR:
                break
        z, info["solver_gap"] = units.size * z, units.value * info["solver_gap"]
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


#: Clarabel's status where the factorisation of its KKT system failed.
CLARABEL_NUMERICAL_ERROR = "NumericalError"
#: Clarabel's static regularisation (its default: 1e-8) for the runs again after a NumericalError, in turn.
CLARABEL_REGULARISATIONS = (1e-7, 1e-6)


def _regularisations(solver: str, status: str, opts: dict[str, Any]) -> tuple[float, ...]:
    """The static regularisations Clarabel runs again with after a ``NumericalError`` (none where the caller
    set one, or for another status or solver); the answer of the run that ends without one goes to the
    machine's certificate as any other.

    nu-SVR's standard form Q = [K, -K; -K, K] is singular on all of a = a_hat, and on 15 of the 17 nu-SVR duals
    of 68 drawn by benchmarks/fuzz_references.py (seed 2026) on which Clarabel stopped with NumericalError at
    every tolerance from 1e-12 to 1e-8, it solves at 1e-7, certified and within 1e-13 of the SMO's dual
    objective at tol 1e-8 relative to the gap scale (the other two: inaccurate, failing the KKT check, at
    1e-7 to 1e-5).
    """
    if solver != "clarabel" or status != CLARABEL_NUMERICAL_ERROR or "static_regularization_constant" in opts:
        return ()
    return CLARABEL_REGULARISATIONS


@dataclass(frozen=True)
class Units:
    """The units the solvers see the QP in: a = ``size`` a', f(a) = ``value`` f'(a'), so that

        f'(a') = 1/2 a'^T Q' a' + p'^T a',  Q' = size^2 Q / value,  p' = size p / value,

    with the box and the equalities' right-hand sides divided by ``size``. ``size`` is the
    multipliers' natural scale, the smaller of the widest finite box and max |p_i| / max Q_ii (where
    the curvature, not the box, stops them: the hard margin, or a box far wider than the answer);
    ``value`` the larger of the two terms' sizes there, size^2 max Q_ii and size max |p_i|. Either
    is 1 where the QP gives it nothing to go by (no finite box, p = 0 or Q = 0).
    """

    size: float = 1.0
    value: float = 1.0

    @classmethod
    def of(cls, qp: StandardQP, Q: Array) -> "Units":
        widths = (qp.upper - qp.lower)[np.isfinite(qp.upper)]
        q_max = float(np.max(np.diag(Q), initial=0.0))
        p_max = float(np.max(np.abs(qp.p), initial=0.0))
        candidates = [float(widths.max())] if widths.size and widths.max() > 0 else []
        if q_max > 0 and p_max > 0:
            candidates.append(p_max / q_max)
        size = min(candidates) if candidates else 1.0
        value = max(size * size * q_max, size * p_max)
        if not (math.isfinite(size) and size > 0 and math.isfinite(value) and value > 0):
            return cls()
        return cls(size, value)

    def Q(self, Q: Array) -> Array:
        return Q if self.size == self.value == 1.0 else Q * (self.size * self.size / self.value)

    def problem(self, qp: StandardQP) -> StandardQP:
        """The QP's vectors in these units (its Q is the caller's, ``Q``)."""
        if self.size == self.value == 1.0:
            return qp
        return replace(qp, p=qp.p * (self.size / self.value), lower=qp.lower / self.size,
                       upper=qp.upper / self.size, delta=qp.delta / self.size,
                       nu_sum=None if qp.nu_sum is None else qp.nu_sum / self.size)


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


#: OSQP's exit code for settings its validation refuses (OSQP_SETTINGS_VALIDATION_ERROR)
OSQP_SETTINGS_REFUSED = 2


def osqp_refused_settings(exc: BaseException) -> bool:
    """Whether ``exc``, raised by OSQP's setup or its update of settings, is its refusal of the settings given:
    its validation's ``OSQPException(2)`` (eps_abs = -1, max_iter = -3) or its bindings' TypeError (eps_abs =
    'x'); the problem's own data (the machine's, valid) are not what it refused."""
    return isinstance(exc, TypeError) or (type(exc).__name__ == "OSQPException"
                                          and exc.args[:1] == (OSQP_SETTINGS_REFUSED,))


def osqp_settings_error(settings: dict[str, Any]) -> ValidationError:
    """The ValidationError for OSQP settings whose values its own validation refused."""
    return ValidationError(f"the options of OSQP must be settings it takes, with values in their domains "
                           f"(eps_abs, eps_rel >= 0, max_iter >= 1, ...); got {settings!r:.200}: its settings "
                           f"validation refused them")


def _run_osqp(qp: StandardQP, P: sp.csc_matrix, settings: dict[str, Any]) -> tuple[Array, dict[str, Any]]:
    import osqp

    E, e = _equalities(qp)
    A = sp.vstack([E, sp.identity(qp.n, format="csc")], format="csc")
    lower = np.concatenate([e, qp.lower])
    upper = np.concatenate([e, np.where(np.isfinite(qp.upper), qp.upper, np.inf)])
    problem = osqp.OSQP()
    start = time.perf_counter()
    try:
        problem.setup(P, qp.p, A, lower, upper, **settings)
    except Exception as exc:
        if osqp_refused_settings(exc):      # eps_abs = -1, max_iter = -3, eps_abs = 'x': the user's, not a failure
            raise osqp_settings_error(settings) from None
        raise
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
        except (TypeError, ValueError, OverflowError) as exc:  # a value of the wrong type (or range) for the setting
            raise ValidationError(f"the clarabel setting {name} must be a value of its type; got {value!r} ({exc})") from None
    start = time.perf_counter()
    solver = clarabel.DefaultSolver(P, qp.p, A, b, cones, config)
    setup = time.perf_counter() - start
    result = solver.solve()
    z = np.asarray(result.x, dtype=np.float64)
    return z, {"solver": "CLARABEL", "status": str(result.status), "iterations": int(result.iterations),
               "solve_time": float(result.solve_time), "compile_time": setup,
               "solver_gap": float(result.obj_val - result.obj_val_dual)}
