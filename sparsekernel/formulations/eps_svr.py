"""Epsilon-insensitive support vector regression, (7.51)-(7.69).

Primal (7.53)-(7.55):

    minimise    C sum_n (xi_n + xi_hat_n) + 1/2 ||w||^2            (7.55)
    subject to  t_n <= y(x_n) + epsilon + xi_n                     (7.53)
                t_n >= y(x_n) - epsilon - xi_hat_n                 (7.54)
                xi_n >= 0, xi_hat_n >= 0

Dual (7.61)-(7.63), (7.58):

    maximise    -1/2 sum_nm (a_n - a_hat_n)(a_m - a_hat_m) k_nm
                - epsilon sum_n (a_n + a_hat_n) + sum_n (a_n - a_hat_n) t_n    (7.61)
    subject to  0 <= a_n <= C                                      (7.62)
                0 <= a_hat_n <= C                                  (7.63)
                sum_n (a_n - a_hat_n) = 0                           (7.58)

Predictions (7.64); b by (7.69), averaged over the free multipliers.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._lazy import cvxpy as cp
from ..validation import check_param, check_sample_weight
from ..kernels import Kernel, Linear
from ..solvers.standard_qp import RhoEstimate, StandardQP
from ._regression import RegressionMachine
from .machine import Condition, Formulation, KKTState, flatten
from .solution import Solution

__all__ = ["EpsilonSVR"]

Array = NDArray[np.float64]


class EpsilonSVR(RegressionMachine):
    """epsilon-SVR.

    Parameters
    ----------
    X : array (N, D)
    t : array (N,) real targets
    kernel : Kernel or str
    C : float > 0
    epsilon : float >= 0
        Half-width of the insensitive tube (7.51).
    sample_weight : array (N,) of positive numbers, optional
        Per-point box C_n = C * sample weight for both a_n and a_hat_n (as in
        scikit-learn); it weights each point's slacks in (7.55).
    """

    name = "EpsilonSVR"
    cli_name = "eps-svr"
    libsvm_svm_type = "epsilon_svr"
    demo_label = "epsilon-SVR"
    libsvm_twin = "SVR"
    _hyper_names = ("C", "epsilon")

    def __init__(self, X: ArrayLike, t: ArrayLike, kernel: Kernel | str = Linear(), C: float = 1.0,
                 epsilon: float = 0.1, psd_tol: float = 1e-8, sample_weight: ArrayLike | None = None) -> None:
        super().__init__(X, t, kernel, psd_tol)
        self.sample_weight = None if sample_weight is None else check_sample_weight(sample_weight, self.N)
        self._set_hyper(C=C, epsilon=epsilon)

    def _set_hyper(self, C: float, epsilon: float) -> None:
        self.C = float(check_param("C", C))
        self.epsilon = float(check_param("epsilon", epsilon))

    @property
    def C_n(self) -> Array:
        """The box of a_n and a_hat_n: C, or C times the sample weight."""
        return self.C * (np.ones(self.N) if self.sample_weight is None else self.sample_weight)

    def _box_name(self) -> str:
        return "C" if self.sample_weight is None else "C_n"

    def parameter_values(self) -> dict[str, Any]:
        return {"C": self.C, "C_n": self.C_n, "epsilon": self.epsilon}

    def _build_primal(self, F: Array) -> Formulation:
        params = self._parameters((self._box_name(), "epsilon"))
        C = params[self._box_name()]
        w = cp.Variable(F.shape[1], name="w")
        b = cp.Variable(name="b")
        xi = cp.Variable(self.N, name="xi")
        xi_hat = cp.Variable(self.N, name="xi_hat")
        y = F @ w + b                                                      # (7.1)
        slack_cost = C * cp.sum(xi + xi_hat) if C.ndim == 0 else cp.sum(cp.multiply(C, xi + xi_hat))
        objective = cp.Minimize(slack_cost + 0.5 * cp.sum_squares(w))      # (7.55)
        constraints = self._tube_constraints(y, params["epsilon"], xi, xi_hat)
        problem = cp.Problem(objective, list(constraints.values()))
        variables = {"w": w, "b": b, "xi": xi, "xi_hat": xi_hat}
        return Formulation(self, "primal", problem, variables, constraints, params, "features")

    def _build_dual(self, quad: Callable[[cp.Expression], cp.Expression], form: str) -> Formulation:
        params = self._parameters((self._box_name(), "epsilon"))
        C, eps = params[self._box_name()], params["epsilon"]
        a = cp.Variable(self.N, name="a")
        a_hat = cp.Variable(self.N, name="a_hat")
        objective = cp.Maximize(                                            # (7.61)
            -0.5 * quad(a - a_hat) - eps * cp.sum(a + a_hat) + (a - a_hat) @ self.t
        )
        constraints = {
            "(7.62)": (a >= 0, a <= C),                                    # (7.62)
            "(7.63)": (a_hat >= 0, a_hat <= C),                            # (7.63)
            "(7.58)": cp.sum(a - a_hat) == 0,                              # (7.58)
        }
        problem = cp.Problem(objective, flatten(constraints))
        return Formulation(self, "dual", problem, {"a": a, "a_hat": a_hat}, constraints, params, form)

    _recovery = ("w = sum_n (a_n - a_hat_n) phi(x_n) (7.57)", "b by (7.69)",
                 "xi_n, xi_hat_n: the smallest values allowed by (7.53), (7.54)")

    def kkt_conditions(self, s: KKTState) -> list[Condition]:
        """Result 7.9: (7.57)-(7.60) with the box (7.62)-(7.63), (7.53)-(7.54), (7.65)-(7.68)."""
        return (self._tube_conditions(s, self.C_n, self.epsilon, ("(7.62)", "(7.63)"), "Result 7.9")
                + [self._sum_condition(s, "(7.58)", float(np.max(self.C_n)))])

    def _standard_qp(self) -> StandardQP:
        """z = (a, a_hat): min 1/2 z^T Q z + (eps - t, eps + t)^T z, y^T z = 0, 0 <= z <= C."""
        index, y = self._doubled()
        p = np.concatenate([self.epsilon - self.t, self.epsilon + self.t])
        return StandardQP(
            kernel=self.kernel, X=self.X, index=index, y=y, scale=1.0, p=p,
            lower=np.zeros(2 * self.N), upper=np.concatenate([self.C_n, self.C_n]), delta=0.0,
            nu_sum=None, gram=self.gram,
        )

    def libsvm_params(self) -> dict[str, Any]:
        return {"C": self.C, "epsilon": self.epsilon}

    @classmethod
    def from_libsvm(cls, X: ArrayLike, t: ArrayLike | None, kernel: Kernel,
                    params: Mapping[str, Any], sample_weight: ArrayLike | None) -> "EpsilonSVR":
        return cls(X, t, kernel, C=params["C"], epsilon=params["epsilon"], sample_weight=sample_weight)

    def libsvm_multipliers(self, coef: Array, intercept: float) -> tuple[Array, RhoEstimate]:
        return self._split_coef(coef), RhoEstimate(-intercept)

    def _from_rho(self, rho: RhoEstimate, z: Array, u: Array, Ku: Array) -> dict[str, Any]:
        # (7.69): b = t_n - epsilon - sum_m (a_m - a_hat_m) k_nm for free a_n,
        # t_n + epsilon - ... for free a_hat_n; their average is -rho
        return {"b": -rho.rho}

    def _slacks(self, u: Array, Ku: Array, fields: dict[str, Any]) -> tuple[Array, Array]:
        return self.tube_slacks(Ku, fields["b"], self.epsilon)

    def _primal_value(self, norm2: float, fields: dict[str, Any], slacks: tuple) -> float:
        return 0.5 * norm2 + float(self.C_n @ (slacks[0] + slacks[1]))    # (7.55)

    def _dual_value(self, z: Array, u: Array, Ku: Array) -> float:
        return -0.5 * float(u @ Ku) - self.epsilon * float(np.sum(z)) + float(u @ self.t)   # (7.61)

    def _solution_from_primal(self, f: Formulation, info: dict[str, Any]) -> Solution:
        z, fields, slacks, w = self._read_tube(f)
        return self._from_primal_point(z, fields, slacks, w, float(f.problem.value), info)
