"""The one quadratic programme that every SVM dual reduces to.

    minimise    f(a) = 1/2 a^T Q a + p^T a
    subject to  y^T a = delta,
                l <= a <= u                    (u may be +inf),
                e^T a = nu_sum                 (nu forms only)

with Q_ij = scale * y_i y_j k(x_index(i), x_index(j)) + d_i [i = j] and
y_i in {-1, +1}; the optional diagonal term d >= 0 is that of the L2-loss
("squared hinge") SVMs, whose dual adds I / (2C) to Q.
As in LIBSVM's ``svm.cpp``, the solvers know only this problem; each machine
builds its Q, p, y, box and delta and maps the answer back (for regression the
2N variables are (a, a_hat) and index(i) = i mod N).

The bias comes out of the solved problem as LIBSVM's ``rho``: with the
gradient G = Q a + p, the KKT conditions of a free variable (l < a_i < u) read
y_i G_i = rho, so rho is the average of y_i G_i over the free variables, or the
midpoint of the interval that the bounded variables allow when none is free.
The nu forms have a second multiplier and take the average per sign of y
(LIBSVM's Solver_NU): r1 over y = +1, r2 over y = -1, rho = (r1 - r2)/2,
r = (r1 + r2)/2. Each machine translates (rho, r) into its own b, rho,
epsilon or R^2.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from numpy.typing import NDArray

from ..kernels import Kernel

__all__ = ["StandardQP", "QPResult", "RhoEstimate", "calculate_rho", "calculate_rho_nu", "bound_masks", "OUTCOMES",
           "BOUND_ROUNDING"]

Array = NDArray[np.float64]


@dataclass(frozen=True)
class StandardQP:
    """The data of the standard-form dual QP (see the module docstring).

    Attributes
    ----------
    kernel, X : the kernel and the training inputs (the Gram matrix for
        ``Precomputed``); Q's rows are computed from them on demand.
    index : int array (n,)
        Training point behind each variable (i mod N for regression).
    y : array (n,)
        Signs, both in Q and in the equality y^T a = delta.
    scale : float
        Factor on the kernel in Q (2 for SVDD, 1 otherwise).
    p, lower, upper : arrays (n,)
    delta : float
    nu_sum : float or None
        Right-hand side of the second equality e^T a = nu_sum (nu forms).
    gram : callable returning the N x N kernel matrix (cached by the machine).
    diagonal : array (n,) >= 0 or None
        The term d added to Q's diagonal (None: none).
    tol_scale : float > 0
        The size of the gradient's entries against which accuracy is judged:
        a tolerance ``tol`` means m(a) - M(a) < tol * tol_scale (the machine
        sets it from its output scale, so that ``tol`` is relative).
    """

    kernel: Kernel
    X: Array
    index: NDArray[np.intp]
    y: Array
    scale: float
    p: Array
    lower: Array
    upper: Array
    delta: float
    nu_sum: float | None
    gram: Callable[[], Array] = field(repr=False, compare=False)
    diagonal: Array | None = field(default=None, repr=False, compare=False)
    tol_scale: float = 1.0

    @property
    def n(self) -> int:
        return int(self.p.shape[0])

    @property
    def is_nu(self) -> bool:
        return self.nu_sum is not None

    def dense_Q(self) -> Array:
        """Q as a dense (n, n) array."""
        K = self.gram()
        Kx = K[np.ix_(self.index, self.index)] if self.index.shape[0] != K.shape[0] else K
        Q = self.scale * (self.y[:, None] * Kx * self.y[None, :])
        if self.diagonal is not None:
            Q[np.diag_indices_from(Q)] += self.diagonal
        return Q

    def reads_rows_of(self, kernel: Any, X: Any) -> bool:
        """Whether the rows of ``kernel`` on the inputs ``X`` (a row cache of them) are Q's rows: Q is that kernel
        on these very inputs, one variable per point in their order, with no diagonal term."""
        return (self.X is X and self.kernel == kernel and self.diagonal is None and self.n == X.shape[0]
                and np.array_equal(self.index, np.arange(self.n)))

    def diag_Q(self) -> Array:
        """Q_ii = scale * k(x_i, x_i) + d_i (y_i^2 = 1), read-only (computed once: the SMO's steps and the
        multipliers' unit read it, and the kernel's diagonal checks X again each time: 12 us at 100 x 20)."""
        Q = self.__dict__.get("_diag_Q")
        if Q is None:
            base = self.scale * self.kernel.diag(self.X)[self.index]
            Q = base if self.diagonal is None else base + self.diagonal
            Q.flags.writeable = False
            object.__setattr__(self, "_diag_Q", Q)
        return Q

    @property
    def multiplier_unit(self) -> float:
        """The multipliers' own scale: tol_scale / max_i Q_ii, the size of a multiplier that moves a gradient
        entry by the gradient's scale (whatever the boxes); inf where Q's diagonal is 0 (computed once)."""
        unit = self.__dict__.get("_multiplier_unit")
        if unit is None:
            largest = float(self.diag_Q().max(initial=0.0))
            unit = self.tol_scale / largest if largest > 0.0 else float("inf")
            object.__setattr__(self, "_multiplier_unit", unit)
        return unit

    @property
    def upper_sum(self) -> float:
        """The sum of the finite upper bounds (inf where it overflows; computed once: every solve's Solution and
        certificate read it through ``Machine.gap_scale``)."""
        total = self.__dict__.get("_upper_sum")
        if total is None:
            finite = self.upper[np.isfinite(self.upper)]
            with np.errstate(over="ignore"):
                total = float(finite.sum())
            object.__setattr__(self, "_upper_sum", total)
        return total

    def gradient(self, a: Array) -> Array:
        """G = Q a + p."""
        return self.dense_Q() @ a + self.p

    def objective(self, a: Array) -> float:
        """f(a) = 1/2 a^T Q a + p^T a."""
        return float(0.5 * a @ (self.dense_Q() @ a) + self.p @ a)

    def initial_point(self) -> Array:
        """A feasible starting point: LIBSVM's greedy fill of the equalities."""
        return _greedy_fill(self)


