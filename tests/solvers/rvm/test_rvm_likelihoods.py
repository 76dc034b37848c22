"""The RVM's likelihoods: one interface, one Algorithm 7.2, and the Poisson RVM.

Every expected value is computed independently here (dense N x N matrices,
numpy's solve of the Hessian, scikit-learn's PoissonRegressor), never copied
from the solver.
"""

from __future__ import annotations

import inspect
import math
import re
import pickle
import warnings

import numpy as np
import pytest
from scipy.special import expit
from sklearn.base import clone
from sklearn.linear_model import PoissonRegressor

from sparsekernel import datasets
from sparsekernel.errors import ConvergenceWarning, ValidationError
from sparsekernel.estimators.rvm import PoissonRVR
from sparsekernel.kernels import RBF
from sparsekernel.solvers.rvm import (
    Bernoulli,
    Gaussian,
    Likelihood,
    Poisson,
    Softmax,
    laplace,
    laplace_report,
    rvm_classification,
    rvm_poisson,
    rvm_regression,
    sequential,
)
from sparsekernel.solvers.rvm.design import DenseDesign
from sparsekernel.solvers.rvm import laplace_fit
from sparsekernel.solvers.rvm.posterior import log_evidence_direct

LIKELIHOODS = [Gaussian(2.0), Bernoulli(), Softmax(3), Poisson()]
N_COUNTS = 200


