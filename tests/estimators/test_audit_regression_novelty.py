"""Audit of the regression and novelty estimators against scikit-learn's (LIBSVM) on data nobody tuned
to: each test is a disagreement that was found by comparing the fitted attributes, and fails on the code
before its fix."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn import svm

from sparsekernel.errors import ValidationError
from sparsekernel.estimators import SVR, NuSVR


def test_nu_svr_support_leaves_out_points_whose_two_multipliers_cancel() -> None:
    """A constant y: nu-SVR's tube shrinks to epsilon = 0 and the solve leaves a_n = a_hat_n = C on
    nu N / 2 points, whose coefficient a_n - a_hat_n is 0. LIBSVM counts a support vector where that
    coefficient is non-zero (svm_train: fabs(alpha) > 0), so scikit-learn's NuSVR has no support vector;
    ours reported the 5 points, dual_coef_ (1, 5) of zeros and n_support_ [5]."""
    X = np.random.default_rng(1).normal(size=(20, 2))
    y = np.full(20, 5.0)
    ours, theirs = NuSVR(tol=1e-8).fit(X, y), svm.NuSVR(tol=1e-8).fit(X, y)
    assert ours.support_.tolist() == theirs.support_.tolist() == []
    assert ours.n_support_.tolist() == theirs.n_support_.tolist() == [0]
    assert ours.dual_coef_.shape == theirs.dual_coef_.shape == (1, 0)
    assert ours.support_vectors_.shape == theirs.support_vectors_.shape == (0, 2)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=1e-12)
    np.testing.assert_allclose(ours.intercept_, theirs.intercept_, rtol=1e-12)


@pytest.mark.parametrize("cls", [SVR, NuSVR])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_a_target_that_is_not_finite_is_named_with_its_domain_and_index(cls, bad) -> None:
    """X's NaN was 'X must contain only finite values; got NaN or inf at index (14, 0)', y's only scikit-learn's
    'Input y contains NaN.' (no domain, no place): validate_data's check of y runs before ours."""
    X = np.random.default_rng(3).normal(size=(15, 2))
    y = X[:, 0].copy()
    y[9] = bad
    with pytest.raises(ValidationError, match=r"y must contain only finite values; got NaN or inf at index 9"):
        cls().fit(X, y)
