"""The hand-written SMO against LIBSVM (scikit-learn's SVC, NuSVC, SVR, NuSVR, OneClassSVM).

Run from the repository root:

    python benchmarks/smo_vs_libsvm.py            # N = 100 300 1,000 5,000 10,000 20,000, real data, estimators
    python benchmarks/smo_vs_libsvm.py --quick    # N = 1,000 and 5,000, real data, one repeat
    python benchmarks/smo_vs_libsvm.py --sizes 5000 --machines C-SVC --repeats 5
    python benchmarks/smo_vs_libsvm.py --estimators-only --repeats 7

The second table compares the estimators, ``sparsekernel.estimators.SVC``
against ``sklearn.svm.SVC``, where small problems spend their time: a fit is
validation, the machine(s), the SMO, the KKT certificate of every solve and
the fitted attributes. Rows: C-SVC on standardised ``make_classification``
(20 features, random_state 0) at N = 100, 300, 1,000 (gamma = 1/20);
one-versus-one on digits (10 classes, 45 pairs, gamma = "scale", raw
pixels: pairs of about 360 points that converge in few iterations, where a
fit's fixed costs weigh most) and on standardised ten-class
``make_classification`` (20 features, 10 informative, random_state 0) at
N = 2,000 and 10,000 (pairs of about 400 and 2,000 points); and the configuration of issue 18: ``make_classification``,
random_state 0, N = 5,000, 20 features, raw X (not standardised), C = 1,
gamma = 1/20, tol 1e-3, 200 MB cache. All in one process: a warm-up fit of
each (numba's compile or cache load excluded: it is measured by
``benchmarks/cold_start.py``), then ``--repeats`` (at least 5; at N = 100,
300 and 1,000 at least 101, 51 and 21: ``MIN_PAIRS``) interleaved pairs of
fits, ours then LIBSVM's; the medians of wall time and of process
CPU time (``time.process_time``: less sensitive to other processes on a
shared machine) and their ratios ours / LIBSVM.

Both solvers get the same problem: RBF kernel with gamma = 1/20 (scikit-learn's
"scale" on standardised data with 20 features), C = 1, nu = 0.5, epsilon =
0.1, tol = 1e-3, a 200 MB kernel cache; synthetic data from
``make_classification`` / ``make_regression`` with 20 features, inputs and
regression targets standardised; real data bundled with scikit-learn:
digits (1797 x 64, "digit >= 5" for the classifiers and one-class) and
diabetes (442 x 10, regression), with gamma = 1/D.

Each (machine, data) cell is timed in a fresh Python process that fits
``--repeats`` times with each solver, alternating ours and LIBSVM's so that
both see the same background load, and reports the median fit times; peak
memory is measured in one more fresh process per solver (one fit; the
process's peak resident set minus its size just before the fit). Our fit
time excludes numba's compile (or cache load) time, which happens before
any measurement and is reported on its own in the ``jit`` column; ``cpu ratio`` is the ratio of
the medians of process CPU time (``time.process_time``), less sensitive than wall time to other
processes on a shared machine. The objective difference
is ours minus LIBSVM's dual objective, both evaluated by
``machine.dual_objective`` in our convention, relative to |ours| (positive:
ours is the better dual value): LIBSVM's
``dual_coef_`` become our multipliers by the documented rescalings (nu-SVC
and one-class: the multipliers summing to nu, resp. 1; nu-SVR: LIBSVM's C is
our C / N). LIBSVM states nu-SVC with the notes' multipliers times N and
one-class times nu N, and our tol is relative to the machine's output scale
(``qp.tol_scale``), so LIBSVM's tol = 1e-3 is our tol = 1e-3 / (libsvm_scale *
tol_scale): we are given that equivalent tolerance. Our time includes the
certificate (the KKT check of the answer) that every solve now runs.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MACHINES = ("C-SVC", "nu-SVC", "eps-SVR", "nu-SVR", "one-class")
SIZES = (100, 300, 1000, 5000, 10000, 20000)
#: the estimator table's rows: (name, data) with data "synth-N", "classes-N", "digits" or "issue18"
ESTIMATOR_ROWS = (("C-SVC", "synth-100"), ("C-SVC", "synth-300"), ("C-SVC", "synth-1000"),
                  ("OvO", "digits"), ("OvO", "classes-2000"), ("OvO", "classes-10000"), ("C-SVC", "issue18"))
#: the estimator rows of fits of a few milliseconds take at least this many pairs (their median moved by 5-10%
#: between runs of 7 pairs: 0.98 and 1.05 at N = 100, where 300 pairs gave 0.94-0.96 each time)
MIN_PAIRS = {"synth-100": 101, "synth-300": 51, "synth-1000": 21}
REAL = ("digits", "diabetes")
C, NU, EPSILON, TOL, CACHE_MB = 1.0, 0.5, 0.1, 1e-3, 200
TASK = {"C-SVC": "classification", "nu-SVC": "classification", "one-class": "classification",
        "eps-SVR": "regression", "nu-SVR": "regression"}


# -- data -------------------------------------------------------------------------------------
def load(data: str, task: str) -> tuple[np.ndarray, np.ndarray]:
    """Standardised inputs and targets (+-1 labels for classification)."""
    from sklearn.datasets import load_diabetes, load_digits, make_classification, make_regression
    from sklearn.preprocessing import StandardScaler

    if data == "digits":
        d = load_digits()
        X, t = d.data, np.where(d.target >= 5, 1.0, -1.0)
    elif data == "diabetes":
        d = load_diabetes()
        X, t = d.data, d.target.astype(float)
    elif task == "classification":
        X, y = make_classification(n_samples=int(data), n_features=20, random_state=0)
        t = np.where(y == 1, 1.0, -1.0)
    else:
        X, t = make_regression(n_samples=int(data), n_features=20, noise=10.0, random_state=0)
    X = StandardScaler().fit_transform(X)
    if task == "regression":
        t = (t - t.mean()) / t.std()
    return X, t


# -- one cell, in a worker process --------------------------------------------------------------
def ours(machine_name: str, X: np.ndarray, t: np.ndarray, gamma: float):
    from sparsekernel.formulations import EpsilonSVR, NuSVC, NuSVR, OneClassSVM, SoftMarginSVC
    from sparsekernel.kernels import RBF

    k = RBF(gamma)
    return {"C-SVC": lambda: SoftMarginSVC(X, t, k, C=C), "nu-SVC": lambda: NuSVC(X, t, k, nu=NU),
            "eps-SVR": lambda: EpsilonSVR(X, t, k, C=C, epsilon=EPSILON),
            "nu-SVR": lambda: NuSVR(X, t, k, C=C, nu=NU), "one-class": lambda: OneClassSVM(X, k, nu=NU)}[machine_name]()


def libsvm(machine_name: str, N: int, gamma: float):
    from sklearn import svm

    common = dict(kernel="rbf", gamma=gamma, tol=TOL, cache_size=CACHE_MB)
    return {"C-SVC": lambda: svm.SVC(C=C, **common), "nu-SVC": lambda: svm.NuSVC(nu=NU, **common),
            "eps-SVR": lambda: svm.SVR(C=C, epsilon=EPSILON, **common),
            "nu-SVR": lambda: svm.NuSVR(C=C / N, nu=NU, **common),
            "one-class": lambda: svm.OneClassSVM(nu=NU, **common)}[machine_name]()


def libsvm_multipliers(machine_name: str, est, N: int) -> np.ndarray:
    """LIBSVM's dual_coef_ as our standard-form variables z."""
    coef = np.zeros(N)
    coef[est.support_] = est.dual_coef_[0]
    if machine_name in ("eps-SVR", "nu-SVR"):
        return np.concatenate([np.maximum(coef, 0.0), np.maximum(-coef, 0.0)])   # (a, a_hat), a a_hat = 0
    a = np.abs(coef)                                   # a_n t_n (C-SVC), scaled for nu-SVC/one-class
    if machine_name == "nu-SVC":
        return NU * a / a.sum()                        # sum_n a_n = nu
    if machine_name == "one-class":
        return a / a.sum()                             # sum_n a_n = 1
    return a


