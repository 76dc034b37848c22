"""Duality walkthrough: one machine's primal, its dual, the constraint duals and the certificate.

    python examples/duality_walkthrough.py            # every machine
    python examples/duality_walkthrough.py soft       # one (hard, soft, nu-svc, eps-svr, nu-svr, one-class, svdd)

For the soft margin (7.20)-(7.21) the primal is

    min_{w, b, xi}  C sum_n xi_n + 1/2 ||w||^2   s.t.  t_n y(x_n) >= 1 - xi_n,  xi_n >= 0

and the Lagrangian (7.22) with multipliers a_n >= 0 for the margin constraints
and mu_n >= 0 for xi_n >= 0 gives the dual (7.32)-(7.34):

    max_a  sum_n a_n - 1/2 sum_nm a_n a_m t_n t_m k(x_n, x_m)   s.t.  0 <= a_n <= C,  sum_n a_n t_n = 0.

Strong duality makes the two optimal values equal, the multipliers of the
primal's constraints are the dual's solution, and the KKT conditions
(7.23)-(7.31) hold. This script solves both problems with Clarabel, reads the
multipliers off the primal's constraints, compares them with the dual's
solution, and prints the certificate: the KKT table and the gap, then each
point's case in Result 7.6's table.
"""

from __future__ import annotations

import sys

import numpy as np

from sparsekernel.chapter import notes_cases
from sparsekernel.duality import categories, check, gap

NAMES = {"hard": "HardMarginSVC", "soft": "SoftMarginSVC", "nu-svc": "NuSVC", "eps-svr": "EpsilonSVR",
         "nu-svr": "NuSVR", "one-class": "OneClassSVM", "svdd": "SVDD"}


def walk(label: str) -> bool:
    case = next(c for c in notes_cases() if c.label == label)
    machine = case.build()
    print(f"=== {machine!r} on {case.data} (Figure {case.figure})")
    primal_form, dual_form = machine.primal(), machine.dual()
    print(f"primal constraints: {list(primal_form.constraints)}; dual constraints: {list(dual_form.constraints)}")
    primal = machine.solve("primal-clarabel")
    dual = machine.solve("clarabel")
    print(f"primal optimum {primal.primal_objective:.10g}   dual optimum {dual.dual_objective:.10g}   "
          f"difference {primal.primal_objective - dual.dual_objective:.1e}")
    order = np.argsort(-(dual.a if dual.a_hat is None else dual.a + dual.a_hat))[:5]
    print("largest multipliers: n, a_n read off the primal's constraints, a_n from the dual")
    for n in order:
        print(f"  {n:>4}  {primal.a[n]:.8f}  {dual.a[n]:.8f}")
    print(f"max |a_primal - a_dual| = {np.max(np.abs(primal.a - dual.a)):.1e}")
    g = gap(machine, primal, dual)
    print(f"primal objective at the primal point minus dual objective at the dual's a: {g.absolute:.1e}")
    report = check(machine, dual)
    print(report)
    print("points by case:")
    print(categories(machine, dual))
    print()
    return report.ok


def main(argv: list[str]) -> int:
    labels = [NAMES[a] for a in argv] if argv else list(NAMES.values())
    return 0 if all([walk(label) for label in labels]) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
