"""Audit 3 of the duality module: regression tests, each failing on the code before its fix."""

from __future__ import annotations

import json

import numpy as np

from sparsekernel.duality import compare_many
from sparsekernel.duality.compare import format_many
from sparsekernel.formulations import SoftMarginSVC
from sparsekernel.kernels import RBF


def _soft_margin() -> SoftMarginSVC:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 2))
    return SoftMarginSVC(X, np.where(X[:, 0] > 0, 1.0, -1.0), RBF(0.5), C=1.0)


def test_the_compare_table_shows_a_user_solution_and_the_tolerance_the_json_holds() -> None:
    """format_many raised TypeError on a summary holding None (a user's multipliers have no solve
    time: NaN, None in the JSON form) and printed a tolerance of 1.5e-3 as '2e-03'."""
    machine = _soft_margin()
    solved = machine.solve("clarabel")
    user = machine.solution(np.asarray(solved.a), solved.b)
    summary = compare_many(machine, {"clarabel": solved, "user": user}, tol=1.5e-3)
    payload = json.loads(json.dumps(summary))
    assert payload["rows"][1]["seconds"] is None
    table = format_many(summary)
    assert "KKT tolerance 1.5e-03" in table
    line = next(row for row in table.splitlines() if row.startswith("user "))
    fields = line.split()
    assert fields[-1] == "n/a"
    # the same numbers as the JSON, and as an independent evaluation of the dual (7.32)
    K = machine.kernel(machine.X, machine.X)
    u = user.a * machine.t
    assert float(fields[2]) == float(f"{payload['rows'][1]['dual']:.8g}")
    assert abs(float(fields[2]) - (user.a.sum() - 0.5 * u @ K @ u)) < 1e-6
