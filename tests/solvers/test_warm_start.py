"""Warm starts: feasible points of the new QP; the SMO started at an optimum takes no step; a
point outside the feasible set is refused; a kept row cache gives the same answer."""

from __future__ import annotations

import numpy as np
import pytest

from sparsekernel.errors import ValidationError
from sparsekernel.kernels import RBF
from sparsekernel.solvers import smo
from sparsekernel.solvers.standard_qp import StandardQP
from sparsekernel.solvers.warm_start import RegularisationPath, scale_into_box, warm_start

RNG = np.random.default_rng(0)
X = RNG.normal(size=(40, 3))
T = np.where(X[:, 0] + 0.5 * RNG.normal(size=40) > 0, 1.0, -1.0)
KERNEL = RBF(0.5)


def c_svc(C: float) -> StandardQP:
    n = X.shape[0]
    return StandardQP(kernel=KERNEL, X=X, index=np.arange(n), y=T, scale=1.0, p=-np.ones(n),
                      lower=np.zeros(n), upper=np.full(n, C), delta=0.0, nu_sum=None, gram=lambda: KERNEL(X))


def nu_svc(nu: float) -> StandardQP:
    n = X.shape[0]
    return StandardQP(kernel=KERNEL, X=X, index=np.arange(n), y=T, scale=1.0, p=np.zeros(n),
                      lower=np.zeros(n), upper=np.full(n, 1.0 / n), delta=0.0, nu_sum=nu, gram=lambda: KERNEL(X))


def _feasible(qp: StandardQP, a: np.ndarray) -> bool:
    sums = abs(qp.y @ a - qp.delta) < 1e-12 and (qp.nu_sum is None or abs(a.sum() - qp.nu_sum) < 1e-12)
    return bool(np.all(a >= qp.lower) and np.all(a <= qp.upper) and sums)


@pytest.mark.parametrize("build, values", [(c_svc, (0.5, 5.0, 0.2)), (nu_svc, (0.2, 0.6, 0.3))])
def test_a_warm_start_is_feasible_for_the_new_problem(build, values) -> None:
    for old_value, new_value in zip(values, values[1:]):
        old, new = build(old_value), build(new_value)
        result = smo(old, tol=1e-8)
        start = warm_start(old, result.a, result.G, new)
        assert start is not None and _feasible(new, start)


def test_the_ray_start_is_the_minimiser_along_the_ray() -> None:
    """s* = -p^T a / a^T Q a when that lies inside the box (here the box is wide)."""
    a = np.array([1.0, 2.0])
    s = scale_into_box(a, aQa=4.0, p=np.array([-1.0, -1.0]), upper=np.array([100.0, 100.0]))
    np.testing.assert_allclose(s, 0.75 * a)


def test_the_smo_started_at_its_optimum_takes_no_step() -> None:
    qp = c_svc(1.0)
    first = smo(qp, tol=1e-8)
    again = smo(qp, tol=1e-8, initial=first.a)
    assert again.iterations == 0
    np.testing.assert_allclose(again.objective, first.objective, rtol=1e-12)


def test_an_infeasible_start_is_refused() -> None:
    qp = c_svc(1.0)
    with pytest.raises(ValidationError, match="initial must be"):
        smo(qp, initial=np.full(qp.n, 2.0))
    with pytest.raises(ValidationError, match="initial must be"):
        smo(qp, initial=np.r_[0.5, np.zeros(qp.n - 1)])          # y^T a != 0


def test_a_kept_row_cache_gives_the_cold_answer() -> None:
    path = RegularisationPath(cache_mb=10)
    for C in (0.1, 1.0, 10.0):
        qp = c_svc(C)
        result = smo(qp, tol=1e-8, initial=path.start(0, qp), cache=path.cache(0, qp))
        path.record(0, qp, result.a, result.G)
        cold = smo(qp, tol=1e-8)
        np.testing.assert_allclose(result.objective, cold.objective, rtol=1e-9)
    assert path.cache(0, c_svc(100.0)).rows_computed == X.shape[0]        # each row once, on the path


