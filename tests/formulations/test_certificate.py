"""One tolerance, scale-free, behind a certificate.

``smo(machine, tol=t)`` followed by ``check(machine, sol)`` at its default (the
tolerance matched to the method and t) passes on every machine, for X scaled
from 1e-6 to 1e6 and t from 1e-2 to 1e-8; where multiplying X by a constant is
an equivalence of the machine (the kernel machines with no fixed margin:
nu-SVC, one-class, SVDD), the iteration count does not change its order. And
the reproducers of issue 15, each as the behaviour asked for.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from sparsekernel.duality import check
from sparsekernel.errors import ConvergenceWarning, InfeasibleError, SolverError
from sparsekernel.formulations import (
    SVDD,
    EpsilonSVR,
    HardMarginSVC,
    NuSVC,
    NuSVR,
    OneClassSVM,
    SoftMarginSVC,
)
from sparsekernel.kernels import RBF, Linear, Polynomial
from sparsekernel.solvers.smo import smo

SCALES = (1e-6, 1e-3, 1.0, 1e3, 1e6)
TOLS = (1e-2, 1e-4, 1e-6, 1e-8)


def _data(scale: float, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(36, 3))
    t = np.where(X[:, 0] + 0.6 * X[:, 1] + 0.5 * rng.normal(size=36) > 0, 1.0, -1.0)
    y = np.sin(X[:, 0]) + 0.3 * X[:, 1] + 0.1 * rng.normal(size=36)
    return X * scale, t, y


def _separable(scale: float) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 2))
    t = np.where(X[:, 0] > 0, 1.0, -1.0)
    X[:, 0] += 0.5 * t                                 # a gap of 1 between the classes
    return X * scale, t


def _rbf(X: np.ndarray) -> RBF:
    """gamma = 1/(D var X): the kernel matrix, hence the problem, is the same at every scale."""
    return RBF(1.0 / (X.shape[1] * X.var()))


MAKERS = {
    "hard-margin": lambda s: HardMarginSVC(*_separable(s), Linear()),
    "soft-margin": lambda s: SoftMarginSVC(_data(s)[0], _data(s)[1], _rbf(_data(s)[0]), C=2.0),
    "soft-margin-linear": lambda s: SoftMarginSVC(_data(s)[0], _data(s)[1], Linear(), C=1.0 / s ** 2),
    "nu-svc": lambda s: NuSVC(_data(s)[0], _data(s)[1], Linear(), nu=0.4),
    "eps-svr": lambda s: EpsilonSVR(_data(s)[0], _data(s)[2] * s, _rbf(_data(s)[0]), C=1.0, epsilon=0.1 * s),
    "nu-svr": lambda s: NuSVR(_data(s)[0], _data(s)[2] * s, _rbf(_data(s)[0]), C=3.0, nu=0.5),
    "one-class": lambda s: OneClassSVM(_data(s)[0], Linear(), nu=0.3),
    "svdd": lambda s: SVDD(_data(s)[0], Linear(), nu=0.3),
}
#: machines for which X -> s X is an equivalence (the kernel scales by s^2, the multipliers do not)
EQUIVALENT_UNDER_SCALING = ("nu-svc", "one-class", "svdd", "soft-margin", "soft-margin-linear", "hard-margin")


@pytest.mark.parametrize("name", sorted(MAKERS))
@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("tol", TOLS)
def test_the_smo_at_any_tol_and_scale_passes_its_certificate(name: str, scale: float, tol: float) -> None:
    m = MAKERS[name](scale)
    sol = smo(m, tol=tol)
    report = check(m, sol)                  # the default: the tolerance matched to the SMO at tol
    assert sol.status == "optimal" and report.ok, str(report)
    assert report.tol == pytest.approx(max(2 * tol, 1e-9))


@pytest.mark.parametrize("name", EQUIVALENT_UNDER_SCALING)
def test_scaling_x_changes_neither_the_iterations_nor_the_verdict(name: str) -> None:
    """X -> s X multiplies the kernel by s^2 and, for these machines, leaves the multipliers
    alone or scales them by 1/s^2 (the margin machines with a linear kernel: the hard margin, and
    the soft margin at C/s^2; an RBF width that follows the data leaves the problem as it is):
    the SMO takes the same steps, and the certificates agree."""
    runs = {s: smo(MAKERS[name](s), tol=1e-6) for s in SCALES}
    base = runs[1.0]
    power = 2 if name in ("hard-margin", "soft-margin-linear") else 0
    for s, sol in runs.items():
        assert sol.iterations <= 2 * base.iterations + 5 and base.iterations <= 2 * sol.iterations + 5, \
            {k: v.iterations for k, v in runs.items()}
        np.testing.assert_allclose(sol.a * s ** power, base.a, rtol=1e-3, atol=1e-5 * float(np.max(base.a)))


# -- the reproducers of issue 15 -----------------------------------------------------------

def test_an_inaccurate_clarabel_answer_is_not_optimal() -> None:
    """Clarabel stops with InsufficientProgress on this C-SVC (its dual 3.58 against the SMO's
    3.75): the answer fails the certificate, so it is "inaccurate", warned, with its report."""
    X = np.random.default_rng(0).normal(size=(15, 10))
    t = -np.ones(15)
    t[0] = 1
    m = SoftMarginSVC(X, t, Linear(), C=5272)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sol = m.solve("qp-clarabel")
    if sol.solver_status == "Solved":                  # a Clarabel that does solve it must be right
        assert sol.status == "optimal" and sol.report.ok
    else:
        assert sol.status == "inaccurate" and not sol.report.ok
        assert any(issubclass(w.category, ConvergenceWarning) and "inaccurate" in str(w.message) for w in caught)
    reference = m.solve("smo", tol=1e-8)
    assert reference.status == "optimal"
    assert reference.dual_objective == pytest.approx(3.7515, abs=1e-3)
    assert m.solve("clarabel").dual_objective == pytest.approx(reference.dual_objective, rel=1e-6)


def test_a_hard_margin_on_overlapping_data_is_infeasible_on_every_path() -> None:
    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 2))
    t = np.where(rng.normal(size=40) > 0, 1.0, -1.0)
    m = HardMarginSVC(X, t, Linear())
    for method in ("smo", "qp-clarabel", "qp-osqp", "clarabel", "primal-clarabel"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            with pytest.raises(InfeasibleError, match="not separable"):
                m.solve(method)


def test_the_hull_proof_fires_on_overlapping_multipliers_only() -> None:
    """The hard margin's infeasibility proof: multipliers joining the classes' hulls prove it; those
    of a separable problem do not."""
    from dataclasses import replace

    X, t = _separable(1.0)
    m = HardMarginSVC(X, t, Linear())
    sol = m.solve("smo", tol=1e-8)
    m._infeasibility_proof(sol, "test")                 # separable: no proof, no error
    overlap = HardMarginSVC(np.vstack([X, X[:1]]), np.append(t, -t[0]), Linear())
    a = np.zeros(overlap.N)
    a[0] = a[-1] = 1.0                                  # the same point in both classes
    with pytest.raises(InfeasibleError, match="convex hulls"):
        overlap._infeasibility_proof(replace(sol, a=a, support=np.array([0])), "test")


@pytest.mark.parametrize("scale", (1e-6, 1.0, 1e6))
def test_one_class_at_tiny_and_huge_scales_iterates_alike(scale: float) -> None:
    """Issue 15: at X * 1e-6 the SMO stopped at iteration 0 with status "optimal" and failed
    check(m, s, 1e-5); the tolerance is now relative to the kernel's diagonal."""
    m = OneClassSVM(np.random.default_rng(0).normal(size=(20, 5)) * scale, Linear(), nu=0.8)
    sol = m.solve("smo", tol=1e-6)
    assert sol.iterations > 5
    assert check(m, sol, 1e-5).ok


