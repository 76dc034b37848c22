"""What a fitted SVC keeps: ours against scikit-learn's, on the same X, measured by tracemalloc.

Run from the repository root:

    python benchmarks/fit_memory.py                 # N = 5,000, D = 500 (X is 20 MB)
    python benchmarks/fit_memory.py --n 2000 --d 200
    python benchmarks/fit_memory.py --n 2000 --d 200 --classes 4   # six one-versus-one pairs

X is float64, C-ordered, with two overlapping Gaussian classes (most points
become support vectors, so a kept copy of X shows). Each estimator is fitted
once on a 200-point slice first (numba's loops and scikit-learn's imports are
loaded outside the measurement), then fitted on X with tracemalloc on:
"kept" is the traced memory after ``fit`` minus before (what the fitted
estimator holds), "peak" the traced peak during ``fit`` minus before; both
in units of X.nbytes. numpy and LIBSVM report their allocations to tracemalloc
(LIBSVM's C++ buffers are not traced; its kept support vectors are, as numpy
arrays).
"""

from __future__ import annotations

import argparse
import gc
import time
import tracemalloc

import numpy as np


def measure(make, X: np.ndarray, y: np.ndarray) -> tuple[float, float, float, int]:
    est = make()
    est.fit(X[:200], y[:200])
    est = make()
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    start = time.perf_counter()
    est.fit(X, y)
    seconds = time.perf_counter() - start
    gc.collect()
    kept, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return (kept - before) / X.nbytes, (peak - before) / X.nbytes, seconds, int(est.support_vectors_.shape[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--d", type=int, default=500)
    parser.add_argument("--classes", type=int, default=2, help="number of classes (one-versus-one pairs)")
    args = parser.parse_args()
    from sklearn import svm

    from sparsekernel.estimators import SVC

    rng = np.random.default_rng(0)
    X = rng.normal(size=(args.n, args.d))
    y = np.floor(X[:, 0] + rng.normal(size=args.n)).astype(int) % args.classes
    gamma = 1.0 / args.d
    print(f"SVC fit on X of {args.n} x {args.d} float64 ({X.nbytes / 2**20:.1f} MB), {args.classes} classes, "
          f"gamma = 1/D, C = 1")
    print(f"{'estimator':<22} {'kept / X':>9} {'peak / X':>9} {'fit s':>7} {'SVs':>6}")
    for name, make in (("sparsekernel SVC", lambda: SVC(gamma=gamma)),
                       ("scikit-learn SVC", lambda: svm.SVC(gamma=gamma))):
        kept, peak, seconds, n_sv = measure(make, X, y)
        print(f"{name:<22} {kept:>9.3f} {peak:>9.3f} {seconds:>7.2f} {n_sv:>6}")


if __name__ == "__main__":
    main()
