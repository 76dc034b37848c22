"""Support vector data description (Tax and Duin, 1999): the smallest enclosing sphere.

Primal, in feature space, with C = 1/(nu N):

    minimise    R^2 + C sum_n xi_n
    subject to  ||phi(x_n) - c||^2 <= R^2 + xi_n,  xi_n >= 0

(a convex quadratic, i.e. second-order cone, constraint). Dual:

    maximise    sum_n a_n k(x_n, x_n) - sum_nm a_n a_m k(x_n, x_m)
    subject to  0 <= a_n <= C,  sum_n a_n = 1

with c = sum_n a_n phi(x_n). The decision value is R^2 - ||phi(x) - c||^2 =
2 sum_n a_n k(x, x_n) - k(x, x) + b with b = R^2 - a^T K a (positive inside).
For a kernel with constant k(x, x), such as the Gaussian, it is twice the
one-class SVM's decision value with the same nu (gap 7.5).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._lazy import cvxpy as cp
from ..kernels import RBF, Kernel
from ..solvers.standard_qp import RhoEstimate, StandardQP
from ._novelty import NoveltyMachine
from .machine import PRIMAL, SLACKNESS, Condition, Formulation, KKTState, flatten, multiplier_scale
from .solution import Solution

__all__ = ["SVDD"]

Array = NDArray[np.float64]


class SVDD(NoveltyMachine):
    """Support vector data description.

    Parameters
    ----------
    X : array (N, D)
    kernel : Kernel or str
    nu : float in (0, 1]
        Sets C = 1/(nu N): at most a fraction nu of the points lie outside the sphere.
    """

    name = "SVDD"
    cli_name = "svdd"
    demo_label = "SVDD"
    #: its primal is a second-order cone problem, which Clarabel solves to its default 1e-8
    primal_tol = 1e-5

    def __init__(self, X: ArrayLike, kernel: Kernel | str = RBF(1.0), nu: float = 0.5,
                 psd_tol: float = 1e-8) -> None:
        super().__init__(X, None, kernel, psd_tol)
        self._set_hyper(nu=nu)

    @property
    def output_scale(self) -> float:
        """The data's spread in feature space (``kernel_spread``): R^2 and the squared distances
        ||phi(x_n) - c||^2 are of that size, whatever the origin of the features."""
        return self.kernel_spread

    def _build_primal(self, F: Array) -> Formulation:
        params = self._parameters(("nu", "1/(nu N)"))          # nu: the hyperparameter, set there
        c = cp.Variable(F.shape[1], name="c")
        R2 = cp.Variable(name="R2")
        xi = cp.Variable(self.N, name="xi")
        squared_distance = np.sum(F**2, axis=1) - 2 * F @ c + cp.sum_squares(c)   # ||phi_n - c||^2
        objective = cp.Minimize(R2 + params["1/(nu N)"] * cp.sum(xi))
        constraints = {"sphere": squared_distance <= R2 + xi, "xi>=0": xi >= 0}
        problem = cp.Problem(objective, list(constraints.values()))
        # the cone form stalls below about 1e-9 in Clarabel: keep its default 1e-8
        defaults = {"CLARABEL": {"tol_gap_abs": 1e-8, "tol_gap_rel": 1e-8, "tol_feas": 1e-8}}
        return Formulation(self, "primal", problem, {"c": c, "R2": R2, "xi": xi}, constraints, params,
                           "features", defaults)

    def _build_dual(self, quad: Callable[[cp.Expression], cp.Expression], form: str) -> Formulation:
        params = self._parameters(("nu", "1/(nu N)"))          # nu: the hyperparameter, set there
        a = cp.Variable(self.N, name="a")
        objective = cp.Maximize(self.kernel_diagonal() @ a - quad(a))
        constraints = {"box": (a >= 0, a <= params["1/(nu N)"]), "sum": cp.sum(a) == 1}
        problem = cp.Problem(objective, flatten(constraints))
        return Formulation(self, "dual", problem, {"a": a}, constraints, params, form)

    def kernel_diagonal(self) -> Array:
        return self.kernel.diag(self.X)

    _recovery = ("c = sum_n a_n phi(x_n)", "R^2 from the free multipliers", "xi_n = [||phi(x_n) - c||^2 - R^2]_+")

    def kkt_conditions(self, s: KKTState) -> list[Condition]:
        """Multipliers a_n of ||phi(x_n) - c||^2 <= R^2 + xi_n and C - a_n = 1/(nu N) - a_n of xi_n >= 0."""
        source = "Tax-Duin 1999"
        distance = self.kernel_diagonal() - 2.0 * s.g + s.norm2              # ||phi(x_n) - c||^2
        slack = s.R2 + s.xi - distance
        size = self.output_scale
        return self._box_and_sum(s, source, "R^2") + [
            Condition(source, PRIMAL, "R^2 + xi_n - ||phi(x_n) - c||^2 >= 0", np.maximum(0.0, -slack), size),
            Condition(source, PRIMAL, "xi_n >= 0", np.maximum(0.0, -s.xi), size),
            Condition(source, SLACKNESS, "a_n (R^2 + xi_n - ||phi(x_n) - c||^2) = 0", np.abs(s.a * slack),
                      multiplier_scale(s.a, self.zero_box(self.box), size)),
            Condition(source, SLACKNESS, "(1/(nu N) - a_n) xi_n = 0", np.abs((self.box - s.a) * s.xi), self.box * size),
            self._stationarity_w(s, source, "c = sum_n a_n phi(x_n)"),
            # y(x) = R^2 - ||phi(x) - c||^2 = sum_n 2 a_n k(x, x_n) - k(x, x) + b
            self._intercept(s, source, "b = R^2 - a^T K a (y(x) = R^2 - ||phi(x) - c||^2)", s.R2 - float(s.u @ s.Ku)),
        ]

    def _standard_qp(self) -> StandardQP:
        """min a^T K a - diag(K)^T a (Q = 2K), e^T a = 1, 0 <= a <= C."""
        return self._unit_sum_qp(2.0, -self.kernel_diagonal())

    _scalars = ("R2",)
    coef_scale = 2.0            # y(x) = sum_n 2 a_n k(x, x_n) - k(x, x) + b

    def _rho_from_scalars(self, values: Mapping[str, float], aKa: float) -> RhoEstimate:
        # the inverse of _from_rho: R^2 = a^T K a - rho
        return RhoEstimate(aKa - float(values["R2"]))

    def _from_rho(self, rho: RhoEstimate, z: Array, u: Array, Ku: Array) -> dict[str, Any]:
        # free a_n: k_nn - 2 (K a)_n + a^T K a = R^2, and y_n G_n = 2 (K a)_n - k_nn = a^T K a - R^2
        aKa = float(u @ Ku)
        return {"R2": aKa - rho.rho, "b": -rho.rho, "coef_scale": 2.0, "self_coef": -1.0}

    def _slacks(self, u: Array, Ku: Array, fields: dict[str, Any]) -> tuple[Array, None]:
        distance = self.kernel_diagonal() - 2 * Ku + float(u @ Ku)
        return np.maximum(0.0, distance - fields["R2"]), None

    def _primal_value(self, norm2: float, fields: dict[str, Any], slacks: tuple) -> float:
        return fields["R2"] + self.box * float(np.sum(slacks[0]))

    def _dual_value(self, z: Array, u: Array, Ku: Array) -> float:
        return float(self.kernel_diagonal() @ z) - float(u @ Ku)

    def _solution_from_primal(self, f: Formulation, info: dict[str, Any]) -> Solution:
        v = f.variables
        a = self._read_duals(f, "sphere")
        R2 = float(v["R2"].value)
        aKa = float(a @ self.kernel_times(a))
        fields = {"R2": R2, "b": R2 - aKa, "coef_scale": 2.0, "self_coef": -1.0}
        xi = np.asarray(v["xi"].value, dtype=np.float64)
        return self._from_primal_point(a, fields, (xi, None), np.asarray(v["c"].value, dtype=np.float64),
                                       float(f.problem.value), info)
