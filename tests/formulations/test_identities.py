"""The notes' identities and closed forms, checked on solved machines."""

from __future__ import annotations

import numpy as np
import pytest

from sparsekernel import datasets
from sparsekernel.formulations import (
    SVDD, EpsilonSVR, HardMarginSVC, NuSVC, NuSVR, OneClassSVM, SoftMarginSVC,
)
from sparsekernel.kernels import RBF, Linear, Polynomial

from cases import box, diabetes


def test_result_7_5_margin_from_the_dual() -> None:
    """1/rho^2 = ||w||^2 = sum_n a_n = 2 L~(a) on separable data ((7.123)-(7.125))."""
    X, t = datasets.separable()
    m = HardMarginSVC(X, t, Linear())
    dual = m.solve("clarabel")
    primal = m.solve("primal-clarabel")
    w = primal.w
    norm2 = float(w @ w)
    rho = 1.0 / np.sqrt(norm2)
    # the margin is the distance of the closest point to the surface, t_n y_n / ||w||
    distances = t * (X @ w + primal.b) / np.sqrt(norm2)
    assert distances.min() == pytest.approx(rho, rel=1e-7)
    assert 1.0 / rho**2 == pytest.approx(np.sum(dual.a), rel=1e-7)          # (7.123)
    assert 1.0 / rho**2 == pytest.approx(2.0 * dual.dual_objective, rel=1e-7)  # (7.124)


@pytest.mark.parametrize("kernel", [Linear(), RBF(0.3), Polynomial(2, 0.5, 1.0)])
def test_exercise_7_3_two_points(kernel) -> None:
    """Two points: a = 2/d^2 with d the feature-space distance; the surface bisects them."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(2, 5))
    t = np.array([1.0, -1.0])
    K = kernel(X)
    d2 = K[0, 0] + K[1, 1] - 2 * K[0, 1]
    for method in ("clarabel", "qp-osqp", "primal-clarabel"):
        sol = HardMarginSVC(X, t, kernel).solve(method)
        np.testing.assert_allclose(sol.a, [2 / d2, 2 / d2], rtol=1e-6)
        np.testing.assert_allclose(t * sol.decision_function(X), [1.0, 1.0], atol=1e-6)
        # the feature-space midpoint has y = 0: y(mid) = (y(x+) + y(x-)) / 2 by linearity in phi
        assert 0.5 * sol.decision_function(X).sum() == pytest.approx(0.0, abs=1e-6)
    if isinstance(kernel, Linear):
        # in input space: w = sum_n a_n t_n x_n = 2 (x+ - x-)/d^2 and the midpoint lies on y = 0
        sol = HardMarginSVC(X, t, kernel).solve("clarabel")
        np.testing.assert_allclose(X.T @ sol.coef, 2 * (X[0] - X[1]) / d2, rtol=1e-6, atol=1e-9)
        assert sol.decision_function(X.mean(axis=0, keepdims=True))[0] == pytest.approx(0.0, abs=1e-7)


@pytest.mark.parametrize("nu", [0.45, 0.6, 0.8])
def test_nu_svc_properties(nu: float) -> None:
    """Result 7.7: sum a = nu, margin errors <= nu N <= support vectors."""
    X, t = datasets.ripley_mixture()
    sol = NuSVC(X, t, RBF(0.45), nu=nu).solve("clarabel")
    N = len(t)
    assert np.sum(sol.a) == pytest.approx(nu, rel=1e-6)
    margin_errors = np.sum(sol.xi > 1e-6 * sol.rho)
    assert margin_errors / N <= nu + 1e-9 <= sol.n_support / N + 2e-9


@pytest.mark.parametrize("method", ["clarabel", "qp-osqp", "primal-clarabel"])
def test_nu_svc_below_the_smallest_feasible_nu_is_its_degenerate_optimum(method: str) -> None:
    """On overlapping data small nu leaves only the degenerate optimum w = 0, rho = 0 (the notes'
    remark under Figure 7.4). That is an optimum, not a proof of infeasibility (only nu above
    2 min(N+, N-)/N is one): every path returns it, certified."""
    from sparsekernel.duality import check
    X, t = datasets.ripley_mixture()
    m = NuSVC(X, t, RBF(0.45), nu=0.25)
    sol = m.solve(method)
    assert sol.status == "optimal" and check(m, sol).ok
    assert abs(sol.rho) <= 1e-5 * m.output_scale
    assert float(sol.coef @ m.gram() @ sol.coef) <= 1e-8 * m.output_scale     # ||w||^2 = (a t)^T K (a t) = 0



def test_nu_svc_is_a_c_svc_with_c_equal_1_over_n_rho() -> None:
    """Result 7.7: the nu-SVC solution is the C-SVC's for C = 1/(N rho), a_C = a_nu / rho."""
    X, t = datasets.ripley_mixture()
    nu_sol = NuSVC(X, t, RBF(0.45), nu=0.5).solve("clarabel")
    C = 1.0 / (len(t) * nu_sol.rho)
    c_sol = SoftMarginSVC(X, t, RBF(0.45), C=C).solve("clarabel")
    np.testing.assert_allclose(c_sol.a, nu_sol.a / nu_sol.rho, atol=1e-6 * C)
    X_test = datasets.ripley_mixture(seed=2)[0]
    np.testing.assert_allclose(c_sol.decision_function(X_test), nu_sol.decision_function(X_test) / nu_sol.rho,
                               atol=1e-5)


