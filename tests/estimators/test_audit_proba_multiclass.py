"""Audit of SVC and NuSVC as drop-ins for scikit-learn's on probabilities and multiclass outputs: each test
fails on the code before its fix and asserts against scikit-learn (LIBSVM), a certificate or an identity."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn import svm

from sparsekernel import duality
from sparsekernel.errors import ValidationError
from sparsekernel.estimators import SVC, NuSVC


def _sklearn(estimator, X, y):
    """scikit-learn's twin fitted on (X, y), its probability deprecation (1.9) silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return estimator.fit(X, y)


def _few_positives(n: int = 20, positives: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.array([1] * positives + [0] * (n - positives))
    X[y == 1] += 1.5
    return X, y


@pytest.mark.parametrize("multiclass", [False, True])
def test_nusvc_probability_fits_where_nu_is_feasible_but_not_on_a_platt_fold(multiclass) -> None:
    """nu = 0.29 is feasible on 3 positives of 20 (bound 2 min(N+, N-)/N = 0.3), and scikit-learn fits it with
    probability=True; a Platt fold's training part keeps 2 positives of 16 (bound 0.25), and our fit raised
    InfeasibleError naming a bound (0.285714) of no data the user gave. On 60 random small problems at 0.99 of
    the bound, 44 raised so. The model must be the one fitted without probabilities, as scikit-learn's is."""
    X, y = _few_positives()
    if multiclass:                                   # a third class of 3 far from both: pairs (0, 1), (0, 2) as above
        X = np.vstack([X, np.random.default_rng(1).normal(size=(3, 2)) + 8.0])
        y = np.concatenate([y, np.full(3, 2)])
    reference = _sklearn(svm.NuSVC(nu=0.29, probability=True, random_state=0), X, y)
    ours = NuSVC(nu=0.29, probability=True, random_state=0).fit(X, y)
    plain = NuSVC(nu=0.29).fit(X, y)
    np.testing.assert_array_equal(ours.predict(X), reference.predict(X))
    np.testing.assert_allclose(ours.decision_function(X), plain.decision_function(X), rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.decision_function(X), reference.decision_function(X), rtol=0, atol=1e-2)
    P = ours.predict_proba(X)
    assert P.shape == reference.predict_proba(X).shape
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert np.all((P > 0) & (P < 1))


@pytest.mark.parametrize("seed, share", [(10, 0.5), (0, 0.8)])
def test_nusvc_probability_fits_where_a_platt_fold_has_no_margin(seed, share) -> None:
    """Points on a 3 x 3 grid, 25 and 27 of them, nu at a share of its bound: the whole data leave a margin
    (rho 2.8e-3 and 8.6e-3, certified) and scikit-learn fits with probability=True, but a fold's reduced hulls
    meet (rho 0, w = 0), and our fit raised ValidationError("nu must leave the classes a positive margin rho
    ... on these data"), of a fold the user never saw: 36 of 144 such small problems did."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(10, 30))
    X = rng.integers(0, 3, size=(n, 2)).astype(float)
    y = (rng.random(n) < 0.4).astype(int)
    nu = share * 2 * min(y.sum(), n - y.sum()) / n
    reference = _sklearn(svm.NuSVC(nu=nu, probability=True, random_state=0), X, y)
    ours = NuSVC(nu=nu, probability=True, random_state=0).fit(X, y)
    plain = NuSVC(nu=nu).fit(X, y)
    assert plain.kkt_report_.ok
    np.testing.assert_allclose(ours.decision_function(X), plain.decision_function(X), rtol=0, atol=1e-12)
    P = ours.predict_proba(X)
    assert P.shape == reference.predict_proba(X).shape
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert np.all(np.isfinite(ours.probA_)) and np.all(np.isfinite(ours.probB_))


@pytest.mark.parametrize("Estimator", [SVC, NuSVC])
def test_refit_rebuilds_machines_and_solutions(Estimator) -> None:
    """machines_ and solutions_ are built on first use and kept; a refit kept them too, so after fitting iris
    (3 classes, 3 pairs), reading them, and refitting on wine's first two classes (1 pair), machines_ and
    solutions_ still held iris's 3 pairs, which duality.check certified as if they were the model's. They must
    be those of a fresh fit on the same data."""
    from sklearn.datasets import load_iris, load_wine

    X, y = load_iris(return_X_y=True)
    Xw, yw = load_wine(return_X_y=True)
    Xw = (Xw - Xw.mean(axis=0)) / Xw.std(axis=0)
    Xw, yw = Xw[yw < 2], yw[yw < 2]
    refitted = Estimator().fit(X, y)
    assert len(refitted.machines_) == len(refitted.solutions_) == 3
    refitted.fit(Xw, yw)
    fresh = Estimator().fit(Xw, yw)
    assert len(refitted.machines_) == len(refitted.solutions_) == len(fresh.pairs_) == 1
    machine, solution = refitted.machines_[0], refitted.solutions_[0]
    assert machine.N == fresh.machines_[0].N == Xw.shape[0]
    np.testing.assert_array_equal(machine.t, fresh.machines_[0].t)
    np.testing.assert_allclose(solution.a, fresh.solutions_[0].a, rtol=0, atol=1e-12)
    assert duality.check(machine, solution).ok


@pytest.mark.parametrize("Estimator, name, fitted, changed", [(SVC, "C", 1.0, 1e-3), (NuSVC, "nu", 0.5, 0.05)])
def test_machines_after_set_params_are_the_fitted_problem(Estimator, name, fitted, changed) -> None:
    """set_params after a fit takes effect at the next fit (the model predicts as fitted), but machines_, built
    on first use, read the new C (nu): SVC(C=1) fitted on iris, then set_params(C=1e-3), gave machines of
    C = 0.001, whose KKT check of the fitted solutions_ failed. They must be the problems that were solved, as
    those of an estimator that was never changed."""
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    changed_after = Estimator(**{name: fitted}).fit(X, y).set_params(**{name: changed})
    unchanged = Estimator(**{name: fitted}).fit(X, y)
    for machine, reference, solution in zip(changed_after.machines_, unchanged.machines_, changed_after.solutions_):
        assert getattr(machine, name) == getattr(reference, name) == fitted
        assert duality.check(machine, solution).ok


def test_nusvc_infeasible_nu_on_a_pair_names_the_pair() -> None:
    """Labels 'a' x 3, 'b' x 17, 'c' x 20 and nu = 0.29: scikit-learn refuses ('specified nu is infeasible'), as
    one-versus-one must, since the pair ('a', 'c') allows at most 2 * 3 / 23 = 0.26087. Our error said 'nu must
    be at most 2 min(N_+, N_-)/N = 0.26087 for these labels', a bound that these labels (2 * 3 / 40 = 0.15 over
    all of them) do not give: it must name the pair whose bound it is."""
    from sparsekernel.errors import InfeasibleError

    X = np.random.default_rng(0).normal(size=(40, 2))
    y = np.array(["a"] * 3 + ["b"] * 17 + ["c"] * 20)
    with pytest.raises(ValueError, match="infeasible"):
        _sklearn(svm.NuSVC(nu=0.29), X, y)
    with pytest.raises(InfeasibleError, match=r"0\.26087.*'a'.*'c'") as raised:
        NuSVC(nu=0.29).fit(X, y)
    assert "nu" in str(raised.value) and "0.29" in str(raised.value)
    NuSVC(nu=0.26).fit(X, y)                                  # below every pair's bound: fitted


def test_nusvc_zero_margin_on_a_pair_names_the_pair() -> None:
    """Six blobs (make_blobs(240, 2, centers=6, cluster_std=2.5, random_state=6)), nu = 0.3: the pair (4, 5)
    alone has no margin (its fit on its own points is refused too; scikit-learn returns dual coefficients up to
    7.9e3, the notes' divided by a rho of rounding). The refusal said 'the classes' reduced convex hulls touch
    or meet' of 'these data' without saying which two classes of six: it must name the pair."""
    from sklearn.datasets import make_blobs

    X, y = make_blobs(240, 2, centers=6, cluster_std=2.5, random_state=6)
    pair = (y == 4) | (y == 5)
    with pytest.raises(ValidationError, match="positive margin rho"):
        NuSVC(nu=0.3, gamma=1.0 / (2 * X.var())).fit(X[pair], y[pair])
    with pytest.raises(ValidationError, match=r"positive margin rho.*pair of classes 4 .* and 5 "):
        NuSVC(nu=0.3).fit(X, y)


@pytest.mark.parametrize("K", [2, 3])
def test_svc_hard_margin_on_data_not_separable_names_c_and_the_pair(K) -> None:
    """SVC(C=inf) on classes that share a point (no kernel separates them: their convex hulls meet) was refused as
    '... not separable in the feature space of RBF(...) ...; use SoftMarginSVC', naming neither the argument that
    asked for the hard margin (C=inf) nor, with three classes, which pair: it must name both."""
    from sparsekernel.errors import InfeasibleError

    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    y = np.repeat(np.arange(3), 10)
    X[10] = X[0]                                              # class 1 holds a point of class 0
    if K == 2:
        X, y = X[:20], y[:20]
    else:
        X[20:] += 8.0                                         # class 2 apart from both
    with pytest.raises(InfeasibleError, match="C=inf") as raised:
        SVC(C=np.inf).fit(X, y)
    if K == 3:
        assert "pair of classes 0 (10 points) and 1 (10 points)" in str(raised.value)
    SVC(C=1e3).fit(X, y)                                      # a finite C fits them


def test_saved_libsvm_model_holds_the_fitted_sigmoids_not_the_parameters(tmp_path) -> None:
    """save_fitted_model wrote probA/probB when the parameter probability was True now, not when the model was
    fitted with it: SVC() fitted on iris, then set_params(probability=True), gave the lines 'probA ' and 'probB '
    with no number (LIBSVM's format holds one per pair, 3 here), and a model fitted with probabilities lost them
    after set_params(probability=False)."""
    from sklearn.datasets import load_iris

    from sparsekernel.libsvm_model import parse_libsvm_model, save_fitted_model

    X, y = load_iris(return_X_y=True)
    without = SVC().fit(X, y).set_params(probability=True)
    save_fitted_model(tmp_path / "without.model", without)
    lines = (tmp_path / "without.model").read_text().splitlines()
    assert not [line for line in lines if line.split()[0] in ("probA", "probB")]
    with_sigmoids = SVC(probability=True, random_state=0).fit(X, y).set_params(probability=False)
    save_fitted_model(tmp_path / "with.model", with_sigmoids)
    model = parse_libsvm_model(tmp_path / "with.model")
    assert model.probA is not None and model.probA.shape == (3,)
    np.testing.assert_array_equal(model.probA, with_sigmoids.probA_)
    np.testing.assert_array_equal(model.probB, with_sigmoids.probB_)
