"""The result of solving a machine, whatever the method."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import ValidationError
from ..kernels import Kernel, check_finite_predictions
from ..sparse import as_rows, issparse

__all__ = ["Solution"]

Array = NDArray[np.float64]
NAN = float("nan")


#: The array fields of a Solution, read-only (``_frozen``).
_ARRAY_FIELDS = ("a", "coef", "support", "a_hat", "w", "xi", "xi_hat", "support_vectors")


def _frozen(value: Any) -> Any:
    """A read-only array: a read-only copy of a writeable one; a read-only one as it is (so
    that an estimator can share its support vectors with the solution)."""
    if isinstance(value, np.ndarray) and value.flags.writeable:
        value = value.copy()
        value.flags.writeable = False
    elif issparse(value) and value.data.flags.writeable:     # sparse support vectors: their values
        value = value.copy()
        value.data.flags.writeable = False
    return value


@dataclass(frozen=True)
class Solution:
    """A solved machine in the notes' convention.

    The model is y(x) = sum_n coef_n k(x, x_n) + b with coef = a * t for the
    classifiers (7.13), coef = a - a_hat for regression (7.64) and coef = a
    for the one-class machine (b = -rho). SVDD is the exception: y(x) =
    R^2 - ||phi(x) - c||^2 = sum_n 2 a_n k(x, x_n) - k(x, x) + b with
    b = R^2 - a^T K a, so coef = 2a and ``self_coef`` = -1 multiplies k(x, x).

    Attributes
    ----------
    machine : str
        Class name of the machine that was solved.
    method : str
        ``"primal"``, ``"dual"``, ``"qp"`` (direct OSQP/Clarabel), ``"hinge"``
        (the unconstrained form (7.44)), ``"smo"`` or ``"libsvm"``.
    solver : str
        The solver that ran (``"CLARABEL"``, ``"OSQP"``, ...).
    status : str
        ``"optimal"`` when the machine's KKT conditions hold at ``tol`` (the
        certificate, ``formulations.solve.certify``), ``"inaccurate"`` when the
        solver stopped early and they do not; before certification (a
        Solution built by hand or by ``from_sklearn``) the solver's status.
    solver_status : str
        The solver's own status word ("Solved", "optimal", "max_iter", ...).
    tol : float
        The tolerance the certificate was checked at (the method's matched
        tolerance); ``nan`` for an uncertified Solution.
    report : KKTReport or None
        The certificate: the KKT report at ``tol``.
    gap_scale : float
        The machine's ``gap_scale``, against which ``relative_gap`` is relative.
    output_scale : float
        The machine's ``output_scale``: the unit of its outputs (and of rho,
        epsilon), against which the report's output rows are relative.
    a : array (N,)
        Dual coefficients; from a primal solve, the constraint duals.
    a_hat : array (N,) or None
        Second set of dual coefficients for regression.
    b : float
        Intercept.
    coef : array (N,)
        Expansion coefficients of y(x).
    rho, epsilon, R2 : float
        nu-SVC and one-class margin rho, nu-SVR tube half-width, SVDD squared
        radius; ``nan`` where they do not apply.
    w : array or None
        Weights in the feature space of the primal (explicit features or the
        empirical map), where known.
    xi, xi_hat : arrays (N,) or None
        Slack variables (recovered by the notes' formulas from a dual solve).
    primal_objective, dual_objective : float
        Value of the primal at the (recovered) primal point and of the
        Lagrange dual at ``a``; at an exact optimum they are equal.
    iterations : int
    solve_time : float
        Seconds in the solver.
    compile_time : float
        Seconds spent building the solver's problem (cvxpy's compilation).
    solver_gap : float
        The duality gap the solver itself reports (the direct OSQP and Clarabel
        paths: primal minus dual objective of the standard-form QP, whose
        objective is minus the Lagrange dual's); ``nan`` where it reports none.
    support : int array
        Indices n with a_n (or a_hat_n) above the support threshold.
    notes : tuple of str
        Remarks on how quantities were obtained (for example the fallback
        for b when no multiplier is free).
    trace : object
        The SMO's step trace when ``record=True``, else None.
    n_train : int
        Number of training points (the width of a precomputed cross-kernel).
    task : {"classification", "regression", "novelty"}
        The machine's task: ``predict`` returns y(x) itself for regression.
    """

    machine: str
    method: str
    solver: str
    status: str
    a: Array
    b: float
    coef: Array
    primal_objective: float
    dual_objective: float
    iterations: int
    solve_time: float
    support: NDArray[np.intp]
    kernel: Kernel = field(repr=False)
    support_vectors: Array | None = field(repr=False)
    a_hat: Array | None = None
    rho: float = NAN
    epsilon: float = NAN
    R2: float = NAN
    w: Array | None = field(default=None, repr=False)
    xi: Array | None = field(default=None, repr=False)
    xi_hat: Array | None = field(default=None, repr=False)
    self_coef: float = 0.0
    compile_time: float = 0.0
    solver_gap: float = NAN
    notes: tuple[str, ...] = ()
    trace: Any = field(default=None, repr=False)
    n_train: int = 0
    task: str = "classification"
    solver_status: str = ""
    tol: float = NAN
    report: Any = field(default=None, repr=False)
    gap_scale: float = 1.0
    output_scale: float = 1.0

    def __post_init__(self) -> None:
        for name in _ARRAY_FIELDS:
            object.__setattr__(self, name, _frozen(getattr(self, name)))

    def evolve(self, **changes: Any) -> "Solution":
        """``dataclasses.replace(self, **changes)`` without running ``__init__`` again: the fields not
        named are shared (they are frozen already), the arrays named are frozen as ``__init__`` does.
        A solve replaces its Solution three or four times (the certificate, the estimator's copy); at
        N = 100 replace's 30 fields cost a tenth of the solve."""
        unknown = set(changes) - _FIELD_NAMES
        if unknown:
            raise TypeError(f"Solution has no fields {sorted(unknown)}")
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        for name, value in changes.items():
            object.__setattr__(new, name, _frozen(value) if name in _ARRAY_FIELDS else value)
        return new

    @property
    def n_support(self) -> int:
        return int(self.support.shape[0])

    @property
    def gap(self) -> float:
        """primal_objective - dual_objective."""
        return self.primal_objective - self.dual_objective

    @property
    def relative_gap(self) -> float:
        scale = max(self.gap_scale, abs(self.primal_objective), abs(self.dual_objective), 1e-300)
        return self.gap / scale if math.isfinite(self.gap) else NAN

    def decision_function(self, X: ArrayLike, diag: ArrayLike | None = None) -> Array:
        """y(x) for each row of X, shape (n,).

        With a precomputed kernel, X is the cross-kernel matrix (n, N); SVDD
        then also needs ``diag``, the values k(x, x) of the new points.
        """
        A = as_rows(X)                          # a sparse X stays sparse (CSR)
        if (self.kernel.name != "precomputed" and self.support_vectors is not None
                and (A.ndim != 2 or A.shape[1] != self.support_vectors.shape[1])):
            # checked here, not by the kernel: with no support vector the expansion below is empty, and X of
            # any width gave b for every row
            raise ValidationError(f"X must be a 2-D array with {self.support_vectors.shape[1]} columns (features), "
                                  f"as the training inputs; got shape {A.shape}")
        if self.support.shape[0] == 0 and self.kernel.name != "precomputed":
            values = np.full(A.shape[0], self.b)  # no support vector: the expansion is empty
        elif self.kernel.name == "precomputed":
            if A.ndim != 2 or A.shape[1] != self.n_train:
                raise ValidationError(
                    f"X must be the cross-kernel matrix of shape (n, {self.n_train}) "
                    f"for a precomputed kernel; got shape {A.shape}"
                )
            values = A[:, self.support] @ self.coef[self.support] + self.b
        else:
            with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused below, in words
                values = self.kernel(A, self.support_vectors) @ self.coef[self.support] + self.b
        if self.self_coef:
            if diag is None:
                if self.kernel.name == "precomputed":
                    raise ValidationError(
                        "diag must give k(x, x) for each new point when SVDD uses a "
                        "precomputed kernel; got None"
                    )
                with np.errstate(over="ignore", invalid="ignore"):
                    diag = self.kernel.diag(A)
            values = values + self.self_coef * np.asarray(diag, dtype=np.float64)
        return check_finite_predictions(self.kernel, values, A)

    def _repr_html_(self) -> str:
        """The solution's numbers for a notebook: what was solved, the multipliers' summary,
        the objectives and their gap, and the certificate's verdict (the report's own
        ``_repr_html_`` shows its table)."""
        from .report import Markup, VERDICT_STYLE, html_table

        rows: list[list[Any]] = [["machine", self.machine], ["method, solver", f"{self.method}, {self.solver}"],
                                 ["status", f"{self.status} (solver: {self.solver_status or '-'})"],
                                 ["support vectors", f"{self.n_support} of {self.a.shape[0]}"], ["b", f"{self.b:.6g}"]]
        rows += [[name, f"{value:.6g}"] for name, value in (("rho", self.rho), ("epsilon", self.epsilon),
                                                           ("R^2", self.R2)) if not math.isnan(value)]
        rows += [["primal objective", f"{self.primal_objective:.10g}"], ["dual objective", f"{self.dual_objective:.10g}"],
                 ["gap (relative)", f"{self.gap:.1e} ({self.relative_gap:.1e})"],
                 ["iterations", str(self.iterations)],
                 ["time", f"solve {self.solve_time:.3g} s, compile {self.compile_time:.3g} s"]]
        if self.report is not None:
            word = "PASS" if self.report.ok else "FAIL"
            rows.append(["KKT certificate", Markup(f'<span style="{VERDICT_STYLE[word]}">{word}</span> at tol '
                                                   f"{self.tol:.1e}")])
        return html_table(f"Solution of {self.machine}", [], rows, below=list(self.notes))

    def predict(self, X: ArrayLike, diag: ArrayLike | None = None) -> Array:
        """Class labels -1/+1 (the sign of y(x), +1 at 0) or, for regression, y(x)."""
        values = self.decision_function(X, diag)
        if self.task == "regression":
            return values
        return np.where(values >= 0, 1.0, -1.0)


_FIELD_NAMES = frozenset(f.name for f in fields(Solution))
