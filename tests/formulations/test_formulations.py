"""Every machine: primal against dual, cvxpy against the direct QP, Clarabel against OSQP,
and the library against LIBSVM through scikit-learn."""

from __future__ import annotations

import numpy as np
import pytest

from cases import CASES, box, libsvm, libsvm_decision, machine, solution

from sparsekernel.errors import ValidationError
from sparsekernel.formulations import OneClassSVM, SoftMarginSVC, solve
from sparsekernel.kernels import RBF

NAMES = list(CASES)


@pytest.mark.parametrize("name", NAMES)
def test_primal_optimum_equals_dual_optimum(name: str) -> None:
    primal = solution(name, "primal-clarabel")
    dual = solution(name, "clarabel")
    scale = max(1.0, abs(dual.dual_objective))
    assert abs(primal.primal_objective - dual.dual_objective) <= 1e-6 * scale
    # each solve's own primal-dual gap, at the recovered or read-off partner point
    assert abs(dual.gap) <= 1e-6 * scale
    assert abs(primal.gap) <= 1e-6 * scale


@pytest.mark.parametrize("name", NAMES)
def test_primal_constraint_duals_equal_dual_solution(name: str) -> None:
    primal = solution(name, "primal-clarabel")
    dual = solution(name, "clarabel")
    width = box(machine(name), dual)
    assert np.max(np.abs(primal.a - dual.a)) <= 1e-5 * width
    if dual.a_hat is not None:
        assert np.max(np.abs(primal.a_hat - dual.a_hat)) <= 1e-5 * width
    assert primal.b == pytest.approx(dual.b, abs=1e-5 * max(1.0, abs(dual.b)))


@pytest.mark.parametrize("name", NAMES)
def test_osqp_agrees_with_clarabel_to_its_tolerance(name: str) -> None:
    osqp = solution(name, "osqp")
    clarabel = solution(name, "clarabel")
    m = machine(name)
    # OSQP runs at eps_abs = eps_rel = 1e-6 (with polishing)
    assert osqp.dual_objective == pytest.approx(clarabel.dual_objective, rel=1e-5, abs=1e-6)
    assert np.max(np.abs(osqp.a - clarabel.a)) <= 1e-4 * box(m, clarabel)
    X = CASES[name].X_test
    scale = max(1.0, float(np.max(np.abs(clarabel.decision_function(X)))))
    assert np.max(np.abs(osqp.decision_function(X) - clarabel.decision_function(X))) <= 1e-4 * scale


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("solver", ["clarabel", "osqp"])
def test_direct_qp_equals_cvxpy_dual(name: str, solver: str) -> None:
    direct = solution(name, f"qp-{solver}")
    cvx = solution(name, solver)
    m = machine(name)
    tight = 1e-7 if solver == "clarabel" else 1e-5
    assert direct.dual_objective == pytest.approx(cvx.dual_objective, rel=tight, abs=tight)
    assert np.max(np.abs(direct.a - cvx.a)) <= 1e-5 * box(m, cvx)
    assert set(direct.support) == set(cvx.support)


@pytest.mark.parametrize("name", NAMES)
def test_decision_values_and_support_equal_libsvm(name: str) -> None:
    case = CASES[name]
    m = machine(name)
    sol = solution(name, "clarabel")
    ours = sol.decision_function(case.X_test)
    theirs = case.scale(sol, m) * libsvm_decision(name, case.X_test)
    assert np.max(np.abs(ours - theirs)) <= 1e-4 * max(1.0, float(np.max(np.abs(ours))))
    assert set(sol.support) == set(libsvm(name).support_)


@pytest.mark.parametrize("name", ["hard-ring", "soft-ripley", "eps-sine", "svdd-ripley"])
def test_predict_follows_the_decision_function(name: str) -> None:
    sol = solution(name, "clarabel")
    X = CASES[name].X_test
    values = sol.decision_function(X)
    if machine(name).task == "regression":
        np.testing.assert_array_equal(sol.predict(X), values)
    else:
        np.testing.assert_array_equal(sol.predict(X), np.where(values >= 0, 1.0, -1.0))


