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


def _nu_svr_with_slack_bound():
    from sparsekernel.formulations import NuSVR

    rng = np.random.default_rng(2)
    X = rng.normal(size=(25, 2))
    rng.normal(size=25)                          # (the labels of the same seed's classification data)
    t = np.sin(X[:, 0]) + 0.1 * rng.normal(size=25)
    return NuSVR(X, t, RBF(0.5), C=1.0, nu=1.0)


def test_nu_svr_multipliers_that_leave_7_74_slack_recover_epsilon_zero() -> None:
    """At nu = 1 the optimum leaves (7.74) slack, so epsilon = 0 (delta epsilon = 0, Result 7.10). An
    optimal a, a_hat with every multiplier at a bound (no free one: OSQP's dual answer) had epsilon
    recovered at the midpoint of the nu form's KKT interval (as if (7.74) were an equality): 'delta
    epsilon = 0 violated by 2.1e-03', and OSQP's optimal answer raised SolverError."""
    from sparsekernel.duality import check

    machine = _nu_svr_with_slack_bound()
    N, C, t = machine.N, machine.C, machine.t
    ref = machine.solve("clarabel")
    u = np.asarray(ref.a - ref.a_hat)
    a, a_hat = np.maximum(u, 0.0), np.maximum(-u, 0.0)      # a_n a_hat_n = 0, least sum (a + a_hat)
    assert np.sum(a + a_hat) < 0.99 * machine.nu * C        # (7.74) slack
    report = check(machine, a=a, a_hat=a_hat)
    assert report.ok, [(r.tag, r.condition, r.violation) for r in report.failed()]
    # independently: with epsilon = 0 the primal of Result 7.10 at (w, b) equals the dual (7.70)
    K = machine.kernel(machine.X, machine.X)
    sol = machine.solution(a, None, a_hat)
    assert sol.epsilon == 0.0
    y = K @ u + sol.b
    primal = 0.5 * u @ K @ u + C / N * np.sum(np.abs(t - y))
    dual = -0.5 * u @ K @ u + u @ t
    assert abs(primal - dual) <= 1e-9 * max(1.0, abs(dual))
    osqp = machine.solve("osqp")
    assert osqp.status == "optimal" and osqp.epsilon == 0.0
    assert abs(osqp.dual_objective - dual) <= 1e-6 * abs(dual)


def test_a_report_whose_gap_is_nan_counts_the_gap_as_failing() -> None:
    """``ok`` needs gap.relative <= tol, which a NaN gap (objectives that overflow: inf - inf) fails, and
    the gap line says FAIL; the verdict counted only gap.relative > tol (False for NaN): with every row
    passing it read 'NOT CERTIFIED (0 rows not evaluated; the others pass)', and multipliers of 1e200
    for the hard margin gave 'FAIL (3 of 7 checks ...)' above four 'fails:' lines."""
    import math

    from sparsekernel.duality import Gap, KKTReport, KKTRow

    row = KKTRow("(7.15)", "primal feasibility", "t_n y_n - 1 >= 0", 0.0, 0.0, 1.0, None, True)
    report = KKTReport("a report", (row,), Gap(math.inf, math.inf, math.nan, math.nan), 1e-6)
    assert not report.ok
    text = str(report)
    assert "result: FAIL (1 of 2 checks above 1.0e-06)" in text
    assert "NOT CERTIFIED" not in text and "FAIL" in report._repr_html_()


def test_compare_refuses_a_machine_or_solutions_that_do_not_match_naming_them() -> None:
    """compare(sol_a, sol_b, machine=...) with a machine of 15 points for solutions of 20 raised numpy's
    'operands could not be broadcast together with shapes (15,) (20,)', and compare_many(machine, {})
    an IndexError; both are bad input, a ValidationError naming the argument and what it got."""
    import pytest

    from sparsekernel.duality import compare
    from sparsekernel.errors import ValidationError

    machine = _soft_margin()
    first, second = machine.solve("clarabel"), machine.solve("smo")
    fewer = SoftMarginSVC(machine.X[:15], machine.t[:15], RBF(0.5), C=1.0)
    with pytest.raises(ValidationError, match=r"sol_a must come from SoftMarginSVC with N = 15; got .* 20 multipliers"):
        compare(first, second, machine=fewer)
    with pytest.raises(ValidationError, match=r"solutions must be a non-empty mapping .* got dict \{\}"):
        compare_many(machine, {})
    with pytest.raises(ValidationError, match=r"solutions\['b'\] must come from SoftMarginSVC with N = 15"):
        compare_many(fewer, {"b": first})


