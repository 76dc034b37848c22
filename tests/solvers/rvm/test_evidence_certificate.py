"""The RVM's certificate (``solvers.rvm.certificate.evidence_report``): a maximum of the evidence
over every basis function, recomputed from the returned alpha and beta alone."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest
from sklearn.datasets import make_friedman1

from sparsekernel.kernels import RBF
from sparsekernel.solvers.rvm import evidence_report, rvm_regression


def _friedman(gamma: float, n: int = 150, seed: int = 0):
    X, y = make_friedman1(n_samples=n, noise=1.0, random_state=seed)
    return RBF(gamma)(X, X), y


@pytest.mark.parametrize("gamma", [1e-3, 0.1, 1.0])
@pytest.mark.parametrize("method", ["fast", "mackay", "em"])
def test_every_fit_is_certified_a_maximum(gamma: float, method: str) -> None:
    Phi, y = _friedman(gamma)
    result = rvm_regression(Phi, y, method)
    report = evidence_report(Phi, y, result)
    assert report.ok, str(report)
    assert report.largest_gain <= 1e-2
    assert json.loads(report.to_json())["ok"] is True


def test_the_evidence_is_recomputed_by_7_85_with_c_formed() -> None:
    """(7.85) with C = beta^-1 I + Phi A^-1 Phi^T formed explicitly, against the report's Woodbury form."""
    Phi, y = _friedman(0.1, n=60)
    result = rvm_regression(Phi, y, "fast")
    kept = np.column_stack([np.ones(60), Phi[:, result.relevance]]) if result.bias_used else Phi[:, result.relevance]
    C = np.eye(60) / result.beta + kept @ np.diag(1.0 / result.alpha) @ kept.T
    sign, logdet = np.linalg.slogdet(C)
    direct = -0.5 * (60 * math.log(2 * math.pi) + logdet + y @ np.linalg.solve(C, y))
    report = evidence_report(Phi, y, result)
    assert sign > 0 and report.log_evidence == pytest.approx(direct, abs=1e-8)
    # the gain of adding an excluded function, from S and Q with C formed
    Cinv = np.linalg.inv(C)
    excluded = np.setdiff1d(np.arange(60), result.relevance)
    S = np.einsum("ni,nm,mi->i", Phi[:, excluded], Cinv, Phi[:, excluded])
    Q = Phi[:, excluded].T @ Cinv @ y
    gains = np.where(Q ** 2 > S, 0.5 * ((Q ** 2 - S) / S + np.log(S / np.maximum(Q ** 2, 1e-300))), 0.0)
    row = next(r for r in report.rows if r.tag == "(7.100)")
    assert row.gain == pytest.approx(float(np.max(gains, initial=0.0)), abs=1e-9)


def test_a_result_that_is_not_a_maximum_fails() -> None:
    Phi, y = _friedman(0.1)
    result = rvm_regression(Phi, y, "fast")
    assert not evidence_report(Phi, y, replace(result, alpha=result.alpha * 5)).ok       # (7.101)
    assert not evidence_report(Phi, y, replace(result, beta=result.beta * 3)).ok         # (7.88)
    offset = int(result.bias_used)
    k = int(np.argmax(result.mean[offset:] ** 2))         # drop the strongest function: adding it back gains
    keep = np.delete(np.arange(len(result.relevance)), k)
    dropped = replace(result, relevance=result.relevance[keep],
                      alpha=np.concatenate([result.alpha[:offset], result.alpha[offset:][keep]]))
    report = evidence_report(Phi, y, dropped)
    add = next(r for r in report.rows if r.tag == "(7.100)")
    assert not add.ok and add.where == int(result.relevance[k])


def test_the_estimator_keeps_its_certificate() -> None:
    from sparsekernel.estimators import RVR

    X, y = make_friedman1(n_samples=200, noise=1.0, random_state=3)
    est = RVR().fit(X, y)
    assert est.report_.ok, str(est.report_)
    assert "PASS" in str(est.report_)


@pytest.mark.parametrize("log_alpha", [0.0, -6.0, -10.0])
def test_the_rounding_estimate_bounds_the_spread_of_7_85_under_perturbations(log_alpha: float) -> None:
    """``evidence_rounding``: (7.85) with C formed, recomputed on designs perturbed by eps relative
    (nearly collinear columns of a very wide kernel), spreads by less than the estimate when the weights
    are huge, and both are negligible when they are not."""
    from sparsekernel.solvers.rvm.posterior import evidence_rounding, log_evidence_direct

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, size=(120, 2))
    Phi = RBF(0.05)(X)[:, :30]
    t = np.sin(3 * X[:, 0]) + 0.1 * rng.normal(size=120)
    alpha, beta = np.full(30, 10.0**log_alpha), 100.0
    values = [log_evidence_direct(Phi * (1 + np.finfo(float).eps * rng.standard_normal(Phi.shape)), t, alpha, beta)
              for _ in range(8)]
    estimate = evidence_rounding(Phi, alpha, beta)
    if log_alpha == 0.0:                     # well conditioned: nothing to speak of either way
        assert estimate < 1e-6 and np.ptp(values) < 1e-6
    else:
        assert estimate > np.ptp(values) > 1e-6


def test_a_fit_whose_evidence_has_few_digits_left_says_so() -> None:
    """friedman2 with raw inputs at gamma "scale" (issue 16's matrix): the weak-prior maximum is reached
    at cond(C) ~ 1e15; the report gives the rounding estimate, its table says that the values are known
    to about that, the JSON carries it, and the result is not passed at tol."""
    from sklearn.datasets import make_friedman2

    X, t = make_friedman2(n_samples=250, noise=125.0, random_state=0)
    K = RBF(1.0 / (X.shape[1] * X.var()))(X)
    report = evidence_report(K, t, rvm_regression(K, t))
    assert report.rounding > 1.0
    assert "rounding error at this conditioning" in str(report)
    assert json.loads(report.to_json())["rounding"] == pytest.approx(report.rounding)
    # the recomputed and the reported evidence differ by more than tol: not passed, but said to be
    # within the rounding (the reported value comes from other units: another rounding)
    assert not report.ok and report.agrees_within_rounding
    assert "a maximum only to within the rounding" in str(report) or not all(r.ok for r in report.rows)
