"""Input validation shared by every public entry point.

Parameter domains are declared once in ``DOMAINS``; every message follows the
template ``"<name> must be <domain>; got <value>"`` so that the argument, the
expected domain and the value received are always named. Arrays are converted
with ``np.asarray`` (no copy when the dtype already fits) and never written to.
"""

from __future__ import annotations

import math
import numbers
from typing import Callable

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from .errors import SparseInputError, ValidationError

__all__ = [
    "DOMAINS",
    "shown",
    "quoted",
    "check_param",
    "check_finite",
    "check_matrix",
    "check_binary_targets",
    "check_real_targets",
    "check_real_dtype",
    "check_sample_weight",
    "check_same_length",
    "check_target_layout",
    "fail",
]


def _is_real(v: object) -> bool:
    # float and int first: numbers.Real's ABC check costs about 0.4 us, and a fit checks a dozen parameters
    return type(v) is float or type(v) is int or (isinstance(v, numbers.Real) and not isinstance(v, bool))


def _positive(v: object) -> bool:
    return _is_real(v) and math.isfinite(v) and v > 0


def _nonnegative(v: object) -> bool:
    return _is_real(v) and math.isfinite(v) and v >= 0


def _finite(v: object) -> bool:
    return _is_real(v) and math.isfinite(v)


def _unit_interval(v: object) -> bool:
    return _is_real(v) and 0 < v <= 1


def _positive_int(v: object) -> bool:
    return (type(v) is int or (isinstance(v, numbers.Integral) and not isinstance(v, bool))) and v >= 1


# name -> (description of the domain, membership test)
DOMAINS: dict[str, tuple[str, Callable[[object], bool]]] = {
    "C": ("a positive finite number", _positive),
    "nu": ("a number in (0, 1]", _unit_interval),
    "epsilon": ("a non-negative finite number", _nonnegative),
    "gamma": ("a positive finite number", _positive),
    "degree": ("a positive integer", _positive_int),
    "coef0": ("a finite number", _finite),
    "tol": ("a positive finite number", _positive),
    "psd_tol": ("a non-negative finite number", _nonnegative),
    "bound_tol": ("a non-negative finite number (a share of each box)", _nonnegative),
    "cache_mb": ("a positive finite number", _positive),
    "max_iter": ("a positive integer", _positive_int),
    "class_weight": ("a positive finite number", _positive),
}


def fail(name: str, domain: str, value: object) -> ValidationError:
    """Build the ValidationError of the one message template."""
    return ValidationError(f"{name} must be {domain}; got {shown(value)}")


def shown(value: object) -> str:
    """The value as the message quotes it: numpy's scalars as Python's (``0.064``, not ``np.float64(0.064)``,
    which is what a grid from ``np.logspace`` hands a parameter), arrays by shape and dtype."""
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    text = repr(value.item() if isinstance(value, np.generic) else value)
    return text if len(text) <= 80 else text[:77] + "..."


#: how a line of another library's message that shows the data opens (numpy's and scipy's reprs, and
#: scikit-learn's 'array=[...]')
_DATA_LINE = ("[", "<", "array=")


def quoted(exc: BaseException) -> str:
    """Another library's error as a message quotes it, on one line: its words without the data it shows
    (scikit-learn's 'Complex data not supported' is followed by the repr of the whole array, 55 lines of a
    sparse X's entries; 'Expected 2D array, got 1D array instead:' by 'array=[...]', and then by its advice,
    'Reshape your data either using array.reshape(-1, 1) ...', which is kept: scikit-learn's own checks
    look for those words)."""
    words, in_data = [], False
    for line in str(exc).strip().splitlines():
        if line.lstrip().startswith(_DATA_LINE):
            in_data = True
        elif not in_data or _is_prose(line):
            in_data = False
            words.append(line.strip())
    return " ".join(w for w in words if w) or type(exc).__name__


