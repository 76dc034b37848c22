"""``sparsekernel tour``: every machine on the notes' data, by every method, in one table.

The SVMs (the seven machines of section 7.1) are solved by the cvxpy primal,
the cvxpy dual with Clarabel and OSQP, the direct standard-form QP with both,
the hand-written SMO and LIBSVM through scikit-learn; each row has its
objective, primal-dual gap, the largest violation of its KKT conditions
(``duality.check``), its support count and its time. The RVM (section 7.2)
follows on the same data, by its three algorithms, with the log evidence (7.85)
as its objective; then the sparsity comparison of the two: support vectors
against relevance vectors. Before any of it, ``warm_up`` loads the numba loops
of the SMO and the RVM (compiled at install; without that build, compiled by
numba's JIT on the first run), so that no row's time holds a compilation; the
tour reports that time apart.
"""

from __future__ import annotations

import json
import math
import time
import warnings
from dataclasses import asdict, dataclass, field
from typing import Callable, Iterable

import numpy as np

from . import chapter, datasets
from .chapter import notes_cases, sparsity_machines
from .duality.conditions import check
from .duality.report import _clean
from .errors import ConvergenceWarning, SolverError
from .kernels import RBF
from .methods import has_libsvm_twin, solve_by

__all__ = ["TourRow", "Sparsity", "Tour", "run_tour", "warm_up", "format_table", "TOUR_METHODS", "RVM_METHODS"]

#: SVM method -> the objective it reports
TOUR_METHODS: dict[str, str] = {
    "primal-clarabel": "primal", "clarabel": "dual", "osqp": "dual", "qp-clarabel": "dual",
    "qp-osqp": "dual", "smo": "dual", "libsvm": "dual",
}
RVM_METHODS = ("fast", "mackay", "em")
#: the RVM's tolerance in nats: the default (MacKay and EM finish with the fast method's moves, so the three
#: stop by one rule)
RVM_TOL = 1e-3


@dataclass(frozen=True)
class TourRow:
    """One machine solved by one method. For the RVM, ``objective`` is the log evidence (7.85), the
    count is of relevance vectors, and the gap and KKT columns do not apply (nan, None)."""

    machine: str
    data: str
    method: str
    objective: float
    gap: float
    relative_gap: float
    n_support: int
    n_train: int
    seconds: float
    status: str
    max_kkt_violation: float
    kkt_ok: bool | None


@dataclass(frozen=True)
class Sparsity:
    """Support vectors against relevance vectors on the same data (Figures 7.8 and 7.9, 7.4 and 7.12)."""

    data: str
    svm: str
    support_vectors: int
    rvm: str
    relevance_vectors: int
    n_train: int
    note: str


@dataclass(frozen=True)
class Tour:
    """The rows, the sparsity comparison, and the seconds spent loading or compiling the numba loops
    (``warm_up``, before the first row; in no row's time)."""

    rows: list[TourRow] = field(default_factory=list)
    sparsity: list[Sparsity] = field(default_factory=list)
    compile_seconds: float = 0.0
    failures: list[str] = field(default_factory=list)  # "machine, method: the solver's error" per failed row

    @property
    def certified(self) -> bool:
        """Whether every SVM row passed its KKT check (``duality.check``) and no solver failed."""
        return not self.failures and all(r.kkt_ok in (True, None) for r in self.rows)


def warm_up() -> float:
    """Load (or, without the install's compiled extension, compile once) the numba loops of the SMO and of the RVM's three methods
    by solving tiny problems; the seconds it took."""
    from .solvers.rvm import rvm_classification, rvm_regression
    from .solvers.smo import ensure_compiled

    start = time.perf_counter()
    ensure_compiled(np.float64)
    Xr, tr = datasets.sinusoid()                          # the tour's regression data, and a small mixture
    Xc, tc = datasets.ripley_mixture(n=20)
    Kr, Kc = RBF(chapter.SINUSOID_GAMMA)(Xr, Xr), RBF(chapter.RIPLEY_GAMMA)(Xc, Xc)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for method in RVM_METHODS:
            rvm_regression(Kr, tr, method=method, tol=RVM_TOL)
            rvm_classification(Kc, (tc > 0).astype(float), method=method, tol=RVM_TOL)
    return time.perf_counter() - start