@pytest.mark.parametrize("data", ["ripley", "digits"])
def test_nu_svc_tol_means_what_it_means_for_every_machine(data: str) -> None:
    """Issue 15: m.solve("smo", tol=1e-6) on a NuSVC then check(m, sol, tol=1e-5) failed
    complementary slackness at N = 250 (multipliers in [0, 1/N])."""
    from sparsekernel import datasets

    if data == "ripley":
        X, t = datasets.ripley_mixture(n=250)
        kernel = RBF(0.45)
    else:
        from sklearn.datasets import load_digits

        digits = load_digits()
        X, t = digits.data[:250] / 16.0, np.where(digits.target[:250] >= 5, 1.0, -1.0)
        kernel = RBF(1.0 / 64)
    m = NuSVC(X, t, kernel, nu=0.3)
    sol = m.solve("smo", tol=1e-6)
    assert check(m, sol, 1e-5).ok, str(check(m, sol, 1e-5))


def test_nu_svc_with_a_tiny_rho_is_solved_not_refused() -> None:
    """Issue 15: NuSVC(X, t, RBF(1e-6), nu=0.3) on 40 points of a noisy linear rule raised
    InfeasibleError (rho = 6.8e-8 for LIBSVM, 0.90 training accuracy). Only nu above
    2 min(N+, N-)/N is a proof of infeasibility: here the SMO returns a certified optimum."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 2))
    t = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    m = NuSVC(X, t, RBF(1e-6), nu=0.3)
    sol = m.solve("smo", tol=1e-6)
    assert sol.status == "optimal" and check(m, sol).ok
    assert 0 < sol.rho < 1e-6
    assert np.mean(np.sign(sol.decision_function(X)) == t) >= 0.85
    with pytest.raises(InfeasibleError, match="at most 2 min"):
        NuSVC(X, t, RBF(1e-6), nu=2 * min(np.sum(t > 0), np.sum(t < 0)) / 40 + 0.01)


def test_a_solver_that_claims_success_with_a_failing_answer_raises() -> None:
    """No status string is trusted: an answer that fails its certificate although its solver said
    it was solved raises SolverError, with the failing report on the exception."""
    from sparsekernel.formulations.solve import certify

    X, t, _ = _data(1.0)
    m = SoftMarginSVC(X, t, RBF(0.5), C=1.0)
    sol = m.solve("smo", tol=1e-6)
    wrong = type(sol)(**{**{f: getattr(sol, f) for f in sol.__dataclass_fields__}, "b": sol.b + 0.5})
    with pytest.raises(SolverError, match="fails the machine's KKT conditions") as info:
        certify(m, wrong, "solved", "dual", "test", 1e-5)
    assert info.value.report is not None and not info.value.report.ok
    with pytest.warns(ConvergenceWarning, match="inaccurate"):
        out = certify(m, wrong, "inaccurate", "dual", "test", 1e-5)
    assert out.status == "inaccurate" and not out.report.ok


def test_kernel_values_near_1e37_do_not_run_to_the_cap() -> None:
    """Issue 15: on kernel values near 1e39 the SMO ran to its 1e7 cap for minutes at N = 10.
    The initial gradient now sums Q a before adding p (the rows of a_n = a_hat_n cancel exactly),
    and a run whose violation is at the gradient's rounding stops there ("roundoff"); whatever
    the path, the answer is certified or warned, never a silent 'optimal'."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(10, 3)) * 1e6
    y = rng.normal(size=10)
    from sparsekernel.kernels import Polynomial

    m = NuSVR(X, y, Polynomial(degree=3, gamma=1.0, coef0=1.0), C=1.0, nu=0.5)
    assert m.kernel_diagonal_max > 1e36
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        sol = m.solve("smo")
    assert sol.iterations < 1_000_000
    # the outputs' rounding here (about 1e21 u) dwarfs every output scale: the certificate's verdict
    # is its own, and says so; it is never a silent "optimal"
    assert sol.status in ("optimal", "inaccurate") and (sol.status == "optimal") == sol.report.ok


