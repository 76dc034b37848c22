"""RVR and RVC audited as scikit-learn estimators and as stand-ins for sklearn-rvm's EMRVR and EMRVC (third
round): each test failed on the code before its fix."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.utils.estimator_checks import check_estimators_nan_inf

from sparsekernel.errors import ValidationError
from sparsekernel.estimators import RVC, RVR
from sparsekernel.kernels import Precomputed


@pytest.mark.parametrize("Estimator", [RVR, RVC])
@pytest.mark.parametrize("kernel", ["precomputed", Precomputed()], ids=["string", "object"])
def test_a_nan_in_a_precomputed_block_of_another_width_is_named_as_a_nan(Estimator, kernel) -> None:
    """A test block with a NaN and another width than the fit's Gram matrix: the NaN is named with its index,
    as for any X and as the SVMs do, before scikit-learn's width check ('X has 3 features, but RVR is
    expecting 10'), which made scikit-learn's check_estimators_nan_inf fail for RVR and RVC with a
    precomputed kernel (SVC and SVR with one pass it)."""
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(10, 3))
    y = np.arange(10) % 2
    est = Estimator(kernel=kernel).fit(X @ X.T, y)
    bad = rng.uniform(size=(10, 3))
    bad[0, 0] = np.nan
    with pytest.raises(ValidationError, match=r"X must contain only finite values; got NaN or inf at index \(0, 0\)"):
        est.predict(bad)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimators_nan_inf(Estimator.__name__, Estimator(kernel=kernel))