def counts(seed: int, offset: float, N: int = N_COUNTS):
    """Counts t_n ~ Poisson(exp(offset + sin(1.5 x_n))), x_n ~ U(-3, 3); the RBF width of gamma = "scale"."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, size=(N, 1))
    rate = np.exp(offset + np.sin(1.5 * X[:, 0]))
    return X, rng.poisson(rate), rate, RBF(1.0 / X.var())(X)


def lam(alpha, s, q):
    """lambda(alpha) of (7.97)."""
    return 0.5 * (math.log(alpha) - math.log(alpha + s) + q * q / (alpha + s))


def kept(result, Phi):
    """The kept columns of Phi, bias first."""
    cols = [np.ones(Phi.shape[0])] if result.bias_used else []
    return np.column_stack(cols + [Phi[:, result.relevance]])


# ---------------------------------------------------------------------------
# one interface
# ---------------------------------------------------------------------------


def test_likelihoods_implement_one_interface():
    """Every likelihood is a Likelihood; the base is abstract; each class implements all its methods."""
    assert inspect.isabstract(Likelihood)
    with pytest.raises(TypeError):
        Likelihood()
    assert Likelihood.__abstractmethods__ == {"targets", "mean", "log_likelihood", "curvature"}
    for lik in LIKELIHOODS:
        assert isinstance(lik, Likelihood) and not inspect.isabstract(type(lik))


@pytest.mark.parametrize("lik", LIKELIHOODS, ids=lambda lik: type(lik).__name__)
def test_residual_and_curvature_are_the_derivatives_of_the_log_likelihood(lik):
    """d ln p / da = residual(t, y) and -d^2 ln p / da da^T = B, by central differences."""
    rng = np.random.default_rng(0)
    O = 3 if isinstance(lik, Softmax) else 1
    a = rng.normal(size=(1, O))
    raw = {Gaussian: rng.normal(size=1), Bernoulli: [1.0], Softmax: [2], Poisson: [3]}[type(lik)]
    T = lik.targets(raw)
    h = 1e-5
    grad = np.array([(lik.log_likelihood(a + h * e, T) - lik.log_likelihood(a - h * e, T)) / (2 * h)
                     for e in np.eye(O)[:, None, :]])
    hess = np.array([[(lik.log_likelihood(a + h * (ei + ej), T) - lik.log_likelihood(a + h * (ei - ej), T)
                       - lik.log_likelihood(a - h * (ei - ej), T) + lik.log_likelihood(a - h * (ei + ej), T))
                      / (4 * h * h) for ej in np.eye(O)[:, None, :]] for ei in np.eye(O)[:, None, :]])
    Y = lik.mean(a)
    np.testing.assert_allclose(lik.residual(T, Y)[0], grad, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(lik.curvature(Y)[0], -hess, rtol=1e-4, atol=1e-6)


def test_the_laplace_approximation_of_the_gaussian_is_exact():
    """With the Gaussian likelihood the IRLS mode is (7.82), Sigma^-1 = A + beta Phi^T Phi (7.83) and the
    Laplace evidence (7.114) equals (7.85) computed with the N x N matrix C."""
    rng = np.random.default_rng(1)
    Phi = rng.normal(size=(30, 5))
    t = Phi @ rng.normal(size=5) + 0.3 * rng.normal(size=30)
    alpha, beta = rng.uniform(0.5, 3.0, size=5), 4.0
    mode = laplace.find_mode(Gaussian(beta), Phi, np.arange(5), np.zeros(5, dtype=np.intp), t[:, None], alpha,
                             np.zeros(5), laplace.ModeOptions())
    H = np.diag(alpha) + beta * Phi.T @ Phi
    np.testing.assert_allclose(mode.w, np.linalg.solve(H, beta * Phi.T @ t), rtol=1e-9)
    np.testing.assert_allclose(mode.R.T @ mode.R, H, rtol=1e-12)
    assert laplace.laplace_log_evidence(mode, alpha) == pytest.approx(log_evidence_direct(Phi, t, alpha, beta),
                                                                     rel=1e-10)


# ---------------------------------------------------------------------------
# one Algorithm 7.2
# ---------------------------------------------------------------------------


def test_every_likelihood_is_fitted_by_the_one_sequential_routine(monkeypatch):
    """Gaussian, Bernoulli, softmax and Poisson fits all run ``sequential.converge`` (the regression's pool and
    compiled steps); the non-Gaussian ones on the whitened effective problem (7.117)-(7.119) at a Laplace
    mode (``_whiten``)."""
    runs, current = [], ["Gaussian"]
    converge, whiten, fast_laplace = sequential.converge, sequential._whiten, sequential.fast_laplace

    def spy_whiten(likelihood, *args):
        current[0] = type(likelihood).__name__
        return whiten(likelihood, *args)

    def spy_fast_laplace(*args, **kwargs):
        try:
            return fast_laplace(*args, **kwargs)
        finally:
            current[0] = "Gaussian"

    def spy_converge(run, basis, opts, sweeps=True):
        runs.append(current[0])
        return converge(run, basis, opts, sweeps)

    monkeypatch.setattr(sequential, "converge", spy_converge)
    monkeypatch.setattr(sequential, "_whiten", spy_whiten)
    monkeypatch.setattr(laplace_fit, "fast_laplace", spy_fast_laplace)
    X, t = datasets.sinusoid(n=30)
    rvm_regression(RBF(10.0)(X), t)
    Xc, tc = datasets.ripley_mixture(n=60, seed=2)
    rvm_classification(RBF(0.45)(Xc), (tc > 0).astype(int))
    rvm_classification(RBF(0.45)(Xc), np.arange(60) % 3)
    _, y, _, K = counts(0, 1.0, N=60)
    rvm_poisson(K, y)
    assert set(runs) == {"Gaussian", "Bernoulli", "Softmax", "Poisson"}


def test_relinearised_steps_with_the_gaussian_are_the_conjugate_steps():
    """Algorithm 7.2 through the whitened effective problem and a new mode after each block (``fast_laplace``)
    with the Gaussian at a fixed beta reaches the rank-one path's result (``fast_regression``): the same
    functions, the same alphas, and a last (7.114) equal to the last (7.85) (the Laplace approximation is
    exact there); its history rises."""
    rng = np.random.default_rng(2)
    X = rng.uniform(-2, 2, size=(60, 1))
    t = np.sin(2 * X[:, 0]) + 0.2 * rng.normal(size=60)
    K = RBF(1.0)(X)
    K = K / np.sqrt(np.mean(K**2, axis=0))
    beta = 25.0
    opts = sequential.FastOptions(1e-6, 1000, 1e9, 1e6, 60, 1e-2, restarts=0, update_beta=False)
    exact = sequential.fast_regression(DenseDesign(K), t, K.T @ t, np.sum(K**2, axis=0), np.arange(60), beta, opts)
    empty = (np.zeros(0, dtype=np.intp), np.zeros(0))  # both from the empty model
    relin, _ = sequential.fast_laplace(Gaussian(beta), K, t[:, None], opts, laplace.ModeOptions(), start=empty)
    assert exact.active.size >= 3 and relin.converged
    order, exact_order = np.argsort(relin.active), np.argsort(exact.active)
    np.testing.assert_array_equal(relin.active[order], exact.active[exact_order])
    np.testing.assert_allclose(relin.alpha[order], exact.alpha[exact_order], rtol=1e-6)
    assert relin.log_evidence[-1] == pytest.approx(exact.log_evidence[-1], rel=1e-9)
    assert np.all(np.diff(relin.log_evidence) > 0)


def test_bernoulli_mode_is_stationary_and_sigma_is_the_inverse_hessian():
    """At the returned alpha: Phi^T (t - sigma(Phi w*)) = A w* (7.110), (7.112), and
    Sigma = (Phi^T B Phi + A)^-1 (7.113) by numpy's solve of the Hessian."""
    X, t = datasets.ripley_mixture(n=120, seed=3)
    K = RBF(0.45)(X)
    labels = (t > 0).astype(float)
    r = rvm_classification(K, labels)
    Phi, w, alpha = kept(r, K), r.mean[:, 0], r.alpha[:, 0]
    y = expit(Phi @ w)
    residual = Phi.T @ (labels - y) - alpha * w
    assert np.linalg.norm(residual) <= 1e-8 * np.linalg.norm(alpha * w)
    H = Phi.T @ ((y * (1 - y))[:, None] * Phi) + np.diag(alpha)
    np.testing.assert_allclose(r.covariance, np.linalg.solve(H, np.eye(H.shape[0])), rtol=1e-8, atol=1e-12)


