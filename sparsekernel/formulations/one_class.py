"""The one-class SVM of Schölkopf et al. (2001): separate the data from the origin.

Primal, in feature space:

    minimise    1/2 ||w||^2 + 1/(nu N) sum_n xi_n - rho
    subject to  w^T phi(x_n) >= rho - xi_n,  xi_n >= 0

Dual (the Lagrange dual; LIBSVM writes it as min 1/2 a^T K a):

    maximise    -1/2 sum_nm a_n a_m k(x_n, x_m)
    subject to  0 <= a_n <= 1/(nu N),  sum_n a_n = 1

With per-sample weights W_n (LIBSVM's, as scikit-learn passes them) the slack
term is sum_n W_n xi_n / (nu sum_m W_m) and the box 0 <= a_n <= W_n / (nu sum_m W_m);
LIBSVM's box is W_n with sum alpha = nu sum_m W_m, so its decision values are
ours times nu sum_m W_m.

Decision y(x) = sum_n a_n k(x, x_n) - rho, positive for inliers. rho is the
average of sum_m a_m k(x_n, x_m) over the free multipliers. LIBSVM's
multipliers sum to nu N, so its decision values are ours times nu N.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._lazy import cvxpy as cp
from ..kernels import RBF, Kernel
from ..validation import check_sample_weight
from ..solvers.standard_qp import RhoEstimate, StandardQP
from ._novelty import NoveltyMachine
from .machine import PRIMAL, SLACKNESS, Condition, Formulation, KKTState, flatten, multiplier_scale
from .solution import Solution

__all__ = ["OneClassSVM"]

Array = NDArray[np.float64]


class OneClassSVM(NoveltyMachine):
    """One-class SVM.

    Parameters
    ----------
    X : array (N, D)
    kernel : Kernel or str
    nu : float in (0, 1]
        Upper bound on the fraction of outliers, lower bound on the fraction
        of support vectors.
    sample_weight : array (N,) of positive numbers, optional
        Per-point weights W_n (LIBSVM's, as in scikit-learn): the box of a_n is
        W_n / (nu sum_m W_m) instead of 1/(nu N).
    """

    name = "OneClassSVM"
    cli_name = "one-class"
    libsvm_svm_type = "one_class"
    demo_label = "one-class SVM"
    libsvm_twin = "OneClassSVM"

    def __init__(self, X: ArrayLike, kernel: Kernel | str = RBF(1.0), nu: float = 0.5,
                 psd_tol: float = 1e-8, sample_weight: ArrayLike | None = None) -> None:
        super().__init__(X, None, kernel, psd_tol)
        self.sample_weight = None if sample_weight is None else check_sample_weight(sample_weight, self.N)
        self._set_hyper(nu=nu)

    def _build_primal(self, F: Array) -> Formulation:
        params = self._parameters(("nu", "1/(nu N)"))          # nu: the hyperparameter, set there
        w = cp.Variable(F.shape[1], name="w")
        rho = cp.Variable(name="rho")
        xi = cp.Variable(self.N, name="xi")
        slack = cp.sum(xi) if self.sample_weight is None else cp.sum(cp.multiply(self.relative_weights, xi))
        objective = cp.Minimize(0.5 * cp.sum_squares(w) + params["1/(nu N)"] * slack - rho)
        constraints = {"margin": F @ w >= rho - xi, "xi>=0": xi >= 0}
        problem = cp.Problem(objective, list(constraints.values()))
        return Formulation(self, "primal", problem, {"w": w, "rho": rho, "xi": xi}, constraints, params, "features")

    def _build_dual(self, quad: Callable[[cp.Expression], cp.Expression], form: str) -> Formulation:
        params = self._parameters(("nu", "1/(nu N)"))          # nu: the hyperparameter, set there
        a = cp.Variable(self.N, name="a")
        objective = cp.Maximize(-0.5 * quad(a))
        box = params["1/(nu N)"] if self.sample_weight is None else params["1/(nu N)"] * self.relative_weights
        constraints = {"box": (a >= 0, a <= box), "sum": cp.sum(a) == 1}
        problem = cp.Problem(objective, flatten(constraints))
        return Formulation(self, "dual", problem, {"a": a}, constraints, params, form)

    _recovery = ("w = sum_n a_n phi(x_n)", "rho from the free multipliers", "xi_n = [rho - w^T phi(x_n)]_+")

    def kkt_conditions(self, s: KKTState) -> list[Condition]:
        """Multipliers a_n of w^T phi(x_n) >= rho - xi_n and 1/(nu N) - a_n of xi_n >= 0."""
        source = "Scholkopf 2001"
        size = self.output_scale
        slack = s.g - s.rho + s.xi                                            # w^T phi_n - rho + xi_n
        box_n, box = self.box_n, float(np.max(self.box_n))
        return self._box_and_sum(s, source, "rho") + [
            Condition(source, PRIMAL, "w^T phi(x_n) - rho + xi_n >= 0", np.maximum(0.0, -slack), size),
            Condition(source, PRIMAL, "xi_n >= 0", np.maximum(0.0, -s.xi), size),
            Condition(source, SLACKNESS, "a_n (w^T phi(x_n) - rho + xi_n) = 0", np.abs(s.a * slack),
                      multiplier_scale(s.a, self.zero_box(box), size)),
            Condition(source, SLACKNESS, "(1/(nu N) - a_n) xi_n = 0", np.abs((box_n - s.a) * s.xi), box * size),
            self._stationarity_w(s, source, "w = sum_n a_n phi(x_n)"),
            self._intercept(s, source, "b = -rho (y(x) = sum_n a_n k(x, x_n) - rho)", -s.rho),
        ]

    @property
    def output_scale(self) -> float:
        """mean_nm k(x_n, x_m) (``kernel_mean``): ||w||^2 at a_n = 1/N, which is feasible, so the optimum's
        ||w||^2 is at most that, and rho (>= ||w||^2, the outputs of the free points) is of its size; the
        machine depends on the origin of the feature space, so the spread is not its size. The diagonal's
        max, the bound on |w^T phi(x_n)| over the simplex, was the scale: a degree-3 polynomial kernel on
        80 standardised points (max k(x, x) 2.5e4, rho 1.6) let the SMO stop at a dual objective 150% off,
        certified.

        The spread (``kernel_spread``) where it is the smaller: with sum_n a_n = 1 a constant c added to the
        kernel moves every output and rho by c and leaves the dual's solution and the decision values
        y(x) = w^T phi(x) - rho as they were, so a kernel that is nearly constant over the data (an RBF of
        small gamma) has outputs of size about 1 whose differences, the decision values, are of the spread's
        size: RBF gamma 1e-4 on 50 normal points in 3-D, nu = 0.2 (mean k 0.9994, spread 6e-4), the SMO
        stopped in that unit with decision values 16% of their largest off the optimum's, certified (LIBSVM's
        default 24%); now 0.01%. Not where the kernel's mean vanishes (``kernel_mean`` fell back to the
        diagonal: a linear kernel on centred data), whose optimum is w = 0 (``solved_output_scale``)."""
        mean = self.kernel_mean
        if mean != self._kernel_means[1]:
            return mean
        return min(mean, self.kernel_spread)

    def solved_output_scale(self, estimate: RhoEstimate) -> float:
        """The smaller of ``output_scale`` and the solution's rho: w^T phi(x_n) = rho on the hyperplane, and
        rho = ||w||^2 + sum_n box_n xi_n at the optimum, so rho is the outputs' size, which the kernel's mean
        (||w||^2 at the uniform a, an upper bound) need not track: a degree-2 polynomial kernel (gamma 1) on
        40 normal points in 3-D at nu = 0.001 has mean k 1.55 and rho 0.0433, and the SMO stopped after 5
        steps at a dual objective 9% below the optimum's (-0.02365 for -0.02166, rho 0.0415, 4 support vectors
        for 5), certified (the SMO now stops again in rho's unit, ``solve.solve_smo``, as nu-SVC's; the
        certificate's rows stay in ``output_scale``'s). ``output_scale`` where the kernel's mean vanishes
        (``kernel_mean`` fell back to the diagonal: a linear kernel on centred data): the uniform a, which is
        feasible, has w = 0 there, so the optimum is w = 0, rho = 0, whose rho no finer tol resolves (on
        standardised breast cancer at nu = 0.5 the rounds took 28,000 steps for LIBSVM's 420)."""
        rho = float(estimate.rho)
        if self.kernel_mean != self._kernel_means[1] or not (np.isfinite(rho) and rho > 0.0):
            return self.output_scale
        return min(self.output_scale, rho)

    @property
    def libsvm_scale(self) -> float:
        # LIBSVM: 0 <= alpha_n <= W_n, sum alpha = nu sum W (W = 1: nu N)
        return self.nu * (self.N if self.sample_weight is None else float(np.sum(self.sample_weight)))

    def _standard_qp(self) -> StandardQP:
        """min 1/2 a^T K a, e^T a = 1, 0 <= a <= 1/(nu N)."""
        return self._unit_sum_qp(1.0, np.zeros(self.N))

    def libsvm_decision_factor(self, solution: Solution) -> float:
        # LIBSVM's alpha sum to nu N (nu sum W): its decision values are ours times that
        return self.libsvm_scale

    def libsvm_params(self) -> dict[str, Any]:
        return {"nu": self.nu}

    def libsvm_no_answer(self) -> str:
        if self.nu < 1.0:
            return ""
        # LIBSVM's calculate_rho: no free alpha, so rho = (ub + lb) / 2, and no alpha at its lower bound
        # leaves ub = +inf
        return ("at nu = 1 every multiplier is at its bound 1/(nu N), and LIBSVM takes rho as the midpoint "
                "of the interval its bounded multipliers allow, which has no upper end, so its rho is infinite")

    @classmethod
    def from_libsvm(cls, X: ArrayLike, t: ArrayLike | None, kernel: Kernel,
                    params: Mapping[str, Any], sample_weight: ArrayLike | None) -> "OneClassSVM":
        return cls(X, kernel, nu=params["nu"], sample_weight=sample_weight)

    def libsvm_multipliers(self, coef: Array, intercept: float) -> tuple[Array, RhoEstimate]:
        # LIBSVM's alpha sums to nu N (nu sum W): a = alpha / (nu N), b = intercept / (nu N) = -rho
        scale = 1.0 / self.libsvm_scale
        return coef * scale, RhoEstimate(-intercept * scale)

    _scalars = ("rho",)

    def _rho_from_scalars(self, values: Mapping[str, float], aKa: float) -> RhoEstimate:
        # y(x) = sum_n a_n k(x, x_n) - rho: LIBSVM's rho in the notes' units is rho itself
        return RhoEstimate(float(values["rho"]))

    def _from_rho(self, rho: RhoEstimate, z: Array, u: Array, Ku: Array) -> dict[str, Any]:
        # free a_n: sum_m a_m k_nm = rho (on the hyperplane)
        return {"b": -rho.rho, "rho": rho.rho}

    def _slacks(self, u: Array, Ku: Array, fields: dict[str, Any]) -> tuple[Array, None]:
        return np.maximum(0.0, fields["rho"] - Ku), None

    def _primal_value(self, norm2: float, fields: dict[str, Any], slacks: tuple) -> float:
        return 0.5 * norm2 + float(self.box_n @ slacks[0]) - fields["rho"]

    def _dual_value(self, z: Array, u: Array, Ku: Array) -> float:
        return -0.5 * float(u @ Ku)

    def _solution_from_primal(self, f: Formulation, info: dict[str, Any]) -> Solution:
        v = f.variables
        rho = float(v["rho"].value)
        xi = np.asarray(v["xi"].value, dtype=np.float64)
        return self._from_primal_point(self._read_duals(f, "margin"), {"b": -rho, "rho": rho}, (xi, None),
                                       np.asarray(v["w"].value, dtype=np.float64), float(f.problem.value), info)
