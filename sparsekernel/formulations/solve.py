"""The one dispatch: a method's name, the path that solves a machine by it, and one status policy.

Methods (``solve(machine, method, **opts)``; ``Machine.solve`` is this):

``"smo"``
    The hand-written SMO (``solvers.smo``) on the machine's StandardQP.
``"qp-clarabel"``, ``"qp-osqp"``
    The StandardQP through Clarabel's or OSQP's own API (``solvers.direct``).
``"libsvm"``
    The machine's LIBSVM twin through scikit-learn (``formulations.libsvm``).
``"primal-<solver>"``, ``"hinge-<solver>"``
    The cvxpy primal (or the unconstrained (7.44)) by any cvxpy solver.
``"clarabel"``, ``"osqp"``, any other cvxpy solver name
    The cvxpy dual.

The machine builds its QP, the solver answers in the QP's terms
(``QPResult``), and the machine maps the answer back
(``Machine.solution_from_standard``): the solvers know no machine.

Units of ``tol`` (one definition, every machine and method). A tolerance is
relative to the machine's ``output_scale``, the unit of its outputs w^T phi(x_n):
the margin 1 for hard and soft margin, nu times the data's spread in feature
space for nu-SVC, the spread for SVDD, the kernel's mean mean_nm k(x_n, x_m)
for the one-class SVM (the spread where that is smaller; its diagonal's largest value where the mean vanishes),
the targets' spread for regression (``Machine.output_scale``). nu-SVC's outputs turn out
to be of the size of its rho, known once solved and often 10 to 500 times
smaller (RBF, nu = 0.05 to 0.5, breast cancer and digits): its SMO stops
again in rho's unit (``Machine.solved_output_scale``, ``_in_outputs_unit``),
at some cost in steps (the two classes digit >= 5 and < 5 of digits, 1,797 points, gamma 'scale', nu = 0.05:
5,467 against LIBSVM's 1,532; the one-class SVM alike, ``OneClassSVM.solved_output_scale``). The SMO stops when its
maximal violation m(a) - M(a) is below ``tol * qp.tol_scale`` (the gradient is
``qp.scale`` times the outputs); the KKT report divides every output row by
the same ``output_scale`` and the gap by ``gap_scale``; so multiplying the
kernel or the targets by a constant changes neither the stopping rule nor the
verdict (nor the iterations under a power of two; under another constant the
rounding may change the steps' path). ``tol_units="libsvm"`` reads a tolerance as LIBSVM's on a problem of
unit output scale: LIBSVM's multipliers, and so its gradients, are
``machine.libsvm_scale`` times the notes' (nu-SVC: N; one-class: nu N), and
``libsvm_tol`` divides by that, here and only here. The ``"libsvm"`` method
is given the same relative tolerance in LIBSVM's own units
(``libsvm_own_tol``: ``tol * libsvm_scale * qp.tol_scale``).

A certificate behind every "optimal" (``certify``). No solver's status is
trusted on its own: every path checks the machine's own KKT conditions
(``certificate.kkt_report``, the body of ``duality.check``) at the tolerance matched to the method (``matched_tol``:
twice the SMO's or LIBSVM's tol; Clarabel 1e-6, OSQP 1e-5; a primal's
``primal_tol``) and

- returns the Solution with ``status="optimal"`` and its ``report`` when they
  hold and the outputs' rounding (``output_rounding``: sum |coef| times the rounding of a kernel value)
  is at most a quarter of the tolerance, whatever the solver said;
- raises ``SolverError`` (carrying the report) when the solver claimed success
  and its answer fails them;
- warns with ``ConvergenceWarning`` and returns the Solution with
  ``status="inaccurate"`` and its failing report when the solver stopped early
  (iteration cap, an inaccurate status) and its point fails them, or when
  its answer fails them and double precision could not have certified it,
  or when they hold only that way: with the outputs' rounding not far below the
  tolerance, a pass is the luck of one evaluation's rounding (another BLAS, or
  ``duality.check``, may fail it), not a certificate;
- raises ``InfeasibleError`` only with a proof: the machine's own
  (``Machine._infeasible`` for a solver's infeasibility status and
  ``Machine._infeasibility_proof`` for a failing answer: the hard margin's
  classes' convex hulls meeting in feature space, measured by the SMO on the
  hulls' QP whatever solver ran) or the nu bounds of Chang and Lin (refused
  when nu is set); a solver's infeasibility status without one raises
  ``SolverError``, as does any other failure, with the solver's own status.

The certified outputs are the predicted ones: where the support threshold's cut
(``BOUND_TOL`` of the box, for an interior-point solver's near-zeros) would leave
out multipliers that move the outputs by more than ``OUTPUT_ERROR_SHARE`` of the
tolerance, the support is every non-zero multiplier (``support_of_outputs``).

The solver's own status is kept as ``solution.solver_status``.
"""