def run_tour(methods: Iterable[str] = tuple(TOUR_METHODS), n_ripley: int = 200,
             rvm_methods: Iterable[str] = RVM_METHODS,
             progress: Callable[[str], None] | None = None) -> Tour:
    """Warm the compiled loops, solve every notes' machine by every method, then the RVM, then compare
    their sparsity."""
    from .formulations.solve import _check_method

    methods = [_check_method(m) for m in methods]     # a bad name fails before the warm-up, not after it
    if progress is not None:
        progress("loading numba's loops (compiling them on a first run without the install's build)")
    tour = Tour(compile_seconds=warm_up())
    for case in notes_cases(n_ripley):
        machine = case.build()
        for method in methods:
            if method == "libsvm" and not has_libsvm_twin(machine):
                continue  # LIBSVM has no hard-margin or SVDD machine
            if progress is not None:
                progress(f"{case.label}: {method}")
            tour.rows.append(_svm_row(case, machine, method, tour.failures))
    for label, data, task in (("RVR", "sinusoid (10)", "regression"), ("RVC", f"ripley ({n_ripley})", "classification")):
        for method in rvm_methods:
            if progress is not None:
                progress(f"{label}: {method}")
            tour.rows.append(_rvm_row(label, data, task, method, n_ripley))
    if progress is not None:
        progress("sparsity: support against relevance vectors")
    tour.sparsity.extend(_sparsity(n_ripley))
    return tour


def _svm_row(case, machine, method: str, failures: list[str]) -> TourRow:
    """The row of one solve; where the solver fails (an answer that fails its certificate, a status that is
    no solution) a row saying so, its error added to ``failures``, and the tour goes on."""
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        try:
            sol = solve_by(machine, method)
        except SolverError as exc:   # OSQP's dual of nu-SVC on 1,000 points of Ripley's mixture, say
            failures.append(f"{case.label}, {method}: {exc}")
            violation = exc.report.max_violation if exc.report is not None else math.nan
            return TourRow(case.label, case.data, method, math.nan, math.nan, math.nan, 0, machine.N,
                           time.perf_counter() - start, f"failed ({exc.status})", violation, False)
    seconds = time.perf_counter() - start - (sol.compile_time if method == "smo" else 0.0)
    objective = sol.primal_objective if TOUR_METHODS.get(method) == "primal" else sol.dual_objective
    report = check(machine, sol)                     # at the tolerance its certificate used (sol.tol)
    return TourRow(case.label, case.data, method, objective, sol.gap, sol.relative_gap, sol.n_support, machine.N,
                   seconds, sol.status, report.max_violation, report.ok)


def _rvm_data(task: str, n_ripley: int):
    if task == "regression":
        X, t = datasets.sinusoid()
        return X, t, RBF(chapter.SINUSOID_GAMMA)
    X, t = datasets.ripley_mixture(n=n_ripley)
    return X, (t > 0).astype(float), RBF(chapter.RIPLEY_GAMMA)


def _rvm_fit(task: str, method: str, n_ripley: int):
    from .solvers.rvm import rvm_classification, rvm_regression

    X, t, kernel = _rvm_data(task, n_ripley)
    fit = (rvm_regression if task == "regression" else rvm_classification)(kernel(X, X), t, method=method,
                                                                            tol=RVM_TOL)
    return fit, X, t, kernel


def _rvm_row(label: str, data: str, task: str, method: str, n_ripley: int) -> TourRow:
    start = time.perf_counter()
    fit, X, _, _ = _rvm_fit(task, method, n_ripley)
    seconds = time.perf_counter() - start
    status = "converged" if fit.converged else "iteration cap"
    return TourRow(label, data, method, float(fit.log_evidence[-1]), math.nan, math.nan, len(fit.relevance),
                   X.shape[0], seconds, status, math.nan, None)


