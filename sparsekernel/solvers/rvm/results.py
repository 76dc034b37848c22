"""Fitted RVMs and their predictive distributions (7.90)-(7.91), (7.108), (7.121).

Every result is a frozen dataclass in the caller's units: the kept basis
functions are the bias (when ``bias_used``) and the columns ``relevance`` of
Phi, in that order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ...errors import ValidationError
from ...validation import check_finite, check_matrix, check_real_dtype, fail

__all__ = [
    "AllPrunedWarning",
    "RVMRegression",
    "LaplaceResult",
    "RVMClassification",
    "predictive_distribution",
    "moderated_probabilities",
    "moderated_log_probabilities",
    "moderated_logits",
]

Array = NDArray[np.float64]
IntArray = NDArray[np.intp]


class AllPrunedWarning(UserWarning):
    """Every basis function was pruned; the model keeps the bias alone (if any)."""


@dataclass(frozen=True)
class RVMRegression:
    """A fitted regression RVM, in the caller's units.

    The kept basis functions are, in this order, the bias (when
    ``bias_used``) and the columns ``relevance`` of Phi; ``alpha``, ``mean``,
    ``covariance`` and ``gamma`` follow that order.

    Attributes
    ----------
    relevance : int array (R,)
        Indices of the kept columns of Phi (the bias is reported apart).
    bias_used : bool
        Whether the constant basis function is kept.
    alpha : array (K,), K = R + bias_used
        Precisions of the kept weights.
    beta : float
        Noise precision.
    mean, covariance : arrays (K,), (K, K)
        Posterior N(w | m, Sigma) of the kept weights, (7.82)-(7.83).
    gamma : array (K,)
        gamma_i = 1 - alpha_i Sigma_ii (7.89).
    log_evidence : array (n_steps,)
        (7.85), constants included: the starting point, then the value after
        each iteration (fast method: after each step taken; an escape attempt
        adds one entry, its end point, and only when it is kept, so the fast
        history does not decrease but by the rounding of the values the steps
        track, which targets far from zero make large (offset 1e6 times their
        spread: drops of 2.6 nats); under a Gamma hyperprior on alpha the steps
        raise the evidence plus the prior, and the evidence alone may fall).
    iterations : int
    converged : bool
    method : str
    all_pruned : bool
        True when the evidence pruned every function and the bias was kept
        anyway (with alpha = alpha_max) so that the model is not empty.
    sweeps : int
        Full passes over the basis made by the fast method outside its pool.
    """

    relevance: IntArray
    bias_used: bool
    alpha: Array
    beta: float
    mean: Array
    covariance: Array
    gamma: Array
    log_evidence: Array
    iterations: int
    converged: bool
    method: str
    all_pruned: bool = False
    sweeps: int = 0

    @property
    def bias(self) -> float:
        """Posterior mean of the bias weight (0 when it is not used)."""
        return float(self.mean[0]) if self.bias_used else 0.0

    @property
    def weights(self) -> Array:
        """Posterior means of the weights of the columns ``relevance``, (R,)."""
        return self.mean[int(self.bias_used) :]

    def predict(self, Phi: ArrayLike, return_std: bool = False) -> Array | tuple[Array, Array]:
        """Predictive mean (7.90) (and standard deviation (7.91)) at new rows of Phi.

        Parameters
        ----------
        Phi : array (n_test, M)
            Design rows of the test points, all M columns of the training Phi.
        """
        Phi = check_matrix(Phi, "Phi")
        need = int(np.max(self.relevance)) + 1 if self.relevance.size else 0
        if Phi.shape[1] < need:         # numpy's IndexError named neither Phi nor the columns it needs
            raise fail("Phi", f"the test rows of every column of the training Phi (at least {need}: column "
                              f"{need - 1} is kept)", Phi)
        mean, var = predictive_distribution(self, Phi[:, self.relevance])
        return (mean, np.sqrt(var)) if return_std else mean


def predictive_distribution(result: RVMRegression, Phi_relevant: ArrayLike) -> tuple[Array, Array]:
    """Mean and variance of p(t | x) (7.90)-(7.91) for many test points.

    Parameters
    ----------
    result : RVMRegression
    Phi_relevant : array (n_test, R)
        The test rows of the kept columns only (``Phi_test[:, result.relevance]``).

    Returns
    -------
    mean, variance : arrays (n_test,)
        m^T phi(x) and beta^-1 + phi(x)^T Sigma phi(x), computed row by row
        as sum((Phi Sigma) * Phi, axis=1): no n_test x n_test matrix.
    """
    Phi_k = with_bias(relevant_rows(Phi_relevant, result.relevance.size), result.bias_used)
    mean = Phi_k @ result.mean  # (7.90)
    # (7.91); phi^T Sigma phi >= 0 for the covariance is positive semidefinite: a negative value is rounding (EM
    # keeping 34 identical columns of a constant input, Sigma's entries 8e6 summing to -2.8e-8 against a noise
    # variance of 1.6e-13), which made the variance negative and return_std NaN with a RuntimeWarning
    var = 1.0 / result.beta + np.maximum(np.einsum("ij,ij->i", Phi_k @ result.covariance, Phi_k), 0.0)
    return mean, var


def relevant_rows(Phi_relevant: ArrayLike, R: int, name: str = "Phi_relevant") -> Array:
    """The test rows of the R kept columns as a finite float array (n_test, R), checked.

    Raises
    ------
    ValidationError
        Naming ``name``, the shape expected and the one given, where ``Phi_relevant`` is not a 2-D array
        of R columns of finite real numbers: the full test design, or a single row, gave numpy's matmul
        ValueError (naming neither), and a NaN gave NaN predictions without a word.
    """
    domain = f"a 2-D array of shape (n_test, {R}): the test rows of the kept columns, Phi_test[:, result.relevance]"
    check_real_dtype(Phi_relevant, name, domain)
    try:
        Phi = np.asarray(Phi_relevant, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise fail(name, domain, Phi_relevant) from exc
    if Phi.ndim != 2 or Phi.shape[1] != R:
        raise fail(name, domain, Phi)
    check_finite(Phi, name)
    return Phi


def with_bias(Phi: Array, bias: bool) -> Array:
    return np.column_stack([np.ones(Phi.shape[0]), Phi]) if bias else Phi


@dataclass(frozen=True)
class LaplaceResult:
    """What every fit under the Laplace approximation holds (Bernoulli, softmax, Poisson), caller's units.

    The kept basis functions are the bias (when ``bias_used``) and the
    columns ``relevance``, in that order; ``alpha``, ``mean`` and
    ``covariance`` follow that order (their shapes are given by the
    subclass). ``beta`` is nan: these models have no noise precision.
    """

    relevance: IntArray
    bias_used: bool
    alpha: Array
    mean: Array
    covariance: Array
    log_evidence: Array
    iterations: int
    converged: bool
    method: str
    all_pruned: bool = False
    beta: float = float("nan")


@dataclass(frozen=True)
class RVMClassification(LaplaceResult):
    """A fitted classification RVM (Laplace approximation).

    Outputs: one logistic output (K = 2 classes, t in {0, 1}, (7.108)) or K
    softmax outputs (K > 2, (7.121)). The kept basis functions are the bias
    (when ``bias_used``) and the columns ``relevance``, in that order; each
    output has its own precisions, and a function is kept when any output
    keeps it.

    Attributes
    ----------
    relevance : int array (R,)
    bias_used : bool
    alpha : array (B, O), B = R + bias_used, O = 1 (two classes) or K
        Precisions; inf where output o excludes function b.
    mean : array (B, O)
        Mode w* of the posterior (7.112); 0 where excluded.
    covariance : array (B O, B O)
        Laplace covariance (7.113) over vec(mean) in output-major order
        (index o B + b); rows and columns of excluded weights are 0.
    log_evidence : array
        Laplace approximation (7.114) of ln p(t | alpha) at each state the fit kept: a block of the fast
        method's steps kept when (7.114) rose, an iteration of MacKay's or EM's (far fewer entries than
        ``iterations`` for the fast method: 4 to 9 over 313 to 611 steps on 100 points); the last is the fit's.
    iterations, converged, method, all_pruned : as for ``RVMRegression``
    beta : float
        nan: there is no noise precision in the classification model.
    n_classes : int
    """

    n_classes: int = 2

    def latent(self, Phi_relevant: ArrayLike) -> tuple[Array, Array]:
        """Mean and variance of the activations a_o = w_o^T phi(x) under the Laplace posterior.

        Returns arrays (n_test, O): mu_o = phi^T w*_o and sigma_o^2 = phi^T Sigma_oo phi.
        """
        Phi_k = with_bias(relevant_rows(Phi_relevant, self.relevance.size), self.bias_used)
        B, O = self.mean.shape
        mu = Phi_k @ self.mean
        var = np.empty_like(mu)
        for o in range(O):
            block = self.covariance[o * B : (o + 1) * B, o * B : (o + 1) * B]
            var[:, o] = np.maximum(np.einsum("ij,ij->i", Phi_k @ block, Phi_k), 0.0)  # negative: rounding
        return mu, var

    def predict_proba(self, Phi_relevant: ArrayLike) -> Array:
        """Class probabilities (n_test, K) with the probit-moderated output; see ``moderated_probabilities``."""
        mu, var = self.latent(Phi_relevant)
        return moderated_probabilities(mu, var)


def moderated_probabilities(mu: Array, var: Array) -> Array:
    """Predictive class probabilities from the Gaussian activations, (n, K).

    Two classes (one output): p(C_1 | x) = sigma(kappa(s^2) mu) with
    kappa(s^2) = (1 + pi s^2 / 8)^(-1/2), the probit approximation to the
    moderated output (Bishop 4.153-4.155). K classes: the same approximation
    for every pair of classes, on the difference a_k - a_j (variance
    s_k^2 + s_j^2, the covariances between classes ignored):
    p_k ~ 1 / (1 + sum_{j != k} exp(-kappa(s_k^2 + s_j^2) (mu_k - mu_j))), normalised;
    for K = 2 it is the two-class formula. Moderating each activation alone
    (softmax of kappa(s_k^2) mu_k) is not invariant to adding a constant to
    every activation and, with weights of very different spread per class,
    reorders the classes even where the posterior is confident.
    """
    mu, var = _activations(mu, var)
    if mu.shape[1] == 1:
        with np.errstate(over="ignore"):                         # exp(800) = inf: p1 = 0
            p1 = 1.0 / (1.0 + np.exp(-moderated_logits(mu, var)[:, 0]))
        return np.column_stack([1.0 - p1, p1])
    diff = mu[:, :, None] - mu[:, None, :]  # mu_k - mu_j
    z = moderated_logits(diff, var[:, :, None] + var[:, None, :])  # (4.154) on a_k - a_j
    with np.errstate(over="ignore"):
        p = 1.0 / np.sum(np.exp(-z), axis=2)  # the j = k term is exp(0) = 1
    return p / p.sum(axis=1, keepdims=True)


def moderated_log_probabilities(mu: Array, var: Array) -> Array:
    """The log of ``moderated_probabilities``, (n, K), formed in logs: finite where a probability is below
    the smallest float (log(1 - p1) of p1 = 1 - 1e-20 is -46, not log(0) = -inf) and accurate near 0.
    Two classes: log p1 = -log(1 + exp(-z)), log p0 = -log(1 + exp(z)); K classes: -log sum_j exp(-z_kj),
    normalised by its log-sum-exp over k."""
    from scipy.special import logsumexp

    mu, var = _activations(mu, var)
    if mu.shape[1] == 1:
        z = moderated_logits(mu, var)[:, 0]
        return np.column_stack([-np.logaddexp(0.0, z), -np.logaddexp(0.0, -z)])
    diff = mu[:, :, None] - mu[:, None, :]
    z = moderated_logits(diff, var[:, :, None] + var[:, None, :])
    log_p = -logsumexp(-z, axis=2)
    return log_p - logsumexp(log_p, axis=1, keepdims=True)


def _activations(mu: ArrayLike, var: ArrayLike) -> tuple[Array, Array]:
    """``moderated_probabilities``' arguments, checked: mu (n, O) real, var of its shape, finite and >= 0 (a
    1-D mu raised IndexError 'tuple index out of range', and var of another shape numpy's broadcast error)."""
    domain = "a 2-D array (n, O) of the activations' means, one column per output"
    check_real_dtype(mu, "mu", domain)
    check_real_dtype(var, "var", "an array of mu's shape of variances >= 0")
    mu_a, var_a = np.asarray(mu, dtype=np.float64), np.asarray(var, dtype=np.float64)
    if mu_a.ndim != 2 or mu_a.shape[1] == 0:
        raise fail("mu", domain, mu_a)
    if var_a.shape != mu_a.shape:
        raise fail("var", f"an array of mu's shape {mu_a.shape} of variances >= 0", var_a)
    bad = ~(var_a >= 0.0)                                        # NaN too
    if bad.any():
        at = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValidationError(f"var must be variances >= 0; got {float(var_a[at])!r} at index {at}")
    return mu_a, var_a


def moderated_logits(mu: Array, var: Array) -> Array:
    """kappa(sigma^2) mu with kappa(s^2) = (1 + pi s^2 / 8)^(-1/2) (4.154)."""
    return mu / np.sqrt(1.0 + np.pi * var / 8.0)