from __future__ import annotations

from dataclasses import replace

import functools
from typing import Any

import numpy as np

from .._lazy import cvxpy as cp
from ..errors import ConvergenceWarning, SolverError, ValidationError, warn
from ..solvers.standard_qp import QPResult
from ..sparse import read_only_rows
from .machine import BOUND_TOL, SMO_BOUND_TOL, Machine
from .solution import Solution

__all__ = ["solve", "solve_smo", "solve_direct", "refuse", "certify", "cvxpy_outcome", "libsvm_tol",
           "libsvm_own_tol", "libsvm_relative_tol", "matched_tol", "method_name", "support_of_outputs", "SMO_TOL"]

#: The SMO's tolerance in LIBSVM's gradient units where the caller gives none (tour, CLI, demo).
SMO_TOL = 1e-6
#: A certificate's tolerance over the relative tol of a solver that stops on its own gradient.
CERTIFICATE_FACTOR = 2.0
#: The SMO's outputs from float32 kernel rows serve its certificate when their rounding bound is at most
#: this share of the certificate's tolerance (in output units); else the outputs are recomputed.
OUTPUT_ERROR_SHARE = 0.25
#: The smallest tolerance a certificate is checked at (double precision, accumulated gradients).
CERTIFICATE_FLOOR = 1e-9


def solve(machine: Machine, method: str = "clarabel", **opts: Any) -> Solution:
    """Solve ``machine`` by ``method`` (see the module docstring); ``opts`` go to the solver."""
    if not isinstance(machine, Machine):
        raise ValidationError(f"machine must be a machine of formulations (SoftMarginSVC(X, t, kernel), ...); "
                              f"got {machine!r}")
    machine.check_unchanged()
    name = _check_method(method)
    if name == "smo":
        from ..solvers.smo import smo

        _check_options(name, opts, solve_smo, smo)
        return solve_smo(machine, **opts)
    if name.startswith("qp-"):
        return solve_direct(machine, name[len("qp-"):], **opts)
    if name == "libsvm":
        from .libsvm import solve_with_libsvm

        _check_options(name, opts, solve_with_libsvm)
        return solve_with_libsvm(machine, **opts)
    if name.startswith("primal-"):
        return machine.primal().solve(name[len("primal-"):], **opts)
    if name.startswith("hinge-"):
        hinge = getattr(machine, "hinge", None)
        if hinge is None:
            raise ValidationError(f"method must name a form {machine.name} has: it has no hinge form; got {method!r}")
        return hinge().solve(name[len("hinge-"):], **opts)
    form = opts.pop("form", "auto")
    return machine.dual(form).solve(name, **opts)


_METHOD_DOMAIN = ("'smo', 'libsvm', 'qp-clarabel', 'qp-osqp', 'primal-<solver>', 'hinge-<solver>' or an "
                  "installed cvxpy solver")


def _check_options(method: str, opts: dict[str, Any], *functions: Any) -> None:
    """A ValidationError naming the options of ``opts`` that none of ``functions`` (the method's entry
    point and what it passes its other options to) takes."""
    names = _option_names(functions)
    unknown = sorted(opts.keys() - names)
    if unknown:
        raise ValidationError(f"the options of method {method!r} must be among {sorted(names)}; got {unknown}")


@functools.lru_cache(maxsize=8)
def _option_names(functions: tuple[Any, ...]) -> frozenset[str]:
    """The keyword parameters of ``functions`` but the machine (read once: a multiclass fit solves often)."""
    import inspect

    return frozenset(p for f in functions for p, v in inspect.signature(f).parameters.items()
                     if v.kind not in (v.VAR_KEYWORD, v.VAR_POSITIONAL)) - {"machine", "problem"}