def test_a_bound_tolerance_outside_its_domain_is_refused_naming_it() -> None:
    """categories(m, s, bound_tol=-1) (or NaN) counted every multiplier free: all 20 points 'on the
    margin' where Result 7.6's table, computed here from the margins t_n y_n, has 6 on it; bound_tol='x'
    raised numpy's UFuncTypeError; Machine.solution(a, bound_tol=-1) set b (7.37) from every multiplier
    (-0.2523 for the optimum's -0.2994), and the optimal multipliers failed their check."""
    import pytest

    from sparsekernel.duality import categories
    from sparsekernel.errors import ValidationError

    machine = _soft_margin()
    solved = machine.solve("clarabel")
    margins = machine.t * solved.decision_function(machine.X)
    on_margin = int(np.sum(np.abs(margins - 1.0) < 1e-6))
    assert categories(machine, solved).counts["on the margin"] == on_margin < machine.N
    for bad in (-1.0, float("nan"), "x"):
        with pytest.raises(ValidationError, match=r"bound_tol must be a non-negative finite number .*; got"):
            categories(machine, solved, bound_tol=bad)
        with pytest.raises(ValidationError, match=r"bound_tol must be a non-negative finite number"):
            machine.solution(np.asarray(solved.a), bound_tol=bad)
    assert categories(machine, solved, bound_tol=0.0).counts["on the margin"] >= on_margin


def test_an_iteration_cap_beyond_the_solvers_integers_caps_nothing_more() -> None:
    """m.solve('libsvm', max_iter=2**31) raised scikit-learn's OverflowError 'value too large to convert to
    int' (LIBSVM's C int) and m.solve('smo', max_iter=2**63) Python's 'Python int too large to convert to C
    long' (the compiled loop's int64): a cap no run can reach is no cap, and both answers are the optimum
    (the dual (7.32) evaluated here against Clarabel's)."""
    machine = _soft_margin()
    K = machine.kernel(machine.X, machine.X)

    def dual(sol) -> float:
        u = sol.a * machine.t
        return float(sol.a.sum() - 0.5 * u @ K @ u)

    best = dual(machine.solve("clarabel"))
    for method, cap in (("libsvm", 2 ** 31), ("libsvm", 2 ** 40), ("smo", 2 ** 63), ("smo", 10 ** 30)):
        sol = machine.solve(method, max_iter=cap)
        assert sol.status == "optimal"
        assert abs(dual(sol) - best) <= 1e-3 * abs(best)


def test_osqp_options_out_of_their_domain_are_refused_naming_them() -> None:
    """OSQP refuses eps_abs = -1 or max_iter = -3 at its settings validation: a first solve raised
    SolverError 'OSQP failed on the dual of SoftMarginSVC: 2', and a solve after another (cvxpy updates the
    solver it kept) the bare osqp.interface.OSQPException '2', no sparsekernel error at all. Both are bad
    input: a ValidationError naming the options and the values, and the machine still solves."""
    import pytest

    from sparsekernel.errors import ValidationError

    for solved_before in (False, True):
        machine = _soft_margin()
        if solved_before:
            machine.solve("osqp")
        for opts in ({"eps_abs": -1.0}, {"max_iter": -3}):
            with pytest.raises(ValidationError, match=r"the options of OSQP must be settings it takes, with values "
                                                      r"in their domains .*; got \{'(eps_abs|max_iter)': -"):
                machine.solve("osqp", **opts)
        with pytest.raises(ValidationError, match=r"the options of OSQP must be settings it takes, with values"):
            machine.solve("osqp", eps_abs="x")          # first solve: SolverError 'incompatible function arguments'
        assert machine.solve("osqp").status == "optimal"


def test_a_clarabel_option_beyond_its_integer_type_is_refused_naming_it() -> None:
    """max_iter = -3 for Clarabel (an unsigned integer) raised a bare OverflowError 'out of range integral
    type conversion attempted' from the cvxpy dual, and SolverError 'clarabel failed: OverflowError' from the
    direct QP, where max_iter='x' was already a ValidationError naming the setting."""
    import pytest

    from sparsekernel.errors import ValidationError

    machine = _soft_margin()
    with pytest.raises(ValidationError, match=r"the options of CLARABEL must be settings it takes, with values in "
                                              r"the range of their types; got \{'max_iter': -3\}"):
        machine.solve("clarabel", max_iter=-3)
    with pytest.raises(ValidationError, match=r"the clarabel setting max_iter must be a value of its type; got -3"):
        machine.solve("qp-clarabel", max_iter=-3)
    assert machine.solve("clarabel").status == "optimal"


def test_max_violation_is_nan_where_the_gap_is_nan_whatever_the_rows_order() -> None:
    """Python's max keeps a NaN placed first and drops one placed after a number: the report's max_violation
    was 0.5 or NaN for the same NaN gap depending on the rows. It is NaN (unknown), as ``ok`` fails it."""
    import math

    from sparsekernel.duality import Gap, KKTReport, KKTRow

    rows = (KKTRow("(7.15)", "primal feasibility", "t_n y_n - 1 >= 0", 0.5, 0.0, 1.0, None, False),
            KKTRow("(7.16)", "dual feasibility", "a_n >= 0", 0.0, 0.0, 1.0, None, True))
    nan_gap = Gap(math.inf, math.inf, math.nan, math.nan)
    assert math.isnan(KKTReport("a report", rows, nan_gap, 1e-6).max_violation)
    assert math.isnan(KKTReport("no rows", (), nan_gap, 1e-6).max_violation)
    finite = KKTReport("a report", rows, Gap(1.0, 1.0 - 1e-9, 1e-9, 1e-9), 1e-6)
    assert finite.max_violation == 0.5                        # the largest row, above the gap
