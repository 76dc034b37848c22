"""Grading a hand-written SMO: a correct clipping step and a wrong one, checked by their KKT tables.

    python examples/buggy_smo.py

A student's SMO for the soft-margin dual (7.32)-(7.34): pick the maximal
violating pair (i, j), move a_j -> a_j + t_j (E_i - E_j) / eta (E_n = y(x_n) - t_n,
eta = k_ii + k_jj - 2 k_ij) and a_i -> a_i - t_i t_j delta so that the balance
(7.34) sum_n a_n t_n = 0 holds, then clip a_j to the interval [L, H] that keeps
*both* multipliers in the box (7.33) 0 <= a_n <= C:

    t_i != t_j:  L = max(0, a_j - a_i),      H = min(C, C + a_j - a_i)
    t_i == t_j:  L = max(0, a_i + a_j - C),  H = min(C, a_i + a_j)

The buggy version clips a_j to [0, C] only, forgetting a_i's box: a_i leaves
[0, C] and the answer is wrong although every step looks plausible. The
library does not know the student's code: it takes the multipliers and the
intercept the student computed (``duality.check(machine, a=..., b=...)``) and
prints the KKT table of the machine; the wrong clipping shows as a failing
(7.33) row (and the rows that follow from it), the correct one passes.
"""

from __future__ import annotations

import sys

import numpy as np

from sparsekernel import datasets
from sparsekernel.duality import check
from sparsekernel.formulations import SoftMarginSVC
from sparsekernel.kernels import RBF


def clip_correct(a_j: float, a_i: float, a_j_old: float, same: bool, C: float) -> float:
    """a_j clipped to [L, H], the segment of the line t_i a_i + t_j a_j = const inside the box."""
    if same:
        low, high = max(0.0, a_i + a_j_old - C), min(C, a_i + a_j_old)
    else:
        low, high = max(0.0, a_j_old - a_i), min(C, C + a_j_old - a_i)
    return min(max(a_j, low), high)


def clip_buggy(a_j: float, a_i: float, a_j_old: float, same: bool, C: float) -> float:
    """The bug: a_j kept in [0, C], a_i's box forgotten."""
    return min(max(a_j, 0.0), C)


def select_pair(a: np.ndarray, t: np.ndarray, G: np.ndarray, C: float) -> tuple[int, int, float]:
    """The maximal violating pair of -t_n G_n (G = Q a - 1, the gradient of minus the dual (7.32))."""
    up = ((t > 0) & (a < C)) | ((t < 0) & (a > 0))
    low = ((t > 0) & (a > 0)) | ((t < 0) & (a < C))
    score = -t * G
    i = int(np.flatnonzero(up)[np.argmax(score[up])])
    j = int(np.flatnonzero(low)[np.argmin(score[low])])
    return i, j, float(score[i] - score[j])


def snap(a_i: float, C: float, eps: float = 1e-12) -> float:
    """a_i on the bound it is within rounding of (Platt snaps it too): a few ulps above 0 it would
    still count as free, and the same pair would be chosen again for a step of size zero forever."""
    if abs(a_i) <= eps * C:
        return 0.0
    return C if abs(a_i - C) <= eps * C else a_i


def student_smo(K: np.ndarray, t: np.ndarray, C: float, clip, tol: float = 1e-9,
                max_iter: int = 20_000) -> tuple[np.ndarray, float]:
    """A plain SMO on (7.32)-(7.34) with the given clipping step; returns (a, b)."""
    a = np.zeros(t.shape[0])
    for _ in range(max_iter):
        G = t * (K @ (a * t)) - 1.0
        i, j, violation = select_pair(a, t, G, C)
        if violation < tol:
            break
        E = K @ (a * t) - t                                              # E_n = y(x_n) - t_n, b cancels
        eta = max(K[i, i] + K[j, j] - 2.0 * K[i, j], 1e-12)
        a_j_old, a_i_old = a[j], a[i]
        a_j = clip(a_j_old + t[j] * (E[i] - E[j]) / eta, a_i_old, a_j_old, t[i] == t[j], C)
        a[j] = a_j
        a[i] = snap(a_i_old - t[i] * t[j] * (a_j - a_j_old), C)          # keeps (7.34)
    y = K @ (a * t)
    free = (a > 1e-8 * C) & (a < (1 - 1e-8) * C)
    b = float(np.mean(t[free] - y[free])) if np.any(free) else 0.0       # (7.37)
    return a, b


def main() -> int:
    X, t = datasets.ripley_mixture(seed=3)
    X, t = X[:60], t[:60]
    machine = SoftMarginSVC(X, t, RBF(0.45), C=1.0)
    K = machine.gram()
    failing = {}
    for name, clip in (("correct clipping", clip_correct), ("buggy clipping", clip_buggy)):
        a, b = student_smo(K, t, machine.C, clip)
        report = check(machine, a=a, b=b, tol=1e-6)
        print(f"=== the student's SMO, {name}: a in [{a.min():.3f}, {a.max():.3f}], b = {b:.6f}")
        print(report)
        failing[name] = [r.tag for r in report.failed()]
        print(f"failing rows: {', '.join(failing[name]) or 'none'}\n")
    ok = not failing["correct clipping"] and "(7.33)" in failing["buggy clipping"]
    print("the correct step passes and the buggy one fails (7.33):", ok)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