def _check_method(method: Any) -> str:
    if not isinstance(method, str) or not method:
        raise ValidationError(f"method must be {_METHOD_DOMAIN}; got {method!r}")
    name = method.lower()
    if name in ("smo", "libsvm") or name.startswith(("qp-", "primal-", "hinge-")):
        return name
    if name.upper() not in cp.installed_solvers():
        raise ValidationError(f"method must be {_METHOD_DOMAIN} ({', '.join(cp.installed_solvers())}); "
                              f"got {method!r}")
    return name


def libsvm_tol(machine: Machine, tol: float) -> float:
    """LIBSVM's tolerance (on a problem of unit output scale) as a relative tolerance here."""
    return float(tol) / machine.libsvm_scale


def libsvm_relative_tol(machine: Machine, own_tol: float) -> float:
    """A tolerance in LIBSVM's own gradient units (a fitted estimator's ``tol``) as a relative one:
    ``libsvm_own_tol`` the other way."""
    return float(own_tol) / (machine.libsvm_scale * machine.standard_qp().tol_scale)


def libsvm_own_tol(machine: Machine, tol: float) -> float:
    """A relative tolerance as LIBSVM's own (its gradient units): the ``"libsvm"`` method's."""
    return float(tol) * machine.libsvm_scale * machine.standard_qp().tol_scale


def solve_smo(machine: Machine, tol: float = 1e-3, *, tol_units: str = "notes", path: Any = None,
              path_key: Any = 0, **opts: Any) -> Solution:
    """The SMO on the machine's StandardQP; ``tol`` is relative (module docstring), in the notes'
    units (``tol_units="notes"``) or LIBSVM's (``"libsvm"``). With ``path`` (a
    ``solvers.warm_start.RegularisationPath``) the solve starts from the previous solution of slot
    ``path_key`` moved into the new box, reads the slot's kept kernel rows, and is recorded there; a machine
    whose dual is not known to be convex (``Machine.convex`` not True) solves cold, without the path."""
    from ..solvers.smo import OUTCOME_OF, smo

    if tol_units not in ("notes", "libsvm"):
        raise ValidationError(f"tol_units must be 'notes' or 'libsvm'; got {tol_units!r}")
    if tol_units == "libsvm":
        tol = libsvm_tol(machine, tol)
    machine.warn_if_not_convex("the SMO")
    whole = _whole_rows_first(machine, opts) if path is None else None
    qp = machine.standard_qp()
    if path is not None and machine.convex is not True:
        # a dual not known to be convex has KKT points that depend on the start (and on the rows' rounding): the
        # cold solve's, as a fit without the path finds it (a sigmoid SVC's warm path ended 43 off in decision values)
        path = None
    along = {}
    if path is not None:
        start, gradient = path.start_and_gradient(path_key, qp)
        along = dict(initial=start, initial_gradient=gradient, cache=path.cache(path_key, qp))
    elif whole is not None and qp.reads_rows_of(whole.kernel, whole.X):
        along = dict(cache=whole)                  # the Gram matrix the unit was read from, kept for the rounds too
    elif _may_run_again(machine, opts) and "cache" not in opts and qp.diagonal is None:
        along = dict(cache=_row_cache(qp.kernel, qp.X, opts))   # the SMO's own, kept for the rounds in the outputs' unit
    result = smo(qp, tol=tol, **opts, **along)
    # the rounds in the outputs' unit read the first run's rows (kept or its own: they computed them all anew)
    kept = {"cache": along["cache"]} if along.get("cache") is not None else {}
    result, stop_tol = _in_outputs_unit(machine, qp, result, tol, dict(opts, **kept))
    if path is not None:
        path.record(path_key, qp, result.a, result.G)
    opts = {name: value for name, value in opts.items() if name not in ("initial", "cache")}
    refuse(machine, result.outcome, result.status, "standard-form dual", "SMO")
    if result.entry_rounding is not None and qp.X is machine.X and qp.kernel == machine.kernel:
        # the bound on a kernel value's rounding from the operands the rows were computed from, centred at the mean
        # of X as the machine's own (which would compute them again: 21 of 950 us of a C-SVC fit at N = 100)
        machine.__dict__.setdefault("kernel_entry_error", result.entry_rounding)
    # the SMO moves a multiplier onto its bound exactly: its support is every a_n above rounding, as LIBSVM's
    # (BOUND_TOL's cut, for the interior-point solvers' near-zeros, dropped free a_n of 1e-6 of their box), read
    # from the masks its rho was computed from (SMO_BOUND_TOL is the SMO's BOUND_ROUNDING)
    sol = machine.solution_from_standard(result.a, _info(result, "smo"), rho=result.rho, G=result.G,
                                         trace=result.trace, bound_tol=SMO_BOUND_TOL, at_lower=result.at_lower)
    own = machine._standard_form_solution(sol, "smo", dict(opts, tol=tol))
    detail = None if result.status == "optimal" else _smo_stop(result, stop_tol)   # certify's words for a stop
    outcome = result.outcome
    if own is not sol and own.status in ("max_iter", "roundoff"):
        # the machine's own solve in place of this one (nu-SVR's epsilon-SVR at epsilon = 0) stopped early, at what
        # was left of a max_iter: its outcome, inaccurate, is the answer's
        outcome = OUTCOME_OF[own.status]
    cert_tol = matched_tol(machine, "smo", tol)
    # the outputs K u from the SMO's kernel rows (not its maintained gradient) where their rounding
    # is at most a quarter of the certificate's tolerance, or where they are the float64 ones on every
    # point whose KKT conditions they decide (``outputs_banded``): the kernel is not evaluated a second
    # time (and only for the SMO's own multipliers: a machine may have replaced them, nu-SVR's fallback)
    precise = (result.outputs_error <= OUTPUT_ERROR_SHARE * cert_tol * machine.output_scale
               or result.outputs_banded)
    Ku = result.outputs if precise and own is sol else None
    return certify(machine, own, outcome, "standard-form dual", "SMO", cert_tol, detail, Ku=Ku)