def _sparsity(n_ripley: int) -> list[Sparsity]:
    svr_machine, svc_machine = sparsity_machines(n_ripley)
    svr = solve_by(svr_machine, "smo")
    rvr, *_ = _rvm_fit("regression", "fast", n_ripley)
    Xr, tr = svc_machine.X, svc_machine.t
    svc = solve_by(svc_machine, "smo")
    rvc, Xc, labels, kernel = _rvm_fit("classification", "fast", n_ripley)
    p = rvc.predict_proba(kernel(Xc, Xc)[:, rvc.relevance])[:, -1]
    error = float(np.mean((p >= 0.5) != (labels == 1.0)))
    svc_error = float(np.mean(np.where(svc.decision_function(Xr) >= 0, 1.0, -1.0) != tr))
    return [
        Sparsity("sinusoid (10)", "nu-SVR, nu = 0.7, C = 5", svr.n_support, "RVR (fast)", len(rvr.relevance), 10,
                 f"epsilon found {svr.epsilon:.3f}; RVM noise sigma {1 / math.sqrt(rvr.beta):.3f} (true 0.2)"),
        Sparsity(f"ripley ({n_ripley})", "nu-SVC, nu = 0.5", svc.n_support, "RVC (fast)", len(rvc.relevance),
                 n_ripley, f"training error: SVM {svc_error:.3f}, RVM {error:.3f}"),
    ]


def _num(value: float, spec: str) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else format(value, spec)


def format_table(tour: Tour) -> str:
    """The tour as text: one table of every solve, then the sparsity comparison."""
    header = (f"{'machine':<14} {'data':<14} {'method':<16} {'objective':>14} {'gap':>9} {'rel.gap':>9} "
              f"{'max KKT':>9} {'support':>9} {'time':>8}")
    lines = [header, "-" * len(header)]
    previous = None
    for r in tour.rows:
        name, data = (r.machine, r.data) if r.machine != previous else ("", "")
        previous = r.machine
        mark = " " if r.kkt_ok in (True, None) else "!"
        lines.append(
            f"{name:<14} {data:<14} {r.method:<16} {r.objective:>14.8g} {_num(r.gap, '>9.1e'):>9} "
            f"{_num(r.relative_gap, '>9.1e'):>9} {_num(r.max_kkt_violation, '>8.1e'):>8}{mark} "
            f"{f'{r.n_support}/{r.n_train}':>9} {r.seconds:>7.3f}s"
        )
    lines.append("objective: the primal's or the dual's value (SVMs), the log evidence (7.85) or its Laplace "
                 "approximation (7.114) (RVM); support: support vectors (SVMs), relevance vectors (RVM).")
    lines.append("max KKT: largest relative violation of the machine's KKT conditions and gap (duality.check); "
                 "'!' marks one above its tolerance. Times: wall clock (cvxpy's compilation included, numba's "
                 "not: see the next line). RVM: every method stops where no single move of Algorithm 7.2 "
                 "gains more than tol; where the evidence has several maxima they may stop at different ones.")
    lines.append(f"numba: {tour.compile_seconds:.1f} s loading (or compiling) the SMO's and the RVM's loops "
                 f"before the first row, in no row's time.")
    if tour.failures:
        lines += ["", "Failed (the row's objective is nan and its support 0):"] + [f"  {f}" for f in tour.failures]
    if tour.sparsity:
        lines += ["", "Sparsity: support vectors against relevance vectors on the same data"]
        for s in tour.sparsity:
            lines.append(f"  {s.data:<14} {s.svm:<24} {s.support_vectors:>4} of {s.n_train:<4}   "
                         f"{s.rvm:<11} {s.relevance_vectors:>3} of {s.n_train:<4}   {s.note}")
    return "\n".join(lines)


def rows_to_json(tour: Tour) -> str:
    """The tour as standard JSON: a value that is not a finite number (a gap that does not apply, nan; one that
    overflowed, inf) is null, as in the KKT reports' JSON (``_clean``): inf was written as the token Infinity,
    which JSON does not have and strict parsers refuse."""
    return json.dumps(_clean({"rows": [asdict(r) for r in tour.rows], "sparsity": [asdict(s) for s in tour.sparsity],
                              "compile_seconds": tour.compile_seconds, "failures": tour.failures,
                              "certified": tour.certified}), indent=2, allow_nan=False)
