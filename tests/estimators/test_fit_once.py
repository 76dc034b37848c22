"""A fit does its work once: one StandardQP, one KKT check, and the training data kept once."""

from __future__ import annotations

import gc
import tracemalloc

import numpy as np
import pytest

from sparsekernel.estimators import SVC, SVR, OneClassSVM
from sparsekernel.formulations import MACHINES


def _data(n: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + 0.8 * rng.normal(size=n) > 0, 1, 0)    # overlapping classes: many support vectors
    return X, y


@pytest.mark.parametrize("estimator, machine, target", [
    (SVC(gamma=0.5), "soft", "labels"),
    (SVR(gamma=0.5), "eps-svr", "values"),
    (OneClassSVM(gamma=0.5, nu=0.3), "one-class", None),
])
def test_a_fit_builds_its_qp_once_and_checks_kkt_once(monkeypatch, estimator, machine: str, target) -> None:
    cls = MACHINES[machine]
    counts = {"qp": 0, "kkt": 0}
    build, conditions = cls._standard_qp, cls.kkt_conditions

    def counting_build(self):
        counts["qp"] += 1
        return build(self)

    def counting_conditions(self, state):
        counts["kkt"] += 1
        return conditions(self, state)

    monkeypatch.setattr(cls, "_standard_qp", counting_build)
    monkeypatch.setattr(cls, "kkt_conditions", counting_conditions)
    X, y = _data(300, 4)
    if target is None:
        estimator.fit(X)
    else:
        estimator.fit(X, y if target == "labels" else X[:, 0] + 0.1 * y)
    assert counts == {"qp": 1, "kkt": 1}
    assert estimator.kkt_report_.ok, str(estimator.kkt_report_)


@pytest.mark.parametrize("estimator, labels", [(SVC(gamma=0.01), True), (SVR(gamma=0.01, epsilon=0.01), False),
                                               (OneClassSVM(gamma=0.01, nu=0.9), None)])
def test_a_fitted_estimator_keeps_the_training_data_once(estimator, labels) -> None:
    X, y = _data(2000, 200, seed=1)
    t = None if labels is None else (y if labels else X[:, 0] + 0.1 * y)
    small = X[:100], None if t is None else t[:100]
    estimator.fit(*[a for a in small if a is not None])       # numba's loops loaded before measuring
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        estimator.fit(*[a for a in (X, t) if a is not None])
        gc.collect()                                  # garbage in reference cycles is not kept
        retained = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    n_sv = estimator.support_vectors_.shape[0]
    assert n_sv >= 0.5 * X.shape[0]                 # most points are support vectors: a copy would show
    # the support vectors once (at most X itself) and vectors of length N besides (multipliers,
    # coefficients, the QP's box and signs, slacks): at most 64 of them, a fifth of X here
    assert retained <= n_sv * X.shape[1] * 8 + 64 * X.shape[0] * 8, (retained / X.nbytes, n_sv)
    assert np.shares_memory(estimator.support_vectors_, _solution(estimator).support_vectors)


def _solution(estimator):
    return estimator.solutions_[0] if hasattr(estimator, "solutions_") else estimator.solution_