#: ``solve_smo``: rounds of the SMO again in the outputs' own unit, where that is below 1/RHO_SHARE of
#: ``output_scale`` (``Machine.solved_output_scale``: nu-SVC's rho).
RHO_ROUNDS = 3
RHO_SHARE = 4.0
#: The finest relative tol those rounds go to (a degenerate optimum, rho = 0, would ask for none at all).
RHO_TOL_FLOOR = 1e-9
#: Without a ``max_iter``, the rounds take at most the larger of these steps and this factor times the first
#: run's, together: a round that would take more is dropped, and the last answer that met its stop is kept.
#: On a nearly degenerate optimum (NuSVC(nu=0.05, gamma=1e-3) on 3,000 standardised make_classification points:
#: rho 5e-8 of nu times the spread) the first run took 0.63 million steps and the rounds ran on past 2.4
#: million at a tol of 1e-9, each under the SMO's own cap of 10 million (the fit took over 11 minutes); the
#: largest round the tests need took 0.40 million (digits, float64 rows, 129 steps first).
RHO_ROUND_STEPS = 500_000
RHO_ROUND_FACTOR = 2


def _in_outputs_unit(machine: Machine, qp: Any, result: Any, tol: float, opts: dict) -> tuple[Any, float]:
    """The SMO's result, run again from where it stopped with its stop measured in the outputs' own unit where
    that turns out smaller than ``output_scale`` (nu-SVC: rho, t_n y(x_n) = rho on the margin, which no
    scale of the data alone tracks: a degree-3 polynomial kernel at nu = 0.1 stopped after 12 steps at a dual
    objective twice the optimum's, which the certificate, in ``output_scale``'s unit, 4e4 times rho, passed);
    and the relative tol of the last run, in ``output_scale``'s unit. A ``max_iter`` in ``opts`` caps the steps
    of all the runs together."""
    from ..solvers.smo import smo

    stop_tol, precise = tol, None
    if not _may_run_again(machine, opts):
        return result, stop_tol             # the unit is output_scale's; or a trace of the one run is asked for
    capped = opts.get("max_iter") is not None
    # the cap on the steps of every run together: the caller's, or the rounds' own budget past the first run
    cap = int(opts["max_iter"]) if capped else result.iterations + max(RHO_ROUND_STEPS,
                                                                        RHO_ROUND_FACTOR * result.iterations)
    for _ in range(RHO_ROUNDS):
        if result.outcome != "solved" or result.rho is None:
            break
        size = machine.solved_output_scale(result.rho)
        finer = max(tol * size / machine.output_scale, RHO_TOL_FLOOR)
        if not (size < machine.output_scale / RHO_SHARE and finer < stop_tol / RHO_SHARE):
            break
        options = {name: value for name, value in opts.items() if name not in ("initial", "initial_gradient")}
        steps, seconds, rows = result.iterations, result.solve_time, result.rows_computed
        if steps >= cap:
            break
        options["max_iter"] = cap - steps
        if qp.diagonal is None and (options.get("cache") is None or options["cache"].dtype != np.float64):
            # (a QP with a diagonal term takes no cache from here: the SMO builds its own, with the term)
            options["cache"] = _precise_rows(machine, qp, result.a, options, finer, precise)
            precise = options["cache"] if options["cache"].dtype == np.float64 else precise
        trial = smo(qp, tol=finer, **options, initial=result.a)
        spent = dict(iterations=steps + trial.iterations, solve_time=seconds + trial.solve_time,
                     rows_computed=rows + trial.rows_computed)      # the steps, time and rows of every round
        if trial.status == "max_iter" and not capped:
            # the rounds' own budget ran out: the last answer that met its stop stands (at that stop), with the
            # steps spent; a cap the caller set ends as the SMO's own does, inaccurate
            return replace(result, **spent), stop_tol
        result, stop_tol = replace(trial, **spent), finer
    return result, stop_tol