def test_a_formulations_parameters_are_the_truth_while_the_user_holds_them() -> None:
    """Setting a hyperparameter's cvxpy Parameter solves with it (and the machine, the recovered
    slacks and the KKT check follow); machine.set_params is pushed the other way; a derived
    Parameter cannot be set (issue 15's reproducer: C = 4 was overwritten by the stored C = 1)."""
    from sparsekernel import datasets
    from sparsekernel.duality import check
    from sparsekernel.errors import ValidationError
    from sparsekernel.formulations import OneClassSVM, SoftMarginSVC
    from sparsekernel.kernels import RBF

    X, t = datasets.ripley_mixture(n=60)
    m = SoftMarginSVC(X, t, RBF(0.45), C=1.0)
    f = m.dual()
    f.parameters["C"].value = 4.0
    sol = f.solve()
    reference = SoftMarginSVC(X, t, RBF(0.45), C=4.0).solve("clarabel")
    assert m.C == 4.0 and sol.dual_objective == pytest.approx(reference.dual_objective, rel=1e-7)
    assert check(m, sol).ok
    m.set_params(C=0.5)
    assert f.solve().dual_objective == pytest.approx(SoftMarginSVC(X, t, RBF(0.45), C=0.5).solve("clarabel")
                                                     .dual_objective, rel=1e-7)
    assert f.parameters["C"].value == 0.5
    stale = m.primal()
    m.set_params(class_weight={1: 5.0, -1: 1.0})          # the box becomes per point: a new problem
    with pytest.raises(ValidationError, match="formulation must be the machine's current primal"):
        stale.solve()
    assert check(m, m.primal().solve()).ok
    one_class = OneClassSVM(X, RBF(0.45), nu=0.5).dual()
    one_class.parameters["1/(nu N)"].value = 0.123
    with pytest.raises(ValidationError, match=r"derived \['1/\(nu N\)'\]"):
        one_class.solve()


@pytest.mark.parametrize("name", ["NuSVC", "NuSVR", "OneClassSVM", "SVDD"])
@pytest.mark.parametrize("form", ["primal", "dual"])
def test_every_nu_machine_has_nus_own_parameter(name, form) -> None:
    """The contract's hyperparameters are Parameters: NuSVR, OneClassSVM and SVDD had only the derived
    'nu*C' and '1/(nu N)' (their problems read those), so parameters["nu"] was a KeyError while the error
    for a derived one pointed to it. Setting it re-solves as a cold solve at that nu does."""
    from sparsekernel import datasets, formulations
    from sparsekernel.kernels import RBF

    X, t = datasets.ripley_mixture(n=40, seed=3)
    args = {"NuSVC": (X, t), "NuSVR": (X, X[:, 0], ), "OneClassSVM": (X,), "SVDD": (X,)}[name]
    extra = {"NuSVR": {"C": 1.0}}.get(name, {})
    machine = getattr(formulations, name)(*args, RBF(0.5), nu=0.3, **extra)
    f = getattr(machine, form)()
    f.parameters["nu"].value = 0.5
    sol = f.solve()
    cold = getattr(getattr(formulations, name)(*args, RBF(0.5), nu=0.5, **extra), form)().solve()
    assert machine.nu == 0.5 and sol.status == "optimal"
    assert sol.primal_objective == pytest.approx(cold.primal_objective, rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("seed", [20, 24, 39, 54])
def test_the_smos_support_is_every_nonzero_multiplier(seed) -> None:
    """The SMO puts a multiplier on its bound exactly, so its support is every a_n != 0, as LIBSVM's. A
    cut at BOUND_TOL (1e-5) of the box, meant for the interior-point solvers' near-zeros, dropped free
    multipliers of 2e-7 to 1e-3 here (C = 100, random labels): sum_n a_n t_n over the support was then
    not 0 and the estimator's decision values left the solver's expansion by far more than tol."""
    from sparsekernel.estimators import SVC

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(120, 3))
    t = np.where(rng.random(120) < 0.5, 1.0, -1.0)
    sol = solve(SoftMarginSVC(X, t, "linear", C=100.0), "smo", tol=1e-6)
    small = np.flatnonzero((sol.a > 0) & (sol.a < 1e-5 * 100.0))
    assert small.size                                                # the case this test is about
    np.testing.assert_array_equal(sol.support, np.flatnonzero(sol.a))
    from sparsekernel.duality import categories

    cases = categories(SoftMarginSVC(X, t, "linear", C=100.0), sol)      # Result 7.6 by the same bound rule
    assert cases.counts["not a support vector"] == 120 - sol.support.size
    est = SVC(kernel="linear", C=100.0, tol=1e-6).fit(X, t)
    assert set(small) <= set(est.support_)
    assert abs(est.dual_coef_.sum()) <= 1e-12 * np.abs(est.dual_coef_).sum()
    full = X @ X.T @ (est.dual_ * t) + est.intercept_[0]
    np.testing.assert_allclose(est.decision_function(X), full, rtol=0, atol=1e-9 * np.abs(full).max())