def test_a_multiclass_fit_keeps_the_training_data_once_not_per_pair() -> None:
    """Four classes, six pairs: each pair's machine held its points' rows (three X's between them)
    and each pair's solution its support vectors (three more); now the support vectors are kept
    once and the pairs' machines are built again from the training X only when asked for."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(2000, 200))
    y = np.floor(X[:, 0] + rng.normal(size=2000)).astype(int) % 4
    estimator = SVC(gamma=0.01)
    estimator.fit(X[:100], y[:100])
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        estimator.fit(X, y)
        gc.collect()
        retained = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    n_sv, n_pairs = estimator.support_vectors_.shape[0], len(estimator.pairs_)
    assert n_pairs == 6 and n_sv >= 0.5 * X.shape[0]
    # the support vectors once, and per pair a few vectors of its points (multipliers, coefficients,
    # targets, weights, indices) besides the six rows of dual_coef_ and dual_: under half an X here
    assert retained <= n_sv * X.shape[1] * 8 + (64 + 16 * n_pairs) * X.shape[0] * 8, retained / X.nbytes
    # what was dropped comes back on demand, and is the same problem: each pair certifies again
    for machine, solution in zip(estimator.machines_, estimator.solutions_):
        from sparsekernel.duality import check
        assert check(machine, solution, tol=solution.tol).ok
    # and prediction from the shared support vectors is LIBSVM's (one kernel block for all pairs)
    from sklearn import svm
    reference = svm.SVC(gamma=0.01, decision_function_shape="ovo").fit(X, y)
    ours = SVC(gamma=0.01, decision_function_shape="ovo").fit(X, y)
    np.testing.assert_allclose(ours.decision_function(X[:300]), reference.decision_function(X[:300]), atol=5e-3)


@pytest.mark.parametrize("estimator", ["SVC", "NuSVC"])
@pytest.mark.parametrize("kernel", ["rbf", "poly"])
def test_a_multiclass_fit_computes_each_class_block_once_and_equals_the_pairs_own(monkeypatch, estimator, kernel) -> None:
    """One-versus-one on K classes: the pairs' kernel rows come from class blocks computed once
    (``GroupBlocks``), not from a Gram matrix of each pair; the fit equals the one whose pairs compute
    their own (same support, decision values to the tolerance), every pair certified, and agrees with
    scikit-learn's."""
    from sklearn import svm
    from sklearn.datasets import load_iris, load_wine
    from sklearn.preprocessing import StandardScaler

    from sparsekernel import estimators
    from sparsekernel.estimators import svm as ours
    from sparsekernel.solvers import kernel_cache

    X, y = load_wine(return_X_y=True) if kernel == "rbf" else load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    params = dict(kernel=kernel, tol=1e-6) | ({"nu": 0.3} if estimator == "NuSVC" else {"C": 3.0})
    computed = []
    original = kernel_cache.GroupBlocks._product
    monkeypatch.setattr(kernel_cache.GroupBlocks, "_product",
                        lambda self, c, d, out: (computed.append((c, d)), original(self, c, d, out))[1])
    shared = getattr(estimators, estimator)(**params).fit(X, y)
    K = len(shared.classes_)
    assert sorted(computed) == sorted({(c, c) for c in range(K)} | {(c, d) for c in range(K) for d in range(c + 1, K)})
    monkeypatch.setattr(ours._ClassifierBase, "_group_blocks", lambda self, *args: None)
    own = getattr(estimators, estimator)(**params).fit(X, y)
    assert all(r.ok for r in shared.kkt_report_) and all(r.ok for r in own.kkt_report_)
    np.testing.assert_array_equal(shared.support_, own.support_)
    da = shared.set_params(decision_function_shape="ovo").decision_function(X)
    db = own.set_params(decision_function_shape="ovo").decision_function(X)
    # in the notes' units (LIBSVM's nu-SVC values are y(x) / rho, a factor up to 308 here): the kernel's
    # values round differently in the blocks and in a pair's own product and the SMO takes other steps,
    # so two answers certified at tol differ by a fraction of tol (0.05-0.44 tol of the largest value seen
    # on two machines); blocks off by a relative 1e-5 exceed this bound, and the KKT reports cannot see
    # that (the SMO's outputs agree with its own rows)
    factor = np.array([m.libsvm_decision_factor(s) for m, s in zip(own.machines_, own.solutions_)])
    notes_a, notes_b = da / factor, db / factor
    assert np.max(np.abs(notes_a - notes_b)) <= 5 * params["tol"] * float(np.max(np.abs(notes_b)))
    assert np.mean(shared.predict(X) == getattr(svm, estimator)(**params).fit(X, y).predict(X)) >= 0.99


def _far_class(gamma: float):
    """Two unit-spread classes 3 apart and a third 1e4 away: the class blocks' operands, centred at the mean of
    all three, are thousands from the first two's points."""
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(size=(20, 2)), rng.normal(size=(20, 2)) + [3.0, 0.0],
                   rng.normal(size=(20, 2)) + [1e4, 0.0]])
    return X, np.repeat([0, 1, 2], 20)


