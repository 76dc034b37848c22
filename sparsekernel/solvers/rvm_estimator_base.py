"""What RVR and RVC share: kernel and design construction, fitted attributes, test-time columns.

Kept apart from ``estimators.py`` so that module holds only the estimators
themselves.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted, validate_data

from .rvm_design import estimator_design, estimator_kernel

__all__ = ["RVMEstimatorBase"]

Array = NDArray[np.float64]


class RVMEstimatorBase(BaseEstimator):
    """Shared helpers of ``RVR`` and ``RVC`` (the hyperparameters live in their ``__init__``)."""

    def _kernel_and_design(self, X: Array):
        kernel = estimator_kernel(self.kernel, self.gamma, self.degree, self.coef0, X)
        design, pool = estimator_design(kernel, X, self.cache_mb)
        return kernel, design, pool

    def _store(self, X: Array, kernel, result) -> None:
        self.kernel_ = kernel
        self.relevance_vectors_ = np.asarray(result.relevance)
        self.bias_used_ = bool(result.bias_used)
        self.alpha_ = np.asarray(result.alpha)
        self.mean_ = np.asarray(result.mean)
        self.covariance_ = np.asarray(result.covariance)
        self.log_evidence_ = np.asarray(result.log_evidence)
        self.n_iter_ = int(result.iterations)
        self.all_pruned_ = bool(result.all_pruned)
        self.beta_ = float(result.beta)
        self.result_ = result
        precomputed = self.kernel == "precomputed"
        self.X_relevance_ = None if precomputed else X[self.relevance_vectors_].copy()

    def _relevant_columns(self, X: ArrayLike) -> Array:
        """Kernel values k(x, x_i) of test points against the relevance vectors, (n_test, R)."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        if self.kernel == "precomputed":
            return X[:, self.relevance_vectors_]
        if self.X_relevance_.shape[0] == 0:
            return np.zeros((X.shape[0], 0))
        return np.asarray(self.kernel_(X, self.X_relevance_))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags
