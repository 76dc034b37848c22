"""Warm starts along a regularisation path: the solution at one C (or nu) as the start of the next.

Along a path the kernel, and so Q, stays the same; only the box l <= a <= u,
the linear term p and the right-hand sides (delta, nu_sum) of the StandardQP

    minimise    f(a) = 1/2 a^T Q a + p^T a
    subject to  y^T a = delta,  [e^T a = nu_sum],  l <= a <= u

change. The solution a of the previous problem, with its gradient
G = Q a + p_old, is moved into the new feasible set in one of two ways:

``scale_into_box`` (C-SVC, epsilon-SVR: l = 0, delta = 0, no nu_sum)
    Every s a with 0 <= s <= s_max = min_{a_i > 0} u_i / a_i is feasible (the
    equality y^T (s a) = s delta = 0 holds), and along that ray
    f(s a) = s^2/2 a^T Q a + s p^T a, so the start is its minimiser
    s* = clip(-p^T a / a^T Q a, 0, s_max), a^T Q a = a^T (G - p_old). The
    bounded multipliers stay at their (scaled) bound; C2 / C1 is the largest
    step, s = 1 (the old point, which stays feasible when C grows) the smallest
    that f favours after an increase of C.

``refill_sums`` (nu-SVC, nu-SVR, the one-class SVM: fixed sums)
    a is clipped into the new box, then each fixed sum (over y = +1 and over
    y = -1 for the nu forms, of all variables for the one-class delta) is met
    by the minimiser of the linearised objective g^T d over the moves d that
    only add (or only remove) mass, g = G - p_old + p_new: a fractional
    knapsack, solved by filling the variables of smallest g first (emptying
    those of largest g first), each up to its bound.

Either start is feasible, so the SMO (``smo(qp, initial=a0)``) starts from it
as from its own ``initial_point``. It rebuilds G from the kernel rows, which
``RegularisationPath`` keeps in one ``KernelRowCache`` across the path, except
after ``scale_into_box``, whose gradient s (G - p_old) + p_new it is handed
(``initial_gradient``).
"""

from __future__ import annotations

from typing import Any, Hashable

import numpy as np
from numpy.typing import NDArray

from .._threads import limit_blas
from ..sparse import digest, issparse
from .standard_qp import StandardQP

__all__ = ["warm_start", "scale_into_box", "refill_sums", "same_inputs", "RegularisationPath"]

Array = NDArray[np.float64]
#: Rows per block when a kept cache that holds the whole Gram matrix is filled at once: along a path
#: most rows are needed (small C makes nearly every point a support vector), and large blocks cost
#: less than the SMO's fills of a few rows at a time.
PREFILL_BLOCK = 256
#: A fixed sum counts as met by a refill that reaches it to this relative rounding.
FILL_TOL = 1e-12


def _same_Q(old: StandardQP, new: StandardQP) -> bool:
    """Whether the two QPs share Q (and the variables' points and signs): a path's condition."""
    return (old.n == new.n and old.kernel == new.kernel and old.scale == new.scale
            and old.diagonal is None and new.diagonal is None
            and np.array_equal(old.index, new.index) and np.array_equal(old.y, new.y)
            and same_inputs(old.X, new.X))


def warm_start(old: StandardQP, a: Array, G: Array, new: StandardQP) -> Array | None:
    """A feasible start for ``new`` from the solution ``a`` (gradient ``G``) of ``old``; None
    where the two do not share Q or no feasible start is found (the SMO then starts cold)."""
    return warm_start_and_gradient(old, a, G, new)[0]


def warm_start_and_gradient(old: StandardQP, a: Array, G: Array,
                            new: StandardQP) -> tuple[Array | None, Array | None]:
    """``warm_start``'s point a0 and, where it is the old solution scaled (``scale_into_box``), its
    gradient Q a0 + p_new = s (G - p_old) + p_new, which needs no kernel row; else None for it (the
    SMO builds it from the rows: a sweep over every support vector's row)."""
    if not _same_Q(old, new):
        return None, None
    if new.nu_sum is None and new.delta == 0.0 and np.all(new.lower == 0.0):
        s = _scale_factor(a, a @ (G - old.p), new.p, new.upper)
        return np.minimum(s * a, new.upper), s * (G - old.p) + new.p
    return refill_sums(new, np.clip(a, new.lower, new.upper), G - old.p + new.p), None


