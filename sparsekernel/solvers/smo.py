"""Sequential minimal optimisation (Platt 1999; Fan, Chen and Lin 2005) for the standard QP.

The solver knows only the standard-form dual of ``standard_qp``:

    minimise    f(a) = 1/2 a^T Q a + p^T a,    Q_ij = scale y_i y_j k(x_index(i), x_index(j))
    subject to  y^T a = delta,  [e^T a = nu_sum],  l <= a <= u    (u may be +inf),

as LIBSVM's ``Solver`` knows nothing of the machines that build its Q, p, y
and box. Each step changes two multipliers along the line that keeps the
equalities (Algorithm 7.1, gap 7.3): with v_t = -y_t G_t, G = Q a + p, a pair
i in I_up, j in I_low with b = v_i - v_j > 0 moves by

    a_i += y_i d,  a_j -= y_j d,  d = min(b / eta, room_i, room_j),
    eta = Q_ii + Q_jj - 2 y_i y_j Q_ij = scale ||phi(x_i) - phi(x_j)||^2,

the analytic minimiser clipped to the box ([L, H] for a_j). The iterate is
optimal iff m(a) = max_{I_up} v <= M(a) = min_{I_low} v; the solver stops
when m(a) - M(a) < tol. The nu forms (a second equality) pair variables only
within one sign of y and take the violation per sign (LIBSVM's Solver_NU).

The steps, each a named function of the compiled loop (``_smo_numba``):
``select_working_set`` (the pair, and the stopping test m(a) - M(a) < tol),
``update_pair`` (the analytic step of gap 7.3: delta* = b / eta clipped to the
box (7.33)) and, at the end, ``compute_rho`` (LIBSVM's rho, from which each
machine recovers b by (7.18) or (7.37), rho, epsilon or R^2).

Working-set rules (``wss``):

``"platt"``
    Platt's heuristics in standard form: passes over all variables alternate
    with passes over the free ones; a variable that breaks the KKT conditions
    by more than tol/2 against the current threshold (b, here rho) is paired
    with the free variable of largest |E_1 - E_2| (E = y G), else with free
    variables then all variables from a pseudo-random start; the threshold is
    updated after each step from a free variable of the pair, and a step counts
    only if it changes a_j by Platt's eps (a_j + a_j^new + eps), eps = 1e-3.
    Once a full pass makes no such step (Platt's stopping point, which his
    tolerances leave near 1e-3), the run finishes with maximal-violating-pair
    steps until m - M < tol, so that the rule ends with the same certificate as
    the others. Shrinking does not apply to this rule.
``"first-order"``
    The maximal violating pair: i = argmax_{I_up} v, j = argmin_{I_low} v.
``"second-order"``
    Fan, Chen and Lin's WSS 2: i as above, j minimising -b_ij^2 / eta_ij over
    I_low with b_ij > 0, eta_ij replaced by tau = 1e-12 where it is <= 0.

Shrinking (LIBSVM): every min(n, 1000) steps, the first pass not before step
1,000 (``SHRINK_FIRST``; LIBSVM's first comes at step min(n, 1000)), the bounded variables that
cannot join a violating pair are set aside; the gradient of those is
rebuilt, G_t = G_bar_t + p_t + sum_{free j} a_j Q_tj with G_bar_t =
sum_{a_j = u_j} u_j Q_tj maintained by the steps, once m - M <= 10 tol and
again before the solver stops, so the final test is on all variables; also
after 20 n steps without a rebuild (a wait that doubles unless the rebuild
found wrongly shrunk variables), which LIBSVM does not do.

Q is an interface, never a stored matrix: kernel rows come from
``kernel_cache.KernelRowCache`` (least recently used rows in 80% of
``cache_mb``, computed in BLAS blocks or, for RBF into float32 rows, by a
compiled distance loop; float64 rows for N <= 1448, float32 above, like
LIBSVM's Qfloat); the regression machines' 2N variables share the N rows,
expanded with their signs. While the cache has room a missing row comes
together with the rows of the most violating uncached variables, up to
``ROW_BLOCK`` rows and only while a row costs less than ``BLOCK_WORK``
multiply-adds (``block_rows``: a guess spreads the fetch's fixed cost, and is
memory whether or not it is read). Once shrinking leaves at most an eighth of the variables
active, the loops read compact rows (the active entries only, the other 20%
of ``cache_mb``), as LIBSVM's rows of active length. At the end the gradient
of the support points is recomputed in float64, so that the objective and
rho reported are those of the returned multipliers. The loops are written
for numba (``_smo_numba``) and compiled ahead of time when the package is
installed (``_smo_loops``); without that build, the first call in a process
loads or compiles them with numba's JIT (Platt's loop only when its rule is
asked for). Either way the time of that first call is ``compile_time``.

Warm starts: ``initial`` replaces the QP's ``initial_point()`` by any feasible
point (checked against the box and the equalities to ``FEASIBILITY_TOL``),
from which G and G_bar are built as from the cold start (G is taken as given
with ``initial_gradient``: a path's scaled start knows it); ``cache`` is a
``KernelRowCache`` of the same kernel and X kept from earlier solves, whose
rows and clock the run continues (``warm_start.RegularisationPath`` keeps one
along a path of C or nu). Without them a run is the cold one, step for step.

Unboundedness (hard margin): with u = +inf, f decreases without bound when
the data are not separable in feature space. Along the iterates the solver
checks

    sqrt(a^T Q a) <= margin_tol * sqrt(max_i Q_ii) * (-p^T a),

which for the hard-margin dual reads ||w(a)|| / sum_n a_n <= margin_tol * R,
R = max_n ||phi(x_n)||. Since ||w(a)|| / sum(a) is half the distance of two
points of the classes' convex hulls in feature space, it is never below the
geometric margin of a separating hyperplane: the rule fires only when no
hyperplane separates the classes with a margin of ``MARGIN_TOL`` = 1e-4
times R (float32 kernel values cannot resolve feature-space distances much
below that), and the machine then raises ``InfeasibleError`` where the hulls' distance is below what
its hull QP resolves (``HardMarginSVC.hull_resolution``), else ``SolverError`` (separable). On data that
overlap in feature space ||w(a)|| stays bounded while sum(a) grows about
linearly with the steps, so the rule fires after some 1e3-1e5 steps.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .. import validation as _validation
from .._threads import limit_blas
from ..errors import SolverError
from ..kernels import RBF, check_finite_values
from ..sparse import issparse
from .._lazy import lazy_module
from .standard_qp import BOUND_ROUNDING, QPResult, RhoEstimate, StandardQP, bound_masks, calculate_rho, calculate_rho_nu

__all__ = ["smo", "smo_standard", "compute_rho", "SMOTrace", "SMOResult", "OUTCOME_OF", "WSS_RULES", "TAU",
           "MARGIN_TOL"]

Array = NDArray[np.float64]

# The compiled loops and the row cache (numba) load on the first solve, not on import: the
# constants from their source, the entry points from _smo_loops (ahead of time or numba's JIT).
nb = lazy_module(f"{__package__}._smo_numba")
loops = lazy_module(f"{__package__}._smo_loops")
kernel_cache = lazy_module(f"{__package__}.kernel_cache")

#: Working-set rules and their codes in the compiled loop (``_smo_numba.WSS_PLATT``, ``WSS_FIRST``,
#: ``WSS_SECOND``).
WSS_RULES = {"platt": 0, "first-order": 1, "second-order": 2}
#: Curvature used where eta <= 0 (Fan, Chen and Lin 2005).
TAU = 1e-12
#: Times at most that a stop on float32 kernel rows is checked on a float64 gradient and resumed
REFINE_ROUNDS = 3
#: That float64 gradient is read from the cached float32 rows (one product, no kernel evaluated) where
#: its rounding bound, doubled (two gradient entries make the violation), is at most this share of
#: tol; else computed from the kernel in float64 (``_Run.refined``).
REFINE_ROUNDING_SHARE = 0.25
#: Hard margin: smallest margin, relative to the data's radius in feature space, told from none.
MARGIN_TOL = 1e-4
#: Platt: per-variable KKT tolerance as a fraction of tol (|r| <= tol/2 for all gives m - M <= tol).
PLATT_TOL_FRACTION = 0.5
#: Platt's progress test: a step must change a_j by eps (a_j + a_j^new + eps) (Platt 1999).
PLATT_EPS = 1e-3
#: What an entry read through ``index`` (a gather) costs against one read in order, in a sum of
#: columns of Q (``_Run._accumulate``): about 2.2 against 0.4 ns at N = 5,000, taken low
GATHER_COST = 3
#: Shrinking pass every min(n, SHRINK_INTERVAL) steps (LIBSVM).
SHRINK_INTERVAL = 1000
#: The first pass not before this many steps: on shorter runs (N = 100 takes about 130 steps) the passes
#: and the final reconstruction of the gradient cost more than the steps they shorten (a sixth of the
#: solve at N = 100, measured), as LIBSVM's first pass already comes at step 1,000 for n >= 1,000.
SHRINK_FIRST = 1000
#: Most rows computed in one block when a row is missing and the cache has room.
ROW_BLOCK = 8
#: Kernel work (multiply-adds) a fetch should carry so that its fixed cost, a return from the
#: compiled loop to Python and back (about 50 us, some 1e5 multiply-adds), is at most a tenth of
#: it: the guessed rows that fill a block up to this work (``block_rows``).
BLOCK_WORK = 1_000_000
#: Up to this many points the whole Gram matrix is computed at the start (when it fits the
#: cache): one symmetric product where it can be (``KernelRowCache.fill_whole``), else in blocks of
#: SMALL_GRAM_BLOCK rows.
SMALL_GRAM_POINTS = 1024
SMALL_GRAM_BLOCK = 256
#: BLAS threads during a solve: the kernel blocks are thin products (D + 2 inner
#: columns) that a second thread slows down (measured on 2 cores).
BLAS_THREADS = 1
#: A solve whose whole Gram matrix is at most this many multiply-adds (N^2 (D + 2)) sets no BLAS limit: OpenBLAS
#: runs products that small on one thread itself (below 4 x 65,536, its GEMM_MULTITHREAD_THRESHOLD), and the
#: limit's library calls (reading and setting the thread count of numpy's and scipy's BLAS, and restoring it)
#: cost 20 of the 950 us of a C-SVC fit at N = 100, D = 20.
SMALL_BLAS_WORK = 4 * 65_536
#: Type of the point indices and of the status flags read in the hot loops (narrow: less traffic).
INDEX_DTYPE = np.int32
#: Share of cache_mb kept for compact rows (active entries only), used once the active set
#: is at most an eighth of the variables; the full rows get the rest.
COMPACT_SHARE = 0.2
#: Bound changes gathered before G_bar is updated (four rows per pass).
PENDING_BOUND_CHANGES = 32
#: Initial length of the trace buffers (doubled when full).
TRACE_CHUNK = 1024
#: Calls of the compiled loop that may return without a step before the solver gives up.
MAX_STALLED_CALLS = 64
#: Steps per call of the compiled loop, about CHUNK_WORK / n (a step costs O(n)) within
#: [MIN_CHUNK_STEPS, MAX_CHUNK_STEPS]: Python regains control (and a KeyboardInterrupt is raised)
#: about once a second or more often.
CHUNK_WORK = 20_000_000
MIN_CHUNK_STEPS = 1_000
MAX_CHUNK_STEPS = 100_000
#: A violation below this many times eps max Q_ii max |a_i| is at the gradient's rounding (``_Run._at_roundoff``).
ROUNDOFF_FACTOR = 64.0
#: The loop's code for a run stopped there (the compiled loop's codes are >= 0).
ROUNDOFF = -1
#: Default iteration cap: max(DEFAULT_MAX_ITER, DEFAULT_ITER_PER_VARIABLE * n).
DEFAULT_MAX_ITER = 10_000_000
DEFAULT_ITER_PER_VARIABLE = 100


@dataclass(frozen=True)
class SMOTrace:
    """The steps of one SMO run (``record=True``), one entry per step.

    Each step moves a_j by ``delta`` (and a_i by -y_i y_j delta) within the
    clip interval [L, H] of a_j, along a line of curvature ``eta`` (gap 7.3).

    Attributes
    ----------
    i, j : int arrays (steps,)
        The pair, as indices of the standard-form variables (i went up in y_i a_i).
    delta : array (steps,)
        a_j^new - a_j.
    L, H : arrays (steps,)
        Clip interval of a_j^new (H = inf for the hard margin).
    eta : arrays (steps,)
        Q_ii + Q_jj - 2 y_i y_j Q_ij (tau was used in its place where <= 0).
    objective : array (steps,)
        f(a) = 1/2 a^T Q a + p^T a after the step; the machine's dual objective is -f,
        so it is non-increasing.
    violation : array (steps,)
        m(a) - M(a) after the step, over the variables active at that moment.
    initial_objective, initial_violation : float
        f and m - M at the starting point.
    wss : str
    """

    i: NDArray[np.intp]
    j: NDArray[np.intp]
    delta: Array
    L: Array
    H: Array
    eta: Array
    objective: Array
    violation: Array
    initial_objective: float
    initial_violation: float
    wss: str

    def __post_init__(self) -> None:
        for name in ("i", "j", "delta", "L", "H", "eta", "objective", "violation"):
            value = np.array(getattr(self, name))
            value.flags.writeable = False
            object.__setattr__(self, name, value)

    def __len__(self) -> int:
        return int(self.i.shape[0])

    @property
    def dual_objective(self) -> Array:
        """The machine's dual objective -f after each step (non-decreasing)."""
        return -self.objective