def _is_prose(line: str) -> bool:
    """A line of words after the data a message shows: it opens with a letter at its first column, where
    the continuation lines of a repr open with a space, a tab, a bracket or a digit."""
    return line[:1].isalpha()


def check_param(name: str, value: object, domain: str | None = None) -> float | int:
    """Return ``value`` if it lies in the declared domain of ``domain or name``."""
    key = domain or name
    description, test = DOMAINS[key]
    if not test(value):
        raise fail(name, description, value)
    if type(value) is float or type(value) is int:
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    return float(value)


def check_finite(A: NDArray[np.float64], name: str) -> None:
    """A ValidationError naming ``name`` and the index of the first NaN or inf of ``A`` (an int for a
    vector, a tuple otherwise), where it has one."""
    if np.isfinite(A).all():
        return
    bad = tuple(int(i) for i in np.argwhere(~np.isfinite(A))[0])
    where = bad[0] if A.ndim == 1 else bad
    raise ValidationError(f"{name} must contain only finite values; got NaN or inf at index {where}")


def check_real_dtype(X: ArrayLike, name: str, what: str) -> None:
    """Complex numbers, strings and other non-numbers are refused (numpy would cut complex values
    to their real part, or parse numeric strings, silently)."""
    try:
        dtype = np.asarray(X).dtype
    except (TypeError, ValueError) as exc:       # a ragged list: numpy's "inhomogeneous shape"
        raise fail(name, what, X) from exc
    if dtype.kind == "c":
        raise ValidationError(f"{name} must be {what}; got complex values (dtype {dtype})")
    if dtype.kind in "USO" and not (dtype.kind == "O" and _all_real_numbers(X)):
        first = [v for v in np.asarray(X, dtype=object).ravel().tolist() if not _real_number(v)][:1]
        raise ValidationError(f"{name} must be {what}; got an array of dtype {dtype} holding "
                              f"{first[0]!r}" if first else f"{name} must be {what}; got an empty array of {dtype}")


def _real_number(v: object) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, (str, bytes))


def _all_real_numbers(X: ArrayLike) -> bool:
    return all(_real_number(v) for v in np.asarray(X, dtype=object).ravel())


def check_matrix(X: ArrayLike, name: str = "X", *, square: bool = False, sparse: bool = False) -> NDArray[np.float64]:
    """A finite 2-D float array (a view of the input whenever possible).

    With ``sparse=True`` a scipy.sparse X is accepted and returned as CSR float64 (kept sparse);
    without, it is refused with a ValidationError naming ``name``.
    """
    if sp.issparse(X):
        if not sparse:
            raise SparseInputError(f"{name} must be a dense 2-D array here; got a scipy.sparse matrix of shape "
                                   f"{X.shape} (this step needs dense values: pass {name}.toarray() if it fits)")
        from .sparse import check_sparse_matrix

        A = check_sparse_matrix(X, name)
        if square and A.shape[0] != A.shape[1]:
            raise ValidationError(
                f"{name} must be a square Gram matrix for a precomputed kernel; got shape {A.shape}")
        return A
    check_real_dtype(X, name, "a 2-D array of real numbers")
    try:
        A = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise fail(name, "a 2-D array of real numbers", X) from exc
    if A.ndim == 1:
        raise ValidationError(
            f"{name} must be a 2-D array of shape (n_samples, n_features); got a 1-D array "
            f"of shape {A.shape} (use X.reshape(-1, 1) for a single feature)"
        )
    if A.ndim != 2 or A.shape[0] == 0 or A.shape[1] == 0:
        raise fail(name, "a non-empty 2-D array of shape (n_samples, n_features)", A)
    check_finite(A, name)
    if square and A.shape[0] != A.shape[1]:
        raise ValidationError(
            f"{name} must be a square Gram matrix for a precomputed kernel; got shape {A.shape}"
        )
    return A


