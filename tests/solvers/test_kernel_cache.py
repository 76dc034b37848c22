"""The row cache's float64 products against the kernel computed directly, on every route.

``KernelRowCache.products`` gives the SMO its final gradient and outputs in
float64 whatever the rows' dtype: from shared operands (a sparse X's
transpose, the RBF's scaled and centred X) or, for float32 RBF rows of a dense
X, from centred rows formed a chunk at a time. Each route must give
(K + diag(shift))[rows][:, cols] @ coef to float64 rounding, on inputs far
from the origin (where an uncentred RBF exponent loses digits).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from sparsekernel.kernels import RBF, Linear, Polynomial
from sparsekernel.solvers import kernel_cache
from sparsekernel.solvers.kernel_cache import KernelRowCache


def reference(kernel, X, rows, cols, coef, shift):
    """The same product in float64 from the kernel's own Gram matrix."""
    Xd = X.toarray() if sp.issparse(X) else X
    if isinstance(kernel, RBF):  # from the differences themselves: no cancellation of large norms
        K = np.exp(-kernel.gamma * ((Xd[rows][:, None, :] - Xd[cols][None, :, :]) ** 2).sum(axis=2))
    else:
        K = np.asarray(kernel(Xd[rows], Xd[cols]), dtype=np.float64)
    out = K @ coef
    if shift is not None:
        for r, point in enumerate(rows):
            hit = np.flatnonzero(cols == point)
            out[r] += shift[point] * coef[hit].sum()
    return out


@pytest.mark.parametrize("N", [300, 1600])                     # float64 rows, float32 rows
@pytest.mark.parametrize("kernel", [RBF(0.02), Linear(), Polynomial(degree=2, gamma=0.05, coef0=1.0)],
                         ids=["rbf", "linear", "poly"])
