"""Certificates audited against answers known to be right (or wrong) by other means.

- Boxes far below the solution's size (sample weights of 1e-6 next to weights of 1): an interior-point
  solver leaves the multipliers of those boxes within its absolute resolution (about 1e-12 here) of a
  bound, which is a large share of a box of 2.6e-8. Counted as free, they set rho, b or epsilon to
  their gradients, which are not the optimum's; the correct multipliers then failed their certificate
  (SolverError), while the same multipliers with the SMO's rho pass at 4e-11.
- LIBSVM's float32 kernel cache: its answer fails the matched 1e-6 by its cache's rounding, which is
  LIBSVM's resolution, not a wrong answer ("inaccurate", not SolverError).
"""

from __future__ import annotations

import numpy as np
import pytest

from sparsekernel import datasets
from sparsekernel.duality import check
from sparsekernel.formulations import NuSVC, OneClassSVM, SoftMarginSVC
from sparsekernel.kernels import RBF
from sparsekernel.solvers.standard_qp import bound_masks


def _weighted(seed: int = 4) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """80 points of Ripley's mixture, weights in [0.1, 3) but five of 1e-6."""
    X, t = datasets.ripley_mixture(seed=2)
    weights = np.random.default_rng(seed).uniform(0.1, 3.0, 80)
    weights[:5] = 1e-6
    return X[:80], t[:80], weights


@pytest.mark.parametrize("machine", ["one-class", "nu-svc"])
def test_tiny_boxes_do_not_set_the_scalars_of_an_interior_point_answer(machine: str) -> None:
    X, t, weights = _weighted()
    m = (OneClassSVM(X, RBF(1.0), nu=0.3, sample_weight=weights) if machine == "one-class"
         else NuSVC(X, t, RBF(1.0), nu=0.4, sample_weight=weights))
    reference = m.solve("smo", tol=1e-10)
    solution = m.solve("clarabel")                     # SolverError on the old code
    assert solution.status == "optimal"
    assert check(m, solution).ok
    assert abs(solution.rho - reference.rho) <= 1e-6 * m.output_scale
    assert abs(solution.b - reference.b) <= 1e-6 * m.output_scale


def test_a_box_below_the_resolution_is_at_its_nearer_bound() -> None:
    """Width 2.6e-8 next to a largest multiplier of 0.07: below BOUND_TOL times the solution's size, so
    at a bound (the nearer one), never free; boxes above that are read as before."""
    upper = np.array([2.6e-8, 2.6e-8, 2.6e-8, 0.1, 0.1, 0.1])
    a = np.array([2.6e-8 - 1.5e-12, 6.4e-13, 1.4e-8, 0.07, 0.1 - 1e-9, 1e-9])
    at_lower, at_upper = bound_masks(a, np.zeros(6), upper, 1e-5)
    assert at_lower.tolist() == [False, True, False, False, False, True]
    assert at_upper.tolist() == [True, False, True, False, True, False]


def test_weighted_soft_margin_with_tiny_boxes_is_unchanged() -> None:
    """The C-SVC's b reads the same rule; its certified answers agree with the SMO's."""
    X, t, weights = _weighted()
    m = SoftMarginSVC(X, t, RBF(1.0), C=2.0, sample_weight=weights)
    reference = m.solve("smo", tol=1e-10)
    solution = m.solve("clarabel")
    assert solution.status == "optimal"
    assert abs(solution.b - reference.b) <= 1e-5


def _sine_svr_gram() -> tuple[np.ndarray, np.ndarray]:
    """60 noisy samples of sin(2 pi x) and their RBF(5) Gram matrix."""
    rng = np.random.default_rng(1)
    X = np.sort(rng.uniform(0.0, 1.0, 60))[:, None]
    t = np.sin(2 * np.pi * X[:, 0]) + 0.2 * rng.standard_normal(60)
    return RBF(5.0)(X, X), t


def test_libsvms_float32_cache_is_not_a_failed_answer() -> None:
    """LIBSVM caches its kernel rows as float32: on this plain 60-point epsilon-SVR (C = 10) its gradients
    carry 1e-6 of the output scale of rounding and its answer fails (7.65) by 1.1e-6 at the matched 1e-6.
    The same Gram matrix rounded to float32 beforehand (no rounding left in the cache) is certified at 2e-9:
    the failure is the cache's resolution, not a wrong answer, so the answer is "inaccurate" with a
    ConvergenceWarning that says so (it was a SolverError, as if LIBSVM had failed)."""
    from sparsekernel.errors import ConvergenceWarning
    from sparsekernel.formulations import EpsilonSVR
    from sparsekernel.kernels import Precomputed

    K, t = _sine_svr_gram()
    exact = EpsilonSVR(K.astype(np.float32).astype(np.float64), t, Precomputed(), C=10.0, epsilon=0.1)
    assert exact.solve("libsvm").status == "optimal"
    m = EpsilonSVR(K, t, Precomputed(), C=10.0, epsilon=0.1)
    with pytest.warns(ConvergenceWarning, match="float32"):
        solution = m.solve("libsvm")
    assert solution.status == "inaccurate" and not solution.report.ok
    reference = m.solve("qp-clarabel")
    assert solution.dual_objective == pytest.approx(reference.dual_objective, rel=1e-7)