def scale_into_box(a: Array, aQa: float, p: Array, upper: Array) -> Array:
    """s* a with s* = argmin_{0 <= s <= s_max} s^2/2 a^T Q a + s p^T a, s_max = min_{a_i > 0} u_i / a_i."""
    return np.minimum(_scale_factor(a, aQa, p, upper) * a, upper)


def _scale_factor(a: Array, aQa: float, p: Array, upper: Array) -> float:
    """``scale_into_box``'s s* (0 where no a_i is positive)."""
    positive = a > 0.0
    if not np.any(positive):
        return 0.0
    s_max = float(np.min(upper[positive] / a[positive]))
    return s_max if aQa <= 0.0 else min(max(-float(p @ a) / aQa, 0.0), s_max)     # f(s a), a parabola in s


def _sum_groups(qp: StandardQP) -> list[tuple[NDArray[np.bool_], float]]:
    """The fixed sums of the QP as (variables, total): per sign of y for the nu forms (e^T a and
    y^T a fixed), all variables for delta with one sign of y; [] otherwise."""
    if qp.nu_sum is not None:
        return [(qp.y > 0, (qp.nu_sum + qp.delta) / 2), (qp.y < 0, (qp.nu_sum - qp.delta) / 2)]
    if np.all(qp.y > 0):
        return [(np.ones(qp.n, dtype=bool), float(qp.delta))]
    return []


def refill_sums(qp: StandardQP, a: Array, g: Array) -> Array | None:
    """a + d with d = argmin g^T d over {sum_group d = total - sum_group a, l <= a + d <= u, d of one
    sign in each group} (a fractional knapsack per group: smallest g filled first, largest emptied
    first); None where the sums cannot be met in the box."""
    groups = _sum_groups(qp)
    if not groups:
        return None
    out = a.copy()
    for members, total in groups:
        idx = np.flatnonzero(members)
        need = total - float(np.sum(out[idx]))
        if need > 0:
            order = idx[np.argsort(g[idx], kind="stable")]
            room = qp.upper[order] - out[order]
        else:
            order = idx[np.argsort(-g[idx], kind="stable")]
            room = out[order] - qp.lower[order]
        room = np.where(np.isfinite(room), room, abs(need))
        taken = np.clip(abs(need) - (np.cumsum(room) - room), 0.0, room)     # fill in order, each to its bound
        if float(np.sum(taken)) < abs(need) * (1.0 - FILL_TOL):
            return None
        out[order] += np.sign(need) * taken
    return np.clip(out, qp.lower, qp.upper)


def same_inputs(A: Any, B: Any) -> bool:
    """Whether two input matrices (dense or sparse) hold the same values: one array, or equal ones."""
    if A is B:
        return True
    if A.shape != B.shape or issparse(A) != issparse(B):
        return False
    return (A != B).nnz == 0 if issparse(A) else bool(np.array_equal(A, B))


