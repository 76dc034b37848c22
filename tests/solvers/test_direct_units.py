"""The reference QP solvers (``solvers.direct``: Clarabel and OSQP on the standard-form dual) give the same
answer at every scale of the inputs, the targets and the box: they see the QP in its own units
(``direct.Units``), since both stop on absolute tolerances. Before, the hard margin of inputs of scale 1e4
came back from Clarabel "AlmostSolved" with b = -0.82 for -0.145, OSQP called the same dual at scale 1e-4
infeasible, and both returned an epsilon-SVR with targets of scale 1e-6 as "Solved" while it failed its
KKT conditions."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from sparsekernel.duality import check
from sparsekernel.formulations import EpsilonSVR, HardMarginSVC, SoftMarginSVC
from sparsekernel.kernels import RBF, Linear
from sparsekernel.solvers.direct import Units

METHODS = ("qp-clarabel", "qp-osqp")


def separable(seed: int = 0, N: int = 60) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, 2))
    t = np.where(X[:, 0] + X[:, 1] > 0, 1.0, -1.0)
    X[:, 0] += 0.3 * t
    return X, t


def solved(machine, method):
    with warnings.catch_warnings():
        warnings.simplefilter("error")                  # "inaccurate" warns: it must not happen here
        sol = machine.solve(method)
    assert sol.status == "optimal" and check(machine, sol).ok
    return sol


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("scale", [1e-4, 1e4])
def test_the_hard_margin_is_the_same_at_every_scale_of_the_inputs(method, scale):
    """The hard margin of X s for s = 1e-4 and 1e4: b as at s = 1 (it does not depend on s) to 1e-7, the dual
    objective 1 / (2 margin^2) times 1 / s^2, both certified; and the SMO's answer likewise."""
    X, t = separable()
    unit = solved(HardMarginSVC(X, t, Linear()), method)
    sol = solved(HardMarginSVC(X * scale, t, Linear()), method)
    assert sol.b == pytest.approx(unit.b, rel=1e-7, abs=1e-9)
    assert sol.dual_objective * scale**2 == pytest.approx(unit.dual_objective, rel=1e-7)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("scale", [1e-6, 1e6])
def test_an_epsilon_svr_is_the_same_at_every_scale_of_the_targets(method, scale):
    """Targets, C and epsilon times s: b and the outputs times s (to 1e-7 of their scale), certified."""
    X, _ = separable(1)
    y = np.sin(X[:, 0]) + 0.1 * X[:, 1]
    unit = solved(EpsilonSVR(X, y, RBF(0.5), C=1.0, epsilon=0.1), method)
    machine = EpsilonSVR(X, y * scale, RBF(0.5), C=scale, epsilon=0.1 * scale)
    sol = solved(machine, method)
    assert sol.b / scale == pytest.approx(unit.b, rel=1e-6, abs=1e-7)
    assert np.max(np.abs(sol.decision_function(X) / scale - unit.decision_function(X))) <= 1e-6


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("C", [1e-5, 1e5])
def test_a_c_svc_is_certified_for_a_box_far_from_one(method, C):
    """A box of 1e-5 (every multiplier at it or near) and of 1e5 (an interior answer, boxes unused) on
    overlapping classes: certified, and the objective equal to the SMO's to 1e-6 relative."""
    X, t = separable(2)
    t[:6] = -t[:6]
    machine = SoftMarginSVC(X, t, RBF(1.0), C=C)
    sol = solved(machine, method)
    smo = machine.solve("smo", tol=1e-8)
    assert sol.dual_objective == pytest.approx(smo.dual_objective, rel=1e-6)


def test_a_machine_of_its_usual_scale_goes_to_the_solvers_as_it_is():
    """An RBF C-SVC with C = 1 is its own unit of size and of value: the solvers see the QP's own matrices
    (nothing rescaled, no rounding added)."""
    X, t = separable(3)
    qp = SoftMarginSVC(X, t, RBF(0.5), C=1.0).standard_qp()
    Q = qp.dense_Q()
    units = Units.of(qp, Q)
    assert units == Units(1.0, 1.0) and units.problem(qp) is qp and units.Q(Q) is Q


def test_the_units_are_those_of_the_answer():
    """size: the widest box, or max |p| / max Q_ii where that is smaller (the curvature stops the
    multipliers first), or 1 with nothing to go by; value: the larger of size^2 max Q_ii and size max |p|."""
    X, t = separable(4)
    qp = HardMarginSVC(X * 1e3, t, Linear()).standard_qp()
    Q = qp.dense_Q()
    units = Units.of(qp, Q)
    q_max = float(np.max(np.diag(Q)))
    assert units.size == pytest.approx(1.0 / q_max) and units.value == pytest.approx(1.0 / q_max)
    scaled = units.problem(qp)
    assert np.max(np.diag(units.Q(Q))) == pytest.approx(1.0) and np.max(np.abs(scaled.p)) == pytest.approx(1.0)
    box = SoftMarginSVC(X, t, RBF(1.0), C=1e-3).standard_qp()
    assert Units.of(box, box.dense_Q()) == Units(1e-3, 1e-3)