@dataclass(frozen=True)
class SMOResult(QPResult):
    """A ``QPResult`` of the SMO, with its diagnostics.

    ``status`` is ``"optimal"`` (m(a) - M(a) < tol), ``"max_iter"`` (the cap
    was reached: outcome "inaccurate"), ``"roundoff"`` (the violation left is at
    the gradient's floating-point resolution, above tol: outcome "inaccurate";
    ``_Run._at_roundoff``) or ``"unbounded"`` (the hard-margin
    rule of the module docstring fired: outcome "infeasible"). ``rows_computed``
    counts the full kernel rows computed, ``cache_rows`` the rows the cache
    holds, ``compact`` whether compact rows were used; ``shrunk_most`` the most
    variables that shrinking set aside at once and ``reactivations`` how often
    set-aside variables were brought back (their gradient rebuilt: LIBSVM's
    unshrink and the later checks), both 0 where nothing was shrunk. ``outputs`` is K u on
    every training point (u_n = sum_i y_i a_i over the variables of point n),
    summed in float64 from the kernel rows of the support points (the cached
    ones, float32 for N > 1448, and the others computed), not from the
    gradient the steps maintained; ``outputs_error`` bounds its rounding:
    sum |u_n| over the support points read from cached float32 rows times the
    bound on such an entry's error (``KernelRowCache.entry_error``), 0 where
    every value read was the kernel's float64 one. ``outputs_banded``: the
    float64 ones on every point where a KKT condition or slack could depend on
    them, within ``outputs_error`` elsewhere, where each variable satisfies
    its condition with more than twice that margin (``_Run._banded_products``):
    a certificate computed from them is that of the float64 outputs. ``at_lower``: the variables at
    their lower bounds by ``compute_rho``'s rule (``standard_qp.bound_masks`` at ``BOUND_ROUNDING``), from which
    the Solution's support is read (``Machine.solution_from_standard``) without computing them again.
    ``entry_rounding``: the bound on the rounding of an RBF kernel value computed from the rows' operands
    (``KernelRowCache.value_rounding``), None where the rows were not computed from such operands.
    """

    rows_computed: int = 0
    cache_rows: int = 0
    compact: bool = False
    shrunk_most: int = 0
    reactivations: int = 0
    outputs: Array | None = None
    outputs_error: float = 0.0
    outputs_banded: bool = False
    at_lower: NDArray[np.bool_] | None = None
    entry_rounding: float | None = None


#: The SMO's status words by outcome (``standard_qp.OUTCOMES``).
OUTCOME_OF = {"optimal": "solved", "max_iter": "inaccurate", "unbounded": "infeasible", "roundoff": "inaccurate"}