class RegularisationPath:
    """The solves of a fit repeated along a path of C (or nu): per slot (the k-th solve of a fit,
    say the k-th pair of the one-versus-one scheme) the previous QP and solution, for a warm start,
    and one kernel row cache kept across the path while its kernel and inputs stay the same.

    A kept cache holds float64 rows wherever the whole float64 Gram matrix fits its budget (N <=
    about 4,600 at 200 MB), float32 (``kernel_cache.row_dtype``) beyond: computed once for the
    whole path, the exact rows cost little more, and they spare the large C of a path the float32
    rounding that the steps accumulate into the gradient, and so the SMO's float64 re-checks of its
    stop (``smo._Run.refined``), which found that rounding at N = 5,000, gamma = 1e-3, C = 1e3.

    Parameters
    ----------
    cache_mb : float > 0
        Budget of each slot's row cache (the SMO's ``cache_mb``), and of all kept caches together:
        a slot whose cache would exceed it solves with a cache of its own (warm start only).
    share_rows : bool
        Keep the row caches across the path (False: warm starts only).
    """

    def __init__(self, cache_mb: float, share_rows: bool = True) -> None:
        self.cache_mb = float(cache_mb)
        self.share_rows = bool(share_rows)
        self._previous: dict[Hashable, tuple[StandardQP, Array, Array, int]] = {}
        self._caches: dict[Hashable, tuple[Any, int]] = {}
        self._next = 0
        self._last: tuple[Any, int] | None = None

    def _digest(self, qp: StandardQP) -> int:
        """The CRC-32 of ``qp.X``'s values (``sparse.digest``), taken once per QP: a slot's solution and
        rows are those of the values its X had when they were recorded, and an X changed in place since
        (the same array, so ``same_inputs`` holds) must not start from them."""
        if self._last is None or self._last[0] is not qp:
            self._last = (qp, digest(qp.X))
        return self._last[1]

    def new_fit(self) -> None:
        """The next fit of the path begins: its solves take the slots 0, 1, ... again."""
        self._next = 0

    def slot(self) -> int:
        """The slot of the next solve of the current fit."""
        self._next += 1
        return self._next - 1

    def start(self, key: Hashable, qp: StandardQP) -> Array | None:
        """The warm start of slot ``key`` for ``qp`` (None: cold)."""
        return self.start_and_gradient(key, qp)[0]

    def start_and_gradient(self, key: Hashable, qp: StandardQP) -> tuple[Array | None, Array | None]:
        """The warm start of slot ``key`` for ``qp`` and its gradient where known without kernel rows
        (``warm_start_and_gradient``); (None, None): cold."""
        previous = self._previous.get(key)
        if previous is None or previous[3] != self._digest(qp):       # none, or X's values since changed
            return None, None
        return warm_start_and_gradient(*previous[:3], qp)

    def cache(self, key: Hashable, qp: StandardQP) -> Any:
        """Slot ``key``'s row cache for ``qp`` (a new one where the kernel or X changed); None where
        rows are not shared, Q has a diagonal term or the kept caches would exceed ``cache_mb``."""
        if not self.share_rows or qp.diagonal is not None:
            return None
        from . import kernel_cache
        from .smo import BLAS_THREADS, COMPACT_SHARE

        kept, values = self._caches.pop(key, (None, None))
        if (kept is not None and same_inputs(kept.X, qp.X) and kept.kernel == qp.kernel
                and values == self._digest(qp)):       # rows of these values (an X changed in place: new rows)
            self._caches[key] = (kept, values)
            return kept
        budget = (1.0 - COMPACT_SHARE) * self.cache_mb
        N = int(qp.X.shape[0])
        whole = 8 * N * N <= budget * kernel_cache.MEGABYTE
        dtype = np.float64 if whole else kernel_cache.row_dtype(N)     # float64 where the whole Gram fits
        size = kernel_cache.slots_for(budget, N, dtype) * N * np.dtype(dtype).itemsize
        held = sum(c.store.nbytes for c, _ in self._caches.values())
        if held + size > budget * kernel_cache.MEGABYTE:
            return None
        kept = kernel_cache.KernelRowCache(qp.kernel, qp.X, budget, dtype)
        if kept.n_slots == N:               # the whole Gram matrix fits: in a few large blocks, once
            with limit_blas(BLAS_THREADS):
                kept.fill_whole(PREFILL_BLOCK, 0)
        self._caches[key] = (kept, self._digest(qp))
        return kept

    def record(self, key: Hashable, qp: StandardQP, a: Array, G: Array) -> None:
        """Slot ``key``'s solution, the start of its next solve."""
        self._previous[key] = (qp, np.asarray(a, dtype=np.float64), np.asarray(G, dtype=np.float64), self._digest(qp))
