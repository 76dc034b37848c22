"""alpha's maximiser under Gamma hyperpriors at the edges of the floats, and the fits that need it.

``posterior.alpha_star`` solves a cubic (Gam(alpha | c, d), d > 0) or a
quadratic (d = 0, c > 1) for the stationary points of (7.97) + (c - 1) ln alpha
- d alpha. Three ways it failed: an included function whose s_i overflowed
(Sigma_ii rounded to 0) sent inf and nan into numpy's eigvals, which raised
LinAlgError (RVR with Gam(alpha | 1, 1e-30) on targets of 1e8); the quadratic's
small root, taken as (-b - sqrt(b^2 - 4ac)) / 2a, lost its digits to
cancellation (relative error 1e-4 at c = 1 + 1e-12, 100% of the prior's
effect at c = 1 + 1e-10); and the companion matrix's eigenvalues, found to eps
times its norm, left the small root of Gam(alpha | 1, 1e-300) no digits (no
maximiser: the function was pruned).
"""

from __future__ import annotations

import warnings
from decimal import Decimal, getcontext
from fractions import Fraction

import numpy as np
import pytest

from sparsekernel.estimators import RVR
from sparsekernel.solvers.rvm.posterior import Hyperprior, alpha_star


def _quadratic_small_root(s: Fraction, q: Fraction, c: Fraction) -> float:
    """The small root of 2(c-1) a^2 + (s - q^2 + 4(c-1)s) a + (2c-1)s^2 = 0 (d = 0), to 60 digits."""
    getcontext().prec = 60
    a, b, cc = 2 * (c - 1), s - q * q + 4 * (c - 1) * s, (2 * c - 1) * s * s
    A, B, C = (Decimal(v.numerator) / Decimal(v.denominator) for v in (a, b, cc))
    return float((-B - (B * B - 4 * A * C).sqrt()) / (2 * A))


@pytest.mark.parametrize("s, q, c", [(1, 2, Fraction(1) + Fraction(1, 10**12)),
                                     (4, Fraction(5, 2), Fraction(1) + Fraction(1, 10**10))])
def test_the_quadratic_small_root_keeps_its_digits(s, q, c) -> None:
    exact = _quadratic_small_root(Fraction(s), Fraction(q), c)
    got = alpha_star(np.array([float(s)]), np.array([float(q)]), Hyperprior(c=float(c), d=0.0))[0]
    np.testing.assert_allclose(got, exact, rtol=1e-13)


@pytest.mark.parametrize("d", [1e-300, 1e-200, 1e-30])
def test_a_vanishing_gamma_prior_finds_the_flat_maximiser(d: float) -> None:
    s, q = np.array([1.0, 4.0, 1e-15]), np.array([2.0, 2.5, 3e-7])
    flat = s**2 / (q**2 - s)                                     # (7.101); the prior moves it by about d s
    got = alpha_star(s, q, Hyperprior(c=1.0, d=d))
    np.testing.assert_allclose(got, flat, rtol=1e-12)


def test_an_overflowed_s_has_no_maximiser_and_no_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = alpha_star(np.array([np.inf, np.inf, 1.0]), np.array([np.nan, np.inf, 2.0]),
                         Hyperprior(c=1.0, d=1e-30))
    assert got[0] == np.inf and got[1] == np.inf
    np.testing.assert_allclose(got[2], 1.0 / 3.0, rtol=1e-12)


@pytest.mark.parametrize("method", ["fast", "mackay", "em"])
@pytest.mark.parametrize("scale, d", [(1e8, 1e-30), (1e8, 1e-20), (1e6, 1e-30), (1e6, 1e-300)])
def test_rvr_under_a_near_flat_gamma_prior_fits_large_targets(method: str, scale: float, d: float) -> None:
    rng = np.random.default_rng(0)
    X = rng.uniform(-3.0, 3.0, (60, 1))
    t = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)     # the AOT build note, not numpy's RuntimeWarnings
        warnings.simplefilter("error", RuntimeWarning)
        flat = RVR(method=method).fit(X, t)
        model = RVR(method=method, hyperprior=(1.0, 0.0, 1.0, d)).fit(X, scale * t)
    assert model.report_.ok
    assert model.relevance_vectors_.size > 0
    np.testing.assert_allclose(model.predict(X) / scale, flat.predict(X), atol=0.05)


def test_a_refused_addition_under_a_gamma_prior_is_worded_for_that_prior() -> None:
    """The fast fit under Gam(alpha | 1.1, 1e-3) stops with an excluded function that would gain 0.35 nats of
    (7.97) + ln Gam (the certificate's add row says the same); the warning called it "q^2 > s, with a flat
    prior" and blamed a budget of last moves that a hyperprior fit does not have."""
    from sparsekernel.errors import ConvergenceWarning

    X = np.random.default_rng(0).uniform(-3.0, 3.0, (50, 1))
    t = np.sin(X[:, 0]) + 0.1 * np.random.default_rng(0).standard_normal(50)
    with pytest.warns(ConvergenceWarning, match=r"an excluded function \(whose \(7\.97\) \+ ln Gam\(alpha \| c, d\) "
                                                r"would rise\) would gain 0\.35\d? nats") as caught:
        model = RVR(hyperprior=(1.0, 0.0, 1.1, 1e-3)).fit(X, t)
    assert not any("flat prior" in str(w.message) for w in caught)
    assert not model.report_.ok and model.report_.largest_gain == pytest.approx(0.354, abs=0.01)
