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
from sparsekernel.solvers.rvm import AllPrunedWarning


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
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AllPrunedWarning)     # RVC on these labels keeps the bias alone
        est = Estimator(kernel=kernel).fit(X @ X.T, y)
    bad = rng.uniform(size=(10, 3))
    bad[0, 0] = np.nan
    with pytest.raises(ValidationError, match=r"X must contain only finite values; got NaN or inf at index \(0, 0\)"):
        est.predict(bad)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimators_nan_inf(Estimator.__name__, Estimator(kernel=kernel))


@pytest.mark.parametrize("max_iter", [2**63 - 1, 2**63, 2**70])
def test_a_max_iter_beyond_int64_is_a_cap_never_reached_not_an_overflow(max_iter: int) -> None:
    """max_iter is any positive integer: one beyond what the fast method's compiled steps count (int64) is a cap
    no fit reaches, as 10**6 is. RVR(max_iter=2**63 - 1) (or more) raised a bare 'OverflowError: int too big to
    convert' from the compiled steps, naming nothing, where RVC and MacKay's and EM's fits took it."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 2))
    y = X[:, 0] + 0.1 * rng.standard_normal(30)
    big, reference = RVR(max_iter=max_iter).fit(X, y), RVR(max_iter=10**6).fit(X, y)
    np.testing.assert_array_equal(big.predict(X), reference.predict(X))
    assert big.n_iter_ == reference.n_iter_ and big.report_.ok


@pytest.mark.parametrize("Estimator", [RVR, RVC])
def test_a_nan_in_a_sparse_x_of_another_width_is_named_as_a_nan(Estimator) -> None:
    """As for a dense X (above): a scipy.sparse X with a NaN and another width than the fit's is refused for its
    NaN, with its index, as the SVMs refuse it; it was refused for its width alone."""
    import scipy.sparse as sp

    X = np.random.default_rng(0).uniform(size=(20, 3))
    est = Estimator().fit(sp.csr_matrix(X), X[:, 0] > 0.5)
    bad = np.ones((4, 5))
    bad[1, 2] = np.nan
    with pytest.raises(ValidationError, match=r"X must contain only finite values; got NaN or inf at index \(1, 2\)"):
        est.predict(sp.csr_matrix(bad))


def test_a_multiclass_decision_function_is_finite_where_a_probability_rounds_to_zero(monkeypatch) -> None:
    """For K > 2 classes ``decision_function`` is log ``predict_proba``: taken as np.log of the probabilities it
    was -inf where one rounds to 0 (activations 800 apart, a confident class against another), where
    ``predict_log_proba`` forms it in logs and is finite. It is now that one, equal to the log of the
    probabilities wherever they are above 0."""
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    model = RVC(kernel="linear").fit(X, y)
    result = type(model.result_)
    mu = np.array([[0.0, 800.0, -800.0], [0.3, -0.2, 0.1]])
    var = np.full((2, 3), 1e-4)
    monkeypatch.setattr(result, "latent", lambda self, columns: (mu, var))
    scores, logs = model.decision_function(X[:2]), model.predict_log_proba(X[:2])
    assert np.all(np.isfinite(scores))
    np.testing.assert_array_equal(scores, logs)
    with np.errstate(divide="ignore"):
        proba = np.log(model.predict_proba(X[:2]))
    assert proba[0, 2] == -np.inf and scores[0, 2] < -1000.0
    np.testing.assert_allclose(scores[1], proba[1], rtol=1e-12)
