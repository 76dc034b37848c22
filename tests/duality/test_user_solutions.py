"""Machine.solution and duality.check(m, a=..., b=...): your own multipliers, certified.

A correct answer given back as plain arrays passes; a perturbed copy fails exactly the rows the
perturbation breaks, by the notes' conditions:

- a duplicated training point (same x, same t) carries its multiplier twice, and only the sum of
  the two enters y(x), the balance and the objectives (their k_nn are equal too). Moving delta
  from one twin to the other at the upper bound (C + delta, C - delta) breaks the box and the
  complementary slackness (C - a_n) xi_n = 0 of the one above it, nothing else: the outputs, the
  slacks and both objectives are unchanged (for the hard margin, with no upper bound, the move
  (sum + delta, -delta) breaks a_n >= 0 alone);
- shifting the intercept (the one-class rho, SVDD's R^2) with the multipliers fixed leaves every
  condition on the multipliers alone; the slacks being recovered as the smallest feasible ones,
  primal feasibility holds too, and what breaks is the complementary slackness of the free
  multipliers on each side (on the margin, the tube's edges or the boundary), and the gap
  (except for the hard margin, whose primal 1/2 ||w||^2 does not see b).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
import runpy

import numpy as np
import pytest

from sparsekernel import datasets
from sparsekernel.duality import check
from sparsekernel.errors import ValidationError
from sparsekernel.formulations import (
    SVDD, EpsilonSVR, HardMarginSVC, NuSVC, NuSVR, OneClassSVM, SoftMarginSVC,
)
from sparsekernel.kernels import RBF

TOL = 1e-6
GAP = ("gap",)


def _data(kind: str) -> tuple[np.ndarray, np.ndarray]:
    if kind == "ring":
        return datasets.ring()
    if kind == "sine":
        X, t = datasets.sinusoid(n=40, seed=2)
        return X, t
    X, t = datasets.ripley_mixture(seed=3)
    return X[:50], t[:50]


BUILD = {
    "hard": (lambda X, t: HardMarginSVC(X, t, RBF(0.8)), "ring"),
    "soft": (lambda X, t: SoftMarginSVC(X, t, RBF(0.45), C=1.0), "ripley"),
    "nu-svc": (lambda X, t: NuSVC(X, t, RBF(0.45), nu=0.4), "ripley"),
    "eps-svr": (lambda X, t: EpsilonSVR(X, t, RBF(10.0), C=2.0, epsilon=0.1), "sine"),
    "nu-svr": (lambda X, t: NuSVR(X, t, RBF(10.0), C=40.0, nu=0.4), "sine"),
    "one-class": (lambda X, t: OneClassSVM(X, RBF(0.45), nu=0.5), "ripley"),
    "svdd": (lambda X, t: SVDD(X, RBF(0.45), nu=0.5), "ripley"),
}


@lru_cache(maxsize=None)
def solved(name: str, twin: bool = False):
    """(machine, Clarabel's solution); with ``twin``, on the data with its most violating point
    (largest slack; for the hard margin its largest multiplier) given twice."""
    build, kind = BUILD[name]
    X, t = _data(kind)
    m = build(X, t)
    s = m.solve("qp-clarabel")
    if not twin:
        return m, s
    slack = s.a if s.xi is None else s.xi                           # regression: above the tube, a_n = C
    k = int(np.argmax(slack))
    X2, t2 = np.vstack([X, X[k]]), np.append(t, t[k])
    m2 = build(X2, t2)
    return m2, m2.solve("qp-clarabel"), k


def _given(m, s) -> dict:
    """The solution as plain arrays and scalars, the way a user has it."""
    out = {"a": np.array(s.a), "a_hat": None if s.a_hat is None else np.array(s.a_hat)}
    out.update({k: float(getattr(s, k)) for k in m._scalars})
    return out


def _failures(report) -> set:
    out = {(r.tag, r.condition) for r in report.failed()}
    return out | ({GAP} if report.gap.relative > report.tol else set())


@pytest.mark.parametrize("name", sorted(BUILD))
def test_a_correct_answer_given_back_passes_with_or_without_its_scalars(name: str) -> None:
    m, s = solved(name)
    given = _given(m, s)
    full = check(m, **given, tol=TOL)
    assert full.ok, str(full)
    bare = check(m, a=given["a"], a_hat=given["a_hat"], tol=TOL)      # b, rho, epsilon, R^2 recovered
    assert bare.ok, str(bare)
    # the recovered scalars are the solver's own (the notes' averages over the free multipliers)
    sol = m.solution(given["a"], a_hat=given["a_hat"])
    for key in m._scalars:
        assert getattr(sol, key) == pytest.approx(getattr(s, key), abs=1e-6 * m.output_scale)
    assert sol.method == "user" and sol.status == "given" and any("recovered" in n for n in sol.notes)


# the rows a move between twins at the upper bound breaks: the box, and (box - a_n) xi_n = 0; the hard
# margin's move leaves a negative multiplier (y(x), the expansion of every multiplier that moves the outputs,
# keeps it: Machine.solution's support is a solve's, solve.support_of_outputs)
TWIN_ROWS = {
    "hard": {("(7.14)", "a_n >= 0")},
    "soft": {("(7.33)", "0 <= a_n <= C"), ("(7.26), (7.31)", "mu_n = C - a_n >= 0"), ("(7.28)", "mu_n xi_n = 0")},
    "nu-svc": {("(7.39)", "mu_n = 1/N - a_n >= 0 (W_n / sum W weighted)"), ("Result 7.7", "mu_n xi_n = 0")},
    "eps-svr": {("(7.62)", "0 <= a_n <= C"), ("(7.67)", "(C - a_n) xi_n = 0")},
    "nu-svr": {("(7.71)", "0 <= a_n <= C/N"), ("(7.67)", "(C/N - a_n) xi_n = 0")},
    "one-class": {("Scholkopf 2001", "0 <= a_n <= 1/(nu N)"), ("Scholkopf 2001", "(1/(nu N) - a_n) xi_n = 0")},
    "svdd": {("Tax-Duin 1999", "0 <= a_n <= 1/(nu N)"), ("Tax-Duin 1999", "(1/(nu N) - a_n) xi_n = 0")},
}


@pytest.mark.parametrize("name", sorted(TWIN_ROWS))
def test_moving_a_multiplier_between_twins_fails_exactly_the_box_rows(name: str) -> None:
    m, s, k = solved(name, twin=True)
    n = m.N - 1                                                       # k's twin
    given = _given(m, s)
    a = given["a"]
    if name == "hard":
        total, delta = a[k] + a[n], 0.1 * max(a[k] + a[n], 1e-3)
        assert total > 1e-3                                           # a support vector
        a[k], a[n] = total + delta, -delta
    else:
        box = float(np.max(m.standard_qp().upper))
        assert a[k] == pytest.approx(box, rel=1e-6) and a[n] == pytest.approx(box, rel=1e-6)   # both bounded
        a[k], a[n] = box * 1.2, box * 0.8
    assert check(m, s, TOL).ok
    report = check(m, **given, tol=TOL)
    assert _failures(report) == TWIN_ROWS[name], str(report)
    assert report.rows[[r.condition for r in report.rows].index(sorted(TWIN_ROWS[name])[0][1])].where in (k, n)


# the rows a shift of the intercept breaks: the free multipliers' complementary slackness, and the gap
SHIFT_ROWS = {
    "hard": ("b", {("(7.15)", "t_n y(x_n) - 1 >= 0"), ("(7.16)", "a_n {t_n y(x_n) - 1} = 0")}),
    "soft": ("b", {("(7.25)", "a_n (t_n y_n - 1 + xi_n) = 0"), ("(7.28)", "mu_n xi_n = 0"), GAP}),
    "nu-svc": ("b", {("Result 7.7", "a_n (t_n y_n - rho + xi_n) = 0"), ("Result 7.7", "mu_n xi_n = 0"), GAP}),
    "eps-svr": ("b", {("(7.65)", "a_n (epsilon + xi_n + y_n - t_n) = 0"), ("(7.68)", "(C - a_hat_n) xi_hat_n = 0"), GAP}),
    "nu-svr": ("b", {("(7.65)", "a_n (epsilon + xi_n + y_n - t_n) = 0"), ("(7.68)", "(C/N - a_hat_n) xi_hat_n = 0"), GAP}),
    "one-class": ("rho", {("Scholkopf 2001", "(1/(nu N) - a_n) xi_n = 0"), GAP}),
    "svdd": ("R2", {("Tax-Duin 1999", "a_n (R^2 + xi_n - ||phi(x_n) - c||^2) = 0"), GAP}),
}


@pytest.mark.parametrize("name", sorted(SHIFT_ROWS))
def test_shifting_the_intercept_fails_exactly_the_slackness_rows(name: str) -> None:
    # b + delta (hard and soft margin: the hard margin has no slack to absorb it, so (7.15) fails on one side)
    m, s = solved(name)
    key, expected = SHIFT_ROWS[name]
    given = _given(m, s)
    given[key] += 0.05 * m.output_scale
    report = check(m, **given, tol=TOL)
    assert _failures(report) == expected, str(report)


def test_a_wrong_sign_in_libsvm_convention_shows_as_a_negative_multiplier() -> None:
    m, s = solved("nu-svc")
    coef = np.array(s.coef) / s.rho                                   # LIBSVM's y_n alpha_n / r
    coef[int(np.argmax(np.abs(coef)))] *= -1.0
    report = check(m, a=coef, rho=-s.b / s.rho, convention="libsvm", tol=TOL)
    failed = {(r.tag, r.condition) for r in report.failed()}
    assert ("(7.39)", "a_n >= 0") in failed


def test_check_takes_a_solution_or_multipliers_not_both() -> None:
    m, s = solved("soft")
    with pytest.raises(ValidationError, match="solution must be"):
        check(m)
    with pytest.raises(ValidationError, match="a must be None when a solution is given"):
        check(m, s, a=s.a)


@pytest.mark.parametrize("kwargs, match", [
    ({"a": np.ones(3)}, r"a must be an array of shape \(50,\).*got an array of shape \(3,\)"),
    ({"a": np.full(50, np.nan)}, r"a must be finite \(NaN or inf at index 0\)"),
    ({"a": np.zeros(50), "b": float("inf")}, r"b must be a finite real number \(or None to recover it\); got inf"),
    ({"a": np.zeros(50), "b": "1"}, r"b must be a finite real number"),
    ({"a": np.zeros(50), "R2": 1.0}, r"R2 must be among the scalars of SoftMarginSVC \['b'\]"),
    ({"a": np.zeros(50), "a_hat": np.zeros(50)}, r"a_hat must be None for SoftMarginSVC"),
    ({"a": np.zeros(50), "convention": "sklearn"}, r"convention must be 'notes' or 'libsvm'; got 'sklearn'"),
])
def test_bad_input_names_the_argument_its_domain_and_the_value(kwargs, match) -> None:
    m, _ = solved("soft")
    with pytest.raises(ValidationError, match=match):
        m.solution(**kwargs)


def test_regression_needs_a_hat_and_svdd_has_no_libsvm_convention() -> None:
    m, s = solved("eps-svr")
    with pytest.raises(ValidationError, match="a_hat must be the 40 multipliers of"):
        m.solution(s.a)
    d, sd = solved("svdd")
    with pytest.raises(ValidationError, match="LIBSVM twin"):
        d.solution(sd.a, convention="libsvm")


def test_the_users_arrays_are_not_modified() -> None:
    m, s = solved("soft")
    a = np.array(s.a)
    before = a.copy()
    sol = m.solution(a, s.b)
    a[0] = 99.0
    assert np.array_equal(np.array(sol.a), before)


def test_the_buggy_smo_example_fails_the_box_row_by_tag() -> None:
    example = runpy.run_path(str(Path(__file__).resolve().parents[2] / "examples" / "buggy_smo.py"))
    X, t = datasets.ripley_mixture(seed=3)
    m = SoftMarginSVC(X[:60], t[:60], RBF(0.45), C=1.0)
    a, b = example["student_smo"](m.gram(), m.t, m.C, example["clip_correct"])
    good = check(m, a=a, b=b, tol=TOL)
    a, b = example["student_smo"](m.gram(), m.t, m.C, example["clip_buggy"])
    bad = check(m, a=a, b=b, tol=TOL)
    assert good.ok, str(good)
    box = next(r for r in bad.rows if r.tag == "(7.33)")
    assert box.ok is False and box.violation == pytest.approx(max(-a.min(), a.max() - m.C) / m.C)


def _separable(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(size=(15, 2)) + 3.0, rng.normal(size=(15, 2)) - 3.0])
    return X, np.r_[np.ones(15), -np.ones(15)]


@pytest.mark.parametrize("C", [1e2, 1e4, 1e6])
def test_multipliers_far_below_a_large_box_are_still_checked_point_by_point(C: float) -> None:
    """On separable data the soft margin's optimum is the hard margin's for any C above its largest a_n
    (Clarabel's hard-margin multipliers, all below 1). Scaling them by 2 (or 1.01) keeps the box and the
    balance, but every support vector's margin moves off 1, so (7.25) a_n (t_n y_n - 1 + xi_n) = 0 fails:
    relative to the box C that row was blind (it passed at 1e-6 with every a_n doubled)."""
    from sparsekernel.formulations import HardMarginSVC, SoftMarginSVC
    from sparsekernel.kernels import Linear

    X, t = _separable()
    a = np.asarray(HardMarginSVC(X, t, Linear()).solve("qp-clarabel").a)
    assert a.max() < 1.0 < C
    m = SoftMarginSVC(X, t, Linear(), C=C)
    assert check(m, a=a, tol=1e-6).ok                      # the optimum passes
    for factor in (2.0, 1.01):
        report = check(m, a=factor * a, tol=1e-6)
        assert not report.ok
        assert "(7.25)" in {row.tag for row in report.failed()}


def test_the_wide_tube_optimum_a_equal_zero_passes_with_rounding_sized_multipliers() -> None:
    """epsilon above every |t_n - t_m| / 2: the flat function at the targets' midrange lies in the tube, so
    a = a_hat = 0 is the optimum. A multiplier of 1e-20 on a box of 10 is a zero; relative to the
    multipliers' own sum, the balance (7.58) read it as a violation of 1 and OSQP's answer was refused."""
    from sparsekernel.formulations import EpsilonSVR
    from sparsekernel.kernels import RBF

    rng = np.random.default_rng(3)
    X = rng.normal(size=(10, 2))
    m = EpsilonSVR(X, X[:, 0], RBF(1.0), C=10.0, epsilon=100.0)
    a = np.zeros(10)
    a[0] = 1e-20
    assert check(m, a=a, a_hat=np.zeros(10), tol=1e-6).ok
    for method in ("qp-osqp", "osqp", "qp-clarabel"):
        sol = m.solve(method)
        assert sol.status == "optimal"
        assert np.abs(sol.a).max() < 1e-5 * m.C and np.abs(sol.a_hat).max() < 1e-5 * m.C


def test_a_with_a_solution_names_the_value_it_got() -> None:
    """check(m, solution, a=...) said "got 'an array'" whatever a was (a list, a scalar): the message now
    quotes the value given, as every ValidationError does."""
    X = np.random.default_rng(0).normal(size=(12, 2))
    t = np.where(X[:, 0] > 0, 1.0, -1.0)
    m = SoftMarginSVC(X, t, RBF(0.5), C=1.0)
    sol = m.solution(np.zeros(12), 0.0)
    with pytest.raises(ValidationError, match=r"^a must be None when a solution is given .*; got \[0\.5, 0\.5\]$"):
        check(m, sol, a=[0.5, 0.5])
    with pytest.raises(ValidationError, match=r"got an array of shape \(12,\) and dtype float64$"):
        check(m, sol, a=np.zeros(12))


def test_masked_multipliers_are_refused_not_read_through_the_mask() -> None:
    """A masked array's hidden entries were read as they lay under the mask (np.asarray drops it), so
    multipliers with a masked entry could pass; a masked entry is now a ValidationError naming a."""
    X = np.random.default_rng(0).normal(size=(12, 2))
    t = np.where(X[:, 0] > 0, 1.0, -1.0)
    m = SoftMarginSVC(X, t, RBF(0.5), C=1.0)
    a = np.ma.masked_array(np.zeros(12), mask=[True] + [False] * 11)
    with pytest.raises(ValidationError, match=r"^a must be .*no masked entry.*; got "):
        check(m, a=a)
    assert check(m, a=np.ma.masked_array(np.zeros(12))).rows           # nothing masked: read as it is


def test_text_in_an_object_array_is_refused_as_in_a_list() -> None:
    """A list of strings was refused, but the same strings in an object array (a pandas column read as text)
    were parsed without a word; text is now refused whatever holds it."""
    X = np.random.default_rng(0).normal(size=(12, 2))
    t = np.where(X[:, 0] > 0, 1.0, -1.0)
    m = SoftMarginSVC(X, t, RBF(0.5), C=1.0)
    for a in (np.array(["0.0"] * 12, dtype=object), np.array([0.0] * 11 + ["1e-3"], dtype=object),
              np.array([b"0"] * 12, dtype=object)):
        with pytest.raises(ValidationError, match=r"^a must be an array of 12 finite real numbers; got an array"):
            check(m, a=a)
    assert check(m, a=np.array([0.0] * 12, dtype=object)).rows      # numbers in an object array: read


@pytest.mark.parametrize("label", ["smo", "SMO", "libsvm", "osqp", "qp-osqp", "mine"])
def test_a_user_solutions_tolerance_does_not_follow_the_name_it_gives_its_solver(label: str) -> None:
    """``check`` matches its tolerance to the solution's method: for multipliers given by hand that is "user",
    1e-6, whatever the ``solver`` name. The solver label was read as a method: the optimum with 1e-4 added to
    each multiplier passed as solver="smo" (the SMO's 2e-3) and failed as solver="mine" (1e-6)."""
    from sparsekernel.duality import check
    from sparsekernel.formulations import SoftMarginSVC
    from sparsekernel.kernels import RBF

    rng = np.random.default_rng(4)
    X = rng.normal(size=(40, 2))
    t = np.where(X[:, 0] + X[:, 1] > 0, 1.0, -1.0)
    machine = SoftMarginSVC(X, t, RBF(0.5), C=1.0)
    solved = machine.solve("clarabel")
    a = np.asarray(solved.a) + 1e-4 * (np.asarray(solved.a) > 1e-8)
    report = check(machine, machine.solution(a, solved.b, solver=label))
    assert report.tol == 1e-6 and not report.ok