def smo(
    problem: Any,
    tol: float = 1e-3,
    wss: str = "second-order",
    shrinking: bool = True,
    cache_mb: float = 200,
    max_iter: int | None = None,
    record: bool = False,
    initial: Array | None = None,
    cache: Any = None,
    initial_gradient: Array | None = None,
) -> Any:
    """Solve a StandardQP by SMO.

    Parameters
    ----------
    problem : StandardQP, or a sparsekernel machine
        The QP. A machine is the adapter of its own QP: ``smo(machine, ...)``
        is ``machine.solve("smo", ...)`` and returns a ``Solution`` (the form
        of the public contract); the solver itself never reads a machine.
    tol : float > 0
        Relative: stop when the maximal KKT violation m(a) - M(a) is below
        ``tol * qp.tol_scale`` (the machine's output scale times the QP's
        factor on K; 1 for a StandardQP built by hand), so that multiplying
        the kernel, or the targets, by a constant changes nothing but the scale.
    wss : {"platt", "first-order", "second-order"}
        Working-set rule (see the module docstring).
    shrinking : bool
        LIBSVM's shrinking (first- and second-order rules).
    cache_mb : float > 0
        Kernel row cache in megabytes.
    max_iter : int or None
        Iteration cap; None means max(10_000_000, 100 n).
    record : bool
        Keep an ``SMOTrace`` of every step.
    initial : array (n,) or None
        A feasible starting point (a warm start, ``warm_start.warm_start``); None: the QP's own
        ``initial_point()``. StandardQP only.
    cache : KernelRowCache or None
        Kernel rows kept from earlier solves on the same kernel and X (a regularisation path,
        ``warm_start.RegularisationPath``); None: a new cache of ``cache_mb``. StandardQP only.
    initial_gradient : array (n,) or None
        G = Q a + p at ``initial``, where the caller has it without kernel rows (a path's scaled
        start, ``warm_start.warm_start_and_gradient``); None: built from the kernel rows. It is
        trusted (the certificate of the answer is computed from the kernel, not from it). With
        ``initial`` only.

    Returns
    -------
    SMOResult
        For a StandardQP: the variables, the gradient, LIBSVM's rho, the
        status ("optimal", "max_iter" or "unbounded"), the iteration count,
        ``solve_time`` and ``compile_time`` (numba's load or compilation on
        the first call for the row type and the rule's loop, not part of solve_time). No warning is issued here:
        the caller's status policy decides what a "max_iter" means.

    Raises
    ------
    ValidationError
        For an argument outside its domain.
    """
    opts = _check_options(tol, wss, shrinking, cache_mb, max_iter, record)
    if not isinstance(problem, StandardQP):
        if not callable(getattr(problem, "solve", None)) or not callable(getattr(problem, "standard_qp", None)):
            raise _validation.fail("problem", "a StandardQP or a sparsekernel machine", problem)
        return problem.solve("smo", initial=initial, cache=cache, initial_gradient=initial_gradient, **opts)
    _check_diagonal(problem)
    opts.update(initial=_check_initial(problem, initial), cache=_check_cache(problem, cache),
                initial_gradient=_check_initial_gradient(problem, initial, initial_gradient))
    dtype = kernel_cache.row_dtype(int(problem.X.shape[0])) if cache is None else cache.dtype
    return _solve(problem, opts, None, compile_time=ensure_compiled(dtype, opts["wss"]))


#: A warm start may leave its box or equalities by this much relative to the box (rounding).
FEASIBILITY_TOL = 1e-9


def _check_initial(qp: StandardQP, initial: Any) -> Array | None:
    """A starting point inside the box that meets the equalities, to ``FEASIBILITY_TOL``."""
    if initial is None:
        return None
    a = np.asarray(initial, dtype=np.float64)
    if a.shape != (qp.n,) or not np.all(np.isfinite(a)):
        raise _validation.fail("initial", f"None or {qp.n} finite numbers", initial)
    width = float(np.max(np.where(np.isfinite(qp.upper), qp.upper - qp.lower, 1.0), initial=1.0))
    slack = FEASIBILITY_TOL * max(width, float(np.max(np.abs(a), initial=0.0)))
    inside = np.all(a >= qp.lower - slack) and np.all(a <= qp.upper + slack)
    sums = [(float(qp.y @ a), qp.delta)] + ([(float(np.sum(a)), qp.nu_sum)] if qp.is_nu else [])
    meets = all(abs(value - target) <= slack * qp.n for value, target in sums)
    if not (inside and meets):
        raise _validation.fail("initial", "a feasible point of the QP (in its box, meeting its equalities)",
                               "a point outside the feasible set")
    return np.clip(a, qp.lower, qp.upper)


def _check_initial_gradient(qp: StandardQP, initial: Any, gradient: Any) -> Array | None:
    """n finite numbers, given with a starting point."""
    if gradient is None:
        return None
    G = np.asarray(gradient, dtype=np.float64)
    if initial is None or G.shape != (qp.n,) or not np.all(np.isfinite(G)):
        raise _validation.fail("initial_gradient", f"None, or {qp.n} finite numbers given with initial", gradient)
    return G


def _check_cache(qp: StandardQP, cache: Any) -> Any:
    """A row cache of this QP's kernel, inputs and diagonal term."""
    if cache is None:
        return None
    from .warm_start import same_inputs

    same = (isinstance(cache, kernel_cache.KernelRowCache) and cache.kernel == qp.kernel
            and cache.shift is None and qp.diagonal is None and same_inputs(cache.X, qp.X))
    if not same:
        raise _validation.fail("cache", "None or a KernelRowCache of the QP's kernel and X (no diagonal term)",
                               cache)
    return cache


def _check_diagonal(qp: StandardQP) -> None:
    """A diagonal term needs one variable per training point (it lives on the kernel rows)."""
    if qp.diagonal is None:
        return
    N = int(qp.X.shape[0])
    one_each = qp.n == N and np.array_equal(np.sort(qp.index), np.arange(N))
    if not one_each:
        raise _validation.fail("qp.diagonal", "None unless each training point has exactly one variable",
                               f"a diagonal over {qp.n} variables of {N} points")
    if not np.all(np.isfinite(qp.diagonal)) or np.any(qp.diagonal < 0):
        raise _validation.fail("qp.diagonal", "finite and >= 0", qp.diagonal)


def _check_options(tol: Any, wss: Any, shrinking: Any, cache_mb: Any, max_iter: Any,
                   record: Any) -> dict[str, Any]:
    """The solver's options, validated against their domains."""
    tol = _validation.check_param("tol", tol)
    if not isinstance(wss, str) or wss not in WSS_RULES:
        raise _validation.fail("wss", f"one of {sorted(WSS_RULES)}", wss)
    for name, flag in (("shrinking", shrinking), ("record", record)):
        if not isinstance(flag, (bool, np.bool_)):
            raise _validation.fail(name, "True or False", flag)
    cache_mb = _validation.check_param("cache_mb", cache_mb)
    if max_iter is not None:
        # the compiled loop counts steps in an int64: a cap beyond its range (Python's OverflowError 'Python
        # int too large to convert to C long' at 2**63) caps nothing more than its largest value does
        max_iter = min(_validation.check_param("max_iter", max_iter), int(np.iinfo(np.int64).max))
    return dict(tol=float(tol), wss=wss, shrinking=bool(shrinking), cache_mb=float(cache_mb),
                max_iter=max_iter, record=bool(record))


def smo_standard(
    qp: StandardQP,
    tol: float = 1e-3,
    wss: str = "second-order",
    shrinking: bool = True,
    cache_mb: float = 200,
    max_iter: int | None = None,
    record: bool = False,
    initial: Array | None = None,
    cache: Any = None,
    initial_gradient: Array | None = None,
) -> SMOResult:
    """Solve a StandardQP by SMO (no argument checks; see ``smo``)."""
    return _solve(qp, dict(tol=tol, wss=wss, shrinking=shrinking, cache_mb=cache_mb, max_iter=max_iter,
                           record=record, initial=initial, cache=cache, initial_gradient=initial_gradient), None)