@pytest.mark.parametrize("data", ["sinusoid", "diabetes"])
@pytest.mark.parametrize("nu", [0.3, 0.7])
def test_nu_svr_properties(data: str, nu: float) -> None:
    """Result 7.10: at most nu N points outside the tube, at least nu N support vectors."""
    if data == "sinusoid":
        X, t = datasets.sinusoid()
        m = NuSVR(X, t, RBF(10.0), C=5.0, nu=nu)
    else:
        X, t, _ = diabetes()
        m = NuSVR(X, t, RBF(0.1), C=1.0, nu=nu)
    sol = m.solve("clarabel")
    N = len(t)
    outside = np.sum((sol.xi + sol.xi_hat) > 1e-6)
    assert outside <= nu * N + 1e-9
    assert sol.n_support >= nu * N - 1e-9
    assert np.sum(sol.a + sol.a_hat) == pytest.approx(nu * m.C, rel=1e-6)  # (7.74) tight, epsilon > 0
    assert sol.epsilon > 0
    # no point is both above and below the tube: a_n a_hat_n = 0
    assert np.max(sol.a * sol.a_hat) <= 1e-9 * (m.C / N) ** 2


def test_epsilon_svr_multipliers_vanish_inside_the_tube() -> None:
    """Result 7.9 (iii): points strictly inside the tube have a = a_hat = 0."""
    X, t = datasets.sinusoid()
    m = EpsilonSVR(X, t, RBF(10.0), C=5.0, epsilon=0.2)
    sol = m.solve("clarabel")
    residual = np.abs(t - sol.decision_function(X))
    inside = residual < m.epsilon - 1e-6
    assert np.all(sol.a[inside] + sol.a_hat[inside] <= 1e-8 * m.C)
    assert np.all(np.isin(np.flatnonzero(~inside), sol.support) | (residual[~inside] <= m.epsilon + 1e-6))


@pytest.mark.parametrize("nu", [0.1, 0.5])
def test_one_class_fractions(nu: float) -> None:
    """Outliers (xi > 0) at most nu N; support vectors at least nu N."""
    X, _ = datasets.ripley_mixture()
    sol = OneClassSVM(X, RBF(0.45), nu=nu).solve("clarabel")
    N = X.shape[0]
    assert np.sum(sol.xi > 1e-6 * sol.rho) <= nu * N + 1e-9
    assert sol.n_support >= nu * N - 1e-6
    assert np.sum(sol.a) == pytest.approx(1.0, rel=1e-9)


