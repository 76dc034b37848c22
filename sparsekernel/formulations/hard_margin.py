"""The hard-margin (maximum margin) classifier, (7.5)-(7.18).

Primal (7.5)-(7.6), in feature space phi(x_n) = F_n:

    minimise    1/2 ||w||^2                                       (7.6)
    subject to  t_n (w^T phi(x_n) + b) >= 1                      (7.5)

Dual (7.10)-(7.12):

    maximise    sum_n a_n - 1/2 sum_nm a_n a_m t_n t_m k(x_n, x_m)   (7.10)
    subject to  a_n >= 0                                            (7.11)
                sum_n a_n t_n = 0                                    (7.12)

b by (7.18), the average over the support vectors. On data that are not
separable in feature space the primal is infeasible and the dual unbounded:
``InfeasibleError``.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._lazy import cvxpy as cp
from ..errors import InfeasibleError, SolverError
from ..kernels import Kernel, Linear
from ..solvers.smo import MARGIN_TOL
from ..solvers.standard_qp import RhoEstimate, StandardQP
from ._binary import BinaryMachine
from .machine import DUAL, PRIMAL, SLACKNESS, Condition, Formulation, KKTState, flatten
from .solution import Solution

__all__ = ["HardMarginSVC"]

Array = NDArray[np.float64]


#: The SMO's relative tol for the hull distance (its square is then exact to about 2e-10 R^2, far
#: below the (2 MARGIN_TOL R)^2 = 4e-8 R^2 of the test).
HULL_TOL = 1e-10
#: A solver's infeasibility status stands where the hulls are within this many times the
#: resolution 2 r R (a margin floating point barely tells from none; r: ``hull_resolution``).
HULL_BAND = 2.0
#: The smallest hull distance, over R, that the hull QP tells from none on float64 rows: its square is exact
#: to about 2 HULL_TOL R^2 (on float32 rows the kernel values' rounding makes it MARGIN_TOL).
HULL_RESOLUTION_64 = math.sqrt(2.0 * HULL_TOL)


class HardMarginSVC(BinaryMachine):
    """Maximum margin classifier for data separable in feature space.

    Parameters
    ----------
    X : array (N, D)
    t : array (N,) in {-1, +1}
    kernel : Kernel or str
    """

    name = "HardMarginSVC"
    cli_name = "hard"
    libsvm_svm_type = "c_svc"
    demo_label = "hard margin"
    _hyper_names = ()

    def __init__(self, X: ArrayLike, t: ArrayLike, kernel: Kernel | str = Linear(), psd_tol: float = 1e-8) -> None:
        super().__init__(X, t, kernel, psd_tol)

    def _set_hyper(self) -> None:
        return None

    def parameter_values(self) -> dict[str, Any]:
        return {}

    def _build_primal(self, F: Array) -> Formulation:
        w = cp.Variable(F.shape[1], name="w")
        b = cp.Variable(name="b")
        y = F @ w + b                                                   # (7.1)
        constraints = {"(7.5)": cp.multiply(self.t, y) >= 1}            # (7.5)
        problem = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w)), list(constraints.values()))  # (7.6)
        return Formulation(self, "primal", problem, {"w": w, "b": b}, constraints, {}, "features")

    def _build_dual(self, quad: Callable[[cp.Expression], cp.Expression], form: str) -> Formulation:
        a = cp.Variable(self.N, name="a")
        objective = cp.Maximize(cp.sum(a) - 0.5 * quad(cp.multiply(self.t, a)))  # (7.10)
        constraints = {
            "(7.11)": a >= 0,                                            # (7.11)
            "(7.12)": self.t @ a == 0,                                   # (7.12)
        }
        problem = cp.Problem(objective, flatten(constraints))
        return Formulation(self, "dual", problem, {"a": a}, constraints, {}, form)

    _recovery = ("w = sum_n a_n t_n phi(x_n) (7.8)", "b by (7.18)")

    def kkt_conditions(self, s: KKTState) -> list[Condition]:
        """(7.8), (7.9) and (7.14)-(7.16)."""
        margin = self.t * (s.g + s.b)                                         # t_n y(x_n)
        size = max(float(np.max(np.abs(s.a))), 1e-300)
        return [
            self._stationarity_w(s, "(7.8)", "w = sum_n a_n t_n phi(x_n)"),
            self._balance(s, "(7.9)"),
            Condition("(7.14)", DUAL, "a_n >= 0", np.maximum(0.0, -s.a), size),
            Condition("(7.15)", PRIMAL, "t_n y(x_n) - 1 >= 0", np.maximum(0.0, 1.0 - margin), 1.0),
            Condition("(7.16)", SLACKNESS, "a_n {t_n y(x_n) - 1} = 0", np.abs(s.a * (margin - 1.0)), size),
        ]

    def _standard_qp(self) -> StandardQP:
        """min 1/2 a^T (t t^T o K) a - e^T a, t^T a = 0, 0 <= a < inf."""
        return StandardQP(
            kernel=self.kernel, X=self.X, index=np.arange(self.N), y=self.t, scale=1.0,
            p=-np.ones(self.N), lower=np.zeros(self.N), upper=np.full(self.N, np.inf), delta=0.0,
            nu_sum=None, gram=self.gram,
        )

    def _infeasible(self, status: str, kind: str, solver: str) -> None:
        """A solver's infeasibility status is taken only with the proof of ``hull_distance``: the
        classes' convex hulls meet in feature space. Where they are apart the status is wrong
        (an interior-point solver's absolute tolerances on a tiny margin) and SolverError says so."""
        distance = self._raise_if_hulls_meet(f"the hard-margin {kind} has no solution ({solver} status {status})")
        radius = math.sqrt(self.kernel_diagonal_max)
        # the SMO's own rule tells no margin below MARGIN_TOL R from none (``solvers.smo``); where the SMO itself
        # reported the status, its steps did not resolve this margin either (a fuzzed RBF problem, hulls 2.2e-4 R
        # apart: 'unbounded', and the advice named the SMO again)
        if solver.upper() != "SMO" and distance > 2.0 * MARGIN_TOL * radius:
            other = "'smo'"
        else:
            other = "'clarabel' (the SMO does not resolve this margin)"
        raise SolverError(
            f"{solver} reported {status!r} on the hard-margin {kind}, but the classes' convex hulls are "
            f"{distance:.3e} apart ({distance / radius:.2e} max ||phi(x)||): the data "
            f"are separable with margin {distance / 2:.3e}; solve by {other}", status=status, solver=solver)

    def _infeasibility_proof(self, solution: Solution, solver: str) -> None:
        """A failing answer (huge multipliers that fail their certificate) is a proof only where
        ``hull_distance`` is one; else it is just a failing answer."""
        self._raise_if_hulls_meet(f"{solver}'s answer fails its certificate")

    def _raise_if_hulls_meet(self, why: str) -> float:
        """InfeasibleError where the classes' convex hulls are within HULL_BAND times the resolution
        2 r R (``hull_resolution``: a margin that small does not contradict a solver's claim); else the
        hulls' distance. A distance the hull QP resolves proves a margin, whatever another solver's rule
        (the SMO's MARGIN_TOL) tells from none: the data are separable, not infeasible."""
        distance, proved = self.hull_distance()
        radius = math.sqrt(self.kernel_diagonal_max)
        if proved or distance <= HULL_BAND * 2.0 * self.hull_resolution * radius:
            raise InfeasibleError(
                f"the data are not separable in the feature space of {self.kernel!r}: {why}; the classes' convex "
                f"hulls are {distance:.2e} apart, {distance / radius:.1e} max ||phi(x)||, a margin floating point "
                f"cannot tell from none; use SoftMarginSVC")
        return distance

    def hull_distance(self) -> tuple[float, bool]:
        """The distance between the classes' convex hulls in feature space, by the SMO, and whether
        it proves non-separability.

        min_v 1/2 ||sum_n v_n t_n phi(x_n)||^2 over v >= 0 with sum_{t=+1} v = sum_{t=-1} v = 1 is a
        StandardQP of the nu form; any feasible v bounds the distance from above, so a distance at
        most 2 r R (r: ``hull_resolution``) at the SMO's iterate proves that no hyperplane separates the classes
        with a margin that floating point tells from none (R = max ||phi(x_n)||). Returns (distance,
        proved); a distance above the threshold is the optimum's to the SMO's accuracy.
        """
        from ..solvers.smo import smo

        qp = StandardQP(kernel=self.kernel, X=self.X, index=np.arange(self.N), y=self.t, scale=1.0,
                        p=np.zeros(self.N), lower=np.zeros(self.N), upper=np.full(self.N, np.inf), delta=0.0,
                        nu_sum=2.0, gram=self.gram, tol_scale=self.kernel_diagonal_max)
        result = smo(qp, tol=HULL_TOL, max_iter=max(1_000_000, 100 * self.N))
        distance = math.sqrt(max(2.0 * float(result.objective), 0.0))
        return distance, distance <= 2.0 * self.hull_resolution * math.sqrt(self.kernel_diagonal_max)

    @property
    def hull_resolution(self) -> float:
        """The smallest hull distance, over R, told from none: HULL_RESOLUTION_64 where the SMO reads float64
        rows (``kernel_cache.row_dtype``), MARGIN_TOL on float32 rows."""
        from ..solvers.kernel_cache import row_dtype

        return HULL_RESOLUTION_64 if row_dtype(self.N) == np.float64 else MARGIN_TOL

    def libsvm_multipliers(self, coef: Array, intercept: float) -> tuple[Array, RhoEstimate]:
        """LIBSVM's C-SVC coefficients y_n alpha_n (a model trained with a C above every alpha):
        the notes' a = coef t, b = intercept = -rho."""
        return coef * self.t, RhoEstimate(-intercept)

    def _from_rho(self, rho: RhoEstimate, z: Array, u: Array, Ku: Array) -> dict[str, Any]:
        # (7.18): b = mean over support vectors of t_n - sum_m a_m t_m k_nm, which is -rho
        return {"b": -rho.rho}

    def _slacks(self, u: Array, Ku: Array, fields: dict[str, Any]) -> tuple[None, None]:
        return None, None

    def _primal_value(self, norm2: float, fields: dict[str, Any], slacks: tuple) -> float:
        return 0.5 * norm2                                        # (7.6)

    def _dual_value(self, z: Array, u: Array, Ku: Array) -> float:
        return float(np.sum(z)) - 0.5 * float(u @ Ku)                     # (7.10)

    def _solution_from_primal(self, f: Formulation, info: dict[str, Any]) -> Solution:
        common = self._primal_common(f)
        a = self._read_duals(f, "(7.5)")
        return self._from_primal_point(a, {"b": common["b"]}, (None, None), common["w"],
                                       float(f.problem.value), info)
