"""duality.check on every machine and method, each KKT row broken on purpose, categories,
compare, gap and from_sklearn."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from sklearn import svm

from sparsekernel import datasets
from sparsekernel.duality import (
    CATEGORY_NAMES, categories, check, compare, from_sklearn, gap, machine_from_sklearn, solve_with_libsvm,
)
from sparsekernel.errors import ValidationError
from sparsekernel.formulations import SoftMarginSVC
from sparsekernel.kernels import RBF

from cases import CASES, NOTES_CASES, box, libsvm, machine, solution

METHOD_TOL = {"primal-clarabel": 1e-6, "clarabel": 1e-6, "qp-clarabel": 1e-6, "osqp": 1e-5, "qp-osqp": 1e-5,
              "libsvm": 1e-6, "smo": 1e-5}


# LIBSVM has no hard-margin or SVDD machine: those two are checked against it through
# SVC with a huge C and OneClassSVM in test_formulations (gap 7.5)
PAIRS = [(n, k) for n in CASES for k in METHOD_TOL if not (k == "libsvm" and n.startswith(("hard", "svdd")))]


@pytest.mark.parametrize("name, method", PAIRS)
def test_every_machine_and_method_passes_its_kkt_check(name: str, method: str) -> None:
    m = machine(name)
    if method == "libsvm":
        sol = from_sklearn(libsvm(name), m.X, m.t)
    else:
        sol = solution(name, method)
    report = check(m, sol, METHOD_TOL[method])
    assert report.ok, str(report)
    # the gap the report computes is the solution's own
    assert report.gap.absolute == pytest.approx(sol.gap, abs=1e-9 * max(1.0, abs(sol.primal_objective)))
    if not np.isnan(sol.solver_gap):
        # the direct QP's objective is minus the Lagrange dual's: the solver's gap is in the same units
        assert abs(sol.solver_gap) <= METHOD_TOL[method] * max(1.0, abs(sol.dual_objective))
        assert abs(report.gap.absolute - sol.solver_gap) <= METHOD_TOL[method] * max(1.0, abs(sol.dual_objective))
    assert report.recovered == (() if method == "primal-clarabel" else machine(name)._recovery)


# --- every KKT row broken on purpose ----------------------------------------------------------

def _box(m, s):
    return box(m, s)


def _free(m, s, which="a"):
    v = getattr(s, which)
    box = _box(m, s)
    idx = np.flatnonzero((v > 1e-3 * box) & (v < (1 - 1e-3) * box))
    return int(idx[np.argmax(np.minimum(v[idx], box - v[idx]))])


def _zero(m, s, which="a"):
    total = s.a if s.a_hat is None else s.a + s.a_hat
    return int(np.flatnonzero(total < 1e-9 * _box(m, s))[0])


def _bound(m, s):
    return int(np.flatnonzero(s.a > (1 - 1e-6) * _box(m, s))[0])


def _margin_error(m, s):
    return int(np.flatnonzero(s.xi > 1e-3 * max(1.0, abs(s.rho) if np.isfinite(s.rho) else 1.0))[0])


def _inside_tube(m, s):
    residual = np.abs(m.t - s.decision_function(m.X))
    eps = m.epsilon if hasattr(m, "epsilon") else s.epsilon
    return int(np.argmin(residual / eps))


def _set(arr, i, value):
    out = np.array(arr, dtype=float, copy=True)
    out[i] = value
    return out


def _add(arr, i, value):
    out = np.array(arr, dtype=float, copy=True)
    out[i] += value
    return out


def _scale_a(s, factor):
    changes = {"a": np.asarray(s.a) * factor}
    if s.a_hat is not None:
        changes["a_hat"] = np.asarray(s.a_hat) * factor
    return changes


W = lambda m, s: {"w": np.asarray(s.w) + 1e-2}  # noqa: E731  (a primal solution: w is checkable)

BREAKS = [
    # hard margin, (7.8), (7.9), (7.14)-(7.16)
    ("hard-ring", "primal-clarabel", "(7.8)", "w =", W),
    ("hard-ring", "qp-osqp", "(7.9)", "sum_n a_n t_n", lambda m, s: {"a": _add(s.a, _free(m, s), 0.1 * _box(m, s))}),
    ("hard-ring", "qp-osqp", "(7.14)", "a_n >= 0", lambda m, s: {"a": _set(s.a, _zero(m, s), -0.01 * _box(m, s))}),
    ("hard-ring", "qp-osqp", "(7.15)", "t_n y(x_n) - 1 >= 0", lambda m, s: {"b": s.b + 0.5}),
    ("hard-ring", "qp-osqp", "(7.16)", "a_n {t_n y(x_n) - 1}", lambda m, s: {"a": _set(s.a, _zero(m, s), 0.1 * _box(m, s))}),
    # soft margin, (7.23)-(7.30)
    ("soft-ripley", "qp-osqp", "(7.33)", "0 <= a_n <= C", lambda m, s: {"a": _set(s.a, _bound(m, s), 1.2 * m.C)}),
    ("soft-ripley", "qp-osqp", "(7.23)", "a_n >= 0", lambda m, s: {"a": _set(s.a, _zero(m, s), -0.01 * m.C)}),
    ("soft-ripley", "qp-osqp", "(7.24)", "t_n y_n - 1 + xi_n", lambda m, s: {"xi": _set(s.xi, _margin_error(m, s), 0.0)}),
    ("soft-ripley", "qp-osqp", "(7.25)", "a_n (t_n y_n", lambda m, s: {"xi": _set(s.xi, _free(m, s), 0.3)}),
    ("soft-ripley", "qp-osqp", "(7.26), (7.31)", "mu_n = C - a_n", lambda m, s: {"a": _set(s.a, _bound(m, s), 1.2 * m.C)}),
    ("soft-ripley", "qp-osqp", "(7.27)", "xi_n >= 0", lambda m, s: {"xi": _set(s.xi, _zero(m, s), -0.2)}),
    ("soft-ripley", "qp-osqp", "(7.28)", "mu_n xi_n", lambda m, s: {"xi": _set(s.xi, _free(m, s), 0.3)}),
    ("soft-ripley", "primal-clarabel", "(7.29)", "w =", W),
    ("soft-ripley", "qp-osqp", "(7.30)", "sum_n a_n t_n", lambda m, s: {"a": _add(s.a, _free(m, s), 0.1 * m.C)}),
    # nu-SVC, Result 7.7 and (7.39)-(7.41)
    ("nusvc-ripley", "qp-osqp", "(7.39)", "a_n >= 0", lambda m, s: {"a": _set(s.a, _zero(m, s), -0.1 / m.N)}),
    ("nusvc-ripley", "qp-osqp", "(7.39)", "mu_n = 1/N - a_n", lambda m, s: {"a": _set(s.a, _bound(m, s), 1.2 / m.N)}),
    ("nusvc-ripley", "qp-osqp", "(7.41)", "delta = sum_n a_n - nu", lambda m, s: _scale_a(s, 0.5)),
    ("nusvc-ripley", "qp-osqp", "Result 7.7", "t_n y_n - rho + xi_n >= 0",
     lambda m, s: {"xi": _set(s.xi, _margin_error(m, s), 0.0)}),
    ("nusvc-ripley", "qp-osqp", "Result 7.7", "xi_n >= 0", lambda m, s: {"xi": _set(s.xi, _zero(m, s), -0.1 * s.rho)}),
    ("nusvc-ripley", "qp-osqp", "Result 7.7", "rho >= 0", lambda m, s: {"rho": -s.rho}),
    ("nusvc-ripley", "qp-osqp", "Result 7.7", "a_n (t_n y_n - rho + xi_n)",
     lambda m, s: {"xi": _set(s.xi, _free(m, s), 0.3 * s.rho)}),
    ("nusvc-ripley", "qp-osqp", "Result 7.7", "mu_n xi_n", lambda m, s: {"xi": _set(s.xi, _free(m, s), 0.3 * s.rho)}),
    ("nusvc-ripley", "qp-osqp", "Result 7.7", "delta rho", lambda m, s: _scale_a(s, 1.2)),
    ("nusvc-ripley", "primal-clarabel", "Result 7.7", "w =", W),
    ("nusvc-ripley", "qp-osqp", "(7.40)", "sum_n a_n t_n", lambda m, s: {"a": _add(s.a, _free(m, s), 0.1 / m.N)}),
    # epsilon-SVR, (7.53)-(7.68)
    ("eps-sine", "qp-osqp", "(7.62)", "0 <= a_n <= C", lambda m, s: {"a": _set(s.a, _zero(m, s), -0.01 * m.C)}),
    ("eps-sine", "qp-osqp", "(7.63)", "0 <= a_hat_n <= C", lambda m, s: {"a_hat": _set(s.a_hat, 0, 1.2 * m.C)}),
    ("eps-sine", "qp-osqp", "(7.53)", "y_n + epsilon + xi_n - t_n", lambda m, s: {"b": s.b - 1.0}),
    ("eps-sine", "qp-osqp", "(7.54)", "t_n - y_n + epsilon + xi_hat_n", lambda m, s: {"b": s.b + 1.0}),
    ("eps-sine", "qp-osqp", "Result 7.9", "xi_n >= 0 and", lambda m, s: {"xi": _set(s.xi, 0, -0.1)}),
    ("eps-sine", "qp-osqp", "(7.65)", "a_n (epsilon", lambda m, s: {"a": _set(s.a, _inside_tube(m, s), 0.5 * m.C)}),
    ("eps-sine", "qp-osqp", "(7.66)", "a_hat_n (epsilon", lambda m, s: {"a_hat": _set(s.a_hat, _inside_tube(m, s), 0.5 * m.C)}),
    ("eps-sine", "qp-osqp", "(7.67)", "(C - a_n) xi_n", lambda m, s: {"xi": _set(s.xi, _inside_tube(m, s), 0.3)}),
    ("eps-sine", "qp-osqp", "(7.68)", "(C - a_hat_n) xi_hat_n",
     lambda m, s: {"xi_hat": _set(s.xi_hat, _inside_tube(m, s), 0.3)}),
    ("eps-sine", "qp-osqp", "Result 7.9", "a_n a_hat_n = 0",
     lambda m, s: {"a_hat": _set(s.a_hat, int(np.argmax(s.a)), float(np.max(s.a)))}),
    ("eps-sine", "primal-clarabel", "(7.57)", "w =", W),
    ("eps-sine", "qp-osqp", "(7.58)", "sum_n (a_n - a_hat_n)", lambda m, s: {"a": _add(s.a, 0, 0.1 * m.C)}),
    # nu-SVR, Result 7.10 and (7.71)-(7.74)
    ("nusvr-sine", "qp-osqp", "(7.71)", "0 <= a_n <= C/N", lambda m, s: {"a": _set(s.a, 0, 1.2 * m.C / m.N)}),
    ("nusvr-sine", "qp-osqp", "(7.72)", "0 <= a_hat_n <= C/N", lambda m, s: {"a_hat": _set(s.a_hat, 0, -0.1 * m.C / m.N)}),
    ("nusvr-sine", "qp-osqp", "(7.53)", "y_n + epsilon", lambda m, s: {"epsilon": s.epsilon - 0.5}),
    ("nusvr-sine", "qp-osqp", "(7.54)", "t_n - y_n + epsilon", lambda m, s: {"b": s.b + 1.0}),
    ("nusvr-sine", "qp-osqp", "Result 7.10", "xi_n >= 0 and", lambda m, s: {"xi_hat": _set(s.xi_hat, 3, -0.1)}),
    ("nusvr-sine", "qp-osqp", "(7.65)", "a_n (epsilon", lambda m, s: {"epsilon": s.epsilon + 0.2}),
    ("nusvr-sine", "qp-osqp", "(7.66)", "a_hat_n (epsilon", lambda m, s: {"epsilon": s.epsilon + 0.2}),
    ("nusvr-sine", "qp-osqp", "(7.67)", "(C/N - a_n) xi_n", lambda m, s: {"xi": _set(s.xi, _zero(m, s), 0.3)}),
    ("nusvr-sine", "qp-osqp", "(7.68)", "(C/N - a_hat_n)", lambda m, s: {"xi_hat": _set(s.xi_hat, _zero(m, s), 0.3)}),
    ("nusvr-sine", "qp-osqp", "Result 7.9", "a_n a_hat_n", lambda m, s: {"a_hat": _set(s.a_hat, int(np.argmax(s.a)), float(np.max(s.a)))}),
    ("nusvr-sine", "primal-clarabel", "(7.57)", "w =", W),
    ("nusvr-sine", "qp-osqp", "(7.73)", "sum_n (a_n - a_hat_n)", lambda m, s: {"a": _add(s.a, 0, 0.05 * m.C / m.N)}),
    ("nusvr-sine", "qp-osqp", "(7.74)", "delta = nu C", lambda m, s: _scale_a(s, 1.3)),
    ("nusvr-sine", "qp-osqp", "Result 7.10", "epsilon >= 0", lambda m, s: {"epsilon": -0.1}),
    ("nusvr-sine", "qp-osqp", "Result 7.10", "delta epsilon", lambda m, s: _scale_a(s, 0.5)),
    # one-class SVM
    ("oneclass-ripley", "qp-osqp", "Scholkopf 2001", "0 <= a_n <= 1/(nu N)",
     lambda m, s: {"a": _set(s.a, _zero(m, s), -0.01 * m.box)}),
    ("oneclass-ripley", "qp-osqp", "Scholkopf 2001", "sum_n a_n = 1", lambda m, s: {"a": _add(s.a, _free(m, s), 0.1 * m.box)}),
    ("oneclass-ripley", "qp-osqp", "Scholkopf 2001", "w^T phi(x_n) - rho + xi_n >= 0", lambda m, s: {"rho": 1.5 * s.rho}),
    ("oneclass-ripley", "qp-osqp", "Scholkopf 2001", "xi_n >= 0", lambda m, s: {"xi": _set(s.xi, _zero(m, s), -0.1)}),
    ("oneclass-ripley", "qp-osqp", "Scholkopf 2001", "a_n (w^T phi", lambda m, s: {"xi": _set(s.xi, _free(m, s), 0.3 * s.rho)}),
    ("oneclass-ripley", "qp-osqp", "Scholkopf 2001", "(1/(nu N) - a_n) xi_n",
     lambda m, s: {"xi": _set(s.xi, _zero(m, s), 0.3 * s.rho)}),
    ("oneclass-ripley", "primal-clarabel", "Scholkopf 2001", "w =", W),
    ("oneclass-ripley", "qp-osqp", "Scholkopf 2001", "b = -rho", lambda m, s: {"b": s.b + 0.1}),
    # SVDD
    ("svdd-ripley", "qp-osqp", "Tax-Duin 1999", "0 <= a_n <= 1/(nu N)", lambda m, s: {"a": _set(s.a, _bound(m, s), 1.2 * m.box)}),
    ("svdd-ripley", "qp-osqp", "Tax-Duin 1999", "sum_n a_n = 1", lambda m, s: {"a": _add(s.a, _free(m, s), 0.1 * m.box)}),
    ("svdd-ripley", "qp-osqp", "Tax-Duin 1999", "R^2 + xi_n - ||phi(x_n) - c||^2 >= 0", lambda m, s: {"R2": 0.5 * s.R2}),
    ("svdd-ripley", "qp-osqp", "Tax-Duin 1999", "xi_n >= 0", lambda m, s: {"xi": _set(s.xi, _zero(m, s), -0.1)}),
    ("svdd-ripley", "qp-osqp", "Tax-Duin 1999", "a_n (R^2 + xi_n", lambda m, s: {"xi": _set(s.xi, _free(m, s), 0.2)}),
    ("svdd-ripley", "qp-osqp", "Tax-Duin 1999", "(1/(nu N) - a_n) xi_n", lambda m, s: {"xi": _set(s.xi, _zero(m, s), 0.2)}),
    ("svdd-ripley", "primal-clarabel", "Tax-Duin 1999", "c =", W),
    ("svdd-ripley", "qp-osqp", "Tax-Duin 1999", "b = R^2 - a^T K a", lambda m, s: {"b": s.b + 0.1}),
]


@pytest.mark.parametrize("name, method, tag, text, perturb", BREAKS,
                         ids=[f"{b[0]}:{b[2]}:{b[3]}" for b in BREAKS])
def test_breaking_a_condition_fails_its_row(name, method, tag, text, perturb) -> None:
    m = machine(name)
    sol = solution(name, method)
    assert check(m, sol).ok
    report = check(m, replace(sol, **perturb(m, sol)))
    rows = [r for r in report.rows if r.tag == tag and r.condition.startswith(text)]
    assert rows, f"no row {tag} {text!r} in {[(r.tag, r.condition) for r in report.rows]}"
    assert any(r.ok is False for r in rows), str(report)
    assert not report.ok and "FAIL" in str(report)


def test_every_row_of_every_machine_is_broken_by_some_test() -> None:
    covered = {(b[0].split("-")[0], b[2], b[3]) for b in BREAKS}
    for name in NOTES_CASES:
        if name == "weighted-ripley":
            continue
        m = machine(name)
        s = m.kkt_state(solution(name, "primal-clarabel"))
        for c in m.kkt_conditions(s):
            assert any(key[0] == name.split("-")[0] and key[1] == c.tag and c.text.startswith(key[2])
                       for key in covered), (name, c.tag, c.text)


# --- reports read by a person and by a program ------------------------------------------------

def test_report_as_text_and_json() -> None:
    m = machine("soft-ripley")
    report = check(m, solution("soft-ripley", "clarabel"))
    text = str(report)
    assert "(7.25)" in text and "complementary slackness" in text and "result: PASS" in text
    assert "worst row:" in text
    d = report.to_dict()
    import json
    again = json.loads(json.dumps(d))
    assert again["ok"] is True and len(again["rows"]) == len(report.rows)
    assert {r["tag"] for r in again["rows"]} >= {"(7.23)", "(7.24)", "(7.25)", "(7.28)", "(7.30)"}
    assert again["gap"]["relative"] == pytest.approx(report.gap.relative)


def test_check_refuses_a_solution_of_another_machine() -> None:
    with pytest.raises(ValidationError, match="solution must come from NuSVC"):
        check(machine("nusvc-ripley"), solution("soft-ripley", "clarabel"))


# --- categories, compare, gap ---------------------------------------------------------------

def test_categories_follow_result_7_6() -> None:
    m = machine("soft-ripley")
    sol = solution("soft-ripley", "qp-osqp")
    cats = categories(m, sol)
    margins = m.t * sol.decision_function(m.X)
    labels = np.array(cats.labels)
    assert set(cats.counts) == set(CATEGORY_NAMES["classification"])
    assert sum(cats.counts.values()) == m.N
    assert cats.counts["on the margin"] + cats.counts["inside the margin"] + cats.counts["misclassified"] == sol.n_support
    assert np.all(margins[labels == "not a support vector"] >= 1 - 1e-6)
    np.testing.assert_allclose(margins[labels == "on the margin"], 1.0, atol=1e-6)
    inside = margins[labels == "inside the margin"]
    assert np.all((inside >= 0) & (inside <= 1 + 1e-6))
    assert np.all(margins[labels == "misclassified"] < 0)


def test_categories_for_the_tube_and_the_one_class_boundary() -> None:
    m = machine("eps-sine")
    sol = solution("eps-sine", "qp-osqp")
    labels = np.array(categories(m, sol).labels)
    residual = np.abs(m.t - sol.decision_function(m.X))
    assert np.all(residual[labels == "inside the tube"] <= m.epsilon + 1e-6)
    np.testing.assert_allclose(residual[labels == "on the tube"], m.epsilon, atol=1e-6)
    assert np.all(residual[labels == "outside the tube"] >= m.epsilon - 1e-6)
    m = machine("oneclass-ripley")
    sol = solution("oneclass-ripley", "qp-osqp")
    cats = categories(m, sol)
    values = sol.decision_function(m.X)
    labels = np.array(cats.labels)
    assert np.all(values[labels == "inside"] >= -1e-6)
    np.testing.assert_allclose(values[labels == "on the boundary"], 0.0, atol=1e-6)
    assert np.all(values[labels == "outside"] <= 1e-6)
    assert cats.counts["outside"] <= m.nu * m.N


def test_compare_and_gap() -> None:
    m = machine("soft-ripley")
    a, b = solution("soft-ripley", "clarabel"), solution("soft-ripley", "qp-osqp")
    c = compare(a, b, machine=m)
    assert c.same_support and c.categories_changed == 0
    assert c.max_delta_a <= 1e-5 * m.C and c.delta_b <= 1e-5 and c.max_delta_decision <= 1e-5
    assert "max |delta a|" in str(c)
    other = SoftMarginSVC(m.X, m.t, RBF(0.45), C=5.0).solve("qp-osqp")
    far = compare(a, other, machine=m)
    assert far.max_delta_a > 0.1 and not far.same_support
    g = gap(m, solution("soft-ripley", "primal-clarabel"), b)
    assert abs(g.absolute) <= 1e-6 * abs(g.primal)
    # weak duality: the primal at C = 5's point is no better than C = 1's optimum; the dual at it no higher
    weak = gap(m, solution("soft-ripley", "primal-clarabel"), replace(other, a=np.minimum(other.a, m.C)))
    assert weak.absolute > 0
    with pytest.raises(ValidationError, match="same machine"):
        compare(a, solution("nusvc-ripley", "clarabel"))
    with pytest.raises(ValidationError, match=r"sol_b must be a Solution .*got int 2"):
        compare(a, 2)
    with pytest.raises(ValidationError, match=r"sol_a must be a Solution .*got ndarray"):
        compare(np.asarray(a.a), b)


# --- from_sklearn ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["soft-ripley", "weighted-ripley", "nusvc-ripley", "eps-sine", "nusvr-sine",
                                  "oneclass-ripley", "nusvc-cancer"])
def test_from_sklearn_gives_the_notes_multipliers(name: str) -> None:
    m = machine(name)
    sol = from_sklearn(libsvm(name), m.X, m.t)
    ours = solution(name, "qp-clarabel")
    np.testing.assert_allclose(sol.a, ours.a, atol=1e-5 * _box(m, ours))
    if ours.a_hat is not None:
        np.testing.assert_allclose(sol.a_hat, ours.a_hat, atol=1e-5 * _box(m, ours))
    assert sol.b == pytest.approx(ours.b, abs=1e-6 * max(1.0, abs(ours.b)))
    for field in ("rho", "epsilon"):
        if np.isfinite(getattr(ours, field)):
            assert getattr(sol, field) == pytest.approx(getattr(ours, field), rel=1e-5)
    assert sol.method == "libsvm" and sol.solver == "LIBSVM"
    rebuilt = machine_from_sklearn(libsvm(name), m.X, m.t)
    params, expected = rebuilt.get_params(), m.get_params()
    weights, expected_weights = params.pop("class_weight", None), expected.pop("class_weight", None)
    assert params == pytest.approx(expected)
    if expected_weights is None:
        assert weights is None
    else:              # pytest.approx compares no nested dicts: the classes' weights as float-keyed ones
        assert {float(k): v for k, v in weights.items()} == pytest.approx(
            {float(k): v for k, v in expected_weights.items()})
    np.testing.assert_allclose(rebuilt.standard_qp().upper, m.standard_qp().upper, rtol=1e-12)   # the boxes


def test_from_sklearn_rejects_what_it_cannot_convert() -> None:
    X, t = datasets.ripley_mixture(n=40)
    with pytest.raises(ValidationError, match="fitted scikit-learn SVM"):
        from_sklearn(svm.SVC(), X, t)
    fitted = svm.SVC().fit(X, t)
    with pytest.raises(ValidationError, match="t must be the training targets"):
        from_sklearn(fitted, X)
    with pytest.raises(ValidationError, match="X must be the 40 training points"):
        from_sklearn(fitted, X[:30], t[:30])
    with pytest.raises(ValidationError, match="X must be the training data"):
        from_sklearn(fitted, X + 1.0, t)
    labels = np.arange(40) % 3
    with pytest.raises(ValidationError, match="two-class"):
        from_sklearn(svm.SVC().fit(X, labels), X, labels)
    with pytest.raises(ValidationError, match="estimator must be SVC"):
        from_sklearn(svm.LinearSVR().fit(X, t), X, t)
    with pytest.raises(ValidationError, match="LIBSVM twin"):
        solve_with_libsvm(machine("svdd-ripley"))


@pytest.mark.parametrize("epsilon", [3.0, 100.0])
@pytest.mark.parametrize("method", ["clarabel", "osqp", "primal-clarabel", "qp-clarabel", "qp-osqp", "smo"])
def test_a_tube_holding_every_point_has_no_support_vector(method: str, epsilon: float) -> None:
    """The targets span 4.9 < 2 epsilon, so a tube holds them all: the optimum is a = a_hat = 0 (Result
    7.6's "inside the tube" for every point), as LIBSVM answers. The interior-point solvers' multipliers of 1e-19 to 1e-14 were taken for free
    ones: every point a support vector "on the tube", and a b that failed the certificate (OSQP)."""
    from sparsekernel.formulations import EpsilonSVR

    X = np.random.default_rng(3).normal(size=(20, 2))
    t = X[:, 0]
    assert np.ptp(t) < 2 * epsilon
    machine_ = EpsilonSVR(X, t, RBF(1.0), C=1.0, epsilon=epsilon)
    ours = machine_.solve(method)
    reference = svm.SVR(C=1.0, epsilon=epsilon, gamma=1.0).fit(X, t)
    assert reference.support_.size == 0
    assert ours.status == "optimal" and ours.support.size == 0
    assert categories(machine_, ours).counts["inside the tube"] == 20
    assert check(machine_, ours).ok


def test_categories_and_gap_name_a_solution_of_another_machine() -> None:
    """check refused a solution of another machine; categories and gap broadcast its multipliers against
    the machine's points (numpy's "operands could not be broadcast")."""
    X, t = datasets.ripley_mixture(n=30, seed=4)
    m30, m20 = SoftMarginSVC(X, t, RBF(1.0), C=1.0), SoftMarginSVC(X[:20], t[:20], RBF(1.0), C=1.0)
    dual, primal = m30.solve("clarabel"), m30.solve("primal-clarabel")
    calls = {"solution": lambda: categories(m20, dual), "primal_solution": lambda: gap(m20, primal, dual),
             "dual_solution": lambda: gap(m30, primal, None)}
    for name, call in calls.items():
        with pytest.raises(ValidationError, match=rf"^{name} must "):
            call()


@pytest.mark.parametrize("make, targets", [(lambda: svm.SVC(gamma=0.5), "labels"), (lambda: svm.SVR(), "values"),
                                           (lambda: svm.NuSVC(), "labels"), (lambda: svm.OneClassSVM(), None)])
def test_from_sklearn_certifies_at_the_estimators_own_tol(make, targets) -> None:
    """A default fit (tol 1e-3 in LIBSVM's units) was called optimal whatever it was, and check() then failed
    it at LIBSVM's 1e-8 (matched 1e-6): its complementary slackness rows at 7.5e-5 and 4.4e-4. Now its
    certificate is at twice the estimator's tol, relative, and check() agrees with the status."""
    from sparsekernel.formulations.solve import libsvm_relative_tol

    rng = np.random.default_rng(9)
    X = rng.normal(size=(40, 2))
    t = {"labels": np.where(X[:, 0] + 0.5 * rng.normal(size=40) > 0, 1, -1), "values": X[:, 0], None: None}[targets]
    est = make()
    est.fit(X) if t is None else est.fit(X, t)
    m = machine_from_sklearn(est, X, t)
    sol = from_sklearn(est, X, t)
    assert sol.tol == pytest.approx(max(2 * libsvm_relative_tol(m, est.tol), 1e-6))
    assert sol.status == "optimal" and check(m, sol).ok


def test_from_sklearn_calls_an_answer_that_fails_its_tol_inaccurate() -> None:
    """LIBSVM stopped after 5 iterations (scikit-learn warns, fit_status_ 0 or not): the answer fails its
    KKT conditions, so it is "inaccurate", with its failing report and a ConvergenceWarning, not "optimal"."""
    from sparsekernel.errors import ConvergenceWarning

    X, t = datasets.ripley_mixture(n=100, seed=2)
    with pytest.warns(Warning):
        est = svm.SVC(max_iter=5).fit(X, t)
    with pytest.warns(ConvergenceWarning, match="fails|inaccurate"):
        sol = from_sklearn(est, X, t)
    assert sol.status == "inaccurate" and not sol.report.ok