def _may_run_again(machine: Machine, opts: dict) -> bool:
    """Whether ``_in_outputs_unit`` may run the SMO again: a machine whose outputs' unit is known once solved
    (``Machine.solved_output_scale`` overridden), and no trace of one run asked for."""
    return type(machine).solved_output_scale is not Machine.solved_output_scale and not opts.get("record")


def _whole_rows_first(machine: Machine, opts: dict) -> Any:
    """The SMO's row cache (``smo.row_cache``) with the whole Gram matrix filled, and the machine's kernel means
    (``machine.kernel_means``) taken from it before its QP reads them, where the QP's unit is built from them
    (nu-SVC's nu times the spread, the one-class SVM's mean: ``output_scale`` overridden, and the rounds in the
    outputs' unit) on at most ``smo.SMALL_GRAM_POINTS`` points, whose Gram matrix the SMO computes whole anyway:
    the kernel computed it first a second time (binary NuSVC on 1,000 points: 5.5 of 21 ms). None elsewhere (the
    means known already, a cache given, a QP built, a sparse X, a precomputed kernel); ``solve_smo`` hands it to the
    SMO where the QP is the kernel on those inputs, one variable per point, with no diagonal term."""
    from ..solvers.smo import SMALL_GRAM_BLOCK, SMALL_GRAM_POINTS
    from ..sparse import issparse
    from .machine import kernel_means

    X = machine.X
    if ("_kernel_means" in machine.__dict__ or machine._qp is not None or "cache" in opts
            or not _may_run_again(machine, opts) or type(machine).output_scale is Machine.output_scale
            or X is None or issparse(X) or machine.kernel.name == "precomputed" or X.shape[0] > SMALL_GRAM_POINTS):
        return None
    cache = _row_cache(machine.kernel, X, opts)
    if cache.dtype != np.float64 or cache.n_slots < cache.N:
        return None
    cache.fill_whole(SMALL_GRAM_BLOCK, 0)
    machine.__dict__["_kernel_means"] = kernel_means(cache.store[:cache.N])
    return cache


def _row_cache(kernel: Any, X: Any, opts: dict, dtype: Any = None) -> Any:
    """The row cache the SMO builds for itself (``smo.row_cache``), built here so that its rounds in the
    outputs' unit read the rows the first run computed: each computed them all again (2,000 x 800 inputs,
    nu-SVC: 1,779 rows, 0.49 s of a 1.2 s fit). ``dtype``: the rows' type (None: the SMO's own choice)."""
    from ..solvers.smo import row_cache
    from ..validation import check_param

    return row_cache(kernel, X, float(check_param("cache_mb", opts.get("cache_mb", 200))), dtype)


