"""Design matrices for the RVM: stored, or computed a block of columns at a time.

The fast algorithm (Algorithm 7.2) touches the N x M design matrix Phi only
through

    Phi^T t, ||phi_i||^2     once, at the start ((7.106)-(7.107) at alpha = inf),
    Phi[:, J]                the columns of the few candidates it holds in memory,
    Phi[:, I]^T V            products with the active columns, (7.106)-(7.107),

so it never needs Phi as a whole. ``Design`` states that interface.
``DenseDesign`` wraps a stored array; ``KernelDesign`` has the basis functions
phi_i(x) = k(x, x_i) centred on the training points and computes kernel
values on demand, one block of rows at a time, each block one BLAS product
(no Python loop over points), so that an N = 20,000 problem never holds the
N x N Gram matrix (3.2 GB). ``WithBias`` prepends the constant basis function
and ``Scaled`` rescales columns; both wrap any design.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np
import scipy.linalg
from numpy.typing import ArrayLike, NDArray
from sklearn.utils.extmath import safe_sparse_dot

from ...errors import ValidationError
from ...validation import DOMAINS, check_param, fail
from ...kernels import (DIRECT_EXPONENT_ROUNDING, RBF, Kernel, Linear, Polynomial, Sigmoid, check_finite_values,
                        make_kernel, product_rounding, sparse_product_rounding)
from ...sparse import issparse, row_squared_norms
from ...sparse import variance as sparse_variance
from ._bound_loops import assemble_gram

__all__ = [
    "Design",
    "DenseDesign",
    "KernelDesign",
    "WithBias",
    "Scaled",
    "WeightedDesign",
    "as_design",
    "gram_matrix",
    "estimator_kernel",
    "estimator_design",
]

Array = NDArray[np.float64]
Index = NDArray[np.intp]

#: The kernels known to be symmetric, k(x, x') = k(x', x): ``KernelDesign`` reads Phi[:, B]^T as k(X[B], X) for
#: these alone.
SYMMETRIC_KERNELS = (Linear, Polynomial, RBF, Sigmoid)
#: Size of one block of kernel values computed at once (bytes).
BLOCK_BYTES = 32 * 2**20


@runtime_checkable
class Design(Protocol):
    """An N x M design matrix seen only through the products the RVM needs."""

    @property
    def shape(self) -> tuple[int, int]:
        """(N, M): samples and basis functions."""
        ...

    def columns(self, idx: Index) -> Array:
        """Phi[:, idx], shape (N, len(idx))."""
        ...

    def project(self, V: Array, basis: Index | None = None) -> Array:
        """Phi[:, basis]^T V, shape (len(basis), k) for V of shape (N, k) (all columns if None)."""
        ...

    def moments(self, t: Array) -> tuple[Array, Array]:
        """(Phi^T t, ||phi_i||^2 for every column), both shape (M,), in one pass."""
        ...


@dataclass(frozen=True)
class DenseDesign:
    """A stored design matrix Phi, shape (N, M)."""

    Phi: Array

    @property
    def shape(self) -> tuple[int, int]:
        return self.Phi.shape  # type: ignore[return-value]

    def columns(self, idx: Index) -> Array:
        return self.Phi[:, idx]

    def project(self, V: Array, basis: Index | None = None) -> Array:
        return stored_project(self.Phi, V, basis)

    def moments(self, t: Array) -> tuple[Array, Array]:
        return self.Phi.T @ t, np.einsum("ij,ij->j", self.Phi, self.Phi)


@dataclass(frozen=True)
class KernelDesign:
    """Phi_ni = k(x_n, x_i): one basis function per training point, computed on demand.

    Kernel values are produced ``block`` rows at a time (``BLOCK_BYTES`` per
    block). For the library's kernels, which are symmetric, k(x, x') = k(x', x),
    Phi[:, B]^T = k(X[B], X); any other kernel (a ``Callable``, which is assumed
    nothing of, or a user's ``Kernel``) is evaluated as k(X, X[B]) and
    transposed, so that column i is k(., x_i) (7.78) as in the stored design
    (read as k(X[B], X), an asymmetric callable's on-demand fit was that of the
    transposed design: 0.11 off the stored fit's predictions). For the Gaussian
    kernel the block is exp(-gamma (|x|^2 - 2 X_B X^T + |x'|^2)) with one matrix
    product.
    """

    kernel: Kernel
    X: Array
    _sq: Array = field(init=False, repr=False)
    #: the one product cancels beyond ``DIRECT_EXPONENT_ROUNDING`` (inputs far from the origin): the kernel's own
    #: rows, centred or summed from the differences (an offset of 1e8 made the product's values 0.98 off)
    _exact: bool = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_sq", row_squared_norms(self.X))     # X dense, or CSR
        exact = False
        if isinstance(self.kernel, RBF):
            gamma = float(self.kernel.gamma)
            with np.errstate(over="ignore"):
                exact = (sparse_product_rounding(self.X, gamma) if issparse(self.X) else
                         product_rounding(self.X.shape[1], gamma * float(self._sq.max(initial=0.0))))
            exact = exact > DIRECT_EXPONENT_ROUNDING
        object.__setattr__(self, "_exact", exact)

    @property
    def shape(self) -> tuple[int, int]:
        N = self.X.shape[0]
        return (N, N)

    @property
    def block(self) -> int:
        return max(1, BLOCK_BYTES // (8 * self.X.shape[0]))

    def gram_rows(self, rows: Index) -> Array:
        """Phi[:, rows]^T, shape (len(rows), N): k(X[rows], X) for a symmetric kernel, else k(X, X[rows])^T."""
        if isinstance(self.kernel, RBF) and not self._exact:
            D = safe_sparse_dot(self.X[rows], self.X.T, dense_output=True)
            D *= 2.0
            D -= self._sq[rows, None]
            D -= self._sq[None, :]
            np.minimum(D, 0.0, out=D)  # -||x - x'||^2, clipped against rounding
            D *= self.kernel.gamma
            return np.exp(D, out=D)
        if not isinstance(self.kernel, SYMMETRIC_KERNELS):     # Phi_ni = k(x_n, x_i) (7.78), whatever k
            return np.ascontiguousarray(self.kernel(self.X, self.X[rows]).T)
        return self.kernel(self.X[rows], self.X)

    def columns(self, idx: Index) -> Array:
        idx = np.asarray(idx, dtype=np.intp)
        out = np.empty((self.X.shape[0], idx.size))
        for start in range(0, idx.size, self.block):
            part = idx[start : start + self.block]
            out[:, start : start + part.size] = self.gram_rows(part).T
        return out

    def project(self, V: Array, basis: Index | None = None) -> Array:
        basis = np.arange(self.X.shape[0]) if basis is None else np.asarray(basis, dtype=np.intp)
        V2 = V.reshape(V.shape[0], -1)
        out = np.empty((basis.size, V2.shape[1]))
        for start in range(0, basis.size, self.block):
            part = basis[start : start + self.block]
            out[start : start + part.size] = self.gram_rows(part) @ V2
        return out.reshape((basis.size,) + V.shape[1:])

    def moments(self, t: Array) -> tuple[Array, Array]:
        N = self.X.shape[0]
        PhiTt, norms = np.empty(N), np.empty(N)
        for start in range(0, N, self.block):
            rows = np.arange(start, min(start + self.block, N))
            K = self.gram_rows(rows)
            PhiTt[rows] = K @ t
            norms[rows] = np.einsum("ij,ij->i", K, K)
        return PhiTt, norms


@dataclass(frozen=True)
class WithBias:
    """[1, Phi]: the constant basis function phi_0(x) = 1 as column 0."""

    inner: Design

    @property
    def shape(self) -> tuple[int, int]:
        N, M = self.inner.shape
        return (N, M + 1)

    def columns(self, idx: Index) -> Array:
        idx = np.asarray(idx, dtype=np.intp)
        out = np.empty((self.shape[0], idx.size))
        if idx.size and idx[0] == 0 and np.all(idx[1:] != 0):  # the usual order, bias first: slices, no masks
            out[:, 0] = 1.0
            if idx.size > 1:
                out[:, 1:] = self.inner.columns(idx[1:] - 1)
            return out
        bias = idx == 0
        if not np.any(bias):  # no bias column: the inner design's columns, in the layout of ``out`` (no masks)
            return np.ascontiguousarray(self.inner.columns(idx - 1), dtype=np.float64)
        out[:, bias] = 1.0
        if np.any(~bias):
            out[:, ~bias] = self.inner.columns(idx[~bias] - 1)
        return out

    def project(self, V: Array, basis: Index | None = None) -> Array:
        basis = np.arange(self.shape[1]) if basis is None else np.asarray(basis, dtype=np.intp)
        out = np.empty((basis.size,) + V.shape[1:])
        bias = basis == 0
        out[bias] = V.sum(axis=0)
        if np.any(~bias):
            out[~bias] = self.inner.project(V, basis[~bias] - 1)
        return out

    def moments(self, t: Array) -> tuple[Array, Array]:
        PhiTt, norms = self.inner.moments(t)
        return np.concatenate([[t.sum()], PhiTt]), np.concatenate([[float(t.shape[0])], norms])


@dataclass(frozen=True)
class Scaled:
    """Phi D with D = diag(scale): column i multiplied by scale[i]."""

    inner: Design
    scale: Array

    @property
    def shape(self) -> tuple[int, int]:
        return self.inner.shape

    def columns(self, idx: Index) -> Array:
        return self.inner.columns(idx) * self.scale[idx]

    def project(self, V: Array, basis: Index | None = None) -> Array:
        s = self.scale if basis is None else self.scale[basis]
        P = self.inner.project(V, basis)
        return P * s.reshape((-1,) + (1,) * (P.ndim - 1))

    def moments(self, t: Array) -> tuple[Array, Array]:
        PhiTt, norms = self.inner.moments(t)
        return PhiTt * self.scale, norms * self.scale**2


@dataclass(frozen=True)
class WeightedDesign:
    """diag(root) Phi for a stored Phi, without forming it: the effective problem's whitened design.

    Under the Laplace approximation with one output the effective problem
    (7.117)-(7.119) has noise precision B = diag(b_n); with root = sqrt(b) it
    is a regression with unit noise on the columns sqrt(b_n) phi_i(x_n)
    (``laplace.whitened_problem``). ``squares`` is Phi**2, kept for the norms.
    """

    Phi: Array
    root: Array  # (N,)
    squares: Array

    @property
    def shape(self) -> tuple[int, int]:
        return self.Phi.shape  # type: ignore[return-value]

    def columns(self, idx: Index) -> Array:
        return self.root[:, None] * self.Phi[:, idx]

    def project(self, V: Array, basis: Index | None = None) -> Array:
        W = self.root * V if V.ndim == 1 else self.root[:, None] * V
        return stored_project(self.Phi, W, basis)

    def moments(self, t: Array) -> tuple[Array, Array]:
        return self.Phi.T @ (self.root * t), self.squares.T @ (self.root * self.root)


def stored_project(Phi: Array, V: Array, basis: Index | None) -> Array:
    """Phi[:, basis]^T V for a stored Phi (N, M): over every column, then the rows of ``basis``, where
    ``basis`` holds at least a quarter of the M columns.

    Gathering the columns first copies N x len(basis) values, a strided pass
    over Phi longer than the product itself when V has few columns: the
    sweeps of the fast RVC at N = 5,000 project onto every column, and the
    copy of the 200 MB Phi took a third of the fit; a refill of 5 columns
    against a pool of 2,000 of 5,001 took 84 ms gathered, 28 ms over every
    column (20 against 1,000: 55 and 45 ms; 20 against 3,000: 46 and 45).
    """
    if basis is None:
        return transposed_product(Phi, V)
    basis = np.asarray(basis, dtype=np.intp)
    M = Phi.shape[1]
    if 4 * basis.size < M:
        return transposed_product(Phi[:, basis], V)
    out = transposed_product(Phi, V)
    every = basis.size == M and bool(np.all(basis == np.arange(M)))
    return out if every else out[basis]


def transposed_product(P: Array, V: Array) -> Array:
    """P^T V (C-ordered), as (V^T P)^T for a V of columns: OpenBLAS's kernels for a product with
    few columns took about twice as long on P^T V as on V^T P (P of 5,000 x 5,001, 2 to 100
    columns, either memory order of P; one thread)."""
    if V.ndim == 1:
        return P.T @ V
    return np.ascontiguousarray((V.T @ P).T)


def as_design(Phi: ArrayLike | Design) -> Design:
    """A Design from an array (wrapped in ``DenseDesign``) or a Design as is."""
    if isinstance(Phi, (DenseDesign, KernelDesign, WithBias, Scaled)):
        return Phi
    if isinstance(Phi, Design) and not isinstance(Phi, np.ndarray):
        return Phi
    return DenseDesign(np.asarray(Phi, dtype=np.float64))


def gram_matrix(design: Design, idx: Index) -> Array:
    """Phi[:, idx]^T Phi[:, idx], shape (len(idx), len(idx)), without copying Phi where it can.

    Through ``Scaled`` and ``WithBias`` the product is that of the inner
    design, rescaled (D G D) and bordered by the bias row (N and the column
    sums); a stored design whose columns are all asked for in order gives
    Phi^T Phi straight from the array (one symmetric rank-k update). Any
    other design: the product of its ``columns``.
    """
    idx = np.asarray(idx, dtype=np.intp)
    whole = _whole_stored_gram(design, idx)
    if whole is not None:
        return whole
    if isinstance(design, Scaled):
        G = gram_matrix(design.inner, idx)
        s = design.scale[idx]
        G *= np.outer(s, s)  # s_i s_j = s_j s_i exactly: G stays exactly symmetric
        return G
    if isinstance(design, WithBias) and idx.size and np.all(idx[1:] != 0):
        if idx[0] != 0:
            return gram_matrix(design.inner, idx - 1)
        inner = idx[1:] - 1
        G = np.empty((idx.size, idx.size))
        G[1:, 1:] = gram_matrix(design.inner, inner)
        G[0, 0] = design.shape[0]  # phi_0^T phi_0 = N
        G[0, 1:] = G[1:, 0] = design.inner.project(np.ones(design.shape[0]), inner)
        return G
    if isinstance(design, DenseDesign):
        Phi = design.Phi
        whole = idx.size == Phi.shape[1] and np.array_equal(idx, np.arange(idx.size))
        C = Phi if whole else Phi[:, idx]
        return C.T @ C  # numpy takes A^T A as a symmetric rank-k update
    C = design.columns(idx)
    return C.T @ C


def _whole_stored_gram(design: Design, idx: Index) -> Array | None:
    """``gram_matrix`` of every column, in order, of a stored Phi under a bias column and a rescaling.

    One symmetric rank-k update (the upper triangle of Phi^T Phi) and one pass
    that mirrors it, borders it with N and the column sums and rescales it.
    None for any other design or set of columns.
    """
    scale, inner = (design.scale, design.inner) if isinstance(design, Scaled) else (None, design)
    bias = isinstance(inner, WithBias)
    stored = inner.inner if bias else inner
    if not isinstance(stored, DenseDesign):
        return None
    Phi = stored.Phi
    n = Phi.shape[1] + int(bias)
    # no column (n = 0: every column unusable, the fast Laplace fit's empty model): BLAS's dsyrk of a 0-row
    # matrix printed 'On entry to DSYRK parameter number 7 had an illegal value' to the terminal
    if idx.size != n or not n or not np.array_equal(idx, np.arange(n)):
        return None
    U = scipy.linalg.blas.dsyrk(1.0, Phi.T)  # Phi^T Phi, upper triangle
    colsum = Phi.sum(axis=0) if bias else np.zeros(0)
    out = np.empty((n, n))
    assemble_gram(U, colsum, float(Phi.shape[0]), np.ones(n) if scale is None else scale[idx], bias, out)
    return out


def estimator_kernel(
    kernel: str | Kernel, gamma: str | float, degree: int, coef0: float, X: Array
) -> Kernel:
    """The kernel of an RVM estimator: scikit-learn's conventions for ``gamma``.

    ``gamma="scale"``: 1 / (n_features * X.var()) (1 when X.var() == 0);
    ``gamma="auto"``: 1 / n_features; a positive float is used as is.
    ``gamma``, ``degree`` and ``coef0`` are checked as the SVM estimators check
    them (``validation.check_param``), whatever the kernel.

    Raises
    ------
    ValidationError
        ``gamma`` not "scale", "auto" or a positive finite number, ``degree``
        not a positive integer, or ``coef0`` not a finite number.
    """
    check_param("degree", degree)
    check_param("coef0", coef0)
    if isinstance(gamma, str) and gamma in ("scale", "auto"):
        value = None if gamma == "scale" else 1.0 / X.shape[1]
    elif isinstance(gamma, str) or not DOMAINS["gamma"][1](gamma):
        raise fail("gamma", "'scale', 'auto' or a positive finite number", gamma)
    else:
        value = float(gamma)
    with np.errstate(over="ignore", invalid="ignore"):      # an overflowing variance is refused by make_kernel
        variance = sparse_variance(X)                       # of every entry, a sparse X's zeros included
    return make_kernel(kernel, gamma=value, degree=degree, coef0=coef0, n_features=X.shape[1], X_var=variance)


def estimator_design(kernel: Kernel, X: Array, cache_mb: float) -> tuple[Design, int]:
    """The design matrix of an RVM estimator and the fast method's pool size.

    The N x N Gram matrix is stored when it fits in ``cache_mb``; otherwise a
    ``KernelDesign`` computes kernel columns on demand and the pool holds as
    many columns as ``cache_mb`` allows. With ``Precomputed``, X is the Gram
    matrix itself.
    """
    N = X.shape[0]
    budget = check_param("cache_mb", cache_mb) * 2**20
    room = budget / (8 * N)                      # inf for 1e308 MB (whose int is an error): every column fits
    pool = max(1, N + 1 if room >= N + 1 else int(room))
    if kernel.name == "precomputed" and X.shape[0] != X.shape[1]:
        raise ValidationError(f"X must be a square Gram matrix for kernel='precomputed'; got shape {X.shape}")
    with np.errstate(over="ignore", invalid="ignore"):      # refused below in one message, without numpy's
        if kernel.name == "precomputed" or 8 * N * N <= budget:
            K = np.asarray(kernel(X), dtype=np.float64)
            check_finite_values(kernel, K)
            return DenseDesign(K), max(pool, N + 1)
        diagonal = kernel.diag(X)
    check_finite_values(kernel, diagonal, "k(x, x)")   # a PSD kernel's largest |k(x, y)| is on its diagonal
    return KernelDesign(kernel, X), pool