# ---------------------------------------------------------------------------
# the Poisson RVM
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("offset", [0.0, 1.5, 3.0])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_poisson_mode_is_stationary_and_sigma_is_the_inverse_hessian(seed, offset):
    """Phi^T (t - exp(Phi w)) = A w at the returned alpha, and Sigma = (Phi^T diag(exp(Phi w)) Phi + A)^-1."""
    _, y, _, K = counts(seed, offset)
    r = rvm_poisson(K, y)
    Phi = kept(r, K)
    mu = np.exp(Phi @ r.mean)
    Aw = r.alpha * r.mean
    assert np.linalg.norm(Phi.T @ (y - mu) - Aw) <= 1e-7 * np.linalg.norm(Aw)
    H = Phi.T @ (mu[:, None] * Phi) + np.diag(r.alpha)
    np.testing.assert_allclose(r.covariance, np.linalg.solve(H, np.eye(H.shape[0])), rtol=1e-8, atol=1e-12)
    assert r.converged and np.all(np.diff(r.log_evidence) >= -1e-8 * np.abs(r.log_evidence[1:]))


@pytest.mark.parametrize("offset", [0.0, 1.5, 3.0])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_poisson_rate_beats_poisson_regressor_with_far_fewer_functions(seed, offset):
    """Mean absolute error of the rate against the true rate: below scikit-learn's PoissonRegressor (default
    regularisation) on the same N kernel columns, with at most a tenth of them."""
    _, y, rate, K = counts(seed, offset)
    r = rvm_poisson(K, y)
    ours = np.mean(np.abs(r.rate(K[:, r.relevance]) - rate))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # lbfgs may stop at its own max_iter
        peer = PoissonRegressor().fit(K, y)
    theirs = np.mean(np.abs(peer.predict(K) - rate))
    assert ours < theirs
    assert r.relevance.size + r.bias_used <= N_COUNTS // 10
    assert np.count_nonzero(peer.coef_) == N_COUNTS


