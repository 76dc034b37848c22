"""Kernels k(x, x') and feature maps.

Every kernel is a frozen dataclass, callable as ``k(X, Y) -> (len(X), len(Y))``
(``k(X)`` means ``k(X, X)``), with ``k.diag(X)`` for the values k(x_n, x_n).
Evaluation is vectorised: the distance and inner-product computations are
scikit-learn's pairwise kernels, which reduce to one BLAS matrix product.

``Linear`` and ``Polynomial`` have a finite feature map ``k.features(X)`` with
``k(X, Y) = features(X) @ features(Y).T``; for degree 2 in two dimensions it
is the map of (7.42). Every kernel matrix has an empirical feature map,
``feature_map(K, tol)``, giving L with K ~= L L^T, which lets any primal be
stated in feature space.

``Callable(function)`` wraps any user function k(X, Y) -> Gram matrix (what
scikit-learn's SVMs accept as ``kernel=``); nothing is assumed of it, so it is
not taken to be positive semidefinite (the SVMs check the Gram matrix).

With ``Precomputed()`` the "X" handed to a machine is the Gram matrix itself,
and a test-time "X" is the cross-kernel matrix of shape (n_test, n_train).

X and Y may be ``scipy.sparse`` matrices (any format; held as CSR): the
values are computed from sparse products and row norms (scikit-learn's
pairwise kernels and ``safe_sparse_dot``) without densifying the inputs; the
kernel matrix returned is dense. ``Linear.features`` of a sparse X is X itself
(CSR); ``Polynomial.features`` is dense (it is only used when its dimension
is at most N).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any, Callable as CallableType, Literal

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray
from sklearn.metrics import pairwise
from sklearn.utils.extmath import safe_sparse_dot

from .sparse import as_rows, centred_full_columns, issparse, row_squared_norms, to_dense, used_columns
from .validation import check_matrix, check_param, check_real_dtype
from .errors import ValidationError

__all__ = [
    "Kernel",
    "Linear",
    "Polynomial",
    "RBF",
    "Sigmoid",
    "Precomputed",
    "Callable",
    "FeatureMap",
    "feature_map",
    "make_kernel",
]

Array = NDArray[np.float64]


#: The RBF's exponent -gamma ||x - x'||^2 comes from inner products of inputs centred at a point c (the mean of X,
#: or of the second argument), whose terms, of the size of gamma ||x - c||^2, cancel with a rounding of up to
#: ``product_rounding``; where that exceeds this (gamma ||x - c||^2 above about 1e4 / (D + 2)) it is summed from the
#: differences (``direct_exponent``) instead: at gamma = 1e300 the product made k(x, x) 0 or inf.
DIRECT_EXPONENT_ROUNDING = 1e-10
#: Differences a_r - b_m held at once by ``direct_exponent`` (1 MB of float64).
DIFFERENCE_ENTRIES = 1 << 17
#: Pairs of sparse rows whose differences ``sparse_direct_exponent`` forms at once.
DIFFERENCE_PAIRS = 1 << 14
#: exp(-e) is 0 in float64 beyond this e: a pair whose exponent is surely beyond it needs no exact distance.
EXP_UNDERFLOW = 746.0


def product_rounding(n_features: int, reach: float) -> float:
    """A bound on the rounding of -gamma ||x - x'||^2 formed as z^T z' + s + s' from inputs centred at c, where
    ``reach`` = gamma max ||x - c||^2 over the inputs: (D + 2) eps 4 reach."""
    return (n_features + 2) * float(np.finfo(np.float64).eps) * 4.0 * reach


def direct_exponent(A: Array, B: Array, out: Array) -> Array:
    """out[:] = -||a_r - b_m||^2 / 2 (-gamma ||x_r - x_m||^2 for rows z = sqrt(2 gamma) (x - c)), summed from
    the differences: within a few ulps of the result, and 0 for equal points (k(x, x) = 1), where the product's
    terms cancel (``product_rounding``); blocks of ``DIFFERENCE_ENTRIES`` differences."""
    step = max(1, DIFFERENCE_ENTRIES // max(1, B.shape[0] * B.shape[1]))
    with np.errstate(over="ignore", invalid="ignore"):                 # inf: k = 0
        for r0 in range(0, A.shape[0], step):
            d = A[r0:r0 + step, None, :] - B[None, :, :]
            np.einsum("rmd,rmd->rm", d, d, out=out[r0:r0 + step])
    out *= -0.5
    return out


def sparse_product_rounding(X: Any, gamma: float) -> float:
    """``product_rounding`` of the RBF exponent formed from a CSR X's uncentred products (scikit-learn's):
    as many terms as a row stores values at most, reach gamma max ||x||^2. Where it exceeds
    ``DIRECT_EXPONENT_ROUNDING``, ``sparse_rbf`` centres or sums the differences instead."""
    terms = int(np.diff(X.indptr).max(initial=0))
    with np.errstate(over="ignore"):
        return product_rounding(terms, gamma * float(row_squared_norms(X).max(initial=0.0)))


def sparse_rbf(A: Any, B: Any, gamma: float) -> Array:
    """exp(-gamma ||a_r - b_m||^2) for sparse rows (or one sparse, one dense), never densifying them.

    Where the product's rounding (``product_rounding`` of gamma max ||x||^2) is within
    ``DIRECT_EXPONENT_ROUNDING``, scikit-learn's kernel as it stands. Else, as the dense path centres its inputs,
    the columns stored in every row are centred (``sparse.centred_full_columns``: a translation that stores no
    new value), the exponent is formed from the products of those rows, and every pair whose rounding bound
    is still beyond ``DIRECT_EXPONENT_ROUNDING`` (a large value stored in some rows only) and whose kernel
    value may be non-zero has its distance summed from the difference of its two sparse rows instead."""
    same = A is B
    A = A if issparse(A) else sp.csr_matrix(A)
    B = A if same else (B if issparse(B) else sp.csr_matrix(B))
    terms = int(max(np.diff(A.indptr).max(initial=0), np.diff(B.indptr).max(initial=0)))
    with np.errstate(over="ignore"):
        sa = row_squared_norms(A)
        sb = sa if same else row_squared_norms(B)
        reach = gamma * max(float(sa.max(initial=0.0)), float(sb.max(initial=0.0)))
    if not product_rounding(terms, reach) > DIRECT_EXPONENT_ROUNDING:
        return pairwise.rbf_kernel(A, B, gamma=gamma)
    Ac, Bc = centred_full_columns(A, B)
    Bc = Ac if same else Bc
    with np.errstate(over="ignore", invalid="ignore"):
        sa, sb = row_squared_norms(Ac), row_squared_norms(Bc)
        out = np.asarray(safe_sparse_dot(Ac, Bc.T, dense_output=True), dtype=np.float64)
        out *= -2.0
        out += sa[:, None]
        out += sb[None, :]
        np.maximum(out, 0.0, out=out)                             # ||a - b||^2, to its rounding:
        bound = (terms + 2) * float(np.finfo(np.float64).eps) * 4.0 * np.maximum(sa[:, None], sb[None, :])
        # where the bound is beyond the resolution and k may be non-zero (or the norms overflowed: nan)
        exact = (bound > DIRECT_EXPONENT_ROUNDING / gamma) & ~(out - bound >= EXP_UNDERFLOW / gamma)
    if same:
        np.fill_diagonal(out, 0.0)
        np.fill_diagonal(exact, False)
    rows, cols = np.nonzero(exact)
    for p0 in range(0, rows.size, DIFFERENCE_PAIRS):
        r, m = rows[p0:p0 + DIFFERENCE_PAIRS], cols[p0:p0 + DIFFERENCE_PAIRS]
        with np.errstate(over="ignore"):
            out[r, m] = row_squared_norms(A[r] - B[m])
    with np.errstate(over="ignore"):                              # inf: k = 0
        out *= -gamma
    return np.exp(out, out=out)


class Kernel:
    """Base class: subclasses implement ``_gram`` and ``diag``."""

    #: True when k is positive semidefinite for every data set and parameter value
    #: in its declared domain; False when that is not guaranteed (it may still be
    #: on particular data).
    always_psd: bool = True
    name: str = "kernel"
    #: True when k(x, x') depends on x and x' only through x^T x', ||x||^2 and ||x'||^2 (not on which
    #: columns hold their values): sparse rows may then have their unused columns dropped (``used_columns``).
    of_dot_products: bool = False

    def __call__(self, X: ArrayLike, Y: ArrayLike | None = None) -> Array:
        A = kernel_rows(X, "X")
        B = A if Y is None else kernel_rows(Y, "Y")
        if A.shape[1] != B.shape[1]:
            raise ValidationError(
                f"kernel arguments must be 2-D arrays with the same number of columns; "
                f"got shapes {A.shape} and {B.shape}"
            )
        if A.shape[0] == 0 or B.shape[0] == 0:       # every kernel alike (scikit-learn's refuse no rows)
            return np.zeros((A.shape[0], B.shape[0]))
        if self.of_dot_products:                     # sparse rows of far more columns than values: those used
            A, B = (used_columns(A) * 2) if Y is None else used_columns(A, B)
        return self._gram(A, B)

    def _gram(self, A: Array, B: Array) -> Array:  # pragma: no cover - abstract
        raise NotImplementedError

    def diag(self, X: ArrayLike) -> Array:  # pragma: no cover - abstract
        """k(x_n, x_n) for every row of X, shape (n,)."""
        raise NotImplementedError

    def diag_max(self, X: ArrayLike) -> float:
        """max_n |k(x_n, x_n)| over the rows of X (a non-empty X)."""
        return float(np.abs(self.diag(X)).max())

    @property
    def has_features(self) -> bool:
        return False

    def feature_dimension(self, n_features: int) -> int:
        """Dimension of the finite feature map, or 0 when there is none."""
        return 0


@dataclass(frozen=True)
class Linear(Kernel):
    """k(x, x') = x^T x'."""

    name = "linear"
    of_dot_products = True

    def _gram(self, A: Array, B: Array) -> Array:
        return safe_sparse_dot(A, B.T, dense_output=True)

    def diag(self, X: ArrayLike) -> Array:
        return row_squared_norms(kernel_rows(X, "X"))

    @property
    def has_features(self) -> bool:
        return True

    def feature_dimension(self, n_features: int) -> int:
        return n_features

    def features(self, X: ArrayLike) -> Array:
        """phi(x) = x, shape (n, D): a copy of a dense X; a sparse X itself, as CSR (not copied)."""
        A = kernel_rows(X, "X")
        return A if not isinstance(A, np.ndarray) else np.array(A, copy=True)


@dataclass(frozen=True)
class Polynomial(Kernel):
    """k(x, x') = (gamma x^T x' + coef0)^degree."""

    degree: int = 3
    gamma: float = 1.0
    coef0: float = 1.0
    name = "poly"
    of_dot_products = True

    def __post_init__(self) -> None:
        check_param("degree", self.degree)
        check_param("gamma", self.gamma)
        check_param("coef0", self.coef0)

    @property
    def always_psd(self) -> bool:  # type: ignore[override]
        return self.coef0 >= 0

    def _gram(self, A: Array, B: Array) -> Array:
        return pairwise.polynomial_kernel(A, B, degree=self.degree, gamma=self.gamma, coef0=self.coef0)

    def diag(self, X: ArrayLike) -> Array:
        return (self.gamma * row_squared_norms(kernel_rows(X, "X")) + self.coef0) ** self.degree

    @property
    def has_features(self) -> bool:
        return self.coef0 >= 0

    def feature_dimension(self, n_features: int) -> int:
        if self.coef0 > 0:
            return math.comb(n_features + self.degree, self.degree)
        return math.comb(n_features + self.degree - 1, self.degree)

    def features(self, X: ArrayLike) -> Array:
        """Explicit monomial features, ordered by total degree then lexicographically.

        (gamma x.z + c)^d = sum_k C(d, k) c^(d-k) gamma^k (x.z)^k and
        (x.z)^k = sum_{|alpha|=k} k!/alpha! x^alpha z^alpha, so the feature of
        the multi-index alpha is sqrt(C(d,k) c^(d-k) gamma^k k!/alpha!) x^alpha.
        For d = 2, gamma = c = 1 and x in R^2 this is (7.42):
        (1, sqrt2 x1, sqrt2 x2, x1^2, sqrt2 x1 x2, x2^2).
        """
        if self.coef0 < 0:
            raise ValidationError(
                f"coef0 must be non-negative for a real finite feature map; got {self.coef0!r}"
            )
        A = to_dense(kernel_rows(X, "X"))      # dimension <= N where the machines use it
        n, D = A.shape
        d, c, g = self.degree, self.coef0, self.gamma
        columns = []
        with np.errstate(over="ignore", invalid="ignore"):
            for k in range(0 if c > 0 else d, d + 1):
                # numpy's float64, not Python's float: c^(d - k) gamma^k can overflow (coef0 = 1e308), and
                # Python raises OverflowError there where numpy gives inf, refused below as the kernel's
                outer = math.comb(d, k) * np.float64(c) ** (d - k) * np.float64(g) ** k
                for combo in itertools.combinations_with_replacement(range(D), k):
                    counts = np.bincount(np.asarray(combo, dtype=int), minlength=D)
                    multinomial = math.factorial(k) / np.prod([math.factorial(int(m)) for m in counts])
                    column = np.prod(A[:, list(combo)], axis=1) if k else np.ones(n)
                    columns.append(np.sqrt(outer * multinomial) * column)
            features = np.column_stack(columns)
        check_finite_values(self, features, "its explicit features phi(x) (7.42)")
        return features


@dataclass(frozen=True)
class RBF(Kernel):
    """Gaussian kernel k(x, x') = exp(-gamma ||x - x'||^2)."""

    gamma: float = 1.0
    name = "rbf"
    of_dot_products = True

    def __post_init__(self) -> None:
        check_param("gamma", self.gamma)

    def _gram(self, A: Array, B: Array) -> Array:
        # scikit-learn's squared distances ||a||^2 + ||b||^2 - 2 a^T b cancel terms of the size of ||x||^2: inputs
        # far from the origin (unit spread about an offset of 1e6, gamma 1) made K off by 7e-4, and the cvxpy and
        # QP solves certified optima of that matrix (a dual objective 4e-5 from the SMO's); at 1e7 it was off by
        # 0.09 and refused as not positive semidefinite. About B's mean they cancel terms of the inputs' spread
        # (the rounding ``Machine.kernel_entry_error`` bounds), and where even that is beyond double precision
        # (``DIRECT_EXPONENT_ROUNDING``) the distances are summed from the differences. A sparse X stays sparse.
        if issparse(A) or issparse(B):                 # centred as far as sparsity allows, else exact
            return sparse_rbf(A, B, self.gamma)
        centre = B.mean(axis=0)
        Bc = B - centre
        Ac = Bc if A is B else A - centre
        with np.errstate(over="ignore"):
            reach = self.gamma * max(float(np.max(np.einsum("ij,ij->i", Ac, Ac))),
                                     float(np.max(np.einsum("ij,ij->i", Bc, Bc))))
        if not product_rounding(A.shape[1], reach) > DIRECT_EXPONENT_ROUNDING:
            return pairwise.rbf_kernel(Ac, Bc, gamma=self.gamma)
        scale = math.sqrt(2.0 * self.gamma)
        out = direct_exponent(scale * Ac, scale * Bc, np.empty((A.shape[0], B.shape[0])))
        return np.exp(out, out=out)

    def diag(self, X: ArrayLike) -> Array:
        return np.ones(kernel_rows(X, "X").shape[0])

    def diag_max(self, X: ArrayLike) -> float:
        return 1.0                                   # k(x, x) = 1: no pass over X


@dataclass(frozen=True)
class Sigmoid(Kernel):
    """k(x, x') = tanh(gamma x^T x' + coef0): not positive semidefinite in general.

    The RVM accepts it (it needs no positive definiteness); the SVMs check the
    Gram matrix of the data and reject it when an eigenvalue is negative beyond
    tolerance.
    """

    gamma: float = 1.0
    coef0: float = 0.0
    name = "sigmoid"
    of_dot_products = True
    always_psd = False

    def __post_init__(self) -> None:
        check_param("gamma", self.gamma)
        check_param("coef0", self.coef0)

    def _gram(self, A: Array, B: Array) -> Array:
        return pairwise.sigmoid_kernel(A, B, gamma=self.gamma, coef0=self.coef0)

    def diag(self, X: ArrayLike) -> Array:
        return np.tanh(self.gamma * row_squared_norms(kernel_rows(X, "X")) + self.coef0)


@dataclass(frozen=True)
class Precomputed(Kernel):
    """The data are kernel values: ``X`` is the Gram matrix, a test ``X`` the cross-kernel.

    ``k(X)`` and ``k(X, Y)`` both return ``X`` (rows index the first set of
    points, columns the training points).
    """

    name = "precomputed"
    always_psd = False

    def __call__(self, X: ArrayLike, Y: ArrayLike | None = None) -> Array:
        A = to_dense(X)            # kernel values are dense by nature
        if A.ndim != 2:
            raise ValidationError(f"a precomputed kernel must be a 2-D array; got shape {A.shape}")
        return A

    def diag(self, X: ArrayLike) -> Array:
        A = to_dense(X)
        if A.ndim != 2 or A.shape[0] != A.shape[1]:
            raise ValidationError(
                "the diagonal of a precomputed kernel needs the square Gram matrix; "
                f"got shape {A.shape}"
            )
        return np.diag(A).copy()


@dataclass(frozen=True)
class Callable(Kernel):
    """A user function k(X, Y) -> array (len(X), len(Y)) as a kernel (scikit-learn's callable kernels).

    Its values are checked for shape and finiteness at each call; the diagonal is
    read from k on blocks of rows. It is not assumed to be positive semidefinite.
    """

    function: CallableType[[Array, Array], Any]
    name = "callable"
    always_psd = False

    #: rows per block when the diagonal is read from k(X_block, X_block)
    diag_block: int = 256

    def _gram(self, A: Array, B: Array) -> Array:
        values = self.function(A, B)
        if not issparse(values):              # text or complex numbers: numpy's ValueError, or cut to the real part
            check_real_dtype(values, "kernel(X, Y)", "an array of real numbers")
        K = to_dense(values)                  # a sparse result (x^T y of sparse rows) densified, as scikit-learn does
        if K.shape != (A.shape[0], B.shape[0]):
            raise ValidationError(f"kernel(X, Y) must return an array of shape ({A.shape[0]}, {B.shape[0]}); "
                                  f"got shape {K.shape} from {self.function!r}")
        if not np.all(np.isfinite(K)):
            raise ValidationError(f"kernel(X, Y) must return finite values; got NaN or inf from {self.function!r}")
        return K

    def diag(self, X: ArrayLike) -> Array:
        A = kernel_rows(X, "X")        # a sparse X stays sparse: the function gets what it is given elsewhere
        return np.concatenate([np.diag(self(A[r:r + self.diag_block])) for r in range(0, A.shape[0], self.diag_block)]
                              or [np.zeros(0)])


def kernel_rows(X: ArrayLike, name: str) -> Array:
    """X as a kernel reads it (``sparse.as_rows``: CSR kept sparse), refused with a ValidationError naming
    ``name`` unless it is a 2-D array of finite real numbers (no rows is allowed: an empty Gram block)."""
    if not issparse(X):
        check_real_dtype(X, name, "a 2-D array of real numbers")
    A = as_rows(X)
    if A.ndim != 2:
        raise ValidationError(f"{name} must be a 2-D array of shape (n_samples, n_features); got shape {A.shape}"
                              + (" (use X.reshape(1, -1) for a single point)" if A.ndim == 1 else ""))
    if not np.isfinite(A.data if issparse(A) else A).all():
        raise ValidationError(f"{name} must contain only finite values; got NaN or inf")
    return A


#: The kernels of ``make_kernel`` that take gamma (gamma='scale' is computed from X for these alone).
GAMMA_KERNELS = ("poly", "rbf", "sigmoid")


def make_kernel(
    kernel: str | Kernel = "rbf",
    *,
    gamma: float | None = None,
    degree: int = 3,
    coef0: float = 0.0,
    n_features: int | None = None,
    X_var: float | None = None,
) -> Kernel:
    """Build a kernel from scikit-learn style arguments.

    ``gamma=None`` means scikit-learn's ``"scale"``: 1 / (n_features * X.var()), computed (and X's
    variance checked) only for the kernels that take gamma (rbf, poly, sigmoid): the linear and the
    precomputed kernels ignore it, and a variance that overflows or underflows there (a linear kernel on
    X of scale 1e-155, a Gram matrix of entries 1e160) refused fits that gamma=1 made, in words about a
    gamma='scale' they never use. A callable k(X, Y) is wrapped as ``Callable``.
    """
    if isinstance(kernel, Kernel):
        return kernel
    if callable(kernel):
        return Callable(kernel)
    if gamma is None:
        gamma = _scale_gamma(n_features, X_var) if kernel in GAMMA_KERNELS else 1.0
    kinds = {
        "linear": lambda: Linear(),
        "poly": lambda: Polynomial(degree=degree, gamma=gamma, coef0=coef0),
        "rbf": lambda: RBF(gamma=gamma),
        "sigmoid": lambda: Sigmoid(gamma=gamma, coef0=coef0),
        "precomputed": lambda: Precomputed(),
    }
    if not isinstance(kernel, str) or kernel not in kinds:       # a list or dict: no TypeError from `in`
        raise ValidationError(f"kernel must be one of {sorted(kinds)} or a Kernel; got {kernel!r}")
    return kinds[kernel]()


def _scale_gamma(n_features: int | None, X_var: float | None) -> float:
    """scikit-learn's gamma='scale', 1 / (n_features var X) (1 where var X = 0, or unknown); X is named
    where var X overflows or is so large that gamma is 0 (a value gamma's own check would refuse)."""
    if n_features is None or X_var is None:
        return 1.0
    with np.errstate(over="ignore", divide="ignore"):
        gamma = 1.0 / (n_features * X_var) if X_var > 0 else 1.0
    if not (math.isfinite(X_var) and math.isfinite(gamma) and gamma > 0):
        raise ValidationError(
            f"X must have a finite, non-negligible variance for gamma='scale' (1 / (n_features var X)); "
            f"got variance {X_var!r}{' or less (it underflows)' if 0 < X_var <= 5e-324 else ''} over "
            f"{n_features} features (rescale X, or give gamma)")
    return float(gamma)


@dataclass(frozen=True)
class FeatureMap:
    """An empirical feature map of a Gram matrix: K ~= L L^T.

    Attributes
    ----------
    L : ndarray, shape (N, r)
        Features of the N training points.
    min_eigenvalue : float
        Smallest eigenvalue of K (the Gram matrix is positive semidefinite iff
        it is >= 0 up to rounding); a non-PSD kernel is reported here as data.
    max_eigenvalue : float
        Largest eigenvalue of K.
    method : {"eigh", "cholesky"}
        How L was computed.
    """

    L: Array
    min_eigenvalue: float
    max_eigenvalue: float
    method: str
    _project: Array = field(repr=False)  # (r, N): phi(x) = _project @ k(X_train, x)

    @property
    def rank(self) -> int:
        return int(self.L.shape[1])

    def transform(self, K_cross: ArrayLike) -> Array:
        """Features of new points from their kernel values against the training set.

        ``K_cross`` has shape (n_new, N); returns (n_new, r). On the training
        points themselves it returns L.
        """
        return np.asarray(K_cross, dtype=np.float64) @ self._project.T

    def expansion(self, w: ArrayLike) -> Array:
        """Coefficients c (N,) with w^T phi(x) = sum_n c_n k(x, x_n) for every x."""
        return self._project.T @ np.asarray(w, dtype=np.float64)


def feature_map(
    K: ArrayLike,
    tol: float = 1e-10,
    method: Literal["eigh", "cholesky"] = "eigh",
) -> FeatureMap:
    """Empirical feature map L with K ~= L L^T.

    Parameters
    ----------
    K : array, shape (N, N)
        Symmetric Gram matrix.
    tol : float
        Relative tolerance: eigenvalues (or Cholesky pivots) below
        ``tol * max_eigenvalue`` are dropped, so ``rank`` is the numerical rank.
    method : {"eigh", "cholesky"}
        ``"eigh"``: full eigendecomposition, exact smallest eigenvalue.
        ``"cholesky"``: pivoted Cholesky, O(N r^2), for low-rank matrices; the
        smallest eigenvalue then comes from one partial ``eigh`` call.

    Returns
    -------
    FeatureMap
    """
    A = check_matrix(K, "K", square=True)
    tol = float(check_param("tol", tol))
    if method == "eigh":
        return _feature_map_eigh(A, tol)
    if method == "cholesky":
        return _feature_map_cholesky(A, tol)
    raise ValidationError(f"method must be 'eigh' or 'cholesky'; got {method!r}")


def _feature_map_eigh(K: Array, tol: float) -> FeatureMap:
    lam, U = scipy.linalg.eigh((K + K.T) / 2)
    top = max(float(lam[-1]), 0.0)
    keep = lam > tol * top if top > 0 else np.zeros(lam.shape, dtype=bool)
    root = np.sqrt(lam[keep])
    L = U[:, keep] * root
    project = (U[:, keep] / root).T
    return FeatureMap(L, float(lam[0]), float(lam[-1]), "eigh", project)


def _feature_map_cholesky(K: Array, tol: float) -> FeatureMap:
    N = K.shape[0]
    d = np.diag(K).astype(np.float64).copy()
    scale = max(float(d.max()), 0.0)
    L = np.zeros((N, N))
    pivots: list[int] = []
    for j in range(N):
        i = int(np.argmax(d))
        if d[i] <= tol * scale:
            break
        pivots.append(i)
        column = (K[:, i] - L[:, :j] @ L[i, :j]) / math.sqrt(d[i])
        L[:, j] = column
        d -= column**2
        d[pivots] = 0.0
    r = len(pivots)
    L = L[:, :r].copy()
    # phi(x) = L_P^{-1} k(X_P, x) with L_P = L[P, :] lower triangular (Nystroem map)
    L_P = L[pivots, :]
    project = np.zeros((r, N))
    project[:, pivots] = scipy.linalg.solve_triangular(L_P, np.eye(r), lower=True)
    lam_min = float(scipy.linalg.eigh((K + K.T) / 2, eigvals_only=True, subset_by_index=[0, 0])[0])
    lam_max = float(scipy.linalg.eigh((K + K.T) / 2, eigvals_only=True, subset_by_index=[N - 1, N - 1])[0])
    return FeatureMap(L, lam_min, lam_max, "cholesky", project)


def check_finite_predictions(kernel: Kernel, values: Array, X: ArrayLike, name: str = "X") -> Array:
    """``values`` (what a prediction computed from the kernel between the new inputs ``X`` and the training
    points), or a ValidationError naming ``name`` where they overflow: a polynomial of inputs far larger than
    the training ones (|x| ~ 1e150) gives inf or NaN, which would otherwise become a label without a word."""
    if not np.isfinite(values).all():
        top = abs(X).max() if issparse(X) else np.abs(np.asarray(X)).max(initial=0.0)
        raise ValidationError(f"{name} must be inputs on which the fitted kernel's values stay finite; {kernel!r} "
                              f"gives inf or NaN between {name} and the training points (largest |{name}| entry: "
                              f"{float(top):.3g}): rescale {name} as the training inputs were")
    return values


def check_finite_values(kernel: Kernel, values: ArrayLike, where: str = "k(x, y)") -> None:
    """A ValidationError where the kernel's values on X (``where``: which of them were read) overflow:
    a high-degree polynomial of large inputs, refused before a solver takes NaN steps with it."""
    if not np.isfinite(values).all():
        raise ValidationError(f"the kernel's values on X must be finite; {kernel!r} gives inf or NaN on {where} "
                              f"for these inputs: rescale X, or take a smaller degree, gamma or coef0")
