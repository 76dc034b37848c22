"""cvxpy formulations against the direct QP path and LIBSVM, and the dual's two quadratic forms.

Run from the repository root (after ``pip install -e .``)::

    python benchmarks/formulations.py            # N = 250, 500, 1000, 2000
    python benchmarks/formulations.py --quick    # N = 250, 500

Data: scikit-learn's ``make_classification`` with 20 features (standardised),
soft-margin C-SVC with C = 1. Part 1 (RBF, gamma = 1/20, a full-rank Gram
matrix) times, in one run: the cvxpy dual with Clarabel and with OSQP
(compile time, solver time, and a re-solve after ``set_params(C=2)``, which
reuses the compiled problem), the direct standard-form QP through Clarabel's
and OSQP's own APIs, and scikit-learn's SVC (LIBSVM, tol 1e-8); each method's
objective is compared with LIBSVM's (our dual objective evaluated at LIBSVM's
multipliers). Part 2 states the dual's quadratic term either as
``quad_form(u, psd_wrap(K))`` or as ``sum_squares(F^T u)`` with K = F F^T, at
full rank (RBF, F is N x N) and at low rank (linear kernel, F is N x 20), and
reports compile + solve time of each and their ratio.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.datasets import make_classification
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from sparsekernel.formulations import SoftMarginSVC
from sparsekernel.kernels import RBF, Linear


def data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    X, y = make_classification(n_samples=n, n_features=20, n_informative=10, random_state=seed)
    return StandardScaler().fit_transform(X), np.where(y == 1, 1.0, -1.0)


def libsvm_objective(m: SoftMarginSVC, X: np.ndarray, t: np.ndarray, gamma: float | str) -> tuple[float, float]:
    start = time.perf_counter()
    est = SVC(C=m.C, kernel="rbf" if gamma != "linear" else "linear",
              gamma=gamma if gamma != "linear" else "scale", tol=1e-8, cache_size=500).fit(X, t)
    seconds = time.perf_counter() - start
    a = np.zeros(len(t))
    a[est.support_] = np.abs(est.dual_coef_[0])
    return m.dual_objective(a), seconds


def timed(m: SoftMarginSVC, method: str, **opts) -> tuple[float, float, float]:
    """(compile seconds, solver seconds, objective) of one solve."""
    sol = m.solve(method, **opts)
    return sol.compile_time, sol.solve_time, sol.dual_objective


def part1(sizes: list[int]) -> None:
    print("Part 1: soft-margin C-SVC dual, RBF (full rank), C = 1")
    head = (f"{'N':>5} | {'method':<14} {'compile':>8} {'solve':>8} {'re-solve':>9} "
            f"{'total':>8} {'x LIBSVM':>9} | {'objective':>14} {'rel. diff to LIBSVM':>20}")
    print(head)
    print("-" * len(head))
    for n in sizes:
        X, t = data(n)
        gamma = 1.0 / 20
        probe = SoftMarginSVC(X, t, RBF(gamma), C=1.0)
        ref, libsvm_time = libsvm_objective(probe, X, t, gamma)
        for method in ("clarabel", "osqp", "qp-clarabel", "qp-osqp"):
            m = SoftMarginSVC(X, t, RBF(gamma), C=1.0)
            m.gram()  # the kernel matrix is common to every method; keep it out of the timings
            comp, solve, obj = timed(m, method, form="psd_wrap") if not method.startswith("qp") else timed(m, method)
            m.set_params(C=2.0)
            start = time.perf_counter()
            m.solve(method, **({} if method.startswith("qp") else {"form": "psd_wrap"}))
            resolve = time.perf_counter() - start
            total = comp + solve
            print(f"{n:>5} | {method:<14} {comp:>7.3f}s {solve:>7.3f}s {resolve:>8.3f}s {total:>7.3f}s "
                  f"{total / libsvm_time:>9.1f} | {obj:>14.8f} {(obj - ref) / abs(ref):>20.1e}")
        print(f"{n:>5} | {'libsvm (SVC)':<14} {'':>8} {libsvm_time:>7.3f}s {'':>9} {libsvm_time:>7.3f}s "
              f"{1.0:>9.1f} | {ref:>14.8f} {0.0:>20.1e}")


def part2(sizes: list[int]) -> None:
    print("\nPart 2: the dual's quadratic term, factor sum_squares(F^T u) against quad_form(u, psd_wrap(K))")
    head = (f"{'N':>5} | {'kernel':<16} {'rank':>5} | {'psd_wrap':>9} {'factor':>9} {'factor/psd_wrap':>16} "
            f"{'auto picks':>11} | {'objective diff':>14}")
    print(head)
    print("-" * len(head))
    for n in sizes:
        X, t = data(n)
        for label, kernel in (("RBF (full rank)", RBF(1.0 / 20)), ("linear (low)", Linear())):
            seconds, objective = {}, {}
            for form in ("psd_wrap", "factor"):
                m = SoftMarginSVC(X, t, kernel, C=1.0)
                m.feature_space  # eigendecomposition / features: shared by both forms, not timed
                start = time.perf_counter()
                sol = m.solve("clarabel", form=form)
                seconds[form] = time.perf_counter() - start
                objective[form] = sol.dual_objective
            rank = m.feature_space.rank
            auto = m.dual().quadratic_form
            diff = abs(objective["factor"] - objective["psd_wrap"]) / abs(objective["psd_wrap"])
            print(f"{n:>5} | {label:<16} {rank:>5} | {seconds['psd_wrap']:>8.3f}s {seconds['factor']:>8.3f}s "
                  f"{seconds['factor'] / seconds['psd_wrap']:>16.2f} {auto:>11} | {diff:>14.1e}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="N = 250 and 500 only")
    parser.add_argument("--sizes", default="", help="comma-separated sizes")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else ([250, 500] if args.quick else [250, 500, 1000, 2000])
    part1(sizes)
    part2(sizes)


if __name__ == "__main__":
    main()