def _large_counts(scale: float):
    """The issue's data: 40 points, counts of mean scale * e^(1/2) (about 500 at scale 300)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    for s in [1, 10, 30, 100, 300, 1000]:
        y = rng.poisson(s * np.exp(X[:, 0]))
        if s == scale:
            return X, y
    raise AssertionError(scale)


@pytest.mark.parametrize("scale", [300, 1000])
def test_poisson_fast_fits_large_counts_as_mackay_does(scale):
    """Counts of mean ~500 and ~1700: the fast method ended in scipy's "array must not contain infs or
    NaNs" (its mode search started from the effective problem's mean, where exp(Phi w) overflowed, and
    Newton could not begin). It now reaches the evidence (7.114) MacKay's re-estimation reaches, at a mode
    where the gradient (7.110) vanishes."""
    X, y = _large_counts(scale)
    K = RBF(0.5)(X, X)
    fast, mackay = rvm_poisson(K, y, "fast"), rvm_poisson(K, y, "mackay")
    assert fast.converged
    assert fast.log_evidence[-1] >= mackay.log_evidence[-1] - 0.1
    Phi = kept(fast, K)
    residual = Phi.T @ (y - np.exp(Phi @ fast.mean)) - fast.alpha * fast.mean      # (7.110)
    assert np.linalg.norm(residual) <= 1e-6 * np.linalg.norm(Phi.T @ y)


def test_poisson_fast_fits_constant_counts_of_a_billion():
    """Constant counts c: the rate is c (the Poisson maximum likelihood rate is the mean count)."""
    X, _ = _large_counts(300)
    model = PoissonRVR().fit(X, np.full(40, 1e9))
    np.testing.assert_allclose(model.predict(X), 1e9, rtol=1e-6)


def test_mode_search_from_a_start_where_exp_overflows_reaches_the_mode_from_zero():
    """find_mode from w0 with Phi w0 ~ 2000 (exp overflows) damps its start toward 0 and ends at the
    mode Newton finds from 0: the gradient (7.110) vanishes there."""
    X, y = _large_counts(300)
    K = RBF(0.5)(X, X)
    basis = np.arange(0, 40, 5)
    output = np.zeros(basis.size, dtype=np.intp)
    alpha = np.full(basis.size, 1e-2)
    T = y[:, None].astype(float)
    opts = laplace.ModeOptions()
    far = np.full(basis.size, 2000.0 / K[:, basis].sum(axis=1).min())
    with np.errstate(over="ignore"):
        assert np.isinf(np.exp(K[:, basis] @ far)).any()
    with warnings.catch_warnings():
        warnings.simplefilter("error")                   # no overflow warning either
        mode = laplace.find_mode(Poisson(), K, basis, output, T, alpha, far, opts)
    ref = laplace.find_mode(Poisson(), K, basis, output, T, alpha, np.zeros(basis.size), opts)
    gradient = K[:, basis].T @ (y - np.exp(K[:, basis] @ mode.w)) - alpha * mode.w
    assert mode.converged and np.linalg.norm(gradient) <= 1e-6 * np.linalg.norm(K[:, basis].T @ y)
    np.testing.assert_allclose(mode.w, ref.w, rtol=1e-6, atol=1e-8)


def test_poisson_fit_is_an_evidence_maximum_of_the_effective_problem():
    """With C = B^-1 + Phi A^-1 Phi^T (7.119) and t_hat (7.117) at the mode, dense: every kept alpha_i is
    (7.101) from s_i, q_i of C_-i (to the step's tolerance in lambda (7.97)), and no excluded function gains
    more than tol (q^2 > s only barely)."""
    _, y, _, K = counts(3, 1.0, N=120)
    tol = 1e-8
    r = rvm_poisson(K, y, tol=tol)
    Phi_all = np.column_stack([np.ones(K.shape[0]), K])
    idx = np.concatenate([[0] if r.bias_used else [], r.relevance + 1]).astype(int)
    Phi = Phi_all[:, idx]
    mu = np.exp(Phi @ r.mean)
    t_hat = Phi @ r.mean + (y - mu) / mu  # (7.117)

    def s_q(others, cols):  # (7.98)-(7.99) of the columns cols with C = B^-1 + Phi A^-1 Phi^T (7.119) over others
        C = np.diag(1 / mu) + (Phi[:, others] / r.alpha[others]) @ Phi[:, others].T
        Z = np.linalg.solve(C, np.column_stack([cols, t_hat]))
        return np.einsum("ne,ne->e", cols, Z[:, :-1]), cols.T @ Z[:, -1]

    for k, i in enumerate(idx):
        s, q = (float(v[0]) for v in s_q(idx != i, Phi_all[:, [i]]))  # C_-i
        best = s**2 / (q**2 - s)  # (7.101)
        assert r.alpha[k] == pytest.approx(best, rel=1e-3)
        assert lam(best, s, q) - lam(r.alpha[k], s, q) <= 10 * tol  # the step left would gain below tol
    excluded = np.setdiff1d(np.arange(Phi_all.shape[1]), idx)
    S, Q = s_q(np.ones(idx.size, dtype=bool), Phi_all[:, excluded])  # alpha_i = inf: s = S, q = Q
    x = Q**2 / S
    assert np.all((x <= 1) | (0.5 * (x - 1 - np.log(np.maximum(x, 1))) <= 10 * tol))  # Result 7.18(c)


def _dense_poisson_gains(r, y, K):
    """The gains of Result 7.18's moves at a Poisson fit, from C = B^-1 + Phi A^-1 Phi^T (7.119) formed densely
    at the fit's mode (the largest over the kept re-estimations (7.101) and deletions, and over the additions)."""
    Phi_all = np.column_stack([np.ones(K.shape[0]), K])
    idx = np.concatenate([[0] if r.bias_used else [], r.relevance + 1]).astype(int)
    Phi = Phi_all[:, idx]
    mu = np.exp(Phi @ r.mean)
    t_hat = Phi @ r.mean + (y - mu) / mu  # (7.117)

    def s_q(others, cols):
        C = np.diag(1 / mu) + (Phi[:, others] / r.alpha[others]) @ Phi[:, others].T  # (7.119)
        Z = np.linalg.solve(C, np.column_stack([cols, t_hat]))
        return np.einsum("ne,ne->e", cols, Z[:, :-1]), cols.T @ Z[:, -1]

    kept_gain = []
    for k, i in enumerate(idx):
        s, q = (float(v[0]) for v in s_q(idx != i, Phi_all[:, [i]]))  # C_-i
        best = lam(s**2 / (q**2 - s), s, q) if q**2 > s else 0.0  # (7.101); deleted, lambda -> 0
        kept_gain.append(best - lam(r.alpha[k], s, q))
    excluded = np.setdiff1d(np.arange(Phi_all.shape[1]), idx)
    S, Q = s_q(np.ones(idx.size, dtype=bool), Phi_all[:, excluded])
    x = Q**2 / S
    add = np.where(x > 1, 0.5 * (x - 1 - np.log(np.maximum(x, 1))), 0.0)  # Result 7.18(c)
    return max(kept_gain), float(add.max(initial=0.0))


@pytest.mark.parametrize("method", ["fast", "mackay", "em"])
@pytest.mark.parametrize("seed, width", [(3, 1.0), (5, 0.2), (6, 4.0)])
def test_poisson_report_is_the_dense_effective_problem_and_certifies_each_method(method, seed, width):
    """laplace_report on a Poisson fit (it refused one: classification only): its rows equal the gains of
    the effective problem formed densely (C of (7.119), t_hat of (7.117) at the mode), its recomputed (7.114)
    is the fit's, and every method's converged fit passes at the estimators' tolerance (10 tol)."""
    X, y, _, _ = counts(seed, 1.0, N=100)
    K = RBF(width / X.var())(X)  # "scale" times width
    r = rvm_poisson(K, y, method)
    report = laplace_report(K, y, r)
    kept_gain, add_gain = _dense_poisson_gains(r, y, K)
    gains = {row.tag: row.gain for row in report.rows}
    assert max(gains["(7.101)"], gains["(7.99)"]) == pytest.approx(max(kept_gain, 0.0), rel=1e-5, abs=1e-8)
    assert gains["(7.100)"] == pytest.approx(add_gain, rel=1e-5, abs=1e-8)
    assert report.log_evidence == pytest.approx(float(r.log_evidence[-1]), abs=1e-3)  # the mode found again
    assert r.converged and report.ok, str(report)


def test_poisson_report_fails_a_fit_moved_off_its_fixed_point():
    """A kept alpha multiplied by 100: the report re-finds the mode at that alpha and names the function
    whose re-estimation (7.101) would still gain; PoissonRVR warns where its converged fit fails (report_)."""
    from dataclasses import replace

    _, y, _, K = counts(3, 1.0, N=100)
    r = rvm_poisson(K, y, bias=False)
    alpha = np.array(r.alpha)
    alpha[0] *= 100.0
    report = laplace_report(K, y, replace(r, alpha=alpha))
    row = next(row for row in report.rows if row.tag == "(7.101)")
    assert not report.ok and row.gain > 0.1 and row.where == int(r.relevance[0]), str(report)
    model = PoissonRVR(kernel="precomputed").fit(K, y)
    assert model.report_.ok and model.report_.log_evidence == pytest.approx(model.log_evidence_[-1], abs=1e-3)


@pytest.mark.parametrize("t, words", [
    (lambda y: y + 0.5, r"^t must be non-negative integer counts; got \d+\.5 at index 0"),
    (lambda y: y[:-1], r"^t must be an array of 100 counts \(the rows of Phi\); got 'shape \(99,\)'"),
])
def test_poisson_report_names_counts_that_do_not_belong_to_the_fit(t, words):
    _, y, _, K = counts(3, 1.0, N=100)
    r = rvm_poisson(K, y)
    with pytest.raises(ValidationError, match=words):
        laplace_report(K, t(y.astype(float)), r)
    with pytest.raises(ValidationError, match=r"^result must be an RVMClassification or RVMPoisson"):
        laplace_report(K, y, rvm_regression(K, y.astype(float)))


@pytest.mark.parametrize("method", ["mackay", "em"])
def test_poisson_iterative_methods_reach_a_stationary_mode(method):
    _, y, rate, K = counts(4, 1.0, N=80)
    r = rvm_poisson(K, y, method, tol=1e-5, max_iter=5000)
    Phi = kept(r, K)
    Aw = r.alpha * r.mean
    assert np.linalg.norm(Phi.T @ (y - np.exp(Phi @ r.mean)) - Aw) <= 1e-7 * np.linalg.norm(Aw)
    assert np.mean(np.abs(r.rate(K[:, r.relevance]) - rate)) < 0.5 * np.mean(rate)


BEYOND = r" of at most 2\^53 = 9007199254740992 \(where a double still tells a count from the next\)"


@pytest.mark.parametrize("bad, shown, domain", [
    (-1, "-1.0", ""), (0.5, "0.5", ""), (np.nan, "nan", ""), (np.inf, "inf", ""),
    # above 2^53 every double is an integer, so wholeness says nothing: 1e300 was accepted and overflowed the
    # fit's sums (hundreds of numpy warnings), which then predicted rate 1
    (2.0**53 + 2, "9007199254740994.0", BEYOND), (1e300, "1e+300", BEYOND),
])
def test_bad_counts_name_the_argument_the_domain_and_the_value(bad, shown, domain):
    X, y, _, K = counts(0, 1.0, N=20)
    y = y.astype(float)
    y[7] = bad
    message = rf"must be non-negative integer counts{domain}; got {re.escape(shown)} at index 7$"
    with pytest.raises(ValidationError, match="^t " + message):
        rvm_poisson(K, y)
    with pytest.raises(ValidationError, match="^y " + message):
        PoissonRVR().fit(X, y)


def test_the_largest_count_is_accepted():
    from sparsekernel.solvers.rvm.poisson import MAX_COUNT, check_counts

    y = np.array([0.0, 3.0, 2.0**53])
    assert MAX_COUNT == 2.0**53 and check_counts(y)[2] == 2.0**53


def test_poisson_estimator_fits_predicts_clones_and_pickles():
    X, y, rate, _ = counts(5, 1.0, N=100)
    model = PoissonRVR()
    assert model.fit(X, y) is model
    assert model.predict(X).shape == (100,) and np.all(model.predict(X) > 0)
    assert np.mean(np.abs(model.predict(X) - rate)) < 0.25 * np.mean(rate)
    K = model.relevance_vectors_.size + int(model.bias_used_)
    assert model.alpha_.shape == model.mean_.shape == (K,) and model.covariance_.shape == (K, K)
    assert clone(model).get_params() == model.get_params()
    np.testing.assert_allclose(pickle.loads(pickle.dumps(model)).predict(X), model.predict(X))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("bias", [True, False])
def test_poisson_predicts_rates_near_zero_where_the_counts_are_zero(seed: int, bias: bool) -> None:
    """Counts 0 on half the plane, Poisson(3) on the other (zero-inflated data nobody tuned to): the
    evidence rises as the weights of the functions over the zeros run to -inf, and the Laplace posterior
    mean of the rate, whose variance is then the prior's, overflowed on those points (1e49 to inf, with
    the fit certified). The prediction, the rate at the posterior mode, is near 0 there and near 3 on the
    other half, and never further from the zeros than the posterior mean (which overflowed past 100 times
    the largest true rate at seed 0, what made the mode the prediction)."""
    rng = np.random.default_rng(seed)
    X, X_test = rng.normal(size=(200, 2)), rng.normal(size=(400, 2))
    y = rng.poisson(np.where(X[:, 0] > 0, 3.0, 0.0))
    model = PoissonRVR(bias=bias).fit(X, y)
    rate = model.predict(X_test)
    zeros, threes = X_test[:, 0] < -0.5, X_test[:, 0] > 0.5         # away from the step
    assert np.all(np.isfinite(rate)) and np.median(rate[zeros]) < 0.05 and np.mean(rate[zeros]) < 0.3
    assert abs(np.mean(rate[threes]) - 3.0) < 0.45
    with np.errstate(over="ignore"):
        mean_rate = model.result_.rate(model._relevant_columns(X_test))
    assert np.mean(mean_rate[zeros]) >= np.mean(rate[zeros])
    if seed == 0:
        assert np.max(mean_rate) > 100 * 3.0


def test_poisson_on_all_zero_counts_predicts_rates_near_zero() -> None:
    """y = 0 everywhere: the evidence has no finite maximum (it rises as alpha -> 0 and w -> -inf); the
    posterior mean's prediction was 1e241 on training points with bias=False. The mode's rate is near 0
    there; without a bias the rate is exp(0) = 1 (the prior's) far from the kept functions, so on the
    training points furthest from them it stays below 1 rather than near 0."""
    X = np.random.default_rng(0).normal(size=(60, 2))
    rate = PoissonRVR(bias=True).fit(X, np.zeros(60)).predict(X)
    assert np.all(rate >= 0) and np.max(rate) < 0.05
    rate = PoissonRVR(bias=False).fit(X, np.zeros(60)).predict(X)
    assert np.all(rate >= 0) and np.median(rate) < 0.01 and np.max(rate) < 0.5


@pytest.mark.parametrize("offset", [-1.0, 1.0, 3.0])
def test_poisson_mode_rate_is_as_accurate_as_the_posterior_mean_where_both_are_defined(offset: float) -> None:
    """On the sinusoidal counts (every count region positive) the rate at the mode and the Laplace mean
    are equally close to the true rate (mean absolute errors within 10% of each other; 3% measured), both
    within 30% of the mean rate (counts below 1 at offset -1 leave 25% of it)."""
    X, y, _, _ = counts(3, offset)
    X_test = np.linspace(-3, 3, 300)[:, None]
    truth = np.exp(offset + np.sin(1.5 * X_test[:, 0]))
    model = PoissonRVR().fit(X, y)
    mode_error = np.mean(np.abs(model.predict(X_test) - truth))
    mean_error = np.mean(np.abs(model.result_.rate(model._relevant_columns(X_test)) - truth))
    assert abs(mode_error - mean_error) <= 0.1 * mean_error
    assert mode_error < 0.3 * np.mean(truth)


_LARGE_COUNTS_X = np.array([
    -1.9, 4.24, 5.03, -3.64, 0.2, 6.76, 4.87, -3.15, -2.69, -5.32, 0.39, -3.07, 4.89, 2.01, -0.33, -9.57, 0.31,
    -5.34, -0.55, 4.26, 2.64, 5.25, -11.66, -0.29, -1.58, -3.87, 6.99, -0.81, 4.33, 1.69, -1.94, -0.45, 0.7,
    -11.76, -0.77, -1.02, 5.77, -2.6, -0.99, -2.94])[:, None]
_LARGE_COUNTS_Y = np.array([
    14276, 48229, 52908, 10140, 22509, 57969, 51912, 11153, 11977, 8503, 23311, 11418, 51932, 33349, 19895, 9347,
    22912, 8451, 18704, 48411, 37598, 54078, 12900, 19969, 15126, 9828, 57704, 17924, 48923, 30880, 14161, 19460,
    25089, 13147, 18143, 17010, 55853, 12321, 17058, 11753])


@pytest.mark.parametrize("method", ["fast", "mackay", "em"])
def test_poisson_fits_where_a_mode_search_fails_end_or_warn_without_crashing(method: str) -> None:
    """Counts of 8e3-6e4 on a wide RBF (gamma 2.8e-4): fuzzed, the fast method raised SolverError from one
    of its starts, MacKay's from a mode search after an update, and EM's fast finish an AttributeError on the
    None mode of a start it could not linearise (then EM's result was returned as converged, with evidence
    -1.4e8 and infinite predicted rates). A start without a mode is skipped, MacKay and EM stop at their
    last state that had one, and a result the fast moves could not finish is reported not converged."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = PoissonRVR(gamma=2.7939e-4, method=method).fit(_LARGE_COUNTS_X, _LARGE_COUNTS_Y)
    assert model.result_.converged or any(issubclass(w.category, ConvergenceWarning) for w in caught)


@pytest.mark.parametrize("method", ["mackay", "em"])
@pytest.mark.parametrize("case", ["tiny-alpha-bernoulli", "tiny-alpha-poisson", "huge-counts-poisson"])
def test_a_laplace_precision_that_cannot_factor_says_what_to_change(method: str, case: str) -> None:
    """RVC and PoissonRVR under MacKay or EM with alpha_init = 1e-300, and PoissonRVR on counts near 1e12
    (whose curvature B, the rate, makes Phi^T B Phi ~ 1e14 against alpha_i = 1): the error advised
    lowering alpha_max or raising noise_floor, a parameter these estimators do not have (fuzzed). It names
    (7.113)'s matrix, its numbers, and alpha_init; the fast method fits the same data."""
    from sparsekernel.errors import SolverError
    from sparsekernel.estimators import RVC

    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 2))
    if case == "tiny-alpha-bernoulli":
        model, y = RVC(method=method, alpha_init=1e-300), (X[:, 0] > 0).astype(int)
    elif case == "tiny-alpha-poisson":
        model, y = PoissonRVR(method=method, alpha_init=1e-300), rng.poisson(2.0, 40)
    else:
        model, X = PoissonRVR(method=method), rng.uniform(-3.0, 3.0, size=(80, 1))
        y = rng.poisson(1e12 * np.exp(1.0 + np.sin(X[:, 0]))).astype(float)
    with pytest.raises(SolverError, match=r"Phi\^T B Phi \+ A \(7.113\) .* raise alpha_init or use method='fast'"
                       ) as error, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y)
    assert "noise_floor" not in str(error.value)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fast = model.set_params(method="fast").fit(X, y)
    assert np.all(np.isfinite(fast.predict(X)))