def test_an_infeasibility_status_is_taken_only_with_the_hull_proof() -> None:
    """Fuzz seed 353: a hard margin on near-separable data at scale 1.4e-6 (margin 0.035 R).
    Clarabel reports DualInfeasible; the classes' hulls are apart, so that status is refused
    (SolverError) while the SMO returns the certified optimum."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(60, 5))
    t = np.where(X[:, 0] > 0, 1.0, -1.0)
    X[:, 0] += 0.05 * t
    m = HardMarginSVC(X * 1e-6, t, Linear())
    distance, proved = m.hull_distance()
    assert not proved and distance > 0.05e-6
    sol = m.solve("smo", tol=1e-6)
    assert sol.status == "optimal" and check(m, sol).ok
    # 1/||w|| is the margin, half the hulls' distance
    assert 2.0 / np.sqrt(2.0 * sol.dual_objective) == pytest.approx(distance, rel=1e-3)
    try:
        other = m.solve("qp-clarabel")
    except SolverError as exc:
        assert "separable" in str(exc)
    else:
        assert other.status in ("optimal", "inaccurate")


@pytest.mark.parametrize("n_points", [1400, 1797])       # float64 rows, float32 rows (N > 1448)
@pytest.mark.parametrize("name", ["soft", "nu-svc"])
def test_the_smo_outputs_are_the_kernel_products_when_rows_are_computed_on_demand(name: str, n_points: int,
                                                                                  monkeypatch) -> None:
    """Above SMALL_GRAM_POINTS the cache is filled row by row and most slots stay empty (garbage,
    made nan here): the outputs the certificate reads must be K u, as an independent product
    gives them: exactly from float64 rows, within the bound ``outputs_error`` from float32 ones."""
    from sklearn.datasets import load_digits

    from sparsekernel.solvers import kernel_cache
    from sparsekernel.solvers.smo import SMALL_GRAM_POINTS

    init = kernel_cache.KernelRowCache.__init__

    def poisoned(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.store.fill(np.nan)

    monkeypatch.setattr(kernel_cache.KernelRowCache, "__init__", poisoned)

    digits = load_digits()
    X, t = digits.data[:n_points] / 16.0, np.where(digits.target[:n_points] >= 5, 1.0, -1.0)
    assert X.shape[0] > SMALL_GRAM_POINTS
    m = SoftMarginSVC(X, t, RBF(1 / 64), C=1.0) if name == "soft" else NuSVC(X, t, RBF(1 / 64), nu=0.5)
    result = smo(m.standard_qp(), tol=1e-3)
    exact = m.kernel_times(m.aggregate(result.a))
    # float64 rows: the outputs are their products (no error); float32 rows: the float64 product of the
    # final refinement (no error) or, after a step following it, the rows' (an error bound of eps32)
    assert kernel_cache.row_dtype(n_points) is np.float32 or result.outputs_error == 0.0
    np.testing.assert_allclose(result.outputs, exact, rtol=0,
                               atol=result.outputs_error + 1e-10 * float(np.max(np.abs(exact))))
    sol = m.solve("smo", tol=1e-3)
    assert sol.status == "optimal" and check(m, sol).ok


def test_evolve_is_dataclasses_replace_with_the_arrays_frozen() -> None:
    """``Solution.evolve`` (the certificate's and the estimators' copy) gives the Solution that
    ``dataclasses.replace`` gives: every field equal, new arrays read-only copies, unknown names refused."""
    import dataclasses

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    t = np.where(X[:, 0] > 0, 1.0, -1.0)
    sol = SoftMarginSVC(X, t, RBF(0.5), C=1.0).solve("smo")
    support = np.array([1, 2, 3])
    evolved = sol.evolve(support=support, notes=("n",), status="inaccurate")
    replaced = dataclasses.replace(sol, support=support, notes=("n",), status="inaccurate")
    for f in dataclasses.fields(sol):
        a, b = getattr(evolved, f.name), getattr(replaced, f.name)
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
            assert not a.flags.writeable
        else:
            assert a is b or a == b or (a != a and b != b), f.name
    support[0] = 7                      # the caller's array was copied
    assert evolved.support[0] == 1 and sol.support is not evolved.support
    with pytest.raises(TypeError, match="no fields"):
        sol.evolve(bogus=1)


@pytest.mark.parametrize("cls, hyper", [(EpsilonSVR, {"C": 1.0, "epsilon": 0.1}), (EpsilonSVR, {"C": 1.0, "epsilon": 0.0}),
                                        (NuSVR, {"C": 1.0, "nu": 0.5})])
@pytest.mark.parametrize("method", ["clarabel", "osqp", "primal-clarabel", "qp-clarabel", "smo"])
def test_equal_targets_measure_the_outputs_by_their_size(cls, hyper, method: str) -> None:
    """All targets 0.3: np.std gives 5.6e-17 (the rounding of their mean), not 0; the output scale is the
    targets' size 0.3, so that every method certifies the flat fit y(x) = 0.3 (the spread, a rounding
    error, asked for outputs to 1e-22 and failed every cvxpy path and the direct QP)."""
    X = np.random.default_rng(0).normal(size=(10, 2))
    m = cls(X, np.full(10, 0.3), RBF(1.0), **hyper)
    assert m.output_scale == 0.3
    sol = m.solve(method)
    assert sol.status == "optimal" and check(m, sol).ok
    assert np.max(np.abs(sol.decision_function(X) - 0.3)) <= 1e-5 * 0.3 + hyper.get("epsilon", 0.0)


@pytest.mark.parametrize("method", ["clarabel", "primal-clarabel", "qp-clarabel", "osqp"])
def test_a_certified_solution_predicts_the_outputs_it_certified(method: str) -> None:
    """Duplicated points with opposite labels, cubic kernel, C = 1e4: a free multiplier a_20 = 0.055 sits
    below BOUND_TOL of the box; the support cut it, and y(x_n), the expansion over the support, left the
    certified outputs (over every multiplier) by 0.89 of the margin. The support keeps it now, and y(x)
    is the certified function, the SMO's to its tolerance."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    t = np.where(X[:, 0] + 0.5 * rng.normal(size=30) > 0, 1.0, -1.0)
    X[15:17], t[15:17] = X[:2], -t[:2]
    m = SoftMarginSVC(X, t, Polynomial(degree=3, gamma=1 / 3, coef0=1.0), C=1e4)
    sol = m.solve(method)
    assert sol.status == "optimal"
    certified = m.gram() @ sol.coef + sol.b
    assert np.max(np.abs(sol.decision_function(X) - certified)) <= sol.tol
    reference = m.solve("smo", tol=1e-8)
    assert np.max(np.abs(sol.decision_function(X) - reference.decision_function(X))) <= 1e-3


