"""LIBSVM model files against LIBSVM itself (the official binding, libsvm-official), from_fitted, and
``sparsekernel check``.

The references are LIBSVM's own: the coefficients, support indices and rho of the model object
svm_train returns, and the decision values its svm_predict_values computes; a model written here
is loaded by svm_load_model and predicted by LIBSVM. The data are rounded to 5 decimals, so that
LIBSVM's 8-digit support vectors are the training points exactly.
"""

from __future__ import annotations

from ctypes import c_double
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest
from sklearn import svm as sksvm

from sparsekernel import datasets
from sparsekernel.cli import main
from sparsekernel.duality import check, from_fitted, machine_from_fitted
from sparsekernel.errors import ValidationError
from sparsekernel.formulations import SVDD, EpsilonSVR, HardMarginSVC, NuSVC, NuSVR, OneClassSVM, SoftMarginSVC
from sparsekernel.kernels import RBF, Polynomial
from sparsekernel.libsvm_model import (
    check_libsvm_model, parse_libsvm_model, read_libsvm_model, save_libsvm_model,
)

libsvm = pytest.importorskip("libsvm", reason="the test extra's libsvm-official (LIBSVM's own binding)")
from libsvm.svm import gen_svm_nodearray, libsvm as _lib  # noqa: E402
from libsvm.svmutil import svm_load_model, svm_predict, svm_save_model, svm_train  # noqa: E402

REL = 1e-10


@lru_cache(maxsize=None)
def data(kind: str) -> tuple[np.ndarray, np.ndarray]:
    if kind == "sine":
        X, t = datasets.sinusoid(n=40, seed=2)
        return np.round(X, 5), np.round(t, 5)
    X, t = datasets.ripley_mixture(seed=3)
    X, t = np.round(X[:80], 5), t[:80]
    if kind == "three":                                  # three classes, labels in order of appearance 7, 3, 1
        return X, np.where(X[:, 0] > 0.2, 3.0, np.where(X[:, 1] > 0.5, 7.0, 1.0))
    return X, t


def held_out(kind: str) -> np.ndarray:
    rng = np.random.default_rng(5)
    return np.round(rng.uniform(0, 1, (9, 1)), 4) if kind == "sine" else np.round(rng.normal(0, 0.8, (9, 2)), 4)


def write_data(path: Path, X: np.ndarray, y: np.ndarray) -> Path:
    path.write_text("".join(f"{yi:g} " + " ".join(f"{j + 1}:{v:.8g}" for j, v in enumerate(x)) + "\n"
                            for yi, x in zip(y, X)))
    return path


def decision_values(model, X: np.ndarray) -> np.ndarray:
    """LIBSVM's svm_predict_values, one column per binary problem (its Python wrapper hides them for
    one-class and regression)."""
    k = model.get_nr_class()
    width = max(1, k * (k - 1) // 2) if model.get_svm_type() in (0, 1) else 1
    out = []
    for x in X:
        node, _ = gen_svm_nodearray([float(v) for v in x])
        values = (c_double * width)()
        _lib.svm_predict_values(model, node, values)
        out.append(values[:width])
    return np.array(out)


# svm-train's options, the data, and the hyperparameters the model file does not keep
TRAINED = {
    "c_svc": ("-s 0 -t 2 -g 0.45 -c 2", "ripley", {"C": 2.0}),
    "nu_svc": ("-s 1 -t 2 -g 0.45 -n 0.4", "ripley", {"nu": 0.4}),
    "one_class": ("-s 2 -t 2 -g 0.45 -n 0.3", "ripley", {}),                # nu read off the coefficients
    "epsilon_svr": ("-s 3 -t 2 -g 10 -c 5 -p 0.2", "sine", {"C": 5.0, "epsilon": 0.2}),
    # a cubic kernel on 1-D data (rank 4): no free a_n on one side, so that epsilon must be read with rho
    "nu_svr": ("-s 4 -t 1 -d 3 -g 1 -r 1 -c 0.2 -n 0.6", "sine", {"C": 0.2, "nu": 0.6}),
    "c_svc-3": ("-s 0 -t 0 -c 2", "three", {"C": 2.0}),
}


@lru_cache(maxsize=None)
def trained(name: str, eps: float, folder: str):
    opts, kind, hyper = TRAINED[name]
    X, y = data(kind)
    model = svm_train(list(map(float, y)), [list(map(float, x)) for x in X], f"{opts} -e {eps:g} -q")
    path = Path(folder) / f"{name}-{eps:g}.model"
    svm_save_model(str(path), model)
    return model, path, X, y, hyper


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("models"))