@pytest.mark.parametrize("args, options, words", [
    (("soft", "smo"), {}, r"machine must be a machine of formulations .*got 'soft'"),
    ((None, "smo"), {}, r"machine must be a machine of formulations .*got None"),
    (("M", "smo"), {"bogus": 1}, r"the options of method 'smo' must be among .*'wss'\]; got \['bogus'\]"),
    (("M", "libsvm"), {"cache_size": -1}, r"cache_size must be a positive finite number; got -1"),
    (("M", "libsvm"), {"bogus": 1}, r"the options of method 'libsvm' must be among \['cache_size', 'max_iter', 'tol'\]"),
    (("M", "qp-clarabel"), {"bound_tol": float("nan")}, r"bound_tol must be a positive finite number; got nan"),
    (("M", "qp-clarabel"), {"bogus": 1}, r"the settings of clarabel must be among .*'tol_gap_rel'.*; got \['bogus'\]"),
    (("M", "qp-osqp"), {"bogus": 1}, r"the settings of osqp must be among .*'eps_abs'.*; got \['bogus'\]"),
    (("M", "clarabel"), {"bogus": 1}, r"the options of CLARABEL must be settings it takes, with values of their types; "
                                      r"got \['bogus'\]"),
    (("M", "osqp"), {"bogus": 1}, r"the options of OSQP must be settings it takes; got \['bogus'\]"),
    (("M", "primal-clarabel"), {"bogus": 1}, r"the options of CLARABEL must be settings it takes"),
    (("M", "qp-clarabel"), {"max_iter": "x"}, r"the clarabel setting max_iter must be a value of its type; got 'x'"),
], ids=["string", "none", "smo-option", "libsvm-cache", "libsvm-option", "bound-tol", "qp-clarabel-setting",
        "qp-osqp-setting", "cvxpy-clarabel-setting", "cvxpy-osqp-setting", "primal-setting", "qp-clarabel-type"])
def test_solve_names_a_bad_machine_or_option(args, options, words) -> None:
    """Each used to surface as an AttributeError, a TypeError, scikit-learn's InvalidParameterError or a
    SolverError blaming Clarabel."""
    from sparsekernel.errors import ValidationError

    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 2))
    m = SoftMarginSVC(X, np.where(X[:, 0] > 0, 1.0, -1.0), "rbf")
    with pytest.raises(ValidationError, match=words):
        solve(m if args[0] == "M" else args[0], args[1], **options)


@pytest.mark.parametrize("solver", ["OSQP", "CLARABEL"])
def test_a_re_solve_names_a_bad_option_as_the_first_solve_does(solver) -> None:
    """cvxpy keeps the solver of an earlier solve and updates its settings: OSQP's update raised a plain
    ValueError ("Unrecognized settings") where a first solve gave the ValidationError; and a solver of
    None was an AttributeError. The formulation still solves afterwards."""
    from sparsekernel.errors import ValidationError

    X = np.random.default_rng(0).normal(size=(20, 2))
    m = SoftMarginSVC(X, np.where(X[:, 0] > 0, 1.0, -1.0), "rbf")
    dual = m.dual()
    dual.solve(solver)
    with pytest.raises(ValidationError, match=rf"^the options of {solver} must be settings it takes"):
        dual.solve(solver, bogus=1)
    with pytest.raises(ValidationError, match=r"^solver must be one of the installed cvxpy solvers .* got None"):
        dual.solve(None)
    assert dual.solve(solver).status == "optimal"


@pytest.mark.parametrize("layout", ["dense", "csr"])
def test_a_machines_data_changed_in_place_after_construction_is_refused_not_mixed(layout) -> None:
    """A machine held the caller's X, t and sample_weight by reference, and cached what it computed from
    them (the QP, the Gram matrix, the scales) at different times. Changed in place after a solve, they
    left a machine of two problems: with t's signs flipped, ``check`` of the solve's own solution failed
    (0.72) on the new targets beside the old QP; with X[:] = 0 after the QP and Gram matrix were cached,
    it passed (0.00058), describing the old problem, while a machine built on the new X fails it (1.36);
    after a cold one, it read the new X. Now t and the weights are the machine's own copies (1-D, cheap)
    and X, kept by reference (a machine can be as large as its data), has its CRC-32 taken at
    construction: solve, check, categories and gap refuse a machine whose X has changed, naming X."""
    import scipy.sparse
    from sklearn.datasets import load_iris

    from sparsekernel.duality import categories, check
    from sparsekernel.errors import ValidationError
    from sparsekernel.kernels import RBF

    X0, y = load_iris(return_X_y=True)
    t0 = np.where(y > 0, 1.0, -1.0)
    X = scipy.sparse.csr_matrix(X0) if layout == "csr" else X0.copy()
    t, w = t0.copy(), np.linspace(0.5, 2.0, t0.size)
    m = SoftMarginSVC(X, t, RBF(0.5), C=1.0, sample_weight=w)
    sol = solve(m, "smo")
    before = check(m, sol, tol=sol.tol)
    assert before.ok
    t *= -1.0
    w *= 100.0
    after = check(m.set_params(C=1.0), sol, tol=sol.tol)       # the box built again from the weights
    assert after.ok and [r.violation for r in after.rows] == [r.violation for r in before.rows]
    (X.data if layout == "csr" else X)[...] = 0.0
    for read in (lambda: check(m, sol), lambda: solve(m, "smo"), lambda: categories(m, sol)):
        with pytest.raises(ValidationError, match="X.*changed in place"):
            read()