def _precise_rows(machine: Machine, qp: Any, a: Any, opts: dict, tol: float, precise: Any) -> Any:
    """The row cache for a round in the outputs' unit at relative ``tol``: the one in ``opts`` (or the SMO's own)
    where its rows resolve that tol, else a float64 one (``precise``, kept from an earlier round, or new).

    float32 rows (N > 1448) hold each entry to ``KernelRowCache.entry_error``, and the gradient to that times
    sum_i |a_i| q.scale: on digits (1,797 points, RBF gamma 0.01 / 64, nu = 0.05) 2.4e-3 of the gradient's
    unit, where the round asked for 1.7e-8 (rho 5e-6 of nu times the spread): it took 7.6 million steps
    (16 s; at nu = 0.01 both rounds ran to the iteration cap, 18 million steps), with float64 rows 0.4
    million to Clarabel's rho."""
    cache = opts.get("cache")
    if cache is None:
        cache = _row_cache(qp.kernel, qp.X, opts)
    if cache.dtype == np.float64:
        return cache
    error = cache.entry_error(machine.kernel_diagonal_max) * float(np.sum(np.abs(a))) * float(qp.scale)
    if not error > tol * float(qp.tol_scale):
        return cache
    return precise if precise is not None else _row_cache(qp.kernel, qp.X, opts, np.float64)


def _smo_stop(result: Any, tol: float) -> str:
    """Why an SMO run that is not optimal stopped, for the certificate's warning."""
    why = ("its iteration cap" if result.status == "max_iter" else
           "the floating-point resolution of its gradient (the kernel's values are too large for tol)")
    return (f"the SMO stopped at {why} after {result.iterations} iterations with maximal "
            f"violation {result.violation:.3e} (relative) >= tol = {tol:g}")


def solve_direct(machine: Machine, solver: str = "clarabel", bound_tol: float = BOUND_TOL,
                 **opts: Any) -> Solution:
    """The StandardQP through Clarabel's or OSQP's own API; ``opts`` are the solver's settings."""
    from ..solvers.direct import solve_standard_qp
    from ..validation import check_param

    bound_tol = float(check_param("bound_tol", bound_tol, "tol"))
    machine.require_convex(f"the direct QP (qp-{solver})")
    result = solve_standard_qp(machine.standard_qp(), solver, **opts)
    refuse(machine, result.outcome, result.status, "dual", result.solver)
    sol = machine.solution_from_standard(result.a, _info(result, "qp"), bound_tol=float(bound_tol))
    sol = machine._standard_form_solution(sol, "qp-" + solver, dict(opts, bound_tol=bound_tol))
    return certify(machine, sol, result.outcome, "dual", result.solver, matched_tol(machine, "qp-" + solver))


def _info(result: QPResult, method: str) -> dict[str, Any]:
    return dict(solver=result.solver, method=method, status=result.status, iterations=result.iterations,
                solve_time=result.solve_time, compile_time=result.compile_time, solver_gap=result.solver_gap)


def refuse(machine: Machine, outcome: str, status: str, kind: str, solver: str) -> None:
    """Raise for an outcome with no point: InfeasibleError where the machine accepts the
    solver's infeasibility certificate as a proof, else SolverError."""
    if outcome in ("solved", "inaccurate"):
        return
    if outcome == "infeasible":
        machine._infeasible(status, kind, solver)
        # every machine but the hard margin (whose hook raised above) has a solution for all the data and
        # hyperparameters it accepts (nu-SVC's nu is bounded when it is built): the status is the solver's
        # numerical failure (Clarabel on an SVR's primal with targets of size 1e6), not a property of the data
        raise SolverError(f"{solver} reported {status!r} on the {kind} of {machine.name}, which has a solution for "
                          f"every data set and hyperparameter it accepts: a numerical failure of the solver (the "
                          f"outputs' scale is {machine.output_scale:.3g}); solve by 'smo' or another method, or "
                          f"rescale the data", status=status, solver=solver)
    raise SolverError(f"{solver} did not solve the {kind} of {machine.name}: status {status}",
                      status=status, solver=solver)


