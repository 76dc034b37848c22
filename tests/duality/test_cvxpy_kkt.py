"""kkt(problem): the KKT status of any solved cvxpy problem."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

from sparsekernel.duality import kkt
from sparsekernel.errors import ValidationError

from cases import machine

rng = np.random.default_rng(7)
n = 6
M = rng.normal(size=(n, n))
P = M @ M.T + np.eye(n)
q = rng.normal(size=n)
A = rng.normal(size=(2, n))
G = rng.normal(size=(4, n))


def _qp(sense=cp.Minimize):
    x = cp.Variable(n, name="x")
    objective = 0.5 * cp.quad_form(x, P) + q @ x
    constraints = [A @ x == 1, G @ x <= 0.2, x >= -0.3]
    problem = cp.Problem(sense(objective if sense is cp.Minimize else -objective), constraints)
    problem.solve(solver="CLARABEL")
    return problem, x, constraints


def test_random_qp_with_equalities_and_inequalities() -> None:
    problem, x, cons = _qp()
    report = kkt(problem)
    assert report.ok, str(report)
    assert report.gap.relative <= 1e-8
    kinds = {r.kind for r in report.rows}
    assert kinds == {"stationarity", "primal feasibility", "dual feasibility", "complementary slackness"}
    # at least one inequality is active with a positive multiplier, so slackness is being tested
    assert max(np.max(cons[1].dual_value), np.max(cons[2].dual_value)) > 1e-3


def test_maximize_problem_uses_the_minimisation_duals() -> None:
    problem, x, cons = _qp(cp.Maximize)
    report = kkt(problem)
    assert report.ok, str(report)
    assert report.gap.primal == pytest.approx(problem.value)
    minimise, _, min_cons = _qp()
    np.testing.assert_allclose(cons[0].dual_value, min_cons[0].dual_value, atol=1e-7)


def test_second_order_cone_problem() -> None:
    y = cp.Variable(3, name="y")
    t = cp.Variable(name="t")
    c = np.array([1.0, 2.0, 3.0])
    problem = cp.Problem(cp.Minimize(t + np.ones(3) @ y), [cp.SOC(t, y - c), y >= 0, t <= 10])
    problem.solve(solver="CLARABEL")
    report = kkt(problem)
    assert report.ok, str(report)
    soc_rows = [r for r in report.rows if r.condition.startswith(("||X_i||", "||lambda_i||", "mu_i t_i"))]
    assert len(soc_rows) == 3


def test_svdd_primal_sphere_constraints_and_tagged_rows() -> None:
    m = machine("svdd-ripley")
    m.solve("primal-clarabel")
    report = kkt(m.primal(), tol=1e-6)
    assert report.ok, str(report)
    assert {r.tag for r in report.rows} >= {"sphere", "xi>=0", "c", "R2", "xi"}


@pytest.mark.parametrize("name", ["soft-ripley", "eps-sine", "nusvr-sine", "oneclass-ripley", "hard-ring"])
def test_machine_formulations_pass(name: str) -> None:
    m = machine(name)
    m.solve("primal-clarabel")
    assert kkt(m.primal()).ok
    m.solve("clarabel")
    report = kkt(m.dual())
    assert report.ok, str(report)
    # a box's two sides are reported as "<tag> lower" and "<tag> upper"
    tags = {r.tag.removesuffix(" lower").removesuffix(" upper") for r in report.rows}
    assert set(m.dual().constraints) <= tags


def test_a_perturbed_point_fails() -> None:
    problem, x, cons = _qp()
    x.value = x.value + 1e-2
    report = kkt(problem)
    assert not report.ok
    failed = {(r.tag, r.kind) for r in report.failed()}
    assert ("x", "stationarity") in failed
    assert ("constraint 0", "primal feasibility") in failed


def test_perturbed_multipliers_fail() -> None:
    problem, x, cons = _qp()
    cons[1].dual_variables[0].value = cons[1].dual_value - 0.5
    report = kkt(problem)
    failed = {(r.tag, r.kind) for r in report.failed()}
    assert ("constraint 1", "dual feasibility") in failed
    assert ("x", "stationarity") in failed


def test_unsolved_or_unsupported_problems_are_refused() -> None:
    x = cp.Variable(2)
    with pytest.raises(ValidationError, match="problem must be solved"):
        kkt(cp.Problem(cp.Minimize(cp.sum_squares(x))))
    X = cp.Variable((2, 2), symmetric=True)
    problem = cp.Problem(cp.Minimize(cp.trace(X)), [X >> np.eye(2)])
    problem.solve(solver="CLARABEL")
    with pytest.raises(ValidationError, match="constraint must be"):
        kkt(problem)
    with pytest.raises(ValidationError, match="cvxpy.Problem or a Formulation"):
        kkt("not a problem")


def test_non_smooth_atoms_report_stationarity_as_not_evaluated() -> None:
    """x = 0 sits on the kink of ||x||_1; cvxpy's grad there is one subgradient, not a certificate."""
    x = cp.Variable(2, name="x")
    problem = cp.Problem(cp.Minimize(cp.norm1(x) + cp.sum_squares(x - 0.2)))
    problem.solve(solver="CLARABEL")
    report = kkt(problem)
    row = next(r for r in report.rows if r.tag == "x")
    assert row.ok is None and "norm1 has an argument entry at 0 (its kink)" in row.note
    assert "n/a" in str(report) and "NOT CERTIFIED" in str(report)
    assert not report.ok and report.unevaluated() == [row]


