"""The nu-SVC of Schölkopf et al. (2000), Result 7.7, (7.38)-(7.41).

Primal (Result 7.7), in feature space:

    minimise    1/2 ||w||^2 - nu rho + 1/N sum_n xi_n
    subject to  t_n (w^T phi(x_n) + b) >= rho - xi_n,  xi_n >= 0,  rho >= 0

Dual (7.38)-(7.41):

    maximise    -1/2 sum_nm a_n a_m t_n t_m k(x_n, x_m)   (7.38)
    subject to  0 <= a_n <= 1/N                          (7.39)
                sum_n a_n t_n = 0                          (7.40)
                sum_n a_n >= nu                            (7.41)

With per-sample weights W_n (LIBSVM's, as scikit-learn passes them) the slack
term 1/N sum_n xi_n becomes sum_n omega_n xi_n and the box (7.39) becomes
0 <= a_n <= omega_n, with omega_n = W_n / sum_m W_m (1/N when unweighted);
LIBSVM's box is W_n with sum alpha = nu sum_m W_m, the same problem scaled by
sum_m W_m.

The decision values have margin rho: t_n y_n = rho on the margin (LIBSVM
divides them by rho). The standard-form QP replaces (7.41) by the equality
sum_n a_n = nu, which holds at the solution whenever rho > 0 (Result 7.7).
nu is feasible only up to 2 min(N_+, N_-) / N (weighted: 2 min(W_+, W_-) / W,
the classes' and the total weights), since sum_n a_n t_n = 0 and a_n <= omega_n
cap sum_n a_n there.
"""

from __future__ import annotations

import math

from typing import Any, Callable, Mapping

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._lazy import cvxpy as cp
from ..validation import check_param, check_sample_weight
from ..errors import InfeasibleError
from ..kernels import Kernel, Linear
from ..solvers.standard_qp import RhoEstimate, StandardQP
from ._binary import BinaryMachine
from .machine import DUAL, PRIMAL, SLACKNESS, Condition, Formulation, KKTState, flatten, multiplier_scale, over_box
from .solution import Solution

__all__ = ["NuSVC"]

Array = NDArray[np.float64]