def equivalent_tol(m) -> float:
    """Our (relative) tol for LIBSVM's TOL: LIBSVM's gradients are ``m.libsvm_scale`` times the
    notes' (nu-SVC: N, one-class: nu N) and ours is relative to ``qp.tol_scale``, so LIBSVM's
    stopping rule is ours at TOL / (libsvm_scale * tol_scale): the same test on the same iterates."""
    return TOL / (m.libsvm_scale * m.standard_qp().tol_scale)


def fit_ours(machine_name: str, m, N: int) -> tuple[float, dict]:
    from sparsekernel.solvers.smo import smo

    start, cpu = time.perf_counter(), time.process_time()
    sol = smo(m, tol=equivalent_tol(m), cache_mb=CACHE_MB)
    seconds = time.perf_counter() - start - sol.compile_time
    cpu = time.process_time() - cpu - sol.compile_time
    return seconds, {"iterations": sol.iterations, "objective": sol.dual_objective, "n_support": sol.n_support,
                     "cpu": cpu}


def fit_libsvm(machine_name: str, m, X: np.ndarray, t: np.ndarray, gamma: float) -> tuple[float, dict]:
    N = X.shape[0]
    est = libsvm(machine_name, N, gamma)
    start, cpu = time.perf_counter(), time.process_time()
    est.fit(X) if machine_name == "one-class" else est.fit(X, t)
    seconds = time.perf_counter() - start
    cpu = time.process_time() - cpu
    z = libsvm_multipliers(machine_name, est, N)
    return seconds, {"iterations": int(np.ravel(est.n_iter_)[0]), "objective": m.dual_objective(z),
                     "n_support": int(est.support_.size), "cpu": cpu}


