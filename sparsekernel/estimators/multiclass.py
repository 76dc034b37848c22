"""One-versus-one multiclass, as LIBSVM does it: the pairs, the vote, and the layout of dual_coef_;
the class labels of a classifier's y."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import ValidationError
from ..sparse import times_rows
from ..validation import shown

__all__ = ["check_no_missing_labels", "class_labels", "one_versus_one_pairs", "votes", "votes_and_confidences", "libsvm_dual_coef", "one_versus_one_coef"]

Array = NDArray[np.float64]


def class_labels(y: NDArray[Any]) -> tuple[NDArray[Any], NDArray[np.intp]]:
    """scikit-learn's ``check_classification_targets(y)``, then ``classes_`` and each point's class
    index (``np.unique(y, return_inverse=True)``); a ValidationError naming y for fewer than two classes.

    The check's ``type_of_target`` costs about 100 us, a tenth of a fit at N = 100. For a non-empty
    1-D array of integers or booleans its answer is known without it ("binary" or "multiclass", both
    accepted), so the check is called there only where it would warn (more than two classes, more
    than 20 points, and more distinct values than half of them); any other y goes through it.
    """
    from sklearn.utils.multiclass import check_classification_targets

    if isinstance(y, np.ndarray) and y.ndim == 1 and y.dtype.kind in "iub" and y.size:
        classes = np.unique(y)
        labels = classes.searchsorted(y)             # np.unique's inverse, at a third of its cost
        n, k = y.shape[0], classes.shape[0]
        if k > 2 and n > 20 and k > round(0.5 * n):
            check_classification_targets(y)            # its warning: y may be a regression target
        return _two_or_more(classes), labels
    try:
        check_classification_targets(y)
        classes, labels = np.unique(y, return_inverse=True)
    except TypeError as exc:                      # labels that do not sort together: numbers and strings
        raise _unsorted_labels(y, exc) from exc
    except ValueError as exc:                     # "Unknown label type: continuous", kept in the message
        if not _sortable(y):                      # a mix whose first entry is not a string: type "unknown"
            raise _mixed_labels(y) from exc
        raise ValidationError(f"y must hold class labels (integers, strings, booleans, or floats of integer "
                              f"value); got: {exc}") from exc
    return _two_or_more(classes), labels


def check_no_missing_labels(y: Any, name: str = "y") -> None:
    """Refuse labels with a missing entry (None, NaN, NaT or pandas.NA), naming ``name`` and the index of the
    first, before scikit-learn's validation sees them: for an object y it says "Input contains NaN" (which of
    X and y, and where, untold), and pandas.NA (a pandas 'string' column's gap) raises TypeError: boolean
    value of NA is ambiguous. Numeric arrays are left to that validation (its words name y); only labels held
    as objects (strings, pandas extension arrays) are read, one entry at a time.

    Raises
    ------
    ValidationError
        ``name`` must hold a class label in every row, with the missing value and its index.
    """
    if y is None:                                # no y: scikit-learn's words
        return
    try:
        values = np.asarray(y)
    except (TypeError, ValueError):              # ragged or not array-like: scikit-learn's validation words it
        return
    if values.dtype != object:
        return
    for index, value in enumerate(values.ravel().tolist()):      # a column (n, 1): its row
        if _is_missing(value):
            raise ValidationError(f"{name} must hold a class label in every row; got a missing value "
                                  f"({shown(value)}) at index {index}")


def _is_missing(value: Any) -> bool:
    """None, or a value unequal to itself (NaN, NaT), or pandas.NA (whose comparison has no truth value)."""
    if value is None:
        return True
    try:
        return bool(value != value)
    except TypeError:                           # pandas.NA != pandas.NA is NA: "boolean value of NA is ambiguous"
        return True
    except ValueError:                          # an array as a label: not missing; scikit-learn refuses it
        return False


def _sortable(y: NDArray[Any]) -> bool:
    """Whether the labels sort together (np.unique raises no TypeError). scikit-learn's type_of_target calls
    an object array whose first entry is not a string "unknown" before np.unique is reached: [1, "a", ...]
    was refused as "Unknown label type: unknown", where ["a", 1, ...] was named a mix of int and str."""
    try:
        np.unique(np.asarray(y, dtype=object).ravel())
    except TypeError:
        return False
    return True


def _unsorted_labels(y: NDArray[Any], exc: TypeError) -> ValidationError:
    """The error for a TypeError of the label check: a mix of kinds (``_mixed_labels``), or labels of one
    kind that scikit-learn refuses in its own words (bytes: "convert the labels to a string or integer
    format"), which were named "a mix of bytes"."""
    if len(_label_kinds(y)) > 1:
        return _mixed_labels(y)
    return ValidationError(f"y must hold class labels (integers, strings, booleans, or floats of integer value); "
                           f"got labels of type {_label_kinds(y)[0]}: {exc}")


def _label_kinds(y: NDArray[Any]) -> list[str]:
    return sorted({type(v).__name__ for v in np.asarray(y, dtype=object).ravel().tolist()})


def _mixed_labels(y: NDArray[Any]) -> ValidationError:
    """The error for labels that do not sort together (numbers and strings: np.unique's TypeError)."""
    kinds = _label_kinds(y)
    return ValidationError(f"y must hold class labels of one kind, all numbers or all strings; got a mix of "
                           f"{' and '.join(kinds)}")


def _two_or_more(classes: NDArray[Any]) -> NDArray[Any]:
    if classes.shape[0] < 2:
        raise ValidationError(f"y must hold at least two classes; got one class, {shown(classes[0])}")
    return classes


def one_versus_one_pairs(K: int) -> list[tuple[int, int]]:
    """The (positive, negative) class pairs: (1, 0) for two classes, else (i, j) for i < j."""
    return [(1, 0)] if K == 2 else [(i, j) for i in range(K) for j in range(i + 1, K)]


def votes(dec: Array, K: int) -> Array:
    """LIBSVM's votes: its machine of classes (i, j), i < j, votes for i where its value is > 0, else for
    j. Our pair (i, j) is that machine where i < j; the two-class pair (1, 0) (positive for class 1) is
    LIBSVM's machine (0, 1) with minus its value, so a value of exactly 0 goes to class 1, as
    scikit-learn's predict sends it."""
    count = np.zeros((dec.shape[0], K))
    for k, (i, j) in enumerate(one_versus_one_pairs(K)):
        first, second, value = (i, j, dec[:, k]) if i < j else (j, i, -dec[:, k])     # LIBSVM's machine
        wins = value > 0
        count[:, first] += wins
        count[:, second] += ~wins
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
    the support vectors, so that pair k's decision value is x^T w_k + intercept_k (a CSR matrix where
    the support vectors are sparse, over the columns they use: ``sparse.times_rows``)."""
    return times_rows(pair_coef, support_vectors)
