"""Hinge against logistic loss, (7.44)-(7.48): why the SVM is sparse and logistic regression is not.

    python examples/hinge_vs_logistic.py

Both minimise sum_n E(y_n t_n) + lambda ||w||^2 with y = w^T phi(x) + b; the
SVM uses the hinge E_SV(z) = [1 - z]_+ (7.45), logistic regression
E_LR(z) = ln(1 + exp(-z)) (7.48). At a minimum, w is a weighted sum of the
training features with weight -E'(z_n) t_n / (2 lambda): the hinge's
derivative is exactly zero for z_n > 1, so those points drop out (a_n = 0),
while the logistic derivative sigma(-z_n) is never zero. The script fits both
with the same lambda = 1/(2C) on the Ripley-type data (as cvxpy problems in
the same feature space), checks that the hinge form equals the constrained
soft-margin primal, and counts the points with non-zero weight.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from sparsekernel import datasets
from sparsekernel.duality import check
from sparsekernel.formulations import SoftMarginSVC
from sparsekernel.kernels import RBF


def main() -> int:
    X, t = datasets.ripley_mixture()
    C = 1.0
    svm = SoftMarginSVC(X, t, RBF(0.45), C=C)
    hinge = svm.solve("hinge-clarabel")
    primal = svm.solve("primal-clarabel")
    print(f"(7.44) hinge form: C * objective = {hinge.primal_objective:.8f}; constrained primal (7.21): "
          f"{primal.primal_objective:.8f}; difference {hinge.primal_objective - primal.primal_objective:.1e}")
    print(f"max |w_hinge - w_primal| = {np.max(np.abs(hinge.w - primal.w)):.1e}, |b difference| = "
          f"{abs(hinge.b - primal.b):.1e}")
    F = svm.feature_space.F
    lam = 1.0 / (2 * C)
    w, b = cp.Variable(F.shape[1]), cp.Variable()
    z = cp.multiply(t, F @ w + b)
    cp.Problem(cp.Minimize(cp.sum(cp.logistic(-z)) + lam * cp.sum_squares(w))).solve(solver="CLARABEL")  # (7.47)
    z_lr = t * (F @ w.value + b.value)
    weight_lr = 1.0 / (1.0 + np.exp(z_lr))           # -E_LR'(z) = sigma(-z): never zero
    z_sv = t * (F @ hinge.w + hinge.b)
    print(f"SVM: points with non-zero weight (a_n > 0): {hinge.n_support} of {len(t)}; "
          f"points beyond the margin (z > 1) carry zero weight: {int(np.sum(z_sv > 1 + 1e-6))}")
    print(f"logistic regression: points with weight sigma(-z_n) > 1e-6: {int(np.sum(weight_lr > 1e-6))} of {len(t)}; "
          f"smallest weight {weight_lr.min():.2e}")
    print("losses at z = -1, 0, 1, 2:  hinge", [max(0.0, 1 - v) for v in (-1, 0, 1, 2)],
          " logistic/ln2", [round(float(np.log1p(np.exp(-v)) / np.log(2)), 4) for v in (-1, 0, 1, 2)])
    report = check(svm, hinge, 1e-5)
    print(report)
    return 0 if report.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