def test_the_class_blocks_rounding_bound_holds_for_their_values_and_far_classes_get_their_own() -> None:
    """The certificate bounds a kernel value's rounding by 4 eps gamma R^2 (``Machine.kernel_entry_error``),
    R the inputs' distance from the mean its operands are centred at. A pair's machine computed R about its own
    mean, but the class blocks that fill its rows are centred at the mean of all classes: with a class 1e4
    away, at gamma 300, the blocks' values for the two near classes were off by 9.7e-8 against a bound of
    2.7e-12, and the pair's certificate was computed from that bound. Now the blocks state their own bound
    (``GroupBlocks.entry_error``, which holds), a pair filled from them is certified with it, and where their
    products round beyond ``DIRECT_EXPONENT_ROUNDING`` every pair computes its own Gram matrix, as a two-class
    fit does."""
    from sparsekernel.formulations import SoftMarginSVC
    from sparsekernel.kernels import RBF
    from sparsekernel.solvers import kernel_cache

    X, y = _far_class(300.0)
    groups = [np.flatnonzero(y == c) for c in range(3)]
    blocks = kernel_cache.GroupBlocks(RBF(300.0), X, groups)
    pair = X[:40]
    K = blocks.cache(0, 1, pair, 10.0).store[:40]
    exact = np.exp(-300.0 * ((pair[:, None, :] - pair[None, :, :]) ** 2).sum(-1))
    error = float(np.max(np.abs(K - exact)))
    assert SoftMarginSVC(pair, np.repeat([1.0, -1.0], 20), RBF(300.0)).kernel_entry_error < error <= \
        blocks.entry_error(0, 1)
    assert blocks.direct           # their products round beyond DIRECT_EXPONENT_ROUNDING: the fit leaves them out
    # the fit leaves the blocks out, and its pair (0, 1) is the two-class fit on those 40 points
    import warnings

    with warnings.catch_warnings():      # every pair certified (those with the far class from differences)
        warnings.simplefilter("error")
        multi = SVC(gamma=300.0, tol=1e-8, decision_function_shape="ovo").fit(X, y)
    assert all(solution.status == "optimal" for solution in multi.solutions_)
    binary = SVC(gamma=300.0, tol=1e-8).fit(pair, y[:40])
    assert multi.solutions_[0].status == "optimal"
    # (7e-9 apart, the two SMOs' stopping points at tol 1e-8; 8e-8 with the blocks, whose solve is inaccurate)
    np.testing.assert_allclose(multi.decision_function(pair)[:, 0], -binary.decision_function(pair), rtol=0,
                               atol=3e-8)
    # on digits the blocks serve (7.7e-16 against 1e-10), and each pair is certified with their bound
    from sklearn.datasets import load_digits

    Xd, yd = load_digits(return_X_y=True)
    fitted = SVC().fit(Xd, yd)
    digits_blocks = kernel_cache.GroupBlocks(fitted._kernel, Xd, [np.flatnonzero(yd == c) for c in range(10)])
    assert not digits_blocks.direct
    assert fitted.machines_[0].kernel_entry_error < digits_blocks.entry_error(0, 1) < 1e-15


def test_a_multiclass_fit_with_a_cache_too_small_for_a_pair_computes_rows_on_demand() -> None:
    """Review finding: with ``cache_size`` below a pair's whole Gram matrix the class blocks cannot
    fill the pair's cache (it raised ValueError); the pairs then fetch rows on demand, and the fit
    equals the one with the default cache."""
    from sklearn.datasets import load_wine
    from sklearn.preprocessing import StandardScaler

    from sparsekernel.solvers import kernel_cache

    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    largest_pair = int(np.sort(np.bincount(y))[-2:].sum())
    small = 0.5 * 8 * largest_pair**2 / kernel_cache.MEGABYTE          # half of a pair's float64 Gram matrix
    tight = SVC(cache_size=small, tol=1e-6).fit(X, y)
    default = SVC(tol=1e-6).fit(X, y)
    assert all(r.ok for r in tight.kkt_report_)
    np.testing.assert_array_equal(tight.support_, default.support_)
    np.testing.assert_allclose(tight.decision_function(X), default.decision_function(X), rtol=0, atol=1e-5)


