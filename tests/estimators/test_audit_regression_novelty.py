"""Audit of the regression and novelty estimators against scikit-learn's (LIBSVM) on data nobody tuned
to: each test is a disagreement that was found by comparing the fitted attributes, and fails on the code
before its fix."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn import svm

from sparsekernel.errors import ValidationError
from sparsekernel.estimators import SVR, NuSVR, OneClassSVM


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


def test_one_class_rbf_rows_at_a_huge_gamma_keep_k_of_x_and_x_equal_to_1() -> None:
    """gamma = 1e300: K = I, so every multiplier is nu N / N = 0.5 (scikit-learn's dual_coef_). The SMO's
    float64 rows formed the exponent as one product of sqrt(2 gamma) (X - mean), whose terms (1e300) cancel
    to -gamma ||x - x'||^2 with an error of 1e284: k(x_4, x_4) came out 0, a_4 went to its box (1), the
    others to 0.4643, and kkt_report_ passed on those rows while duality.check on the machine's Gram matrix
    failed (gap 8.9e-3 relative). Now the rows are exact (the answer is scikit-learn's), and the certificate,
    which takes the rounding bound of values summed from differences, certifies it without a warning (at tol
    1e-7: the one-class output scale is mean k = 1/15 = rho here, and the 1e-10 rounding of a kernel value is
    1.5e-9 of it, not far enough below tol 1e-8's relative 2.7e-9 to certify)."""
    import warnings

    from sparsekernel import duality

    X = np.random.default_rng(7).normal(size=(15, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = OneClassSVM(gamma=1e300, tol=1e-7).fit(X)
    assert ours.solution_.status == "optimal"
    theirs = svm.OneClassSVM(gamma=1e300, tol=1e-7).fit(X)
    np.testing.assert_allclose(ours.dual_coef_, theirs.dual_coef_, rtol=1e-8)
    np.testing.assert_allclose(ours.offset_, theirs.offset_, rtol=1e-8)
    np.testing.assert_allclose(ours.score_samples(X), theirs.score_samples(X), rtol=1e-8)
    check = duality.check(ours.machine_, ours.solution_)
    assert check.ok and ours.kkt_report_.ok == check.ok
