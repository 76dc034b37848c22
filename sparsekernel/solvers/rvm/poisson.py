"""The Poisson RVM: counts with a log link (Tipping, 2001; SparseBayes' third likelihood).

t_n ~ Poisson(y_n), y_n = exp(a_n), a_n = w^T phi(x_n), with the ARD prior
(7.80). The log link is canonical, so

    ln p(t | w) = sum_n t_n a_n - exp(a_n) - ln t_n!,
    gradient    Phi^T (t - y) - A w                      (7.110 with y = exp(a)),
    Hessian     -(Phi^T B Phi + A), B = diag(y_n)        (7.111 with b_n = y_n),

and everything else is the classification RVM's: the Laplace approximation
at the IRLS mode (7.112)-(7.114) and Algorithm 7.2 on the effective problem
t_hat = Phi w* + B^-1 (t - y) with noise covariance B^-1 (7.117)-(7.119), by
the same code (``laplace``, ``sequential``, ``laplace_fit``). This module is
the whole of the Poisson case: the likelihood, the fitted model and
``rvm_poisson``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import gammaln

from ...validation import check_real_dtype, check_same_length, fail
from ...errors import ValidationError
from .checks import ALPHA_INIT, Method, check_bias, check_design, check_method, frozen
from .design import Design
from .laplace_fit import fit_laplace
from .likelihood import Likelihood
from .results import LaplaceResult, relevant_rows, with_bias

__all__ = ["Poisson", "RVMPoisson", "rvm_poisson", "check_counts"]

Array = NDArray[np.float64]
IntArray = NDArray[np.intp]
COUNTS = "non-negative integer counts"
#: The largest count: 2^53, the last integer a double holds exactly. Above it every double is an integer, so the
#: check that a count is whole says nothing; and the fit had already failed there (at 9e15 among Poisson(3)
#: counts the fast fit predicted rate 1 for a sample of mean 2e14; 1e300 overflowed its sums).
MAX_COUNT = 2.0**53


def check_counts(t: ArrayLike, name: str = "t") -> Array:
    """Counts as a float vector (N,); a ValidationError names ``name``, the domain and the first bad value.

    Text, complex and other non-numbers are refused as the real-valued targets are (numpy would parse
    the text "3" as the count 3 without a word)."""
    check_real_dtype(t, name, f"a 1-D array of {COUNTS}")
    try:
        v = np.asarray(t, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise fail(name, f"a 1-D array of {COUNTS}", t) from exc
    if v.ndim != 1 or v.size == 0:
        raise fail(name, f"a non-empty 1-D array of shape (n_samples,) of {COUNTS}", v)
    bad = ~(np.isfinite(v) & (v >= 0.0) & (v == np.round(v)))
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        raise ValidationError(f"{name} must be {COUNTS}; got {float(v[i])!r} at index {i}")  # the one template
    if v.max() > MAX_COUNT:
        i = int(np.argmax(v))
        raise ValidationError(f"{name} must be {COUNTS} of at most 2^53 = {MAX_COUNT:.0f} (where a double still "
                              f"tells a count from the next); got {float(v[i])!r} at index {i}")
    return v


@dataclass(frozen=True)
class Poisson(Likelihood):
    """t_n ~ Poisson(exp(a_n)): y = exp(a), ln p = t a - exp(a) - ln t!, B = diag(y)."""

    def targets(self, t: ArrayLike) -> Array:
        return check_counts(t, "t")[:, None]

    def mean(self, a: Array) -> Array:
        return np.exp(a)  # the log link: y = exp(a)

    def log_likelihood(self, a: Array, T: Array) -> float:
        return float(np.sum(T * a - np.exp(a) - gammaln(T + 1.0)))  # sum t a - e^a - ln t!

    def curvature(self, Y: Array) -> Array:
        return Y[:, :, None]  # b_n = y_n, (7.111) with the log link


@dataclass(frozen=True)
class RVMPoisson(LaplaceResult):
    """A fitted Poisson RVM (Laplace approximation), in the caller's units.

    Attributes
    ----------
    relevance : int array (R,)
        Indices of the kept columns of Phi (the bias is reported apart).
    bias_used : bool
    alpha : array (K,), K = R + bias_used
        Precisions of the kept weights (bias first).
    mean : array (K,)
        Mode w* of the posterior (7.112).
    covariance : array (K, K)
        Laplace covariance (Phi^T diag(exp(Phi w*)) Phi + A)^-1 (7.113).
    log_evidence : array
        Laplace approximation (7.114) of ln p(t | alpha) after each iteration.
    iterations, converged, method, all_pruned : as for ``RVMRegression``.
    beta : float
        nan: there is no noise precision in the Poisson model.
    """

    def latent(self, Phi_relevant: ArrayLike) -> tuple[Array, Array]:
        """Mean and variance of the log rate a = w^T phi(x) under the Laplace posterior, arrays (n_test,)."""
        Phi_k = with_bias(relevant_rows(Phi_relevant, self.relevance.size), self.bias_used)
        return Phi_k @ self.mean, np.einsum("ij,ij->i", Phi_k @ self.covariance, Phi_k)

    def rate(self, Phi_relevant: ArrayLike) -> Array:
        """Predictive mean of the rate under the Laplace posterior, E[exp(a)] = exp(mu + sigma^2 / 2) for
        a ~ N(mu, sigma^2), (n_test,).

        Where the counts are 0 over a region that kept functions can cover, the evidence rises as their
        alpha_i run to 0 and their weights to -inf (the likelihood there tends to 1): sigma^2 is then the
        prior's 1/alpha_i, not the data's, and this mean overflows (1e70 to inf on training points where
        the rate is 0), while the exact posterior's mean is near 0. ``mode_rate`` is the estimators'
        prediction.
        """
        mu, var = self.latent(Phi_relevant)
        with np.errstate(over="ignore"):                 # inf is this mean's value there (docstring)
            return np.exp(mu + 0.5 * var)

    def mode_rate(self, Phi_relevant: ArrayLike) -> Array:
        """The rate at the posterior mode, exp(phi(x)^T w*), (n_test,): Tipping's prediction at w_MP (the
        classification RVM's, (7.109)), and the median of the rate under the Laplace posterior. As accurate
        as ``rate`` where the posterior is well determined (mean absolute error within 3% of it on the sinusoidal
        counts of the tests), and near 0 where the counts are (``rate``'s docstring)."""
        mu, _ = self.latent(Phi_relevant)
        return np.exp(mu)


def rvm_poisson(
    Phi: ArrayLike | Design,
    t: ArrayLike,
    method: Method = "fast",
    *,
    bias: bool = True,
    alpha_max: float = 1e9,
    tol: float = 1e-3,
    max_iter: int | None = None,
    max_newton: int = 50,
    newton_tol: float = 1e-10,
    alpha_init: float = ALPHA_INIT,
) -> RVMPoisson:
    """Fit the Poisson RVM (log link, Laplace approximation) by maximising the evidence (7.114).

    Parameters
    ----------
    Phi : array (N, M) or Design
        Design matrix (materialised: N x M values are stored).
    t : array (N,)
        Counts, non-negative integers.
    method : {"fast", "mackay", "em"}
        ``"fast"``: Algorithm 7.2 on the effective problem (7.117)-(7.119);
        ``"mackay"``: (7.116); ``"em"``: alpha_i = 1 / (w_i*^2 + Sigma_ii).
    bias, alpha_max, tol, max_iter, max_newton, newton_tol, alpha_init :
        as for ``rvm_classification``.

    Returns
    -------
    RVMPoisson

    Raises
    ------
    ValidationError
        When a count is negative, not an integer, NaN or inf (the message
        names ``t``, the domain and the first bad value).
    """
    method = check_method(method)
    design = check_design(Phi)
    likelihood = Poisson()
    T = likelihood.targets(t)
    check_same_length(np.empty((design.shape[0], 0)), T[:, 0], "Phi", "t")
    fit = fit_laplace(likelihood, design, T, method, bias=check_bias(bias), alpha_max=alpha_max, tol=tol,
                      max_iter=max_iter, max_newton=max_newton, newton_tol=newton_tol, caller="rvm_poisson",
                      alpha_init=alpha_init)
    fields = {**vars(fit), "alpha": frozen(fit.alpha[:, 0]), "mean": frozen(fit.mean[:, 0])}
    return RVMPoisson(**fields)