@pytest.mark.parametrize("layout", ["C", "F", "csr"])
@pytest.mark.parametrize("name", ["SVC-binary", "SVC-multiclass", "NuSVR", "OneClassSVM"])
def test_a_training_X_changed_in_place_after_fit_is_refused_not_read(name, layout) -> None:
    """The fitted estimator holds the training X by reference (kept once, above). A caller who changed
    that array in place after fit got ``machines_`` built on the new values (on zeros after X[:] = 0)
    beside the solutions of the old ones, and ``duality.check`` of the pair described another problem
    than the one solved, without a word. Now ``machines_`` (``machine_``) refuses, naming X; prediction,
    from the support vectors' own copy, is unchanged; an X that validation copied (float32 here) is the
    estimator's own, and the caller's changes to theirs leave the fit's machines as they were."""
    import scipy.sparse

    from sklearn.datasets import load_iris

    from sparsekernel.duality import check
    from sparsekernel.errors import ValidationError
    from sparsekernel.estimators import NuSVR

    X0, y = load_iris(return_X_y=True)
    make = {"SVC-binary": lambda: (SVC(), (y > 0).astype(int)), "SVC-multiclass": lambda: (SVC(), y),
            "NuSVR": lambda: (NuSVR(), X0[:, 0]), "OneClassSVM": lambda: (OneClassSVM(nu=0.2), None)}[name]
    attribute = "machines_" if name.startswith("SVC") else "machine_"

    def given(dtype):
        X = np.array(X0, dtype=dtype, order="F" if layout == "F" else "C")
        return scipy.sparse.csr_matrix(X) if layout == "csr" else X

    def fitted(X):
        estimator, target = make()
        return estimator.fit(X) if target is None else estimator.fit(X, target)

    def certified(estimator):
        machines = getattr(estimator, attribute)
        machines = machines if isinstance(machines, list) else [machines]
        solutions = estimator.solutions_ if hasattr(estimator, "solutions_") else [estimator.solution_]
        return all(check(m, s, tol=s.tol).ok for m, s in zip(machines, solutions))

    def zero(X):
        (X.data if layout == "csr" else X)[...] = 0.0

    X = given(np.float64)
    estimator = fitted(X)
    before = estimator.predict(X0)
    assert certified(estimator)
    zero(X)
    with pytest.raises(ValidationError, match="changed in place since fit"):
        getattr(estimator, attribute)
    np.testing.assert_array_equal(estimator.predict(X0), before)
    X = given(np.float32)                                   # validated into a float64 copy: the fit's own
    estimator = fitted(X)
    zero(X)
    assert certified(estimator)


def test_a_one_versus_one_nu_svc_reads_its_pairs_kernel_means_from_the_class_blocks(monkeypatch) -> None:
    """Each pair's nu-SVC machine computed the kernel over its points again for its output_scale (nu times the
    spread, from the kernel's means), where the class blocks held the pair's Gram matrix already: 45 kernel
    evaluations of some 360 x 360, half of a ten-class fit on digits. Now none, and each pair's output_scale is
    the one its machine computes by the kernel (machines_ builds them anew)."""
    from sklearn.datasets import load_digits

    from sparsekernel.estimators import NuSVC
    from sparsekernel.kernels import RBF

    digits = load_digits()
    X, y = digits.data[:600], digits.target[:600]
    calls, scales = [], []
    evaluate, fit_machine = RBF.__call__, NuSVC._fit_machine
    monkeypatch.setattr(RBF, "__call__", lambda self, *args: calls.append(1) or evaluate(self, *args))
    monkeypatch.setattr(NuSVC, "_fit_machine",
                        lambda self, machine, cache=None: scales.append(machine.output_scale) or fit_machine(
                            self, machine, cache))
    fitted = NuSVC(nu=0.1, gamma=0.01 / 64).fit(X, y)
    monkeypatch.undo()
    assert calls == []
    assert len(scales) == 45
    assert scales == pytest.approx([m.output_scale for m in fitted.machines_], rel=1e-12)


@pytest.mark.parametrize("make", [
    lambda: __import__("sparsekernel.estimators", fromlist=["NuSVC"]).NuSVC(gamma=0.05),
    lambda: __import__("sparsekernel.estimators", fromlist=["OneClassSVM"]).OneClassSVM(gamma=0.05, nu=0.2),
], ids=["NuSVC", "OneClassSVM"])
def test_a_small_nu_svc_or_one_class_fit_reads_its_unit_from_the_smos_gram_matrix(monkeypatch, make) -> None:
    """On at most SMALL_GRAM_POINTS points the SMO computes the whole Gram matrix, and the machine's unit (nu times
    the spread; the kernel's mean or spread) was computed from the kernel's values first, a second pass over the
    same N x N values (1,000 points: 5.5 of 21 ms of a NuSVC fit). Now the kernel is not evaluated outside the SMO's
    rows, and the unit is the one a machine computes by the kernel (machines_ builds it anew)."""
    from sparsekernel.kernels import RBF

    X, y = _data(600, 5)
    calls, scales = [], []
    estimator = make()
    evaluate, fit_machine = RBF.__call__, type(estimator)._fit_machine
    monkeypatch.setattr(RBF, "__call__", lambda self, *args: calls.append(1) or evaluate(self, *args))
    monkeypatch.setattr(type(estimator), "_fit_machine",                  # the unit the solve used, read after it
                        lambda self, machine, cache=None: (fit_machine(self, machine, cache),
                                                           scales.append(machine.output_scale))[0])
    fitted = estimator.fit(X, y)
    monkeypatch.undo()
    assert calls == []
    machines = fitted.machines_ if hasattr(fitted, "machines_") else [fitted.machine_]
    assert scales == pytest.approx([m.output_scale for m in machines], rel=1e-12)
