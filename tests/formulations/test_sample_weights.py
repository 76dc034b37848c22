"""Per-sample weights on the nu machines and the one-class SVM, as LIBSVM (scikit-learn) uses them:
every method is certified, agrees with the LIBSVM twin given the same weights, an integer weight is a
repeated point, and unit weights are no weights."""

from __future__ import annotations

import numpy as np
import pytest

from sparsekernel import duality
from sparsekernel.datasets import ripley_mixture, sinusoid
from sparsekernel.formulations import NuSVC, NuSVR, OneClassSVM
from sparsekernel.kernels import RBF

KERNEL = RBF(2.0)


def _machine(name: str, X, t, weight, C: float = 20.0):
    if name == "NuSVC":
        return NuSVC(X, t, KERNEL, nu=0.3, sample_weight=weight)
    if name == "NuSVR":
        return NuSVR(X, t, KERNEL, C=C, nu=0.3, sample_weight=weight)
    return OneClassSVM(X, KERNEL, nu=0.3, sample_weight=weight)


def _data(name: str):
    if name == "NuSVR":
        return sinusoid(n=60, seed=0)
    X, t = ripley_mixture(seed=0)
    return X[:80], (t[:80] if name == "NuSVC" else None)


NAMES = ["NuSVC", "NuSVR", "OneClassSVM"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("method", ["smo", "clarabel", "primal-clarabel"])
def test_weighted_machines_are_certified_and_agree_with_libsvm(name: str, method: str) -> None:
    X, t = _data(name)
    weight = np.random.default_rng(0).uniform(0.2, 3.0, X.shape[0])
    machine = _machine(name, X, t, weight)
    sol = machine.solve(method, **({"tol": 1e-6} if method == "smo" else {}))
    assert duality.check(machine, sol).ok
    reference = machine.solve("libsvm", tol=1e-10)
    scale = max(1.0, float(np.ptp(reference.decision_function(X))))
    np.testing.assert_allclose(sol.decision_function(X), reference.decision_function(X), atol=1e-3 * scale)


@pytest.mark.parametrize("name", NAMES)
def test_an_integer_weight_is_a_repeated_point(name: str) -> None:
    X, t = _data(name)
    weight = np.ones(X.shape[0])
    weight[:5] = 2.0
    repeated = np.concatenate([np.arange(X.shape[0]), np.arange(5)])
    weighted = _machine(name, X, t, weight).solve("clarabel")
    # the same LIBSVM C (the notes' C / N) on the N + 5 points
    copies = _machine(name, X[repeated], None if t is None else t[repeated], None,
                      C=20.0 * repeated.shape[0] / X.shape[0]).solve("clarabel")
    np.testing.assert_allclose(weighted.decision_function(X), copies.decision_function(X), atol=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_unit_weights_are_no_weights(name: str) -> None:
    X, t = _data(name)
    plain = _machine(name, X, t, None)
    unit = _machine(name, X, t, np.ones(X.shape[0]))
    assert unit.libsvm_scale == pytest.approx(plain.libsvm_scale)
    np.testing.assert_allclose(unit.standard_qp().upper, plain.standard_qp().upper)
    np.testing.assert_allclose(unit.solve("smo").decision_function(X), plain.solve("smo").decision_function(X),
                               atol=1e-12)


def test_the_nu_svc_bound_counts_the_classes_weights() -> None:
    X, t = _data("NuSVC")
    weight = np.where(t > 0, 3.0, 1.0)
    machine = NuSVC(X, t, KERNEL, nu=0.3, sample_weight=weight)
    expected = 2.0 * min(weight[t > 0].sum(), weight[t < 0].sum()) / weight.sum()
    assert machine.nu_max == pytest.approx(expected)


def _small_box_nu_svr(N: int, seed: int, C: float, nu: float):
    """N points with weights spanning 1e-3..1: at these C and nu the tube closes (epsilon = 0), and OSQP's
    multipliers lie off their active bounds, either side, by up to its primal residual in boxes down to
    1e-3 of the largest (LIBSVM's C is the notes' C / N)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, 2))
    t = np.sin(X[:, 0]) + 0.1 * rng.normal(size=N)
    weight = 10 ** rng.uniform(-3, 0, size=N)
    return NuSVR(X, t, RBF(gamma=0.5), C=C * N, nu=nu, sample_weight=weight), X, t, weight


# (N, seed, LIBSVM's C, nu): a_hat_n 7.7e-8 inside its lower bound in a box of 6e-3 where the answer passes
# other bounds by 7.3e-7; a_hat_n 3.5e-6 inside their upper bounds where none passes by more than 3.3e-6
SMALL_BOXES = [(40, 3, 2.5, 0.5), (50, 5, 1.0, 0.8)]


@pytest.mark.parametrize("case", SMALL_BOXES)
@pytest.mark.parametrize("method", ["qp-osqp", "osqp"])
def test_osqp_on_a_weighted_nu_svr_with_small_boxes_is_certified_and_agrees_with_libsvm(method: str, case) -> None:
    # multipliers that close to their bounds were taken as free: their gradients set b and epsilon
    # (Result 7.10), and the certificate refused answers as accurate as OSQP's (SolverError)
    from sklearn.svm import NuSVR as LibsvmNuSVR

    N, seed, C, nu = case
    machine, X, t, weight = _small_box_nu_svr(N, seed, C, nu)
    sol = machine.solve(method)
    assert sol.status == "optimal"
    assert duality.check(machine, sol, tol=1e-5).ok
    reference = LibsvmNuSVR(C=C, nu=nu, kernel="rbf", gamma=0.5, tol=1e-10).fit(X, t, sample_weight=weight)
    scale = machine.output_scale
    assert abs(sol.b - reference.intercept_[0]) < 1e-4 * scale
    np.testing.assert_allclose(sol.decision_function(X), reference.predict(X), atol=1e-4 * scale)
    clarabel = machine.solve("qp-clarabel")
    assert abs(sol.b - clarabel.b) < 1e-4 * scale and abs(sol.epsilon - clarabel.epsilon) < 1e-4 * scale