def worker(spec: dict) -> dict:
    """``estimator``: ``estimator_worker``; ``time``: both solvers, fits interleaved (ours, LIBSVM, ours, ...), median times;
    ``memory-smo`` / ``memory-libsvm``: one fit, peak resident memory above the baseline."""
    from sparsekernel.solvers.kernel_cache import row_dtype
    from sparsekernel.solvers.smo import ensure_compiled

    if spec["mode"] == "estimator":
        return estimator_worker(spec)
    machine_name, data, mode = spec["machine"], spec["data"], spec["mode"]
    X, t = load(data, TASK[machine_name])
    N, D = X.shape
    gamma = 1.0 / D
    m = ours(machine_name, X, t, gamma)
    jit = ensure_compiled(row_dtype(N))           # numba's compile or cache load, before anything is measured
    if mode == "time":
        times = {"smo": [], "libsvm": []}
        cpus = {"smo": [], "libsvm": []}
        info = {}
        for _ in range(spec["repeats"]):
            seconds, info["smo"] = fit_ours(machine_name, m, N)
            times["smo"].append(seconds)
            cpus["smo"].append(info["smo"]["cpu"])
            seconds, info["libsvm"] = fit_libsvm(machine_name, m, X, t, gamma)
            times["libsvm"].append(seconds)
            cpus["libsvm"].append(info["libsvm"]["cpu"])
        return {solver: {**info[solver], "time": statistics.median(times[solver]),
                         "cpu": statistics.median(cpus[solver]), "N": N, "jit": jit} for solver in times}
    rss0 = resident_bytes()
    if mode == "memory-smo":
        fit_ours(machine_name, m, N)
    else:
        fit_libsvm(machine_name, m, X, t, gamma)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024       # Linux: kilobytes
    return {"peak_mb": max(peak - rss0, 0) / 2**20}


