"""The fast classification RVM at scale (issue 16), beside sklearn-rvm's EMRVC.

Run from the repository root (after ``pip install -e ".[test]"`` and
``pip install sklearn-rvm``, or ``pip install -e ".[bench]"``)::

    python benchmarks/rvc_scale.py              # ours at N = 1,000, 2,000, 5,000; EMRVC at N = 1,000
    python benchmarks/rvc_scale.py --quick      # ours at N = 1,000 and 2,000 only, no EMRVC
    python benchmarks/rvc_scale.py --no-peer    # without EMRVC

Data: ``make_classification(n_samples=N + 2,000, n_features=20,
random_state=0)``, standardised on the training part, the last 2,000 points
held out for the test error. Both methods use the RBF kernel with gamma =
"scale" = 1 / (D var X) and a bias. Columns: fit time (s) of ``RVC`` (fast,
Algorithm 7.2 on the effective problem (7.117)-(7.119)) including its
certificate ``report_``, relevance vectors kept, the Laplace log evidence
(7.114) recomputed at each method's alpha (the mode found again; for EMRVC
on its own scaled columns, which leaves (7.114) unchanged), the test error,
and for EMRVC the ratios (its time over ours; its evidence minus ours). The
report's largest remaining gain (nats) certifies each of our fits. EMRVC
updates all N alphas from the start (an N x N posterior per iteration), so it
is run at N = 1,000 only. One BLAS thread for every method (a shared 2-core
machine: threaded BLAS on small matrices mostly measures contention); the
load average at the start is printed.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
from sklearn.datasets import make_classification
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from sparsekernel.estimators import RVC
from sparsekernel.solvers.rvm import Bernoulli
from sparsekernel.solvers.rvm.laplace import ModeOptions, find_mode, laplace_log_evidence

SIZES = (1000, 2000, 5000)
QUICK_SIZES = (1000, 2000)
N_TEST = 2000
EMRVC_MAX_N = 1000


def data(n: int):
    X, y = make_classification(n_samples=n + N_TEST, n_features=20, random_state=0)
    scaler = StandardScaler().fit(X[:n])
    return scaler.transform(X[:n]), y[:n], scaler.transform(X[n:]), y[n:]


def ours(X, y, Xt, yt):
    start = time.perf_counter()
    model = RVC().fit(X, y)
    seconds = time.perf_counter() - start
    error = float(np.mean(model.predict(Xt) != yt))
    return seconds, model.relevance_vectors_.size, model.report_.log_evidence, error, model.report_.largest_gain


def emrvc(X, y, Xt, yt):
    from sklearn_rvm import EMRVC

    model = EMRVC(kernel="rbf", gamma="scale")
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y)
    seconds = time.perf_counter() - start
    Phi, alpha = model.Phi_, model.alpha_  # its kept columns (bias first when kept) and their precisions
    n_kept = alpha.size
    mode = find_mode(Bernoulli(), Phi, np.arange(n_kept), np.zeros(n_kept, dtype=np.intp), y[:, None].astype(float),
                     alpha, np.asarray(model.mu_, dtype=float), ModeOptions())
    evidence = laplace_log_evidence(mode, alpha)  # (7.114) at EMRVC's alpha
    error = float(np.mean(model.predict(Xt) != yt))
    return seconds, model.relevance_.size, evidence, error


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-peer", action="store_true")
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    with threadpool_limits(1, user_api="blas"):
        X, y, Xt, yt = data(200)
        ours(X, y, Xt[:10], yt[:10])  # imports and the compiled loops, not timed below
        print(f"{'N':>6}  {'method':<18}{'fit s':>8}{'RVs':>6}{'log ev (7.114)':>16}{'test err':>10}"
              f"{'left (nats)':>13}{'x ours':>9}{'ev - ours':>11}")
        print("-" * 99)
        for n in (QUICK_SIZES if args.quick else SIZES):
            X, y, Xt, yt = data(n)
            s, kept, ev, err, gain = ours(X, y, Xt, yt)
            print(f"{n:>6}  {'ours RVC (fast)':<18}{s:>8.2f}{kept:>6}{ev:>16.3f}{err:>10.4f}{gain:>13.1e}", flush=True)
            if n <= EMRVC_MAX_N and not (args.quick or args.no_peer):
                ps, pkept, pev, perr = emrvc(X, y, Xt, yt)
                print(f"{n:>6}  {'sklearn-rvm EMRVC':<18}{ps:>8.2f}{pkept:>6}{pev:>16.3f}{perr:>10.4f}{'':>13}"
                      f"{ps / s:>9.1f}{pev - ev:>11.3f}", flush=True)


if __name__ == "__main__":
    main()
