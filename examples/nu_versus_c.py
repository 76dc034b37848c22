"""nu against C (Result 7.7): the nu-SVC is the C-SVC with C = 1/(N rho).

    python examples/nu_versus_c.py

The nu-SVC minimises 1/2 ||w||^2 - nu rho + 1/N sum_n xi_n subject to
t_n y_n >= rho - xi_n; rescaling w, b and xi by 1/rho turns it into the
soft-margin primal (7.21) with C = 1/(N rho), and the multipliers into
a_C = a_nu / rho. nu itself bounds the fractions: at most nu N margin errors,
at least nu N support vectors. The script solves the nu-SVC for several nu on
the Ripley-type data, computes C = 1/(N rho), solves that C-SVC, and compares
the two solutions and their certificates.
"""

from __future__ import annotations

import numpy as np

from sparsekernel import datasets
from sparsekernel.duality import check
from sparsekernel.formulations import NuSVC, SoftMarginSVC
from sparsekernel.kernels import RBF


def main() -> int:
    X, t = datasets.ripley_mixture()
    N = len(t)
    ok = True
    print(f"{'nu':>5} {'rho':>10} {'C=1/(N rho)':>12} {'SV frac':>8} {'err frac':>9} "
          f"{'max|a_C - a_nu/rho|':>20} {'max|y_C - y_nu/rho|':>20} {'KKT nu':>7} {'KKT C':>7}")
    for nu in (0.45, 0.5, 0.6, 0.8):
        nu_machine = NuSVC(X, t, RBF(0.45), nu=nu)
        s_nu = nu_machine.solve("qp-clarabel")
        C = 1.0 / (N * s_nu.rho)
        c_machine = SoftMarginSVC(X, t, RBF(0.45), C=C)
        s_c = c_machine.solve("qp-clarabel")
        da = float(np.max(np.abs(s_c.a - s_nu.a / s_nu.rho)))
        dy = float(np.max(np.abs(s_c.decision_function(X) - s_nu.decision_function(X) / s_nu.rho)))
        r_nu, r_c = check(nu_machine, s_nu), check(c_machine, s_c)
        ok &= r_nu.ok and r_c.ok and s_nu.n_support / N >= nu - 1e-9
        print(f"{nu:>5} {s_nu.rho:>10.6f} {C:>12.5g} {s_nu.n_support / N:>8.3f} "
              f"{np.mean(s_nu.xi > 1e-6 * s_nu.rho):>9.3f} {da:>20.1e} {dy:>20.1e} "
              f"{r_nu.max_violation:>7.0e} {r_c.max_violation:>7.0e}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
