"""Audit 4 of the cvxpy formulations and their certificates: inputs nobody tuned to."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from sparsekernel.errors import ConvergenceWarning, InfeasibleError, SolverError, ValidationError
from sparsekernel.formulations import SVDD, HardMarginSVC, NuSVC, OneClassSVM, SoftMarginSVC
from sparsekernel.kernels import RBF, Linear, Precomputed


def _asymmetric_gram() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(10, 2))
    K = X @ X.T + np.eye(10)
    A = K + np.triu(rng.uniform(0.0, 0.5, (10, 10)), 1)     # no Gram matrix: A != A^T
    return A, np.array([1.0, -1.0] * 5)


@pytest.mark.parametrize("build", [
    lambda A, t: SoftMarginSVC(A, t, Precomputed(), C=1.0),
    lambda A, t: NuSVC(A, t, Precomputed(), nu=0.5),
    lambda A, t: OneClassSVM(A, Precomputed(), nu=0.5),
])
def test_a_precomputed_matrix_that_is_not_symmetric_is_refused_naming_x(build) -> None:
    # k(x_n, x_m) = k(x_m, x_n) for every kernel: a matrix with A - A^T of 0.5 is no Gram matrix. It was
    # taken: every cvxpy path raised SolverError (as if the solver had failed) and the SMO, reading A's rows,
    # returned status "optimal" for a problem that the notes' dual (a^T K a) does not state
    A, t = _asymmetric_gram()
    assert np.max(np.abs(A - A.T)) > 0.1
    with pytest.raises(ValidationError, match=r"X must be a symmetric Gram matrix.*got"):
        build(A, t)


def test_a_gram_matrix_symmetric_to_rounding_is_taken() -> None:
    rng = np.random.default_rng(1)
    X = rng.normal(size=(12, 3))
    K = np.exp(-0.5 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    K = K + 1e-15 * rng.normal(size=K.shape)            # rounding, not asymmetry
    t = np.where(X[:, 0] > 0, 1.0, -1.0)
    assert SoftMarginSVC(K, t, Precomputed(), C=1.0).solve("smo").status == "optimal"


def test_a_primal_no_qp_solver_can_take_is_refused_naming_the_solver() -> None:
    # SVDD's primal (Tax and Duin) has the quadratic constraints ||phi(x_n) - c||^2 <= R^2 + xi_n: not a QP.
    # OSQP was reported as having failed ("The solver OSQP cannot solve this problem"), a SolverError that
    # names neither the argument nor what it may be
    X = np.random.default_rng(2).normal(size=(10, 2))
    m = SVDD(X, RBF(1.0), nu=0.3)
    for call in (lambda: m.solve("primal-osqp"), lambda: m.primal().solve("OSQP")):
        with pytest.raises(ValidationError, match=r"solver must be .*CLARABEL.*got 'OSQP'"):
            call()
    # the same primal by a conic solver is solved, and agrees with the dual
    primal, dual = m.solve("primal-clarabel"), m.solve("clarabel")
    assert primal.status == "optimal"
    assert primal.R2 == pytest.approx(dual.R2, rel=1e-5)



def _separable_by_a_tiny_margin(d: float) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(8)
    X = np.vstack([rng.normal(size=(6, 2)) * 0.1 + [1.0, 0.0], rng.normal(size=(6, 2)) * 0.1 - [1.0, 0.0]])
    X[0], X[6] = [d / 2, 0.0], [-d / 2, 0.0]
    return X, np.array([1.0] * 6 + [-1.0] * 6)


@pytest.mark.parametrize("method", ["smo", "qp-osqp", "osqp", "primal-osqp"])
def test_a_hard_margin_separable_by_8e_5_r_is_never_called_infeasible(method: str) -> None:
    # the hyperplane x_1 = 0 separates the classes with margin d / 2 = 5e-5 (R = 1.25): the hard-margin problem
    # has a solution, which Clarabel finds and certifies (||w|| = 1 / margin = 2e4). The SMO's margin rule and
    # OSQP's infeasibility status were taken as a proof (InfeasibleError "not separable") because the hulls'
    # distance, 1e-4, was within 4 MARGIN_TOL R = 5e-4; the hull QP resolves distances down to ~1.4e-5 R
    d = 1e-4
    X, t = _separable_by_a_tiny_margin(d)
    assert np.min(t * X[:, 0]) >= d / 2                 # separable, independently of any solver
    m = HardMarginSVC(X, t, Linear())
    certified = m.solve("clarabel")
    assert certified.status == "optimal"
    assert np.linalg.norm(certified.w) == pytest.approx(2.0 / d, rel=1e-6)   # 1/||w|| = the margin d/2
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            sol = m.solve(method)
    except InfeasibleError as exc:                     # the defect
        pytest.fail(f"{method}: InfeasibleError on separable data: {exc}")
    except SolverError as exc:                         # a solver that cannot resolve the margin may say so
        assert "separable" in str(exc)
        assert f"solve by '{method}'" not in str(exc)
    else:
        assert sol.status in ("optimal", "inaccurate")