def test_a_read_only_x_that_owns_its_memory_needs_no_digest(monkeypatch) -> None:
    """The digest guards an X someone can change in place; an array that owns its memory and is read-only
    cannot be (not without making it writeable first), and is not digested: the one-versus-one pairs'
    inputs, which the estimator gathers for its own machines (two CRC-32s per pair cost 7% of a fit on
    digits). A read-only view of a writeable array can still change through it, and is digested."""
    from sklearn.datasets import load_iris

    from sparsekernel.estimators import SVC
    from sparsekernel.formulations import machine as machine_module
    from sparsekernel.kernels import RBF

    digested = []
    real = machine_module.digest
    monkeypatch.setattr(machine_module, "digest", lambda X: digested.append(X.shape) or real(X))
    X, y = load_iris(return_X_y=True)
    t = np.where(y > 0, 1.0, -1.0)
    owned = X.copy()
    owned.flags.writeable = False
    SoftMarginSVC(owned, t, RBF(0.5))
    assert digested == []
    view = X.copy()[:, :]
    view.flags.writeable = False                                # its base stays writeable
    SoftMarginSVC(view, t, RBF(0.5))
    assert digested == [X.shape]
    digested.clear()
    estimator = SVC().fit(X, y)                                 # three classes: three pairs of gathered rows
    assert len(estimator.pairs_) == 3 and digested == [] and all(r.ok for r in estimator.kkt_report_)


@pytest.mark.parametrize("case", ["one-class at nu = 1", "nu-svc on equal inputs", "nu-svc at its largest nu"])
def test_a_libsvm_fit_without_a_finite_answer_names_its_cause(case: str) -> None:
    """LIBSVM leaves these optima without a finite rho (every multiplier at its bound) or divides by a zero
    margin; scikit-learn's error blames large input values ("may contain large values and need to be
    preprocessed"), which these data do not have. The SolverError now says why and what else solves them."""
    from sparsekernel.errors import SolverError
    from sparsekernel.formulations import NuSVC, OneClassSVM
    from sparsekernel.kernels import RBF

    X = np.random.default_rng(0).normal(size=(10, 2))
    balanced = np.array([1.0, -1.0] * 5)
    m = {"one-class at nu = 1": lambda: OneClassSVM(X, RBF(1.0), nu=1.0),
         "nu-svc on equal inputs": lambda: NuSVC(np.ones((10, 2)), balanced, RBF(1.0), nu=0.5),
         "nu-svc at its largest nu": lambda: NuSVC(X, balanced, RBF(1.0), nu=1.0)}[case]()
    with pytest.raises(SolverError) as caught:
        m.solve("libsvm")
    message = str(caught.value)
    assert message.index("no finite answer") < message.index("large values")
    assert ("at nu = 1 every multiplier is at its bound" if case.startswith("one-class")
            else "divides nu-SVC's coefficients by the margin rho") in message
    assert "method 'smo' or a cvxpy solver" in message
    assert m.solve("smo").status == "optimal"


@pytest.mark.parametrize("kind", ["primal", "dual"])
def test_a_solver_calling_a_problem_that_always_has_a_solution_infeasible_says_it_failed(kind: str) -> None:
    """Clarabel called the primal of an epsilon-SVR (and nu-SVR) with targets of size 1e6 'infeasible'; the
    SolverError said only "did not solve the primal of EpsilonSVR: status infeasible", as if the data had
    no solution. Every machine but the hard margin has one for all data it accepts: the error now says the
    status is the solver's numerical failure and what else to use."""
    from sparsekernel.errors import SolverError
    from sparsekernel.formulations import EpsilonSVR
    from sparsekernel.formulations.solve import refuse
    from sparsekernel.kernels import RBF

    X = np.random.default_rng(3).normal(size=(10, 2))
    m = EpsilonSVR(X[:, :1], X[:, 1] * 1e6, RBF(1.0), C=1.0, epsilon=1e4)
    with pytest.raises(SolverError, match=r"CLARABEL reported 'infeasible' on the " + kind + r" of EpsilonSVR, "
                                          r"which has a solution for every data set .* numerical failure .*'smo'"):
        refuse(m, "infeasible", "infeasible", kind, "CLARABEL")
    assert m.solve("clarabel").status == "optimal"


