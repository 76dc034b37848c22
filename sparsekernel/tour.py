"""``sparsekernel tour``: every machine on the notes' data, by every method, in one table."""

from __future__ import annotations

import json
import time
import warnings
from dataclasses import asdict, dataclass
from typing import Callable, Iterable

from .chapter import notes_cases
from .duality.kkt import check, matched_tol
from .errors import ConvergenceWarning
from .methods import has_libsvm_twin, solve_by

__all__ = ["TourRow", "run_tour", "format_table", "TOUR_METHODS"]

#: method -> the objective it optimises
TOUR_METHODS: dict[str, str] = {
    "primal-clarabel": "primal",
    "clarabel": "dual",
    "osqp": "dual",
    "qp-clarabel": "dual",
    "qp-osqp": "dual",
    "smo": "dual",
    "libsvm": "dual",
}


@dataclass(frozen=True)
class TourRow:
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
    kkt_ok: bool


def run_tour(
    methods: Iterable[str] = tuple(TOUR_METHODS),
    n_ripley: int = 200,
    progress: Callable[[str], None] | None = None,
) -> list[TourRow]:
    """Solve every notes' machine by every method; one row per (machine, method)."""
    rows = []
    for case in notes_cases(n_ripley):
        machine = case.build()
        for method in methods:
            if method == "libsvm" and not has_libsvm_twin(machine):
                continue  # LIBSVM has no hard-margin or SVDD machine
            if progress is not None:
                progress(f"{case.label}: {method}")
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                sol = solve_by(machine, method)
            seconds = time.perf_counter() - start - (sol.compile_time if method == "smo" else 0.0)
            side = TOUR_METHODS.get(method, "dual")
            objective = sol.primal_objective if side == "primal" else sol.dual_objective
            report = check(machine, sol, matched_tol(machine, method))
            rows.append(TourRow(case.label, case.data, method, objective, sol.gap, sol.relative_gap,
                                sol.n_support, machine.N, seconds, sol.status, report.max_violation, report.ok))
    return rows


def format_table(rows: list[TourRow]) -> str:
    """The tour's table, one line per row, numbers in fixed formats."""
    header = (f"{'machine':<14} {'data':<14} {'method':<16} {'objective':>14} {'gap':>9} {'rel.gap':>9} "
              f"{'max KKT':>9} {'support':>9} {'time':>8}")
    lines = [header, "-" * len(header)]
    previous = None
    for r in rows:
        name = r.machine if r.machine != previous else ""
        data = r.data if r.machine != previous else ""
        previous = r.machine
        lines.append(
            f"{name:<14} {data:<14} {r.method:<16} {r.objective:>14.8g} {r.gap:>9.1e} "
            f"{r.relative_gap:>9.1e} {r.max_kkt_violation:>8.1e}{' ' if r.kkt_ok else '!'} "
            f"{f'{r.n_support}/{r.n_train}':>9} {r.seconds:>7.3f}s"
        )
    lines.append("max KKT: largest relative violation of the machine's KKT conditions and gap "
                 "(duality.check); '!' marks one above its tolerance. Times: wall clock of the solve "
                 "(cvxpy's compilation included, numba's one-time load of the SMO not)")
    return "\n".join(lines)


def rows_to_json(rows: list[TourRow]) -> str:
    return json.dumps([asdict(r) for r in rows], indent=2)