def certify(machine: Machine, solution: Solution, outcome: str, kind: str, solver: str, tol: float,
            detail: str | None = None, Ku: Any = None) -> Solution:
    """The certificate (module docstring): the Solution with its status and report, a warning,
    InfeasibleError with a proof, or SolverError."""
    from .certificate import kkt_report

    solution = support_of_outputs(machine, solution, tol)     # first: the report certifies y(x) on this support
    report = kkt_report(machine, solution, tol, Ku)
    own = solution.status
    rounding = output_rounding(machine, solution)
    resolved = rounding <= OUTPUT_ERROR_SHARE * tol      # the outputs' rounding well below the tolerance
    if report.ok and resolved:
        # a KKT point of a dual that is not convex need not be its optimum (NonConvexWarning)
        status = "optimal" if report.convex else "kkt_point"
        return solution.evolve(status=status, solver_status=own, tol=tol, report=report)
    if report.ok:
        # a pass within the outputs' rounding is luck of the rounding, not a certificate: another
        # evaluation of the same outputs (another BLAS, duality.check) may fail where this one passed
        warn(
            f"{solver} reported {own!r} on the {kind} of {machine.name} and its answer passes the KKT "
            f"conditions at {tol:.1e}, but only to within the rounding of its outputs (up to {rounding:.1e} of "
            f"the output scale: sum |coef| times the rounding of a kernel value{_entry_note(machine)}), which is not "
            f"far below the tolerance: the "
            f"solution is inaccurate (not certified); its report is solution.report",
            ConvergenceWarning, stacklevel=4)
        return solution.evolve(status="inaccurate", solver_status=own, tol=tol, report=report)
    machine._infeasibility_proof(solution, solver)
    failing = _failing(report)
    if outcome == "solved" and not resolved:
        # the outputs cannot be computed to the certificate's tolerance in double precision: not a
        # solver's failure, an answer that cannot be certified
        outcome = "inaccurate"
        detail = (f"{solver} reported {own!r} on the {kind} of {machine.name}, but the rounding of its outputs "
                  f"(up to {rounding:.1e} of the output scale: sum |coef| times the rounding of a kernel value"
                  f"{_entry_note(machine)}) is not far below "
                  f"the tolerance")
    if outcome == "solved" and not report.convex:
        # the solver's own stopping test holds (a stationary point of the standard form), but the dual is not
        # convex and the point breaks a condition the standard form does not impose (nu-SVC's rho >= 0 on a
        # sigmoid kernel): no optimum is certified, and LIBSVM would return this point as it is
        lam_min = machine.eigenvalue_range[0] if machine.eigenvalue_range else float("nan")
        raise SolverError(
            f"{solver} stopped at a stationary point of the {kind} of {machine.name} (status {own!r}), but the "
            f"kernel matrix is not positive semidefinite (smallest eigenvalue {lam_min:.3e}), so the dual is not "
            f"convex, and this point fails the machine's KKT conditions at {tol:.1e}: {failing}; it is not a "
            f"solution of the notes' problem (LIBSVM returns it as it is): take a positive semidefinite kernel "
            f"(kernel={machine.kernel!r})", status=own, solver=solver, report=report)
    if outcome == "solved":
        raise SolverError(
            f"{solver} reported {own!r} on the {kind} of {machine.name}, but its answer fails the machine's "
            f"KKT conditions at the matched tolerance {tol:.1e}: {failing}", status=own, solver=solver,
            report=report)
    detail = detail or (f"{solver} stopped before its tolerance on the {kind} of {machine.name} after "
                        f"{solution.iterations} iterations (status {own})")
    warn(
        f"{detail}; "
        f"the solution is inaccurate: {failing} (tolerance {tol:.1e}); its report is solution.report",
        ConvergenceWarning, stacklevel=4)
    return solution.evolve(status="inaccurate", solver_status=own, tol=tol, report=report)


def support_of_outputs(machine: Machine, solution: Solution, tol: float) -> Solution:
    """The solution with every non-zero coefficient in its support where those its support leaves out
    move the outputs y(x_n) by more than ``OUTPUT_ERROR_SHARE * tol`` of the output scale.

    The support of an interior-point (or primal) answer cuts the multipliers below ``BOUND_TOL`` of their
    box, its near-zeros; a free multiplier can sit there too (a_n = 0.055 on a box of 1e4), and y(x), the
    expansion over the support, was then not the function the certificate checked (all multipliers): its
    values on the training points left the certified ones by 0.89 of the margin. The SMO's support is
    every non-zero coefficient already."""
    coef = np.asarray(solution.coef, dtype=np.float64)
    left_out = coef.copy()
    left_out[solution.support] = 0.0
    if not np.any(left_out):
        return solution
    allowed = OUTPUT_ERROR_SHARE * tol * machine.output_scale
    # |k(x, y)| <= max k(x, x) for a kernel that is always PSD (Cauchy-Schwarz): no kernel product needed
    if machine.kernel.always_psd and float(np.abs(left_out).sum()) * machine.kernel_diagonal_max <= allowed:
        return solution
    moved = float(np.max(np.abs(machine.kernel_times(left_out))))
    if moved <= allowed:
        return solution
    support = np.flatnonzero(coef)
    rows = None if solution.support_vectors is None else read_only_rows(machine.X, support)
    note = (f"support: every non-zero multiplier (those below the support threshold move the outputs by "
            f"{moved / machine.output_scale:.1e} of the output scale, more than the certificate allows)")
    return solution.evolve(support=support, support_vectors=rows, notes=(*solution.notes, note))


