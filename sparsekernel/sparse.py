"""Inputs that may be ``scipy.sparse``: kept sparse (CSR), never densified.

A sparse X (CSR, CSC or any other scipy format) is held as one CSR matrix of
float64, the layout in which rows, the kernel's unit of work, are cheap to
read. The kernels compute their values from sparse products (x_n^T x_m from
the stored entries only, ||x_n||^2 from the row norms), so an N x D matrix of
density rho costs about 12 rho N D bytes, not 8 N D.

These helpers are the one place that tells a dense array from a sparse
matrix; the rest of the library calls them rather than ``np.asarray``.
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from .errors import ValidationError

__all__ = ["issparse", "as_rows", "to_dense", "row_squared_norms", "variance", "read_only_rows", "same_rows",
           "check_sparse_matrix", "compact_indices", "digest", "frozen", "used_columns", "times_rows",
           "centred_full_columns"]

Array = NDArray[np.float64]


def issparse(X: Any) -> bool:
    """True for any scipy.sparse matrix or array (an ndarray answered first: a fit asks about 40 times)."""
    return type(X) is not np.ndarray and sp.issparse(X)


def as_rows(X: ArrayLike) -> Array | sp.csr_matrix:
    """X as float64: a CSR matrix if X is sparse (no copy when it already is one), else an ndarray."""
    if sp.issparse(X):
        return canonical(sp.csr_matrix(X, dtype=np.float64))
    return np.asarray(X, dtype=np.float64)


def canonical(A: sp.csr_matrix) -> sp.csr_matrix:
    """A with each row's entries sorted and no column stored twice (a copy where A is not so; the caller's
    matrix is left as it is). scipy sums duplicates where it reads a matrix, but the squared norms, the
    variance and the products here read the stored entries: a row storing 0.5 twice for a 1 had norm 0.5."""
    if A.has_canonical_format:
        return A
    A = A.copy()
    A.sum_duplicates()
    return A


def to_dense(X: Any) -> Array:
    """A dense float64 ndarray of X (a copy when X is sparse: only for matrices known to be small)."""
    if sp.issparse(X):
        return np.asarray(X.toarray(), dtype=np.float64)
    return np.asarray(X, dtype=np.float64)


def row_squared_norms(X: Any) -> Array:
    """||x_n||^2 for every row, shape (n,), from the stored entries when X is sparse."""
    if sp.issparse(X):
        A = sp.csr_matrix(X, dtype=np.float64)
        return np.asarray(A.multiply(A).sum(axis=1), dtype=np.float64).ravel()
    A = np.asarray(X, dtype=np.float64)
    return np.einsum("ij,ij->i", A, A)


def variance(X: Any) -> float:
    """The variance of all N D entries of X (the zeros of a sparse X included), as ``X.var()``.

    A dense X is read in blocks of rows (two passes: the mean, then the squared deviations), so
    that no N x D temporary is formed: ``X.var()`` forms one, and the allocator may keep it
    resident through the fit that follows (19 MB at 5,000 x 500). A sparse X's deviations are
    summed over its stored entries, and its implicit zeros' as (N D - stored) mean^2: E[x^2] - mean^2
    cancelled, and a CSR copy of inputs about 1e8 had variance 4.0 where it is 3.13 (gamma='scale'
    0.125 for 0.160: predictions 0.02 from the dense copy's).

    A variance that underflows to 0 where the entries differ (inputs of 1e-200) is returned as the
    smallest positive float, 5e-324, not 0: gamma='scale' read 0 as a constant X and used gamma = 1,
    a model of no input, without a word (``kernels.make_kernel`` refuses the 5e-324).
    """
    if not sp.issparse(X):
        A = np.asarray(X)
        return _unless_underflowed(_dense_variance(A), lambda: A.size > 0 and bool(np.max(A) > np.min(A)))
    A = canonical(sp.csr_matrix(X, dtype=np.float64))
    size = float(A.shape[0]) * float(A.shape[1])
    mean = float(A.sum()) / size
    squares = float(np.sum((A.data - mean) ** 2)) + (size - A.nnz) * mean * mean
    return _unless_underflowed(squares / size, lambda: _sparse_entries_differ(A))


def _unless_underflowed(value: float, differ) -> float:
    """``value``, or the smallest positive float where it is 0 though the entries differ (``differ()``)."""
    return 5e-324 if value == 0.0 and differ() else value


def _sparse_entries_differ(A: sp.csr_matrix) -> bool:
    """Whether the N D entries of A (its implicit zeros included) are not all equal."""
    if A.nnz == 0:
        return False
    low, high = float(np.min(A.data)), float(np.max(A.data))
    if A.nnz < A.shape[0] * A.shape[1]:
        low, high = min(low, 0.0), max(high, 0.0)
    return high > low


#: Entries per block of rows in ``variance`` (1 MB of float64).
VARIANCE_BLOCK = 1 << 17


def _dense_variance(A: NDArray) -> float:
    """``A.var()`` over all entries, block of rows by block of rows."""
    if A.size == 0 or A.ndim != 2:
        return float(np.asarray(A, dtype=np.float64).var())
    step = max(1, VARIANCE_BLOCK // max(A.shape[1], 1))
    blocks = range(0, A.shape[0], step)
    mean = sum(float(np.sum(A[r:r + step], dtype=np.float64)) for r in blocks) / A.size
    squares = sum(float(np.sum((np.asarray(A[r:r + step], dtype=np.float64) - mean) ** 2)) for r in blocks)
    return squares / A.size


def read_only_rows(X: Any, rows: NDArray[np.intp]) -> Any:
    """X[rows] (CSR when X is sparse), with its values read-only."""
    out = X[rows]
    values = out.data if sp.issparse(out) else out
    values.flags.writeable = False
    return out


def same_rows(A: Any, B: Any) -> bool:
    """Whether two matrices, dense or sparse, hold the same values (``np.allclose``'s test, entry
    by entry), without densifying a sparse one."""
    if A.shape != B.shape:
        return False
    if not (sp.issparse(A) or sp.issparse(B)):
        return bool(np.allclose(A, B))
    A, B = sp.csr_matrix(A, dtype=np.float64), sp.csr_matrix(B, dtype=np.float64)
    excess = abs(A - B) - 1e-5 * abs(B)               # |a - b| - rtol |b| <= atol everywhere
    return excess.nnz == 0 or float(excess.max()) <= 1e-8


def check_sparse_matrix(X: Any, name: str = "X") -> sp.csr_matrix:
    """A non-empty 2-D sparse matrix with finite stored values, as CSR float64."""
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise ValidationError(f"{name} must be a non-empty 2-D matrix of shape (n_samples, n_features); "
                              f"got a sparse matrix of shape {X.shape}")
    if np.asarray(X.data).dtype.kind == "c":
        raise ValidationError(f"{name} must be a 2-D array of real numbers; got complex values (dtype {X.dtype})")
    A = compact_indices(canonical(sp.csr_matrix(X, dtype=np.float64)))
    if not np.all(np.isfinite(A.data)):
        A = A.tocoo()
        bad = int(np.flatnonzero(~np.isfinite(A.data))[0])
        raise ValidationError(f"{name} must contain only finite values; got NaN or inf at index "
                              f"({int(A.row[bad])}, {int(A.col[bad])})")
    return A


def compact_indices(A: sp.csr_matrix) -> sp.csr_matrix:
    """A with 32-bit indices where they fit (LIBSVM through scikit-learn refuses 64-bit ones)."""
    if A.indices.dtype == np.int32 and A.indptr.dtype == np.int32:
        return A
    if max(A.nnz, *A.shape) >= np.iinfo(np.int32).max:
        return A
    out = sp.csr_matrix((A.data, A.indices.astype(np.int32), A.indptr.astype(np.int32)), shape=A.shape)
    return out


#: ``used_columns`` renumbers the columns where X has more than this many per stored value (and at least
#: USED_COLUMNS_MIN): a product with X^T, sparse times sparse, builds an index with one entry per column,
#: 8 GB for a LIBSVM file whose one feature index is 2e9, and 383 MB at 10^8 columns for 6 stored values.
USED_COLUMNS_RATIO = 4
USED_COLUMNS_MIN = 1 << 20


def used_columns(*matrices: Any) -> tuple[Any, ...]:
    """Sparse matrices of one column space with their columns renumbered to those any of them uses, in
    order, where their columns far outnumber their stored values (``USED_COLUMNS_RATIO``); else the
    matrices themselves. Dot products and distances of their rows are unchanged (each stored value keeps
    its partner, and the order of the columns), and so are the kernels of them."""
    narrowed = _narrowed(matrices)
    return matrices if narrowed is None else narrowed[1]


def _narrowed(matrices: tuple[Any, ...]) -> tuple[NDArray[np.integer], tuple[Any, ...]] | None:
    """The columns any of the sparse ``matrices`` uses, in order, and the matrices (CSR) renumbered to them, where
    their columns far outnumber their stored values (``USED_COLUMNS_RATIO``); else None."""
    if not all(sp.issparse(M) for M in matrices):
        return None
    n_columns = matrices[0].shape[1]
    stored = sum(M.nnz for M in matrices)
    if n_columns <= max(USED_COLUMNS_MIN, USED_COLUMNS_RATIO * stored):
        return None
    rows = [sp.csr_matrix(M) for M in matrices]
    used = np.unique(np.concatenate([M.indices for M in rows]))
    return used, tuple(sp.csr_matrix((M.data, np.searchsorted(used, M.indices).astype(M.indices.dtype), M.indptr),
                                     shape=(M.shape[0], used.size)) for M in rows)


def times_rows(A: Any, B: Any) -> Any:
    """A @ B for rows B (sparse or dense); where B is sparse with far more columns than stored values
    (``USED_COLUMNS_RATIO``), the product is taken over the columns B uses and its entries put back in
    their columns: the same CSR matrix of B's width.

    Parameters
    ----------
    A : ndarray or sparse matrix, shape (k, n)
    B : ndarray or sparse matrix, shape (n, d)

    Returns
    -------
    ndarray or CSR matrix, shape (k, d)
        A CSR matrix where B is sparse and so renumbered. scipy's sparse product keeps an index of one
        entry per column of B: the linear kernel's w = sum_n coef_n x_n (``coef_``) over 40 stored values
        in 10^8 columns took 1.1 GB and 1.5 s, and at 3e9 columns (int64 indices, which a fit takes)
        more memory than the machine had.
    """
    narrowed = _narrowed((B,))
    if narrowed is None:
        return A @ B
    used, (narrow,) = narrowed
    P = sp.csr_matrix(A @ narrow)
    return sp.csr_matrix((P.data, used[P.indices], P.indptr), shape=(P.shape[0], B.shape[1]))


def centred_full_columns(A: sp.csr_matrix, B: sp.csr_matrix) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """Copies of A and B (CSR, canonical, one column space) with every column that stores a value in every
    row of both shifted by B's mean of it: a translation of both (distances unchanged) that stores no new
    entry, so the rows' norms and products are of the size of the columns' spread, not their offset. A column
    missing from some row is left: shifting it would store a value in every row."""
    full = np.ones(A.shape[1], dtype=bool)
    for M in (A, B):
        full &= np.bincount(M.indices, minlength=M.shape[1]) == M.shape[0]
    A, B = A.copy(), (A.copy() if B is A else B.copy())
    if not full.any() or B.shape[0] == 0:
        return A, B
    centre = np.zeros(B.shape[1])
    centre[full] = np.bincount(B.indices, weights=B.data, minlength=B.shape[1])[full] / B.shape[0]
    for M in (A, B):
        M.data -= centre[M.indices]
    return A, B


def digest(X: Any) -> int:
    """CRC-32 of the values of X (dense, or a sparse matrix's data, indices and offsets): cheap (about
    0.2 ms a megabyte), and changed by any change of an entry in place. What holds a caller's array by
    reference (a fitted SVM's training X, a machine's X) takes it when it is given the array and refuses
    to read an array whose digest has changed since."""
    if sp.issparse(X):
        parts = [X.data, X.indices, X.indptr] if hasattr(X, "indptr") else [X.toarray()]
    else:
        parts = [X]
    crc = 0
    for part in parts:
        part = np.asarray(part)
        if part.flags.f_contiguous and not part.flags.c_contiguous:
            part = part.T                                   # the same bytes, C-ordered
        crc = zlib.crc32(memoryview(np.ascontiguousarray(part)).cast("B"), crc)
    return crc


def frozen(X: Any) -> bool:
    """Whether X cannot be changed in place as it stands: a dense array that owns its memory and is read-only
    (not a view of another array's, which may be writeable). Such an X needs no ``digest``: the one-versus-one
    pairs' inputs, gathered by the estimator for its own machines (45 on digits, whose two CRC-32s each
    cost 7% of the fit)."""
    return isinstance(X, np.ndarray) and bool(X.flags.owndata) and not X.flags.writeable
