"""A second differential audit of the RVM (RVR, RVC and the solvers' three methods): one test per defect found."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from sparsekernel.estimators import RVC, RVR


@pytest.mark.parametrize("Estimator", [RVR, RVC])
def test_a_linear_kernel_ignores_gamma_scale_on_inputs_whose_variance_underflows(Estimator) -> None:
    """The linear kernel takes no gamma, but gamma='scale' (the default) was computed from X anyway: on X of
    scale 1e-155 (variance 6.8e-311, so 1 / (2 var X) overflows) the fit was refused as 'X must have a finite,
    non-negligible variance for gamma='scale'', while gamma=1.0 fitted the same data (the same answer)."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(20, 2))
    y = np.sin(X[:, 0]) if Estimator is RVR else (X[:, 0] > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        by_default = Estimator(kernel="linear").fit(X * 1e-155, y)
        by_gamma = Estimator(kernel="linear", gamma=1.0).fit(X * 1e-155, y)
    np.testing.assert_array_equal(by_default.predict(X * 1e-155), by_gamma.predict(X * 1e-155))


def test_a_precomputed_gram_matrix_of_large_entries_is_not_refused_for_gamma_scale() -> None:
    """A precomputed kernel ignores gamma too: a Gram matrix of entries 1e160 (finite, variance inf) was refused
    by SVR as 'X must have a finite, non-negligible variance for gamma='scale''; it fits as with gamma=1."""
    from sparsekernel.estimators import SVR

    rng = np.random.default_rng(5)
    X = rng.normal(size=(20, 2))
    K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1)) * 1e160
    y = np.sin(X[:, 0])
    np.testing.assert_array_equal(SVR(kernel="precomputed").fit(K, y).predict(K),
                                  SVR(kernel="precomputed", gamma=1.0).fit(K, y).predict(K))