def _as_vector(t: ArrayLike, name: str) -> NDArray[np.float64]:
    """t as a 1-D float64 array of finite values: a copy, never the caller's array (a machine keeps its
    targets and weights, and a caller's later change in place must not reach them; N numbers, cheap)."""
    check_real_dtype(t, name, "a 1-D array of real numbers")
    try:
        v = np.array(t, dtype=np.float64, copy=True)
    except (TypeError, ValueError) as exc:
        raise fail(name, "a 1-D array of real numbers", t) from exc
    if v.ndim == 2 and 1 in v.shape:
        raise ValidationError(
            f"{name} must be a 1-D array of shape (n_samples,); got shape {v.shape} "
            f"(use {name}.ravel())"
        )
    if v.ndim != 1 or v.size == 0:
        raise fail(name, "a non-empty 1-D array of shape (n_samples,)", v)
    check_finite(v, name)
    return v


def check_binary_targets(t: ArrayLike, name: str = "t") -> NDArray[np.float64]:
    """Targets of a two-class SVM: every entry -1 or +1, both classes present."""
    v = _as_vector(t, name)
    positive = v == 1.0
    negative = v == -1.0
    if not (positive | negative).all():
        raise ValidationError(
            f"{name} must hold the two class labels -1 and +1; got labels {np.unique(v)[:10].tolist()}"
        )
    if not (positive.any() and negative.any()):
        raise ValidationError(
            f"{name} must hold two classes, -1 and +1; got only the label {np.unique(v).tolist()}"
        )
    return v


def check_real_targets(t: ArrayLike, name: str = "t") -> NDArray[np.float64]:
    """Real-valued regression targets."""
    return _as_vector(t, name)


def check_sample_weight(w: ArrayLike | None, n: int, name: str = "sample_weight") -> NDArray[np.float64]:
    """Positive finite per-sample weights (ones when None)."""
    if w is None:
        return np.ones(n)
    v = _as_vector(w, name)
    if v.shape[0] != n:
        raise ValidationError(f"{name} must have one entry per sample ({n}); got {v.shape[0]}")
    if (v <= 0).any():
        raise ValidationError(
            f"{name} must be positive (drop zero-weight samples first); got {float(v.min())!r} at index "
            f"{int(np.argmin(v))}"
        )
    return v


def check_dense_targets(t: object, name: str = "y") -> None:
    """Targets as a dense array: a scipy.sparse matrix is refused with a SparseInputError naming ``name``
    and its shape (scikit-learn's validate_data raised its own TypeError, 'Sparse data was passed for y,
    but dense data is required', past the estimators' ValidationErrors)."""
    if sp.issparse(t):
        raise SparseInputError(f"{name} must be a dense 1-D array of shape (n_samples,); got a scipy.sparse "
                               f"matrix of shape {t.shape} (pass {name}.toarray().ravel())")


def check_target_layout(t: ArrayLike, n: int, name: str = "y", *, numeric: bool = False) -> None:
    """Targets laid out as one entry per sample: a 1-D array (or a column) of length ``n``, of real
    numbers where ``numeric`` (class labels may be strings, not complex numbers); their values are not checked."""
    if numeric:
        check_real_dtype(t, name, "a 1-D array of real numbers")
    elif np.iscomplexobj(t):
        raise ValidationError(f"{name} must be a 1-D array of class labels (numbers or strings); got complex values")
    try:
        shape = np.shape(t)
    except (TypeError, ValueError) as exc:       # a ragged list
        raise fail(name, "a 1-D array of shape (n_samples,)", t) from exc
    if not (len(shape) == 1 or len(shape) == 2 and shape[1] == 1):
        raise ValidationError(f"{name} must be a 1-D array of shape (n_samples,); got shape {shape}")
    if shape[0] != n:
        raise ValidationError(f"{name} must have one entry per row of X ({n}); got {shape[0]}")


def check_same_length(X: NDArray, t: NDArray, xname: str = "X", tname: str = "t") -> None:
    if X.shape[0] != t.shape[0]:
        raise ValidationError(
            f"{tname} must have one entry per row of {xname} ({X.shape[0]}); got {t.shape[0]}"
        )
