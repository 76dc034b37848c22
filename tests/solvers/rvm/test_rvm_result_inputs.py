"""The fitted RVM results' prediction methods name a wrong test design in words, not numpy's.

``predictive_distribution``, ``RVMClassification.latent`` / ``predict_proba`` and
``RVMPoisson.latent`` / ``rate`` / ``mode_rate`` take the test rows of the kept
columns (n_test, R); ``RVMRegression.predict`` takes the test rows of every
column of the training design. A full design, a single row or a design short
of a kept column raised numpy's matmul ValueError or an IndexError naming
neither the argument nor the shape it needs, and a NaN gave NaN predictions
without a word.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

from sparsekernel.errors import ValidationError
from sparsekernel.solvers.rvm import predictive_distribution, rvm_classification, rvm_poisson, rvm_regression


def _design() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.uniform(-3.0, 3.0, 40)
    return np.exp(-(x[:, None] - x[None, :]) ** 2), np.sin(x) + 0.1 * rng.standard_normal(40)


def _results() -> dict[str, object]:
    Phi, t = _design()
    counts = np.random.default_rng(1).poisson(np.exp(t))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {"regression": rvm_regression(Phi, t), "classification": rvm_classification(Phi, (t > 0).astype(int)),
                "poisson": rvm_poisson(Phi, counts)}


RESULTS = _results()
PREDICTIONS = {
    "regression": [lambda r, P: predictive_distribution(r, P)],
    "classification": [lambda r, P: r.latent(P), lambda r, P: r.predict_proba(P)],
    "poisson": [lambda r, P: r.latent(P), lambda r, P: r.rate(P), lambda r, P: r.mode_rate(P)],
}
CASES = [(kind, i) for kind, calls in PREDICTIONS.items() for i in range(len(calls))]


@pytest.mark.parametrize("kind, call", CASES)
@pytest.mark.parametrize("bad", ["full design", "one row", "one column short"])
def test_a_test_design_of_the_wrong_shape_is_named_with_the_shape_it_needs(kind: str, call: int, bad: str) -> None:
    result = RESULTS[kind]
    Phi, _ = _design()
    R = result.relevance.size
    given = {"full design": Phi, "one row": Phi[0, result.relevance],
             "one column short": Phi[:, result.relevance][:, :-1]}[bad]
    with pytest.raises(ValidationError, match=rf"Phi_relevant must be a 2-D array of shape \(n_test, {R}\).*"
                                              rf"got an array of shape {re.escape(str(given.shape))}"):
        PREDICTIONS[kind][call](result, given)


@pytest.mark.parametrize("kind, call", CASES)
def test_a_non_finite_test_entry_is_named_with_its_index(kind: str, call: int) -> None:
    result = RESULTS[kind]
    Phi, _ = _design()
    rows = Phi[:3][:, result.relevance].copy()
    rows[1, 0] = np.nan
    with pytest.raises(ValidationError, match=r"Phi_relevant must contain only finite values; got NaN or inf at "
                                              r"index \(1, 0\)"):
        PREDICTIONS[kind][call](result, rows)


@pytest.mark.parametrize("kind, call", CASES)
def test_the_kept_columns_predict_as_before(kind: str, call: int) -> None:
    result = RESULTS[kind]
    Phi, _ = _design()
    rows = Phi[:5][:, result.relevance]
    out = PREDICTIONS[kind][call](result, rows)
    first = np.asarray(out[0] if isinstance(out, tuple) else out)
    assert np.all(np.isfinite(first))
    if call == 0:                                        # the mean of the latent output: phi^T w
        kept = np.column_stack([np.ones(5), rows]) if result.bias_used else rows
        np.testing.assert_allclose(first, kept @ result.mean, rtol=1e-12, atol=1e-12)


def test_regression_predict_names_phi_and_the_columns_it_needs() -> None:
    result = RESULTS["regression"]
    Phi, _ = _design()
    need = int(result.relevance.max()) + 1
    with pytest.raises(ValidationError, match=rf"Phi must be the test rows of every column of the training Phi "
                                              rf"\(at least {need}: column {need - 1} is kept\); got an array of "
                                              rf"shape \(40, {need - 1}\)"):
        result.predict(Phi[:, : need - 1])
    np.testing.assert_allclose(result.predict(Phi[:, :need]), result.predict(Phi), rtol=0, atol=0)


@pytest.mark.parametrize("mu, var, match", [
    (np.zeros(3), np.zeros(3), r"mu must be a 2-D array \(n, O\).*got an array of shape \(3,\)"),
    (np.zeros((3, 2)), np.zeros((3, 3)), r"var must be an array of mu's shape \(3, 2\).*got an array of shape \(3, 3\)"),
    (np.zeros((3, 2)), np.array([[0.0, 0.0], [0.0, -1.0], [0.0, 0.0]]), r"var must be variances >= 0; got -1\.0 at "
                                                                         r"index \(1, 1\)"),
    (np.zeros((2, 1)), np.array([[0.0], [np.nan]]), r"var must be variances >= 0; got nan at index \(1, 0\)"),
])
def test_moderated_probabilities_name_a_wrong_argument(mu, var, match: str) -> None:
    """A 1-D mu raised IndexError ('tuple index out of range'), a var of another shape numpy's broadcast
    ValueError, and a negative or NaN variance was moderated as a variance (NaN probabilities below -8/pi)
    without a word."""
    from sparsekernel.solvers.rvm import moderated_probabilities

    with pytest.raises(ValidationError, match=match):
        moderated_probabilities(mu, var)


def test_moderated_probabilities_of_valid_activations_are_unchanged() -> None:
    from scipy.special import expit

    from sparsekernel.solvers.rvm import moderated_probabilities

    mu, var = np.array([[0.0], [1.0], [-2.0]]), np.array([[0.0], [1.0], [4.0]])
    p1 = expit(mu[:, 0] / np.sqrt(1.0 + np.pi * var[:, 0] / 8.0))       # (4.153)-(4.155)
    np.testing.assert_allclose(moderated_probabilities(mu, var), np.column_stack([1.0 - p1, p1]), rtol=1e-15)


@pytest.mark.parametrize("method", ["mackay", "em"])
def test_a_laplace_fit_started_at_a_huge_alpha_warns_nothing_of_numpys(method: str) -> None:
    """MacKay's (7.116) at alpha_init = 1e300 is 0/0 where gamma_i = 1 - alpha_i Sigma_ii and w_i* are 0: the
    pair is pruned (as w_i* = 0 alone prunes it), but numpy's 'invalid value encountered in divide'
    RuntimeWarning reached the caller of RVC.fit."""
    from sparsekernel.estimators import RVC

    rng = np.random.default_rng(0)
    X = rng.uniform(-3.0, 3.0, (40, 1))
    y = (np.sin(X[:, 0]) + 0.1 * rng.standard_normal(40) > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)          # the AOT build note
        warnings.simplefilter("error", RuntimeWarning)
        model = RVC(method=method, alpha_init=1e300).fit(X, y)
    assert model.report_.ok
    assert np.mean(model.predict(X) == y) > 0.9