class NuSVC(BinaryMachine):
    """nu-support vector classifier.

    Parameters
    ----------
    X : array (N, D)
    t : array (N,) in {-1, +1}
    kernel : Kernel or str
    nu : float in (0, 1]
        Upper bound on the fraction of margin errors and lower bound on the
        fraction of support vectors; at most 2 min(N_+, N_-)/N.
    sample_weight : array (N,) of positive numbers, optional
        Per-point weights W_n of the slacks (LIBSVM's, as in scikit-learn): the
        box of a_n is omega_n = W_n / sum_m W_m instead of 1/N.
    """

    name = "NuSVC"
    cli_name = "nu-svc"
    libsvm_svm_type = "nu_svc"
    demo_label = "nu-SVC"
    libsvm_twin = "NuSVC"
    _hyper_names = ("nu",)

    def __init__(self, X: ArrayLike, t: ArrayLike, kernel: Kernel | str = Linear(), nu: float = 0.5,
                 psd_tol: float = 1e-8, sample_weight: ArrayLike | None = None) -> None:
        super().__init__(X, t, kernel, psd_tol)
        self.sample_weight = None if sample_weight is None else check_sample_weight(sample_weight, self.N)
        self._set_hyper(nu=nu)

    @property
    def box_n(self) -> Array:
        """The box omega_n of each multiplier: W_n / sum_m W_m (1/N when unweighted)."""
        if self.sample_weight is None:
            return np.full(self.N, 1.0 / self.N)
        return self.sample_weight / float(np.sum(self.sample_weight))

    @property
    def nu_max(self) -> float:
        """Largest feasible nu: 2 min(N_+, N_-) / N, or with weights 2 min(W_+, W_-) / W."""
        omega = self.box_n
        return 2.0 * min(float(np.sum(omega[self.t > 0])), float(np.sum(omega[self.t < 0])))

    def _set_hyper(self, nu: float) -> None:
        nu = float(check_param("nu", nu))
        if nu > self.nu_max + 1e-12:
            raise InfeasibleError(
                f"nu must be at most 2 min(N_+, N_-)/N = {self.nu_max:.6g} for these labels "
                f"(the upper bound of nu-SVC); got {nu!r}"
            )
        self.nu = nu

    def parameter_values(self) -> dict[str, Any]:
        return {"nu": self.nu}

    def _build_primal(self, F: Array) -> Formulation:
        params = self._parameters(("nu",))
        w = cp.Variable(F.shape[1], name="w")
        b = cp.Variable(name="b")
        xi = cp.Variable(self.N, name="xi")
        rho = cp.Variable(name="rho")
        y = F @ w + b                                                      # (7.1)
        objective = cp.Minimize(0.5 * cp.sum_squares(w) - params["nu"] * rho + cp.sum(cp.multiply(self.box_n, xi)))
        constraints = {
            "margin": cp.multiply(self.t, y) >= rho - xi,
            "xi>=0": xi >= 0,
            "rho>=0": rho >= 0,
        }
        problem = cp.Problem(objective, list(constraints.values()))
        variables = {"w": w, "b": b, "xi": xi, "rho": rho}
        return Formulation(self, "primal", problem, variables, constraints, params, "features")

    def _build_dual(self, quad: Callable[[cp.Expression], cp.Expression], form: str) -> Formulation:
        params = self._parameters(("nu",))
        a = cp.Variable(self.N, name="a")
        objective = cp.Maximize(-0.5 * quad(cp.multiply(self.t, a)))      # (7.38)
        constraints = {
            "(7.39)": (a >= 0, a <= self.box_n),                      # (7.39)
            "(7.40)": self.t @ a == 0,                                    # (7.40)
            "(7.41)": cp.sum(a) >= params["nu"],                          # (7.41)
        }
        problem = cp.Problem(objective, flatten(constraints))
        return Formulation(self, "dual", problem, {"a": a}, constraints, params, form)

    _recovery = ("w = sum_n a_n t_n phi(x_n)", "b and rho from the free multipliers (t_n y_n = rho)",
                 "xi_n = [rho - t_n y_n]_+")

    def kkt_conditions(self, s: KKTState) -> list[Condition]:
        """Result 7.7: multipliers a_n of the margin constraints, mu_n = omega_n - a_n of
        xi_n >= 0 and delta = sum_n a_n - nu of rho >= 0."""
        margin = self.t * (s.g + s.b)                                         # t_n y_n
        box_n = self.box_n
        box = float(np.max(box_n))                                            # the box's scale
        mu = box_n - s.a
        delta = float(np.sum(s.a)) - self.nu
        size = self.output_scale
        xi = s.xi
        return [
            Condition("(7.39)", DUAL, "a_n >= 0", np.maximum(0.0, -s.a), box),
            Condition("(7.39)", DUAL, "mu_n = 1/N - a_n >= 0 (W_n / sum W weighted)", over_box(s.a, box_n, box), box),
            Condition("(7.41)", DUAL, "delta = sum_n a_n - nu >= 0", max(0.0, -delta), self.nu),
            Condition("Result 7.7", PRIMAL, "t_n y_n - rho + xi_n >= 0", np.maximum(0.0, s.rho - xi - margin), size),
            Condition("Result 7.7", PRIMAL, "xi_n >= 0", np.maximum(0.0, -xi), size),
            Condition("Result 7.7", PRIMAL, "rho >= 0", max(0.0, -s.rho), size),
            Condition("Result 7.7", SLACKNESS, "a_n (t_n y_n - rho + xi_n) = 0",
                      np.abs(s.a * (margin - s.rho + xi)), multiplier_scale(s.a, self.zero_box(box), size)),
            Condition("Result 7.7", SLACKNESS, "mu_n xi_n = 0", np.abs(mu * xi), box * size),
            Condition("Result 7.7", SLACKNESS, "delta rho = 0", abs(delta * s.rho), self.nu * size),
            self._stationarity_w(s, "Result 7.7", "w = sum_n a_n t_n phi(x_n)"),
            self._balance(s, "(7.40)", box),
        ]

    def _standard_qp(self) -> StandardQP:
        """min 1/2 a^T (t t^T o K) a, t^T a = 0, e^T a = nu, 0 <= a <= omega_n (1/N unweighted)."""
        return StandardQP(
            kernel=self.kernel, X=self.X, index=np.arange(self.N), y=self.t, scale=1.0,
            p=np.zeros(self.N), lower=np.zeros(self.N), upper=self.box_n,
            delta=0.0, nu_sum=self.nu, gram=self.gram,
        )

    @property
    def output_scale(self) -> float:
        """nu times the data's spread in feature space (``kernel_spread``): with sum_n a_n t_n = 0 the
        outputs do not see a shift of the features, and with sum_n a_n = nu (7.41) they, rho and the
        gradient of the dual are nu times that spread's size (the dual is homogeneous in nu below the
        boxes). In the spread alone, at nu = 1e-3 (40 points) the SMO stopped at its start (0 steps, its
        violation below 1e-3 of a unit 1e3 times the outputs) with 2 support vectors for 7, signs of y(x)
        agreeing with LIBSVM's on 27 of 40 points, and its certificate passed, as did twice the optimal
        multipliers at nu = 1e-6."""
        return self.nu * self.kernel_spread

    def solved_output_scale(self, estimate: RhoEstimate) -> float:
        """The smaller of ``output_scale`` and the solution's rho (LIBSVM's r, ``_from_rho``): t_n y(x_n) = rho
        on the margin (Result 7.7),
        so rho is the outputs' size, which no scale of the data alone tracks: with a degree-3 polynomial
        kernel (gamma 1) on 80 standardised breast-cancer points at nu = 0.1, nu times the spread is 4.3e4
        and rho 7.3, and the SMO stopped at a dual objective twice the optimum's, certified (the SMO now
        stops again in rho's unit, ``solve.solve_smo``; the certificate's rows stay in ``output_scale``'s,
        where LIBSVM's and the interior-point solvers' answers are judged)."""
        rho = abs(float(estimate.r))
        return min(self.output_scale, rho) if math.isfinite(rho) and rho > 0.0 else self.output_scale

    @property
    def libsvm_scale(self) -> float:
        # LIBSVM: 0 <= alpha_n <= W_n, sum alpha = nu sum W (W = 1: nu N)
        return float(self.N) if self.sample_weight is None else float(np.sum(self.sample_weight))

    def margin_level(self, solution: Solution) -> float:
        """On the margin t_n y(x_n) = rho (Result 7.7)."""
        return float(solution.rho)

    def libsvm_decision_factor(self, solution: Solution) -> float:
        # LIBSVM divides its coefficients and rho by its r: its decision value is y(x) / rho
        return 1.0 / float(solution.rho)

    def libsvm_params(self) -> dict[str, Any]:
        return {"nu": self.nu}

    def libsvm_no_answer(self) -> str:
        # LIBSVM's Solver_NU returns r = (r1 + r2) / 2, the margin rho, and svm_train divides the
        # coefficients and rho by it; r1 (r2) is a midpoint with no finite end where every alpha of
        # its class is at the upper bound
        return ("LIBSVM divides nu-SVC's coefficients by the margin rho, which is 0 where the classes are not "
                "apart in feature space (all inputs equal, for one), and takes rho as the midpoint of an "
                "interval with no finite end where every multiplier of a class is at its bound (nu at its "
                "largest, 2 min(N_+, N_-)/N)")

    @classmethod
    def from_libsvm(cls, X: ArrayLike, t: ArrayLike | None, kernel: Kernel,
                    params: Mapping[str, Any], sample_weight: ArrayLike | None) -> "NuSVC":
        return cls(X, t, kernel, nu=params["nu"], sample_weight=sample_weight)

    def libsvm_multipliers(self, coef: Array, intercept: float) -> tuple[Array, RhoEstimate]:
        # LIBSVM solves with 0 <= alpha <= 1, sum alpha = nu N, then divides by its r; the notes'
        # a sums to nu, so a = |coef| nu / sum |coef|, rho = nu / sum |coef|, b = intercept * rho
        # (coef t: LIBSVM's y_n alpha_n has the sign of t_n in a valid answer; a wrong sign stays a_n < 0)
        rho = self.nu / float(np.sum(np.abs(coef)))
        return coef * self.t * rho, RhoEstimate(-intercept * rho, rho)

    _scalars = ("b", "rho")

    def _rho_from_scalars(self, values: Mapping[str, float], aKa: float) -> RhoEstimate:
        # the inverse of _from_rho: LIBSVM's rho = -b, its r = the notes' margin rho
        return RhoEstimate(-float(values["b"]), float(values["rho"]))

    def _from_rho(self, rho: RhoEstimate, z: Array, u: Array, Ku: Array) -> dict[str, Any]:
        # On the margin t_n y_n = rho: averaging over free a_n of each class gives
        # r+ = rho - b and r- = rho + b, i.e. LIBSVM's r and -rho.
        # However small rho is, this is the optimum: only nu > nu_max (Chang and Lin 2001, refused
        # by _set_hyper) proves that there is none. A rho of 0 (w = 0: the classes' reduced hulls
        # meet) is a degenerate optimum, returned as it is (its rho and coef show it).
        return {"b": -rho.rho, "rho": rho.r}

    def _slacks(self, u: Array, Ku: Array, fields: dict[str, Any]) -> tuple[Array, None]:
        return np.maximum(0.0, fields["rho"] - self.margins(Ku, fields["b"])), None

    def _primal_value(self, norm2: float, fields: dict[str, Any], slacks: tuple) -> float:
        return 0.5 * norm2 - self.nu * fields["rho"] + float(self.box_n @ slacks[0])

    def _dual_value(self, z: Array, u: Array, Ku: Array) -> float:
        return -0.5 * float(u @ Ku)                                         # (7.38)

    def _solution_from_primal(self, f: Formulation, info: dict[str, Any]) -> Solution:
        common = self._primal_common(f)
        v = f.variables
        fields = {"b": common["b"], "rho": float(v["rho"].value)}
        xi = np.asarray(v["xi"].value, dtype=np.float64)
        return self._from_primal_point(self._read_duals(f, "margin"), fields, (xi, None), common["w"],
                                       float(f.problem.value), info)
