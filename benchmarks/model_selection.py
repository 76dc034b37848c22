"""Cross-validated grid search: SVMGridSearchCV (warm C paths) against GridSearchCV(sklearn.svm.SVC()).

Run from the repository root (the Dask rows need ``pip install -e .[dask]``):

    python benchmarks/model_selection.py                      # N = 2,000 and 5,000, one repeat
    python benchmarks/model_selection.py --sizes 2000 --repeats 3
    python benchmarks/model_selection.py --sizes 2000 --grid 4 --no-dask     # a quick look
    python benchmarks/model_selection.py --sizes 2000 --no-dask --pipeline   # make_pipeline(StandardScaler(), SVC())

The problem: ``make_classification(N, 20 features, random_state=0)``, raw X;
an RBF SVC with tol = 1e-3 and a 200 MB cache (both libraries' defaults); a
grid of ``--grid`` x ``--grid`` values, C = logspace(-2, 3) and gamma =
logspace(-3, 0) (scikit-learn's "scale" is about 0.05 here); 5-fold
stratified CV (GridSearchCV's default split, so both see the same folds);
accuracy; refit of the best on all of X. With ``--pipeline`` each library's
SVC is the last step of ``make_pipeline(StandardScaler(), SVC())`` and the
grid names ``svc__C`` and ``svc__gamma`` (standardised X: "scale" is then
0.05, inside the grid's range). Both run with one thread
(``n_jobs=None``; BLAS limited to one thread: LIBSVM is single-threaded, and
on a shared machine threaded BLAS only adds noise), repeats interleaved
(ours first on even repeats, scikit-learn's first on odd ones), median
times. numba's compile or cache load happens before any timing.

Then the same SVMGridSearchCV under ``joblib.parallel_backend("dask")`` on a
``dask.distributed.LocalCluster`` of two single-threaded worker processes
(warmed: each worker has loaded the compiled loops before the timing), with
its time and whether its ``cv_results_`` scores equal the local run's.

Printed: per N, both times and their ratio (target: at most 0.25), the best
parameters of each, whether they agree, the largest difference of the 100
mean CV scores, and the Dask row.

Measured on the 2-core development machine (2026-12-02), after a C path's
models came to be scored with one kernel evaluation per fold
(``estimators.svm.shared_test_kernel``): N = 2,000, median of 3 interleaved,
8.0 s against 31.6 s (0.25; 0.28 before that change, 8.7 s against 30.9 s),
same best (C = 5.99, gamma = 0.01), scores equal; N = 5,000, one run: 40.1 s
against 183.9 s (0.22), same best (C = 1.67, gamma = 0.0464), largest score
difference 2e-4. Earlier, on a shared machine (load 3-9 from other jobs):
Dask 19.8 s at N = 2,000 and 116.5 s at N = 5,000, equal to the local runs;
the two workers share the same two busy cores, so the cluster is not faster
here; it shows that the search runs there unchanged. 2026-12-07, quiet
machine, one run each at N = 2,000: 6.6 s against 30.3 s (0.22), same best;
``--pipeline`` 7.5 s against 35.6 s (0.21), same best (C = 5.99, gamma =
0.00464), largest score difference 5e-4 (one test point of a fold).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")           # before numpy; the Dask workers inherit it
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))   # the workers

from sklearn.datasets import make_classification  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402
import sklearn.svm  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from sparsekernel.estimators import SVC  # noqa: E402
from sparsekernel.model_selection import SVMGridSearchCV  # noqa: E402

FOLDS, TOL, CACHE_MB, FEATURES = 5, 1e-3, 200, 20


#: --pipeline: the SVC is the last step of make_pipeline(StandardScaler(), SVC()) (set by main)
PIPELINE = False


def grid(size: int) -> dict[str, list[float]]:
    prefix = "svc__" if PIPELINE else ""
    return {f"{prefix}C": np.logspace(-2, 3, size).tolist(), f"{prefix}gamma": np.logspace(-3, 0, size).tolist()}


def estimator(svc: object) -> object:
    """The searched estimator: ``svc``, or with --pipeline make_pipeline(StandardScaler(), svc)."""
    if not PIPELINE:
        return svc
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), svc)


def ours(X: np.ndarray, y: np.ndarray, size: int, n_jobs: int | None = None) -> tuple[float, SVMGridSearchCV]:
    start = time.perf_counter()
    search = SVMGridSearchCV(estimator(SVC(tol=TOL, cache_size=CACHE_MB)), grid(size), cv=FOLDS,
                             n_jobs=n_jobs).fit(X, y)
    return time.perf_counter() - start, search


def theirs(X: np.ndarray, y: np.ndarray, size: int) -> tuple[float, GridSearchCV]:
    start = time.perf_counter()
    search = GridSearchCV(estimator(sklearn.svm.SVC(tol=TOL, cache_size=CACHE_MB)), grid(size), cv=FOLDS).fit(X, y)
    return time.perf_counter() - start, search


def warm_up() -> None:
    """numba's loops loaded (or compiled) before any timing."""
    X, y = make_classification(n_samples=60, n_features=4, random_state=0)
    SVC().fit_path(X, y, [0.1, 1.0])
    Xl, yl = make_classification(n_samples=2100, n_features=4, random_state=0)     # float32 rows
    SVC().fit_path(Xl, yl, [1.0])


