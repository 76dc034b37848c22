"""How good a maximum of the evidence each regression RVM finds: ours (fast, MacKay) beside sklearn-rvm's EMRVR.

Run from the repository root (with sklearn-rvm installed, e.g. ``pip install -e ".[bench]"``)::

    python benchmarks/rvm_accuracy.py            # the matrix at N = 250 (sinc: 100), then the N = 1,000 cells
    python benchmarks/rvm_accuracy.py --quick    # the matrix only, without EMRVR at N = 1,000
    python benchmarks/rvm_accuracy.py --no-peer  # ours only (no sklearn-rvm needed)

The matrix: data sets x kernel widths ("scale" and 0.1x, 10x of it) with
``rvm_regression(method="fast")``, ``rvm_regression(method="mackay")`` and
sklearn-rvm's ``EMRVR`` on the same Gaussian kernel with a bias. Data sets
(nothing is downloaded):

* friedman1, raw X (uniform on [0, 1]^10) and standardised X, noise sd 1;
* friedman2 and friedman3 (standardised X; noise sd 125 and 0.1);
* sinc: t = sin(x)/x + N(0, 0.1^2), x uniform on [-10, 10], N = 100, with the
  Gaussian kernel and with Tipping's linear-spline kernel (no width: one row);
* the issue-16 cells: friedman1 standardised at gamma 1e-4 and, at N = 1,000,
  friedman1 raw at gamma 0.1.

Boston housing is left out: no installed package ships it.

Columns per method: relevance vectors (bias not counted), the log evidence
(7.85) computed directly from C = beta^-1 I + Phi A^-1 Phi^T at the method's
returned alpha, beta and columns (for EMRVR: its own scaled columns
``Phi_``, alphas and beta on the raw targets), the noise standard deviation
1/sqrt(beta), the test RMSE against the noise-free function on 1,000 fresh
points, and the fit time (s). ``best`` marks the method of the highest
evidence; ``gap`` is fast's evidence below the best one (nats). Last, the
speed cell: friedman1 raw X, gamma 0.5, N = 1,000 (as in ``rvm_vs_peers.py``), fast (median of
three) against one EMRVR fit. Every run uses one BLAS thread.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn.datasets import make_friedman1, make_friedman2, make_friedman3
from threadpoolctl import threadpool_limits

from sparsekernel.kernels import RBF
from sparsekernel.solvers.rvm import rvm_regression
from sparsekernel.solvers.rvm.posterior import log_evidence_direct

N_TEST = 1000


def linear_spline(A, B):
    """Tipping's linear-spline kernel on 1-d inputs: 1 + xz + xz min - (x + z)/2 min^2 + min^3 / 3."""
    x, z = A[:, :1], B[:, 0][None, :]
    lo = np.minimum(x, z)
    return 1.0 + x * z + x * z * lo - 0.5 * (x + z) * lo**2 + lo**3 / 3.0


def _standardise(X, Xt):
    mu, sd = X.mean(axis=0), X.std(axis=0)
    return (X - mu) / sd, (Xt - mu) / sd


def friedman(which, n, seed, standardise):
    make = {1: make_friedman1, 2: make_friedman2, 3: make_friedman3}[which]
    noise = {1: 1.0, 2: 125.0, 3: 0.1}[which]
    X, t = make(n_samples=n, noise=noise, random_state=seed)
    Xt, ft = make(n_samples=N_TEST, noise=0.0, random_state=seed + 1000)
    if standardise:
        X, Xt = _standardise(X, Xt)
    return X, t, Xt, ft


def sinc(n=100, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-10, 10, size=(n, 1))
    t = np.sinc(X[:, 0] / np.pi) + 0.1 * rng.normal(size=n)
    Xt = np.linspace(-10, 10, N_TEST)[:, None]
    return X, t, Xt, np.sinc(Xt[:, 0] / np.pi)


def scale_gamma(X):
    return 1.0 / (X.shape[1] * X.var())


def _ours(method, K, Kt, t, ft):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = rvm_regression(K, t, method)
    elapsed = time.perf_counter() - start
    cols = ([np.ones(K.shape[0])] if r.bias_used else []) + [K[:, r.relevance]]
    Phi = np.column_stack(cols)
    ev = log_evidence_direct(Phi, t, np.asarray(r.alpha), r.beta)
    tcols = ([np.ones(Kt.shape[0])] if r.bias_used else []) + [Kt[:, r.relevance]]
    pred = np.column_stack(tcols) @ np.asarray(r.mean)
    return dict(rv=r.relevance.size, ev=ev, sd=r.beta**-0.5, rmse=_rmse(pred, ft), time=elapsed,
                conv=r.converged)


