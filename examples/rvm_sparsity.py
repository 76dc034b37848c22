"""The RVM's sparsity mechanism (Figures 7.10 and 7.11, Results 7.16-7.18), checked numerically.

    python examples/rvm_sparsity.py

With one basis vector phi, the evidence as a function of its precision alpha
has a finite maximiser iff beta t_par^2 > 1, at alpha* = ||phi||^2 / (t_par^2 -
1/beta) (Result 7.16). In general the evidence splits as L(alpha) =
L(alpha_-i) + lambda(alpha_i) (7.96)-(7.97) with the sparsity and quality
factors s_i = phi_i^T C_-i^-1 phi_i and q_i = phi_i^T C_-i^-1 t; lambda has its
maximum at alpha_i = s_i^2 / (q_i^2 - s_i) (7.101) when q_i^2 > s_i, raising the
evidence by 1/2 (x - 1 - ln x) with x = q_i^2 / s_i, and is increasing (the
function is pruned) when q_i^2 <= s_i (Result 7.18). The script checks the
closed forms against numerical maximisation, then takes the fast algorithm's
(Algorithm 7.2) fit on the sinusoid and certifies it: for every basis
function, computed afresh from C by (7.102)-(7.105), a kept one has
q^2 > s and its alpha equal to (7.101), a pruned one has q^2 <= s.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import minimize_scalar

from sparsekernel import chapter, datasets
from sparsekernel.kernels import RBF
from sparsekernel.solvers.rvm import rvm_regression


def log_evidence(t: np.ndarray, C: np.ndarray) -> float:
    """(7.85) for N(t | 0, C)."""
    sign, logdet = np.linalg.slogdet(C)
    return -0.5 * (t.size * math.log(2 * math.pi) + logdet + t @ np.linalg.solve(C, t))


def one_basis_vector() -> bool:
    """Result 7.16 for a target aligned with phi (kept) and one nearly orthogonal to it (pruned)."""
    rng = np.random.default_rng(0)
    phi, noise, beta = rng.normal(size=8), rng.normal(size=8), 2.0
    ok = True
    for label, t in (("aligned", 0.8 * phi + 0.3 * noise), ("orthogonal", noise - (noise @ phi) / (phi @ phi) * phi)):
        t_par = phi @ t / np.linalg.norm(phi)
        evidence = lambda la: log_evidence(t, np.eye(8) / beta + np.outer(phi, phi) / math.exp(la))  # noqa: E731
        best = minimize_scalar(lambda la: -evidence(la), bounds=(-10, 20), method="bounded", options={"xatol": 1e-10})
        if beta * t_par**2 > 1:
            closed = phi @ phi / (t_par**2 - 1 / beta)                           # Result 7.16
            print(f"Result 7.16 ({label}): beta t_par^2 = {beta * t_par**2:.4f} > 1, alpha* = {closed:.6f}, "
                  f"numerical maximiser {math.exp(best.x):.6f}")
            ok &= abs(math.exp(best.x) - closed) <= 1e-5 * closed
        else:
            print(f"Result 7.16 ({label}): beta t_par^2 = {beta * t_par**2:.2e} <= 1: the evidence grows all the "
                  f"way to alpha = infinity (numerical maximiser at the bound, ln alpha = {best.x:.2f})")
            ok &= best.x > 19.0 and evidence(19.9) >= evidence(0.0)
    return bool(ok)


def lambda_of(alpha: float, s: float, q2: float) -> float:
    return 0.5 * (math.log(alpha) - math.log(alpha + s) + q2 / (alpha + s))     # (7.97)


def result_7_18(q2: float = 4.0, s: float = 1.0) -> bool:
    best = minimize_scalar(lambda la: -lambda_of(math.exp(la), s, q2), bounds=(-10, 10), method="bounded",
                           options={"xatol": 1e-12})
    alpha = s * s / (q2 - s)                                                     # (7.101)
    x = q2 / s
    gain = lambda_of(alpha, s, q2)                                               # lambda(inf) = 0
    print(f"Result 7.18 (q^2 = {q2:g}, s = {s:g}, Figure 7.11): alpha* = {alpha:.6f}, numerical "
          f"{math.exp(best.x):.6f}; gain {gain:.6f} = 1/2 (x - 1 - ln x) = {0.5 * (x - 1 - math.log(x)):.6f}")
    return abs(math.exp(best.x) - alpha) <= 1e-6 and abs(gain - 0.5 * (x - 1 - math.log(x))) <= 1e-12


def certify_fast_fit() -> bool:
    X, t = datasets.sinusoid()
    K = RBF(chapter.SINUSOID_GAMMA)(X, X)
    fit = rvm_regression(K, t, method="fast", tol=1e-8)
    Phi = np.column_stack([np.ones(len(t)), K])                                  # candidates: bias, then k(., x_n)
    kept = ([0] if fit.bias_used else []) + [1 + int(n) for n in fit.relevance]
    alpha = np.full(Phi.shape[1], np.inf)
    alpha[kept] = fit.alpha
    C = np.eye(len(t)) / fit.beta + (Phi[:, kept] / alpha[kept]) @ Phi[:, kept].T  # (7.86)
    Cinv_Phi = np.linalg.solve(C, Phi)
    S = np.einsum("ni,ni->i", Phi, Cinv_Phi)                                     # (7.103)
    Q = Cinv_Phi.T @ t                                                           # (7.102)
    finite = np.isfinite(alpha)
    s = np.where(finite, alpha * S / np.where(finite, alpha - S, 1.0), S)       # (7.105)
    q = np.where(finite, alpha * Q / np.where(finite, alpha - S, 1.0), Q)       # (7.104)
    print(f"fast RVM on the sinusoid: {len(fit.relevance)} relevance vectors, bias "
          f"{'kept' if fit.bias_used else 'pruned'}, noise sigma {1 / math.sqrt(fit.beta):.3f}")
    print(f"{'basis':>6} {'q^2':>10} {'s':>10} {'q^2 / s':>8} {'alpha':>12} {'s^2/(q^2-s)':>12}")
    ok = True
    for i in range(Phi.shape[1]):
        name = "bias" if i == 0 else f"k(.,{i - 1})"
        predicted = s[i] ** 2 / (q[i] ** 2 - s[i]) if q[i] ** 2 > s[i] else math.inf   # (7.101)
        print(f"{name:>6} {q[i] ** 2:>10.4g} {s[i]:>10.4g} {q[i] ** 2 / s[i]:>8.3f} {alpha[i]:>12.5g} {predicted:>12.5g}")
        if finite[i]:
            ok &= q[i] ** 2 > s[i] and abs(predicted - alpha[i]) <= 1e-3 * alpha[i]
        else:
            ok &= q[i] ** 2 <= s[i] * (1 + 1e-6)
    return ok


def main() -> int:
    results = [one_basis_vector(), result_7_18(), certify_fast_fit()]
    print("all checks passed" if all(results) else f"checks: {results}")
    return 0 if all(results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