@pytest.mark.parametrize("nu", [0.1, 0.4])
def test_svdd_equals_one_class_for_the_gaussian_kernel(nu: float) -> None:
    """Gap 7.5: with k(x, x) constant the sphere and the hyperplane give the same a,
    R^2 = k(x,x) - 2 rho + a^T K a, and SVDD's decision value is twice the one-class one."""
    X, _ = datasets.ripley_mixture()
    X_test = datasets.ripley_mixture(seed=4)[0]
    oc = OneClassSVM(X, RBF(0.45), nu=nu)
    sv = SVDD(X, RBF(0.45), nu=nu)
    a_oc = oc.solve("clarabel")
    a_sv = sv.solve("clarabel")
    np.testing.assert_allclose(a_sv.a, a_oc.a, atol=1e-7 * oc.box)
    aKa = float(a_oc.a @ oc.gram() @ a_oc.a)
    assert a_sv.R2 == pytest.approx(1.0 - 2.0 * a_oc.rho + aKa, rel=1e-7)
    np.testing.assert_allclose(a_sv.decision_function(X_test), 2.0 * a_oc.decision_function(X_test), atol=1e-7)


def test_svdd_differs_from_one_class_when_the_diagonal_varies() -> None:
    """With a linear kernel k(x, x) is not constant and the two machines differ."""
    X, _ = datasets.ripley_mixture(n=60)
    a_oc = OneClassSVM(X, Linear(), nu=0.3).solve("clarabel").a
    a_sv = SVDD(X, Linear(), nu=0.3).solve("clarabel").a
    assert np.max(np.abs(a_oc - a_sv)) > 1e-3 * np.max(a_oc)


@pytest.mark.parametrize("class_weight", [None, {1: 3.0, -1: 0.5}])
def test_hinge_form_7_44_equals_the_constrained_primal(class_weight) -> None:
    """(7.44): C sum_n E_SV(y_n t_n) + 1/2 ||w||^2 has the minimiser and value of (7.20)-(7.21)."""
    X, t = datasets.ripley_mixture(n=120)
    m = SoftMarginSVC(X, t, RBF(0.45), C=2.0, class_weight=class_weight)
    hinge = m.solve("hinge-clarabel")
    primal = m.solve("primal-clarabel")
    assert hinge.primal_objective == pytest.approx(primal.primal_objective, rel=1e-7)
    np.testing.assert_allclose(hinge.w, primal.w, atol=1e-5 * np.max(np.abs(primal.w)))
    assert hinge.b == pytest.approx(primal.b, abs=1e-5)
    # the multipliers recovered from the hinge point by (7.29)-(7.30) are the dual's
    np.testing.assert_allclose(hinge.a, primal.a, atol=1e-4 * box(m, primal))
    assert abs(hinge.gap) <= 1e-6 * abs(hinge.primal_objective)


def test_dual_forms_agree_and_auto_picks_the_factor_at_low_rank() -> None:
    """Linear kernel in 3-D: rank 3 << N, so "auto" states the dual with the factor."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 3))
    t = np.where(X[:, 0] + 0.5 * rng.normal(size=150) > 0, 1.0, -1.0)
    m = SoftMarginSVC(X, t, Linear(), C=1.0)
    assert m.dual().quadratic_form == "factor"
    factor = m.solve("clarabel", form="factor")
    wrapped = m.solve("clarabel", form="psd_wrap")
    assert factor.dual_objective == pytest.approx(wrapped.dual_objective, rel=1e-8)
    full = SoftMarginSVC(*datasets.ripley_mixture(), RBF(0.45), C=1.0)
    assert full.dual().quadratic_form == "psd_wrap"


def test_resolve_with_new_hyperparameters_does_not_recompile() -> None:
    X, t = datasets.ripley_mixture()
    m = SoftMarginSVC(X, t, RBF(0.45), C=1.0)
    formulation = m.dual()
    m.solve("clarabel")
    compiled = formulation.problem._cache.param_prog
    assert compiled is not None
    m.set_params(C=10.0)
    again = m.solve("clarabel")
    assert formulation.problem._cache.param_prog is compiled
    fresh = SoftMarginSVC(X, t, RBF(0.45), C=10.0).solve("clarabel")
    assert again.dual_objective == pytest.approx(fresh.dual_objective, rel=1e-8)
    nu = NuSVR(*datasets.sinusoid(), RBF(10.0), C=5.0, nu=0.5)
    f = nu.primal()
    nu.solve("primal-clarabel")
    compiled = f.problem._cache.param_prog
    nu.set_params(nu=0.8)
    assert nu.solve("primal-clarabel").primal_objective == pytest.approx(
        NuSVR(*datasets.sinusoid(), RBF(10.0), C=5.0, nu=0.8).solve("clarabel").dual_objective, rel=1e-6)
    assert f.problem._cache.param_prog is compiled


EXPECTED_TAGS = {
    HardMarginSVC: ({"(7.5)"}, {"(7.11)", "(7.12)"}),
    SoftMarginSVC: ({"(7.20)", "xi>=0"}, {"(7.33)", "(7.34)"}),
    NuSVC: ({"margin", "xi>=0", "rho>=0"}, {"(7.39)", "(7.40)", "(7.41)"}),
    EpsilonSVR: ({"(7.53)", "(7.54)", "xi>=0", "xi_hat>=0"}, {"(7.62)", "(7.63)", "(7.58)"}),
    NuSVR: ({"(7.53)", "(7.54)", "xi>=0", "xi_hat>=0", "epsilon>=0"}, {"(7.71)", "(7.72)", "(7.73)", "(7.74)"}),
    OneClassSVM: ({"margin", "xi>=0"}, {"box", "sum"}),
    SVDD: ({"sphere", "xi>=0"}, {"box", "sum"}),
}


@pytest.mark.parametrize("cls", list(EXPECTED_TAGS))
def test_constraints_are_keyed_by_equation_tag(cls) -> None:
    X, t = datasets.ripley_mixture(n=40)
    if cls in (EpsilonSVR, NuSVR):
        m = cls(X, X[:, 0], RBF(0.45))
    elif cls in (OneClassSVM, SVDD):
        m = cls(X, RBF(0.45))
    else:
        m = cls(X, t, RBF(0.45))
    primal_tags, dual_tags = EXPECTED_TAGS[cls]
    assert set(m.primal().constraints) == primal_tags
    assert set(m.dual().constraints) == dual_tags
    constraints = set(map(id, m.dual().problem.constraints))
    for value in m.dual().constraints.values():
        for c in value if isinstance(value, tuple) else (value,):
            assert id(c) in constraints


@pytest.mark.parametrize("method", ["clarabel", "qp-osqp"])
def test_b_falls_back_to_the_midpoint_when_no_multiplier_is_free(method: str) -> None:
    """With a tiny C every multiplier sits at 0 or C: (7.37) has nothing to average, and b is
    the midpoint of the interval the bounded multipliers allow (LIBSVM's rule too)."""
    from sklearn.svm import SVC

    X, t = datasets.ripley_mixture(n=40)
    m = SoftMarginSVC(X, t, Linear(), C=1e-3)
    sol = m.solve(method)
    assert any("midpoint" in note for note in sol.notes)
    g = sol.decision_function(X) - sol.b  # sum_m a_m t_m k(x_n, x_m)
    r = t - g
    at_C = sol.a > m.C * (1 - 1e-5)
    at_0 = sol.a < m.C * 1e-5
    lower = np.max(np.concatenate([r[at_0 & (t > 0)], r[at_C & (t < 0)]]))
    upper = np.min(np.concatenate([r[at_0 & (t < 0)], r[at_C & (t > 0)]]))
    assert sol.b == pytest.approx((lower + upper) / 2, abs=1e-9)
    libsvm = SVC(C=1e-3, kernel="linear", tol=1e-10).fit(X, t)
    assert sol.b == pytest.approx(libsvm.intercept_[0], abs=1e-7)


@pytest.mark.parametrize("method", ["smo", "qp-clarabel", "clarabel"])
def test_nu_svr_b_and_epsilon_at_the_midpoints_when_no_multiplier_is_free(method: str) -> None:
    """A tiny C puts every multiplier of the nu-SVR at 0 or C/N (nu N / 2 of each sign, Result 7.10): (7.69)
    has nothing to average. With r_n = t_n - sum_m u_m k_nm, a_n = C/N needs r_n >= b + epsilon and a_n = 0
    needs r_n <= b + epsilon ((7.65), (7.67)), a_hat_n alike for b - epsilon ((7.66), (7.68)): b + epsilon and
    b - epsilon each lie in an interval, and b, epsilon are the midpoints (LIBSVM's calculate_rho). LIBSVM's
    own b lies in the same interval but, here, at its ends: its emptied multipliers keep C (1 - 8e-15),
    which it counts as free."""
    from sklearn.svm import NuSVR as LibsvmNuSVR

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    t = np.sin(X[:, 0]) + 0.3 * rng.normal(size=40)
    m = NuSVR(X, t, RBF(0.5), C=1e-4 * 40, nu=0.5)
    sol = m.solve(method, **({"tol": 1e-10} if method == "smo" else {}))
    box = m.C / m.N
    u = sol.a - sol.a_hat
    r = t - m.gram() @ u
    upper_a, lower_a = sol.a > (1 - 1e-5) * box, sol.a < 1e-5 * box
    upper_h, lower_h = sol.a_hat > (1 - 1e-5) * box, sol.a_hat < 1e-5 * box
    assert np.all(upper_a | lower_a) and np.all(upper_h | lower_h)          # no free multiplier
    plus = (np.max(r[lower_a]), np.min(r[upper_a]))                         # b + epsilon
    minus = (np.max(r[upper_h]), np.min(r[lower_h]))                        # b - epsilon
    assert plus[0] < plus[1] and minus[0] < minus[1]
    assert sol.b == pytest.approx((sum(plus) + sum(minus)) / 4, abs=1e-9)
    assert sol.epsilon == pytest.approx((sum(plus) - sum(minus)) / 4, abs=1e-9)
    libsvm = LibsvmNuSVR(C=1e-4, nu=0.5, kernel="rbf", gamma=0.5, tol=1e-12).fit(X, t)
    assert (plus[0] + minus[0]) / 2 <= libsvm.intercept_[0] <= (plus[1] + minus[1]) / 2
    np.testing.assert_allclose(u[libsvm.support_], libsvm.dual_coef_[0], atol=1e-9 * box)


@pytest.mark.parametrize("method", ["qp-clarabel", "smo"])
def test_nu_svr_whose_7_74_is_slack_is_solved_as_the_epsilon_svr_at_epsilon_0(method: str) -> None:
    """At nu = 1 (40 points, C = 400) the optimum leaves (7.74) slack (sum_n |u_n| 27% below nu C), so delta > 0
    and epsilon = 0 (Result 7.10). The standard form's equality meets its sum with pairs a_n, a_hat_n > 0, a face
    of optima on which Clarabel stopped 'AlmostSolved': b = 0.171071 (inaccurate, a ConvergenceWarning) where
    LIBSVM and the notes' dual (7.70)-(7.74) through cvxpy have 0.168410."""
    from sklearn.svm import NuSVR as LibsvmNuSVR

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    t = np.sin(X[:, 0]) + 0.3 * rng.normal(size=40)
    m = NuSVR(X, t, RBF(0.5), C=10.0 * 40, nu=1.0)
    sol = m.solve(method, **({"tol": 1e-8} if method == "smo" else {}))
    assert sol.status == "optimal" and sol.epsilon == 0.0
    assert np.sum(np.abs(sol.a - sol.a_hat)) < 0.9 * m.nu * m.C                 # (7.74) slack
    libsvm = LibsvmNuSVR(C=10.0, nu=1.0, kernel="rbf", gamma=0.5, tol=1e-12).fit(X, t)   # C / N
    scale = m.output_scale
    assert abs(sol.b - libsvm.intercept_[0]) < 1e-5 * scale
    np.testing.assert_allclose(sol.decision_function(X), libsvm.predict(X), atol=1e-5 * scale)
    notes = m.solve("clarabel")                                                 # (7.74) an inequality
    assert abs(sol.b - notes.b) < 1e-5 * scale


def test_b_is_the_average_over_free_multipliers_7_37() -> None:
    X, t = datasets.ripley_mixture()
    m = SoftMarginSVC(X, t, RBF(0.45), C=1.0)
    sol = m.solve("qp-osqp")
    assert sol.notes == ()
    free = (sol.a > 1e-5 * m.C) & (sol.a < (1 - 1e-5) * m.C)
    g = m.gram() @ (sol.a * t)
    assert sol.b == pytest.approx(np.mean(t[free] - g[free]), abs=1e-12)      # (7.37)
    np.testing.assert_allclose(t[free] * (g[free] + sol.b), 1.0, atol=1e-6)  # (7.36)


@pytest.mark.parametrize("method", ["clarabel", "qp-osqp", "primal-clarabel"])
def test_sample_weights_scale_the_box(method: str) -> None:
    """scikit-learn's identity: every sample weight times 0.01 with C times 100 gives the same
    dual; and a weighted machine matches LIBSVM fitted with the same weights."""
    from sklearn.svm import SVC, SVR

    from sparsekernel.duality import check, from_sklearn

    X, t = datasets.ripley_mixture(n=80)
    w = np.random.default_rng(1).uniform(0.2, 3.0, size=80)
    base = SoftMarginSVC(X, t, RBF(0.45), C=1.0, sample_weight=w, class_weight={1: 2.0, -1: 1.0})
    scaled = SoftMarginSVC(X, t, RBF(0.45), C=100.0, sample_weight=0.01 * w, class_weight={1: 2.0, -1: 1.0})
    a, b = base.solve(method), scaled.solve(method)
    np.testing.assert_allclose(a.a, b.a, atol=1e-6 * np.max(base.C_n))
    assert a.b == pytest.approx(b.b, abs=1e-6)
    assert check(base, a, 1e-5).ok
    libsvm = SVC(C=1.0, gamma=0.45, tol=1e-8, class_weight={1: 2.0, -1: 1.0}).fit(X, t, sample_weight=w)
    ref = from_sklearn(libsvm, X, t, sample_weight=w)
    np.testing.assert_allclose(a.a, ref.a, atol=1e-5 * np.max(base.C_n))
    Xs, ts = datasets.sinusoid(n=30)
    ws = np.linspace(0.5, 2.0, 30)
    svr = EpsilonSVR(Xs, ts, RBF(10.0), C=2.0, epsilon=0.1, sample_weight=ws)
    s1 = svr.solve(method)
    s2 = EpsilonSVR(Xs, ts, RBF(10.0), C=200.0, epsilon=0.1, sample_weight=0.01 * ws).solve(method)
    np.testing.assert_allclose(s1.a - s1.a_hat, s2.a - s2.a_hat, atol=1e-6 * 4.0)
    ref = SVR(C=2.0, epsilon=0.1, gamma=10.0, tol=1e-8).fit(Xs, ts, sample_weight=ws)
    np.testing.assert_allclose(s1.decision_function(Xs), ref.predict(Xs), atol=1e-5)
    assert check(svr, s1, 1e-5).ok


def test_nu_svr_with_slack_7_74_keeps_epsilon_non_negative_on_every_path() -> None:
    """Where the standard form's equality sum (a + a_hat) = nu C gives epsilon < 0, the notes'
    inequality (7.74) is slack and the optimum has epsilon = 0: every path returns one."""
    from sparsekernel.duality import check
    from sparsekernel.solvers.smo import smo

    rng = np.random.default_rng(0)
    X = rng.normal(size=(6, 2)) * rng.uniform(0.5, 1.0, size=2)
    t = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.1 * np.random.default_rng(2).normal(size=6)
    m = NuSVR(X, t, Linear(), C=1.0, nu=1.0)
    # the equality form alone (LIBSVM's too) admits epsilon = -r < 0: with every multiplier at a bound, r_g
    # may be anywhere in [max G over the class's a at C_n, min G over its a at 0], and r = (r_1 + r_2) / 2
    # reaches above 1e-3 (a multiplier left at the rounding of 0 set r there alone, before BOUND_ROUNDING)
    qp = m.standard_qp()
    result = smo(qp, tol=1e-8)
    y, a, G, upper = np.asarray(qp.y), result.a, result.G, np.asarray(qp.upper)
    top = [float(np.min(G[(y == g) & (a <= 1e-12 * upper)])) for g in (1.0, -1.0)]
    assert sum(top) / 2 > 1e-3 and result.rho.fallback
    objectives = []
    for method, opts in (("smo", {"tol": 1e-8}), ("qp-clarabel", {}), ("qp-osqp", {}), ("clarabel", {}),
                         ("primal-clarabel", {})):
        sol = m.solve(method, **opts)
        assert sol.epsilon >= 0.0
        assert check(m, sol, 1e-5).ok, str(check(m, sol, 1e-5))
        objectives.append(sol.dual_objective)
    assert max(objectives) - min(objectives) <= 1e-7