def _peer(K, Kt, t, ft):
    from sklearn_rvm import EMRVR

    model = EMRVR(kernel="precomputed")
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(K, t)
    elapsed = time.perf_counter() - start
    Phi = model.Phi_
    ev = log_evidence_direct(Phi, t, np.asarray(model.alpha_), float(model.beta_))
    rel = np.asarray(model.relevance_)
    tcols = ([np.ones(Kt.shape[0])] if model.bias_used and Phi.shape[1] == rel.size + 1 else [])
    Pt = np.column_stack(tcols + [Kt[:, rel] / model._scale])
    pred = Pt @ model.mu_
    return dict(rv=rel.size, ev=ev, sd=float(model.beta_) ** -0.5, rmse=_rmse(pred, ft), time=elapsed, conv=True)


def _rmse(pred, f):
    return float(np.sqrt(np.mean((pred - f) ** 2)))


def cell(name, width, X, t, Xt, ft, kernel, peer):
    K, Kt = kernel(X, X), kernel(Xt, X)
    row = {"fast": _ours("fast", K, Kt, t, ft), "mackay": _ours("mackay", K, Kt, t, ft)}
    if peer:
        row["EMRVR"] = _peer(K, Kt, t, ft)
    best = max(row, key=lambda k: row[k]["ev"])
    gap = row[best]["ev"] - row["fast"]["ev"]
    parts = [f"{name:<18}{width:<10}"]
    for method, r in row.items():
        flag = "*" if method == best else " "
        conv = "" if r["conv"] else "!"
        parts.append(f"{r['rv']:4d} {r['ev']:10.1f}{flag}{r['sd']:7.3f} {r['rmse']:7.3f} {r['time']:6.2f}{conv} |")
    parts.append(f" {gap:7.1f}")
    print(" ".join(parts), flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-peer", action="store_true")
    parser.add_argument("--n", type=int, default=250)
    args = parser.parse_args()
    peer = not args.no_peer
    head = "  RVs   log ev.     sd    RMSE   time  |"
    print(f"{'data':<18}{'gamma':<10} " + " ".join(f"{m:^39}|" for m in (["fast", "MacKay", "EMRVR"] if peer
                                                                            else ["fast", "MacKay"])) + "  gap")
    print(" " * 28 + (head * (3 if peer else 2)))
    with threadpool_limits(1):
        sets = [("friedman1 raw", friedman(1, args.n, 0, False)), ("friedman1 std", friedman(1, args.n, 0, True)),
                ("friedman2 std", friedman(2, args.n, 0, True)), ("friedman3 std", friedman(3, args.n, 0, True)),
                ("sinc rbf", sinc())]
        for name, (X, t, Xt, ft) in sets:
            g0 = scale_gamma(X)
            for factor in (1.0, 0.1, 10.0):
                g = g0 * factor
                cell(name, f"{g:.3g}", X, t, Xt, ft, RBF(g), peer)
        X, t, Xt, ft = sinc()
        cell("sinc spline", "-", X, t, Xt, ft, linear_spline, peer)
        X, t, Xt, ft = friedman(1, args.n, 0, True)
        cell("friedman1 std", "1e-4", X, t, Xt, ft, RBF(1e-4), peer)
        for seed in (1, 2, 3):
            X, t, Xt, ft = friedman(1, args.n, seed, False)
            cell(f"friedman1 raw s{seed}", "0.1", X, t, Xt, ft, RBF(0.1), peer)
        if not args.quick:
            X, t, Xt, ft = friedman(1, 1000, 0, False)
            cell("friedman1 raw 1000", "0.1", X, t, Xt, ft, RBF(0.1), peer)
        # speed: friedman1 raw X, gamma 0.5, N = 1,000 (the set-up of benchmarks/rvm_vs_peers.py)
        X, t, Xt, ft = friedman(1, 1000, 0, False)
        K, Kt = RBF(0.5)(X, X), RBF(0.5)(Xt, X)
        fits = [_ours("fast", K, Kt, t, ft) for _ in range(3)]
        fast_time = float(np.median([f["time"] for f in fits]))
        f = fits[0]
        line = (f"speed: friedman1 raw gamma 0.5 N=1000: fast {fast_time:.3f} s, {f['rv']} RVs, "
                f"log ev. {f['ev']:.1f}, RMSE {f['rmse']:.3f}")
        if peer and not args.quick:
            p = _peer(K, Kt, t, ft)
            line += f"; EMRVR {p['time']:.2f} s ({p['time'] / fast_time:.0f}x), {p['rv']} RVs, log ev. {p['ev']:.1f}"
        print(line)


if __name__ == "__main__":
    main()
