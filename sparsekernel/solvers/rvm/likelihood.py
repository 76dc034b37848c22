"""The likelihoods of the RVM: one interface, one class per noise model.

A likelihood p(t_n | a_n) reads the activations a_n = (w_1^T phi(x_n), ...,
w_O^T phi(x_n)) of O outputs through the mean y_n = h(a_n) of a canonical
link. For a canonical link the derivatives of ln p(t_n | a_n) are

    d ln p / d a_n         = t_n - y_n            (the residual; (7.110) with Phi^T)
    -d^2 ln p / d a_n d a_n^T = B_n               (the curvature; (7.111) with Phi^T . Phi)

so the Laplace approximation (``laplace``) and Algorithm 7.2 on the
effective problem t_hat = Phi w* + B^-1 (t - y), noise covariance B^-1
(7.117)-(7.119) (``sequential``) read nothing else. The Gaussian case is
conjugate: its B = beta I and t_hat = t do not depend on w, the posterior is
exact (Result 7.12) and the fast algorithm keeps its rank-one updates and
re-estimates beta; every other likelihood is linearised again after each
step. A new noise model is one new class (see ``poisson``).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import expit, log_expit, logsumexp

from ...validation import check_real_targets, fail

__all__ = ["Likelihood", "Gaussian", "Bernoulli", "Softmax"]

Array = NDArray[np.float64]
LOG_2PI = math.log(2.0 * math.pi)


class Likelihood(ABC):
    """p(t | a) with a canonical link: targets, mean, log likelihood, residual and curvature.

    Every method works on all N observations at once: activations ``a`` and
    targets ``T`` are arrays (N, O), the curvature is (N, O, O).
    """

    #: Whether the posterior over w is Gaussian in closed form (no Laplace approximation).
    conjugate: ClassVar[bool] = False

    @abstractmethod
    def targets(self, t: ArrayLike) -> Array:
        """The validated targets as an array (N, O); raises ValidationError naming ``t``."""

    @abstractmethod
    def mean(self, a: Array) -> Array:
        """y = h(a), the mean of t given the activations, (N, O)."""

    @abstractmethod
    def log_likelihood(self, a: Array, T: Array) -> float:
        """ln p(T | a) = sum_n ln p(t_n | a_n)."""

    @abstractmethod
    def curvature(self, Y: Array) -> Array:
        """B_n = -d^2 ln p(t_n | a_n) / d a_n d a_n^T as a function of the mean, (N, O, O)."""

    def residual(self, T: Array, Y: Array) -> Array:
        """d ln p / d a = t - y (a canonical link), (N, O)."""
        return T - Y

    def newton_offset(self, T: Array, Y: Array) -> Array:
        """B^-1 (t - y), the part of t_hat = Phi w* + B^-1 (t - y) (7.117) beyond Phi w*, (N, O).

        For one output r / b, 0 where b = 0 (a saturated mean); a likelihood
        with several outputs overrides it.
        """
        r, b = self.residual(T, Y), self.curvature(Y)[:, :, 0]
        return np.divide(r, b, out=np.zeros_like(r), where=b > 0.0)


@dataclass(frozen=True)
class Gaussian(Likelihood):
    """t_n ~ N(a_n, beta^-1) (section 7.2.1): y = a, B = beta I.

    Conjugate with the ARD prior: the posterior is Result 7.12 and the
    evidence (7.85) is exact. ``rvm_regression`` also re-estimates beta.
    """

    beta: float = 1.0
    conjugate: ClassVar[bool] = True

    def targets(self, t: ArrayLike) -> Array:
        return check_real_targets(t, "t")[:, None]

    def mean(self, a: Array) -> Array:
        return a

    def log_likelihood(self, a: Array, T: Array) -> float:
        N = T.shape[0]
        return 0.5 * (N * (math.log(self.beta) - LOG_2PI) - self.beta * float(np.sum((T - a) ** 2)))

    def curvature(self, Y: Array) -> Array:
        return np.full((Y.shape[0], 1, 1), self.beta)

    def residual(self, T: Array, Y: Array) -> Array:
        return self.beta * (T - Y)


@dataclass(frozen=True)
class Bernoulli(Likelihood):
    """t_n in {0, 1}, y = sigma(a) (7.108); ln p = t ln y + (1 - t) ln(1 - y) (7.109); B = y(1 - y)."""

    def targets(self, t: ArrayLike) -> Array:
        v = check_real_targets(t, "t")
        if not np.all((v == 0.0) | (v == 1.0)):
            raise fail("t", "labels in {0, 1}", np.unique(v)[:10].tolist())
        return v[:, None]

    def mean(self, a: Array) -> Array:
        return expit(a)  # (7.108)

    def log_likelihood(self, a: Array, T: Array) -> float:
        return float(np.sum(T * log_expit(a) + (1.0 - T) * log_expit(-a)))  # (7.109)

    def curvature(self, Y: Array) -> Array:
        return (Y * (1.0 - Y))[:, :, None]  # B = diag(y_n (1 - y_n)) (7.111)


@dataclass(frozen=True)
class Softmax(Likelihood):
    """K classes, 1-of-K targets, y_k = exp(a_k) / sum_j exp(a_j) (7.121); ln p = sum t_nk ln y_nk (7.122).

    B_n has blocks y_k (delta_kj - y_j): singular (B_n 1 = 0), which the
    sequential algorithm never inverts (its Q_i = phi_i^T (t - y)).
    """

    n_classes: int = 3

    def targets(self, t: ArrayLike) -> Array:
        v = check_real_targets(t, "t")
        if not np.all(np.isin(v, np.arange(self.n_classes))):
            raise fail("t", f"class labels 0, ..., {self.n_classes - 1}", np.unique(v)[:10].tolist())
        return np.eye(self.n_classes)[v.astype(np.intp)]

    def mean(self, a: Array) -> Array:
        return np.exp(a - logsumexp(a, axis=1, keepdims=True))  # (7.121)

    def log_likelihood(self, a: Array, T: Array) -> float:
        return float(np.sum(T * a) - np.sum(logsumexp(a, axis=1)))  # (7.122), sum t_nk ln y_nk

    def curvature(self, Y: Array) -> Array:
        return np.einsum("nk,kj->nkj", Y, np.eye(Y.shape[1])) - Y[:, :, None] * Y[:, None, :]

    def newton_offset(self, T: Array, Y: Array) -> Array:
        """A solution of B_n z_n = t_n - y_n: z = (t - y) / y, as B_n z_n = (t_n - y_n) - y_n 1^T (t_n - y_n)
        and 1^T (t_n - y_n) = 0; the one on B's range differs by a multiple of 1, which (7.117)-(7.119)
        never see (B 1 = 0)."""
        return np.divide(T - Y, Y, out=np.zeros_like(Y), where=Y > 0.0)