def test_a_norm_constraint_is_certified_where_the_norm_is_differentiable() -> None:
    """Issue 15's reproducer: min c^T x s.t. ||x||_2 <= 1; the 2-norm is differentiable at the optimum
    x = -c / ||c||, so stationarity c + lambda x / ||x|| = 0 is evaluated and the report certifies."""
    x = cp.Variable(3)
    c = np.array([1.0, -2.0, 0.5])
    problem = cp.Problem(cp.Minimize(c @ x), [cp.norm(x, 2) <= 1])
    problem.solve(solver="CLARABEL")
    report = kkt(problem)
    assert report.ok and not report.unevaluated(), str(report)
    stationarity = [r for r in report.rows if r.kind == "stationarity"]
    assert stationarity and all(r.ok for r in stationarity)
    # the same point with a wrong multiplier fails stationarity: the row is not vacuous
    problem.constraints[0].dual_variables[0].save_value(2.0 * problem.constraints[0].dual_value)
    assert not all(r.ok for r in kkt(problem).rows if r.kind == "stationarity")


def test_a_kink_at_the_solution_is_named_and_not_certified() -> None:
    """norm1 at an optimum with a zero entry: only a subgradient there; the row says why."""
    y = cp.Variable(2)
    problem = cp.Problem(cp.Minimize(cp.sum_squares(y - np.array([0.0, 2.0])) + cp.norm1(y)))
    problem.solve(solver="CLARABEL")
    report = kkt(problem)
    assert report.ok is False and len(report.unevaluated()) == 1
    assert "norm1 has an argument entry at 0" in report.unevaluated()[0].note
    assert "norm1 has an argument entry at 0" in str(report)


def _lp_attribute(attribute: dict):
    x = cp.Variable(3, **attribute)
    return cp.Problem(cp.Minimize(np.array([1.0, 2.0, 3.0]) @ x), [cp.sum(x) == 1]), x


