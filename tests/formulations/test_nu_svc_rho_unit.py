"""nu-SVC's SMO stops in the unit of its outputs, rho (t_n y(x_n) = rho on the margin, Result 7.7).

The reference is Clarabel through its own API (``qp-clarabel``), certified at 1e-6: an independent solver.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer

from sparsekernel.formulations import NuSVC
from sparsekernel.kernels import RBF, Polynomial


def _points():
    X, y = load_breast_cancer(return_X_y=True)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    return X[:80], np.where(y[:80] == 1, 1.0, -1.0)


@pytest.mark.parametrize("kernel, nu", [(Polynomial(degree=3), 0.1), (Polynomial(degree=2), 0.05), (RBF(0.2), 0.05)])
def test_the_smo_on_nu_svc_is_accurate_where_rho_is_far_below_the_datas_spread(kernel, nu):
    """Degree 3, gamma 1 (nu times the spread 4.3e4, rho 7.3): the SMO at tol 1e-3 stopped after 12 steps at a
    dual objective 2.0 times the optimum's and rho 24.5, and was certified; now both are Clarabel's to 1e-4."""
    X, t = _points()
    machine = NuSVC(X, t, kernel, nu=nu)
    reference = machine.solve("qp-clarabel")
    ours = machine.solve("smo")
    assert ours.status == "optimal"
    assert ours.dual_objective == pytest.approx(reference.dual_objective, rel=1e-4)
    assert ours.rho == pytest.approx(reference.rho, rel=1e-2)


@pytest.mark.parametrize("cap", [20, 40])
def test_max_iter_caps_the_steps_of_every_round_in_rhos_unit_together(cap):
    """The rounds in rho's unit each got the whole max_iter: at max_iter 20 the machine's SMO took 12 + 20 = 32
    steps, and NuSVC(max_iter=40).fit reported n_iter_ [73], past its cap and without a warning."""
    import warnings

    from sparsekernel.estimators import NuSVC as NuSVCEstimator

    X, t = _points()
    machine = NuSVC(X, t, Polynomial(degree=3), nu=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert machine.solve("smo", max_iter=cap).iterations <= cap
        fitted = NuSVCEstimator(kernel="poly", degree=3, gamma=1.0, coef0=0.0, nu=0.1, max_iter=cap).fit(X, t)
    assert int(np.max(fitted.n_iter_)) <= cap


def test_the_rounds_in_rhos_unit_on_a_path_read_the_paths_kept_rows(monkeypatch):
    """On fit_path the first run of each nu read the path's kept rows (the whole Gram matrix here) but the rounds
    in rho's unit built a cache of their own and computed about 1,000 rows again per value (2,000 x 800 inputs:
    the path over four nu took 4.1-5.6 s for 1.7-1.9 s)."""
    from sklearn.datasets import make_classification

    from sparsekernel.estimators import NuSVC as NuSVCEstimator

    runs = _rows_of_each_run(monkeypatch)
    X, y = make_classification(300, 20, n_informative=8, random_state=0)
    NuSVCEstimator(gamma=0.02).fit_path(X, y, [0.1, 0.3], param="nu")
    assert len(runs) > 2                        # rounds in rho's unit were run
    assert runs == [0] * len(runs)              # every run read the kept rows


def test_the_rounds_in_rhos_unit_read_the_rows_their_first_run_computed(monkeypatch):
    """Each round in rho's unit built a row cache of its own and computed every row again (80 points: 80 rows in
    the first run, 80 more in the round; on 2,000 x 800 inputs 1,779 rows, 0.49 s of a 1.2 s fit); now the
    rounds share the first run's cache, and the answer is the same to the last bit."""
    runs = _rows_of_each_run(monkeypatch)
    X, t = _points()
    NuSVC(X, t, Polynomial(degree=3), nu=0.1).solve("smo")
    assert len(runs) > 1                        # a round in rho's unit was run
    assert sum(runs) <= X.shape[0]              # no row computed twice (the cache holds them all)


def test_the_solve_time_of_a_solve_in_rounds_is_that_of_every_round(monkeypatch):
    """The rounds in rho's unit summed their steps but the Solution's solve_time (compare's seconds) was the
    last round's alone: with every run timed at 1 s, a solve of two runs reported 1 s for its 67 steps."""
    import dataclasses
    import functools
    import importlib

    module = importlib.import_module("sparsekernel.solvers.smo")
    original, runs = module.smo, []

    @functools.wraps(original)
    def timed(*args, **kwargs):
        runs.append(1)
        return dataclasses.replace(original(*args, **kwargs), solve_time=1.0)

    monkeypatch.setattr(module, "smo", timed)
    X, t = _points()
    solution = NuSVC(X, t, Polynomial(degree=3), nu=0.1).solve("smo")
    assert len(runs) > 1
    assert solution.solve_time == pytest.approx(float(len(runs)))