def test_svdd_kkt_rows_name_its_box_as_1_over_nu_n_throughout() -> None:
    """SVDD's report wrote its box '0 <= a_n <= 1/(nu N)' and the slackness of xi_n >= 0 as
    '(C - a_n) xi_n = 0', a C the machine (nu only) does not have; the one-class SVM's row reads
    '(1/(nu N) - a_n) xi_n = 0'."""
    from sparsekernel import datasets
    from sparsekernel.duality import check
    from sparsekernel.formulations import SVDD
    from sparsekernel.kernels import RBF

    X, _ = datasets.ripley_mixture(n=40)
    machine = SVDD(X, RBF(0.45), nu=0.2)
    conditions = [r.condition for r in check(machine, machine.solve("qp-clarabel")).rows]
    assert "(1/(nu N) - a_n) xi_n = 0" in conditions
    assert not any("C - a_n" in c or "<= C" in c for c in conditions)


def test_decision_function_refuses_an_x_of_another_width_naming_x_even_with_no_support_vector() -> None:
    """An epsilon-SVR whose tube holds every target (epsilon 5, targets of 0.01) has no support vector, and
    its decision_function gave b for an X of 7 columns (trained on 3); with support vectors the refusal came
    from the kernel, about 'kernel arguments' and the support vectors' shape. Now X is named, with the width."""
    from sparsekernel.errors import ValidationError
    from sparsekernel.formulations import EpsilonSVR
    from sparsekernel.kernels import RBF

    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    t = 0.01 * rng.normal(size=30)
    empty = EpsilonSVR(X, t, RBF(0.5), C=1.0, epsilon=5.0).solve("smo")
    full = EpsilonSVR(X, np.sin(X[:, 0]), RBF(0.5), C=1.0, epsilon=0.01).solve("smo")
    assert empty.support.size == 0 and full.support.size > 0
    for sol in (empty, full):
        with pytest.raises(ValidationError, match=r"X must be a 2-D array with 3 columns .*got shape \(4, 7\)"):
            sol.decision_function(np.zeros((4, 7)))
        with pytest.raises(ValidationError, match=r"X must be .*got shape \(2, 1\)"):
            sol.predict(np.zeros((2, 1)))
        assert sol.decision_function(X).shape == (30,)


@pytest.mark.parametrize("make, key, value, words", [
    (lambda X, t: SoftMarginSVC(X, t, RBF(1.0), C=1.0), "C", -1.0, "C must be a positive finite number; got -1.0"),
    (lambda X, t: SoftMarginSVC(X, t, RBF(1.0), C=1.0), "C", float("nan"), "C must be a positive finite number; got nan"),
    (lambda X, t: OneClassSVM(X, RBF(1.0), nu=0.5), "nu", 1.5, r"nu must be a number in \(0, 1\]; got 1.5"),
    (lambda X, t: OneClassSVM(X, RBF(1.0), nu=0.5), "1/(nu N)", -2.0,
     r"1/\(nu N\) must be finite and >= 0 \(a nonnegative cvxpy Parameter\); got -2.0"),
])
def test_a_formulations_parameter_refuses_a_value_naming_itself_and_the_value(make, key, value, words) -> None:
    """A negative value of a formulation's Parameter was refused by cvxpy as 'Parameter value must be
    nonnegative.' (a ValueError naming neither the Parameter nor the value), and nu = 1.5 was taken until the solve;
    each is now refused as it is assigned, in the hyperparameter's own domain. A valid value still re-solves."""
    X = np.random.default_rng(0).normal(size=(20, 2))
    t = np.where(X[:, 0] > -0.1, 1.0, -1.0)
    machine = make(X, t)
    formulation = machine.dual()
    before = np.array(formulation.parameters[key].value, copy=True)
    with pytest.raises(ValidationError, match="^" + words + "$"):
        formulation.parameters[key].value = value
    assert np.array_equal(formulation.parameters[key].value, before)      # nothing changed
    if key == "C":
        formulation.parameters["C"].value = 0.01
        answer = formulation.solve("CLARABEL")
        assert machine.C == 0.01 and answer.status == "optimal"
        assert float(np.max(answer.a)) <= 0.01 * (1.0 + 1e-6)
