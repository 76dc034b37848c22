"""The soft-margin C-SVC, (7.20)-(7.37), with the C+/C- boxes of Veropoulos et al.

Primal (7.20)-(7.21), in feature space phi(x_n) = F_n:

    minimise    C sum_n xi_n + 1/2 ||w||^2                        (7.21)
    subject to  t_n (w^T phi(x_n) + b) >= 1 - xi_n,  xi_n >= 0     (7.20)

Dual (7.32)-(7.34):

    maximise    sum_n a_n - 1/2 sum_nm a_n a_m t_n t_m k(x_n, x_m)  (7.32)
    subject to  0 <= a_n <= C                                       (7.33)
                sum_n a_n t_n = 0                                    (7.34)

With class weights the box is 0 <= a_n <= C_{t_n}, C_{+/-} = C * weight.
The unconstrained form (7.44), sum_n [1 - t_n y_n]_+ + lambda ||w||^2 with
lambda = 1/(2C), has the same minimiser (``hinge()``).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._lazy import cvxpy as cp
from ..validation import check_param, check_sample_weight, fail
from ..kernels import Kernel, Linear
from ..solvers.standard_qp import RhoEstimate, StandardQP
from ._binary import BinaryMachine
from .hard_margin import HardMarginSVC
from .machine import DUAL, PRIMAL, SLACKNESS, Condition, Formulation, KKTState, flatten, multiplier_scale, over_box
from .solution import Solution

__all__ = ["SoftMarginSVC"]

Array = NDArray[np.float64]
ClassWeight = Mapping[float, float] | str | None


class SoftMarginSVC(BinaryMachine):
    """Soft-margin support vector classifier (C-SVC).

    Parameters
    ----------
    X : array (N, D)
        Inputs (the Gram matrix for a precomputed kernel).
    t : array (N,)
        Targets in {-1, +1}.
    kernel : Kernel or str
    C : float > 0
        Box constraint (7.33).
    class_weight : dict {+1: w_plus, -1: w_minus}, "balanced" or None
        Per-class box C_{t_n} = C * weight (Veropoulos et al., 1999); "balanced"
        uses N / (2 N_class) as scikit-learn does.
    sample_weight : array (N,) of positive numbers, optional
        Per-point factor on the box, C_n = C * class weight * sample weight (as
        in scikit-learn); it weights each slack in (7.21).
    """

    name = "SoftMarginSVC"
    cli_name = "soft"
    libsvm_svm_type = "c_svc"
    demo_label = "soft margin (C-SVC)"
    libsvm_twin = "SVC"
    _hyper_names = ("C", "class_weight")

    def __init__(self, X: ArrayLike, t: ArrayLike, kernel: Kernel | str = Linear(), C: float = 1.0,
                 class_weight: ClassWeight = None, psd_tol: float = 1e-8,
                 sample_weight: ArrayLike | None = None) -> None:
        super().__init__(X, t, kernel, psd_tol)
        self.sample_weight = None if sample_weight is None else check_sample_weight(sample_weight, self.N)
        self._set_hyper(C=C, class_weight=class_weight)

    def _set_hyper(self, C: float, class_weight: ClassWeight) -> None:
        self.C = float(check_param("C", C))
        weights = _class_weights(class_weight, self.t)
        if self.sample_weight is not None:
            weights = weights * self.sample_weight
        before = self._box_names() if hasattr(self, "class_weight") else None
        self.class_weight = class_weight
        self._weights = weights
        if before is not None and before != self._box_names():
            self._formulations.clear()  # the box changes from a scalar to a vector Parameter

    @property
    def per_point(self) -> bool:
        """Whether the box differs between points (class or sample weights)."""
        return self.class_weight is not None or self.sample_weight is not None

    @property
    def C_n(self) -> Array:
        """The box of each multiplier: C, or C * class weight * sample weight."""
        return self.C * self._weights

    def parameter_values(self) -> dict[str, Any]:
        return {"C": self.C, "C_n": self.C_n, "lambda": 1.0 / (2.0 * self.C), "weights": self._weights}

    def _box_names(self) -> tuple[str, ...]:
        return ("C_n",) if self.per_point else ("C",)

    # -- cvxpy ---------------------------------------------------------------------
    def _build_primal(self, F: Array) -> Formulation:
        params = self._parameters(self._box_names())
        C = params[self._box_names()[0]]
        w = cp.Variable(F.shape[1], name="w")
        b = cp.Variable(name="b")
        xi = cp.Variable(self.N, name="xi")
        y = F @ w + b                                                     # (7.1)
        slack_cost = C * cp.sum(xi) if C.ndim == 0 else cp.sum(cp.multiply(C, xi))
        objective = cp.Minimize(slack_cost + 0.5 * cp.sum_squares(w))    # (7.21)
        constraints = {
            "(7.20)": cp.multiply(self.t, y) >= 1 - xi,                  # (7.20)
            "xi>=0": xi >= 0,                                             # (7.20)
        }
        problem = cp.Problem(objective, list(constraints.values()))
        return Formulation(self, "primal", problem, {"w": w, "b": b, "xi": xi}, constraints, params, "features")

    def _build_dual(self, quad: Callable[[cp.Expression], cp.Expression], form: str) -> Formulation:
        params = self._parameters(self._box_names())
        C = params[self._box_names()[0]]
        a = cp.Variable(self.N, name="a")
        objective = cp.Maximize(cp.sum(a) - 0.5 * quad(cp.multiply(self.t, a)))  # (7.32)
        constraints = {
            "(7.33)": (a >= 0, a <= C),                                  # (7.33)
            "(7.34)": self.t @ a == 0,                                   # (7.34)
        }
        problem = cp.Problem(objective, flatten(constraints))
        return Formulation(self, "dual", problem, {"a": a}, constraints, params, form)

    def hinge(self) -> Formulation:
        """The unconstrained form (7.44): sum_n E_SV(y_n t_n) + lambda ||w||^2, lambda = 1/(2C).

        With class or sample weights each hinge term is weighted by C_n / C. Its
        minimiser is that of the constrained primal; its value is the primal's
        divided by C (the Solution reports the primal's scale).
        """
        if "hinge" not in self._formulations:
            self._formulations["hinge"] = self._build_hinge(self.feature_space.dense)
        return self._formulations["hinge"]

    def _build_hinge(self, F: Array) -> Formulation:
        names = ("lambda", "weights") if self.per_point else ("lambda",)
        params = self._parameters(names)
        w = cp.Variable(F.shape[1], name="w")
        b = cp.Variable(name="b")
        y = F @ w + b                                                     # (7.1)
        hinge = cp.pos(1 - cp.multiply(self.t, y))                        # (7.45)
        loss = cp.sum(cp.multiply(params["weights"], hinge)) if self.per_point else cp.sum(hinge)
        objective = cp.Minimize(loss + params["lambda"] * cp.sum_squares(w))  # (7.44)
        problem = cp.Problem(objective)
        return Formulation(self, "hinge", problem, {"w": w, "b": b}, {}, params, "features")

    # -- KKT -----------------------------------------------------------------------
    _recovery = ("w = sum_n a_n t_n phi(x_n) (7.29)", "b by (7.37)", "xi_n = [1 - t_n y_n]_+ (7.45)",
                 "mu_n = C - a_n (7.31)")

    def kkt_conditions(self, s: KKTState) -> list[Condition]:
        """(7.23)-(7.31): the multipliers a_n of (7.20) and mu_n = C - a_n of xi_n >= 0."""
        margin = self.t * (s.g + s.b)                                         # t_n y(x_n)
        C_n, xi = self.C_n, s.xi
        mu = C_n - s.a                                                        # (7.31)
        C = float(C_n.max())
        below = np.maximum(-s.a, 0.0)                                         # (7.23)'s violation
        above = over_box(s.a, C_n, C)                                         # (7.26)'s: a_n - C_n > 0, of C_n
        return [
            # the dual's box (7.33), the two multipliers' signs (7.23) and (7.26) with (7.31) in one row
            Condition("(7.33)", DUAL, "0 <= a_n <= C", np.maximum(below, above), C),
            Condition("(7.23)", DUAL, "a_n >= 0", below, C),
            Condition("(7.24)", PRIMAL, "t_n y_n - 1 + xi_n >= 0", np.maximum(0.0, 1.0 - xi - margin), 1.0),
            Condition("(7.25)", SLACKNESS, "a_n (t_n y_n - 1 + xi_n) = 0", np.abs(s.a * (margin - 1.0 + xi)),
                      multiplier_scale(s.a, self.zero_box(C))),
            Condition("(7.26), (7.31)", DUAL, "mu_n = C - a_n >= 0", above, C),
            Condition("(7.27)", PRIMAL, "xi_n >= 0", np.maximum(0.0, -xi), 1.0),
            Condition("(7.28)", SLACKNESS, "mu_n xi_n = 0", np.abs(mu * xi), C),
            self._stationarity_w(s, "(7.29)", "w = sum_n a_n t_n phi(x_n)"),
            self._balance(s, "(7.30)", C),
        ]

    # -- standard QP -----------------------------------------------------------
    def _standard_qp(self) -> StandardQP:
        """min 1/2 a^T (t t^T o K) a - e^T a, t^T a = 0, 0 <= a <= C_n."""
        return StandardQP(
            kernel=self.kernel, X=self.X, index=np.arange(self.N), y=self.t, scale=1.0,
            p=-np.ones(self.N), lower=np.zeros(self.N), upper=self.C_n.copy(), delta=0.0,
            nu_sum=None, gram=self.gram,
        )

    # -- LIBSVM twin --------------------------------------------------------------
    def libsvm_params(self) -> dict[str, Any]:
        return {"C": self.C, "class_weight": self.class_weight}

    @classmethod
    def from_libsvm(cls, X: ArrayLike, t: ArrayLike | None, kernel: Kernel,
                    params: Mapping[str, Any], sample_weight: ArrayLike | None) -> BinaryMachine:
        """The machine; with LIBSVM's C = inf (an infinite box, which no weight changes) the hard
        margin (7.5)-(7.6)."""
        if params["C"] == np.inf:
            return HardMarginSVC(X, t, kernel)
        class_weight = params.get("class_weight")
        return cls(X, t, kernel, C=params["C"], class_weight=class_weight, sample_weight=sample_weight)

    def libsvm_multipliers(self, coef: Array, intercept: float) -> tuple[Array, RhoEstimate]:
        # dual_coef_ = a_n t_n: the notes' a directly, b = intercept_
        return coef * self.t, RhoEstimate(-intercept)

    # -- notes' formulas ---------------------------------------------------------
    def _from_rho(self, rho: RhoEstimate, z: Array, u: Array, Ku: Array) -> dict[str, Any]:
        # (7.37): b = mean over free n of t_n - sum_m a_m t_m k_nm, which is -rho
        return {"b": -rho.rho}

    def _slacks(self, u: Array, Ku: Array, fields: dict[str, Any]) -> tuple[Array, None]:
        # the smallest xi allowed by (7.20): xi_n = [1 - t_n y_n]_+  (7.45)
        return np.maximum(0.0, 1.0 - self.margins(Ku, fields["b"])), None

    def _primal_value(self, norm2: float, fields: dict[str, Any], slacks: tuple) -> float:
        return 0.5 * norm2 + float(self.C_n @ slacks[0])       # (7.21)

    def _dual_value(self, z: Array, u: Array, Ku: Array) -> float:
        return float(z.sum()) - 0.5 * float(u @ Ku)                      # (7.32)

    def _solution_from_primal(self, f: Formulation, info: dict[str, Any]) -> Solution:
        if f.kind == "hinge":
            return self._solution_from_hinge(f, info)
        common = self._primal_common(f)
        a = self._read_duals(f, "(7.20)")
        xi = np.maximum(np.asarray(f.variables["xi"].value, dtype=np.float64), 0.0)
        return self._from_primal_point(a, {"b": common["b"]}, (xi, None), common["w"],
                                       float(f.problem.value), info)

    def _solution_from_hinge(self, f: Formulation, info: dict[str, Any]) -> Solution:
        common = self._primal_common(f)
        margins = self.t * (self.feature_space.F @ common["w"] + common["b"])
        xi = np.maximum(0.0, 1.0 - margins)
        a = self._multipliers_from_hinge(common["w"], margins)
        return self._from_primal_point(a, {"b": common["b"]}, (xi, None), common["w"],
                                       self.C * float(f.problem.value), info)

    def _multipliers_from_hinge(self, w: Array, margins: Array, margin_tol: float = 1e-4) -> Array:
        """a from the primal point: a_n = C_n where t_n y_n < 1, 0 where > 1, and on the
        margin the values in [0, C_n] that best satisfy (7.29) and (7.30)."""
        F, C_n = self.feature_space.dense, self.C_n
        inside = margins < 1 - margin_tol
        on = np.abs(margins - 1) <= margin_tol
        a = np.where(inside, C_n, 0.0)
        if not np.any(on):
            return a
        target = w - F[inside].T @ (C_n[inside] * self.t[inside])          # (7.29)
        balance = -float(self.t[inside] @ C_n[inside])                     # (7.30)
        weight = max(1.0, float(np.abs(F).max()))
        A = np.vstack([(F[on] * self.t[on, None]).T, weight * self.t[on][None, :]])
        rhs = np.concatenate([target, [weight * balance]])
        from scipy.optimize import lsq_linear

        a[on] = lsq_linear(A, rhs, bounds=(0.0, C_n[on])).x
        return a


def _class_weights(class_weight: ClassWeight, t: Array) -> Array:
    """Per-point multiplier of C from a class_weight argument."""
    if class_weight is None:
        return np.ones(t.shape[0])
    if isinstance(class_weight, str):
        if class_weight != "balanced":
            raise fail("class_weight", "None, 'balanced' or a dict {+1: w, -1: w}", class_weight)
        counts = {c: float(np.sum(t == c)) for c in (1.0, -1.0)}
        return np.array([t.shape[0] / (2.0 * counts[v]) for v in t])
    if not isinstance(class_weight, Mapping):
        raise fail("class_weight", "None, 'balanced' or a dict {+1: w, -1: w}", class_weight)
    extra = set(float(k) for k in class_weight) - {1.0, -1.0}
    if extra:
        raise fail("class_weight", "a dict whose keys are the labels +1 and -1", class_weight)
    table = {float(k): float(check_param(f"class_weight[{k}]", v, "class_weight")) for k, v in class_weight.items()}
    return np.array([table.get(float(v), 1.0) for v in t])