@pytest.mark.parametrize("make", [
    lambda: _lp_attribute({"nonneg": True})[0],
    lambda: _lp_attribute({"bounds": [0, 5]})[0],
    lambda: cp.Problem(cp.Minimize(cp.sum_squares(cp.Variable(2, bounds=[1, 2])))),
    lambda: cp.Problem(cp.Maximize(cp.sum(cp.Variable(2, bounds=[1, 2])))),
    lambda: cp.Problem(cp.Maximize(cp.sum(cp.Variable(2, nonpos=True)))),
    lambda: cp.Problem(cp.Minimize(cp.sum_squares(cp.Variable(2, nonneg=True) - np.array([1.0, -1.0])))),
], ids=["lp-nonneg", "lp-bounds", "qp-bounds-lower", "lp-bounds-upper", "lp-nonpos", "qp-nonneg-half-active"])
def test_a_variables_own_bounds_take_their_multipliers(make) -> None:
    """nonneg=, nonpos= and bounds= state constraints that cvxpy solves with no dual value in
    problem.constraints: the stationarity row failed a correct solution (0.67 on the LP, as the same LP
    with an explicit x >= 0 passes). The bounds' multipliers are the gradient's remainder, of the sign of
    the bound a variable is on and 0 off it (complementary slackness)."""
    problem = make()
    problem.solve(solver="CLARABEL")
    report = kkt(problem)
    assert report.ok, str(report)


def test_a_point_off_the_optimum_of_a_bounded_variable_fails() -> None:
    """The same LP at a feasible point that is not its optimum (x = e_2): its remainder has the wrong
    sign for x_1 = 0 (a multiplier of 1 - 2 < 0), and x_2 > 0 carries a multiplier."""
    problem, x = _lp_attribute({"nonneg": True})
    problem.solve(solver="CLARABEL")
    x.value = np.array([0.0, 1.0, 0.0])
    assert not kkt(problem).ok


def test_an_attribute_the_check_cannot_state_is_not_evaluated() -> None:
    P = cp.Variable((2, 2), PSD=True)
    problem = cp.Problem(cp.Minimize(cp.trace(P)))
    problem.solve(solver="CLARABEL")
    row = kkt(problem).rows[0]
    assert row.ok is None and "PSD" in row.note and "state it as a constraint" in row.note


def test_a_mixed_integer_problem_is_named_as_one() -> None:
    """A solved MIP (HiGHS, status optimal) was refused as 'must have a dual value; got None (was the
    problem solved?)': it was solved, and the KKT conditions do not apply to it."""
    x = cp.Variable(3, integer=True)
    problem = cp.Problem(cp.Minimize(np.array([1.0, 2.0, 3.0]) @ x), [cp.sum(x) == 1, x >= 0])
    problem.solve(solver="HIGHS")
    assert problem.status == cp.OPTIMAL
    with pytest.raises(ValidationError, match=r"^problem must have continuous variables only: .* got 1 boolean"):
        kkt(problem)


#: Clarabel to 1e-13: its defaults are absolute to 1e-8, an inaccurate answer where the data are of size 1e-6
TIGHT = dict(tol_gap_abs=1e-18, tol_gap_rel=1e-13, tol_feas=1e-14, tol_ktratio=1e-13, max_iter=500)


def _scaled_qp(objective_scale: float, constraint_scale: float):
    """The QP of ``_qp`` with its objective and its constraints multiplied by constants: the same x, the
    multipliers multiplied by objective_scale / constraint_scale; solved to ``TIGHT``."""
    x = cp.Variable(n, name="x")
    s, c = objective_scale, constraint_scale
    constraints = [c * (A @ x) == c * 1.0, c * (G @ x) <= c * 0.2, c * x >= -0.3 * c]
    problem = cp.Problem(cp.Minimize(s * (0.5 * cp.quad_form(x, P) + q @ x)), constraints)
    problem.solve(solver="CLARABEL", **TIGHT)
    return problem, x, constraints


SCALES = [(1e-6, 1e-6), (1.0, 1.0), (1e6, 1e6), (1e-6, 1.0), (1.0, 1e-6), (1e6, 1.0), (1.0, 1e6)]


