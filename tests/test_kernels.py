"""Kernels against scikit-learn's pairwise functions, finite feature maps, the empirical map."""

from __future__ import annotations

import numpy as np
import pytest

from sparsekernel.errors import ValidationError
from sparsekernel.kernels import RBF, Linear, Polynomial, Precomputed, Sigmoid, feature_map, make_kernel

rng = np.random.default_rng(0)
X = rng.normal(size=(40, 3))
Y = rng.normal(size=(7, 3))


@pytest.mark.parametrize(
    "kernel, reference",
    [
        (Linear(), lambda A, B: A @ B.T),
        (Polynomial(3, 0.5, 1.0), lambda A, B: (0.5 * A @ B.T + 1.0) ** 3),
        (RBF(0.7), lambda A, B: np.exp(-0.7 * ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))),
        (Sigmoid(0.2, -0.5), lambda A, B: np.tanh(0.2 * A @ B.T - 0.5)),
    ],
)
def test_kernel_values_and_diagonal(kernel, reference) -> None:
    np.testing.assert_allclose(kernel(X, Y), reference(X, Y), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(kernel(X), reference(X, X), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(kernel.diag(X), np.diag(reference(X, X)), rtol=1e-12, atol=1e-12)


def test_features_7_42_for_degree_two() -> None:
    """phi(x) = (1, sqrt2 x1, sqrt2 x2, x1^2, sqrt2 x1 x2, x2^2) and k = (1 + x.z)^2."""
    k = Polynomial(degree=2, gamma=1.0, coef0=1.0)
    x = np.array([[0.3, -1.2], [2.0, 0.5]])
    r2 = np.sqrt(2.0)
    expected = np.array([[1, r2 * a, r2 * b, a * a, r2 * a * b, b * b] for a, b in x])
    np.testing.assert_allclose(k.features(x), expected, rtol=1e-14)
    np.testing.assert_allclose(k.features(x) @ k.features(x).T, (1 + x @ x.T) ** 2, rtol=1e-13)
    # the image of the plane is a 2-D surface in R^6: phi_5^2 = 2 phi_4 phi_6
    F = k.features(rng.normal(size=(10, 2)))
    np.testing.assert_allclose(F[:, 4] ** 2, 2 * F[:, 3] * F[:, 5], rtol=1e-12)


@pytest.mark.parametrize("kernel", [Linear(), Polynomial(3, 0.4, 2.0), Polynomial(4, 1.0, 0.0), Polynomial(1, 2.0, 0.5)])
def test_finite_feature_maps_reproduce_the_kernel(kernel) -> None:
    F, G = kernel.features(X), kernel.features(Y)
    assert F.shape[1] == kernel.feature_dimension(X.shape[1])
    np.testing.assert_allclose(F @ G.T, kernel(X, Y), rtol=1e-10, atol=1e-10)


def test_features_never_modify_their_input() -> None:
    A = X.copy()
    A.flags.writeable = False
    Linear().features(A)[0, 0] = 99.0  # a copy, not a view
    np.testing.assert_array_equal(A, X)


@pytest.mark.parametrize("method", ["eigh", "cholesky"])
@pytest.mark.parametrize("kernel", [RBF(0.5), Linear(), Polynomial(2, 1.0, 1.0)])
def test_empirical_feature_map(method: str, kernel) -> None:
    K = kernel(X)
    fm = feature_map(K, tol=1e-12, method=method)
    np.testing.assert_allclose(fm.L @ fm.L.T, K, atol=1e-9 * np.abs(K).max())
    np.testing.assert_allclose(fm.transform(K), fm.L, atol=1e-8 * np.abs(fm.L).max())
    assert fm.min_eigenvalue == pytest.approx(np.linalg.eigvalsh(K)[0], abs=1e-9 * np.abs(K).max())
    if isinstance(kernel, Linear):
        assert fm.rank == 3
    # expansion: w^T phi(x) = sum_n c_n k(x, x_n) on new points, for w in the span of the data
    w = fm.L.T @ rng.normal(size=X.shape[0])
    c = fm.expansion(w)
    np.testing.assert_allclose(fm.transform(kernel(Y, X)) @ w, kernel(Y, X) @ c, rtol=1e-6, atol=1e-8)


def test_feature_map_reports_an_indefinite_kernel_as_data() -> None:
    K = Sigmoid(gamma=1.0, coef0=-1.0)(X)
    fm = feature_map(K)
    assert fm.min_eigenvalue < -1e-3
    assert fm.min_eigenvalue == pytest.approx(np.linalg.eigvalsh(K)[0], rel=1e-10)


def test_precomputed_kernel_returns_the_given_matrix() -> None:
    K = RBF(0.5)(X)
    k = Precomputed()
    assert k(K) is not None
    np.testing.assert_array_equal(k(K), K)
    np.testing.assert_array_equal(k(K[:5]), K[:5])
    np.testing.assert_array_equal(k.diag(K), np.diag(K))
    with pytest.raises(ValidationError, match="square Gram matrix"):
        k.diag(K[:5])


def test_make_kernel_from_scikit_learn_arguments() -> None:
    assert make_kernel("rbf", gamma=0.3) == RBF(0.3)
    assert make_kernel("poly", gamma=0.5, degree=2, coef0=1.0) == Polynomial(2, 0.5, 1.0)
    assert make_kernel("rbf", n_features=4, X_var=2.0) == RBF(1 / 8)
    with pytest.raises(ValidationError, match="kernel must be one of"):
        make_kernel("cosine")


@pytest.mark.parametrize(
    "build, name",
    [
        (lambda: RBF(0.0), "gamma"),
        (lambda: RBF(-1.0), "gamma"),
        (lambda: RBF(float("nan")), "gamma"),
        (lambda: Polynomial(degree=0), "degree"),
        (lambda: Polynomial(degree=2.5), "degree"),
        (lambda: Sigmoid(gamma=0.0), "gamma"),
        (lambda: Polynomial(coef0=float("inf")), "coef0"),
    ],
)
def test_bad_kernel_parameters_name_the_argument(build, name: str) -> None:
    with pytest.raises(ValidationError, match=rf"^{name} must be .*; got"):
        build()


@pytest.mark.parametrize("value", ["x", None, 1j])
def test_a_callable_kernel_returning_no_real_numbers_is_named(value) -> None:
    """k(X, Y) filled with text, None or complex numbers: numpy's bare ValueError ("could not convert string
    to float") or TypeError escaped from the conversion, or complex values were cut to their real part."""
    from sparsekernel.errors import ValidationError
    from sparsekernel.kernels import make_kernel

    kernel = make_kernel(lambda A, B: np.full((len(A), len(B)), value, dtype=object))
    with pytest.raises(ValidationError, match=r"^kernel\(X, Y\) must be an array of real numbers; got "):
        kernel(np.ones((3, 2)), np.ones((4, 2)))


KERNELS_OF_X = [Linear(), RBF(0.5), Polynomial(2), Sigmoid(0.1, 0.0)]


@pytest.mark.parametrize("kernel", KERNELS_OF_X, ids=repr)
@pytest.mark.parametrize("bad, words", [
    (np.array([[np.inf, 0.0]]), r"^X must contain only finite values"),
    (np.array([[np.nan, 0.0]]), r"^X must contain only finite values"),
    (np.array([["a", "b"]]), r"^X must be a 2-D array of real numbers; got an array of dtype <U1 holding 'a'"),
    (np.array([1.0, 2.0]), r"^X must be a 2-D array of shape \(n_samples, n_features\); got shape \(2,\)"),
], ids=["inf", "nan", "text", "one-row-1d"])
def test_every_kernel_names_bad_rows_alike(kernel, bad, words) -> None:
    """Before, the same input met four behaviours: Linear returned nan and inf values, RBF and Polynomial
    raised scikit-learn's ValueError, a 1-D row was two points to RBF's diag and an einsum error to the
    others'. Now one ValidationError naming X, from the kernel, its diagonal and (where it has one) its
    explicit features."""
    X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0]])
    calls = [lambda: kernel(bad, X), lambda: kernel.diag(bad)]
    if kernel.has_features:
        calls.append(lambda: kernel.features(bad))
    for call in calls:
        with pytest.raises(ValidationError, match=words):
            call()


