"""gamma='scale' reads X's variance (``sparse.variance``): a sparse X's without cancellation, and a
variance that underflows is not taken for a constant X."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from sparsekernel.errors import ValidationError
from sparsekernel.estimators import RVR, SVC
from sparsekernel.sparse import variance


def _inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.uniform(-3.0, 3.0, (40, 2))
    return X, np.sin(X[:, 0])


@pytest.mark.parametrize("offset", [1e6, 1e8, 1e9])
def test_a_sparse_x_far_from_the_origin_has_its_dense_copys_variance(offset: float) -> None:
    """E[x^2] - mean^2 cancelled: a CSR copy of inputs about 1e8 had variance 4.0 where it is 3.13."""
    X, _ = _inputs()
    X = X + offset
    np.testing.assert_allclose(variance(sp.csr_matrix(X)), X.var(), rtol=1e-12)


@pytest.mark.filterwarnings("ignore::sparsekernel.errors.ConvergenceWarning")   # the SVC's sparse kernel rounding
@pytest.mark.parametrize("Estimator", [RVR, SVC])
def test_a_sparse_x_far_from_the_origin_gets_its_dense_copys_gamma(Estimator) -> None:
    X, t = _inputs()
    X = X + 1e8
    y = t if Estimator is RVR else (t > 0).astype(int)
    dense = Estimator().fit(X, y)
    stored = Estimator().fit(sp.csr_matrix(X), y)
    kernel = (lambda e: e.kernel_) if Estimator is RVR else (lambda e: e._kernel)     # the fitted kernels
    np.testing.assert_allclose(kernel(stored).gamma, kernel(dense).gamma, rtol=1e-12)
    np.testing.assert_allclose(kernel(dense).gamma, 1.0 / (2 * X.var()), rtol=1e-12)


def test_a_sparse_x_with_implicit_and_explicit_zeros_has_numpys_variance() -> None:
    A = sp.random(50, 30, density=0.1, random_state=0, format="csr")
    A.data[::7] = 0.0                                   # explicit zeros among the stored entries
    np.testing.assert_allclose(variance(A), A.toarray().var(), rtol=1e-12)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("scale", [1e-200, 1e-300])
def test_a_variance_that_underflows_is_refused_as_a_negligible_one(scale: float, sparse: bool) -> None:
    """Inputs of 1e-200 have a variance of 1e-400, 0 in floats: gamma='scale' took them for a constant X
    and used gamma = 1 (every kernel value 1, a model of no input) without a word, where inputs of 1e-160
    (variance 3e-320) were refused."""
    X, t = _inputs()
    X = sp.csr_matrix(X * scale) if sparse else X * scale
    with pytest.raises(ValidationError, match=r"X must have a finite, non-negligible variance for gamma='scale'.*"
                                              r"got variance 5e-324 or less \(it underflows\)"):
        RVR().fit(X, t)


@pytest.mark.parametrize("X", [np.ones((10, 2)), sp.csr_matrix(np.ones((10, 2))), sp.csr_matrix((10, 2))],
                         ids=["dense", "sparse-full", "sparse-empty"])
def test_a_constant_x_keeps_gamma_one(X) -> None:
    assert variance(X) == 0.0
    assert RVR().fit(X, np.arange(10.0)).kernel_.gamma == 1.0