def _greedy_fill(qp: StandardQP) -> Array:
    """Fill variables up to their bounds until the equality constraints hold.

    Standard form has either y^T a = delta alone, or y^T a = delta together with
    e^T a = nu_sum, i.e. fixed sums over y = +1 and over y = -1. Each required
    sum is met by filling variables of that sign in order (LIBSVM's start for
    nu-SVC, one-class and nu-SVR); a C-SVC or epsilon-SVR starts from a = l = 0.
    """
    a = qp.lower.copy()
    if qp.nu_sum is not None:
        targets = {1.0: (qp.nu_sum + qp.delta) / 2, -1.0: (qp.nu_sum - qp.delta) / 2}
    elif qp.delta != 0.0:
        targets = {1.0: qp.delta} if np.all(qp.y > 0) else {}
    else:
        targets = {}
    for sign, total in targets.items():
        remaining = total - a[qp.y == sign].sum()
        for i in np.flatnonzero(qp.y == sign):
            if remaining <= 0:
                break
            step = min(qp.upper[i] - a[i], remaining)
            a[i] += step
            remaining -= step
    return a


#: What a solve of the QP came to, whatever the solver's own words: ``"solved"``
#: (its tolerance met), ``"inaccurate"`` (stopped early with a point: iteration
#: cap, time limit, a solver's inaccurate status), ``"infeasible"`` (the solver
#: reports a primal or dual infeasibility certificate, or the SMO an unbounded
#: descent), ``"failed"`` (no usable point).
OUTCOMES = ("solved", "inaccurate", "infeasible", "failed")


