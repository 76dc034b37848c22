"""The fast RVR's withheld start (``sequential.withheld_start``) resumes, the bias offered again, at the
functions and alphas where its held stages stopped, also when those stages refilled their pool.

Its held stages run on the pool without the bias; their ``_unrefused`` (``_span_retry``) sweeps the basis and
may refill that pool. The start then mapped the run's pool positions through the mask of the pool it began
with (``np.flatnonzero(keep)[held.state.active]``), as if the pool had not changed: on a random fuzz of
pool_size < N (RBF, t = 5 + sin 2x + noise) 8 of 40 draws refilled it, 6 resumed at other functions than the
held stages kept (the alphas of one moved to another) and 2 raised an IndexError out of ``rvm_regression``.
"""

from __future__ import annotations

import warnings

import numpy as np

from sparsekernel.kernels import RBF
from sparsekernel.solvers.rvm import evidence_report, rvm_regression


def _draw(seed):
    """A draw of that fuzz: N = 30-149 inputs in 1-3 dimensions (the odd seeds with half of them repeated),
    an RBF of gamma 1e-3-3, a pool of 5 to N - 1 functions."""
    rng = np.random.default_rng(seed)
    N = int(rng.integers(30, 150))
    X = rng.normal(size=(N, int(rng.integers(1, 4))))
    if seed % 2:
        X = np.vstack([X, X[: N // 2]])
    t = 5.0 + np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=X.shape[0])
    gamma = float(10 ** rng.uniform(-3, 0.5))
    return RBF(gamma)(X), t, int(rng.integers(5, X.shape[0]))


#: draws whose held stages refilled their pool on one machine or another (the rounding of the BLAS decides it):
#: 18, 26 and 38 on the machine the fuzz ran on (18 resumed at another function, 26 and 38 raised the IndexError);
#: 3, 17, 19, 26 and 38 on an AMD EPYC, where 18 did not refill
SEEDS = (3, 17, 18, 19, 26, 38)


def test_the_withheld_start_resumes_where_its_held_stages_stopped_after_a_refill(monkeypatch):
    """On each draw the resume is at the functions and alphas the held stages kept; on at least two the held
    stages refilled their pool (the case in point: pool_size - 1 functions before)."""
    from sparsekernel.solvers.rvm import sequential

    held, start_at = sequential.held_start, sequential._start_at
    stopped, resumed = [], []

    def spy_held(run, basis, opts, beta_hold):
        trial, ok = held(run, basis, opts, beta_hold)
        if 0 not in basis.usable and ok:  # the withheld start's held stages
            stopped.append((trial.state.pool.index.copy(), trial.state.pool.index[trial.state.active],
                            trial.state.alpha.copy()))
        return trial, ok

    def spy_start_at(state, positions, alpha):
        resumed.append((state.pool.index[np.asarray(positions)], np.asarray(alpha).copy()))
        return start_at(state, positions, alpha)

    monkeypatch.setattr(sequential, "held_start", spy_held)
    monkeypatch.setattr(sequential, "_start_at", spy_start_at)
    refilled = 0
    for seed in SEEDS:
        stopped.clear()
        resumed.clear()
        K, t, pool_size = _draw(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = rvm_regression(K, t, "fast", pool_size=pool_size)
        assert not r.converged or evidence_report(K, t, r).ok, seed
        (pool, functions, alpha), = stopped
        refilled += pool.size == pool_size
        started, started_alpha = resumed[0]
        np.testing.assert_array_equal(started, functions, err_msg=f"seed {seed}")
        np.testing.assert_array_equal(started_alpha, alpha, err_msg=f"seed {seed}")
    assert refilled >= 2
