"""nu-support vector regression, Result 7.10, (7.70)-(7.74).

Primal (Result 7.10):

    minimise    1/2 ||w||^2 + C (nu epsilon + 1/N sum_n (xi_n + xi_hat_n))
    over        w, b, epsilon >= 0, xi >= 0, xi_hat >= 0
    subject to  (7.53), (7.54)

Dual (7.70)-(7.74):

    maximise    -1/2 sum_nm (a_n - a_hat_n)(a_m - a_hat_m) k_nm + sum_n (a_n - a_hat_n) t_n  (7.70)
    subject to  0 <= a_n <= C/N                   (7.71)
                0 <= a_hat_n <= C/N               (7.72)
                sum_n (a_n - a_hat_n) = 0          (7.73)
                sum_n (a_n + a_hat_n) <= nu C      (7.74)

With per-sample weights W_n (LIBSVM's, as scikit-learn passes them) each
point's term is weighted: C/N sum_n W_n (nu epsilon + xi_n + xi_hat_n), so the
box (7.71)-(7.72) becomes C W_n / N and the bound (7.74) nu C mean(W).

The tube half-width epsilon is found, not given. LIBSVM's nu-SVR uses
C_LIBSVM = C/N. The standard-form QP (the SMO's and the direct path's) makes
(7.74) an equality, which holds at the solution whenever epsilon > 0; where
its multiplier comes out negative (epsilon < 0, for nu near 1), (7.74) is
slack at the notes' optimum, which has epsilon = 0: that is the epsilon-SVR
with epsilon = 0 and box C/N, and ``solve`` solves it by the same method.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._lazy import cvxpy as cp
from ..errors import ConvergenceWarning, collected, warn
from ..validation import check_param, check_sample_weight
from ..kernels import Kernel, Linear
from ..solvers.standard_qp import RhoEstimate, StandardQP, calculate_rho
from ._regression import RegressionMachine
from .eps_svr import EpsilonSVR
from .machine import BOUND_TOL, DUAL, PRIMAL, SLACKNESS, Condition, Formulation, KKTState, bound_tol_of, flatten
from .solution import Solution

__all__ = ["NuSVR"]

Array = NDArray[np.float64]


class NuSVR(RegressionMachine):
    """nu-SVR.

    Parameters
    ----------
    X : array (N, D)
    t : array (N,)
    kernel : Kernel or str
    C : float > 0
    nu : float in (0, 1]
        Upper bound on the fraction of points outside the tube, lower bound on
        the fraction of support vectors.
    sample_weight : array (N,) of positive numbers, optional
        Per-point weights W_n (LIBSVM's, as in scikit-learn): box C W_n / N and
        (7.74) bounded by nu C mean(W).
    """

    name = "NuSVR"
    cli_name = "nu-svr"
    libsvm_svm_type = "nu_svr"
    demo_label = "nu-SVR"
    libsvm_twin = "NuSVR"
    _hyper_names = ("C", "nu")

    def __init__(self, X: ArrayLike, t: ArrayLike, kernel: Kernel | str = Linear(), C: float = 1.0,
                 nu: float = 0.5, psd_tol: float = 1e-8, sample_weight: ArrayLike | None = None) -> None:
        super().__init__(X, t, kernel, psd_tol)
        self.sample_weight = None if sample_weight is None else check_sample_weight(sample_weight, self.N)
        self._set_hyper(C=C, nu=nu)

    @property
    def _weights(self) -> Array:
        """W_n / N: each point's factor on C (1/N when unweighted)."""
        return (np.ones(self.N) if self.sample_weight is None else self.sample_weight) / self.N

    @property
    def _mean_weight(self) -> float:
        return 1.0 if self.sample_weight is None else float(np.mean(self.sample_weight))

    def _set_hyper(self, C: float, nu: float) -> None:
        self.C = float(check_param("C", C))
        self.nu = float(check_param("nu", nu))

    def parameter_values(self) -> dict[str, Any]:
        return {"C": self.C, "nu": self.nu, "nu*C": self.nu * self.C}

    def _build_primal(self, F: Array) -> Formulation:
        params = self._parameters(("C", "nu", "nu*C"))          # nu: the hyperparameter, set there
        w = cp.Variable(F.shape[1], name="w")
        b = cp.Variable(name="b")
        eps = cp.Variable(name="epsilon")
        xi = cp.Variable(self.N, name="xi")
        xi_hat = cp.Variable(self.N, name="xi_hat")
        y = F @ w + b                                                      # (7.1)
        objective = cp.Minimize(0.5 * cp.sum_squares(w) + self._mean_weight * params["nu*C"] * eps
                                + params["C"] * cp.sum(cp.multiply(self._weights, xi + xi_hat)))
        constraints = self._tube_constraints(y, eps, xi, xi_hat)
        constraints["epsilon>=0"] = eps >= 0
        problem = cp.Problem(objective, list(constraints.values()))
        variables = {"w": w, "b": b, "epsilon": eps, "xi": xi, "xi_hat": xi_hat}
        return Formulation(self, "primal", problem, variables, constraints, params, "features")

    def _build_dual(self, quad: Callable[[cp.Expression], cp.Expression], form: str) -> Formulation:
        params = self._parameters(("C", "nu", "nu*C"))          # nu: the hyperparameter, set there
        C = params["C"]
        a = cp.Variable(self.N, name="a")
        a_hat = cp.Variable(self.N, name="a_hat")
        objective = cp.Maximize(-0.5 * quad(a - a_hat) + (a - a_hat) @ self.t)   # (7.70)
        constraints = {
            "(7.71)": (a >= 0, a <= C * self._weights),                   # (7.71)
            "(7.72)": (a_hat >= 0, a_hat <= C * self._weights),           # (7.72)
            "(7.73)": cp.sum(a - a_hat) == 0,                             # (7.73)
            "(7.74)": cp.sum(a + a_hat) <= self._mean_weight * params["nu*C"],  # (7.74)
        }
        problem = cp.Problem(objective, flatten(constraints))
        return Formulation(self, "dual", problem, {"a": a, "a_hat": a_hat}, constraints, params, form)

    _recovery = ("w = sum_n (a_n - a_hat_n) phi(x_n) (7.57)", "b and epsilon from the free multipliers",
                 "xi_n, xi_hat_n: the smallest values allowed by (7.53), (7.54)")

    def kkt_conditions(self, s: KKTState) -> list[Condition]:
        """Result 7.10: the epsilon-SVR conditions with box C/N, epsilon >= 0 and its
        multiplier delta = nu C - sum_n (a_n + a_hat_n) >= 0 (7.74)."""
        box = self.C * self._weights
        delta = self._mean_weight * self.nu * self.C - float(np.sum(s.z))
        size = self.output_scale
        return self._tube_conditions(s, box, s.epsilon, ("(7.71)", "(7.72)"), "Result 7.10", "C/N") + [
            self._sum_condition(s, "(7.73)", float(np.max(box))),
            Condition("(7.74)", DUAL, "delta = nu C - sum_n (a_n + a_hat_n) >= 0", max(0.0, -delta), self.nu * self.C),
            Condition("Result 7.10", PRIMAL, "epsilon >= 0", max(0.0, -s.epsilon), size),
            Condition("Result 7.10", SLACKNESS, "delta epsilon = 0", abs(delta * s.epsilon), self.nu * self.C * size),
        ]

    def _standard_qp(self) -> StandardQP:
        """z = (a, a_hat): min 1/2 z^T Q z + (-t, t)^T z, y^T z = 0, e^T z = nu C, 0 <= z <= C/N."""
        index, y = self._doubled()
        return StandardQP(
            kernel=self.kernel, X=self.X, index=index, y=y, scale=1.0,
            p=np.concatenate([-self.t, self.t]), lower=np.zeros(2 * self.N),
            upper=np.tile(self.C * self._weights, 2), delta=0.0, nu_sum=self._mean_weight * self.nu * self.C,
            gram=self.gram,
        )

    #: an epsilon below -epsilon_tol * max|t| from the standard form means (7.74) is slack
    epsilon_tol = 1e-9

    def _standard_form_solution(self, sol: Solution, method: str, opts: dict[str, Any]) -> Solution:
        """epsilon >= 0 on the standard-form paths: where the equality form gave epsilon < 0, or
        multipliers whose least representative (a_n a_hat_n = 0) leaves (7.74) slack, the epsilon-SVR
        with epsilon = 0 and box C/N, solved by the same method.

        (7.74) slack is delta > 0, hence epsilon = 0 (delta epsilon = 0, Result 7.10): the equality form
        then meets its sum with pairs a_n, a_hat_n > 0, a face of optima on which Clarabel stopped
        'AlmostSolved' (40 points, C = 400, nu = 1: b = 0.171071 against 0.168410, dual objective 3e-6
        short), where the epsilon-SVR at epsilon = 0 has none."""
        if method == "smo" and sol.status == "max_iter":      # (the solver's status, before its certificate)
            # stopped at its cap, not at the equality form's optimum: its epsilon and sum say nothing of (7.74) at
            # the optimum (LIBSVM's start puts a_n = a_hat_n on nu N / 2 points, which the least representative
            # drops), and the cap is spent; the answer stands as stopped, inaccurate, as LIBSVM's
            return sol
        u = sol.a - sol.a_hat
        least = np.concatenate([np.maximum(u, 0.0), np.maximum(-u, 0.0)])      # the same u, a_n a_hat_n = 0
        negative = sol.epsilon < -self.epsilon_tol * float(np.max(np.abs(self.t)))
        if not negative and not self.leaves_7_74_slack(least):
            return sol
        capped = method == "smo" and opts.get("max_iter") is not None
        if capped:
            # max_iter caps the steps of the whole solve: the twin takes what the first solve left of it
            opts = dict(opts, max_iter=int(opts["max_iter"]) - int(sol.iterations))
            if opts["max_iter"] < 1:
                return sol.evolve(status="max_iter")       # the cap spent: the equality form's optimum, as stopped
        twin = EpsilonSVR(self.X, self.t, self.kernel, C=self.C / self.N, epsilon=0.0, psd_tol=self.psd_tol,
                          sample_weight=self.sample_weight)
        twin._gram_cache = self._gram_cache
        with collected(ConvergenceWarning) as caught:
            flat = twin.solve(method, **opts)
        if capped and flat.solver_status == "max_iter":
            # the twin stopped at the cap, part of the way from its cold start: the equality form's optimum (which
            # its certificate judges) is nearer the answer than that; the steps are both solves'
            return sol.evolve(status="max_iter", iterations=sol.iterations + flat.iterations)
        for w in caught:
            warn(str(w.message), w.category, stacklevel=2)
        info = dict(solver=flat.solver, method=flat.method, status=flat.solver_status,
                    iterations=sol.iterations + flat.iterations, solve_time=sol.solve_time + flat.solve_time,
                    compile_time=sol.compile_time + flat.compile_time)
        # with epsilon = 0 only u = a - a_hat enters the dual: take the representative with a_n a_hat_n = 0,
        # the one of least sum (a + a_hat), which (7.74) then bounds
        u = flat.a - flat.a_hat
        z = np.concatenate([np.maximum(u, 0.0), np.maximum(-u, 0.0)])
        out = self.solution_from_standard(z, info, rho=RhoEstimate(-flat.b, 0.0), trace=flat.trace,
                                          bound_tol=bound_tol_of(flat))      # the twin's own support rule
        why = (f"the equality form gave epsilon = {sol.epsilon:.3g} < 0" if negative else
               f"the equality form's multipliers give sum_n |a_n - a_hat_n| = {float(np.sum(least)):.6g} < nu C")
        note = f"(7.74) is slack at nu = {self.nu:g} ({why}): solved as the epsilon-SVR with epsilon = 0 and box C/N"
        return dataclasses.replace(out, notes=out.notes + (note,))

    def libsvm_params(self) -> dict[str, Any]:
        return {"C": self.C / self.N, "nu": self.nu}          # LIBSVM's nu-SVR C is the notes' C / N

    @classmethod
    def from_libsvm(cls, X: ArrayLike, t: ArrayLike | None, kernel: Kernel,
                    params: Mapping[str, Any], sample_weight: ArrayLike | None) -> "NuSVR":
        N = X.shape[0] if hasattr(X, "shape") else len(X)
        return cls(X, t, kernel, C=params["C"] * N, nu=params["nu"],         # LIBSVM's C is the notes' C / N
                   sample_weight=sample_weight)

    def libsvm_multipliers(self, coef: Array, intercept: float) -> tuple[Array, RhoEstimate]:
        # epsilon, which LIBSVM does not keep, is recovered from the free multipliers given LIBSVM's rho
        z = self._split_coef(coef)
        return z, RhoEstimate(-intercept, self.r_given_rho(z, -intercept))

    _scalars = ("b", "epsilon")

    def leaves_7_74_slack(self, z: Array) -> bool:
        """Whether the multipliers z = (a, a_hat) leave (7.74) slack: delta = nu C mean(W) - sum_n (a_n +
        a_hat_n) above ``BOUND_TOL`` of nu C mean(W) (a solver's rounding of an active bound is far below).
        Complementary slackness, delta epsilon = 0 (Result 7.10), then fixes epsilon = 0."""
        bound = self._mean_weight * self.nu * self.C
        return bound - float(np.sum(z)) > BOUND_TOL * bound

    def recover_rho(self, z: Array, Ku: Array, bound_tol: float = BOUND_TOL,
                    qp: StandardQP | None = None) -> RhoEstimate:
        """LIBSVM's rho and r from z. Where z leaves (7.74) slack, epsilon = -r = 0 and b = -rho is the
        epsilon-SVR's with epsilon = 0 (free a_n: t_n - sum_m u_m k_nm = b, free a_hat_n alike; else the
        midpoint of b's interval): the nu form's rule, for an equality (7.74), took each class's midpoint
        where neither had a free multiplier, an epsilon > 0 that breaks delta epsilon = 0 at an optimum."""
        if not self.leaves_7_74_slack(z):
            return super().recover_rho(z, Ku, bound_tol, qp)
        qp = qp or self.standard_qp()                 # its p = (-t, t) is the epsilon-SVR's at epsilon = 0
        return dataclasses.replace(calculate_rho(*self._rho_terms(z, Ku, bound_tol, qp)), r=0.0)

    def r_given_rho(self, z: Array, rho: float, bound_tol: float = BOUND_TOL, Ku: Array | None = None) -> float:
        """r = -epsilon given LIBSVM's rho: 0 where z leaves (7.74) slack (``recover_rho``), else the nu form's."""
        return 0.0 if self.leaves_7_74_slack(z) else super().r_given_rho(z, rho, bound_tol, Ku)

    def _rho_from_scalars(self, values: Mapping[str, float], aKa: float) -> RhoEstimate:
        # the inverse of _from_rho: rho = -b, r = -epsilon
        return RhoEstimate(-float(values["b"]), -float(values["epsilon"]))

    def _from_rho(self, rho: RhoEstimate, z: Array, u: Array, Ku: Array) -> dict[str, Any]:
        # free a_n: t_n - sum_m u_m k_nm = b + epsilon; free a_hat_n: = b - epsilon.
        # LIBSVM's r1 = -(b + epsilon), r2 = b - epsilon, so b = -rho and epsilon = -r.
        return {"b": -rho.rho, "epsilon": -rho.r}

    def _slacks(self, u: Array, Ku: Array, fields: dict[str, Any]) -> tuple[Array, Array]:
        return self.tube_slacks(Ku, fields["b"], fields["epsilon"])

    def _primal_value(self, norm2: float, fields: dict[str, Any], slacks: tuple) -> float:
        mean_slack = float(self._weights @ (slacks[0] + slacks[1]))
        return 0.5 * norm2 + self.C * (self._mean_weight * self.nu * fields["epsilon"] + mean_slack)

    def _dual_value(self, z: Array, u: Array, Ku: Array) -> float:
        return -0.5 * float(u @ Ku) + float(u @ self.t)                    # (7.70)

    def _solution_from_primal(self, f: Formulation, info: dict[str, Any]) -> Solution:
        z, fields, slacks, w = self._read_tube(f)
        fields["epsilon"] = float(f.variables["epsilon"].value)
        return self._from_primal_point(z, fields, slacks, w, float(f.problem.value), info)
