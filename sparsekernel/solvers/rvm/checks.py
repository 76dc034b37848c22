"""Validation and units shared by the RVM entry points.

Units. The solver works with columns of unit mean square
(phi_i sqrt(N) / ||phi_i||) and, for regression, targets of unit variance
(t / std t); the evidence is invariant to column scaling and shifts by
-N ln std(t) under the target scaling, so every threshold (``alpha_max``, the
noise floor) is dimensionless, and results are mapped back to the caller's
units before they are returned.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ...errors import ValidationError
from ...validation import check_matrix, check_param, fail
from .design import Design, DenseDesign, as_design
from .posterior import Hyperprior
from .results import AllPrunedWarning

Array = NDArray[np.float64]
IntArray = NDArray[np.intp]
Method = Literal["fast", "mackay", "em"]
METHODS = ("fast", "mackay", "em")
#: Iteration caps when ``max_iter`` is None (the fast method's grows with the basis).
DEFAULT_MAX_ITER = {"fast": 10_000, "mackay": 2_000, "em": 20_000}
#: The fast method's default cap is max(10,000, FAST_ITER_PER_BASIS M) steps, escapes and starts included:
#: friedman1 (N = 1,500, standardised, gamma "scale") took 13,212 with the whole basis pooled and 16,367 with
#: a pool of 300, where a cap of 10 M stopped it unconverged.
FAST_ITER_PER_BASIS = 25
#: The largest iteration cap a fit counts to: a larger ``max_iter`` (any positive integer is taken) is this one,
#: which no fit reaches. The fast method's compiled steps count in int64 (and add 1 to the cap): RVR(max_iter=
#: 2**63 - 1) raised a bare 'OverflowError: int too big to convert' there.
MAX_ITER_CAP = 2**62
#: Initial alpha (solver units) of every function for MacKay and EM.
ALPHA_INIT = 1.0


def frozen(a: ArrayLike) -> NDArray:
    """A read-only copy of ``a``."""
    out = np.array(a, copy=True)
    out.flags.writeable = False
    return out


def check_method(method: object) -> str:
    if method not in METHODS:
        raise fail("method", f"one of {list(METHODS)}", method)
    return str(method)


def check_hyperprior(hyperprior: object) -> Hyperprior:
    if hyperprior is None:
        return Hyperprior()
    if isinstance(hyperprior, Hyperprior):
        values = (hyperprior.a, hyperprior.b, hyperprior.c, hyperprior.d)
    else:
        try:
            values = tuple(float(v) for v in hyperprior)  # type: ignore[union-attr]
        except (TypeError, ValueError) as exc:
            raise fail("hyperprior", "None or a tuple (a, b, c, d)", hyperprior) from exc
    ok = (
        len(values) == 4
        and all(math.isfinite(v) for v in values)
        and values[0] >= 1.0
        and values[2] >= 1.0
        and values[1] >= 0.0
        and values[3] >= 0.0
    )
    # c > 1 with d = 0 adds (c - 1) ln alpha_i to the objective for every kept function: it rises without bound
    # as any alpha_i grows while (7.85) tends to its value without phi_i, so there is no maximum, and each method
    # stopped at its own stationary point, certified (the fast fit kept useless functions for their ln alpha_i)
    if not ok or values[2] > 1.0 and values[3] == 0.0:
        raise fail(
            "hyperprior",
            "None or (a, b, c, d) for Gam(beta | a, b), Gam(alpha | c, d) with a, c >= 1, b, d >= 0, and d > 0 "
            "where c > 1 (with d = 0, (c - 1) ln alpha_i rises without bound as alpha_i grows: no maximum)",
            hyperprior,
        )
    return Hyperprior(*values)


def check_design(Phi: ArrayLike | Design) -> Design:
    if isinstance(Phi, np.ndarray) or not isinstance(Phi, Design):
        return DenseDesign(check_matrix(Phi, "Phi"))
    return as_design(Phi)


def check_common(
    alpha_max: object, tol: object, max_iter: object, method: str, n_basis: int
) -> tuple[float, float, int]:
    alpha_max = float(check_param("alpha_max", alpha_max, "C"))
    tol = float(check_param("tol", tol))
    if max_iter is None:
        extra = FAST_ITER_PER_BASIS * n_basis if method == "fast" else 0
        return alpha_max, tol, max(DEFAULT_MAX_ITER[method], extra)
    return alpha_max, tol, min(int(check_param("max_iter", max_iter)), MAX_ITER_CAP)


@dataclass(frozen=True)
class Units:
    """Column scales c_i (phi_i -> c_i phi_i) and the target scale (t -> t / t_scale)."""

    scale: Array  # (n_basis,), 0 for unusable (zero) columns
    t_scale: float

    @property
    def usable(self) -> IntArray:
        return np.flatnonzero(self.scale > 0.0)


def check_bias(bias: object) -> bool:
    """``bias`` as a bool: True or False (numpy's included), nothing else (a string such as "no" is
    truthy and would silently mean True)."""
    if not isinstance(bias, (bool, np.bool_)):
        raise fail("bias", "True or False", bias)
    return bool(bias)


#: Targets whose computed standard deviation is at most this many roundings of max |t| are constant:
#: np.std of 20 copies of 0.3 is 5.6e-17, not 0, and a scale of that size made the noise floor (a
#: fraction of the targets' variance) vanish, so that beta ran to 6e31 and (7.85) lost 2 nats.
CONSTANT_ROUNDINGS = 64.0


def target_scale(t: Array) -> float:
    """std(t), or max |t| (1 for t = 0) where t is constant to within its rounding."""
    sd, top = float(np.std(t)), float(np.abs(t).max(initial=0.0))
    if sd > CONSTANT_ROUNDINGS * np.finfo(np.float64).eps * top:
        return sd
    return top or 1.0


#: The targets' scale s (``target_scale``) must lie in [1 / TARGET_SCALE_LIMIT, TARGET_SCALE_LIMIT]: the fit
#: divides by s, and its noise precision (7.88) is beta / s^2 in the caller's units, so s^2 and 1 / s^2 (about
#: 1e+-300 here) must be finite normal doubles with room left for beta itself (t * 1e-160 divided by zero, and
#: t * 1e155 has a variance that overflows).
TARGET_SCALE_LIMIT = 1e150


def check_target_scale(t: Array, name: str = "t") -> Array:
    """``t`` (finite, 1-D), refused where its scale (standard deviation, or max |t| when the targets are
    constant; ``target_scale``) lies outside the range the fit represents, ``TARGET_SCALE_LIMIT``.

    The standard deviation is computed on t / max |t|, so that it does not itself overflow or underflow.

    Raises
    ------
    ValidationError
        Naming ``name``, the range and the scale received.
    """
    top = float(np.abs(t).max(initial=0.0))
    if top == 0.0:
        return t                                              # all zero: the fit's scale is 1
    scale = top * target_scale(t / top)                       # std(t), or max |t| for constant targets
    if not 1.0 / TARGET_SCALE_LIMIT <= scale <= TARGET_SCALE_LIMIT:
        raise ValidationError(
            f"{name} must be targets whose standard deviation (max |{name}| when constant) lies in "
            f"[{1.0 / TARGET_SCALE_LIMIT:g}, {TARGET_SCALE_LIMIT:g}], where its square and the noise precision "
            f"are representable; got {scale:.3g} (rescale {name})")
    return t


#: A basis column's root mean square ||phi_i|| / sqrt(N) must lie in [1 / COLUMN_SCALE_LIMIT, COLUMN_SCALE_LIMIT]
#: where it is not zero: the solver's columns have unit mean square, and alpha_i in the caller's units is the
#: solver's times the column's mean square (1e-200 to 1e200 here), with room left for alpha_max. Beyond it, the
#: squared norm of a column of entries 1e155 overflowed, the column was taken for a zero one, and every
#: function was pruned with the fit called converged (20 nats below the same fit of Phi / 1e155).
COLUMN_SCALE_LIMIT = 1e100


def column_scale(norms: Array, N: int, bias: bool = False) -> Array:
    """sqrt(N) / ||phi_i||: columns of unit mean square; 0 for columns that are zero. ``norms``: the
    squared norms of the columns, the bias's first where ``bias``.

    Raises
    ------
    ValidationError
        Naming Phi, the range and the first column whose root mean square lies outside it
        (``COLUMN_SCALE_LIMIT``).
    """
    with np.errstate(over="ignore"):
        rms = np.sqrt(norms / N)
    bad = np.flatnonzero(~np.isfinite(norms) | (rms > COLUMN_SCALE_LIMIT)
                         | ((norms > 0.0) & (rms < 1.0 / COLUMN_SCALE_LIMIT)))
    if bad.size:
        i, first = int(bad[0]), int(bias)
        size = f"{rms[i]:.3g}" if np.isfinite(norms[i]) else "above 1e154 (its squares overflow)"
        raise ValidationError(
            f"Phi must have basis columns whose root mean square ||phi_i|| / sqrt(N) lies in "
            f"[{1.0 / COLUMN_SCALE_LIMIT:g}, {COLUMN_SCALE_LIMIT:g}] where not zero (for the estimators, the "
            f"kernel matrix of X: rescale X or the kernel); got column {i - first} (of {norms.size - first}) with "
            f"root mean square {size}")
    scale = np.zeros_like(norms)
    ok = np.isfinite(norms) & (norms > 0.0)
    scale[ok] = np.sqrt(N / norms[ok])
    return scale


def warn_all_pruned(bias: bool) -> None:
    """The warning when the evidence prunes every basis function."""
    warnings.warn(
        "every basis function was pruned"
        + ("; the model keeps the bias alone (alpha = alpha_max)" if bias else "; the model is empty"),
        AllPrunedWarning,
        stacklevel=4,
    )