@pytest.mark.parametrize("C_old, C_new", [(0.3, 3.0), (3.0, 0.3), (1.0, 1.0)])
def test_the_scaled_start_comes_with_its_gradient(C_old, C_new) -> None:
    """scale_into_box's point a0 = s a comes with Q a0 + p_new = s (G - p_old) + p_new, which equals
    the gradient computed from the kernel; handed to the SMO it gives the answer of a start without it."""
    from sparsekernel.solvers.warm_start import warm_start_and_gradient

    old, new = c_svc(C_old), c_svc(C_new)
    first = smo(old, tol=1e-6)
    a0, G0 = warm_start_and_gradient(old, first.a, first.G, new)
    Q = (T[:, None] * T[None, :]) * KERNEL(X)
    np.testing.assert_allclose(G0, Q @ a0 + new.p, rtol=0, atol=1e-9)
    given = smo(new, tol=1e-6, initial=a0, initial_gradient=G0)
    built = smo(new, tol=1e-6, initial=a0)
    assert given.status == built.status == "optimal"
    np.testing.assert_allclose(given.a, built.a, atol=1e-5 * C_new)
    cold = smo(new, tol=1e-6)
    assert abs(given.objective - cold.objective) <= 1e-6 * abs(cold.objective)


def test_no_gradient_for_a_refilled_start_and_none_without_a_start() -> None:
    from sparsekernel.solvers.warm_start import warm_start_and_gradient

    old = nu_svc(0.3)
    first = smo(old, tol=1e-6)
    a0, G0 = warm_start_and_gradient(old, first.a, first.G, nu_svc(0.5))
    assert a0 is not None and G0 is None
    with pytest.raises(ValidationError, match="initial_gradient"):
        smo(c_svc(1.0), initial_gradient=np.zeros(X.shape[0]))


@pytest.mark.parametrize("share_rows", [True, False])
@pytest.mark.parametrize("change", ["in place", "another array"])
def test_a_path_whose_x_changed_starts_cold_with_new_rows(change, share_rows) -> None:
    """A ``RegularisationPath`` kept across solves (``solve(machine, "smo", path=..., path_key=...)``)
    reused a slot's kernel rows while the QP's X was the same array, and warm-started from a solution
    whose gradient Q a + p was that of the recorded X, its values never compared. With X *= 3 in place
    between two solves and the rows kept, the second returned multipliers 0.98 away from the cold
    solve's with a report that passed, on the old rows (a machine's check of it fails); without kept
    rows, or with another array of the same shape, the start's gradient was the old X's and the SMO's
    answer failed its certificate (SolverError), where a cold start solves it. Now
    a slot records the CRC-32 of the values it solved (``sparse.digest``) and the warm start requires the
    same values: the solve starts cold, with new rows, and is the cold solve."""
    from sklearn.datasets import load_iris

    from sparsekernel.duality import check
    from sparsekernel.formulations import SoftMarginSVC, solve

    X0, y = load_iris(return_X_y=True)
    t = np.where(y > 0, 1.0, -1.0)
    X = X0.copy()
    path = RegularisationPath(200, share_rows=share_rows)
    solve(SoftMarginSVC(X, t, RBF(0.5), C=1.0), "smo", path=path, path_key=0)
    if change == "in place":
        X *= 3.0
    else:
        X = X0 * 3.0
    machine = SoftMarginSVC(X, t, RBF(0.5), C=10.0)
    along = solve(machine, "smo", path=path, path_key=0)
    cold = solve(SoftMarginSVC(X.copy(), t, RBF(0.5), C=10.0), "smo")
    assert check(machine, along).ok
    np.testing.assert_allclose(along.a, cold.a, rtol=0, atol=1e-12)
