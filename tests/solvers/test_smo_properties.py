"""Property tests: on random small problems the SMO reaches the optimum of the direct QP.

Each example draws a data set (N <= 40), a kernel (linear, polynomial, RBF),
a machine with random hyperparameters, a working-set rule and the shrinking
flag; the SMO's dual objective must equal the one of Clarabel's interior-point
solve of the same standard-form dual (``solve("qp-clarabel")``) to 1e-6
relative, its multipliers must be feasible, and its KKT report (``duality.check``)
must pass.
"""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sparsekernel import datasets
from sparsekernel.errors import ConvergenceWarning, InfeasibleError, SolverError
from sparsekernel.formulations import (
    SVDD,
    EpsilonSVR,
    HardMarginSVC,
    NuSVC,
    NuSVR,
    OneClassSVM,
    SoftMarginSVC,
)
from sparsekernel.kernels import RBF, Linear, Polynomial
from sparsekernel.duality import check
from sparsekernel.solvers.smo import WSS_RULES

TOL = 1e-6
OBJ_RTOL = 1e-6
MAX_ITER = 2_000_000  # rank-deficient kernels with C ~ 10 take up to ~1e6 first-order steps (LIBSVM's
                      # second-order ones ~2e5); a draw needing more fails (ConvergenceWarning is an
                      # error) instead of hanging
NU_TOL = 1e-8         # nu-SVC: a_n <= 1/N, so G is O(nu); this is tol 1e-6 on the scale of the others
RHO_ZERO = 1e-6      # nu-SVC: r this small is the trivial optimum r = 0
ZERO_FLOOR = 0.1      # an objective under 0.1 of the size of its terms (cancellation: nu-SVC near
                      # its trivial optimum rho = 0, say) is compared to 1e-7 of that size; at
                      # tol 1e-6 the value itself has no more correct digits
KKT_TOL = 1e-5        # duality.check at the SMO's matched tolerance (duality.kkt.matched_tol)
REFERENCE_ATOL = 1e-10  # Clarabel's own absolute accuracy (tol_gap_abs = 1e-12), with room
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Inhomogeneous polynomials on unit-scale inputs: a homogeneous cubic on 2-D data has a
# rank-4 Gram matrix with entries ~1e4, on which SMO (LIBSVM's too) needs over 1e7 steps.
kernels = st.one_of(
    st.just(Linear()),
    st.builds(Polynomial, degree=st.integers(2, 3), gamma=st.floats(0.1, 1.0), coef0=st.floats(0.5, 1.0)),
    st.builds(RBF, gamma=st.floats(0.05, 5.0)),
)
sizes = st.integers(6, 40)
seeds = st.integers(0, 2**31 - 1)
rules = st.sampled_from(sorted(WSS_RULES))
flags = st.booleans()


def inputs(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 2)) * rng.uniform(0.5, 1.0, size=2)


def labels(X: np.ndarray, seed: int) -> np.ndarray:
    """A noisy linear rule, both classes present."""
    rng = np.random.default_rng(seed + 1)
    t = np.where(X @ rng.normal(size=2) + 0.5 * rng.normal(size=X.shape[0]) > 0, 1.0, -1.0)
    t[:2] = (1.0, -1.0)
    return t


def targets(X: np.ndarray, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed + 2)
    return np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.normal(size=X.shape[0])


