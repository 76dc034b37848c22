"""The SMO step by step (Algorithm 7.1, gap 7.3) on six points.

    python examples/smo_step_by_step.py

Fix every multiplier but a_i and a_j. The balance (7.34) keeps t_i a_i + t_j a_j
fixed, so the pair moves along a line, a_j -> a_j + delta and a_i -> a_i - t_i t_j
delta; along it the dual (7.32) is a parabola with curvature
eta = k_ii + k_jj - 2 k_ij = ||phi(x_i) - phi(x_j)||^2, maximised at
delta* = t_j (E_i - E_j) / eta (E_n = y(x_n) - t_n), and a_j^new is clipped to
the interval [L, H] that keeps both in the box 0 <= a <= C. No matrix is
inverted. The script runs the SMO with each of its three working-set rules
(Platt's heuristics, the maximal violating pair, Fan, Chen and Lin's
second-order rule), prints every step of the first, checks that each step
raises the dual, and ends with the certificate: the KKT table and the gap,
equal to the Clarabel solution of the same dual.
"""

from __future__ import annotations

import numpy as np

from sparsekernel.duality import check
from sparsekernel.formulations import SoftMarginSVC
from sparsekernel.kernels import RBF

X = np.array([[0.0, 0.0], [1.0, 0.2], [0.3, 1.0], [2.0, 2.1], [2.6, 1.4], [1.1, 1.2]])
t = np.array([1.0, 1.0, 1.0, -1.0, -1.0, -1.0])


def main() -> int:
    machine = SoftMarginSVC(X, t, RBF(0.5), C=1.0)
    reference = machine.solve("qp-clarabel")
    ok = True
    for wss in ("platt", "first-order", "second-order"):
        sol = machine.solve("smo", tol=1e-8, wss=wss, record=True, shrinking=False)
        trace = sol.trace
        dual = -np.concatenate([[trace.initial_objective], trace.objective])   # L~ = -f
        ok &= bool(np.all(np.diff(dual) >= -1e-12))
        print(f"--- wss = {wss}: {len(trace.i)} steps, dual {dual[-1]:.10f} (Clarabel {reference.dual_objective:.10f})")
        if wss != "platt":
            continue
        print(f"{'step':>4} {'i':>2} {'j':>2} {'delta':>10} {'L':>7} {'H':>7} {'eta':>7} {'dual L~':>12} {'m - M':>9}")
        for k in range(len(trace.i)):
            print(f"{k + 1:>4} {trace.i[k]:>2} {trace.j[k]:>2} {trace.delta[k]:>10.6f} {trace.L[k]:>7.4f} "
                  f"{trace.H[k]:>7.4f} {trace.eta[k]:>7.4f} {-trace.objective[k]:>12.8f} {trace.violation[k]:>9.1e}")
        print("a =", np.round(sol.a, 6), " b =", round(sol.b, 6))
    report = check(machine, sol, 1e-6)
    print(report)
    same = abs(sol.dual_objective - reference.dual_objective) <= 1e-9 * max(1.0, abs(reference.dual_objective))
    print(f"each step raised the dual: {ok}; equal to Clarabel's optimum: {same}")
    return 0 if ok and same and report.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
