"""The direct QP path (``solvers.direct``: Clarabel and OSQP on the StandardQP) across units."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from sparsekernel.duality import check
from sparsekernel.formulations import HardMarginSVC, NuSVC, OneClassSVM
from sparsekernel.kernels import Linear

MACHINES = {
    "nu-svc": lambda X, t: NuSVC(X, t, Linear(), nu=0.3),
    "one-class": lambda X, t: OneClassSVM(X, Linear(), nu=0.3),
    "hard": lambda X, t: HardMarginSVC(X, t, Linear()),
}


@pytest.mark.parametrize("name", list(MACHINES))
@pytest.mark.parametrize("scale", [1e-4, 1e-2, 1e2, 1e4])
def test_qp_clarabel_certifies_the_problem_in_any_units(name: str, scale: float) -> None:
    """Issue (a fuzz of the reference solvers): Clarabel stops on absolute tolerances too, and got the QP in
    the caller's units. On a linear kernel with features times 1e-4 (kernel values 1e-8) every nu-SVC and
    hard-margin answer came back inaccurate, one-class answers raised SolverError (Clarabel said Solved,
    the KKT conditions failed), and the hard margin at 1e4 was inaccurate too. In units where the bounds
    and the objective are of size one every answer is certified, passes ``duality.check`` and is the
    unit-scale answer: nu-SVC's and one-class multipliers are unit-free, the hard margin's scale as 1/s^2."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(80, 6))
    t = np.where(X[:, 0] + 0.5 * X[:, 1] > 0, 1.0, -1.0)
    reference = MACHINES[name](X, t).solve("qp-clarabel")
    with warnings.catch_warnings():
        warnings.simplefilter("error")                      # no ConvergenceWarning: certified, not inaccurate
        machine = MACHINES[name](X * scale, t)
        sol = machine.solve("qp-clarabel")
    assert sol.status == "optimal" and check(machine, sol).ok
    units = scale**2 if name == "hard" else 1.0
    assert np.max(np.abs(sol.a * units - reference.a)) <= 1e-4 * np.max(reference.a)