@dataclass(frozen=True)
class QPResult:
    """A StandardQP solved by some solver, in the QP's own terms.

    The solver knows no machine: mapping ``a`` back to a machine's b, rho,
    epsilon, R^2 and slacks is the machine's business.

    Attributes
    ----------
    a : array (n,)
        The variables, in the QP's order.
    G : array (n,) or None
        The gradient Q a + p where the solver has it (saves a product K u).
    rho : RhoEstimate or None
        LIBSVM's rho (and r) where the solver computed it, else None.
    outcome : one of ``OUTCOMES``
    status : str
        The solver's own status word (``"optimal"``, ``"max_iter"``, ``"Solved"``, ...).
    solver : str
    iterations : int
    objective : float
        f(a) = 1/2 a^T Q a + p^T a.
    solve_time, compile_time : float
        Seconds in the solver, and in its set-up (numba loading, matrix assembly).
    solver_gap : float
        The solver's own primal-dual gap where it reports one.
    violation : float
        The SMO's maximal violation m(a) - M(a) at the end over ``tol_scale`` (relative, as its tol;
        nan for other solvers).
    trace : object or None
        The SMO's trace when recorded.
    """

    a: Array
    G: Array | None
    rho: "RhoEstimate | None"
    outcome: str
    status: str
    solver: str
    iterations: int
    objective: float
    solve_time: float
    compile_time: float = 0.0
    solver_gap: float = float("nan")
    violation: float = float("nan")
    trace: Any = field(default=None, repr=False)


@dataclass(frozen=True)
class RhoEstimate:
    """LIBSVM's rho (and r for nu forms) with how it was obtained."""

    rho: float
    r: float = float("nan")
    n_free: int = 0
    fallback: bool = False


#: A multiplier within this share of its scale (``bound_masks``) of a bound is at it, for the SMO's support
#: and its rho alike: its steps put multipliers on their bounds exactly, but a step that empties a variable
#: can leave the rounding of the values it moved (a warm start's 0.402 left 5.6e-17 in a box of 1; a cold
#: nu-SVR 2.5e-16 in a box of 0.038), which, counted as free, set rho alone at one end of its KKT interval
#: where LIBSVM takes the interval's midpoint (b 0.2285 against 0.1569).
BOUND_ROUNDING = 1e-12


#: A solution whose largest multiplier is below this share of the smallest finite box, or of the multipliers'
#: own scale (``StandardQP.multiplier_unit``) where that is smaller, is the zero solution (``bound_masks``), its
#: multipliers the rounding of zeros. An epsilon-SVR whose tube holds every point has
#: a = 0; Clarabel answered with multipliers of 1e-19 (a tube of 100) and 2e-14 (a tube of 3) in a box of 1,
#: and all 20 points were its support, "on the tube", where LIBSVM and the SMO have none. Relative to the box
#: alone, a soft margin at C = 1e20 on separable data (free multipliers of about 1, 1e-20 of the box) was the
#: zero solution: every point "not a support vector", none on the margin as at C = 1e3.
ZERO_SOLUTION_SHARE = 1e-10


#: A variable within this many times the answer's largest violation of its bounds of a
#: bound is at it (``bound_masks``): a first-order solver's answer lies off its active bounds, either side, by up
#: to its primal residual, of which the largest violation seen is a lower estimate (OSQP left a_hat_n 3.5e-6
#: inside their bounds where no multiplier passed its bound by more than 3.3e-6).
BOUND_VIOLATION_MARGIN = 10.0


