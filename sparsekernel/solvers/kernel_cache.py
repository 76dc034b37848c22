"""Kernel rows on demand for the SMO solver: Q as an interface, not a matrix.

The SMO solver needs rows k(x_n, .) of the N x N kernel matrix, two or three
at a time. As LIBSVM's ``Cache``/``get_Q`` does, this module keeps the most
recently used rows in a fixed budget of ``cache_mb`` megabytes and evicts the
least recently used row when a new one is needed. Unlike LIBSVM, which
evaluates a row one kernel value at a time, rows are computed in blocks with
one BLAS matrix product per block of columns:

    RBF         k(x_n, x_m) = exp(2 gamma x_n^T x_m - gamma ||x_n||^2 - gamma ||x_m||^2)
                (one product of the augmented matrices [sqrt(2 gamma) X, -gamma ||x||^2, 1]
                and [sqrt(2 gamma) X, 1, -gamma ||x||^2]; X centred first, since the
                distance does not change and the cancellation is smaller); for float32
                rows, exp(-gamma ||x_n - x_m||^2) summed directly in float32 in a
                compiled loop (no cancellation; absolute error ~1e-7, a few times the
                float32 rounding of the value itself), which reads a quarter of the
                data that a one-row product does
    Linear      x_n^T x_m
    Polynomial  (gamma x_n^T x_m + coef0)^degree
    Sigmoid     tanh(gamma x_n^T x_m + coef0)
    Precomputed the rows of the Gram matrix X itself
    other       the kernel object's own ``k(X[rows], X)``

A sparse X (CSR) is never densified: a block of rows is one sparse-times-sparse
product X[rows] X^T (X^T kept once as CSR), which touches only the stored
entries that meet (LIBSVM merges the index lists of two rows entry by entry;
here a row of K costs the products of x_r's entries with the columns of X that
hold them), and the RBF exponent is formed from the row norms,
2 gamma x_n^T x_m - gamma ||x_n||^2 - gamma ||x_m||^2 (not centred: centring
would fill the matrix in).

Rows are indexed by training point, not by QP variable: the 2N variables of
the regression machines share the N rows (Q_ij = scale y_i y_j k(x_index(i),
x_index(j)) is expanded with its signs by the solver).

Rows are stored as float64 while the whole float64 Gram matrix would take at
most 16 MiB (N <= 1448) and as float32 above, like LIBSVM's ``Qfloat``: the
exponent and the dot products are always formed in float64 and rounded once,
so a float32 value is the kernel value to a relative 6e-8; the solver
accumulates its gradient in float64. Float32 halves the memory and the
traffic of the large problems; on small ones float64 costs little and spares
ill-conditioned problems (a rank-2 linear kernel with a large C, say) the
rounding of Q, on which SMO can creep for millions of steps short of tol 1e-6.

The arrays ``store``, ``slot_of`` and ``last_used`` are shared with the
compiled solver loop (``_smo_numba``, bound by ``_smo_loops``), which reads rows and marks them used;
only :meth:`KernelRowCache.fill` writes rows.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from numpy.typing import NDArray

from ..kernels import (DIRECT_EXPONENT_ROUNDING, RBF, Kernel, Linear, Polynomial, Precomputed, Sigmoid,
                       direct_exponent, product_rounding, sparse_product_rounding, sparse_rbf)
from ..sparse import issparse, row_squared_norms, used_columns
from ._smo_loops import claim_slots, exp32_inplace, exp_inplace, rbf_exponents
from ._smo_numba import RBF_CHUNK

__all__ = ["KernelRowCache", "GroupBlocks", "row_dtype", "MIN_SLOTS", "slots_for", "fitting"]

#: double precision's machine epsilon (the RBF values' rounding bound, ``rbf_value_rounding``)
EPS64 = float(np.finfo(np.float64).eps)

Array = NDArray[np.float64]

#: Rows are float64 while the whole float64 Gram matrix takes at most this many bytes
#: (N <= 1448), float32 (LIBSVM's Qfloat) above. At 32 MiB (N <= 2048) a fit at N = 2,000 held
#: 1.8-1.9 times LIBSVM's peak memory (benchmarks/sparse_vs_libsvm.py); the float64 refinement of
#: the float32 runs (``smo._Run.refined``) keeps their answers to the float64 ones' tolerance.
DOUBLE_GRAM_BYTES = 16 * (1 << 20)
#: Fewest rows the cache holds whatever ``cache_mb`` says (a step needs two rows,
#: the nu selection three, and one more may be pinned while they are fetched).
MIN_SLOTS = 4
#: Entries per chunk of a block product: a float64 chunk of 128K entries stays in L2.
CHUNK_ENTRIES = 1 << 17
#: Entries per block of the float64 products (1 MB, in L2).
PRODUCT_ENTRIES = 1 << 17
#: Fewest columns per chunk.
COLUMN_CHUNK = 1024
MEGABYTE = 1 << 20
#: Entries of the dense float64 block of dot products of a sparse X (8 MB).
SPARSE_GROUP_ENTRIES = 1 << 20
#: ``CentredRBF.products`` clamps the exponent at 0 (a distance is >= 0) only where its rounding bound
#: exceeds this: below it the clamp moves no value by more than that relative amount, and its pass over
#: each block cost 15% of the products (issue 18's N = 5,000); above it (inputs of norm 1e7, say) a
#: rounding can make an exponent of 0 a large positive one, and exp overflow.
EXPONENT_ROUNDING_FREE = 1e-12


def row_dtype(n_points: int) -> type:
    """float64 rows for problems whose whole float64 Gram matrix is small, else float32."""
    return np.float64 if 8 * n_points * n_points <= DOUBLE_GRAM_BYTES else np.float32


def fitting(cache_mb: float, item_bytes: int, most: int) -> int:
    """How many items of ``item_bytes`` bytes fit in ``cache_mb`` megabytes, at most ``most``: a budget too
    large to count in bytes (1e308 MB is inf bytes, whose int is an error) holds ``most``."""
    room = cache_mb * MEGABYTE / item_bytes
    return most if room >= most else int(room)


def slots_for(cache_mb: float, n_points: int, dtype: type = np.float32) -> int:
    """Number of kernel rows of length ``n_points`` that fit in ``cache_mb`` megabytes."""
    fit = fitting(cache_mb, np.dtype(dtype).itemsize * n_points, n_points)
    return max(min(MIN_SLOTS, n_points), fit)


class KernelRowCache:
    """Least-recently-used cache of kernel rows, filled in BLAS blocks.

    Parameters
    ----------
    kernel : Kernel
    X : array (N, D)
        Training inputs (the Gram matrix for ``Precomputed``).
    cache_mb : float
        Memory budget for the rows, in megabytes (2^20 bytes, as LIBSVM).
    dtype : numpy float type, optional
    shift : array (N,) or None
        A diagonal added to the kernel: the cache then holds the rows of
        K + diag(shift) (the L2-loss SVMs' I / (2C), in kernel units).

    Attributes
    ----------
    dtype : numpy float type
        Storage type of the rows (``row_dtype(N)`` unless given).
    store : array (n_slots, N)
        The cached rows.
    slot_of : int64 array (N,)
        Slot holding point n's row, or -1.
    owner : int64 array (n_slots,)
        Point whose row a slot holds, or -1.
    last_used : int64 array (n_slots,)
        Clock value of the last use of each slot (-1: never filled).
    rows_computed : int
        Rows computed so far (a measure of the kernel work).
    """

    def __init__(self, kernel: Kernel, X: Array, cache_mb: float, dtype: type | None = None,
                 shift: Array | None = None) -> None:
        self.kernel = kernel
        self.shift = None if shift is None else np.asarray(shift, dtype=np.float64)
        self.X = X
        self.N = int(X.shape[0])
        self.dtype = row_dtype(self.N) if dtype is None else dtype
        self.n_slots = slots_for(cache_mb, self.N, self.dtype)
        self.store = np.empty((self.n_slots, self.N), dtype=self.dtype)
        self.slot_of = np.full(self.N, -1, dtype=np.int64)
        self.owner = np.full(self.n_slots, -1, dtype=np.int64)
        self.last_used = np.full(self.n_slots, -1, dtype=np.int64)
        self.rows_computed = 0
        self.filled_slots = np.zeros(1, dtype=np.int64)      # slots filled so far (they fill in order)
        self._block_fn: BlockFunction | None = None          # built on first use
        self._exact_fn: ExactFunction | None = None
        self._shared_operand = None                          # see ``_shared``, built once
        self._sparse_X = None                                # a sparse X as the products read it, with it
        self._direct = None
        if isinstance(kernel, RBF) and self.dtype == np.float32 and not issparse(X):
            sums = np.empty(2 * RBF_CHUNK, dtype=np.float32)          # rbf_exponents' two rows' sums
            self._direct = (_centred_float32_transpose(X), float(kernel.gamma), sums)

    def value_rounding(self) -> float | None:
        """``Machine.kernel_entry_error`` of the RBF kernel on this cache's dense X, read from the operands its
        rows were computed from (``RBFOperands``, ``CentredRBF``: centred at X's mean, as the machine's bound);
        None where none were built (another kernel, a sparse X, rows filled from elsewhere)."""
        ops = self._shared_operand
        if not isinstance(ops, (RBFOperands, CentredRBF)):
            return None
        return rbf_value_rounding(ops.s, ops.direct)

    def entry_error(self, diagonal_max: float) -> float:
        """A bound on |stored - exact| of any entry of a cached row (``diagonal_max``: max_n |k(x_n, x_n)| plus
        the shift): 0 for float64 rows; for float32 rows one rounding of a float64 value, eps_32 times
        ``diagonal_max`` (|k_nm| <= max k_nn for a positive semidefinite kernel), except for the RBF
        rows of the compiled distance loop (``_direct``), which compute in float32 from the centred inputs.

        For those, with u = eps_32 / 2, R = max_n ||x_n - mean|| and k = exp(-gamma S), S the squared
        distance: the inputs' rounding moves S by at most 2u ||x - y|| (||x|| + ||y||) + u^2 (2R)^2, the
        float32 differences, squares and sum by (D + 3) u S, the product with gamma and the exp add
        u gamma S and 2 ulps of k. With k gamma S <= 1/e and k sqrt(gamma) ||x - y|| <= 1/sqrt(2e),
        |dk| <= u (4 + (D + 4)/e + 4 sqrt(gamma) R / sqrt(2e) + 4 gamma R^2 u), taken twice here for the
        terms of second order, plus the shift's rounding. Far from the mean (R sqrt(gamma) >> 1) it
        grows with R: there a row's values are much coarser than float32's rounding of them.
        """
        if self.dtype == np.float64:
            return 0.0
        eps = float(np.finfo(np.float32).eps)
        if self._direct is None:
            return eps * diagonal_max
        Xt, gamma, _ = self._direct
        u, D, R = 0.5 * eps, Xt.shape[0], self._direct_radius
        shift = 0.0 if self.shift is None else u * float(np.max(np.abs(self.shift), initial=0.0))
        return 2.0 * u * (4.0 + (D + 4.0) / math.e + 4.0 * math.sqrt(gamma) * R / math.sqrt(2.0 * math.e)
                          + 4.0 * gamma * R * R * u) + shift

    def loop_operands(self) -> tuple[NDArray[np.float32], NDArray[np.float32]] | None:
        """(X^T centred, in float32, and the two rows' sums) of the compiled distance loop, where the SMO's
        compiled loop computes a missing row itself (``_smo_numba.fill_here``: float32 RBF rows of a dense X,
        no diagonal shift), as ``fill`` would; else None (the loop asks its caller for them)."""
        if self._direct is None or self.shift is not None:
            return None
        return self._direct[0], self._direct[2]

    @functools.cached_property
    def _direct_radius(self) -> float:
        """max_n ||x_n - mean|| of the compiled distance loop's float32 inputs (``entry_error``)."""
        Xt = self._direct[0]
        squares = np.zeros(Xt.shape[1])
        for d in range(Xt.shape[0]):
            squares += np.square(Xt[d], dtype=np.float64)
        return math.sqrt(float(np.max(squares, initial=0.0)))

    @functools.cached_property
    def row_work(self) -> float:
        """Multiply-adds of one computed row, on average over the rows: N (D + 1) for a dense X; for a
        sparse X the products of the row's stored entries with the columns that hold them,
        sum_c nnz_c^2 / N over the columns c, plus the N values written; N for a precomputed Gram
        matrix."""
        N = self.N
        if isinstance(self.kernel, Precomputed):
            return float(N)
        if issparse(self.X):
            X = self.X
            column_nnz = (np.diff(X.indptr) if X.format == "csc"
                          else np.bincount(X.tocsr().indices, minlength=X.shape[1]))
            return float(np.sum(column_nnz.astype(np.float64) ** 2)) / N + N
        return float(N) * (self.X.shape[1] + 1)

    @property
    def complete(self) -> bool:
        """Whether every point's row is held: all N slots filled (each holds a distinct point), so
        that no row is missing and none is ever evicted."""
        return int(self.filled_slots[0]) >= self.N

    @property
    def n_free(self) -> int:
        """Slots never filled yet."""
        return self.n_slots - int(self.filled_slots[0])

    def diag(self) -> Array:
        """k(x_n, x_n) (+ shift_n) for every training point."""
        d = np.asarray(self.kernel.diag(self.X), dtype=np.float64)
        return d if self.shift is None else d + self.shift

    def _add_shift(self, points: NDArray[np.int64], out: NDArray[np.floating]) -> None:
        """out[r, points[r]] += shift[points[r]]: the rows of K + diag(shift)."""
        if self.shift is not None:
            out[np.arange(points.size), points] += self.shift[points]

    def fill(self, points: NDArray[np.intp], clock: int) -> int:
        """Compute the rows of ``points`` (not cached, distinct) into the least recently used slots.

        At most ``n_slots`` points; a row in use while the solver asks for
        more is the most recently used one and survives a fill of fewer than
        ``n_slots`` rows. Returns the clock after marking the new rows as used.
        """
        points = np.asarray(points, dtype=np.int64)
        k = points.size
        if k == 0:
            return clock
        if k > self.n_slots:
            raise ValueError(f"cannot fill {k} rows into a cache of {self.n_slots} rows")
        slots = np.empty(k, dtype=np.int64)
        clock = claim_slots(points, slots, self.slot_of, self.owner, self.last_used, self.filled_slots, clock)
        self._compute_into(points, slots)
        if self.shift is not None:
            self.store[slots, points] += self.shift[points].astype(self.dtype)
        self.rows_computed += k
        return clock

    def fill_all(self, block: int, clock: int) -> int:
        """Every row not cached yet, ``block`` rows at a time (the cache must hold all N rows);
        returns the clock after them."""
        if self.n_slots < self.N:
            raise ValueError(f"cannot hold all {self.N} rows in a cache of {self.n_slots} rows")
        for p0 in range(0, self.N, block):
            points = np.arange(p0, min(p0 + block, self.N), dtype=np.int64)
            clock = self.fill(points[self.slot_of[points] < 0], clock)       # a kept cache has some already
        return clock

    def fill_whole(self, block: int, clock: int) -> int:
        """Every row not cached yet, of a cache that holds all N rows, as ``fill_all`` does; returns the
        clock after them.

        Where none is cached yet, the rows are float64 and X is dense, for the RBF kernel and the
        kernels of x_n^T x_m, the whole Gram matrix is one symmetric product Z Z^T (BLAS's syrk: half
        the multiply-adds of the row blocks' products), written into the store; else ``fill_all`` in
        blocks of ``block`` rows. The one-versus-one pairs of digits (360 points, 64 features) spend
        two thirds of their kernel time in these products.
        """
        if self.complete:                           # filled already (a pair's cache from ``GroupBlocks``)
            return clock
        if not self._whole_product(self.store[:self.N]):
            return self.fill_all(block, clock)
        self.rows_computed += self.N
        return self.mark_filled(clock)

    def mark_filled(self, clock: int) -> int:
        """Record that ``store[:N]`` holds the whole Gram matrix, slot r point r's row (written by
        ``fill_whole``, or by the caller: ``GroupBlocks``), adding the shift to its diagonal;
        returns the clock after the N rows. ``rows_computed`` is the caller's to count."""
        N = self.N
        if self.n_slots < N:
            raise ValueError(f"cannot hold all {N} rows in a cache of {self.n_slots} rows")
        if self.shift is not None:
            self.store[np.arange(N), np.arange(N)] += self.shift
        points = np.arange(N, dtype=np.int64)
        self.slot_of[:] = points
        self.owner[:N] = points
        self.last_used[:N] = clock + points
        self.filled_slots[0] = N
        return clock + N

    def _whole_product(self, K: NDArray[np.floating]) -> bool:
        """K[:] = the Gram matrix by one symmetric product, where ``fill_whole`` says; whether it did."""
        if (self.filled_slots[0] != 0 or self.n_slots < self.N or self.dtype != np.float64
                or not GroupBlocks.supports(self.kernel, self.X)):
            return False
        if isinstance(self.kernel, RBF):
            ops = self._shared()
            if ops.direct:                       # the product's terms cancel beyond double precision
                exp_in_place(ops.exponent(np.arange(self.N), 0, self.N, K))
            else:
                _product_block(self.kernel, ops.Z, ops.Z, ops.s, ops.s, K)
        else:
            X = np.ascontiguousarray(self.X, dtype=np.float64)
            _product_block(self.kernel, X, X, None, None, K)
        return True

    def touch(self, points: NDArray[np.intp], clock: int) -> int:
        """Mark the cached rows of ``points`` as just used (so that a fill keeps them)."""
        slots = self.slot_of[np.asarray(points, dtype=np.int64)]
        slots = slots[slots >= 0]
        self.last_used[slots] = np.arange(clock, clock + slots.size)
        return clock + slots.size

    def _compute_into(self, points: NDArray[np.int64], slots: NDArray[np.int64]) -> None:
        """store[slots] = K[points], chunk of columns by chunk of columns."""
        first, last = int(slots[0]), int(slots[-1])
        if self._direct is not None:                 # RBF into float32 rows: exponents, then exp
            Xt, gamma, acc = self._direct
            rbf_exponents(Xt, points, gamma, self.store, slots, acc)
            if _consecutive(slots):                  # the exp of the SMO loop's own rows (``fill_here``)
                exp32_inplace(self.store[first:last + 1].reshape(-1))
            else:
                for s in slots:
                    exp32_inplace(self.store[s])
            return
        if _consecutive(slots):
            self._compute_rows(points, self.store[first:last + 1])
            return
        block = np.empty((points.size, self.N), dtype=self.dtype)
        self._compute_rows(points, block)
        self.store[slots] = block

    def _compute_rows(self, points: NDArray[np.int64], out: NDArray[np.float32]) -> None:
        # a sparse X: one product for all the columns (X^T is not sliced), in groups of rows
        width = self.N if issparse(self.X) else max(COLUMN_CHUNK, CHUNK_ENTRIES // max(points.size, 1))
        for c0 in range(0, self.N, width):
            c1 = min(c0 + width, self.N)
            self._block(points, c0, c1, out[:, c0:c1])

    def rows(self, points: NDArray[np.intp]) -> NDArray[np.float32]:
        """Rows of ``points`` as a new (len, N) array, without touching the cache."""
        points = np.asarray(points, dtype=np.int64)
        out = np.empty((points.size, self.N), dtype=self.dtype)
        self._compute_rows(points, out)
        self._add_shift(points, out)
        return out

    def _shared(self):
        """The operand that the rows and the float64 products share, built on first use: X^T as CSR
        (D, N) for a sparse X; for the RBF kernel on a dense X ``RBFOperands`` (float64 rows) or
        ``CentredRBF`` (float32 rows, which the compiled loop computes); else None."""
        if self._shared_operand is None:
            if issparse(self.X):
                self._sparse_X, = used_columns(self.X)          # far more columns than values: those used
                self._shared_operand = self._sparse_X.T.tocsr()
            elif isinstance(self.kernel, RBF) and self._direct is not None:   # float32 rows: no Z kept
                self._shared_operand = CentredRBF(self.X, self.kernel.gamma)
            elif isinstance(self.kernel, RBF):
                self._shared_operand = rbf_operands(self.X, self.kernel.gamma)
        return self._shared_operand

    def _rows_of(self) -> Any:
        """X as the products read it: for a sparse X the one ``_shared`` renumbered with its X^T (its
        columns those used, where they far outnumber its values), else X."""
        self._shared()
        return self.X if self._sparse_X is None else self._sparse_X

    def _block(self, rows: NDArray[np.int64], c0: int, c1: int, out: NDArray[np.floating]) -> None:
        if self._block_fn is None:
            self._block_fn = _block_function(self.kernel, self._rows_of(), self._shared())
        self._block_fn(rows, c0, c1, out)

    def _exact(self, cols: NDArray[np.int64]) -> Callable[[NDArray[np.int64]], Array]:
        if self._exact_fn is None:
            self._exact_fn = _exact_function(self.kernel, self._rows_of(), self._shared())
        return self._exact_fn(cols)

    def products(self, rows: NDArray[np.intp], cols: NDArray[np.intp], coef: Array) -> Array:
        """(K + diag(shift))[rows][:, cols] @ coef in float64 throughout (blocks of rows, nothing cached);
        ``coef`` (len(cols),) or (len(cols), m): m products for the kernel work of one."""
        rows = np.asarray(rows, dtype=np.int64)
        cols = np.asarray(cols, dtype=np.int64)
        out = np.zeros((rows.size,) + np.shape(coef)[1:])
        if cols.size == 0:
            return out
        shared = self._shared()
        if isinstance(shared, CentredRBF):
            shared.products(rows, cols, coef, out)
        else:
            exact = self._exact(cols)
            step = max(1, PRODUCT_ENTRIES // cols.size)
            for r0 in range(0, rows.size, step):
                out[r0:r0 + step] = exact(rows[r0:r0 + step]) @ coef
        if self.shift is not None:
            position = np.full(self.N, -1, dtype=np.int64)
            position[cols] = np.arange(cols.size)
            hit = position[rows] >= 0
            shift = self.shift[rows[hit]]
            out[hit] += (shift if out.ndim == 1 else shift[:, None]) * coef[position[rows[hit]]]
        return out


BlockFunction = Callable[[NDArray[np.int64], int, int, NDArray[np.float32]], None]


class GroupBlocks:
    """float64 kernel blocks K(X_c, X_d) between groups of the points of X (the classes of a
    multiclass fit), from which the row cache of the union of two groups is filled: the
    one-versus-one pairs.

    Each pair's own whole Gram matrix (``KernelRowCache.fill_whole``) would
    compute every block within a class once for each of the K - 1 pairs that
    hold the class: half the entries of all the pairs' matrices for K classes
    of equal size. Here the block within a group is computed once and kept
    (one symmetric product each), the block between two groups once, when
    their pair's cache is filled, and the inputs' operands (the RBF's centred
    Z and s) once for all. A pair's points are the first group's, then the
    second's (LIBSVM's grouping of a pair's points).

    Parameters
    ----------
    kernel : Kernel
        RBF, Linear, Polynomial or Sigmoid (``supports``).
    X : array (N, D), dense
    groups : sequence of int arrays
        The points of each group, in the order a pair takes them.
    """

    def __init__(self, kernel: Kernel, X: Array, groups: list[NDArray[np.intp]]) -> None:
        self.kernel = kernel
        # the operands of the groups' points alone, in X's order (the RBF's centring by their mean):
        # a fit whose other points have weight 0 computes what a fit without them does
        members = np.unique(np.concatenate([np.asarray(g, dtype=np.int64) for g in groups]))
        position = [np.searchsorted(members, g) for g in groups]
        inputs = X if members.size == X.shape[0] else X[members]
        if isinstance(kernel, RBF):
            ops = rbf_operands(inputs, kernel.gamma)
            rows, s = ops.Z, ops.s
        else:
            rows, s = np.ascontiguousarray(inputs, dtype=np.float64), None
        #: the blocks' products round beyond ``DIRECT_EXPONENT_ROUNDING`` (their operands centred at the mean of all
        #: the groups' points): a caller leaves them out (the pairs' own operands, centred at their own means,
        #: round less, or are summed from differences where they too would not)
        self.direct = s is not None and ops.direct
        self.sizes = [p.size for p in position]
        self._rows = [rows[p] for p in position]                # each group's operand rows, gathered once
        self._s = None if s is None else [s[p] for p in position]
        # the RBF's blocks between two groups as one product of augmented rows, [z, s, 1] [z', 1, s']^T
        # = z^T z' + s + s' (the exponent of ``RBFOperands``) with no additions after it: 190 against
        # 215 us for a 180 x 180 block of digits (the additions read and wrote the block twice)
        self._left = self._right = None
        if s is not None:
            ones = [np.ones((p.size, 1)) for p in position]
            self._left = [np.hstack([Z, s_c[:, None], one]) for Z, s_c, one in zip(self._rows, self._s, ones)]
            self._right = [np.hstack([Z, one, s_c[:, None]]) for Z, s_c, one in zip(self._rows, self._s, ones)]
        self._within: dict[int, Array] = {}
        self.entries_computed = 0

    @staticmethod
    def supports(kernel: Kernel, X: Array) -> bool:
        """Whether the blocks can be formed here: a dense X and a kernel of x^T y or of the distance."""
        return not issparse(X) and isinstance(kernel, (RBF, Linear, Polynomial, Sigmoid))

    def _product(self, c: int, d: int, out: Array) -> None:
        """out[:] = K(X_c, X_d), one (symmetric where c == d) product and the kernel's map."""
        if self._left is not None and c != d:
            np.matmul(self._left[c], self._right[d].T, out=out)
            exp_in_place(out)
        else:           # within a group one symmetric product (syrk), whose block is exactly symmetric
            s_c, s_d = (None, None) if self._s is None else (self._s[c], self._s[d])
            _product_block(self.kernel, self._rows[c], self._rows[d], s_c, s_d, out)
        self.entries_computed += out.size

    def entry_error(self, c: int, d: int) -> float:
        """A bound on the rounding of one kernel value between the points of groups c and d as computed
        here, beyond eps max k(x, x): ``Machine.kernel_entry_error``'s 4 eps gamma R^2 with R the largest
        distance of their points from the mean of all the groups' points, at which the operands are
        centred (not the pair's own mean); 0 for a kernel other than the RBF."""
        if self._s is None:
            return 0.0
        return max(rbf_value_rounding(self._s[c], False), rbf_value_rounding(self._s[d], False))

    def within(self, c: int) -> Array:
        """K(X_c, X_c), computed on first use and kept."""
        if c not in self._within:
            n = self.sizes[c]
            block = np.empty((n, n))
            self._product(c, c, block)
            self._within[c] = block
        return self._within[c]

    def cache(self, c: int, d: int, X_pair: Array, cache_mb: float) -> KernelRowCache:
        """The float64 row cache of the points of groups c then d (inputs ``X_pair``, in that order),
        every row filled from the blocks (its ``rows_computed`` stays 0: ``entries_computed`` counts
        the kernel values computed here)."""
        cache = KernelRowCache(self.kernel, X_pair, cache_mb, np.float64)
        n_c = self.sizes[c]
        n = n_c + self.sizes[d]
        if cache.N != n or cache.n_slots < n:
            raise ValueError(f"a cache of groups {c} and {d} holds {n} rows; got {cache.N} points and "
                             f"{cache.n_slots} slots")
        K = cache.store[:n]
        K[:n_c, :n_c] = self.within(c)
        K[n_c:, n_c:] = self.within(d)
        between = np.empty((n_c, n - n_c))       # contiguous: the product, additions and exp run faster
        self._product(c, d, between)             # there than on the strided block (160 against 200 us on digits)
        K[:n_c, n_c:] = between
        K[n_c:, :n_c] = between.T
        cache.mark_filled(0)
        return cache


def rbf_value_rounding(s: Array, direct: bool) -> float:
    """``Machine.kernel_entry_error`` of RBF values computed from operands with s = -gamma ||x - c||^2 (centred
    at c): 4 eps gamma R^2, R = max ||x - c||; ``DIRECT_EXPONENT_ROUNDING`` where the exponent is summed from the
    differences instead (``direct``)."""
    if direct:
        return DIRECT_EXPONENT_ROUNDING
    return 4.0 * EPS64 * max(-float(s.min(initial=0.0)), 0.0)


def _consecutive(slots: NDArray[np.int64]) -> bool:
    """Whether ``slots`` are first, first + 1, ..., last: one block of the store (a fill asks for a
    few rows, so a list comparison, about a microsecond, costs less than numpy's diff and all)."""
    listed = slots.tolist()
    return listed == list(range(listed[0], listed[0] + len(listed)))


def _product_block(kernel: Kernel, A: Array, B: Array, s_A: Array | None, s_B: Array | None, out: Array) -> None:
    """out[:] = the kernel between the rows of A and of B from one product A B^T: for the RBF kernel
    A and B are rows of Z and s their -gamma ||x - mean||^2 (``RBFOperands``), exp(z^T z' + s + s');
    else rows of X, and the kernel's map of x^T x'. With B the same array as A numpy calls syrk."""
    np.matmul(A, B.T, out=out)
    if s_A is None:
        _dot_kernel(kernel, out, None, None)
        return
    out += s_A[:, None]
    out += s_B[None, :]
    exp_in_place(out)


def exp_in_place(a: Array) -> Array:
    """a[:] = exp(a), returned: float64 kernel values by the compiled SIMD loop (``_smo_numba.exp_inplace``,
    within one unit in the last place of numpy's exp and 2.4 times as fast on CPUs without AVX-512,
    where numpy's is a scalar loop: 180 against 75 us for a 180 x 180 block), where ``a`` is
    C-contiguous; numpy's exp otherwise."""
    if a.dtype == np.float64 and a.flags.c_contiguous:
        exp_inplace(a.reshape(-1))
    else:
        np.exp(a, out=a)
    return a


def _centred_float32_transpose(X: Array) -> NDArray[np.float32]:
    """(X - mean)^T (D, N) in float32 for the compiled distance loop, centred in float64 a block of
    rows at a time (no N x D float64 temporary: 20 MB at 5,000 x 500)."""
    mean = np.mean(X, axis=0)
    out = np.empty((X.shape[1], X.shape[0]), dtype=np.float32)
    for r0 in range(0, X.shape[0], COLUMN_CHUNK):
        out[:, r0:r0 + COLUMN_CHUNK] = (np.asarray(X[r0:r0 + COLUMN_CHUNK], dtype=np.float64) - mean).T
    return out


def _block_function(kernel: Kernel, X: Array, shared=None) -> BlockFunction:
    """(rows, c0, c1, out) -> out[:] = K[rows, c0:c1] in float32, by the fastest route for the kernel
    (``shared``: ``KernelRowCache._shared``)."""
    if issparse(X) and isinstance(kernel, (RBF, Linear, Polynomial, Sigmoid)):
        return _sparse_block(X, kernel, shared)
    if isinstance(kernel, Precomputed):
        def precomputed(rows: NDArray[np.int64], c0: int, c1: int, out: NDArray[np.float32]) -> None:
            out[:] = X[rows, c0:c1]
        return precomputed
    if isinstance(kernel, RBF):
        return _rbf_block(shared if isinstance(shared, RBFOperands) else rbf_operands(X, kernel.gamma))
    if isinstance(kernel, (Linear, Polynomial, Sigmoid)):
        return _dot_block(X, kernel)

    def generic(rows: NDArray[np.int64], c0: int, c1: int, out: NDArray[np.float32]) -> None:
        out[:] = kernel(X[rows], X[c0:c1])
    return generic


@dataclass(frozen=True)
class RBFOperands:
    """The RBF exponent as one product: -gamma ||x_n - x_m||^2 = z_n^T z_m + s_n + s_m, with
    Z = sqrt(2 gamma) (X - mean) (N, D) and s = -gamma ||x - mean||^2 (N,). Centring X keeps the
    cancellation of the three terms small; the products read Z and a transposed view of it (one
    N x D copy of X in all)."""

    Z: Array
    s: Array
    #: the exponent from the differences (``direct_exponent``), where the product's rounding is too large
    direct: bool = False

    def exponent(self, rows: NDArray[np.int64], c0: int, c1: int, out: Array) -> Array:
        """out[:] = -gamma ||x_r - x_m||^2 for r in ``rows``, m in [c0, c1) (float64)."""
        if self.direct:
            return direct_exponent(self.Z[rows], self.Z[c0:c1], out)
        np.matmul(self.Z[rows], self.Z[c0:c1].T, out=out)
        out += self.s[rows, None]
        out += self.s[None, c0:c1]
        return out


class CentredRBF:
    """The RBF exponent of ``RBFOperands`` without its N x D copy Z: rows of Z formed when needed.

    For the float32 rows of a dense X (N > 1448) the rows come from the
    compiled distance loop, which holds its own float32 copy of X; a float64 Z
    beside it, for the float64 products of the final gradient alone, doubled
    that (20 MB at 5,000 x 500). Here those products take the columns in
    chunks of ``COLUMN_CHUNK`` points, each chunk's rows of Z formed once.
    """

    def __init__(self, X: Array, gamma: float) -> None:
        self.X, self.c = X, math.sqrt(2.0 * gamma)
        self.mean = np.mean(X, axis=0)
        self.s = np.empty(X.shape[0])
        for r0 in range(0, X.shape[0], COLUMN_CHUNK):
            Z = self.rows(np.arange(r0, min(r0 + COLUMN_CHUNK, X.shape[0])))
            self.s[r0:r0 + Z.shape[0]] = -0.5 * np.einsum("ij,ij->i", Z, Z)   # -gamma ||x - mean||^2
        # the exponent's rounding: a product of D + 2 terms whose magnitudes sum to at most 4 max |s|
        rounding = product_rounding(X.shape[1], float(np.max(-self.s, initial=0.0)))
        self.clamp = rounding > EXPONENT_ROUNDING_FREE
        self.direct = rounding > DIRECT_EXPONENT_ROUNDING       # then summed from the differences, as RBFOperands

    def rows(self, idx: NDArray[np.int64] | slice) -> Array:
        """Z[idx] = sqrt(2 gamma) (X[idx] - mean)."""
        Z = np.subtract(self.X[idx], self.mean, dtype=np.float64)
        Z *= self.c
        return Z

    def augmented(self, idx: NDArray[np.int64], s_first: bool) -> Array:
        """[Z[idx], s[idx], 1] (``s_first``) or [Z[idx], 1, s[idx]]: the product of the one with the
        other is the exponent z_n^T z_m + s_n + s_m, its two additions inside the product."""
        D = self.X.shape[1]
        out = np.empty((len(idx), D + 2))
        np.subtract(self.X[idx], self.mean, out=out[:, :D])
        out[:, :D] *= self.c
        out[:, D + (0 if s_first else 1)] = self.s[idx]
        out[:, D + (1 if s_first else 0)] = 1.0
        return out

    def products(self, rows: NDArray[np.int64], cols: NDArray[np.int64], coef: Array, out: Array) -> None:
        """out += K[rows][:, cols] @ coef in float64 (coef a vector or a matrix), chunk of columns by
        chunk of columns; each block's exponent is one product of the augmented rows (``augmented``:
        two passes over the block fewer than adding s_n and s_m after it, 15% of the products' time
        at 5,000 x 923)."""
        for c0 in range(0, cols.size, COLUMN_CHUNK):
            chunk = cols[c0:c0 + COLUMN_CHUNK]
            right = self.rows(chunk) if self.direct else self.augmented(chunk, s_first=False)
            step = max(1, PRODUCT_ENTRIES // chunk.size)
            for r0 in range(0, rows.size, step):
                if self.direct:      # the product's rounding beyond double precision (inputs of norm 1e7, gamma 1)
                    block = direct_exponent(self.rows(rows[r0:r0 + step]), right,
                                            np.empty((min(step, rows.size - r0), chunk.size)))
                else:
                    block = self.augmented(rows[r0:r0 + step], s_first=True) @ right.T
                    if self.clamp:                                    # a distance is >= 0
                        np.minimum(block, 0.0, out=block)
                exp_in_place(block)
                out[r0:r0 + step] += block @ coef[c0:c0 + COLUMN_CHUNK]


def rbf_operands(X: Array, gamma: float) -> RBFOperands:
    """``RBFOperands`` of a dense X: the rows of ``CentredRBF`` (the same values), formed at once and kept;
    ``direct`` where the product's rounding bound exceeds ``DIRECT_EXPONENT_ROUNDING``."""
    Z = np.subtract(X, X.mean(axis=0), dtype=np.float64)
    Z *= math.sqrt(2.0 * gamma)
    with np.errstate(over="ignore"):                                    # inf: an exponent of -inf, k = 0
        s = -0.5 * np.einsum("ij,ij->i", Z, Z)                           # s = -gamma ||x - mean||^2
    return RBFOperands(Z, s, product_rounding(X.shape[1], float(np.max(-s, initial=0.0))) > DIRECT_EXPONENT_ROUNDING)


def _rbf_block(ops: RBFOperands) -> BlockFunction:
    """exp(-gamma ||x_n - x_m||^2) from the shared operands."""
    work = _Workspace()

    def block(rows: NDArray[np.int64], c0: int, c1: int, out: NDArray[np.float32]) -> None:
        if out.dtype == np.float64 and out.flags.c_contiguous:     # float64 rows: the exponent in place
            exp_in_place(ops.exponent(rows, c0, c1, out))
            return
        exponent = ops.exponent(rows, c0, c1, work.get(rows.size, c1 - c0))
        out[:] = exponent   # a rounding error of +1e-16 in the exponent is lost in float32
        exp_in_place(out)

    return block


def _dot_block(X: Array, kernel: Kernel) -> BlockFunction:
    """Kernels that are a function of x_n^T x_m. X[c0:c1].T is a view that BLAS reads transposed: no
    copy of X^T (20 MB at 5,000 x 500)."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    work = _Workspace()

    def block(rows: NDArray[np.int64], c0: int, c1: int, out: NDArray[np.float32]) -> None:
        dots = work.get(rows.size, c1 - c0)
        np.matmul(X[rows], X[c0:c1].T, out=dots)
        _dot_kernel(kernel, dots, None, None)                         # Linear, Polynomial, Sigmoid: no norms
        out[:] = dots

    return block


def _sparse_block(X, kernel: Kernel, Xt) -> BlockFunction:
    """Rows of a kernel of x_n^T x_m on a CSR X: dots = X[rows] @ X^T, a sparse-times-sparse product.

    X^T is kept once as CSR (``Xt``, nnz entries more), so that a row costs the products of its stored
    entries with the matching columns only (for text-like data a small fraction of nnz(X)), and
    the rows are taken in groups of at most ``SPARSE_GROUP_ENTRIES / N`` so that the dense float64
    block of dot products stays small whatever the number of rows asked for.
    """
    sq = row_squared_norms(X) if isinstance(kernel, RBF) else None
    N = X.shape[0]
    group = max(1, SPARSE_GROUP_ENTRIES // max(N, 1))
    exact = isinstance(kernel, RBF) and sparse_product_rounding(X, kernel.gamma) > DIRECT_EXPONENT_ROUNDING

    def block(rows: NDArray[np.int64], c0: int, c1: int, out: NDArray[np.floating]) -> None:
        right = Xt if (c0 == 0 and c1 == N) else Xt[:, c0:c1]
        for g0 in range(0, rows.size, group):
            part = rows[g0:g0 + group]
            if exact:                                   # products that cancel beyond the resolution: the kernel's
                out[g0:g0 + part.size] = sparse_rbf(X[part], X[c0:c1], kernel.gamma)
                continue
            dots = (X[part] @ right).toarray()                        # (len(part), c1 - c0) = x_r^T x_m
            _dot_kernel(kernel, dots, None if sq is None else sq[part], None if sq is None else sq[c0:c1])
            out[g0:g0 + part.size] = dots

    return block


def _dot_kernel(kernel: Kernel, dots: Array, sq_rows: Array | None, sq_cols: Array | None) -> None:
    """dots (x_r^T x_m) -> k(x_r, x_m) in place, for the kernels that are functions of dot products
    (RBF with the squared norms: -gamma ||x_r - x_m||^2 = gamma (2 x_r^T x_m - ||x_r||^2 - ||x_m||^2))."""
    if isinstance(kernel, RBF):
        dots *= 2.0
        dots -= sq_rows[:, None]
        dots -= sq_cols[None, :]
        np.minimum(dots, 0.0, out=dots)                              # a distance is >= 0
        dots *= kernel.gamma
        exp_in_place(dots)
    elif isinstance(kernel, Polynomial):
        dots *= kernel.gamma
        dots += kernel.coef0
        np.power(dots, kernel.degree, out=dots)
    elif isinstance(kernel, Sigmoid):
        dots *= kernel.gamma
        dots += kernel.coef0
        np.tanh(dots, out=dots)


class _Workspace:
    """A float64 scratch block reused between calls (fresh memory is slow to touch)."""

    def __init__(self) -> None:
        self._buffer = np.empty(0)

    def get(self, rows: int, cols: int) -> Array:
        if self._buffer.size < rows * cols:
            self._buffer = np.empty(max(rows * cols, 2 * self._buffer.size))
        return self._buffer[: rows * cols].reshape(rows, cols)


ExactFunction = Callable[[NDArray[np.int64]], Callable[[NDArray[np.int64]], Array]]


def _exact_function(kernel: Kernel, X: Array, shared=None) -> ExactFunction:
    """cols -> (rows -> K[rows][:, cols] in float64), by the same routes as the rows (``shared``:
    ``KernelRowCache._shared``).

    The returned block lives in a workspace that the next call overwrites.
    """
    if issparse(X) and isinstance(kernel, (RBF, Linear, Polynomial, Sigmoid)):
        return _sparse_exact(X, kernel, shared)
    if isinstance(kernel, RBF):
        return _rbf_exact(shared if isinstance(shared, RBFOperands) else rbf_operands(X, kernel.gamma))
    if isinstance(kernel, Precomputed):
        return lambda cols: (lambda rows: X[np.ix_(rows, cols)])
    return lambda cols: (lambda rows: np.asarray(kernel(X[rows], X[cols]), dtype=np.float64))


def _rbf_exact(ops: RBFOperands) -> ExactFunction:
    """cols -> (rows -> exp(-gamma ||x_r - x_m||^2)[:, cols]): against every point when ``cols`` holds
    at least half of them (the columns picked from the block), else against a copy of Z[cols]."""
    work = _Workspace()
    N = ops.Z.shape[0]

    def columns(cols: NDArray[np.int64]) -> Callable[[NDArray[np.int64]], Array]:
        whole = 2 * cols.size >= N
        part = None if whole else RBFOperands(np.ascontiguousarray(ops.Z[cols]), ops.s[cols], ops.direct)

        def rbf(rows: NDArray[np.int64]) -> Array:
            if whole:
                block = ops.exponent(rows, 0, N, work.get(rows.size, N))[:, cols]
            elif ops.direct:
                block = direct_exponent(ops.Z[rows], part.Z, work.get(rows.size, cols.size))
            else:
                block = work.get(rows.size, cols.size)
                np.matmul(ops.Z[rows], part.Z.T, out=block)
                block += ops.s[rows, None]
                block += part.s[None, :]
            np.minimum(block, 0.0, out=block)                     # a distance is >= 0
            return exp_in_place(block)
        return rbf
    return columns


def _sparse_exact(X, kernel: Kernel, Xt) -> ExactFunction:
    """cols -> (rows -> K[rows][:, cols]) in float64 on a CSR X.

    For at least half of the points as columns (the support of most fits)
    the products are taken against the whole ``Xt`` and the columns picked
    from the dense block, with no copy of X[cols]; for fewer, X[cols]^T is
    formed once (small).
    """
    sq = row_squared_norms(X) if isinstance(kernel, RBF) else None
    exact = isinstance(kernel, RBF) and sparse_product_rounding(X, kernel.gamma) > DIRECT_EXPONENT_ROUNDING

    def columns(cols: NDArray[np.int64]) -> Callable[[NDArray[np.int64]], Array]:
        if exact:                                       # products that cancel beyond the resolution: the kernel's
            return lambda rows: sparse_rbf(X[rows], X[cols], kernel.gamma)
        whole = 2 * cols.size >= X.shape[0]
        right = Xt if whole else X[cols].T.tocsr()                  # (D, N) or (D, len(cols))

        def rows_of(rows: NDArray[np.int64]) -> Array:
            dots = np.asarray((X[rows] @ right).toarray(), dtype=np.float64)
            if whole:
                dots = dots[:, cols]
            _dot_kernel(kernel, dots, None if sq is None else sq[rows], None if sq is None else sq[cols])
            return dots
        return rows_of
    return columns