def _solve(qp: StandardQP, opts: dict[str, Any], dtype: type | None, compile_time: float = 0.0) -> SMOResult:
    """One SMO run; ``compile_time``: the caller's load or compile of the loops, for the result."""
    start = time.perf_counter()
    N, D = int(qp.X.shape[0]), int(qp.X.shape[1])
    with limit_blas(BLAS_THREADS if N * N * (D + 2) > SMALL_BLAS_WORK else None):
        run = _Run(qp, dtype=dtype, **{"shrink_first": SHRINK_FIRST, **opts})     # SHRINK_FIRST as it is now
        code = run.iterate()
        for _ in range(REFINE_ROUNDS):
            if code != nb.OPTIMAL or run.cache.dtype == np.float64 or run.exact or run.refined():
                break
            code = run.iterate()
        return run.result(code, start, compile_time)


class _Run:
    """State of one solve: the permuted per-variable arrays, the row cache and the control blocks."""

    def __init__(self, qp: StandardQP, tol: float, wss: str, shrinking: bool, cache_mb: float,
                 max_iter: int | None, record: bool, dtype: type | None = None, initial: Array | None = None,
                 cache: Any = None, initial_gradient: Array | None = None, shrink_first: int = SHRINK_FIRST) -> None:
        n = qp.n
        self.qp = qp
        self.wss = wss
        if cache is None:
            cache = row_cache(qp.kernel, qp.X, cache_mb, dtype, _shift(qp))
        self.cache = cache
        self.rows_before = cache.rows_computed
        index = np.asarray(qp.index, dtype=INDEX_DTYPE).copy()
        with np.errstate(over="ignore", invalid="ignore"):         # refused just below, in one message
            # Q_ii: the QP's own (kept for the multipliers' unit) where the cache's rows carry no diagonal term;
            # a copy, which the loop permutes with the other per-variable arrays
            QD = (qp.diag_Q().copy() if self.cache.shift is None and qp.diagonal is None
                  else qp.scale * self.cache.diag()[index])
        check_finite_values(qp.kernel, QD, "k(x, x)")       # else NaN steps until the iteration cap
        y = np.asarray(qp.y, dtype=np.float64)
        # permuted copies (the active variables first), then y and index in the caller's order
        self.prob = (y.copy(), np.asarray(qp.p, dtype=np.float64).copy(),
                     np.asarray(qp.lower, dtype=np.float64).copy(), np.asarray(qp.upper, dtype=np.float64).copy(),
                     index, QD, y.copy(), index.copy())
        self.cache_arrays = (self.cache.store, self.cache.slot_of, self.cache.last_used,
                             np.zeros(PENDING_BOUND_CHANGES, dtype=np.int64), np.zeros(PENDING_BOUND_CHANGES),
                             *self._compact_arrays(qp, n, cache_mb), *self._fill_arrays())
        a = np.asarray(qp.initial_point() if initial is None else initial, dtype=np.float64).copy()
        flags = np.zeros(n, dtype=np.int8)
        self.st = (a, self.prob[1].copy(), np.zeros(n), np.arange(n, dtype=np.int64), flags)
        self.ctrl = self._control(n, wss, shrinking, max_iter, record, qp.is_nu, shrink_first)
        self.ctrl[nb.C_CLOCK] = int(cache.last_used.max(initial=-1)) + 1     # a kept cache's clock goes on
        loops.set_flags(self.prob, self.st, qp.is_nu)
        loops.leave_compact(self.cache_arrays, self.ctrl)         # full rows to begin with
        self.fpar = self._floats(tol * float(qp.tol_scale), qp.scale, QD)
        self.trace = _trace_buffers(TRACE_CHUNK) if record else _NO_TRACE
        # (u, (K + diag(shift)) u, its rounding bound, whether banded: ``_banded_products``) of ``refined``
        self.exact_outputs: tuple[Array, Array, float, bool] | None = None
        self.refined_at = -1                  # the step count at the last ``refined``
        self.checks_refined = 0               # ``_check_all``'s float64 gradients so far
        self.shrunk_most = 0                  # the most variables shrunk at once (seen as they come back)
        self.reactivations = 0                # the times shrunk variables came back (``reconstruct``)
        self._small_gram()
        self._initial_gradient(initial_gradient)

    def _compact_arrays(self, qp: StandardQP, n: int, cache_mb: float) -> tuple:
        """Store of compact rows (COMPACT_SHARE of the budget) and, for RBF, the inputs to compute them."""
        N = self.cache.N
        useful = N * (n // nb.COMPACT_RATIO + 1)          # one row per point, of at most n/8 entries
        entries = kernel_cache.fitting(COMPACT_SHARE * cache_mb, self.cache.store.itemsize, useful)
        cbuf = np.empty(max(entries, 1), dtype=self.cache.dtype)
        # direct rows know no shift, and read a dense X (a sparse X stays sparse: full rows then)
        direct = isinstance(qp.kernel, RBF) and qp.diagonal is None and not issparse(qp.X)
        Xd = np.ascontiguousarray(qp.X, dtype=np.float64) if direct else np.zeros((0, 1))
        if not Xd.flags.writeable:      # a read-only array is another type to numba: one more compile
            Xd = Xd.copy()
        return cbuf, np.full(N, -1, dtype=np.int64), np.full(N, -1, dtype=np.int64), np.arange(n, dtype=INDEX_DTYPE), Xd

    def _fill_arrays(self) -> tuple:
        """The members of the loop's cache tuple that its own fill reads (``_smo_numba.fill_here``): the
        cache's slot owners and fill count, the distance loop's operands (empty where the loop does not fill),
        and room for the slots of a step's requested rows."""
        operands = self.cache.loop_operands()
        Xt, sums = operands if operands is not None else (np.zeros((0, 0), np.float32), np.zeros(0, np.float32))
        return (self.cache.owner, self.cache.filled_slots, Xt, sums, np.empty(nb.MAX_REQUESTS, dtype=np.int64))

    def _control(self, n: int, wss: str, shrinking: bool, max_iter: int | None, record: bool,
                 is_nu: bool, shrink_first: int) -> NDArray[np.int64]:
        ctrl = np.zeros(nb.C_SIZE, dtype=np.int64)
        cap = max_iter if max_iter is not None else max(DEFAULT_MAX_ITER, DEFAULT_ITER_PER_VARIABLE * n)
        ctrl[nb.C_MAX_ITER] = cap
        ctrl[nb.C_ACTIVE] = n
        ctrl[nb.C_WSS] = WSS_RULES[wss]
        ctrl[nb.C_SHRINKING] = int(shrinking and wss != "platt")
        ctrl[nb.C_SHRINK_INTERVAL] = min(n, SHRINK_INTERVAL)
        ctrl[nb.C_SHRINK_COUNTER] = max(min(n, SHRINK_INTERVAL), shrink_first)
        ctrl[nb.C_NU] = int(is_nu)
        ctrl[nb.C_RECORD] = int(record)
        # the unboundedness rule applies where some bound is +inf and Q has no diagonal term there
        # (with d_i > 0 the objective grows like d_i a_i^2 along a_i: bounded)
        unbounded_directions = np.isinf(self.prob[3])
        if self.qp.diagonal is not None:
            unbounded_directions &= np.asarray(self.qp.diagonal) <= 0.0
        ctrl[nb.C_HAS_INF] = int(unbounded_directions.any())
        ctrl[nb.C_P_ALL] = nb.P_ALL
        ctrl[nb.C_FILL_HERE] = int(self.cache.loop_operands() is not None)
        return ctrl

    def _floats(self, tol: float, scale: float, QD: Array) -> Array:
        fpar = np.zeros(nb.F_SIZE)
        fpar[nb.F_TOL] = tol
        fpar[nb.F_TAU] = TAU
        fpar[nb.F_SCALE] = scale
        # the unboundedness rule: sqrt(a^T Q a) <= MARGIN_TOL R (-p^T a), R = max ||phi(x_n)|| (module docstring)
        fpar[nb.F_UNBOUNDED] = MARGIN_TOL * math.sqrt(max(float(QD.max(initial=0.0)), 0.0))
        fpar[nb.F_PLATT_TOL] = PLATT_TOL_FRACTION * tol
        fpar[nb.F_PLATT_EPS] = PLATT_EPS
        fpar[nb.F_GAMMA] = getattr(self.qp.kernel, "gamma", 0.0)
        return fpar

    def _small_gram(self) -> None:
        """A small problem's rows all at once (a few BLAS blocks cost less than a fill per miss)."""
        N = self.cache.N
        if N > SMALL_GRAM_POINTS or self.cache.n_slots < N:
            return
        self.ctrl[nb.C_CLOCK] = self.cache.fill_whole(SMALL_GRAM_BLOCK, int(self.ctrl[nb.C_CLOCK]))

    # -- gradient assembly ---------------------------------------------------------
    def _initial_gradient(self, given: Array | None = None) -> None:
        """G = Q a + p (kept as v = -y G; ``given``: the caller's) and G_bar = sum_{a_j = u_j} u_j Q_j
        at the start; f, p^T a."""
        y, p, lower, upper, index, QD, y0, index0 = self.prob
        a, V, G_bar, perm, flags = self.st
        n = a.shape[0]
        if given is None and not a.any():
            # the cold start a = 0 (C-SVC, one-class's zero-weight points): G = p and G_bar = 0 exactly, f = 0
            V[:] = -y * p
            self.fpar[nb.F_OBJ] = self.fpar[nb.F_PTA] = 0.0
            self._initial_extremes()
            return
        if given is not None:
            G = np.array(given, dtype=np.float64)
        else:
            # Q a first, p after: the regression forms start with a_n = a_hat_n on some points, whose rows
            # cancel exactly; added to p one by one they would absorb p when the kernel is large (1e36)
            G = np.zeros(n)
            nonzero = (a != 0.0).nonzero()[0]
            self._accumulate(*self._by_point(nonzero, a[nonzero]), G, 0, n)
            G += p
        V[:] = -y * G                                  # v_t = -y_t G_t: I_up/I_low compare v (gap 7.3's t E)
        at_upper = (a >= upper).nonzero()[0]
        self._accumulate(*self._by_point(at_upper, upper[at_upper]), G_bar, 0, n)
        self.fpar[nb.F_OBJ] = 0.5 * float(a @ (G - p)) + float(p @ a)     # 1/2 a^T Q a + p^T a
        self.fpar[nb.F_PTA] = float(p @ a)
        self._initial_extremes()

    def _initial_extremes(self) -> None:
        """The violation and objective at the start (the trace's first entry); Platt's thresholds."""
        m0, m1, M0, M1, *_ = loops.extremes(self.prob, self.st, self.st[0].shape[0])
        self.initial_violation = float(loops.violation(m0, m1, M0, M1))
        self.initial_objective = float(self.fpar[nb.F_OBJ])
        if self.ctrl[nb.C_WSS] == nb.WSS_PLATT:
            self.ctrl[nb.C_EXT_VALID] = 0
            loops.set_thresholds(self.prob, self.st, self.ctrl, self.fpar)

    def _by_point(self, variables: NDArray[np.intp], coef: Array) -> tuple[NDArray[np.intp], Array]:
        """The columns sum_r coef_r Q[:, variables_r] as one column per point: (variables, coef) with
        a point's variables merged into one of them, the points whose sum vanishes left out.

        Without a diagonal term Q_tj = scale y_t y_j k(x_index(t), x_index(j)) depends on j
        through y_j and its point alone, so the variables of point n add up to that point's
        column times u_n = sum y_j coef_j (y_j = +-1). The regression forms' starts put
        a_n = a_hat_n on the points they fill (nu-SVR's greedy start), where u_n = 0 exactly:
        their rows are neither computed nor read (at N = 5,000 they were a quarter of the fit,
        for a sum that is 0), and the gradient there is p itself, not p plus the rounding of
        a row added and taken away. With a diagonal term the pairs are kept as they are."""
        if self.qp.diagonal is None and variables.size:
            u = self._point_sums(variables, coef)
            first = np.empty(self.cache.N, dtype=np.int64)
            first[self.prob[4][variables[::-1]]] = variables[::-1]     # each point's first variable
            kept = u.nonzero()[0]
            variables = first[kept]
            coef = u[kept] / self.prob[0][variables]
        return variables, coef

    def _point_sums(self, variables: NDArray[np.intp], coef: Array) -> Array:
        """u_n = sum over the variables j of point n among ``variables`` of y_j coef_j, shape (N,)."""
        y, index = self.prob[0], self.prob[4]
        return np.bincount(index[variables], weights=y[variables] * coef, minlength=self.cache.N)

    def _accumulate(self, variables: NDArray[np.intp], coef: Array, target: Array, start: int, stop: int) -> None:
        """target[start:stop] += sum_r coef_r Q[start:stop, variables_r], by whichever reads fewer
        entries: the columns of the variables on the rows start..stop (``_accumulate_columns``: a
        gather through ``index`` per entry), or, on float32 rows, the kernel rows of their points
        summed over all N points (``_row_products``: in order, about a fifth of the gather's time
        per entry), then one gather. Without a diagonal term Q_tj = scale y_t y_j k(x_index(t),
        x_index(j)), so sum_j coef_j Q_tj = scale y_t (K u)_index(t) with u_n = sum over point n's
        variables of y_j coef_j. eps-SVR's reconstruction at N = 5,000 (1,874 free variables, 7,950
        shrunk) took 32 ms as gathers. Float64 rows (N <= 1448) keep the columns: a small problem's
        sums, and so its iterates, stay LIBSVM's."""
        y, index = self.prob[0], self.prob[4]
        if self.qp.diagonal is None and self.cache.dtype != np.float64 and variables.size:
            u = self._point_sums(variables, coef)
            points = u.nonzero()[0]
            if (points.size < self.cache.n_slots
                    and points.size * self.cache.N <= GATHER_COST * variables.size * (stop - start)):
                self._settle_pending(0)
                clock = self.cache.touch(points, int(self.ctrl[nb.C_CLOCK]))     # the rows kept for the loop
                self.ctrl[nb.C_CLOCK] = self.cache.fill(points[self.cache.slot_of[points] < 0], clock)
                Ku = self._row_products(u)                    # the cached rows, read in float64
                target[start:stop] += float(self.fpar[nb.F_SCALE]) * y[start:stop] * Ku[index[start:stop]]
                return
        self._accumulate_columns(variables, coef, target, start, stop)

    def _accumulate_columns(self, variables: NDArray[np.intp], coef: Array, target: Array, start: int,
                            stop: int) -> None:
        """target[start:stop] += sum_r coef_r Q[start:stop, variables_r], rows in batches through the cache."""
        if len(variables) == 0:
            return
        index = self.prob[4]
        variables = np.asarray(variables, dtype=np.int64)
        coef = np.asarray(coef, dtype=np.float64)
        batch = max(1, self.cache.n_slots - 1)
        order = np.argsort(index[variables], kind="stable")
        variables, coef = variables[order], coef[order]
        points = index[variables]
        if self.cache.complete:                     # every row held (a small problem's whole Gram matrix)
            self._settle_pending(0)
            loops.add_rows(variables, self.cache.slot_of[points], coef, self.cache.store, self.prob[0], index,
                           target, start, stop, float(self.fpar[nb.F_SCALE]))
            return
        unique_points, first = np.unique(points, return_index=True)
        self._settle_pending(0)
        for b0 in range(0, unique_points.size, batch):
            chunk = unique_points[b0:b0 + batch]
            lo = first[b0]
            hi = first[b0 + batch] if b0 + batch < unique_points.size else variables.size
            clock = self.cache.touch(chunk, int(self.ctrl[nb.C_CLOCK]))
            missing = chunk[self.cache.slot_of[chunk] < 0]
            self.ctrl[nb.C_CLOCK] = self.cache.fill(missing, clock)
            slots = self.cache.slot_of[points[lo:hi]]
            loops.add_rows(variables[lo:hi], slots, coef[lo:hi], self.cache.store, self.prob[0], index,
                           target, start, stop, float(self.fpar[nb.F_SCALE]))

    def _settle_pending(self, fill: int) -> None:
        """Before a fill of ``fill`` rows: keep the rows of waiting bound changes, or apply those first."""
        if self.ctrl[nb.C_NPEND] == 0:
            return
        if fill + self.ctrl[nb.C_NPEND] + nb.PINNED_ROWS < self.cache.n_slots:
            loops.protect_pending(self.cache_arrays, self.ctrl)
        else:
            loops.flush_G_bar(self.prob, self.st, self.cache_arrays, self.ctrl)

    def reconstruct(self, gradient: bool = True) -> None:
        """G_t = G_bar_t + p_t + sum_{free j} a_j Q_tj for the shrunk t; all variables active again
        (``gradient=False``: active again only, their G left stale, for a caller that computes all of G)."""
        y, p, lower, upper, index, QD, y0, index0 = self.prob
        a, V, G_bar, perm, flags = self.st
        n = a.shape[0]
        size = int(self.ctrl[nb.C_ACTIVE])
        loops.leave_compact(self.cache_arrays, self.ctrl)
        if size < n:
            self.shrunk_most = max(self.shrunk_most, n - size)
            self.reactivations += 1
            loops.flush_G_bar(self.prob, self.st, self.cache_arrays, self.ctrl)
            if gradient:
                G = np.zeros(n)
                G[size:] = G_bar[perm[size:]] + p[size:]
                free = np.flatnonzero((a > lower) & (a < upper))
                self._accumulate(free, a[free], G, size, n)
                V[size:] = -y[size:] * G[size:]
            loops.restore_order(self.prob, self.st)
        self.ctrl[nb.C_ACTIVE] = n

    def _check_all(self) -> None:
        """Before the loop checks every variable (optimal on the shrunk ones): the gradient of the
        shrunk ones reconstructed; on float32 rows, the whole gradient in float64 (``refined``)
        instead, for the first REFINE_ROUNDS such checks. The float32 reconstruction was followed at
        once by that refinement wherever the check found no step to take (issue 18's N = 5,000 and
        N = 10,000), and cost 5% of such a fit; now a stop with no step after the check needs no
        second refinement (``exact``)."""
        if self.cache.dtype == np.float64 or self.checks_refined >= REFINE_ROUNDS:
            self.reconstruct()
        else:                             # a problem that unshrinks often pays for at most REFINE_ROUNDS of them
            self.checks_refined += 1
            self.refined()

    @property
    def exact(self) -> bool:
        """Whether G is ``refined``'s float64 gradient still: no step since it was computed."""
        return self.refined_at == int(self.ctrl[nb.C_ITER])

    def refined(self) -> bool:
        """G and G_bar recomputed in float64 after a stop on float32 rows; whether m - M < tol still.

        Each step adds a float32 kernel row times the step to G, and the rounding
        of 6e-8 per entry accumulates over the steps: on 20,000 points the
        maintained violation fell below 1e-6 while the true one was 4.5e-6, and
        the certificate refused the answer. Here the gradient is rebuilt from
        the multipliers by one product over the support points' rows, and the
        loop goes on from it if a pair still violates. The rows are the cached
        float32 ones, read in float64, where the rounding that leaves in the
        gradient (``_row_rounding``, once, not once per step) is at most
        ``REFINE_ROUNDING_SHARE`` of tol for the two entries of the violation;
        else the kernel's own float64 values where they decide a condition
        (``_banded_products``), or on every point (N x n_SV of them) where no
        free variable places the threshold.
        """
        self.reconstruct(gradient=False)                                     # all of G is computed below
        loops.flush_G_bar(self.prob, self.st, self.cache_arrays, self.ctrl)
        y, p, lower, upper, index, QD, y0, index0 = self.prob
        a, V, G_bar, perm, flags = self.st
        n, N, scale = a.shape[0], self.cache.N, float(self.fpar[nb.F_SCALE])
        u = np.bincount(index, weights=y * a, minlength=N)                   # u_n = sum y_i a_i
        at_upper = np.where((a >= upper) & np.isfinite(upper), upper, 0.0)[np.argsort(perm)]   # caller's order
        u_bar = np.bincount(index0, weights=y0 * at_upper, minlength=N)
        U = np.column_stack([u, u_bar])
        rounding = self._row_rounding(U)
        banded = False
        if 2.0 * scale * float(np.max(rounding)) <= REFINE_ROUNDING_SHARE * float(self.fpar[nb.F_TOL]):
            KU = self._row_products(U)                                       # the cached rows, in float64
        else:
            KU = self._banded_products(U, scale * float(rounding[0]))
            banded = KU is not None
            if KU is None:
                KU, rounding = self._K_times(U, np.arange(N)), np.zeros(2)   # one pass over the kernel
        G = p + scale * y * KU[index, 0]                                     # G = Q a + p
        V[:] = -y * G
        G_bar[:] = scale * y0 * KU[index0, 1]                                # G_bar = sum_{a_j = u_j} u_j Q_j
        self.exact_outputs = (u, KU[:, 0], float(rounding[0]), banded)       # for result, if no step follows
        self.refined_at = int(self.ctrl[nb.C_ITER])
        self.fpar[nb.F_OBJ] = 0.5 * float(a @ (G - p)) + float(p @ a)
        self.fpar[nb.F_PTA] = float(p @ a)
        self.ctrl[nb.C_EXT_VALID] = 0
        m0, m1, M0, M1, *_ = loops.extremes(self.prob, self.st, n)
        return bool(loops.violation(m0, m1, M0, M1) < self.fpar[nb.F_TOL])

    def _banded_products(self, U: Array, error: float) -> Array | None:
        """(K + diag(shift)) U on every point: the kernel's float64 values on the points where they
        can matter, the cached float32 rows' (within ``_row_rounding``) on the others; None where
        that split cannot be made (no free variable to place the threshold: the caller computes
        every point in float64).

        Exact (float64 kernel) on the points of every variable that is not at its lower bound
        (the support: the objective, rho, the slacks of the bounded ones) and on those of every
        variable at its lower bound whose residual r_i = G_i - thr_i (thr_i = y_i rho, or
        r + y_i rho per sign for the nu forms (LIBSVM's r1, r2); rho from the free variables,
        exact by then) is not above 2 ``error`` (the bound on G_i's rounding here). Elsewhere
        r_i > 0 holds exactly, so the variable satisfies its KKT condition and takes part in
        neither extreme of the violation m - M (a free variable of its sign lies between them
        and the threshold): the violation, rho, the objective and every KKT row and slack of the
        machines' certificates are those of the float64 product. On issue 18's N = 5,000 problem
        the exact points were the 923 support points and 2 others, a fifth of the full pass.
        """
        y, p, lower, upper, index = self.prob[:5]
        a = self.st[0]
        scale, N = float(self.fpar[nb.F_SCALE]), self.cache.N
        at_lower, at_upper = bound_masks(a, lower, upper, BOUND_ROUNDING, self.qp.multiplier_unit)    # as ``compute_rho``'s
        support = np.zeros(N, dtype=bool)
        support[index[~at_lower]] = True
        support |= (U != 0.0).any(axis=1)
        KU = self._row_products(U)                                     # float32 rows: within the bound
        rows = support.nonzero()[0]
        KU[rows] = self._K_times(U, rows)
        G = p + scale * y * KU[index, 0]
        rho = (calculate_rho_nu if self.qp.is_nu else calculate_rho)(y, G, at_lower, at_upper)
        if rho.fallback:
            return None
        threshold = (rho.r + y * rho.rho) if self.qp.is_nu else y * rho.rho
        unsure = at_lower & ~at_upper & ~support[index] & ~(G - threshold > 2.0 * error)
        rows = np.unique(index[unsure])
        if rows.size:
            KU[rows] = self._K_times(U, rows)
        return KU

    # -- the loop ----------------------------------------------------------------------
    def iterate(self) -> int:
        """Call the compiled loop until it stops for good; serve its requests in between."""
        loop = loops.run_platt if self.ctrl[nb.C_WSS] == nb.WSS_PLATT else loops.run_smo
        cache = self.cache_arrays
        cap = int(self.ctrl[nb.C_MAX_ITER])
        chunk = max(MIN_CHUNK_STEPS, min(MAX_CHUNK_STEPS, CHUNK_WORK // max(self.qp.n, 1)))
        stalled = 0
        while stalled < MAX_STALLED_CALLS:
            before = int(self.ctrl[nb.C_ITER])
            # the loop returns at least every `chunk` steps, so that Ctrl-C is honoured within about a second
            self.ctrl[nb.C_MAX_ITER] = min(cap, before + chunk)
            code = loop(self.prob, self.st, cache, self.ctrl, self.fpar, self.trace)
            self.ctrl[nb.C_MAX_ITER] = cap
            self.cache.rows_computed += int(self.ctrl[nb.C_ROWS_FILLED])    # the rows the loop filled itself
            self.ctrl[nb.C_ROWS_FILLED] = 0
            if code == nb.MAX_ITER and self.ctrl[nb.C_ITER] < cap:
                if self._at_roundoff():
                    return ROUNDOFF
                stalled = 0
                continue
            if code == nb.NEED_ROWS:
                self._fetch_rows()
            elif code == nb.RECONSTRUCT:
                self.reconstruct()
            elif code == nb.RECONSTRUCT_FINAL:
                self._check_all()
                self.ctrl[nb.C_SHRINK_COUNTER] = 1
            elif code == nb.TRACE_FULL:
                self.trace = _grow(self.trace)
            else:
                return code
            stalled = 0 if self.ctrl[nb.C_ITER] > before else stalled + 1
        raise SolverError(f"SMO made no progress in {MAX_STALLED_CALLS} calls of its loop (code {code})",
                          status="stalled", solver="SMO")

    def _at_roundoff(self) -> bool:
        """Whether the remaining violation is at the floating-point resolution of the gradient.

        Each step adds Q_ij d to G; its rounding is about eps max_i Q_ii max_i |a_i| per step and
        does not average out, so a violation below ROUNDOFF_FACTOR times that cannot be driven
        under a tol it is above (kernel values near 1e37 with multipliers of order one): the run
        stops there, as an inaccurate one, instead of at its iteration cap.
        """
        tol = float(self.fpar[nb.F_TOL])
        a, QD = self.st[0], self.prob[5]
        floor = ROUNDOFF_FACTOR * np.finfo(np.float64).eps * float(np.max(QD)) * float(np.max(np.abs(a)))
        if not floor > tol:
            return False
        m0, m1, M0, M1, *_ = loops.extremes(self.prob, self.st, int(self.ctrl[nb.C_ACTIVE]))
        return float(loops.violation(m0, m1, M0, M1)) <= floor

    def _fetch_rows(self) -> None:
        """Compute the requested rows, with the most violating uncached ones while the cache has room."""
        ctrl = self.ctrl
        requested = ctrl[nb.C_REQ:nb.C_REQ + ctrl[nb.C_NREQ]].copy()    # distinct
        ctrl[nb.C_NREQ] = 0
        extra = min(block_rows(self.cache.row_work), self.cache.n_free, self.cache.n_slots - 1) - requested.size
        if extra > 0 and ctrl[nb.C_COMPACT] == 0:
            candidates = np.empty(extra, dtype=np.int64)
            count = loops.prefetch_candidates(self.prob, self.st, ctrl, self.fpar, self.cache.slot_of,
                                              int(ctrl[nb.C_ACTIVE]), requested, candidates)
            requested = np.concatenate([requested, candidates[:count]])
        self._settle_pending(requested.size)
        ctrl[nb.C_CLOCK] = self.cache.fill(requested, int(ctrl[nb.C_CLOCK]))

    # -- the answer --------------------------------------------------------------------
    def result(self, code: int, start: float, compile_time: float = 0.0) -> SMOResult:
        """Undo the permutation; rho from the free variables (or the midpoint); the trace."""
        if code in (nb.MAX_ITER, ROUNDOFF):
            self.reconstruct()
        y = self.prob[0]
        a, V, G_bar, perm, flags = self.st
        n = a.shape[0]
        z = np.empty(n)
        z[perm] = a
        Gz = np.empty(n)
        Gz[perm] = -y * V
        qp = self.qp
        u = np.bincount(qp.index, weights=qp.y * z, minlength=self.cache.N)     # u_n = sum y_i z_i
        kept = self.exact_outputs
        exact = kept is not None and np.array_equal(kept[0], u)               # refined's product, still valid
        shifted = kept[1] if exact else self._row_products(u)                 # (K + diag(shift)) u
        error = kept[2] if exact else float(self._row_rounding(u))
        banded = exact and kept[3]                                             # float64 on the support
        self._exact_gradient(z, u, Gz, shifted, error == 0.0 or banded)
        outputs = dict(self._outputs(u, shifted, error), outputs_banded=banded)
        masks = bound_masks(z, qp.lower, qp.upper, BOUND_ROUNDING, qp.multiplier_unit)
        rho = compute_rho(qp, z, Gz, masks)
        m0, m1, M0, M1, *_ = loops.extremes(self.prob, self.st, n)
        status = {nb.OPTIMAL: "optimal", nb.MAX_ITER: "max_iter", nb.UNBOUNDED: "unbounded",
                  ROUNDOFF: "roundoff"}[code]
        return SMOResult(a=z, G=Gz, rho=rho, outcome=OUTCOME_OF[status], status=status, solver="SMO",
                         iterations=int(self.ctrl[nb.C_ITER]),
                         objective=float(self.fpar[nb.F_OBJ]),
                         violation=float(loops.violation(m0, m1, M0, M1)) / float(qp.tol_scale),
                         solve_time=time.perf_counter() - start, compile_time=compile_time,
                         rows_computed=self.cache.rows_computed - self.rows_before,
                         cache_rows=self.cache.n_slots, compact=bool(self.ctrl[nb.C_COMPACT_USED]),
                         shrunk_most=self.shrunk_most, reactivations=self.reactivations,
                         trace=self._trace(), at_lower=masks[0], entry_rounding=self.cache.value_rounding(),
                         **outputs)

    def _row_products(self, u: Array) -> Array:
        """(K + diag(shift)) u on every point, in float64, from the support points' kernel rows: the
        cached ones where they are (float32 for N > 1448), computed where not; u a vector, or one
        column per product (the rows read once for all)."""
        cache = self.cache
        support = self._support(u)
        slots = cache.slot_of[support]
        cached, cached_slots = support[slots >= 0], slots[slots >= 0]
        # only the support points' own slots are read (a slot never filled holds garbage: 0 * nan),
        # each once, in float64, in place (a gathered copy of the rows cost twice as much at N = 5,000)
        coef = np.ascontiguousarray(u[cached] if u.ndim > 1 else u[cached, None])
        columns = np.zeros((coef.shape[1], cache.N))
        loops.add_point_rows(cached_slots, coef, cache.store, columns)
        out = columns[0] if u.ndim == 1 else columns.T
        uncached = support[slots < 0]
        if uncached.size:
            out += cache.products(np.arange(cache.N), uncached, u[uncached])
        return out

    @staticmethod
    def _support(u: Array) -> NDArray[np.intp]:
        """The points where u (a vector, or one column per product) is not zero."""
        return (u != 0.0 if u.ndim == 1 else (u != 0.0).any(axis=1)).nonzero()[0]

    def _row_rounding(self, u: Array) -> Array:
        """The bound of the rounding that ``_row_products`` leaves in each entry of its product (per
        column of u): sum |u_n| over the support points whose rows are cached, times the bound on a cached
        entry's error (``KernelRowCache.entry_error``: one float32 rounding of the kernel's value, or more for
        the RBF rows of the compiled distance loop); 0 for float64 rows."""
        diagonal = float(np.abs(self.prob[5]).max()) / float(self.qp.scale)         # max Q_ii / scale
        entry = self.cache.entry_error(diagonal)
        if entry == 0.0:
            return np.zeros(u.shape[1:])
        if not getattr(self.qp.kernel, "always_psd", True):
            # |k_nm| <= max_n k_nn holds for a positive semidefinite kernel only: a precomputed RBF - 0.9999
            # (diagonal 1e-4, entries near 1) broke the bound 300 times; the largest cached entry read instead
            slots = self.cache.slot_of[self._support(u)]
            slots = slots[slots >= 0]
            if slots.size:
                entry = self.cache.entry_error(max(diagonal, float(np.max(np.abs(self.cache.store[slots])))))
        return entry * np.sum(np.abs(u[self.cache.slot_of >= 0]), axis=0)

    def _outputs(self, u: Array, shifted: Array, error: float) -> dict[str, Any]:
        """SMOResult's ``outputs`` (K u, the diagonal term taken out) and ``outputs_error``, the bound
        of ``shifted``'s rounding (0 where it is the float64 product of the kernel itself)."""
        cache = self.cache
        Ku = shifted if cache.shift is None else shifted - cache.shift * u
        return {"outputs": Ku, "outputs_error": error}

    def _exact_gradient(self, z: Array, u: Array, Gz: Array, shifted: Array, exact: bool) -> None:
        """G on the support points in float64: G_i = p_i + scale y_i ((K + diag(shift)) u)_index(i).

        Float32 rows' rounding (6e-8) would reach the objective f = 1/2 z^T (G + p)
        through cancellation (hard margin: sum a - 1/2 a^T Q a with both terms near
        sum a). With float64 rows ``shifted`` is that product already; with float32
        rows one float64 product over the support points is computed (the
        objective and rho need G only where z != 0 and on free variables),
        unless ``shifted`` is already a float64 product of the kernel itself (``exact``).
        """
        qp = self.qp
        support = (u != 0.0).nonzero()[0]
        if support.size == 0:
            return
        on_support = (u != 0.0)[qp.index]
        if self.cache.dtype == np.float64 or exact:
            Ku = shifted
        else:
            Ku = np.zeros(self.cache.N)
            Ku[support] = self._K_times(u, support)
        Gz[on_support] = qp.p[on_support] + qp.scale * qp.y[on_support] * Ku[qp.index[on_support]]   # G = Q z + p
        self.fpar[nb.F_OBJ] = 0.5 * float(z @ (Gz - qp.p)) + float(qp.p @ z)

    def _K_times(self, u: Array, rows: NDArray[np.intp]) -> Array:
        """((K + diag(shift)) u)[rows] in float64 from the kernel itself (not the cached rows), over
        the points where u is not zero (u a vector, or one column per product)."""
        support = self._support(u)
        return self.cache.products(rows, support, u[support])

    def _trace(self) -> SMOTrace | None:
        if self.ctrl[nb.C_RECORD] == 0:
            return None
        k = int(self.ctrl[nb.C_TRACE_LEN])
        ti, tj, tdelta, tL, tH, teta, tobj, tviol = (b[:k] for b in self.trace)
        return SMOTrace(i=ti, j=tj, delta=tdelta, L=tL, H=tH, eta=teta, objective=tobj, violation=tviol,
                        initial_objective=self.initial_objective, initial_violation=self.initial_violation,
                        wss=self.wss)


def compute_rho(qp: StandardQP, a: Array, G: Array,
                masks: tuple[NDArray[np.bool_], NDArray[np.bool_]] | None = None) -> RhoEstimate:
    """LIBSVM's rho at the final iterate: the mean of y_i G_i over the free variables (the KKT
    condition y_i G_i = rho of a free one), else the midpoint of the bounded ones' interval;
    per sign of y for the nu forms (Solver_NU). The machine turns it into b ((7.18), (7.37)),
    rho (Result 7.7), epsilon ((7.69)) or R^2. A multiplier within the rounding of a bound is at it
    (``standard_qp.BOUND_ROUNDING``, the Solution's support rule); ``masks``: those (at_lower, at_upper),
    computed already by the caller."""
    if masks is None:
        masks = bound_masks(a, qp.lower, qp.upper, BOUND_ROUNDING, qp.multiplier_unit)
    at_lower, at_upper = masks
    return (calculate_rho_nu if qp.is_nu else calculate_rho)(qp.y, G, at_lower, at_upper)


def row_cache(kernel: Any, X: Any, cache_mb: float, dtype: type | None = None, shift: Array | None = None) -> Any:
    """The row cache a run on a QP of ``kernel`` and inputs ``X`` builds for itself: the full rows' share of
    ``cache_mb`` (the rest holds the compact rows), rows of ``dtype`` (None: ``kernel_cache.row_dtype``), Q's
    diagonal term as their ``shift`` (``_shift``). A caller that runs the SMO again from where it stopped builds it
    here and passes it as ``cache``, so that the later runs read the rows the first one computed
    (``formulations.solve``'s rounds in rho's unit, and the Gram matrix a machine's unit was read from)."""
    return kernel_cache.KernelRowCache(kernel, X, (1.0 - COMPACT_SHARE) * cache_mb, dtype, shift)


def _shift(qp: StandardQP) -> Array | None:
    """Q's diagonal term in kernel units on the points: Q_ii = scale (k_ii + d_i / scale)."""
    if qp.diagonal is None:
        return None
    shift = np.zeros(int(qp.X.shape[0]))
    shift[qp.index] = np.asarray(qp.diagonal, dtype=np.float64) / qp.scale
    return shift


def block_rows(row_work: float) -> int:
    """Rows per fetch: the requested ones plus guesses up to BLOCK_WORK multiply-adds, 1 to ROW_BLOCK.

    A guess (the row of a variable that is close to being chosen) is computed
    with the requested row to spread the fetch's fixed cost; when one row
    already costs BLOCK_WORK (a dense X of 5,000 x 500: 2.5e6) a guess saves
    little time and its row is memory the cache keeps, read or not (the dense
    linear fit of ``benchmarks/sparse_vs_libsvm.py`` computed 2,144 rows with
    blocks of 8 where 1,359 were read).
    """
    return int(min(ROW_BLOCK, max(1, math.ceil(BLOCK_WORK / max(row_work, 1.0)))))


def _trace_buffers(length: int) -> tuple:
    ints = tuple(np.zeros(length, dtype=np.int64) for _ in range(2))
    floats = tuple(np.zeros(length) for _ in range(6))
    return ints + floats


#: the trace buffers of a run that records nothing: the loops write a trace only where ``C_RECORD`` is 1,
#: so every such run passes these (eight allocations fewer a solve)
_NO_TRACE = _trace_buffers(1)


def _grow(trace: tuple) -> tuple:
    """Twice the capacity, same content."""
    return tuple(np.concatenate([b, np.zeros_like(b)]) for b in trace)


# -- compilation ------------------------------------------------------------------------
#: The compiled loops by working-set rule: Platt's (``run_platt``, about a quarter of the compile)
#: is compiled only when a solve first asks for it.
LOOP_OF = {"platt": "platt", "first-order": "smo", "second-order": "smo"}
_COMPILED: set[tuple[str, str]] = set()
#: (dtype, wss) arguments of ``ensure_compiled`` already answered 0 (each solve asks: a set lookup)
_READY: set[tuple[Any, Any]] = set()


def ensure_compiled(dtype: type = np.float64, wss: str | None = None) -> float:
    """Load the compiled loops for kernel rows of ``dtype`` (compile them, with numba's JIT, where
    the install did not build them) by solving tiny problems: those of rule ``wss`` (None: every
    rule); seconds spent, 0 once done in this process."""
    if (dtype, wss) in _READY:
        return 0.0
    name = np.dtype(dtype).name
    loops = sorted(set(LOOP_OF.values())) if wss is None else [LOOP_OF[wss]]
    missing = [loop for loop in loops if (name, loop) not in _COMPILED]
    if not missing:
        _READY.add((dtype, wss))
        return 0.0
    start = time.perf_counter()
    for loop in missing:
        _warm_up(dtype, [rule for rule, of in LOOP_OF.items() if of == loop])
        _COMPILED.add((name, loop))
    return time.perf_counter() - start


def _warm_up(dtype: type, rules: list[str]) -> None:
    """Solve tiny plain and nu problems by ``rules``, with a 4-row cache (evictions) and a roomy one
    (prefetching), recording their traces and shrinking from the first step (``SHRINK_FIRST`` would
    keep these short runs from shrinking): every compiled function those rules call is loaded."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(6, 2))
    y = np.array([1.0, -1.0, 1.0, -1.0, 1.0, -1.0])
    kernel = RBF(1.0)
    for nu_sum in (None, 0.5):
        qp = StandardQP(kernel=kernel, X=X, index=np.arange(6), y=y, scale=1.0,
                        p=np.zeros(6) if nu_sum else -np.ones(6), lower=np.zeros(6),
                        upper=np.full(6, 0.5 if nu_sum is None else 1.0 / 6), delta=0.0, nu_sum=nu_sum,
                        gram=lambda: kernel(X))
        for wss in rules:
            for cache_mb in (1e-6, 1.0):
                _solve(qp, dict(tol=1e-3, wss=wss, shrinking=True, cache_mb=cache_mb, max_iter=None,
                                record=True, shrink_first=0), dtype)