def test_a_round_finer_than_float32_rows_resolve_reads_float64_rows():
    """Digits (1,797 points: float32 rows), RBF gamma 0.01 / 64, nu = 0.05: rho is 5e-6 of nu times the spread, and
    the round in rho's unit asked for a violation of 1.7e-8 of the gradient's unit, which float32 rows resolve to
    2.4e-3 only: it took 7.6 million steps (16 s; at nu = 0.01 both rounds ran to the iteration cap), and under a
    cap of 2 million it stopped there. With float64 rows for that round: about 0.4 million, Clarabel's rho."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    machine = NuSVC(X / 16.0, np.where(y % 2 == 0, 1.0, -1.0), RBF(0.01 / 64), nu=0.05)
    solution = machine.solve("smo", max_iter=2_000_000)
    assert solution.solver_status == "optimal"
    assert solution.rho == pytest.approx(3.5755e-10, rel=1e-3)       # Clarabel's (qp-clarabel): 3.57546e-10


def test_a_machine_whose_qp_has_a_diagonal_term_solves_in_rounds_by_the_smo():
    """A nu-SVC subclass whose StandardQP adds a diagonal term (1e-3 I): the rounds in rho's unit were given a row
    cache built here, which a QP with a diagonal term refuses ('cache must be None or a KernelRowCache ... (no
    diagonal term)'); they now leave the SMO its own."""
    from dataclasses import replace

    class Ridged(NuSVC):
        def _standard_qp(self):
            return replace(super()._standard_qp(), diagonal=np.full(self.N, 1e-3))

    X, t = _points()
    solution = Ridged(X, t, Polynomial(degree=3), nu=0.1).solve("smo")
    assert solution.status == "optimal"


def _rows_of_each_run(monkeypatch) -> list:
    """The kernel rows each run of the SMO computes (``SMOResult.rows_computed``), appended as the runs end."""
    import functools
    import importlib

    module = importlib.import_module("sparsekernel.solvers.smo")
    original, runs = module.smo, []

    @functools.wraps(original)
    def counted(*args, **kwargs):
        result = original(*args, **kwargs)
        runs.append(result.rows_computed)
        return result

    monkeypatch.setattr(module, "smo", counted)
    return runs


def test_the_rounds_in_rhos_unit_stop_at_their_own_budget_and_keep_the_answer_that_met_its_stop(monkeypatch):
    """Without a max_iter the rounds in rho's unit had only the SMO's own cap per round (10 million steps): on a
    nearly degenerate optimum (NuSVC(nu=0.05, gamma=1e-3), 3,000 standardised make_classification points, rho 5e-8
    of its unit) they ran past 2.4 million steps after a first run of 0.63 million, and the NuSVC estimator's fit
    took over 11 minutes. Their budget (RHO_ROUND_STEPS, or RHO_ROUND_FACTOR times the first run's steps), shrunk
    here to a few steps: the round that would take more is dropped and the first run's answer, certified at the
    tol asked for, stands, with the steps spent counted."""
    import sys

    from sparsekernel.formulations import solve

    solve_module = sys.modules["sparsekernel.formulations.solve"]
    smo = sys.modules["sparsekernel.solvers.smo"].smo
    rng = np.random.default_rng(1)
    X = rng.normal(size=(80, 2))
    t = np.where(X[:, 0] + 0.8 * rng.normal(size=80) > 0, 1.0, -1.0)
    tol = 1e-3
    first = smo(NuSVC(X, t, RBF(0.5), nu=0.2).standard_qp(), tol=tol)
    rounds = solve(NuSVC(X, t, RBF(0.5), nu=0.2), "smo", tol=tol)
    assert rounds.iterations > first.iterations + 20             # this optimum's rounds take steps of their own
    monkeypatch.setattr(solve_module, "RHO_ROUND_STEPS", 20)
    monkeypatch.setattr(solve_module, "RHO_ROUND_FACTOR", 0)
    sol = solve(NuSVC(X, t, RBF(0.5), nu=0.2), "smo", tol=tol)
    assert sol.status == "optimal" and sol.report.ok
    assert first.iterations < sol.iterations <= first.iterations + 20
    np.testing.assert_allclose(sol.a, first.a, rtol=0, atol=1e-15)