@pytest.mark.parametrize("objective_scale, constraint_scale", SCALES)
def test_the_report_does_not_change_when_the_problem_is_rescaled(objective_scale, constraint_scale) -> None:
    """Every scale in the check was max(1, |value|): on data of size 1e-6 a point 1e-2 off the optimum and
    multipliers 1.5 times the right ones passed. The right answer passes at every scale, a wrong one fails
    at every scale, by the same relative violations as at scale 1."""
    problem, x, cons = _scaled_qp(objective_scale, constraint_scale)
    assert kkt(problem).ok, str(kkt(problem))
    reference, x_ref, _ = _scaled_qp(1.0, 1.0)
    step = 1e-2 * np.linspace(-1.0, 1.0, n)
    x.value, x_ref.value = x_ref.value + step, x_ref.value + step        # the same wrong point
    wrong, expected = kkt(problem), kkt(reference)
    assert not wrong.ok
    for row, ref in zip(wrong.rows, expected.rows):
        assert (row.tag, row.kind) == (ref.tag, ref.kind)
        assert row.violation == pytest.approx(ref.violation, rel=1e-4, abs=1e-7)
    assert wrong.gap.relative == pytest.approx(expected.gap.relative, rel=1e-4, abs=1e-7)
    problem, x, cons = _scaled_qp(objective_scale, constraint_scale)
    cons[1].dual_variables[0].save_value(1.5 * cons[1].dual_value)
    failed = {(r.tag, r.kind) for r in kkt(problem).failed()}
    assert ("x", "stationarity") in failed


@pytest.mark.parametrize("scale", [1e-6, 1.0, 1e6])
def test_an_unconstrained_minimum_inside_its_constraints_passes_at_every_scale(scale: float) -> None:
    """The objective's gradient is 0 at x and so is every multiplier: they are 0 against the objective's
    gradient at 2 x (its curvature), not against themselves. A point off the minimum fails."""
    x = cp.Variable(3, name="x")
    c = np.array([0.5, 1.0, -0.2])
    problem = cp.Problem(cp.Minimize(scale * cp.sum_squares(x - c)), [scale * x <= 5 * scale, x >= -3])
    problem.solve(solver="CLARABEL", **TIGHT)
    assert kkt(problem).ok, str(kkt(problem))
    x.value = c + 1e-3
    assert ("x", "stationarity") in {(r.tag, r.kind) for r in kkt(problem).failed()}


def _zero_at_solution(kind: str, scale: float):
    f = cp.Variable(2, name="x")
    if kind == "feasibility":                                   # min 0: the multipliers have no unit
        return cp.Problem(cp.Minimize(0), [scale * f >= scale, scale * cp.sum(f) <= 3 * scale]), f
    return cp.Problem(cp.Minimize(scale * cp.sum_squares(f)), [scale * f >= -scale]), f   # x = 0


@pytest.mark.parametrize("scale", [1e-6, 1.0, 1e6])
@pytest.mark.parametrize("kind", ["feasibility", "minimum-at-0"])
def test_a_problem_whose_objective_has_no_size_at_its_solution_passes(kind: str, scale: float) -> None:
    """Without an objective (min 0), or at x = 0 where min ||x||^2 has gradient 0 at x and at 2 x, the solver's
    multipliers of 1e-15 have nothing to be small against but 1 and, for x = 0, the gradient a step of the
    constraints' size away (x >= -1: 1). A point off the solution fails."""
    problem, x = _zero_at_solution(kind, scale)
    problem.solve(solver="CLARABEL", **TIGHT)
    assert kkt(problem).ok, str(kkt(problem))
    x.value = np.array([0.5, 0.5]) if kind == "feasibility" else np.array([1e-2, 0.0])
    assert not kkt(problem).ok


def test_an_objective_undefined_a_step_away_is_still_checked() -> None:
    """max log(1 - y) + y s.t. y >= 0.6: the objective is not defined at 2 y = 1.2, where cvxpy's grad raised
    TypeError out of the check; that point is skipped, and the answer (y = 0.6) is judged at y."""
    y = cp.Variable(name="y")
    problem = cp.Problem(cp.Maximize(cp.log(1 - y) + y), [y >= 0.6])
    problem.solve(solver="CLARABEL")                    # its exponential cone: to about 2e-5
    report = kkt(problem, tol=1e-4)
    assert report.ok, str(report)
    y.value = np.array(0.7)
    assert not kkt(problem, tol=1e-4).ok