def estimator_data(data: str) -> tuple[np.ndarray, np.ndarray, object]:
    """(X, labels, gamma) of a row of the estimator table."""
    from sklearn.datasets import load_digits, make_classification
    from sklearn.preprocessing import StandardScaler

    if data == "digits":
        d = load_digits()
        return d.data, d.target, "scale"
    if data == "issue18":                                 # issue 18's configuration: raw X
        X, y = make_classification(n_samples=5000, n_features=20, random_state=0)
        return X, y, 1.0 / 20
    kind, N = data.split("-")
    classes = dict(n_informative=10, n_classes=10) if kind == "classes" else {}
    X, y = make_classification(n_samples=int(N), n_features=20, random_state=0, **classes)
    return StandardScaler().fit_transform(X), y, 1.0 / 20


def estimator_worker(spec: dict) -> dict:
    """Interleaved fits of our SVC and scikit-learn's on one row's data: median wall and CPU times."""
    from sklearn import svm

    from sparsekernel.estimators import SVC

    X, y, gamma = estimator_data(spec["data"])
    common = dict(C=C, kernel="rbf", gamma=gamma, tol=TOL, cache_size=CACHE_MB)
    makers = {"smo": lambda: SVC(**common), "libsvm": lambda: svm.SVC(**common)}
    for make in makers.values():
        make().fit(X, y)                                  # warm-up: numba's load or compile, BLAS, caches
    wall = {name: [] for name in makers}
    cpu = {name: [] for name in makers}
    fitted = {}
    for _ in range(spec["repeats"]):
        for name, make in makers.items():
            est = make()
            w0, c0 = time.perf_counter(), time.process_time()
            est.fit(X, y)
            wall[name].append(time.perf_counter() - w0)
            cpu[name].append(time.process_time() - c0)
            fitted[name] = est
    info = {name: {"n_support": int(est.support_.size), "accuracy": float(np.mean(est.predict(X) == y))}
            for name, est in fitted.items()}                  # after the timed fits: no BLAS threads left spinning
    return {name: {**info[name], "wall": statistics.median(wall[name]), "cpu": statistics.median(cpu[name]),
                   "N": int(X.shape[0])} for name in makers}


ESTIMATOR_HEADER = (f"{'estimator':9s} {'data':>13s} {'N':>6s} {'ours s':>8s} {'libsvm s':>9s} {'ratio':>6s} "
                    f"{'ours cpu':>9s} {'lib cpu':>8s} {'cpu ratio':>9s} {'nSV ours':>8s} {'nSV lib':>8s} "
                    f"{'acc ours':>8s} {'acc lib':>8s}")


def estimator_row(name: str, data: str, a: dict, b: dict) -> str:
    return (f"{name:9s} {data:>13s} {a['N']:6d} {a['wall']:8.4f} {b['wall']:9.4f} {a['wall'] / b['wall']:6.2f} "
            f"{a['cpu']:9.4f} {b['cpu']:8.4f} {a['cpu'] / b['cpu']:9.2f} {a['n_support']:8d} {b['n_support']:8d} "
            f"{a['accuracy']:8.4f} {b['accuracy']:8.4f}")