def reference(m):
    """Clarabel's solve; an "AlmostSolved" (1e-8 rather than 1e-12) is still a reference at 1e-6,
    and where its 1e-12 tolerances stall ("InsufficientProgress") 1e-9 ones are asked for."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=ConvergenceWarning)
        try:
            return m.solve("qp-clarabel")
        except SolverError:
            return m.solve("qp-clarabel", tol_gap_abs=1e-9, tol_gap_rel=1e-9, tol_feas=1e-9)


def solve(m, wss: str, shrinking: bool, tol: float = TOL):
    """Through Machine.solve, the public path (where nu-SVR's epsilon = 0 case is handled)."""
    return m.solve("smo", tol=tol, wss=wss, shrinking=shrinking, max_iter=MAX_ITER)


def assert_matches_clarabel(m, wss: str, shrinking: bool) -> None:
    check_against(m, solve(m, wss, shrinking), reference(m))


def check_against(m, sol, ref) -> None:
    assert sol.status == "optimal"
    qp = m.standard_qp()
    z = np.concatenate([sol.a] + ([sol.a_hat] if sol.a_hat is not None else []))
    # relative to the objective, or to the size of its terms when it is ~0 by cancellation
    z_ref = np.concatenate([ref.a] + ([ref.a_hat] if ref.a_hat is not None else []))
    mass = max(float(np.sum(np.abs(z))), float(np.sum(np.abs(z_ref))))
    terms = 0.5 * float(np.max(qp.diag_Q())) * mass**2 + float(np.max(np.abs(qp.p))) * mass
    gap = abs(sol.dual_objective - ref.dual_objective)
    allowed = OBJ_RTOL * max(abs(ref.dual_objective), ZERO_FLOOR * terms) + REFERENCE_ATOL
    assert gap <= allowed, (sol.dual_objective, ref.dual_objective)
    assert np.all(z >= qp.lower) and np.all(z <= qp.upper)
    report = check(m, sol, KKT_TOL)
    assert not report.failed(), str(report)
    # the gap: each point's complementarity term is at most the final violation (m - M <= tol)
    # times its box width, so the gap is at most tol * sum(u - l) (sum a for the hard margin)
    width = np.where(np.isfinite(qp.upper), qp.upper - qp.lower, z)
    tol = NU_TOL if isinstance(m, NuSVC) else TOL
    assert abs(report.gap.absolute) <= tol * float(np.sum(width)) + REFERENCE_ATOL, str(report)
    scale = max(1.0, float(np.sum(np.abs(z))))
    assert abs(qp.y @ z - qp.delta) <= 1e-12 * scale
    if qp.nu_sum is not None and not (isinstance(m, NuSVR) and sol.epsilon == 0.0):
        assert abs(np.sum(z) - qp.nu_sum) <= 1e-12 * scale
    elif qp.nu_sum is not None:  # nu-SVR with (7.74) slack: epsilon = 0 and sum (a + a_hat) <= nu C
        assert np.sum(z) <= qp.nu_sum * (1 + 1e-12)


@SETTINGS
@given(n=sizes, seed=seeds, kernel=kernels, C=st.floats(1e-2, 10.0), wss=rules, shrinking=flags)
def test_soft_margin(n, seed, kernel, C, wss, shrinking):
    X = inputs(n, seed)
    assert_matches_clarabel(SoftMarginSVC(X, labels(X, seed), kernel, C=C), wss, shrinking)


@SETTINGS
@given(n=sizes, seed=seeds, kernel=kernels, wss=rules, shrinking=flags)
def test_hard_margin_on_separable_data(n, seed, kernel, wss, shrinking):
    X, t = datasets.separable(n=max(n, 4), seed=seed % 1000)
    assert_matches_clarabel(HardMarginSVC(X, t, kernel), wss, shrinking)


@SETTINGS
@given(n=sizes, seed=seeds, kernel=kernels, fraction=st.floats(0.6, 1.0), wss=rules, shrinking=flags)
def test_nu_svc(n, seed, kernel, fraction, wss, shrinking):
    X = inputs(n, seed)
    t = labels(X, seed)
    nu_max = 2 * min((t > 0).sum(), (t < 0).sum()) / n          # (7.40) with a_n <= 1/N
    m = NuSVC(X, t, kernel, nu=fraction * nu_max)
    sol, ref = attempt(lambda: solve(m, wss, shrinking, NU_TOL)), attempt(lambda: reference(m))
    if sol is None or ref is None:
        # nu too small for these data: the optimum is the trivial rho = 0, and whether the
        # rounding of r lands above or below 0 is arbitrary; whoever did not raise found r ~ 0
        for solution in (sol, ref):
            assert solution is None or abs(solution.rho) <= RHO_ZERO
        return
    check_against(m, sol, ref)


def attempt(solve):
    try:
        return solve()
    except InfeasibleError:
        return None


@SETTINGS
@given(n=sizes, seed=seeds, kernel=kernels, C=st.floats(1e-2, 10.0), epsilon=st.floats(0.0, 0.5),
       wss=rules, shrinking=flags)
def test_epsilon_svr(n, seed, kernel, C, epsilon, wss, shrinking):
    X = inputs(n, seed)
    assert_matches_clarabel(EpsilonSVR(X, targets(X, seed), kernel, C=C, epsilon=epsilon), wss, shrinking)


@SETTINGS
@given(n=sizes, seed=seeds, kernel=kernels, C=st.floats(1e-1, 10.0), nu=st.floats(0.05, 1.0),
       wss=rules, shrinking=flags)
def test_nu_svr(n, seed, kernel, C, nu, wss, shrinking):
    X = inputs(n, seed)
    assert_matches_clarabel(NuSVR(X, targets(X, seed), kernel, C=C, nu=nu), wss, shrinking)


@SETTINGS
@given(n=sizes, seed=seeds, kernel=kernels, nu=st.floats(0.05, 1.0), wss=rules, shrinking=flags,
       svdd=st.booleans())
def test_one_class_and_svdd(n, seed, kernel, nu, wss, shrinking, svdd):
    X = inputs(n, seed)
    assert_matches_clarabel((SVDD if svdd else OneClassSVM)(X, kernel, nu=nu), wss, shrinking)