def _entry_note(machine: Machine) -> str:
    """The warning's words for a kernel whose values round beyond eps (``Machine.kernel_entry_error``)."""
    entry = machine.kernel_entry_error
    if not entry > float(np.finfo(np.float64).eps) * machine.kernel_diagonal_max:
        return ""
    return (f", {entry:.1e} for this RBF: gamma = {machine.kernel.gamma:g} times the inputs' squared spread is "
            f"beyond double precision's resolution of -gamma ||x - x'||^2; lower gamma or rescale X")


def output_rounding(machine: Machine, solution: Solution) -> float:
    """A bound on the rounding of the outputs sum_m coef_m k(x_n, x_m) in double precision,
    relative to the output scale: sum_m |coef_m| (eps max_n k(x_n, x_n) + the kernel values' own
    rounding, ``Machine.kernel_entry_error``: an RBF of a very large gamma)."""
    eps = float(np.finfo(np.float64).eps)
    entry = eps * machine.kernel_diagonal_max + machine.kernel_entry_error
    return float(np.abs(solution.coef).sum()) * entry / machine.output_scale


def _failing(report: Any) -> str:
    """The failing rows and gap of a report, in a line."""
    parts = [f"{r.tag} {r.condition} violated by {r.violation:.1e}" for r in report.failed()]
    parts += [f"{r.tag} {r.condition} not evaluated ({r.note})" for r in report.unevaluated()]
    if not report.gap.relative <= report.tol:
        parts.append(f"relative duality gap {report.gap.relative:.1e}")
    return "; ".join(parts[:4]) + (f" and {len(parts) - 4} more" if len(parts) > 4 else "")


def cvxpy_outcome(status: str, has_values: bool) -> str:
    """A cvxpy status as an outcome of ``standard_qp.OUTCOMES``."""
    if status == cp.OPTIMAL:
        return "solved"
    if status in (cp.OPTIMAL_INACCURATE, cp.USER_LIMIT) and has_values:
        return "inaccurate"
    if status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE, cp.UNBOUNDED, cp.UNBOUNDED_INACCURATE):
        return "infeasible"
    return "failed"


def method_name(solution: Solution) -> str:
    """The ``solve`` method name of a solution (for its matched tolerance); "user" for multipliers given by hand
    (``Machine.solution``), whatever name they give their solver: a Solution labelled solver="smo" was judged at
    the SMO's 2e-3, the same multipliers labelled "mine" at 1e-6."""
    solver = str(solution.solver).lower()
    if solution.method in ("smo", "libsvm", "user"):
        return solution.method
    if solution.method == "qp":
        return "qp-" + solver
    if solution.method in ("primal", "hinge"):
        return f"{solution.method}-{solver}"
    return solver


def matched_tol(machine: Machine, method: str, tol: float | None = None) -> float:
    """The KKT tolerance matched to a method's accuracy (its certificate's tolerance).

    The SMO and LIBSVM: ``CERTIFICATE_FACTOR`` times their relative tol (the
    rows are bounded by it, the gradient being accumulated step by step), at
    least 1e-6 for LIBSVM (its float kernel values); for ``tol=None`` their
    defaults (the SMO's 1e-3, LIBSVM's 1e-8). Clarabel (run at 1e-12): 1e-6;
    OSQP (at 1e-6): 1e-5; a primal the machine solves less accurately
    (``primal_tol``, SVDD's second-order cone primal at Clarabel's default
    1e-8): the larger.
    """
    name = method.lower()
    if name == "smo":
        return max(CERTIFICATE_FACTOR * (1e-3 if tol is None else float(tol)), CERTIFICATE_FLOOR)
    if name == "libsvm":
        return max(CERTIFICATE_FACTOR * (1e-8 if tol is None else float(tol)), 1e-6)
    base = 1e-5 if name in ("osqp", "qp-osqp", "primal-osqp", "hinge-osqp") else 1e-6
    return max(base, machine.primal_tol) if name.startswith(("primal", "hinge")) else base
