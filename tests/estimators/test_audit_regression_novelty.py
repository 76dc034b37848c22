"""Audit of the regression and novelty estimators against scikit-learn's (LIBSVM) on data nobody tuned
to: each test is a disagreement that was found by comparing the fitted attributes, and fails on the code
before its fix."""

from __future__ import annotations

import numpy as np
from sklearn import svm

from sparsekernel.estimators import NuSVR


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
