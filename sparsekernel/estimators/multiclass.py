"""One-versus-one multiclass, as LIBSVM does it: the pairs, the vote, and the layout of dual_coef_."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["one_versus_one_pairs", "votes", "votes_and_confidences", "libsvm_dual_coef", "one_versus_one_coef"]

Array = NDArray[np.float64]


def one_versus_one_pairs(K: int) -> list[tuple[int, int]]:
    """The (positive, negative) class pairs: (1, 0) for two classes, else (i, j) for i < j."""
    return [(1, 0)] if K == 2 else [(i, j) for i in range(K) for j in range(i + 1, K)]


def votes(dec: Array, K: int) -> Array:
    """LIBSVM's votes: the machine of pair (i, j) votes for i where its value is > 0, else for j."""
    count = np.zeros((dec.shape[0], K))
    for k, (i, j) in enumerate(one_versus_one_pairs(K)):
        count[:, i] += dec[:, k] > 0
        count[:, j] += dec[:, k] <= 0
    return count


def votes_and_confidences(dec: Array, K: int) -> Array:
    """Pairwise values to one score per class: votes plus confidences squashed into (-1/3, 1/3)."""
    confidence = np.zeros((dec.shape[0], K))
    for k, (i, j) in enumerate(one_versus_one_pairs(K)):
        confidence[:, i] += dec[:, k]
        confidence[:, j] -= dec[:, k]
    return votes(dec, K) + confidence / (3.0 * (np.abs(confidence) + 1.0))


def libsvm_dual_coef(coef: Array, labels: NDArray[np.intp], support: NDArray[np.intp],
                     pairs: list[tuple[int, int]], K: int) -> Array:
    """LIBSVM's layout of ``coef`` (one row per pair, over all N points): a support vector of
    class c has, in row r, its coefficient in the machine against class o, with r = o if o < c
    else o - 1 (binary: one row)."""
    if K == 2:
        return coef[:, support]
    out = np.zeros((K - 1, support.shape[0]))
    pair_of = {pair: k for k, pair in enumerate(pairs)}
    support_labels = labels[support]
    for c in range(K):                           # the columns of class c, one row (opponent o) at a time
        cols = np.flatnonzero(support_labels == c)
        points = support[cols]
        for o in range(K):
            if o != c:
                out[o if o < c else o - 1, cols] = coef[pair_of[(min(c, o), max(c, o))], points]
    return out


def one_versus_one_coef(pair_coef: Array, support_vectors: Array) -> Array:
    """w of each pair's machine in input space (the linear kernel): row k is sum_n coef_kn x_n over
    the support vectors, so that pair k's decision value is x^T w_k + intercept_k."""
    return pair_coef @ support_vectors