def test_an_rbf_too_narrow_for_double_precision_is_computed_from_differences_and_certified() -> None:
    """Twelve normal points, RBF gamma = 1e14: the Gram matrix is the identity in double precision
    (the closest pair is 0.057 apart, exp(-5.7e12) = 0) and the exact C-SVC solution has every a_n = 1
    and decision values +-1 on the training points, which LIBSVM returns. The kernel values from
    products, z^T z' + s + s', cancel to 4 eps gamma R^2 ~ 0.4, so k(x, x) came out near 0.95 and the
    decisions near 0.9, with the certificate passing on those same values and no warning (fuzzed); then
    the fit was 'inaccurate' with a warning that named gamma. Where the product's rounding is beyond double
    precision the exponent is now summed from the differences (the SMO's rows, the Gram matrix and the
    prediction's kernel), and the bound the certificate takes is that of those values: the fit is certified,
    silent, and equals LIBSVM's exactly, at gamma 1e14 as at 1e4 and 1e300."""
    from sklearn.svm import SVC as LibSVC

    from sparsekernel.estimators import SVC

    rng = np.random.default_rng(5)
    X, y = rng.normal(size=(12, 3)), np.array([0, 1] * 6)
    for gamma in (1e4, 1e14, 1e300):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            fitted = SVC(gamma=gamma).fit(X, y)
        assert fitted.solutions_[0].status == "optimal"
        assert fitted.machines_[0].kernel_entry_error <= 1e-10
        np.testing.assert_allclose(fitted.decision_function(X), LibSVC(gamma=gamma).fit(X, y).decision_function(X),
                                   atol=1e-6 if gamma == 1e4 else 1e-12)