@pytest.mark.parametrize("machine", ["one-class", "svdd"])
@pytest.mark.parametrize("scale", [1e-4, 1.0, 1e4])
def test_an_intercept_that_disagrees_with_rho_or_R2_fails_the_certificate(machine: str, scale: float) -> None:
    """The one-class conditions read rho (SVDD's R^2) and the decision function reads b: a Solution
    whose b was shifted by 0.1 of the output scale (its predictions moved by that much) passed
    every row on the old code; the row b = -rho (b = R^2 - a^T K a) now fails, at every scale of X."""
    from dataclasses import replace

    from sparsekernel.formulations import SVDD

    X = np.random.default_rng(5).normal(size=(25, 2)) * scale
    m = OneClassSVM(X, RBF(1.0 / scale**2), nu=0.4) if machine == "one-class" else SVDD(X, RBF(1.0 / scale**2), nu=0.4)
    solution = m.solve("clarabel")
    assert check(m, solution).ok
    shifted = replace(solution, b=solution.b + 0.1 * m.output_scale)
    assert np.allclose(shifted.decision_function(X) - solution.decision_function(X), 0.1 * m.output_scale)
    report = check(m, shifted)
    assert not report.ok
    assert [row.condition.split(" (")[0] for row in report.failed()] == [
        "b = -rho" if machine == "one-class" else "b = R^2 - a^T K a"]


@pytest.mark.parametrize("change", ["coef = a", "a support vector left out"])
def test_a_solution_whose_coef_or_support_disagree_with_its_multipliers_fails(change: str) -> None:
    """The conditions read the multipliers, Solution.decision_function reads coef on the support. A
    hand-built soft-margin Solution with coef = a (the labels forgotten) or one support vector left out
    moved y(x_n) by up to 1.6 (0.7) of the margin, and passed every row on the old code; the row y(x) now
    fails, and the solver's own answers still pass it."""
    from dataclasses import replace

    rng = np.random.default_rng(0)
    X = rng.normal(size=(25, 2))
    t = np.where(X[:, 0] > 0, 1.0, -1.0)
    m = SoftMarginSVC(X, t, RBF(1.0), C=1.0)
    solution = m.solve("clarabel")
    assert check(m, solution).ok and solution.report.ok
    if change == "coef = a":
        wrong = replace(solution, coef=solution.a)
    else:
        kept = solution.support[1:]
        wrong = replace(solution, support=kept, support_vectors=X[kept])
    assert np.max(np.abs(wrong.decision_function(X) - solution.decision_function(X))) > 0.5
    report = check(m, wrong)
    assert [row.tag for row in report.failed()] == ["y(x)"]


@pytest.mark.parametrize("weighting", ["class_weight", "sample_weight"])
def test_multipliers_past_a_box_far_below_the_largest_fail_the_certificate(weighting: str) -> None:
    # the box rows were relative to the largest box: with class weights 1e-6 and 1e6 (every optimal
    # multiplier below 2.2e-5) multipliers twice the optimal ones, 2e-6 in a box of 1e-6, were 1e-12 of
    # the scale 1e6 and passed (relative gap 7e-10); now 0.047 of the largest multiplier, and they fail
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    t = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    if weighting == "class_weight":
        m = SoftMarginSVC(X, t, RBF(0.5), C=1.0, class_weight={1: 1e-6, -1: 1e6})
    else:
        m = SoftMarginSVC(X, t, RBF(0.5), C=1.0, sample_weight=np.where(t > 0, 1e-6, 1e6))
    s = m.solve("libsvm", tol=1e-10)
    assert check(m, a=s.a).ok
    assert not check(m, a=2.0 * s.a).ok


@pytest.mark.parametrize("nu", [1e-6, 1e-3])
def test_nu_svc_at_a_tiny_nu_is_solved_and_certified_in_nus_own_units(nu: float) -> None:
    # the outputs' unit was the kernel's spread whatever nu, with outputs and rho nu times that: at
    # nu = 1e-3 the SMO stopped at its start (2 support vectors for 7; y(x) / rho 4.7 off LIBSVM's, signs
    # agreeing on 27 of 40 points) and was certified, and twice the optimal multipliers passed at 1e-6
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    t = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    m = NuSVC(X, t, RBF(0.5), nu=nu)
    reference = m.solve("libsvm", tol=1e-10)
    solution = m.solve("smo")
    assert solution.report.ok
    scaled = (solution.decision_function(X) / solution.rho, reference.decision_function(X) / reference.rho)
    assert np.max(np.abs(scaled[0] - scaled[1])) < 0.1
    assert check(m, a=reference.a).ok
    assert not check(m, a=2.0 * reference.a).ok


def test_user_multipliers_spanning_eight_decades_keep_the_support_their_outputs_need() -> None:
    # an epsilon-SVR at C = 1e8 (RBF, 40 points) whose multipliers run from 1e8 down to 1e-7: OSQP's
    # answer is certified, but the same multipliers given to check lost the 23 below 1e-5 of the largest
    # from the support, which moved y(x) by 2.7e-3 of the output scale, and failed
    from sparsekernel.formulations import EpsilonSVR

    rng = np.random.default_rng(0)
    rng.normal(size=(40, 2)), rng.normal(size=40)       # the draws before these in the audit that found it
    X = rng.uniform(-2, 2, size=(40, 1))
    t = np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=40)
    m = EpsilonSVR(X, t, RBF(1.0), C=1e8, epsilon=0.1)
    solution = m.solve("qp-osqp")
    assert solution.report.ok
    assert check(m, a=solution.a, a_hat=solution.a_hat).ok
    assert not check(m, a=1.01 * solution.a, a_hat=1.01 * solution.a_hat).ok