@pytest.mark.parametrize("kernel", KERNELS_OF_X, ids=repr)
def test_every_kernel_gives_an_empty_block_for_no_rows(kernel) -> None:
    X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0]])
    assert kernel(X[:0], X).shape == (0, 3) and kernel(X, X[:0]).shape == (3, 0)
    assert kernel.diag(X[:0]).shape == (0,)


@pytest.mark.parametrize("offset", [1e4, 1e6, 1e7])
def test_rbf_values_far_from_the_origin_keep_their_digits_and_every_solver_agrees(offset) -> None:
    """scikit-learn's rbf_kernel forms ||a - b||^2 as ||a||^2 + ||b||^2 - 2 a^T b, whose terms cancel at the size of
    ||x||^2: 40 points of unit spread about an offset of 1e6 (gamma 1) had a Gram matrix off by 7e-4, and Clarabel's
    and OSQP's solves of it were certified 'optimal' with a dual objective 4e-5 (relative) from the SMO's, whose rows
    centre the inputs; at 1e7 (off by 0.09) the cvxpy forms refused the kernel as not positive semidefinite. Now
    the kernel centres its inputs at the second argument's mean: the Gram matrix is within the inputs' own
    rounding (offset eps) of the exact one, and every solver's certified optimum is the SMO's to its tolerance."""
    import warnings

    from sparsekernel.formulations import SoftMarginSVC

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    t = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    Xo = X + offset
    exact = np.exp(-((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    shifted = Xo - offset                  # the inputs as the offset holds them (each rounded by eps * offset)
    held = np.exp(-((shifted[:, None, :] - shifted[None, :, :]) ** 2).sum(-1))
    K = RBF(1.0)(Xo)
    assert np.max(np.abs(K - held)) <= 1e-12 and np.max(np.abs(held - exact)) <= 100 * np.finfo(float).eps * offset
    np.testing.assert_allclose(RBF(1.0)(Xo[:5], Xo), K[:5], rtol=0, atol=1e-12)     # a block of rows alike
    machine = SoftMarginSVC(Xo, t, RBF(1.0), C=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        smo = machine.solve("smo", tol=1e-6)
        for method in ("clarabel", "qp-osqp"):
            other = machine.solve(method)
            assert other.status == smo.status == "optimal"
            assert other.dual_objective == pytest.approx(smo.dual_objective, rel=1e-6)


@pytest.mark.parametrize("offset", [1e4, 1e8])
@pytest.mark.parametrize("pattern", ["every entry stored", "some entries missing"])
def test_rbf_on_sparse_rows_far_from_the_origin_is_the_exact_kernel(offset: float, pattern: str) -> None:
    # ||x||^2 + ||x'||^2 - 2 x^T x' cancelled terms of the size of the offset: 0.72 off the dense kernel at 1e8
    import scipy.sparse as sp

    r = np.random.default_rng(3)
    A = r.normal(size=(60, 4)) + offset
    A[40:] = A[:20] + 0.3 * r.normal(size=(20, 4))          # near neighbours, k well above 0
    if pattern == "some entries missing":
        mask = r.random(size=(20, 4)) < 0.3
        A[:20][mask] = 0.0
        A[40:][mask] = 0.0                                   # the same pattern as their neighbours
    B = A[::7] + 0.1
    kernel = RBF(0.5)

    def exact(P, Q):
        return np.exp(-0.5 * ((P[:, None, :] - Q[None, :, :]) ** 2).sum(-1))

    As = sp.csr_matrix(A)
    assert exact(A, A)[np.triu_indices(60, 1)].max() > 0.5
    np.testing.assert_allclose(kernel(As), exact(A, A), rtol=0, atol=1e-12)
    np.testing.assert_allclose(kernel(As, sp.csr_matrix(B)), exact(A, B), rtol=0, atol=1e-12)
    np.testing.assert_allclose(kernel(As, B), exact(A, B), rtol=0, atol=1e-12)
    np.testing.assert_allclose(kernel(B, As), exact(B, A), rtol=0, atol=1e-12)
    if pattern == "every entry stored":
        np.testing.assert_allclose(kernel(As), kernel(A), rtol=0, atol=1e-12)