@pytest.mark.parametrize("cls, hyper", [(EpsilonSVR, {"C": 1.0, "epsilon": 0.1}), (NuSVR, {"C": 1.0, "nu": 0.4})])
def test_a_negative_multiplier_carried_with_its_twin_is_a_positive_result_7_9_violation(cls, hyper) -> None:
    """Result 7.9's row was min(a_n, a_hat_n) 2 epsilon, signed: a point carrying a wrong-signed a_n = -0.3 with
    a_hat_n = 0.01 passed it (its violation the largest of -0.06 and zeros: 0);
    it is now |min(a_n, a_hat_n)| 2 epsilon, and no row of the report is negative."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 2))
    m = cls(X, np.sin(X[:, 0]), RBF(0.5), **hyper)
    a, a_hat = np.zeros(30), np.zeros(30)
    a[0], a_hat[0] = -0.3, 0.01
    report = check(m, a=a, a_hat=a_hat, b=0.0, tol=1e-6, **({"epsilon": 0.1} if cls is NuSVR else {}))
    assert all(r.violation >= 0 for r in report.rows if r.ok is not None)
    row = next(r for r in report.rows if r.condition.startswith("a_n a_hat_n = 0"))
    assert row.ok is False and row.where == 0 and row.absolute == pytest.approx(0.3 * 2 * 0.1)


def test_one_class_smo_on_a_polynomial_kernel_is_certified_only_near_the_optimum():
    """The one-class output scale was max_n k(x_n, x_n): on standardised breast-cancer features
    (80 points, 5 features) a degree-3 polynomial kernel has max k(x, x) = 2.5e4 against rho = 1.6,
    and the SMO at tol 1e-3 stopped with a dual objective 150% off, certified optimal. The scale is
    now mean_nm k(x_n, x_m), ||w||^2 at the uniform a, of the size of rho."""
    from sklearn.datasets import load_breast_cancer

    data = load_breast_cancer()
    idx = np.random.default_rng(0).choice(len(data.target), 80, replace=False)
    X = data.data[idx][:, :5]
    X = (X - X.mean(0)) / X.std(0)
    for degree, nu in ((2, 0.2), (3, 0.05), (3, 0.2)):
        m = OneClassSVM(X, Polynomial(degree=degree, gamma=1.0, coef0=1.0), nu=nu)
        exact = m.solve("clarabel")
        sol = m.solve("smo")
        assert sol.status == "optimal"
        assert abs(sol.dual_objective - exact.dual_objective) <= 1e-3 * abs(exact.dual_objective)
        assert abs(sol.rho - exact.rho) <= 1e-2 * exact.rho