@pytest.mark.parametrize("name", sorted(TRAINED))
def test_a_libsvm_model_reads_to_libsvms_multipliers_intercept_and_decision_values(name, folder) -> None:
    model, path, X, y, hyper = trained(name, 1e-10, folder)
    problems = read_libsvm_model(path, X, y, **hyper, eps=1e-10)
    k = model.get_nr_class()
    assert len(problems) == (k * (k - 1) // 2 if name.startswith(("c_svc", "nu_svc")) else 1)
    reference = decision_values(model, held_out(TRAINED[name][1]))
    sv = np.array(model.get_sv_indices()) - 1                 # LIBSVM's support vectors, in the training set
    coef = np.array(model.get_sv_coef())                      # (total_sv, k - 1)
    for p, pr in enumerate(problems):
        ours = pr.decision_factor * pr.solution.decision_function(held_out(TRAINED[name][1]))
        scale = np.max(np.abs(reference[:, p]))
        assert np.max(np.abs(ours - reference[:, p])) <= REL * scale
        assert -pr.decision_factor * pr.solution.b == pytest.approx(model.rho[p], rel=REL, abs=REL * scale)
        # LIBSVM's coefficients, by training index, are the solution's coef times the factor
        mine = np.zeros(X.shape[0])
        mine[pr.index] = pr.decision_factor * np.asarray(pr.solution.coef)
        if k == 2 or pr.labels is None:
            expected = np.zeros(X.shape[0])
            expected[sv] = coef[:, 0]
            assert np.max(np.abs(mine - expected)) <= REL * np.max(np.abs(expected))
        report = check(pr.machine, pr.solution, pr.tol)
        assert report.ok, str(report)


@pytest.mark.parametrize("name", sorted(TRAINED))
def test_check_passes_at_libsvms_own_tolerance_and_fails_with_rho_perturbed(name, folder, tmp_path) -> None:
    _, path, X, y, hyper = trained(name, 1e-3, folder)           # svm-train's default -e
    reports = check_libsvm_model(path, X, y, **hyper)           # at the tolerance matched to -e 1e-3
    assert all(r.ok for _, r in reports), "\n".join(str(r) for _, r in reports)
    text = path.read_text().splitlines()
    i = next(n for n, line in enumerate(text) if line.startswith("rho "))
    rho = [float(v) for v in text[i].split()[1:]]
    # two margins (LIBSVM's classifiers have margin 1): at -e 1e-3, nu-SVC's tolerance is loose enough
    # (a margin rho small next to the data's spread) that half a margin is still within it
    text[i] = "rho " + " ".join(f"{r + 2.0 * max(1.0, abs(r)):.17g}" for r in rho)
    bad = tmp_path / "perturbed.model"
    bad.write_text("\n".join(text) + "\n")
    reports = check_libsvm_model(bad, X, y, **hyper)
    assert not any(r.ok for _, r in reports), "\n".join(str(r) for _, r in reports)


MACHINES_HERE = {
    "hard": lambda: HardMarginSVC(*datasets.ring(), RBF(0.8)),
    "soft": lambda: SoftMarginSVC(*data("ripley"), Polynomial(degree=3, gamma=0.5, coef0=1.0), C=1.0),
    "nu-svc": lambda: NuSVC(*data("ripley"), RBF(0.45), nu=0.4),
    "eps-svr": lambda: EpsilonSVR(*data("sine"), RBF(10.0), C=2.0, epsilon=0.1),
    "nu-svr": lambda: NuSVR(*data("sine"), RBF(10.0), C=40.0, nu=0.4),
    "one-class": lambda: OneClassSVM(data("ripley")[0], RBF(0.45), nu=0.3),
}


@pytest.mark.parametrize("name", sorted(MACHINES_HERE))
def test_a_model_written_here_loads_in_libsvm_and_predicts_the_same(name, tmp_path) -> None:
    m = MACHINES_HERE[name]()
    sol = m.solve("qp-clarabel")
    path = tmp_path / "ours.model"
    save_libsvm_model(path, m, sol, labels=(5, 2))
    model = svm_load_model(str(path))
    X_new = held_out("sine" if m.task == "regression" else "ripley")
    ours = m.libsvm_decision_factor(sol) * sol.decision_function(X_new)
    theirs = decision_values(model, X_new)[:, 0]
    assert np.max(np.abs(ours - theirs)) <= REL * np.max(np.abs(theirs))
    if m.task == "classification":                            # t = +1 is LIBSVM's first label, 5
        assert list(model.get_labels()) == [5, 2]
    # and it reads back here to the same solution, which passes its certificate
    X, y = (m.X, None) if m.task == "novelty" else (m.X, np.where(m.t > 0, 5.0, 2.0) if m.task == "classification" else m.t)
    hyper = {"C": np.inf} if name == "hard" else {k: v for k, v in m.libsvm_params().items() if k != "class_weight"}
    (pr,) = read_libsvm_model(path, X, y, **hyper)
    assert pr.machine.name == m.name
    expected = np.zeros(m.N)
    expected[sol.support] = np.asarray(sol.coef)[sol.support]       # the expansion that was written
    assert np.max(np.abs(np.asarray(pr.solution.coef) - expected)) <= 1e-9 * np.max(np.abs(expected))
    assert check(pr.machine, pr.solution, 1e-6).ok


def test_svdd_and_foreign_kernels_are_refused_by_the_writer(tmp_path) -> None:
    m = SVDD(data("ripley")[0], RBF(0.45), nu=0.3)
    with pytest.raises(ValidationError, match="machine must be one LIBSVM solves"):
        save_libsvm_model(tmp_path / "x.model", m, m.solve("qp-clarabel"))


def test_a_broken_model_file_is_refused_with_its_line(tmp_path) -> None:
    bad = tmp_path / "bad.model"
    bad.write_text("svm_type c_svc\nkernel_type rbf\ngamma 0.5\nnr_class 2\ntotal_sv 1\nrho 0\nlabel 1 -1\n"
                   "nr_sv 1 0\nSV\n0.5 1:x\n")
    with pytest.raises(ValidationError, match="line 10: an SV line must be 1 coefficients"):
        parse_libsvm_model(bad)
    bad.write_text("svm_type c_svc\nkernel_type rbf\ngamma 0.5\nnr_class 2\ntotal_sv 2\nrho 0\nlabel 1 -1\n"
                   "nr_sv 1 1\nSV\n0.5 1:1\n\n\n-0.5 1:x\n")      # the blank lines are counted too
    with pytest.raises(ValidationError, match="line 13: an SV line must be 1 coefficients"):
        parse_libsvm_model(bad)
    bad.write_text("svm_type c_svc\nkernel_type rbf\n")
    with pytest.raises(ValidationError, match="with an 'SV' line"):
        parse_libsvm_model(bad)


@pytest.mark.parametrize("header, message", [
    ("svm_type c_svc\nkernel_type rbf\ngamma\n", r"line 3 must be a header key and its value; got 'gamma' alone"),
    ("svm_type c_svc\nkernel_type rbf\nnr_class 1\nlabel 1\n", r"nr_class must be an integer >= 2; got 1"),
    ("svm_type\nkernel_type rbf\n", r"line 1 must be a header key .*got 'svm_type' alone"),
    ("svm_type c_svc\nkernel_type rbf\ngamma 0.5 2\n", r"'gamma' must be followed by one value; got \['0.5', '2'\]"),
    ("svm_type c_svc\nkernel_type rbf\nnr_class -3\n", r"nr_class must be an integer >= 2; got -3"),
    ("svm_type c_svc\nkernel_type rbf\nnr_class 2\nlabel 1 -1 2\n", r"'label' must hold nr_class = 2 values"),
])
def test_a_header_key_without_its_value_is_refused_with_its_line(tmp_path, header, message) -> None:
    """A key with no value used to end in an IndexError (a traceback at the command line); each header
    line is checked for the values it must have."""
    bad = tmp_path / "bad.model"
    bad.write_text(header + "rho 0\ntotal_sv 1\nSV\n0.5 1:1\n")
    with pytest.raises(ValidationError, match=message):
        parse_libsvm_model(bad)


@pytest.mark.parametrize("gamma, rho, sv, message", [
    ("0.5", "nan", "0.5 1:1", r"model '.*': 'rho' must be followed by finite numbers; got \['nan'\]"),
    ("inf", "0", "0.5 1:1", r"model '.*': 'gamma' must be followed by finite numbers; got \['inf'\]"),
    ("0.5", "0", "nan 1:1", r"line 10: an SV line's coefficients and values must be finite numbers; got 'nan 1:1'"),
    ("0.5", "0", "0.5 1:1 2:-inf", r"line 10: an SV line's coefficients and values must be finite numbers"),
])
def test_a_model_file_with_nan_or_inf_is_refused_with_its_line(tmp_path, gamma, rho, sv, message) -> None:
    """float() reads 'nan' and 'inf', which svm_save_model never writes: a coefficient of nan was refused
    only later, as 'a must be finite (NaN or inf at index 26)', a training point's index that names
    neither the model file nor its line, and a gamma of inf as 'gamma must be a positive finite number'."""
    bad = tmp_path / "bad.model"
    bad.write_text(f"svm_type c_svc\nkernel_type rbf\ngamma {gamma}\nnr_class 2\ntotal_sv 1\nlabel 1 -1\n"
                   f"nr_sv 1 0\nrho {rho}\nSV\n{sv}\n")
    with pytest.raises(ValidationError, match=message):
        parse_libsvm_model(bad)


@pytest.mark.parametrize("line", ["nr_class 99999999999999999999", "label 99999999999999999999 1",
                                  "nr_sv 99999999999999999999 1"])
def test_a_header_integer_beyond_a_c_int_is_refused_by_name(tmp_path, capsys, line) -> None:
    """svm_load_model reads nr_class, label and nr_sv with %d. An integer past int64 made an object array,
    and np.isfinite's TypeError reached the command line as 'not foreseen by the command's checks' (exit 3)."""
    header = {"nr_class": "nr_class 2", "label": "label 1 -1", "nr_sv": "nr_sv 1 0"}
    header[line.split()[0]] = line
    bad = tmp_path / "bad.model"
    bad.write_text("svm_type c_svc\nkernel_type rbf\ngamma 0.5\n" + "\n".join(header.values())
                   + "\ntotal_sv 1\nrho 0\nSV\n0.5 1:1\n")
    key = line.split()[0]
    with pytest.raises(ValidationError, match=rf"'{key}' must be followed by integers in \[-2147483648, "
                                              rf"2147483647\].*got \[.99999999999999999999"):
        parse_libsvm_model(bad)
    data_file = tmp_path / "d.svm"
    data_file.write_text("1 1:1\n-1 1:0\n")
    assert main(["check", "--model", str(bad), "--data", str(data_file)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "must be followed by integers" in err[0]


@pytest.mark.parametrize("features, shown", [("2:0.5 1:1", "0.5 2:0.5 1:1"), ("1:1 1:0.5", "0.5 1:1 1:0.5")])
def test_an_sv_line_whose_indices_do_not_increase_is_refused_with_its_line(tmp_path, features, shown) -> None:
    """LIBSVM's kernels merge two rows assuming increasing indices: on iris (svm-train -c 2), one SV line's
    features reversed made LIBSVM's decision values 0.0105 off ours, and check passed the file. A
    repeated index was summed into another point, refused as 'matches no training point'."""
    bad = tmp_path / "bad.model"
    bad.write_text("svm_type c_svc\nkernel_type rbf\ngamma 0.5\nnr_class 2\ntotal_sv 2\nrho 0\nlabel 1 -1\n"
                   f"nr_sv 1 1\nSV\n0.5 {features}\n-0.5 1:2 2:1\n")
    with pytest.raises(ValidationError, match=rf"line 10: an SV line's feature indices must increase.*got '{shown}'"):
        parse_libsvm_model(bad)


@pytest.mark.parametrize("key, value, domain", [
    ("svm_type", "c_svx", "c_svc, nu_svc, one_class, epsilon_svr or nu_svr"),
    ("kernel_type", "precomputed", r"linear, polynomial, rbf or sigmoid \(precomputed is not read\)"),
])
def test_an_unknown_svm_or_kernel_type_names_the_model_file(tmp_path, key, value, domain) -> None:
    """Every other header error named the file; these two said 'svm_type must be ...; got 'c_svx'' alone."""
    header = {"svm_type": "c_svc", "kernel_type": "rbf", key: value}
    bad = tmp_path / "typo.model"
    bad.write_text(f"svm_type {header['svm_type']}\nkernel_type {header['kernel_type']}\ngamma 0.5\nnr_class 2\n"
                   "total_sv 1\nrho 0\nlabel 1 -1\nnr_sv 1 0\nSV\n0.5 1:1\n")
    with pytest.raises(ValidationError, match=rf"^model '.*typo.model': {key} must be {domain}; got '{value}'$"):
        parse_libsvm_model(bad)


def test_a_model_file_that_is_not_text_is_refused(tmp_path) -> None:
    bad = tmp_path / "binary.model"
    bad.write_bytes(b"svm_type c_svc\n\xff\xfe\x00kernel_type rbf\n")
    with pytest.raises(ValidationError, match=r"byte b'\\xff' at offset 15 is not text"):
        parse_libsvm_model(bad)


def test_a_model_on_other_data_is_refused(folder) -> None:
    _, path, X, y, hyper = trained("c_svc", 1e-3, folder)
    with pytest.raises(ValidationError, match="must be the model's training set"):
        read_libsvm_model(path, X + 0.5, y, **hyper)


# -- from_fitted -------------------------------------------------------------------------------------

FITTED = {
    "SVC": (lambda: sksvm.SVC(C=1.0, gamma=0.45, tol=1e-8), "ripley"),
    "NuSVC": (lambda: sksvm.NuSVC(nu=0.4, gamma="scale", tol=1e-8), "ripley"),
    "SVR": (lambda: sksvm.SVR(C=5.0, epsilon=0.2, gamma=10.0, tol=1e-8), "sine"),
    "NuSVR": (lambda: sksvm.NuSVR(C=0.5, nu=0.7, kernel="poly", degree=2, gamma=1.0, coef0=1.0, tol=1e-8), "sine"),
    "OneClassSVM": (lambda: sksvm.OneClassSVM(nu=0.3, gamma=0.45, tol=1e-8), "ripley"),
}


class StandIn:
    """Another library's SVM: scikit-learn's attributes and nothing else (no get_params, no _gamma)."""

    ATTRS = ("support_", "dual_coef_", "intercept_", "classes_", "support_vectors_", "kernel", "degree", "coef0",
             "C", "nu", "epsilon")

    def __init__(self, est) -> None:
        for k in self.ATTRS:
            if hasattr(est, k):
                setattr(self, k, getattr(est, k))
        self.gamma = float(est._gamma)


@pytest.mark.parametrize("kind", sorted(FITTED))
@pytest.mark.parametrize("stand_in", [False, True])
def test_from_fitted_certifies_sklearns_svms_and_a_stand_in(kind, stand_in) -> None:
    make, which = FITTED[kind]
    X, t = data(which)
    y = None if kind == "OneClassSVM" else (np.where(t > 0, 9, 4) if which == "ripley" else t)   # any two labels
    est = make().fit(X) if y is None else make().fit(X, y)
    fitted = StandIn(est) if stand_in else est
    sol = from_fitted(fitted, X, y, kind=kind if stand_in else None)
    m = machine_from_fitted(fitted, X, y, kind=kind if stand_in else None)
    assert check(m, sol, 1e-6).ok
    reference = est.decision_function(X) if hasattr(est, "decision_function") and m.task != "regression" else est.predict(X)
    ours = m.libsvm_decision_factor(sol) * sol.decision_function(X)
    assert np.max(np.abs(ours - reference)) <= 1e-9 * np.max(np.abs(reference))


def test_from_fitted_names_what_is_missing() -> None:
    class Bare:
        kernel = "rbf"
        gamma = 1.0
    X, t = data("ripley")
    with pytest.raises(ValidationError, match=r"without \['support_', 'dual_coef_', 'intercept_'\]"):
        from_fitted(Bare(), X, t, kind="SVC")
    with pytest.raises(ValidationError, match="name must be one of scikit-learn's SVMs"):
        from_fitted(Bare(), X, t)


# -- the command -----------------------------------------------------------------------------------

def test_check_command_on_a_model_file(folder, tmp_path, capsys) -> None:
    _, path, X, y, _ = trained("c_svc-3", 1e-3, folder)
    data_file = write_data(tmp_path / "three.svm", X, y)
    assert main(["check", "--model", str(path), "--data", str(data_file), "--C", "2"]) == 0
    out = capsys.readouterr().out
    assert out.count("result: PASS") == 3 and "check: PASS (3 of 3 problems pass)" in out
    assert "labels 7 (t = +1) vs 3 (t = -1)" in out
    # svm-train's default C = 1 is not the C it was trained with: the model fails, and the note says why
    assert main(["check", "--model", str(path), "--data", str(data_file)]) == 1
    out = capsys.readouterr().out
    assert "C = 1 (svm-train's default" in out and "check: FAIL" in out and "fails: " in out


def test_check_command_on_bad_input_exits_2_with_one_line(tmp_path, capsys) -> None:
    data_file = write_data(tmp_path / "d.svm", *data("ripley"))
    assert main(["check", "--model", str(tmp_path / "none.model"), "--data", str(data_file)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "model must be an existing LIBSVM model file" in err[0]
    np.save(tmp_path / "a.npy", np.zeros(3))
    assert main(["check", "--multipliers", str(tmp_path / "a.npy"), "soft", "--data", str(data_file)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--multipliers (a) must be an array of shape (80,)" in err[0]
    assert main(["check", "--multipliers", str(tmp_path / "a.npy"), "--data", str(data_file)]) == 2
    assert "MACHINE must be given with --multipliers" in capsys.readouterr().err


def test_check_refuses_the_options_its_source_does_not_read(folder, tmp_path, capsys) -> None:
    """With --model the file gives the kernel and the scalars, with --multipliers there is no svm-train -e:
    such options were ignored without a word (a --nu 5 out of its domain too); the data file's format is
    told by the rule of every command (a CSV named .txt is CSV)."""
    _, path, X, y, _ = trained("c_svc-3", 1e-3, folder)
    data_file = write_data(tmp_path / "three.svm", X, y)
    for extra, words in ((["--kernel", "linear"], "--kernel applies to --multipliers"),
                         (["--b", "3"], "--b applies to --multipliers"),
                         (["--nu", "5"], "nu must be a number in (0, 1]; got 5.0"),
                         # a hyperparameter the model's svm_type does not have (it passed, ignored)
                         (["--nu", "0.7"], "nu must not be given for a c_svc model (its hyperparameters: C)"),
                         (["--epsilon", "5"], "epsilon must not be given for a c_svc model")):
        assert main(["check", "--model", str(path), "--data", str(data_file), "--C", "2", *extra]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and words in err[0]
    two = write_data(tmp_path / "two.svm", *data("ripley"))
    np.save(tmp_path / "a.npy", np.zeros(80))
    assert main(["check", "--multipliers", str(tmp_path / "a.npy"), "soft", "--data", str(two), "--eps", "5"]) == 2
    assert "--eps applies to --model" in capsys.readouterr().err
    assert main(["check", "--multipliers", str(tmp_path / "a.npy"), "soft", "--data", str(two),
                 "--solver-tol", "0.5"]) == 2
    assert "--solver-tol applies to kkt and compare" in capsys.readouterr().err
    np.save(tmp_path / "c.npy", np.zeros(80) + 1j)                  # its imaginary part used to be dropped
    assert main(["check", "--multipliers", str(tmp_path / "c.npy"), "soft", "--data", str(two)]) == 2
    assert "--multipliers (a) must be an array of 80 finite real numbers; got an array of shape (80,) and dtype complex128" in capsys.readouterr().err
    as_text = tmp_path / "three.txt"
    np.savetxt(as_text, np.column_stack([X.toarray() if hasattr(X, "toarray") else X, y]), delimiter=",")
    assert main(["check", "--model", str(path), "--data", str(as_text), "--C", "2"]) == 0


def test_check_command_grades_multipliers(tmp_path, capsys) -> None:
    X, t = data("ripley")
    data_file = write_data(tmp_path / "d.svm", X, t)
    m = SoftMarginSVC(X, t, RBF(0.45), C=1.0)
    sol = m.solve("qp-clarabel")
    args = ["soft", "--data", str(data_file), "--kernel", "rbf", "--gamma", "0.45", "--C", "1", "--tol", "1e-6"]
    np.save(tmp_path / "a.npy", np.asarray(sol.a))
    assert main(["check", "--multipliers", str(tmp_path / "a.npy"), "--b", repr(sol.b)] + args) == 0
    assert "check: PASS" in capsys.readouterr().out
    wrong = np.array(sol.a)
    wrong[int(np.argmax(wrong))] = 1.3
    np.savetxt(tmp_path / "a.txt", wrong)
    assert main(["check", "--multipliers", str(tmp_path / "a.txt")] + args) == 1
    out = capsys.readouterr().out
    assert "fails: (7.33) 0 <= a_n <= C: violated by 3.0e-01" in out


def test_libsvms_nu_svr_with_no_free_multiplier_on_one_side_certifies() -> None:
    # LIBSVM keeps rho but not r (epsilon = -r): where one class of Solver_NU has no free variable,
    # r must be read given rho (Machine.r_given_rho), else b and epsilon come from two different
    # points of the KKT interval and (7.67) fails on an optimal answer
    X, t = data("sine")
    m = NuSVR(X, t, Polynomial(degree=2, gamma=1.0, coef0=1.0), C=0.5 * X.shape[0], nu=0.7)
    sol = m.solve("libsvm")                                   # certified, or SolverError
    reference = m.solve("qp-clarabel")
    assert sol.status == "optimal"
    assert abs(sol.b - reference.b) > 1e-4                   # another point of the interval than Clarabel's
    assert sol.dual_objective == pytest.approx(reference.dual_objective, rel=1e-8)
    # the class with free multipliers pins its r_class: b + epsilon = -r1 (the a's) or b - epsilon = r2
    pinned = [abs((sol.b + sign * sol.epsilon) - (reference.b + sign * reference.epsilon)) for sign in (1, -1)]
    assert min(pinned) <= 1e-6 < max(pinned)


def test_check_command_takes_a_hat_and_libsvms_convention(tmp_path, capsys) -> None:
    X, t = data("sine")
    data_file = write_data(tmp_path / "sine.svm", X, t)
    m = EpsilonSVR(X, t, RBF(10.0), C=2.0, epsilon=0.1)
    sol = m.solve("qp-clarabel")
    np.save(tmp_path / "a.npy", np.asarray(sol.a))
    np.save(tmp_path / "a_hat.npy", np.asarray(sol.a_hat))
    args = ["eps-svr", "--data", str(data_file), "--kernel", "rbf", "--gamma", "10", "--C", "2", "--epsilon", "0.1"]
    assert main(["check", "--multipliers", str(tmp_path / "a.npy"), "--a-hat", str(tmp_path / "a_hat.npy")] + args) == 0
    assert "check: PASS" in capsys.readouterr().out
    # LIBSVM's convention: one coefficient alpha_n - alpha*_n per point and its rho
    np.save(tmp_path / "coef.npy", np.asarray(sol.a) - np.asarray(sol.a_hat))
    assert main(["check", "--multipliers", str(tmp_path / "coef.npy"), "--convention", "libsvm",
                 "--rho", repr(-sol.b)] + args) == 0
    assert "check: PASS" in capsys.readouterr().out


@pytest.mark.parametrize("classes", [2, 3, 4])
@pytest.mark.parametrize("name, kernel", [("SVC", "rbf"), ("NuSVC", "rbf"), ("SVC", "poly"), ("SVC", "linear")])
def test_a_fitted_classifier_of_any_number_of_classes_loads_in_libsvm_and_predicts_the_same(
        name: str, kernel: str, classes: int, tmp_path) -> None:
    """save_fitted_model writes the one-versus-one model as svm_save_model does: LIBSVM's
    svm_predict_values gives our decision_function ("ovo") pair by pair, and LIBSVM's labels."""
    from sparsekernel import estimators
    from sparsekernel.libsvm_model import save_fitted_model

    X, _ = data("ripley")
    y = np.digitize(X[:, 0] + 0.3 * X[:, 1], np.quantile(X[:, 0] + 0.3 * X[:, 1], np.linspace(0, 1, classes + 1)[1:-1]))
    y = 2 * y + 3                                                     # labels 3, 5, 7, 9
    params = {"nu": 0.3} if name == "NuSVC" else {"C": 2.0}
    est = getattr(estimators, name)(kernel=kernel, gamma=0.45, degree=2, coef0=1.0, tol=1e-6,
                                    decision_function_shape="ovo", **params).fit(X, y)
    path = tmp_path / "fitted.model"
    save_fitted_model(path, est)
    model = svm_load_model(str(path))
    assert list(model.get_labels()) == list(est.classes_)
    X_new = held_out("ripley")
    ours = est.decision_function(X_new).reshape(len(X_new), -1)
    theirs = decision_values(model, X_new)
    if classes == 2:                                                  # scikit-learn's sign: + for classes_[1]
        theirs = -theirs
    assert np.max(np.abs(ours - theirs)) <= REL * np.max(np.abs(theirs))
    assert parse_libsvm_model(path).nr_class == classes


def test_the_fitted_writer_refuses_what_libsvm_cannot_hold(tmp_path) -> None:
    from sparsekernel import estimators
    from sparsekernel.libsvm_model import save_fitted_model

    X, t = data("ripley")
    with pytest.raises(ValidationError, match="estimator must be a fitted"):
        save_fitted_model(tmp_path / "x.model", estimators.SVR().fit(X, X[:, 0]))
    with pytest.raises(ValidationError, match="integer labels"):
        save_fitted_model(tmp_path / "x.model", estimators.SVC().fit(X, np.where(t > 0, "yes", "no")))
    with pytest.raises(ValidationError, match=r"integer labels in \[-2147483648, 2147483647\]"):
        save_fitted_model(tmp_path / "x.model", estimators.SVC().fit(X, np.where(t > 0, 2**40, -2**40)))


@pytest.mark.parametrize("classes", [2, 3])
@pytest.mark.parametrize("name", ["SVC", "NuSVC"])
def test_a_fitted_probability_model_gives_libsvm_our_sigmoids(name: str, classes: int, tmp_path) -> None:
    """With probability=True the file holds probA and probB, LIBSVM's per pair, so that svm-predict -b 1
    works. On a linear kernel (far points have decision values of hundreds) LIBSVM's probabilities are
    our pairs' sigmoids, clipped to [1e-7, 1 - 1e-7] (LIBSVM's min_prob), and coupled: for two classes
    predict_proba itself, far points included; with more, our coupling (the exact minimiser) before the
    projection onto the decision order, to LIBSVM's iterative coupling's tolerance (it stops at 0.005 / K)."""
    from sparsekernel import estimators
    from sparsekernel.estimators.probability import MIN_PROBABILITY, couple
    from sparsekernel.libsvm_model import save_fitted_model

    X, _ = data("ripley")
    y = np.digitize(X[:, 0], np.quantile(X[:, 0], np.linspace(0, 1, classes + 1)[1:-1])) * 2 - 1
    params = {"nu": 0.3} if name == "NuSVC" else {"C": 2.0}
    est = getattr(estimators, name)(kernel="linear", probability=True, random_state=0, **params).fit(X, y)
    path = tmp_path / "probability.model"
    save_fitted_model(path, est)
    model = svm_load_model(str(path))
    X_new = np.vstack([held_out("ripley"), [[-400.0, -400.0], [400.0, 400.0]]])   # far: |f| of hundreds
    _, _, prob = svm_predict([0] * len(X_new), X_new.tolist(), model, "-b 1 -q")
    theirs = np.array(prob)[:, [list(model.get_labels()).index(c) for c in est.classes_]]
    decisions = est._pair_decisions(X_new)
    R = np.full((len(X_new), classes, classes), 0.5)
    for k, (i, j) in enumerate(est.pairs_):
        r = np.clip(est._sigmoids[k](decisions[:, k]), MIN_PROBABILITY, 1 - MIN_PROBABILITY)
        R[:, i, j], R[:, j, i] = r, 1 - r
    if classes == 2:
        np.testing.assert_allclose(est.predict_proba(X_new), theirs, rtol=1e-9, atol=1e-15)
        assert theirs.min() == pytest.approx(MIN_PROBABILITY, rel=1e-6)      # a far point, clipped by both
        np.testing.assert_allclose(R[:, 1, 0], theirs[:, 1], rtol=1e-9)
    else:
        np.testing.assert_allclose(couple(R), theirs, atol=0.005)


def test_a_classifier_file_without_its_classes_or_its_kernels_values_is_refused(tmp_path) -> None:
    """A c_svc file without nr_sv was read with every coefficient dropped (none could be assigned to a
    class): decision values -rho everywhere, and `check` blamed the model. Without label: a TypeError.
    Without gamma: a default of 0, refused as a bad gamma. A misspelt key (coef_0) was ignored, so coef0
    took its default and the decision values changed; LIBSVM refuses such a file."""
    X, t = data("ripley")
    model = svm_train(list(t), X.tolist(), "-s 0 -t 1 -d 2 -g 0.45 -r 1 -c 2 -q")
    path = tmp_path / "c_svc.model"
    svm_save_model(str(path), model)
    text = path.read_text()
    for key in ("nr_sv", "label", "gamma", "coef0", "degree"):
        damaged = tmp_path / f"no_{key}.model"
        damaged.write_text("".join(line + "\n" for line in text.splitlines() if not line.startswith(key + " ")))
        with pytest.raises(ValidationError, match=f"must have a '{key}' line in its header; got none"):
            read_libsvm_model(damaged, X, t, C=2.0)
    damaged.write_text(text.replace("coef0", "coef_0"))
    with pytest.raises(ValidationError, match=r"line 5 must start with a header key \(svm_type, .*got 'coef_0'"):
        parse_libsvm_model(damaged)


def test_a_regressions_identical_inputs_of_other_targets_are_matched_by_their_residuals(tmp_path) -> None:
    """Two training points with one x and targets 3.14 and 5.14: LIBSVM's support vector is the second
    (the target above the tube), and its file cannot say which; matched by features alone the first was
    taken, and LIBSVM's own optimal model failed its KKT check by 1.06. At an optimum a point's
    coefficient is non-decreasing in its target among points of one x (7.65)-(7.66)."""
    X = np.array([3.18, 3.18, 0.2, 0.08, 4.07, 4.56, 3.03, 3.65, 3.18])[:, None]
    t = np.array([3.14, 5.14, 0.17, 0.08, 3.95, 4.55, 2.97, 3.61, 1.0])
    for options, hyper in (("-s 3 -t 0 -c 0.5 -p 0.1", {"C": 0.5, "epsilon": 0.1}),
                           ("-s 4 -t 2 -g 0.3 -c 2 -n 0.4", {"C": 2.0, "nu": 0.4})):
        model = svm_train(list(t), X.tolist(), options + " -e 1e-8 -q")
        path = tmp_path / f"svm_type_{options[3]}.model"
        svm_save_model(str(path), model)
        (problem, report), = check_libsvm_model(path, X, t, eps=1e-8, **hyper)
        assert sorted(problem.solution.support.tolist()) == sorted(i - 1 for i in model.get_sv_indices())
        assert report.ok, report


def test_the_writer_refuses_labels_libsvm_cannot_hold(tmp_path) -> None:
    """labels (1.5, 2.5) were written as 'label 1 2' and (1.2, 1.7) as 'label 1 1'; strings raised a bare
    ValueError."""
    X, t = data("ripley")
    machine = SoftMarginSVC(X, t, RBF(0.45), C=2.0)
    solution = machine.solve("smo")
    for labels in [(1.5, 2.5), (1.2, 1.7), ("a", "b"), (1, 1), (2**40, 1), (True, False), (1,), 3]:
        with pytest.raises(ValidationError, match=r"^labels must be two different integers in \[-2147483648"):
            save_libsvm_model(tmp_path / "x.model", machine, solution, labels=labels)
    save_libsvm_model(tmp_path / "x.model", machine, solution, labels=(7.0, np.int64(-2)))
    assert "label 7 -2\n" in (tmp_path / "x.model").read_text()


def test_non_integer_labels_are_named_as_svm_train_reads_them(tmp_path) -> None:
    X, t = data("ripley")
    y = np.where(t > 0, 1.5, -2.5)
    model = svm_train(list(y), X.tolist(), "-s 0 -t 2 -g 0.45 -q")
    path = tmp_path / "halves.model"
    svm_save_model(str(path), model)
    with pytest.raises(ValidationError, match=r"svm-train reads a label 1.5 as 1\); got 1.5"):
        read_libsvm_model(path, X, y)
    (problem, report), = check_libsvm_model(path, X, np.trunc(y))      # as svm-train read them: certified
    assert problem.labels == (1.0, -2.0) and report.ok


def test_labels_that_are_not_finite_are_refused_by_name(tmp_path) -> None:
    """A nan label raised a bare ValueError from int(trunc(nan)) while naming svm-train's truncation."""
    X, t = data("ripley")
    model = svm_train(list(t), X.tolist(), "-s 0 -t 2 -g 0.45 -q")
    path = tmp_path / "ripley.model"
    svm_save_model(str(path), model)
    for bad in (np.nan, np.inf):
        y = t.copy()
        y[3] = bad
        with pytest.raises(ValidationError, match=rf"^y must be finite labels or targets.*got {bad}"):
            read_libsvm_model(path, X, y)


def test_a_support_vector_whose_copies_are_missing_says_so(tmp_path) -> None:
    """Two identical support vectors and one copy in the data: the message said the second 'matches no
    training point', which it does; it names the copies. A regression's message named '(label None)'."""
    X = np.array([[0.0], [0.0], [0.5], [2.0], [3.0]])
    t = np.array([1.0, 1.0, -1.0, 1.0, -1.0])
    model = svm_train(list(t), X.tolist(), "-s 0 -t 2 -g 1 -c 0.1 -q")
    assert model.get_sv_indices()[:2] == [1, 2]            # both copies of x = 0 are support vectors
    path = tmp_path / "twins.model"
    svm_save_model(str(path), model)
    with pytest.raises(ValidationError, match=r"support vector 2 \(label 1\) has no training point left: the "
                                              r"data hold 1 of its 2 copies"):
        read_libsvm_model(path, X[1:], t[1:])
    y = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    model = svm_train(list(y), X.tolist(), "-s 3 -t 0 -c 1 -p 0.1 -q")
    svm_save_model(str(path), model)
    with pytest.raises(ValidationError, match=r"support vector \d+ matches no training point to \d+ digits$"):
        read_libsvm_model(path, X + 7.0, y, C=1.0, epsilon=0.1)


def test_check_command_on_an_empty_or_truncated_multiplier_file_exits_2_with_one_line(tmp_path, capsys) -> None:
    """An empty .npy (EOFError) was 'not foreseen' (exit 3), an empty text file added loadtxt's UserWarning as
    a second line of stderr: each is now one line naming --multipliers, exit status 2."""
    data_file = write_data(tmp_path / "d.svm", *data("ripley"))
    (tmp_path / "empty.npy").write_bytes(b"")
    np.save(tmp_path / "full.npy", np.zeros(80))
    (tmp_path / "cut.npy").write_bytes((tmp_path / "full.npy").read_bytes()[:100])
    (tmp_path / "empty.txt").write_text("")
    for name in ("empty.npy", "cut.npy", "empty.txt"):
        assert main(["check", "--multipliers", str(tmp_path / name), "soft", "--data", str(data_file)]) == 2, name
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "--multipliers must be a .npy or text file of numbers" in err[0], (name, err)


def test_a_model_file_with_a_byte_order_mark_reads_and_a_repeated_header_key_is_refused(folder, tmp_path) -> None:
    """A model saved again by a Windows editor starts with a UTF-8 byte-order mark: it was refused, its first key
    read as '\\ufeffsvm_type'; it reads as the file without it. A header key written twice (svm_save_model writes
    each once) was read silently, the last value winning (gamma 0.5, then 5): refused, naming the line."""
    _, path, X, y, hyper = trained("c_svc", 1e-10, folder)
    text = Path(path).read_text()
    marked = tmp_path / "marked.model"
    marked.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    import dataclasses

    read, plain = parse_libsvm_model(marked), parse_libsvm_model(path)
    for field in dataclasses.fields(plain):
        a, b = getattr(read, field.name), getattr(plain, field.name)
        if hasattr(b, "toarray"):                                 # the support vectors, CSR
            a, b = a.toarray(), b.toarray()
        assert (np.array_equal(a, b) if isinstance(b, np.ndarray) else a == b), field.name
    lines = text.splitlines(keepends=True)
    gamma = next(k for k, line in enumerate(lines) if line.startswith("gamma "))
    twice = tmp_path / "twice.model"
    twice.write_text("".join(lines[:gamma + 1] + ["gamma 5\n"] + lines[gamma + 1:]))
    with pytest.raises(ValidationError, match=rf"line {gamma + 2} repeats the header key 'gamma'"):
        parse_libsvm_model(twice)