def resident_bytes() -> int:
    """This process's resident set now (Linux: /proc/self/statm, in pages)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def run_worker(spec: dict) -> dict:
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, __file__, "--worker", json.dumps(spec)], capture_output=True,
                          text=True, env=env, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"worker failed for {spec}:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_cell(machine_name: str, data: str, repeats: int) -> tuple[dict, dict]:
    """Timing (one process, interleaved fits) and peak memory (one process per solver)."""
    spec = {"machine": machine_name, "data": data}
    timed = run_worker({**spec, "mode": "time", "repeats": repeats})
    for solver in ("smo", "libsvm"):
        timed[solver].update(run_worker({**spec, "mode": f"memory-{solver}"}))
    return timed["smo"], timed["libsvm"]


# -- the table ------------------------------------------------------------------------------------
HEADER = (f"{'machine':10s} {'data':>8s} {'N':>6s} {'ours s':>8s} {'libsvm s':>9s} {'ratio':>6s} "
          f"{'it ours':>8s} {'it lib':>8s} {'nSV ours':>8s} {'nSV lib':>8s} {'obj diff':>9s} "
          f"{'MB ours':>8s} {'MB lib':>7s} {'jit s':>6s} {'cpu ratio':>9s}")


def row(machine_name: str, data: str, a: dict, b: dict) -> str:
    diff = (a["objective"] - b["objective"]) / max(abs(a["objective"]), 1e-300)
    return (f"{machine_name:10s} {data:>8s} {a['N']:6d} {a['time']:8.3f} {b['time']:9.3f} "
            f"{a['time'] / b['time']:6.2f} {a['iterations']:8d} {b['iterations']:8d} {a['n_support']:8d} "
            f"{b['n_support']:8d} {diff:9.1e} {a['peak_mb']:8.0f} {b['peak_mb']:7.0f} {a['jit']:6.2f} "
            f"{a['cpu'] / b['cpu']:9.2f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="N = 1,000 and 5,000 and real data, one repeat")
    parser.add_argument("--sizes", type=int, nargs="*", default=None)
    parser.add_argument("--machines", nargs="*", default=list(MACHINES), choices=MACHINES)
    parser.add_argument("--real", nargs="*", default=list(REAL), choices=REAL)
    parser.add_argument("--repeats", type=int, default=None, help="fits per cell (median time); default 3")
    parser.add_argument("--estimators-only", action="store_true", help="only the estimator table")
    parser.add_argument("--no-estimators", action="store_true", help="only the machine table")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return
    sizes = args.sizes if args.sizes is not None else ((1000, 5000) if args.quick else SIZES)
    repeats = args.repeats or (1 if args.quick else 3)
    if not args.estimators_only:
        machine_table(args, sizes, repeats)
    if not args.no_estimators:
        estimator_table(max(repeats, 5))


def estimator_table(repeats: int) -> None:
    print(f"\nEstimators: sparsekernel.estimators.SVC vs sklearn.svm.SVC, C = {C}, tol = {TOL}, cache {CACHE_MB} "
          f"MB; median of {repeats} interleaved fit pairs (more for the small rows: MIN_PAIRS) in one warm process "
          f"(compile excluded); "
          f"ratio = ours / LIBSVM (wall; cpu = process CPU time)")
    print(ESTIMATOR_HEADER)
    for name, data in ESTIMATOR_ROWS:
        timed = run_worker({"mode": "estimator", "data": data, "repeats": max(repeats, MIN_PAIRS.get(data, 0))})
        print(estimator_row(name, data, timed["smo"], timed["libsvm"]), flush=True)


def machine_table(args: argparse.Namespace, sizes: list[int], repeats: int) -> None:
    print(f"SMO (sparsekernel) vs LIBSVM (scikit-learn): RBF gamma = 1/D, C = {C}, nu = {NU}, "
          f"epsilon = {EPSILON}, tol = {TOL} (LIBSVM's scale), cache {CACHE_MB} MB; median of {repeats} "
          f"interleaved fit(s) per solver; ratio = ours / LIBSVM fit time (ours without JIT); "
          f"MB = peak resident memory of one fit in a fresh process")
    print(HEADER)
    for machine_name in args.machines:
        datasets = [str(n) for n in sizes] + [d for d in args.real if REAL_TASK[d] == TASK[machine_name]]
        for data in datasets:
            a, b = run_cell(machine_name, data, repeats)
            print(row(machine_name, data if data in REAL else "synth", a, b), flush=True)


REAL_TASK = {"digits": "classification", "diabetes": "regression"}

if __name__ == "__main__":
    main()
