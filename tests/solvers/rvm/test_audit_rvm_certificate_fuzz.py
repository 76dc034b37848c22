"""Audit of the RVM's certificate and of the agreement between its methods (issue 16), found by fuzzing.

Every check is against an independent numpy computation written here from the notes: (7.85) by the
determinant lemma on the stacked whitened design, s_i and q_i of a kept function from C_{-i} (7.98)-(7.99),
the gains of one move from (7.97); for the Laplace fits the mode by Newton's method (7.109)-(7.112) from the
returned mean and the Laplace evidence (7.114). Each test fails on the code before its fix.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from sparsekernel.kernels import RBF
from sparsekernel.solvers.rvm import rvm_classification


# ----------------------------------------------------------------------------------------------------------
# independent references


def _softmax(a: np.ndarray) -> np.ndarray:
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


class _Laplace:
    """The Laplace RVM at given alpha over pairs (column, output): Z stacks each pair's column in its output's
    slot of an (N O) vector, so that the Hessian of (7.111) is Z^T B Z with B block diagonal."""

    def __init__(self, columns: np.ndarray, outputs: np.ndarray, T: np.ndarray) -> None:
        self.N, self.O = T.shape
        self.T = T
        Z = np.zeros((self.N, self.O, columns.shape[1]))
        for p, o in enumerate(outputs):
            Z[:, o, p] = columns[:, p]
        self.Z = Z.reshape(self.N * self.O, -1)

    def _outputs(self, w: np.ndarray) -> tuple[np.ndarray, float]:
        a = (self.Z @ w).reshape(self.N, self.O)
        if self.O == 1:                                   # logistic sigmoid (7.108)
            return 1.0 / (1.0 + np.exp(-a)), float(np.sum(self.T * a - np.logaddexp(0.0, a)))
        m = a.max(axis=1)
        lse = m + np.log(np.exp(a - m[:, None]).sum(axis=1))
        return _softmax(a), float(np.sum(self.T * a) - lse.sum())

    def _B(self, Y: np.ndarray) -> np.ndarray:
        if self.O == 1:
            return np.diag((Y * (1.0 - Y)).ravel())
        blocks = [np.diag(y) - np.outer(y, y) for y in Y]
        B = np.zeros((self.N * self.O, self.N * self.O))
        for n, b in enumerate(blocks):
            B[n * self.O:(n + 1) * self.O, n * self.O:(n + 1) * self.O] = b
        return B

    def mode(self, alpha: np.ndarray, w: np.ndarray) -> np.ndarray:
        """Newton's method on (7.109) with step halving, from w."""
        w = np.array(w, dtype=float)

        def objective(v: np.ndarray) -> float:
            return self._outputs(v)[1] - 0.5 * float(np.sum(alpha * v * v))

        for _ in range(200):
            Y, _ = self._outputs(w)
            g = self.Z.T @ (self.T - Y).ravel() - alpha * w                         # (7.110)
            step = np.linalg.solve(np.diag(alpha) + self.Z.T @ self._B(Y) @ self.Z, g)  # (7.111)
            start, size = objective(w), 1.0
            while objective(w + size * step) < start and size > 1e-10:
                size /= 2
            w = w + size * step
            if g @ step < 1e-22 * (1.0 + abs(start)):
                break
        return w

    def evidence(self, alpha: np.ndarray, w: np.ndarray) -> float:
        """(7.114): ln p(t | w*) + ln p(w* | alpha) + M/2 ln(2 pi) + 1/2 ln|Sigma|."""
        Y, loglik = self._outputs(w)
        _, logdet = np.linalg.slogdet(np.diag(alpha) + self.Z.T @ self._B(Y) @ self.Z)   # |Sigma^-1| (7.113)
        return loglik + 0.5 * float(np.sum(np.log(alpha))) - 0.5 * float(np.sum(alpha * w * w)) - 0.5 * logdet


def _laplace_evidence(Phi: np.ndarray, labels: np.ndarray, result) -> float:
    """(7.114) at the returned alpha, the mode found again by Newton from the returned mean."""
    N = Phi.shape[0]
    K = result.n_classes
    T = labels[:, None].astype(float) if K == 2 else np.eye(K)[labels]
    columns = np.column_stack(([np.ones(N)] if result.bias_used else []) + [Phi[:, j] for j in result.relevance])
    alpha = np.asarray(result.alpha).reshape(columns.shape[1], T.shape[1])
    mean = np.asarray(result.mean).reshape(alpha.shape)
    row, out = np.nonzero(np.isfinite(alpha))
    model = _Laplace(columns[:, row], out, T)
    return model.evidence(alpha[row, out], model.mode(alpha[row, out], mean[row, out]))


def _angle_classes(seed: int, K: int, N: int = 30) -> tuple[np.ndarray, np.ndarray]:
    """K classes by the angle of a 2-d Gaussian point, 15% of the labels redrawn."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, 2))
    labels = ((np.arctan2(X[:, 0], X[:, 1]) + np.pi) / (2 * np.pi) * K).astype(int) % K
    flip = rng.random(N) < 0.15
    labels[flip] = rng.integers(K, size=flip.sum())
    return X, labels


# ----------------------------------------------------------------------------------------------------------
# (3): the log evidence a fit reports is (7.114) at the returned alpha


@pytest.mark.parametrize("seed, K", [(1, 2), (20, 3)])
def test_a_mackay_classification_reports_the_laplace_evidence_of_the_model_it_returns(seed: int, K: int) -> None:
    # MacKay's run ends with the fast moves from its point, the pairs whose alpha ran past TOP_DOWN_PRUNE
    # excluded. Where no move followed, the history's last value was that of MacKay's model with those pairs
    # still in (9.3e-6 and 6.4e-5 nats below here; 5.9e-4 on a 4-class linear-kernel draw), not the returned
    # model's
    X, labels = _angle_classes(seed, K)
    Phi = RBF(0.5)(X, X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = rvm_classification(Phi, labels, "mackay")
    assert result.log_evidence[-1] == pytest.approx(_laplace_evidence(Phi, labels, result), abs=1e-8)
