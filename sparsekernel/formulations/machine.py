"""The public base of every machine: what a machine declares, and what it gets for it.

A machine is one module (``soft_margin.py``, ``nu_svr.py``, ...) holding one
subclass of ``Machine`` that states, in the book's terms, its primal and dual
in cvxpy, its standard-form QP (``solvers.standard_qp``), its KKT conditions
and the formulas that map a solved QP back to the notes' quantities; see the
``Machine`` docstring for the list. Everything here is common plumbing: the
data, the kernel and its feature space, the cvxpy ``Formulation`` wrapper,
the assembly of a ``Solution`` from a solved QP or primal, and the state the
KKT conditions read. Solving by name is ``formulations.solve``.

cvxpy's sign conventions, which the readers of the primals rely on: for a
``Minimize`` problem, the constraint ``lhs >= rhs`` (or ``rhs <= lhs``)
enters the Lagrangian as ``+ lambda^T (rhs - lhs)`` with ``lambda >= 0``, and
``lhs == rhs`` as ``+ nu^T (lhs - rhs)`` with ``nu`` free; ``dual_value`` is
lambda or nu. A ``Maximize(g)`` problem is solved as ``Minimize(-g)`` and its
``dual_value`` s are those of that minimisation (so an inequality multiplier
is still >= 0). Every primal here is a minimisation whose inequality
constraints are written ``g(w, b, ...) >= 0``-style, so each multiplier a_n
of the notes is exactly the ``dual_value`` of its constraint.
"""

from __future__ import annotations

import abc
import math
import time
import warnings
import weakref
from dataclasses import dataclass, replace
from functools import cached_property, partial
from typing import Any, Callable, ClassVar, Mapping

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._lazy import cvxpy as cp
from ..validation import check_matrix, check_param, fail
from ..errors import NonConvexWarning, SolverError, ValidationError, ignored, warn
from ..kernels import (DIRECT_EXPONENT_ROUNDING, Kernel, check_finite_values, feature_map, make_kernel, product_rounding,
                       sparse_product_rounding)
from ..sparse import digest, frozen, issparse, read_only_rows, row_squared_norms, to_dense
from ..solvers.direct import osqp_refused_settings, osqp_settings_error
from ..solvers.standard_qp import BOUND_ROUNDING, RhoEstimate, StandardQP, bound_masks, calculate_rho, calculate_rho_nu
from .solution import Solution

__all__ = [
    "Machine", "Formulation", "FeatureSpace", "Condition", "KKTState", "SOLVER_DEFAULTS", "flatten",
    "BOUND_TOL", "CATEGORY_NAMES", "multiplier_scale", "sum_scale",
    "STATIONARITY", "PRIMAL", "DUAL", "SLACKNESS",
]

Array = NDArray[np.float64]

#: Options passed to a cvxpy solver unless the caller gives them. Clarabel's
#: tolerances are tighter than its defaults (1e-8) so that multipliers near a
#: bound are resolved well enough to tell free from bounded ones.
SOLVER_DEFAULTS: dict[str, dict[str, Any]] = {
    "OSQP": {"eps_abs": 1e-6, "eps_rel": 1e-6, "max_iter": 100_000, "polishing": True},
    "CLARABEL": {"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12, "tol_feas": 1e-12},
}

#: Most points on which ``kernel_spread`` is estimated (evenly spaced).
SPREAD_POINTS = 1000

#: N above which a kernel that is not always PSD is not eigen-checked at construction.
PSD_CHECK_MAX_N = 5000

#: ``kernel_times`` computes K[block, support] @ u in blocks of about this many kernel entries (4 MiB
#: of float64; 4,096 rows of 496 support vectors, 16 MiB, were the peak of a dense 5,000 x 500 fit), and
#: at least this many rows.
KERNEL_TIMES_ENTRIES = 1 << 19
KERNEL_TIMES_MIN_ROWS = 64

#: A multiplier within this fraction of its box width from a bound counts as at the
#: bound (when telling free multipliers for b, rho, epsilon and R^2) and, above the
#: lower bound, as a support vector. Interior-point solutions resolve the multipliers
#: to about 1e-6 of the box, so the threshold sits above that.
BOUND_TOL = 1e-5
#: The same for the SMO's multipliers, which its steps put on their bounds exactly: a free one may be 1e-9
#: of its box (a cut at BOUND_TOL dropped such from the support), and what it leaves at a bound differs
#: from it by rounding only (the warm start's refilled sums leave ~1e-16 where the cold fit has 0). The
#: SMO's rho reads the same rule.
SMO_BOUND_TOL = BOUND_ROUNDING


def spread_step(N: int) -> int:
    """The step between the points ``Machine.kernel_spread`` and ``kernel_mean`` are estimated on: at most
    ``SPREAD_POINTS`` of N."""
    return max(1, -(-N // SPREAD_POINTS))


def kernel_means(K: Array) -> tuple[float, float]:
    """``Machine._kernel_means`` from the machine's N x N Gram matrix K: (mean k(x_n, x_n), mean k(x_n, x_m)) on
    the same evenly spaced points (``spread_step``), for a caller that holds K already (a precomputed kernel;
    one-versus-one's class blocks, where the pair's machine computed it again: half of a ten-class nu-SVC fit)."""
    step = spread_step(K.shape[0])
    Ks = K[::step, ::step]
    return float(np.mean(np.diag(Ks))), float(np.sum(Ks)) / Ks.size


def multiplier_scale(multipliers: Array, box: float, unit: float = 1.0, reach: float | None = None) -> float:
    """The scale of a complementary slackness row a_n r_n = 0 whose residuals r_n are in ``unit`` (the
    output scale): the largest |a_n| times ``unit``, so that the row is the residual, in output units, of
    the points that carry the largest multipliers; and at least ``BOUND_TOL`` of the box times ``reach``,
    the size the residuals of the other points can have (``unit``; the tube's half-width where it is wider),
    so that multipliers at a solver's rounding (an interior-point solver leaves a_n r_n ~ its barrier
    parameter on every point) count as zeros, as they do for the support.

    Relative to the box alone, a row whose multipliers all sit far below a large box (C = 1e6 on separable
    data) passed whatever its residuals: twice the optimal multipliers passed at 1e-6."""
    largest = float(np.max(np.abs(multipliers), initial=0.0)) * unit
    if not np.isfinite(box):
        return largest or unit
    return max(largest, BOUND_TOL * float(box) * (unit if reach is None else max(unit, reach)))


def over_box(multipliers: Array, box_n: Any, box: float, largest: float | None = None) -> Array:
    """How far each multiplier is above its own box box_n, in units of the largest box ``box`` (the
    scale of the box rows): (a_n - box_n)_+ box / max(box_n, min(largest, box)), each excess relative to
    its own box, or to the largest multiplier (``largest``, by default of ``multipliers``; at most the
    largest box, so that a multiplier 1.3 in a box of 1 is 0.3 over, not 0.3 / 1.3) where that is larger: an
    excess on a box far below the other multipliers moves the outputs by that share of them (OSQP's
    multipliers overshoot boxes of 5e-8 by 1e-11 next to multipliers of 0.05). Relative to the largest
    box alone, boxes as different as class weights 1e-6 and 1e6 make them hid the small ones: multipliers
    twice the optimal ones, 2e-6 in a box of 1e-6, were 1e-12 of the scale and passed."""
    box_n = np.asarray(box_n, dtype=np.float64)
    largest = float(np.max(np.abs(multipliers), initial=0.0)) if largest is None else largest
    return np.maximum(multipliers - box_n, 0.0) * (box / np.maximum(box_n, min(largest, box)))


def sum_scale(multipliers: Array, box: float) -> float:
    """The scale of a balance row sum_n y_n a_n = 0: sum_n |a_n|, and at least ``BOUND_TOL`` of a finite box
    (multipliers of 1e-20 on a box of 10, the optimum a = 0 of a wide tube, are zeros, not a scale: relative
    to their own sum that answer failed); 1 where every a_n is 0 and the box is infinite."""
    total = float(np.sum(np.abs(multipliers)))
    return max(total, BOUND_TOL * float(box)) if np.isfinite(box) else total or 1.0


def bound_tol_of(solution: "Solution") -> float:
    """The bound tolerance that tells a solution's support and its points' cases (Result 7.6):
    ``SMO_BOUND_TOL`` for the SMO's, ``BOUND_TOL`` for any other."""
    return SMO_BOUND_TOL if getattr(solution, "method", None) == "smo" else BOUND_TOL


@dataclass(frozen=True)
class FeatureSpace:
    """Features of the training points used by the primals: K ~= F F^T.

    ``kind`` is ``"explicit"`` (the kernel's finite map, Linear and
    Polynomial) or ``"empirical"`` (``kernels.feature_map``).
    """

    F: Array
    kind: str
    min_eigenvalue: float
    expansion: Callable[[Array], Array]

    @property
    def rank(self) -> int:
        return int(self.F.shape[1])

    @cached_property
    def dense(self) -> Array:
        """F as a dense array (F is CSR for the linear kernel on a sparse X; its width is at most N
        where it is explicit, so that this costs no more than the Gram matrix a dual would need)."""
        return to_dense(self.F)


#: The cases of Result 7.6's table, in order, for each kind of machine (and the
#: regression and novelty analogues: inside, on or outside the tube or boundary).
CATEGORY_NAMES: dict[str, tuple[str, ...]] = {
    "classification": ("not a support vector", "on the margin", "inside the margin", "misclassified"),
    "regression": ("inside the tube", "on the tube", "outside the tube"),
    "novelty": ("inside", "on the boundary", "outside"),
}

STATIONARITY = "stationarity"
PRIMAL = "primal feasibility"
DUAL = "dual feasibility"
SLACKNESS = "complementary slackness"


@dataclass(frozen=True, init=False)
class Condition:
    """One KKT condition of a machine, evaluated: violation >= 0 per point (or one number).

    ``scale`` is the natural size of the quantity (the box C for multipliers, the
    margin for outputs), so violation / scale is a relative violation.
    """

    tag: str
    kind: str
    text: str
    violation: Any
    scale: float

    def __init__(self, tag: str, kind: str, text: str, violation: Any, scale: float) -> None:
        # the frozen dataclass's __init__ sets each field through object.__setattr__: 1.3 against 0.6 us, and a
        # certificate builds about ten (the fields as it would store them)
        fields = self.__dict__
        fields["tag"], fields["kind"], fields["text"], fields["violation"], fields["scale"] = \
            tag, kind, text, violation, scale


@dataclass(frozen=True)
class KKTState:
    """A solution's primal point and multipliers, as the KKT conditions use them.

    ``g`` is w^T phi(x_n): from the primal's w where a primal solve gave it,
    else from the expansion K u; ``norm2`` is ||w||^2 likewise. ``w_given``
    says which, and ``recovered`` lists the quantities obtained by the notes'
    formulas rather than by the solver.
    """

    a: Array
    a_hat: Array | None
    z: Array
    u: Array
    Ku: Array
    g: Array
    norm2: float
    b: float
    rho: float
    epsilon: float
    R2: float
    xi: Array | None
    xi_hat: Array | None
    w_given: bool
    recovered: tuple[str, ...]


class Formulation:
    """A machine's problem as a plain cvxpy problem.

    Attributes
    ----------
    problem : cvxpy.Problem
    variables : dict[str, cvxpy.Variable]
        Keyed by the book's names (``"w"``, ``"b"``, ``"xi"``, ``"a"``, ...).
    constraints : dict[str, Constraint or tuple of Constraint]
        Keyed by equation tag (``"(7.33)"``); a box 0 <= a <= C is the pair
        (lower, upper). Constraints the notes do not number are keyed by a
        short name (``"margin"``, ``"xi>=0"``).
    parameters : dict[str, cvxpy.Parameter]
        Hyperparameters (and derived ones such as ``"1/(nu N)"``). They are the
        truth while you hold them: a value you set on a hyperparameter's own
        Parameter (``f.parameters["C"].value = 4.0``) is taken into the machine
        at the next ``solve`` (as ``machine.set_params(C=4.0)``), so that the
        Solution, its recovered slacks and its KKT check all use it; a change
        made through ``machine.set_params`` since the last solve is pushed into
        the Parameters. Derived Parameters are read-only: setting one raises
        ValidationError naming the hyperparameter to set instead. Either way a
        re-solve reuses cvxpy's compiled problem.
    kind : {"primal", "dual", "hinge"}
    quadratic_form : {"psd_wrap", "factor", "features"}
        How the quadratic term is stated.
    """

    def __init__(
        self,
        machine: "Machine",
        kind: str,
        problem: cp.Problem,
        variables: dict[str, cp.Variable],
        constraints: dict[str, Any],
        parameters: dict[str, cp.Parameter],
        quadratic_form: str,
        solver_defaults: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        self.machine = machine
        self.kind = kind
        self.problem = problem
        self.variables = variables
        self.constraints = constraints
        self.parameters = parameters
        self.quadratic_form = quadratic_form
        self.solver_defaults = {**SOLVER_DEFAULTS, **(solver_defaults or {})}
        self._pushed = self._values()

    def _values(self) -> dict[str, Any]:
        return {key: np.array(p.value, copy=True) for key, p in self.parameters.items()}

    def _synchronise(self) -> None:
        """Parameters the user set since the last solve go into the machine; then the machine's
        values (derived ones included) go into every Parameter."""
        if all(f is not self for f in self.machine._formulations.values()):
            raise ValidationError(
                f"formulation must be the machine's current {self.kind}; got one that set_params replaced (the "
                f"box changed between one C and per-point boxes): build it again with machine.{self.kind}()")
        changed = {key for key, p in self.parameters.items()
                   if not np.array_equal(np.asarray(p.value), self._pushed[key])}
        derived = sorted(changed - set(self.machine._hyper_names))
        if derived:
            raise ValidationError(
                f"parameters must be set through the hyperparameters {list(self.machine._hyper_names)} (their own "
                f"Parameters or machine.set_params); got a change of the derived {derived}")
        if changed:
            self.machine.set_params(**{key: float(self.parameters[key].value) for key in changed})
        self.machine._push_parameters(self.parameters)
        self._pushed = self._values()

    def __repr__(self) -> str:
        return (
            f"Formulation({self.machine.__class__.__name__}, {self.kind}, "
            f"constraints={list(self.constraints)}, parameters={list(self.parameters)})"
        )

    def solve(self, solver: str = "CLARABEL", **opts: Any) -> Solution:
        """Solve with any installed cvxpy solver; ``opts`` go to the solver."""
        if not isinstance(solver, str) or solver.upper() not in cp.installed_solvers():
            raise ValidationError(
                f"solver must be one of the installed cvxpy solvers {cp.installed_solvers()}; got {solver!r}"
            )
        solver = solver.upper()
        self._synchronise()
        options = {**self.solver_defaults.get(solver, {}), **opts}
        start = time.perf_counter()
        try:
            # cvxpy's generic "may be inaccurate" warning; _check_status issues ours
            with ignored("Solution may be inaccurate", UserWarning):
                self.problem.solve(solver=solver, **options)
        except TypeError as exc:  # cvxpy's Clarabel interface refuses a setting it does not know so
            if not opts:
                raise
            raise ValidationError(f"the options of {solver} must be settings it takes, with values of their "
                                  f"types; got {sorted(opts)}: {exc}") from None
        except (cp.error.SolverError, ValueError) as exc:
            # OSQP's words for the same: a SolverError on a first solve, a ValueError from the update of the
            # settings of the solver cvxpy keeps from an earlier solve
            if opts and "Unrecognized settings" in str(exc):
                raise ValidationError(f"the options of {solver} must be settings it takes; got {sorted(opts)}: "
                                      f"{exc}") from None
            if opts and _settings_refused(solver, exc):
                raise osqp_settings_error(opts) from None
            if not isinstance(exc, cp.error.SolverError):
                raise
            if "cannot solve this problem" in str(exc):     # cvxpy's words for a problem outside the solver's class
                raise self._solver_class_error(solver) from None
            raise SolverError(f"{solver} failed on the {self.kind} of {self.machine.name}: {exc}",
                              status="solver_error", solver=solver) from exc
        except Exception as exc:  # OSQP's own OSQPException, raised bare where cvxpy updates a kept solver
            if opts and _settings_refused(solver, exc):
                raise osqp_settings_error(opts) from None
            if opts and isinstance(exc, OverflowError):   # Clarabel's max_iter = -3: beyond its integer type
                raise ValidationError(f"the options of {solver} must be settings it takes, with values in the "
                                      f"range of their types; got {opts!r:.200}: {exc}") from None
            raise
        wall = time.perf_counter() - start
        has_values = all(v.value is not None for v in self.problem.variables())
        stats = self.problem.solver_stats
        from .solve import certify, cvxpy_outcome, matched_tol, method_name, refuse

        outcome = cvxpy_outcome(self.problem.status, has_values)
        refuse(self.machine, outcome, self.problem.status, self.kind, solver)
        compile_time = float(getattr(self.problem, "compilation_time", 0.0) or 0.0)
        solve_time = float(stats.solve_time) if stats.solve_time is not None else wall - compile_time
        info = dict(solver=solver, status=self.problem.status,
                    iterations=int(stats.num_iters or 0), solve_time=solve_time,
                    compile_time=compile_time)
        sol = self.machine._solution_from_formulation(self, info)
        return certify(self.machine, sol, outcome, self.kind, solver, matched_tol(self.machine, method_name(sol)))

    def _solver_class_error(self, solver: str) -> ValidationError:
        """The ValidationError for a solver whose class of problems excludes this one: a QP solver (OSQP)
        on SVDD's primal, whose constraints ||phi(x_n) - c||^2 <= R^2 + xi_n are second-order cones."""
        from cvxpy.constraints import SOC
        from cvxpy.reductions.solvers.defines import QP_SOLVERS, SOLVER_MAP_CONIC

        qp = self.problem.is_qp()
        able = [name for name in cp.installed_solvers() if (qp and name in QP_SOLVERS)
                or SOC in getattr(SOLVER_MAP_CONIC.get(name), "SUPPORTED_CONSTRAINTS", ())]
        what = "a quadratic program" if qp else "not a quadratic program (it has cone constraints)"
        return ValidationError(f"solver must be an installed cvxpy solver that takes the {self.kind} of "
                               f"{self.machine.name}, {what}: one of {able}; got {solver!r}")


def _settings_refused(solver: str, exc: BaseException) -> bool:
    """Whether ``exc`` is OSQP's refusal of its settings (``direct.osqp_refused_settings``), raised bare or
    wrapped by cvxpy in a SolverError (on a first solve, at the solver's setup)."""
    inner = exc.__context__ if isinstance(exc, cp.error.SolverError) else exc
    return solver == "OSQP" and inner is not None and osqp_refused_settings(inner)


#: Rows of a precomputed Gram matrix compared with its columns at a time (``_check_symmetric``).
SYMMETRY_BLOCK = 512


def _check_symmetric(K: Array, tol: float) -> None:
    """A ValidationError naming X where a precomputed Gram matrix is not symmetric beyond ``tol`` of its
    largest value: k(x_n, x_m) = k(x_m, x_n) for every kernel, and the dual's a^T K a and its gradient K a
    (the SMO's rows) would state two different problems (X is dense here: a Gram matrix is made dense)."""
    largest = max(float(K.max()), -float(K.min()))
    for start in range(0, K.shape[0], SYMMETRY_BLOCK):        # row blocks: no N x N temporary
        block = np.abs(K[start:start + SYMMETRY_BLOCK] - K[:, start:start + SYMMETRY_BLOCK].T)
        if not float(block.max()) > tol * largest:
            continue
        i, j = np.unravel_index(int(np.argmax(block)), block.shape)
        i += start
        raise ValidationError(
            f"X must be a symmetric Gram matrix for a precomputed kernel (|K_nm - K_mn| <= {tol:g} * max |K|); "
            f"got K[{i}, {j}] = {K[i, j]:.6g} against K[{j}, {i}] = {K[j, i]:.6g} (largest |K| {largest:.3g})")


def _finite_gram(kernel: Kernel, X: Any) -> Array:
    """kernel(X, X), a ValidationError naming the kernel where its values overflow
    (``kernels.check_finite_values``), without numpy's warning first."""
    with np.errstate(over="ignore", invalid="ignore"):
        K = kernel(X, X)
    check_finite_values(kernel, K)
    return K


def _gone() -> None:
    """The weak reference of a machine that no longer exists."""
    return None


class _MachineGram:
    """``machine.gram`` for its QP, which the machine keeps: not the bound method, whose reference to the
    machine made a cycle (machine, QP, method) that kept a dropped machine, its X and its Gram matrix
    until the cyclic collector ran (a multiclass fit drops each pair's machine once solved). The QP
    refers to the machine weakly; one that outlives it computes the kernel matrix itself. It pickles
    (and copies) as a reference to the machine, weak again once restored."""

    __slots__ = ("_machine", "_kernel", "_X")

    def __init__(self, machine: "Machine | None", kernel: Kernel, X: Array) -> None:
        # None: a QP pickled after its machine was gone (``__reduce__``) computes the matrix itself
        self._machine = _gone if machine is None else weakref.ref(machine)
        self._kernel, self._X = kernel, X

    def __call__(self) -> Array:
        machine = self._machine()
        return _finite_gram(self._kernel, self._X) if machine is None else machine.gram()

    def __reduce__(self) -> tuple[Any, ...]:
        return _MachineGram, (self._machine(), self._kernel, self._X)


class Machine(abc.ABC):
    """The public base of a machine: subclass it, declare the items below, and every
    method (``formulations.solve``), ``duality.check``, ``categories``, ``compare``
    and the estimators work with it.

    What a machine must implement (abstract here):

    ``_check_targets(t)``
        The validated targets (None for novelty machines).
    ``_set_hyper(**params)`` and ``parameter_values()``
        Store the validated hyperparameters (``_hyper_names``); the values of
        every cvxpy Parameter, derived ones included.
    ``_build_primal(F)`` and ``_build_dual(quad, form)``
        The cvxpy problems as ``Formulation`` s, constraints keyed by equation tag.
    ``_standard_qp()``
        The dual as a ``StandardQP`` (Q, p, y, box, equalities, optional diagonal).
    ``_from_rho(rho, z, u, Ku)``, ``_slacks(u, Ku, fields)``, ``_primal_value(norm2, fields, slacks)``,
    ``_dual_value(z, u, Ku)``
        The notes' recovery formulas: b (rho, epsilon, R^2) from LIBSVM's rho,
        the smallest feasible slacks, the primal objective, the dual objective.
    ``_solution_from_primal(f, info)``
        A Solution from a solved primal (multipliers read from its constraints' duals).
    ``kkt_conditions(state)``
        Every KKT condition, each a ``Condition`` with its equation tag.

    A machine holds the caller's X by reference, not a copy (its targets and weights are its own
    copies), and refuses to be solved or checked once that array has been changed in place
    (``check_unchanged``): what it computed from the old values would sit beside the new ones.

    What a machine may declare (defaults here):

    ``name``, ``cli_name`` (the command line's and the demo's name), ``demo_label``, ``task``
    ("classification", "regression" or "novelty"; it sets ``category_names``),
    ``_recovery`` (what the notes' formulas supply for a dual solve),
    ``libsvm_twin`` and the ``libsvm_*`` hooks (see ``formulations.libsvm``), ``libsvm_svm_type``
    (a LIBSVM model file's name of the problem) and ``libsvm_decision_factor(solution)`` (LIBSVM's
    decision value over the notes', see ``libsvm_model``), ``_scalars`` and ``_rho_from_scalars``
    (the scalars ``solution`` takes beside the multipliers, default b, and their map to LIBSVM's rho),
    ``libsvm_scale`` (LIBSVM's multipliers over the notes'), ``primal_tol``
    (the KKT tolerance matched to a Clarabel solve of its primal),
    ``margin_level(solution)`` (the value of t y(x) on the margin),
    ``_infeasible(status, kind, solver)`` (raise InfeasibleError where a
    solver's infeasibility status proves that the problem has no solution).
    """

    name: ClassVar[str] = "Machine"
    #: command-line name (also the demo's)
    cli_name: ClassVar[str] = ""
    #: the demo page's name for it ("" keeps it off the page)
    demo_label: ClassVar[str] = ""
    #: "classification", "regression" or "novelty"
    task: ClassVar[str] = "classification"
    #: scikit-learn's class (in ``sklearn.svm``) that solves the same problem with LIBSVM, if any
    libsvm_twin: ClassVar[str | None] = None
    #: LIBSVM's own name of the problem (a model file's ``svm_type``), if it solves it
    libsvm_svm_type: ClassVar[str | None] = None
    #: KKT tolerance matched to a Clarabel solve of the primal (a second-order cone primal is
    #: solved to Clarabel's default accuracy only)
    primal_tol: ClassVar[float] = 1e-6
    #: the dual states its quadratic term as a factor when rank(F) <= this * N
    _factor_rank_ratio: ClassVar[float] = 0.25

    def __init__(self, X: ArrayLike, t: ArrayLike | None, kernel: Kernel | str, psd_tol: float = 1e-8) -> None:
        self._qp: StandardQP | None = None
        self.kernel = make_kernel(kernel)
        precomputed = self.kernel.name == "precomputed"
        # a sparse X stays sparse (CSR); a Gram matrix is dense by nature
        self.X = check_matrix(to_dense(X) if precomputed and issparse(X) else X, "X", square=precomputed,
                              sparse=True)
        self.t = self._check_targets(t)
        self._X_digest = None if frozen(self.X) else digest(self.X)   # held by reference: ``check_unchanged``
        self.psd_tol = float(check_param("psd_tol", psd_tol))
        if precomputed:
            _check_symmetric(self.X, self.psd_tol)
        self.N = int(self.X.shape[0])
        self._formulations: dict[str, Formulation] = {}
        self._gram_cache: Array | None = None
        if not self.kernel.always_psd:
            self._check_psd_at_construction()

    def __getstate__(self) -> dict[str, Any]:
        """A machine pickles without its cvxpy problems (they hold the solvers' own objects, which
        do not pickle) and without its Gram matrix (N x N, where X is N x D); they are built again on
        first use."""
        state = dict(self.__dict__)
        state["_formulations"] = {}
        state["_gram_cache"] = None
        return state

    def _drop_gram(self) -> None:
        """Forget the Gram matrix held since ``gram`` computed it (at construction, for the eigenvalue
        check of a kernel that is not PSD in general): a fitted estimator keeps its machine, which
        need not hold N x N numbers; ``gram`` computes it again where asked."""
        self._gram_cache = None

    # -- data -----------------------------------------------------------------
    def check_unchanged(self) -> None:
        """A ValidationError naming X where the array this machine was built on has been changed in place
        since (its CRC-32, taken at construction, differs).

        A machine holds its X by reference, not a copy (it can be as large as the data; its targets and
        weights are its own copies), and keeps what it computed from X when first asked (the QP, the Gram
        matrix, the feature space, the scales): after a change in place it would be two problems at
        once. ``formulations.solve``, ``duality.check``, ``categories`` and ``gap`` call this first; build
        a new machine on the new values (or build it on ``X.copy()`` to change X afterwards)."""
        expected = self.__dict__.get("_X_digest")
        if expected is not None and digest(self.X) != expected:
            raise ValidationError(
                f"X, the array this {self.name} was built on, has been changed in place since (its CRC-32 "
                f"differs): the machine holds it by reference, not a copy, beside what it computed from the "
                f"old values, and would no longer be one problem; build a new machine on the new X, or build "
                f"it on a copy (X.copy()) to change X afterwards")

    @abc.abstractmethod
    def _check_targets(self, t: ArrayLike | None) -> Array | None:
        """The validated targets (None for a novelty machine)."""

    @property
    def category_names(self) -> tuple[str, ...]:
        """The cases of Result 7.6's table (or its regression and novelty analogues), in order."""
        return CATEGORY_NAMES[self.task]

    def margin_level(self, solution: Solution) -> float:
        """The value of t_n y(x_n) on the margin: 1 (nu-SVC: rho)."""
        return 1.0

    def gram(self) -> Array:
        """The N x N kernel matrix (computed once); a ValidationError naming the kernel where its values
        overflow (``kernels.check_finite_values``), without numpy's warning first."""
        if self._gram_cache is None:
            self._gram_cache = _finite_gram(self.kernel, self.X)
        return self._gram_cache

    def _check_psd_at_construction(self) -> None:
        """Record the Gram matrix's extreme eigenvalues (``eigenvalue_range``) for a kernel that is
        not PSD in general; a non-PSD one is refused later, by the methods that need convexity."""
        if self.N > PSD_CHECK_MAX_N:
            warnings.warn(
                f"kernel {self.kernel!r} is not positive semidefinite in general and N = {self.N} "
                f"is above {PSD_CHECK_MAX_N}: its Gram matrix was not eigen-checked",
                UserWarning, stacklevel=3)
            return
        K = self.gram()
        lam = np.linalg.eigvalsh((K + K.T) / 2)
        self.eigenvalue_range = (float(lam[0]), float(lam[-1]))

    #: (smallest, largest) eigenvalue of the Gram matrix where it was checked (kernels that are not
    #: PSD in general, N <= PSD_CHECK_MAX_N); None otherwise
    eigenvalue_range: tuple[float, float] | None = None

    @property
    def convex(self) -> bool | None:
        """Whether the dual is convex: True for a kernel that is always PSD or whose Gram matrix
        passed the eigenvalue check, False where an eigenvalue is below ``-psd_tol * max(1,
        largest)``, None where it was not checked (N above PSD_CHECK_MAX_N)."""
        if self.kernel.always_psd:
            return True
        if self.eigenvalue_range is None:
            return None
        lam_min, lam_max = self.eigenvalue_range
        return not lam_min < -self.psd_tol * max(1.0, abs(lam_max))

    def require_convex(self, method: str) -> None:
        """Raise ValidationError, naming the smallest eigenvalue, if ``method`` (one that needs a
        convex problem: cvxpy, the direct QP) is asked to solve a dual that is not convex."""
        if self.convex is False:
            self._raise_if_not_psd(*self.eigenvalue_range, method=method)

    def _raise_if_not_psd(self, lam_min: float, lam_max: float, method: str = "the cvxpy formulations") -> None:
        if lam_min < -self.psd_tol * max(1.0, abs(lam_max)):
            raise ValidationError(
                f"kernel must be positive semidefinite on X for {method} (smallest eigenvalue of "
                f"the Gram matrix >= -{self.psd_tol:g} * max(1, largest)); got smallest eigenvalue "
                f"{lam_min:.3e} (largest {lam_max:.3e}) for {self.kernel!r}. The problem is not "
                f"convex: method='smo' or 'libsvm' finds a KKT point of it, as LIBSVM does"
            )

    def warn_if_not_convex(self, method: str) -> None:
        """The NonConvexWarning of a method (the SMO, LIBSVM) that solves a dual that is not convex."""
        if self.convex is False:
            lam_min, lam_max = self.eigenvalue_range
            warn(
                f"the kernel matrix of {self.name} with {self.kernel!r} is not positive semidefinite "
                f"(smallest eigenvalue {lam_min:.3e}, largest {lam_max:.3e}): the dual is not convex, and "
                f"{method} returns a KKT point, not a certified optimum (its report says so)",
                NonConvexWarning, stacklevel=4)

    @cached_property
    def feature_space(self) -> FeatureSpace:
        """Explicit features when the kernel has a finite map no wider than N, else L of K ~= L L^T."""
        D = self.X.shape[1]
        if self.kernel.has_features and 0 < self.kernel.feature_dimension(D) <= self.N:
            F = self.kernel.features(self.X)
            expansion = _least_squares_expansion(F)
            return FeatureSpace(F, "explicit", 0.0, expansion)
        fm = feature_map(self.gram(), tol=1e-10, method="eigh" if self.N <= 3000 else "cholesky")
        self._raise_if_not_psd(fm.min_eigenvalue, fm.max_eigenvalue)
        return FeatureSpace(fm.L, "empirical", fm.min_eigenvalue, fm.expansion)

    # -- hyperparameters ----------------------------------------------------------
    _hyper_names: ClassVar[tuple[str, ...]] = ()

    def get_params(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self._hyper_names}

    def set_params(self, **params: Any) -> "Machine":
        """Change hyperparameters; cached cvxpy problems are re-solved without recompiling."""
        unknown = set(params) - set(self._hyper_names)
        if unknown:
            raise ValidationError(
                f"parameters must be among {list(self._hyper_names)}; got {sorted(unknown)}"
            )
        merged = {**self.get_params(), **params}
        self._set_hyper(**merged)
        self._qp = None
        return self

    @abc.abstractmethod
    def _set_hyper(self, **params: Any) -> None:
        """Validate and store the hyperparameters named in ``_hyper_names``."""

    @abc.abstractmethod
    def parameter_values(self) -> dict[str, Any]:
        """Values of every cvxpy Parameter, derived ones included."""

    def _push_parameters(self, parameters: dict[str, cp.Parameter]) -> None:
        values = self.parameter_values()
        for key, param in parameters.items():
            param.value = values[key]

    def _parameters(self, names: tuple[str, ...]) -> dict[str, cp.Parameter]:
        """The formulation's Parameters ``names``, holding the machine's values, each checked as it is assigned
        (``hyperparameter.HyperParameter``: a negative C is refused naming C, not as cvxpy's 'Parameter value
        must be nonnegative.')."""
        from .hyperparameter import hyperparameter

        values = self.parameter_values()
        return {key: hyperparameter(key, values[key]) for key in names}

    # -- formulations -----------------------------------------------------------
    def primal(self) -> Formulation:
        """The primal problem in feature space (explicit or empirical features)."""
        self.require_convex("the cvxpy primal")
        if "primal" not in self._formulations:
            self._formulations["primal"] = self._build_primal(self.feature_space.dense)
        return self._formulations["primal"]

    def dual(self, form: str = "auto") -> Formulation:
        """The dual problem; ``form`` picks how its quadratic term is stated.

        ``"psd_wrap"``: quad_form with the Gram matrix wrapped as PSD (after
        this library's own eigenvalue check); ``"factor"``: the sum of squares
        of F^T coef with K = F F^T; ``"auto"``: the factor when its rank is at
        most a quarter of N (low-rank kernels), else psd_wrap.
        """
        self.require_convex("the cvxpy dual")
        if form == "auto":
            fs = self.feature_space
            form = "factor" if fs.rank <= self._factor_rank_ratio * self.N else "psd_wrap"
        if form not in ("psd_wrap", "factor"):
            raise ValidationError(f"form must be 'auto', 'psd_wrap' or 'factor'; got {form!r}")
        key = "dual-" + form
        if key not in self._formulations:
            self._formulations[key] = self._build_dual(self._quadratic(form), form)
        return self._formulations[key]

    def _quadratic(self, form: str) -> Callable[[cp.Expression], cp.Expression]:
        """u -> u^T K u as a cvxpy expression, in the chosen form."""
        if form == "factor":
            F = self.feature_space.dense
            return lambda u: cp.sum_squares(F.T @ u)
        fs = self.feature_space  # runs the definiteness check once
        del fs
        K = self.gram()
        return lambda u: cp.quad_form(u, cp.psd_wrap(K))

    @abc.abstractmethod
    def _build_primal(self, F: Array) -> Formulation:
        """The primal as a Formulation, in feature space F (K ~= F F^T)."""

    @abc.abstractmethod
    def _build_dual(self, quad: Callable[[cp.Expression], cp.Expression], form: str) -> Formulation:
        """The dual as a Formulation; ``quad(u)`` is u^T K u as a cvxpy expression."""

    def standard_qp(self) -> StandardQP:
        """The dual as a StandardQP (built once per set of hyperparameters); its ``tol_scale``
        is ``qp.scale * output_scale``, the gradient's unit in which a tolerance is relative."""
        if self._qp is None:
            qp = self._standard_qp()
            # a copy with the machine's unit and Gram matrix, its other fields shared (frozen): dataclasses.replace
            # ran StandardQP's __init__ again, 5.6 against 0.9 us a solve
            own = object.__new__(type(qp))
            own.__dict__.update(qp.__dict__, tol_scale=float(qp.scale) * self.output_scale,
                                gram=_MachineGram(self, self.kernel, self.X))
            self._qp = own
        return self._qp

    # -- scales: what a relative tolerance is relative to ---------------------------------
    @property
    def output_scale(self) -> float:
        """The unit of the outputs w^T phi(x_n) in which KKT violations are measured.

        One definition for every method: the SMO stops when its violation is
        below ``tol * output_scale`` (times the QP's factor on K), and the KKT
        report divides each output row by it, so that ``tol`` is relative. The
        margin machines (hard and soft margin) fix the margin at 1: that is
        their unit. The others override it with the size of what their outputs
        are compared with: the data's spread in feature space (SVDD; nu times it
        for nu-SVC), the kernel's mean ``kernel_mean`` or the spread where smaller (one-class), the targets'
        spread (regression).
        Multiplying the kernel or the targets by a constant multiplies it alike.
        """
        return 1.0

    def solved_output_scale(self, estimate: RhoEstimate) -> float:
        """The outputs' unit at the solution of the StandardQP whose LIBSVM rho (and r) is ``estimate``:
        ``output_scale``, except for a machine whose outputs are known to be of the size of its margin
        level only once solved (nu-SVC, the one-class SVM)."""
        return self.output_scale

    @cached_property
    def kernel_diagonal_max(self) -> float:
        """max_n |k(x_n, x_n)| (1 where it is 0)."""
        return _positive(self.kernel.diag_max(self.X))

    @cached_property
    def kernel_entry_error(self) -> float:
        """A bound on the rounding of one kernel value as the solvers compute it, beyond eps max k(x, x).

        0 except for the RBF, whose exponent -gamma ||x - x'||^2 is computed from products,
        z^T z' + s + s' with |z|^2 = 2 gamma ||x - m||^2 and s = -gamma ||x - m||^2
        (``kernel_cache.RBFOperands``; m the mean for a dense X, 0 for a sparse one): it cancels from
        terms of size 2 gamma R^2 (R = max_n ||x_n - m||), so a value k, at most 1, is off by about
        4 eps gamma R^2 (the diagonal k(x, x) = 1 comes out as exp(-that)). Fuzzed: gamma = 1e14 on 12
        normal points, a Gram matrix that is the identity in double precision, gave k(x, x) ~ 0.95 and
        decision values of -0.91 where LIBSVM's are -1, with the certificate passing on those same
        values; at gamma = 1e20 a quarter of the training points were misclassified.

        Where that product's rounding (``kernels.product_rounding``) exceeds ``DIRECT_EXPONENT_ROUNDING``
        on a dense X (or a sparse one: ``kernels.sparse_rbf``), every path (the SMO's rows, the Gram matrix, the products K u) sums the exponent
        from the differences, or forms a product only where its own rounding is below that: the bound is
        then ``DIRECT_EXPONENT_ROUNDING`` (the fuzzed case is now exact, and certified).
        """
        if self.kernel.name != "rbf" or self.X is None:
            return 0.0
        if issparse(self.X):
            # a sparse X's rows are uncentred products where their rounding is within DIRECT_EXPONENT_ROUNDING,
            # else centred or summed from the differences (``kernels.sparse_rbf``, the SMO's rows alike)
            if sparse_product_rounding(self.X, float(self.kernel.gamma)) > DIRECT_EXPONENT_ROUNDING:
                return DIRECT_EXPONENT_ROUNDING
            radius2 = float(np.max(row_squared_norms(self.X), initial=0.0))
        else:
            # ||x - m||^2 = ||x||^2 - 2 x^T m + ||m||^2 by two matrix-vector products, no centred copy (a
            # bound to a digit is enough; 20 against 70 us at 360 x 64, the one-versus-one pairs of digits)
            X = np.asarray(self.X, dtype=np.float64)
            m = np.ones(X.shape[0]) @ X / max(X.shape[0], 1)
            squares = np.einsum("ij,ij->i", X, X) - 2.0 * (X @ m) + float(m @ m)
            radius2 = max(float(np.max(squares, initial=0.0)), 0.0)
        reach = float(self.kernel.gamma) * radius2
        if not issparse(self.X) and product_rounding(self.X.shape[1], reach) > DIRECT_EXPONENT_ROUNDING:
            return DIRECT_EXPONENT_ROUNDING
        return 4.0 * float(np.finfo(np.float64).eps) * reach

    @cached_property
    def kernel_spread(self) -> float:
        """The data's variance in feature space: mean_n k(x_n, x_n) - mean_nm k(x_n, x_m).

        It is (1/N) sum_n ||phi(x_n) - mean phi||^2, unchanged by a shift of the
        features, and estimated on at most ``SPREAD_POINTS`` evenly spaced points.
        Where it vanishes (all points alike in feature space) the diagonal's size
        is used.
        """
        diagonal_mean, kernel_mean = self._kernel_means
        spread = diagonal_mean - kernel_mean
        if not spread > 1e-14 * self.kernel_diagonal_max:
            return self.kernel_diagonal_max
        return spread

    @cached_property
    def kernel_mean(self) -> float:
        """mean_nm k(x_n, x_m) = ||mean_n phi(x_n)||^2 (estimated as ``kernel_spread`` is): ||w||^2 at the
        uniform weights a_n = 1/N. Where it vanishes against the diagonal (mean phi at the origin to 1e-4
        of the largest ||phi(x_n)||, as a linear kernel on standardised data, mean k ~ 1e-18, where a
        tolerance relative to it would be below the outputs' rounding), max_n k(x_n, x_n)."""
        mean = self._kernel_means[1]
        if not mean > 1e-8 * self.kernel_diagonal_max:
            return self.kernel_diagonal_max
        return mean

    @cached_property
    def _kernel_means(self) -> tuple[float, float]:
        """(mean_n k(x_n, x_n), mean_nm k(x_n, x_m)) on at most ``SPREAD_POINTS`` evenly spaced points
        (``kernel_means``, from the Gram matrix where it is at hand)."""
        if self.kernel.name == "precomputed":
            return kernel_means(self.gram())
        X = self.X[::spread_step(self.N)]
        diagonal, total, count = self.kernel.diag(X), 0.0, X.shape[0] ** 2
        for r0 in range(0, X.shape[0], 256):            # in blocks of rows: little memory
            total += float(np.sum(self.kernel(X[r0:r0 + 256], X)))
        return float(np.mean(diagonal)), total / count

    def zero_box(self, box: float) -> float:
        """The box as the certificate's rows floor their scales by it (``multiplier_scale``, ``sum_scale``):
        at most the multipliers' own scale (``StandardQP.multiplier_unit``), as ``bound_masks`` tells the
        zero solution. Relative to the box alone, a soft margin at C = 1e20 on separable data (multipliers
        of about 1) floored its rows at 1e15 and passed multipliers twice the optimal ones."""
        box = float(box)
        return min(box, self.standard_qp().multiplier_unit) if np.isfinite(box) else box

    @property
    def gap_scale(self) -> float:
        """The size against which the duality gap is relative: output_scale times the sum of the
        finite upper bounds (the gap is at most sum_n box_n times the points' violations in
        output units, so a relative gap is bounded by the rows' relative violations). Where that is beyond
        float64's range (C = 1e308 on 40 points overflowed to inf, with numpy's overflow warning), the largest
        finite float: a smaller scale, so the relative gap is at least the exact one's, never looser."""
        scale = self.output_scale * self.standard_qp().upper_sum      # a Python float: inf where it overflows
        return min(scale, float(np.finfo(np.float64).max))

    @abc.abstractmethod
    def _standard_qp(self) -> StandardQP:
        """Build the StandardQP of the dual."""

    # -- solving ------------------------------------------------------------------
    def solve(self, method: str = "clarabel", **opts: Any) -> Solution:
        """Solve by ``method``: ``formulations.solve.solve(self, method, **opts)``.

        ``"clarabel"``, ``"osqp"`` or any cvxpy solver name: the cvxpy dual;
        ``"primal-<solver>"``: the cvxpy primal; ``"qp-clarabel"``,
        ``"qp-osqp"``: the standard-form dual through the solvers' own APIs;
        ``"smo"``: the hand-written SMO; ``"libsvm"``: LIBSVM through
        scikit-learn. ``opts`` go to the solver.
        """
        from .solve import solve

        return solve(self, method, **opts)

    def _infeasible(self, status: str, kind: str, solver: str) -> None:
        """Raise InfeasibleError if an infeasible/unbounded status means no solution."""

    def _standard_form_solution(self, sol: Solution, method: str, opts: dict[str, Any]) -> Solution:
        """The Solution of a standard-form solve (SMO, direct QP) as the notes' optimum, before its
        certificate; a machine whose standard form can differ from the notes' problem (nu-SVR's
        equality for (7.74)) replaces it here. ``opts`` are the method's options."""
        return sol

    def _infeasibility_proof(self, solution: Solution, solver: str) -> None:
        """Raise InfeasibleError if a solution that fails its certificate proves that the problem
        has no solution (the hard margin: the classes' convex hulls meet); else nothing."""

    # -- from a solved standard QP to a Solution --------------------------------
    def split(self, z: Array) -> tuple[Array, Array | None]:
        """Standard-form variables -> (a, a_hat)."""
        return z, None

    def aggregate(self, z: Array, qp: StandardQP | None = None) -> Array:
        """u = sum over variables of y_i z_i onto their training points (u = coef/scale)."""
        qp = qp or self.standard_qp()
        return np.bincount(qp.index, weights=qp.y * z, minlength=self.N)

    def solution_from_standard(
        self,
        z: Array,
        info: dict[str, Any],
        *,
        rho: RhoEstimate | None = None,
        G: Array | None = None,
        bound_tol: float = BOUND_TOL,
        trace: Any = None,
        at_lower: NDArray[np.bool_] | None = None,
    ) -> Solution:
        """Build the Solution of a standard-form dual solution z.

        b, rho, epsilon or R^2 come from ``rho`` (as the SMO computes it) or
        are recovered from z by the notes' averages over free multipliers,
        with LIBSVM's midpoint fallback when none is free. ``G``, the
        gradient Q z + p when the solver has it, saves the product K u (no
        Gram matrix is formed then); ``at_lower``, the variables of z at their
        lower bounds at ``bound_tol`` (``standard_qp.bound_masks``) when the
        solver has them, saves computing them again for the support.
        """
        qp = self.standard_qp()
        z = np.asarray(z, dtype=np.float64)
        u = self.aggregate(z, qp)
        if G is None:
            Ku = self.kernel_times(u)
        else:
            Ku = np.empty(self.N)
            QKz = np.asarray(G, dtype=np.float64) - qp.p             # scale y o K u + d o z
            if qp.diagonal is not None:
                QKz = QKz - qp.diagonal * z
            Ku[qp.index] = QKz * qp.y / qp.scale
        notes: list[str] = []
        if rho is None:
            rho = self.recover_rho(z, Ku, bound_tol, qp)
        if rho.fallback:
            notes.append("no free multiplier: b taken at the midpoint of its KKT interval")
        fields = self._from_rho(rho, z, u, Ku)
        slacks = self._slacks(u, Ku, fields)
        a, a_hat = self.split(z)
        primal = self._primal_value(float(u @ Ku), fields, slacks)
        dual = self._dual_value(z, u, Ku)
        fs = self._cheap_feature_space()
        w = None if fs is None else fs.F.T @ u
        return self._assemble(a, a_hat, u, fields, slacks, w, primal, dual, info, notes, bound_tol, trace, at_lower)

    # -- a Solution from the user's own multipliers --------------------------------------
    #: the scalars beside the multipliers that fix a solution (``solution`` takes them by name)
    _scalars: ClassVar[tuple[str, ...]] = ("b",)

    def _rho_from_scalars(self, values: Mapping[str, float], aKa: float) -> RhoEstimate:
        """LIBSVM's rho (and r) from the machine's scalars ``_scalars``: the inverse of ``_from_rho``."""
        return RhoEstimate(-float(values["b"]))

    def solution(
        self,
        a: ArrayLike,
        b: float | None = None,
        a_hat: ArrayLike | None = None,
        *,
        rho: float | None = None,
        epsilon: float | None = None,
        R2: float | None = None,
        convention: str = "notes",
        solver: str = "user",
        bound_tol: float = BOUND_TOL,
    ) -> Solution:
        """A Solution from multipliers computed elsewhere (your own solver, a course's answer).

        Nothing is trusted: the multipliers are taken as they are, inside their box or not, so
        that ``duality.check`` reports every condition they break. What is not given is
        recovered by the notes' formulas from ``a``, as for a dual solve: b by (7.18), (7.37) or
        (7.69), nu-SVC's rho and nu-SVR's epsilon from the free multipliers, the one-class rho
        and SVDD's R^2 likewise, with LIBSVM's midpoint of the KKT interval where no multiplier
        is free; w and the slacks xi (xi_hat) always from their formulas ((7.29), (7.45), ...).

        Parameters
        ----------
        a : array (N,)
            ``convention="notes"``: the notes' multipliers a_n (for regression those of (7.53)),
            the coefficients of y(x) being a_n t_n (7.13), a_n - a_hat_n (7.64) or a_n.
            ``convention="libsvm"``: LIBSVM's coefficients over all N points (zero off the
            support), as in a model file's SV lines and scikit-learn's ``dual_coef_``: y_n alpha_n
            (y_n = t_n), alpha_n - alpha*_n for regression, alpha_n for the one-class SVM, in
            LIBSVM's scaling (nu-SVC's divided by its r, the one-class ones summing to nu N).
        b : float, optional
            The intercept of y(x) = sum_n coef_n k(x, x_n) + b (the hard and soft margins, nu-SVC,
            the SVRs).
        a_hat : array (N,), optional
            The multipliers of (7.54) (regression only, notes' convention).
        rho : float, optional
            nu-SVC's margin (Result 7.7) and the one-class SVM's offset (b = -rho), notes'
            convention; with ``convention="libsvm"``, LIBSVM's rho on every machine
            (its decision value is sum_n coef_n k(x, x_n) - rho), given instead of b.
        epsilon : float, optional
            nu-SVR's tube half-width (Result 7.10).
        R2 : float, optional
            SVDD's squared radius.
        convention : {"notes", "libsvm"}
        solver : str
            The name the Solution and its report give the solver.
        bound_tol : float
            A multiplier within this fraction of its box from a bound counts as at the bound
            when the missing scalars are recovered.

        Returns
        -------
        Solution
            method ``"user"`` (``"libsvm"`` in LIBSVM's convention), status ``"given"``.
        """
        if convention not in ("notes", "libsvm"):
            raise fail("convention", "'notes' or 'libsvm'", convention)
        bound_tol = check_bound_tol(bound_tol)
        given = {k: _scalar(k, v) for k, v in (("b", b), ("rho", rho), ("epsilon", epsilon), ("R2", R2))
                 if v is not None}
        if convention == "libsvm":
            z, given = self._from_libsvm_convention(a, a_hat, given)
            method = "libsvm"
        else:
            z, method = self._user_multipliers(a, a_hat), "user"
        unknown = sorted(set(given) - set(self._scalars))
        if unknown:
            raise fail(", ".join(unknown), f"among the scalars of {self.name} {list(self._scalars)} (or None)",
                       {k: given[k] for k in unknown})
        qp = self.standard_qp()
        Ku = self.kernel_times(self.aggregate(z, qp))
        estimate, missing = self._estimate_from_scalars(z, Ku, given, float(bound_tol), qp)
        # the gradient Q z + p from K u, so that solution_from_standard does not form K u again
        G = qp.scale * qp.y * Ku[qp.index] + qp.p + (0.0 if qp.diagonal is None else qp.diagonal * z)
        info = dict(solver=solver, method=method, status="given", iterations=0, solve_time=float("nan"))
        sol = self.solution_from_standard(z, info, rho=estimate, G=G, bound_tol=float(bound_tol))
        # the support as a solve's (solve.support_of_outputs): every multiplier whose omission moves the
        # outputs at the certificate's tolerance, so that y(x) is the expansion the rows check
        from .solve import matched_tol, method_name, support_of_outputs

        sol = support_of_outputs(self, sol, matched_tol(self, method_name(sol)))
        note = (f"given: {', '.join(['a'] + (['a_hat'] if self.task == 'regression' else []) + sorted(given))}"
                + (f"; recovered by the notes' formulas: {', '.join(missing)}" if missing else ""))
        return sol.evolve(notes=sol.notes + (note,))

    def _estimate_from_scalars(self, z: Array, Ku: Array, given: Mapping[str, float], bound_tol: float,
                               qp: StandardQP) -> tuple[RhoEstimate, list[str]]:
        """LIBSVM's rho (and r) from the given scalars, those missing recovered by the notes' averages
        over the free multipliers (``recover_rho``, the midpoint where none is free); and the missing."""
        values, fallback = dict(given), False
        missing = [k for k in self._scalars if k not in given]
        u = self.aggregate(z, qp)
        if missing and qp.is_nu and "b" in given:
            # a nu form's b fixes LIBSVM's rho; the other scalar (its r) is recovered given it
            recovered = RhoEstimate(-given["b"], self.r_given_rho(z, -given["b"], bound_tol, Ku))
        elif missing:
            recovered = self.recover_rho(z, Ku, bound_tol, qp)
        if missing:
            fields = self._from_rho(recovered, z, u, Ku)
            values.update({k: fields[k] for k in missing})
            fallback = recovered.fallback
        return replace(self._rho_from_scalars(values, float(u @ Ku)), fallback=fallback), missing

    def _user_multipliers(self, a: ArrayLike, a_hat: ArrayLike | None) -> Array:
        """z = a (or (a, a_hat)) from the user's arrays: finite, shape (N,) each."""
        z = _vector("a", a, self.N)
        if self.task == "regression":
            if a_hat is None:
                raise fail("a_hat", f"the {self.N} multipliers of (7.54) for {self.name}", None)
            return np.concatenate([z, _vector("a_hat", a_hat, self.N)])
        if a_hat is not None:
            raise fail("a_hat", f"None for {self.name} (only regression has a second set of multipliers)", a_hat)
        return z

    def _from_libsvm_convention(self, coef: ArrayLike, a_hat: ArrayLike | None,
                                given: dict[str, float]) -> tuple[Array, dict[str, float]]:
        """(z, the notes' scalars) from LIBSVM's coefficients and its rho (``libsvm_multipliers``)."""
        if a_hat is not None:
            raise fail("a_hat", "None with convention='libsvm' (its coefficient is alpha - alpha*)", a_hat)
        coef = _vector("a", coef, self.N)
        if "b" in given and "rho" in given:
            raise fail("b", "None when rho is given with convention='libsvm' (b = -rho)", given["b"])
        lib_rho = given.pop("rho", None)
        lib_rho = -given.pop("b") if lib_rho is None and "b" in given else lib_rho
        z, estimate = self.libsvm_multipliers(coef, 0.0 if lib_rho is None else -lib_rho)
        if lib_rho is not None:
            u = self.aggregate(z)
            fields = self._from_rho(estimate, z, u, self.kernel_times(u))
            given = {**{k: fields[k] for k in self._scalars if not np.isnan(fields.get(k, np.nan))}, **given}
        return z, given

    def r_given_rho(self, z: Array, rho: float, bound_tol: float = BOUND_TOL, Ku: Array | None = None) -> float:
        """A nu form's r (nu-SVC's margin rho, minus nu-SVR's epsilon) consistent with LIBSVM's rho.

        Solver_NU's two classes have r1 = r + rho (y = +1) and r2 = r - rho (y = -1): each
        variable's G_i - y_i rho equals r where it is free, bounds r from below at its upper
        bound and from above at its lower bound. r is the mean over the free variables, else the
        midpoint of the bounds (``calculate_rho`` on G - y rho). Recovering r apart from a given
        rho would pair it with another point of a KKT interval where one class has no free
        multiplier: a (b, r) that is not a KKT point.
        """
        qp = self.standard_qp()
        Ku = self.kernel_times(self.aggregate(z, qp)) if Ku is None else Ku
        G = qp.scale * qp.y * Ku[qp.index] + qp.p
        at_lower, at_upper = bound_masks(z, qp.lower, qp.upper, bound_tol, qp.multiplier_unit)
        return calculate_rho(np.ones(G.shape[0]), G - qp.y * rho, at_lower, at_upper).rho

    def recover_rho(self, z: Array, Ku: Array, bound_tol: float = BOUND_TOL,
                    qp: StandardQP | None = None) -> RhoEstimate:
        """LIBSVM's rho (and r) from z: averages over the free multipliers, else the midpoint."""
        qp = qp or self.standard_qp()
        return (calculate_rho_nu if qp.is_nu else calculate_rho)(*self._rho_terms(z, Ku, bound_tol, qp))

    @staticmethod
    def _rho_terms(z: Array, Ku: Array, bound_tol: float, qp: StandardQP) -> tuple[Array, Array, Any, Any]:
        """The standard form's y, its gradient G = Q z + p from the outputs K u, and the masks of the
        multipliers at their lower and upper bounds: what LIBSVM's rho rules read."""
        G = qp.scale * qp.y * Ku[qp.index] + qp.p
        at_lower, at_upper = bound_masks(z, qp.lower, qp.upper, bound_tol, qp.multiplier_unit)
        return qp.y, G, at_lower, at_upper

    def _cheap_feature_space(self) -> FeatureSpace | None:
        """The feature space if it is already known or explicit, else None (no eigh at large N)."""
        explicit = self.kernel.has_features and self.kernel.feature_dimension(self.X.shape[1]) <= self.N
        return self.feature_space if ("feature_space" in self.__dict__ or explicit) else None

    def kernel_times(self, u: Array) -> Array:
        """K u, from the cached Gram matrix or from the kernel columns where u != 0."""
        if self._gram_cache is not None:
            return self._gram_cache @ u
        nz = np.flatnonzero(u)
        if nz.size == 0:
            return np.zeros(self.N)
        if self.kernel.name == "precomputed":
            return self.X[:, nz] @ u[nz]
        out = np.zeros(self.N)
        X_nz, u_nz = self.X[nz], u[nz]
        rows = max(KERNEL_TIMES_MIN_ROWS, KERNEL_TIMES_ENTRIES // nz.size)   # a block of at most 4 MiB
        for start in range(0, self.N, rows):
            block = slice(start, min(start + rows, self.N))
            out[block] = self.kernel(self.X[block], X_nz) @ u_nz
        return out

    def _assemble(self, a, a_hat, u, fields, slacks, w, primal, dual, info, notes, bound_tol, trace,
                  at_lower=None) -> Solution:
        support = self._support(a, a_hat, bound_tol, at_lower)
        coef_scale = fields.pop("coef_scale", 1.0)
        coef = coef_scale * u
        support.flags.writeable = coef.flags.writeable = False     # new here: the Solution need not copy them
        # the rows, read-only as taken (a Solution would copy writeable ones a second time)
        sv = None if self.kernel.name == "precomputed" else read_only_rows(self.X, support)
        return Solution(
            machine=self.name, a=a, a_hat=a_hat, coef=coef, support=support,
            kernel=self.kernel, support_vectors=sv, n_train=self.N,
            primal_objective=float(primal), dual_objective=float(dual), w=w, task=self.task,
            gap_scale=self.gap_scale, output_scale=self.output_scale,
            xi=slacks[0], xi_hat=slacks[1], notes=tuple(notes), trace=trace,
            **fields, **info,
        )

    def _support(self, a: Array, a_hat: Array | None, tol: float,
                 at_lower: NDArray[np.bool_] | None = None) -> NDArray[np.intp]:
        """Points with a multiplier above its lower bound (relative to its own box); ``at_lower``: the
        standard-form variables at their lower bounds at ``tol``, where the caller has them."""
        if at_lower is None:
            qp = self.standard_qp()
            z = a if a_hat is None else np.concatenate([a, a_hat])
            at_lower, _ = bound_masks(z, qp.lower, qp.upper, tol, qp.multiplier_unit)
        above = ~at_lower if a_hat is None else (~at_lower[: self.N]) | (~at_lower[self.N:])
        return above.nonzero()[0]

    @property
    def libsvm_scale(self) -> float:
        """LIBSVM's multipliers over the notes' (N for nu-SVC, nu N for one-class, else 1).

        LIBSVM's gradients, and so its stopping tolerance, are in units this
        many times the notes': for a problem of unit output scale its tol is tol / libsvm_scale here
        (``formulations.solve.libsvm_tol``; the other way, ``libsvm_own_tol``).
        """
        return 1.0

    # -- LIBSVM twin (formulations.libsvm) ---------------------------------------------
    def libsvm_params(self) -> dict[str, Any]:
        """The twin estimator's hyperparameters for this machine, in LIBSVM's units."""
        raise self._no_twin()

    @classmethod
    def from_libsvm(cls, X: ArrayLike, t: ArrayLike | None, kernel: Kernel, params: Mapping[str, Any],
                    sample_weight: ArrayLike | None) -> "Machine":
        """The machine that the twin estimator with hyperparameters ``params`` (C, nu, epsilon,
        class_weight as a dict over the labels -1, +1 or None, in LIBSVM's units) solves on X, t."""
        raise ValidationError(f"machine must have a LIBSVM twin; got {cls.name}")

    def libsvm_multipliers(self, coef: Array, intercept: float) -> tuple[Array, RhoEstimate]:
        """(standard-form z, LIBSVM's rho) from the twin's dual coefficients over all N points."""
        raise self._no_twin()

    def libsvm_decision_factor(self, solution: Solution) -> float:
        """LIBSVM's decision value over the notes' y(x) at ``solution`` (a model file's coefficients
        and rho are the notes' coef and -b times this): 1 (nu-SVC: 1/rho; one-class: nu N)."""
        return 1.0

    def libsvm_no_answer(self) -> str:
        """Why LIBSVM can leave this machine without a finite answer (its rho, or coefficients divided
        by it), for the SolverError of a failed fit; empty where no cause is known."""
        return ""

    def _no_twin(self) -> ValidationError:
        return ValidationError(f"machine must have a LIBSVM twin; got {self.name}")

    def _solution_from_formulation(self, f: Formulation, info: dict[str, Any]) -> Solution:
        info = {**info, "method": f.kind}
        if f.kind == "dual":
            z = self._dual_vector(f)
            return self.solution_from_standard(z, info)
        return self._solution_from_primal(f, info)

    def _from_primal_point(self, z: Array, fields: dict[str, Any], slacks: tuple, w: Array | None,
                           primal: float, info: dict[str, Any], bound_tol: float = BOUND_TOL) -> Solution:
        """Solution of a primal solve: z from the constraint duals, the rest from the primal point."""
        u = self.aggregate(z)
        Ku = self.kernel_times(u)
        a, a_hat = self.split(z)
        dual = self._dual_value(z, u, Ku)
        return self._assemble(a, a_hat, u, fields, slacks, w, primal, dual, info, [], bound_tol, None)

    @staticmethod
    def _read_duals(f: Formulation, key: str) -> Array:
        """The multipliers of a primal's constraint, in the notes' sign (see module docstring)."""
        return np.asarray(f.constraints[key].dual_value, dtype=np.float64)

    def _dual_vector(self, f: Formulation) -> Array:
        v = f.variables
        if "a_hat" in v:
            return np.concatenate([v["a"].value, v["a_hat"].value])
        return np.asarray(v["a"].value, dtype=np.float64)

    # hooks implemented by each machine
    @abc.abstractmethod
    def _from_rho(self, rho: RhoEstimate, z: Array, u: Array, Ku: Array) -> dict[str, Any]:
        """The machine's b (rho, epsilon, R^2) from LIBSVM's rho and r."""

    @abc.abstractmethod
    def _slacks(self, u: Array, Ku: Array, fields: dict[str, Any]) -> tuple[Array | None, Array | None]:
        """The smallest slacks the primal allows at u (xi, xi_hat; None where the machine has none)."""

    @abc.abstractmethod
    def _primal_value(self, norm2: float, fields: dict[str, Any], slacks: tuple) -> float:
        """The primal objective with ||w||^2 = norm2 and the given b, rho, epsilon, R^2 and slacks."""

    @abc.abstractmethod
    def _dual_value(self, z: Array, u: Array, Ku: Array) -> float:
        """The dual objective at standard-form variables z (u = aggregate(z), Ku = K u)."""

    @abc.abstractmethod
    def _solution_from_primal(self, f: Formulation, info: dict[str, Any]) -> Solution:
        """A Solution from a solved primal Formulation."""

    # -- KKT ------------------------------------------------------------------------
    #: what the notes' formulas supply when a solution comes from a dual solve
    _recovery: ClassVar[tuple[str, ...]] = ()
    #: y(x)'s coefficients over the aggregate multipliers: coef = coef_scale u (SVDD: 2)
    coef_scale: ClassVar[float] = 1.0

    def kkt_state(self, sol: Solution, Ku: Array | None = None) -> KKTState:
        """The quantities the KKT conditions need, from any Solution of this machine (``Ku``: the
        outputs K u where the caller has them from the kernel rows, else computed here)."""
        a = np.asarray(sol.a, dtype=np.float64)
        a_hat = None if sol.a_hat is None else np.asarray(sol.a_hat, dtype=np.float64)
        z = a if a_hat is None else np.concatenate([a, a_hat])
        u = self.aggregate(z)
        Ku = self.kernel_times(u) if Ku is None else np.asarray(Ku, dtype=np.float64)
        fs = self._cheap_feature_space()
        w_given = (sol.method in ("primal", "hinge") and sol.w is not None and fs is not None
                   and fs.F.shape[1] == np.shape(sol.w)[0])
        if w_given:
            w = np.asarray(sol.w, dtype=np.float64)
            g, norm2 = fs.F @ w, float(w @ w)
        else:
            g, norm2 = Ku, float(u @ Ku)
        recovered = () if sol.method in ("primal", "hinge") else self._recovery
        return KKTState(a, a_hat, z, u, Ku, g, norm2, float(sol.b), float(sol.rho), float(sol.epsilon),
                        float(sol.R2), sol.xi, sol.xi_hat, w_given, recovered)

    @abc.abstractmethod
    def kkt_conditions(self, s: KKTState) -> list[Condition]:
        """Every KKT condition of the machine, in the notes' terms."""

    def objectives(self, s: KKTState) -> tuple[float, float]:
        """(primal objective at the primal point, dual objective at the multipliers)."""
        fields = {"b": s.b, "rho": s.rho, "epsilon": s.epsilon, "R2": s.R2}
        return self._primal_value(s.norm2, fields, (s.xi, s.xi_hat)), self._dual_value(s.z, s.u, s.Ku)

    def model_condition(self, solution: Solution, s: KKTState) -> Condition:
        """The model the Solution predicts with, y(x) = sum_{n in support} coef_n k(x, x_n) + b, against
        the certified expansion coef = ``coef_scale`` u: the largest change of the training outputs.

        The conditions read the multipliers, the decision function reads ``coef`` on ``support``: a
        Solution whose coef or support disagree with its multipliers (built by hand with coef = a for a
        classifier, say) predicts what nothing else here certified.
        """
        text = "coef_m on the support, as y(x) predicts, = the multipliers' expansion"
        coef = np.asarray(solution.coef, dtype=np.float64)
        support = np.asarray(solution.support, dtype=np.intp)
        if coef.shape != (self.N,) or support.ndim != 1 or np.any((support < 0) | (support >= self.N)):
            return Condition("y(x)", STATIONARITY, text, np.inf, self.output_scale)
        model = np.zeros(self.N)
        model[support] = coef[support]
        diff = model - self.coef_scale * s.u
        # a bound first (|k(x, x')| <= max k(x, x) for a kernel that is always PSD): below any tolerance,
        # the kernel products are spared
        bound = float(np.abs(diff).sum()) * self.kernel_diagonal_max
        if not np.any(diff) or (self.kernel.always_psd and bound <= 1e-13 * self.output_scale):
            return Condition("y(x)", STATIONARITY, text, bound, self.output_scale)
        return Condition("y(x)", STATIONARITY, text, np.abs(self.kernel_times(diff)), self.output_scale)

    def _stationarity_w(self, s: KKTState, tag: str, text: str) -> Condition:
        """w (or c) against its expansion: |w^T phi(x_n) - sum_m u_m k_nm| per point."""
        if not s.w_given:
            return Condition(tag, STATIONARITY, text + " (w defined by it)", 0.0, 1.0)
        return Condition(tag, STATIONARITY, text, np.abs(s.g - s.Ku), max(self.output_scale, float(np.max(np.abs(s.Ku)))))

    def dual_objective(self, z: ArrayLike) -> float:
        """The Lagrange dual objective at standard-form variables z."""
        z = np.asarray(z, dtype=np.float64)
        u = self.aggregate(z)
        return float(self._dual_value(z, u, self.kernel_times(u)))

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        sep = ", " if params else ""
        return f"{self.name}(N={self.N}, kernel={self.kernel!r}{sep}{params})"


def _scalar(name: str, value: Any) -> float:
    """A user's scalar (b, rho, epsilon, R^2): a finite real number."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not math.isfinite(float(value)):
        raise fail(name, "a finite real number (or None to recover it)", value)
    return float(value)


def check_bound_tol(value: Any, name: str = "bound_tol") -> float:
    """A bound tolerance (a share of each box, ``bound_masks``): a non-negative finite number. A negative or
    NaN one counts every multiplier free, zeros and full boxes alike, which sets b (7.37) from all of them."""
    return float(check_param(name, value, "bound_tol"))


def _vector(name: str, value: ArrayLike, n: int) -> Array:
    """A user's multiplier vector: finite reals, shape (n,); a copy, never the caller's array."""
    if issparse(value):
        value = to_dense(value).ravel()
    if np.ma.isMaskedArray(value) and np.ma.getmaskarray(value).any():   # np.asarray would read under the mask
        raise fail(name, f"an array of {n} finite real numbers with no masked entry", value)
    try:
        arr = np.asarray(value)
        kind = arr.dtype.kind
        if kind in "cUS" or (kind == "O" and any(isinstance(x, (str, bytes)) for x in arr.flat)):
            # numpy would drop the imaginary part, or parse the text, without a word
            raise fail(name, f"an array of {n} finite real numbers", value)
        v = np.array(value, dtype=np.float64, copy=True)
    except (TypeError, ValueError):
        raise fail(name, f"an array of {n} finite real numbers", value) from None
    if v.shape != (n,):
        raise fail(name, f"an array of shape ({n},) (one multiplier per training point)", v)
    if not np.all(np.isfinite(v)):
        raise fail(name, f"finite (NaN or inf at index {int(np.flatnonzero(~np.isfinite(v))[0])})", v)
    return v


def _positive(value: float) -> float:
    """value if it is a positive finite number, else 1."""
    return value if math.isfinite(value) and value > 0 else 1.0


def flatten(constraints: dict[str, Any]) -> list[Any]:
    """The constraint list of a problem from its tagged dict (boxes are pairs)."""
    out: list[Any] = []
    for value in constraints.values():
        out.extend(value if isinstance(value, tuple) else (value,))
    return out


def _least_squares_expansion(F: Array) -> Callable[[Array], Array]:
    """w -> c with F^T c = w (minimum norm), so w^T phi(x) = sum_n c_n k(x, x_n) on span(F).

    A ``partial`` of a module-level function, not a closure: the machine caches its feature space,
    and a fitted estimator holding the machine must pickle."""
    return partial(_least_squares_coefficients, F)


def _least_squares_coefficients(F: Array, w: Array) -> Array:
    """The minimum-norm c with F^T c = w."""
    return np.linalg.lstsq(to_dense(F).T, w, rcond=None)[0]