def on_dask(X: np.ndarray, y: np.ndarray, size: int) -> tuple[float, SVMGridSearchCV] | None:
    try:
        import joblib
        from dask.distributed import Client, LocalCluster
    except ImportError:
        return None
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        client.run(warm_up)
        with joblib.parallel_backend("dask"):
            return ours(X, y, size, n_jobs=-1)


def run(N: int, size: int, repeats: int, dask: bool) -> dict[str, object]:
    X, y = make_classification(n_samples=N, n_features=FEATURES, random_state=0)
    mine, sk = [], []
    for r in range(repeats):
        order = (ours, theirs) if r % 2 == 0 else (theirs, ours)
        for fn in order:
            seconds, search = fn(X, y, size)
            (mine if fn is ours else sk).append((seconds, search))
    t_ours = statistics.median(s for s, _ in mine)
    t_sk = statistics.median(s for s, _ in sk)
    a, b = mine[0][1], sk[0][1]
    diff = float(np.max(np.abs(a.cv_results_["mean_test_score"] - b.cv_results_["mean_test_score"])))
    row: dict[str, object] = dict(N=N, cells=size * size * FOLDS, ours=t_ours, sklearn=t_sk, ratio=t_ours / t_sk,
                                  best_ours=a.best_params_, best_sklearn=b.best_params_,
                                  same_best=a.best_params_ == b.best_params_, score_ours=a.best_score_,
                                  score_sklearn=b.best_score_, max_score_diff=diff)
    if dask:
        result = on_dask(X, y, size)
        if result is not None:
            seconds, remote = result
            row["dask"] = seconds
            row["dask_equal"] = bool(np.array_equal(remote.cv_results_["mean_test_score"],
                                                    a.cv_results_["mean_test_score"]))
    return row


def fmt(best: dict[str, float]) -> str:
    prefix = "svc__" if PIPELINE else ""
    return f"C={best[prefix + 'C']:.3g} gamma={best[prefix + 'gamma']:.3g}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 5000])
    parser.add_argument("--grid", type=int, default=10, help="values of C and of gamma (grid x grid cells)")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--no-dask", action="store_true")
    parser.add_argument("--pipeline", action="store_true", help="search make_pipeline(StandardScaler(), SVC())")
    args = parser.parse_args()
    global PIPELINE
    PIPELINE = args.pipeline
    with threadpool_limits(1):
        warm_up()
        print(f"{args.grid} x {args.grid} grid (C, gamma), {FOLDS}-fold CV, make_classification, "
              f"{FEATURES} features{', in make_pipeline(StandardScaler(), SVC())' if PIPELINE else ''}; median of "
              f"{args.repeats} interleaved run(s)")
        print(f"{'N':>6} {'ours s':>8} {'sklearn s':>10} {'ratio':>6}  {'best (ours)':<24} {'best (sklearn)':<24} "
              f"{'same':>5} {'cv score ours/sk':>17} {'max|dscore|':>11} {'dask 2w s':>9} {'dask=local':>10}")
        for N in args.sizes:
            row = run(N, args.grid, args.repeats, not args.no_dask)
            dask = f"{row['dask']:9.1f} {str(row['dask_equal']):>10}" if "dask" in row else f"{'-':>9} {'-':>10}"
            print(f"{N:>6} {row['ours']:8.1f} {row['sklearn']:10.1f} {row['ratio']:6.2f}  {fmt(row['best_ours']):<24} "
                  f"{fmt(row['best_sklearn']):<24} {str(row['same_best']):>5} "
                  f"{row['score_ours']:.4f}/{row['score_sklearn']:.4f} {row['max_score_diff']:11.1e} {dask}",
                  flush=True)


if __name__ == "__main__":
    main()