def bound_masks(a: Array, lower: Array, upper: Array, tol: float,
                unit: float = float("inf")) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """Variables at their lower and upper bounds, within ``tol`` of a scale.

    The scale of a variable is the smaller of its box width and the largest
    multiplier (the solution's own size): with boxes as different as class
    weights 1000 and 1e-4 make them, every multiplier may be tiny next to its
    box yet free. Where the largest is below ``ZERO_SOLUTION_SHARE`` of the
    smallest finite box, or of ``unit`` (the multipliers' own scale,
    ``StandardQP.multiplier_unit``) where that is smaller, every variable is at
    its lower bound.

    A box no wider than ``tol`` times the largest multiplier is below the
    solver's resolution (an interior-point answer is resolved to about that
    share of the solution's size, whatever the box): its variable is at the
    nearer bound, never free. Sample weights of 1e-6 next to weights of 1 left
    Clarabel's multipliers 1e-12 from their bounds in boxes of 2.6e-8, 6e-5 of
    the box: counted as free, their gradients set rho (a one-class SVM's
    0.093109 for 0.093068), and correct multipliers failed their certificate.

    Nor is a variable told from its bound closer than the answer's own
    violation of the bounds: a first-order solver's
    answer (OSQP's unpolished one) lies off its active bounds, on either side,
    by up to its primal residual, whatever the box. A weighted nu-SVR (40
    points, weights in [1e-3, 1], C = 100, nu = 0.5) left OSQP's a_hat_n
    7.7e-8 inside its lower bound and a_n 7.7e-8 inside its upper bound in a
    box of 6e-3 (1.3e-5 of it), while other multipliers passed their bounds by
    7.3e-7: counted as free, their gradients (0.288 where the free ones have
    0.116) set b and epsilon, and multipliers that agree with Clarabel's to
    the solver's accuracy failed their certificate. The violation seen is a
    lower estimate of that residual (50 points, C = 50, nu = 0.8: a_hat_n
    3.5e-6 inside their upper bounds where the largest violation was 3.3e-6):
    the reach is ``BOUND_VIOLATION_MARGIN`` times it.
    """
    above = a - lower
    largest = float(above.max(initial=0.0))
    finite = np.isfinite(upper)
    width = np.where(finite, upper - lower, largest)     # each box, computed once
    if finite.any() and largest < ZERO_SOLUTION_SHARE * min(float(width[finite].min()), unit):
        return np.ones(a.shape, dtype=bool), np.zeros(a.shape, dtype=bool)
    below = upper - a                                   # inf where there is no upper bound
    violation = max(-float(above.min(initial=0.0)), -float(below.min(initial=0.0)), 0.0)   # past a bound
    reach = np.minimum(width, largest)
    reach *= tol                                        # tol times each variable's scale
    np.maximum(reach, BOUND_VIOLATION_MARGIN * violation, out=reach)      # nor closer than the answer's resolution
    at_lower = above <= reach
    at_upper = below <= reach
    unresolved = width <= tol * largest                 # a box below the resolution: the nearer bound
    if unresolved.any():
        at_lower |= unresolved & (above <= below)
        at_upper |= unresolved
    at_upper &= finite
    at_upper &= ~at_lower
    return at_lower, at_upper


def calculate_rho(y: Array, G: Array, at_lower: NDArray[np.bool_], at_upper: NDArray[np.bool_]) -> RhoEstimate:
    """rho = mean of y_i G_i over free variables, else the midpoint of its KKT interval.

    A variable at its upper bound with y = -1, or at its lower bound with
    y = +1, gives an upper limit on rho; the other bounded ones a lower limit.
    """
    yG = y * G
    free = ~(at_lower | at_upper)
    n_free = int(np.count_nonzero(free))
    if n_free:
        return RhoEstimate(float(yG[free].sum()) / n_free, n_free=n_free)       # their mean
    ub_set = (at_upper & (y < 0)) | (at_lower & (y > 0))
    lb_set = (at_upper & (y > 0)) | (at_lower & (y < 0))
    return RhoEstimate(_midpoint(yG[lb_set], yG[ub_set]), fallback=True)


def calculate_rho_nu(y: Array, G: Array, at_lower: NDArray[np.bool_], at_upper: NDArray[np.bool_]) -> RhoEstimate:
    """LIBSVM's Solver_NU::calculate_rho: r1 over y = +1, r2 over y = -1.

    Returns rho = (r1 - r2) / 2 and r = (r1 + r2) / 2. Within one sign class
    a free variable has G_i = r_class; at the upper bound G_i <= r_class (a
    lower limit on r_class), at the lower bound G_i >= r_class (an upper limit).
    """
    free = ~(at_lower | at_upper)
    r_side = []
    fallback = False
    for sign in (1.0, -1.0):
        cls = y == sign
        if np.any(free & cls):
            r_side.append(float(np.mean(G[free & cls])))
        else:
            fallback = True
            r_side.append(_midpoint(G[at_upper & cls], G[at_lower & cls]))
    r1, r2 = r_side
    return RhoEstimate((r1 - r2) / 2, (r1 + r2) / 2, n_free=int(free.sum()), fallback=fallback)


def _midpoint(lower_limits: Array, upper_limits: Array) -> float:
    lb = float(np.max(lower_limits)) if lower_limits.size else -np.inf
    ub = float(np.min(upper_limits)) if upper_limits.size else np.inf
    if np.isfinite(lb) and np.isfinite(ub):
        return (lb + ub) / 2
    if np.isfinite(lb):
        return lb
    if np.isfinite(ub):
        return ub
    return 0.0
