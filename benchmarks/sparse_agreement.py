"""Our five SVM estimators against scikit-learn's on a 20-newsgroups-like sparse set: the same
support sets, decision values and predictions, and each fit's time, in one run.

Run from the repository root:

    python benchmarks/sparse_agreement.py                          # 5,000 x 20,000 at 0.5%
    python benchmarks/sparse_agreement.py --n 2000 --d 10000 --density 0.01

X is CSR with exponential "word counts" and a planted linear rule on 200 words: the labels are
the sign of X w about its median, the regression target X w / std. Both sides fit the same CSR
matrix at tol 1e-3 (scikit-learn's default; ours has LIBSVM's meaning). Our estimators are fitted
once on a small slice first, so that numba's compile is not in the times (the cold start is
``benchmarks/import_time.py``'s subject). Columns: fit seconds of each and their ratio; "SV diff",
points in one support set and not the other, against the reference's support size; "|dy|/scale",
the largest difference of decision values (regression: predictions) relative to the largest
reference value; "agree", the share of equal predictions (classifiers and one-class).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np


def _values(est, X) -> np.ndarray:
    return est.decision_function(X) if hasattr(est, "decision_function") else est.predict(X)


def _timed_fit(est, X, t) -> float:
    start = time.perf_counter()
    est.fit(X) if t is None else est.fit(X, t)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--d", type=int, default=20000)
    parser.add_argument("--density", type=float, default=0.005)
    args = parser.parse_args()
    from sklearn import svm

    from sparsekernel import estimators as ours
    from sparsekernel.datasets import text_like

    X, y, r = text_like(args.n, args.d, args.density, words=200)
    cases = [
        ("SVC", dict(kernel="linear"), y), ("NuSVC", dict(kernel="linear", nu=0.2), y),
        ("SVR", dict(kernel="linear"), r), ("NuSVR", dict(kernel="linear"), r),
        ("OneClassSVM", dict(kernel="rbf", nu=0.2), None),
    ]
    print(f"CSR X {args.n} x {args.d} at density {args.density:g} ({X.nnz} non-zeros), tol 1e-3")
    head = f"{'estimator':<12} {'ours s':>7} {'sklearn s':>9} {'ratio':>6} {'SV diff':>11} {'|dy|/scale':>10} {'agree':>7}"
    print(head + "\n" + "-" * len(head))
    for name, params, t in cases:
        mine, theirs = getattr(ours, name)(**params), getattr(svm, name)(**params)
        small = (X[:200],) if t is None else (X[:200], t[:200])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            getattr(ours, name)(**params).fit(*small)           # numba's loops compiled before timing
        a, b = _timed_fit(mine, X, t), _timed_fit(theirs, X, t)
        f, g = _values(mine, X), _values(theirs, X)
        diff = len(set(mine.support_) ^ set(theirs.support_))
        dy = float(np.max(np.abs(f - g)) / max(np.max(np.abs(g)), 1e-300))
        agree = "-" if name in ("SVR", "NuSVR") else f"{np.mean(mine.predict(X) == theirs.predict(X)):.4f}"
        print(f"{name:<12} {a:>7.2f} {b:>9.2f} {a / b:>6.2f} {diff:>5} / {len(theirs.support_):<5} {dy:>10.1e} {agree:>7}")


if __name__ == "__main__":
    main()
