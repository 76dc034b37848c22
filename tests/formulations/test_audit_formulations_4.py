"""Audit 4 of the cvxpy formulations and their certificates: inputs nobody tuned to."""

from __future__ import annotations

import numpy as np
import pytest

from sparsekernel.errors import ValidationError
from sparsekernel.formulations import SVDD, NuSVC, OneClassSVM, SoftMarginSVC
from sparsekernel.kernels import RBF, Precomputed


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