@pytest.mark.parametrize("layout", ["dense", "csr"])
@pytest.mark.parametrize("support", ["most", "few"])           # the whole-X route, the X[cols] route
def test_products_equal_the_kernel_computed_directly(N, kernel, layout, support):
    rng = np.random.default_rng(N)
    X = 1e3 + rng.normal(size=(N, 12))                         # far from the origin
    if layout == "csr":
        X = sp.random(N, 40, density=0.2, format="csr", random_state=N,
                      data_rvs=lambda k: rng.exponential(1.0, size=k))
    shift = rng.uniform(0.0, 0.5, size=N)
    cache = KernelRowCache(kernel, X, 1.0, shift=shift)
    assert cache.dtype == (np.float64 if N <= 1448 else np.float32)
    cols = np.sort(rng.choice(N, int(0.8 * N) if support == "most" else 7, replace=False))
    rows = rng.permutation(N)[: N // 3]
    coef = rng.normal(size=cols.size)
    expected = reference(kernel, X, rows, cols, coef, shift)
    got = cache.products(rows, cols, coef)
    scale = np.abs(coef).sum() * max(1.0, float(np.max(np.abs(expected))))
    assert np.max(np.abs(got - expected)) <= 1e-12 * scale


def test_float32_rbf_rows_keep_no_float64_copy_of_x():
    """Dense X, RBF, N > 1448: the final products take centred rows a chunk at a time."""
    X = np.random.default_rng(0).normal(size=(1600, 5))
    cache = KernelRowCache(RBF(0.1), X, 1.0)
    cache.products(np.arange(1600), np.arange(1600), np.ones(1600))
    assert isinstance(cache._shared(), kernel_cache.CentredRBF)


@pytest.mark.parametrize("kernel", [RBF(0.5), Linear()], ids=["rbf", "linear"])
def test_kernel_times_in_blocks_equals_the_whole_product(kernel, monkeypatch):
    """The certificate's K u over small blocks of rows (the whole product's memory cut to a block):
    equal to the product of the whole Gram matrix, with u nonzero on a few points only."""
    from sparsekernel.formulations import machine as machine_module
    from sparsekernel.formulations.soft_margin import SoftMarginSVC

    rng = np.random.default_rng(5)
    X = rng.normal(size=(500, 3))
    t = np.where(X[:, 0] > 0, 1.0, -1.0)
    m = SoftMarginSVC(X, t, kernel=kernel, C=1.0)
    u = np.zeros(500)
    u[rng.choice(500, 37, replace=False)] = rng.normal(size=37)
    whole = np.asarray(kernel(X, X)) @ u
    monkeypatch.setattr(machine_module, "KERNEL_TIMES_ENTRIES", 37 * 70)   # blocks of 70 rows
    monkeypatch.setattr(machine_module, "KERNEL_TIMES_MIN_ROWS", 1)
    m._gram_cache = None
    np.testing.assert_allclose(m.kernel_times(u), whole, rtol=1e-12, atol=1e-12)


def test_row_work_is_the_multiply_adds_of_a_row():
    """Dense: N (D + 1); CSR and CSC: on average the products of a row's entries with the columns
    that hold them, counted here entry by entry, plus the N values written."""
    rng = np.random.default_rng(7)
    dense = KernelRowCache(Linear(), rng.normal(size=(300, 40)), 1.0)
    assert dense.row_work == 300 * 41
    X = sp.random(400, 2000, density=0.02, format="csr", random_state=7)
    column_nnz = np.diff(X.tocsc().indptr)
    exact = np.mean([column_nnz[X.indices[X.indptr[r]:X.indptr[r + 1]]].sum() for r in range(X.shape[0])])
    for layout in (X, X.tocsc()):
        assert KernelRowCache(RBF(0.1), layout, 1.0).row_work - X.shape[0] == pytest.approx(exact, rel=1e-12)


@pytest.mark.parametrize("kernel", [RBF(0.02), Linear(), Polynomial(degree=3, gamma=0.05, coef0=1.0)],
                         ids=["rbf", "linear", "poly"])
@pytest.mark.parametrize("layout", ["dense", "csr"])
def test_the_whole_gram_at_once_equals_the_rows_computed_directly(kernel, layout):
    """``fill_whole`` (one symmetric product on a dense X, else ``fill_all``) leaves every row, with the
    shift on the diagonal, equal to the kernel computed directly, and the bookkeeping of a full cache:
    each point's slot, the rows counted and the clock."""
    rng = np.random.default_rng(7)
    N = 240
    X = 1e3 + rng.normal(size=(N, 9)) if layout == "dense" else sp.random(
        N, 30, density=0.3, format="csr", random_state=7, data_rvs=lambda k: rng.exponential(1.0, size=k))
    shift = rng.uniform(0.0, 0.5, size=N)
    cache = KernelRowCache(kernel, X, 10.0, shift=shift)
    clock = cache.fill_whole(64, 5)
    everyone = np.arange(N)
    expected = reference(kernel, X, everyone, everyone, np.eye(N), None) + np.diag(shift)
    got = cache.store[cache.slot_of]
    assert np.max(np.abs(got - expected)) <= 1e-12 * max(1.0, float(np.max(np.abs(expected))))
    assert sorted(cache.slot_of) == list(range(N)) and np.all(cache.owner[cache.slot_of] == everyone)
    assert cache.rows_computed == N and clock == 5 + N and cache.n_free == 0


def test_a_cache_holding_some_rows_fills_only_the_missing_ones():
    """A kept cache (a regularisation path's) that holds some rows already gets only the others."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(100, 5))
    cache = KernelRowCache(RBF(0.1), X, 10.0)
    cache.fill(np.array([4, 9, 50]), 0)
    cache.fill_whole(32, 3)
    assert cache.rows_computed == 100
    np.testing.assert_allclose(cache.store[cache.slot_of], RBF(0.1)(X, X), rtol=0, atol=1e-14)


@pytest.mark.parametrize("kernel", [RBF(0.02), Linear(), Polynomial(degree=3, gamma=0.05, coef0=1.0)],
                         ids=["rbf", "linear", "poly"])
def test_group_blocks_fill_a_pair_cache_with_the_kernel_of_its_points(kernel):
    """``GroupBlocks`` (the one-versus-one pairs' rows from class blocks): the cache of groups c then d
    holds the kernel of those points computed directly, on inputs far from the origin; each block
    within a group is computed once however many pairs read it."""
    from sparsekernel.solvers.kernel_cache import GroupBlocks

    rng = np.random.default_rng(5)
    X = 1e3 + rng.normal(size=(150, 7))
    labels = rng.integers(0, 4, size=150)
    groups = [np.flatnonzero(labels == c) for c in range(4)]
    blocks = GroupBlocks(kernel, X, groups)
    for c, d in [(0, 1), (0, 2), (1, 2), (3, 0)]:
        points = np.concatenate([groups[c], groups[d]])
        cache = blocks.cache(c, d, X[points], 10.0)
        expected = reference(kernel, X, points, points, np.eye(points.size), None)
        got = cache.store[cache.slot_of]
        assert np.max(np.abs(got - expected)) <= 1e-12 * max(1.0, float(np.max(np.abs(expected))))
        assert cache.complete and cache.rows_computed == 0
    sizes = [g.size for g in groups]
    within = sum(sizes[c] ** 2 for c in range(4))                    # each class block once
    between = sum(sizes[c] * sizes[d] for c, d in [(0, 1), (0, 2), (1, 2), (3, 0)])
    assert blocks.entries_computed == within + between
    with pytest.raises(ValueError, match="holds"):
        blocks.cache(0, 1, X[groups[0]], 10.0)


def test_the_compiled_exp_is_numpys_to_one_unit_in_the_last_place():
    """``exp_in_place`` (the RBF rows' exp, a SIMD loop of our own): within one unit in the last place
    of numpy's exp over the whole range a kernel exponent takes, exactly 1 at 0 and 0 far below, with
    numpy's exp for layouts it does not take; the compiled and the JIT builds alike."""
    from sparsekernel.solvers import _smo_loops, _smo_numba

    rng = np.random.default_rng(11)
    x = np.concatenate([-rng.random(20000) * 5, -rng.exponential(50.0, 20000), -rng.random(5000) * 708,
                        rng.random(500) * 709, [0.0, -0.0, -1e-300, 1e-16, -1e-16, -707.99, -708.01, -745.2, -1e9, -np.inf]])
    expected = np.exp(x)
    for exp in (_smo_loops.exp_inplace, _smo_numba.exp_inplace):
        got = x.copy()
        exp(got)
        normal = x > -708.0
        ulps = np.abs(got[normal] - expected[normal]) / np.spacing(expected[normal])
        assert ulps.max() <= 1.0
        assert np.all(got[~normal] == 0.0) and np.all(expected[~normal] < 3.4e-308)
        assert got[x == 0.0].tolist() == [1.0, 1.0]
    block = -rng.random((40, 30)) * 3
    strided = block.copy()[:, ::2]
    assert np.array_equal(kernel_cache.exp_in_place(strided), np.exp(block[:, ::2]))
    assert np.max(np.abs(kernel_cache.exp_in_place(block.copy()) / np.exp(block) - 1.0)) <= 2.3e-16


def test_the_float32_exp_is_the_correctly_rounded_one_to_one_unit():
    """``exp32_inplace`` (the float32 RBF rows' exp, of the caller's fill and of the SMO loop's own): within
    one unit in the last place of the correctly rounded value, and equal to it on at least 90% of the
    exponents (numpy's float32 exp: up to two units, and equal on about two thirds); exactly 1 at 0,
    subnormals where they are due, 0 below their range; the compiled and the JIT builds alike."""
    from sparsekernel.solvers import _smo_loops, _smo_numba

    rng = np.random.default_rng(12)
    x = np.concatenate([-rng.random(20000) * 5, -rng.exponential(20.0, 20000), -rng.random(5000) * 110,
                        np.linspace(-104.5, 1.0, 50001), [0.0, -0.0, -87.0, -100.0, -102.9, -103.1, -1e9]])
    x = x.astype(np.float32)
    expected = np.exp(x.astype(np.float64)).astype(np.float32)        # the correctly rounded value, but for ties
    for exp in (_smo_loops.exp32_inplace, _smo_numba.exp32_inplace):
        got = x.copy()
        exp(got)
        units = np.abs(got.view(np.int32).astype(np.int64) - expected.view(np.int32).astype(np.int64))
        assert units.max() <= 1 and np.mean(units > 0) < 0.1
        assert got[x == 0.0].tolist() == [1.0, 1.0]
        assert got[x == np.float32(-100.0)][0] > 0.0 and np.all(got[x < -103.3] == 0.0)


def test_the_float32_rows_filled_by_the_loop_are_those_of_the_callers_fill():
    """The SMO's compiled loop computes a missing float32 RBF row itself (``_smo_numba.fill_here``, no return
    to Python): every row it left in the cache equals, bit for bit, the row the caller's ``fill`` computes for
    the same point, and the solve counts them in ``rows_computed`` (one each here: the cache holds them all)."""
    import importlib

    from sparsekernel.formulations import SoftMarginSVC
    from sparsekernel.solvers.smo import smo_standard

    smo_module = importlib.import_module("sparsekernel.solvers.smo")
    rng = np.random.default_rng(5)
    X = rng.normal(size=(1800, 6)) * 3.0 + 40.0                        # float32 rows (N > 1448), far from 0
    t = np.where(X[:, 0] - X[:, 1] + rng.normal(size=1800) > 0, 1.0, -1.0)
    qp = SoftMarginSVC(X, t, RBF(0.2), C=2.0).standard_qp()
    cache = KernelRowCache(qp.kernel, qp.X, 160.0 * (1.0 - smo_module.COMPACT_SHARE))
    assert cache.dtype == np.float32 and cache.loop_operands() is not None
    fetches = []
    original = smo_module._Run._fetch_rows
    try:
        smo_module._Run._fetch_rows = lambda run: (fetches.append(1), original(run))
        result = smo_standard(qp, tol=1e-3, cache=cache)
    finally:
        smo_module._Run._fetch_rows = original
    assert result.status == "optimal" and not fetches
    held = np.flatnonzero(cache.slot_of >= 0)
    assert result.rows_computed == held.size == cache.n_slots - cache.n_free > 100
    fresh = KernelRowCache(qp.kernel, qp.X, 160.0)
    fresh.fill(held, 0)
    assert np.array_equal(cache.store[cache.slot_of[held]], fresh.store[fresh.slot_of[held]])
    exact = np.exp(-0.2 * ((X[held[:50], None, :] - X[None, :, :]) ** 2).sum(axis=2))
    assert np.max(np.abs(cache.store[cache.slot_of[held[:50]]] - exact)) <= cache.entry_error(1.0)


@pytest.mark.parametrize("cache_mb", [200.0, 1.0])               # every row held; rows evicted and filled again
def test_the_loops_own_fill_gives_the_answer_of_the_callers(cache_mb, monkeypatch):
    """The same C-SVC dual (float32 RBF rows, N = 2,500) solved with the loop's own fill and with the caller's
    (``loop_operands`` None, as for a kernel the loop cannot compute): the same objective to 1e-9 relative and
    the same support, both certified; with a cache of 1 MB (26 rows), rows evicted and computed again."""
    from sparsekernel.duality import check
    from sparsekernel.formulations import SoftMarginSVC

    rng = np.random.default_rng(8)
    X = rng.normal(size=(2500, 10))
    t = np.where(np.sin(X[:, 0]) + X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=2500) > 0, 1.0, -1.0)
    machine = SoftMarginSVC(X, t, RBF(0.1), C=5.0)
    own = machine.solve("smo", tol=1e-4, cache_mb=cache_mb)
    monkeypatch.setattr(KernelRowCache, "loop_operands", lambda self: None)
    theirs = SoftMarginSVC(X, t, RBF(0.1), C=5.0).solve("smo", tol=1e-4, cache_mb=cache_mb)
    assert own.status == theirs.status == "optimal" and check(machine, own).ok
    assert abs(own.dual_objective - theirs.dual_objective) <= 1e-9 * abs(theirs.dual_objective)
    assert np.array_equal(own.support, theirs.support)


@pytest.mark.parametrize("offset", [1e4, 1e8])
def test_the_smo_on_sparse_rows_far_from_the_origin_is_the_dense_fit(offset: float) -> None:
    # the SMO's sparse rows were x^T x' products, uncentred: at an offset of 1e8 its dual objective was 4.3
    # from the dense fit's and a multiplier 1.0 off, flagged inaccurate; at 1e4 the bound on a value's rounding was 9e-8
    import warnings

    import scipy.sparse as sp

    from sparsekernel.formulations import SoftMarginSVC
    from sparsekernel.kernels import RBF, DIRECT_EXPONENT_ROUNDING

    r = np.random.default_rng(0)
    X = np.vstack([r.normal(size=(30, 2)) + 1.5, r.normal(size=(30, 2)) - 1.5]) + offset
    t = np.r_[np.ones(30), -np.ones(30)]
    dense = SoftMarginSVC(X, t, RBF(0.5), C=1.0).solve("smo", tol=1e-8)
    machine = SoftMarginSVC(sp.csr_matrix(X), t, RBF(0.5), C=1.0)
    assert machine.kernel_entry_error <= DIRECT_EXPONENT_ROUNDING
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sparse = machine.solve("smo", tol=1e-8)
    assert sparse.status == "optimal"
    np.testing.assert_allclose(sparse.a, dense.a, rtol=0, atol=1e-6)
    assert sparse.dual_objective == pytest.approx(dense.dual_objective, rel=1e-10)


@pytest.mark.parametrize("N, offset, gamma", [(60, 0.0, 0.5), (60, 1e3, 2.0), (60, 1e7, 1.0), (1500, 50.0, 0.1)])
def test_the_rows_bound_on_a_kernel_values_rounding_is_the_machines(N: int, offset: float, gamma: float) -> None:
    # the SMO hands the machine the bound of its rows' operands (solve_smo), in place of the machine computing it
    # again: the two agree where the product is formed (4 eps gamma R^2, R from X's mean) and where the exponent is
    # summed from the differences (inputs 1e7 from the origin at gamma 1); float64 rows at 60 points, float32 at 1500
    from sparsekernel.formulations import SoftMarginSVC

    r = np.random.default_rng(N)
    X = r.normal(size=(N, 3)) * np.array([1.0, 3.0, 0.2]) + offset
    t = np.where(r.random(N) < 0.5, 1.0, -1.0)
    machine = SoftMarginSVC(X, t, RBF(gamma), C=1.0)
    cache = KernelRowCache(RBF(gamma), X, 8.0)
    assert cache.value_rounding() is None                       # no operands before a row is computed
    cache.products(np.arange(N), np.arange(5), np.ones(5))
    assert cache.value_rounding() == pytest.approx(machine.kernel_entry_error, rel=1e-6)
    solved = SoftMarginSVC(X, t, RBF(gamma), C=1.0)
    solved.solve("smo", tol=1e-3)
    assert solved.__dict__["kernel_entry_error"] == pytest.approx(machine.kernel_entry_error, rel=1e-6)
    assert KernelRowCache(Linear(), X, 8.0).value_rounding() is None
