"""The command line, end to end."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest

from sparsekernel.cli import main
from sparsekernel.tour import RVM_METHODS, TOUR_METHODS

MACHINES = ["HardMarginSVC", "SoftMarginSVC", "NuSVC", "EpsilonSVR", "NuSVR", "OneClassSVM", "SVDD"]


def test_tour_json_covers_every_machine_and_method_with_small_gaps(capsys) -> None:
    assert main(["tour", "--json", "--n-ripley", "80"]) == 0
    payload = json.loads(capsys.readouterr().out)
    rows = [r for r in payload["rows"] if r["machine"] in MACHINES]
    no_libsvm = {("HardMarginSVC", "libsvm"), ("SVDD", "libsvm")}  # LIBSVM has no such machine
    assert {(r["machine"], r["method"]) for r in rows} == {(m, k) for m in MACHINES for k in TOUR_METHODS} - no_libsvm
    for r in rows:
        # each method's report passes at its matched tolerance (1e-6, or 1e-5 for OSQP and the SMO)
        assert r["kkt_ok"] and abs(r["relative_gap"]) <= 1e-5 and r["max_kkt_violation"] <= 1e-5, r
        assert 0 < r["n_support"] <= r["n_train"]
    # every method finds the same optimum for a machine
    for machine in MACHINES:
        values = [r["objective"] for r in rows if r["machine"] == machine]
        assert max(values) - min(values) <= 1e-5 * max(1.0, max(abs(v) for v in values))
    # the RVM beside them, by its three algorithms, and sparser than the SVMs on the same data
    rvm = [r for r in payload["rows"] if r["machine"] in ("RVR", "RVC")]
    expected = {(m, k) for m in ("RVR", "RVC") for k in RVM_METHODS}
    assert {(r["machine"], r["method"]) for r in rvm} == expected
    assert all(r["gap"] is None and r["kkt_ok"] is None for r in rvm)
    # the two comparisons of sparsity, the notes' sinusoid (10 points) and the Ripley mixture (80)
    assert [(s["data"], s["n_train"]) for s in payload["sparsity"]] == [("sinusoid (10)", 10), ("ripley (80)", 80)]
    for s in payload["sparsity"]:
        assert s["relevance_vectors"] < s["support_vectors"] <= s["n_train"]
    # numba's loading (or compiling) is timed apart, before the first row
    assert payload["compile_seconds"] >= 0


def test_tour_json_is_standard_json_where_a_value_is_not_finite() -> None:
    """A row's value that is not a finite number is null: nan was, but inf was written as the token Infinity,
    which JSON does not have (strict parsers, JavaScript's JSON.parse, refuse it)."""
    from sparsekernel.tour import Tour, TourRow, rows_to_json

    row = TourRow(machine="soft", data="d", method="smo", objective=1.5, gap=float("inf"),
                  relative_gap=float("nan"), n_support=3, n_train=10, seconds=0.01, status="optimal",
                  max_kkt_violation=float("-inf"), kkt_ok=True)

    def refuse(token):
        raise ValueError(f"not JSON: {token}")

    payload = json.loads(rows_to_json(Tour(rows=[row])), parse_constant=refuse)
    assert payload["rows"][0]["gap"] is None and payload["rows"][0]["relative_gap"] is None
    assert payload["rows"][0]["max_kkt_violation"] is None and payload["rows"][0]["objective"] == 1.5


def test_tour_table_is_readable(capsys) -> None:
    assert main(["tour", "--quiet", "--n-ripley", "60", "--methods", "clarabel,qp-osqp"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:4] == ["machine", "data", "method", "objective"]
    assert sum(line.startswith(tuple(MACHINES)) for line in out) == len(MACHINES)
    assert sum(line.startswith(("RVR", "RVC")) for line in out) == 2
    assert any(line.startswith("numba: ") and "in no row's time" in line for line in out)
    assert out[-3] == "Sparsity: support vectors against relevance vectors on the same data"
    assert out[-2].split()[0] == "sinusoid" and out[-1].split()[0] == "ripley"


def test_the_console_script_runs() -> None:
    done = subprocess.run([sys.executable, "-m", "sparsekernel.cli", "--version"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.startswith("sparsekernel ")
    done = subprocess.run([sys.executable, "-m", "sparsekernel.cli", "tour", "--methods", "nope"],
                          capture_output=True, text=True)
    assert done.returncode == 2
    assert "ValidationError: method must be 'smo', 'libsvm'" in done.stderr and "got 'nope'" in done.stderr
    assert "Traceback" not in done.stderr


def test_unknown_command_is_an_error() -> None:
    with pytest.raises(SystemExit):
        main(["frobnicate"])


@pytest.fixture()
def data_files(tmp_path):
    import numpy as np
    from sklearn.datasets import dump_svmlight_file

    from sparsekernel import datasets

    X, t = datasets.ripley_mixture(n=80)
    libsvm_path = tmp_path / "ripley.libsvm"
    dump_svmlight_file(X, (t + 1) / 2, str(libsvm_path))  # labels 0/1: the command maps them to -1/+1
    Xs, ts = datasets.sinusoid(n=25)
    csv_path = tmp_path / "sine.csv"
    np.savetxt(csv_path, np.column_stack([Xs, ts]), delimiter=",", header="x,t", comments="")
    return libsvm_path, csv_path


@pytest.mark.parametrize("method", ["clarabel", "primal-clarabel", "qp-osqp", "libsvm"])
def test_kkt_command_on_a_libsvm_file(data_files, capsys, method: str) -> None:
    libsvm_path, _ = data_files
    code = main(["kkt", "soft", "--data", str(libsvm_path), "--gamma", "0.45", "--C", "2", "--method", method])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "note: labels 0 -> -1 and 1 -> +1" in out
    assert "KKT check: SoftMarginSVC (N = 80, RBF(gamma=0.45), C = 2.0" in out
    for tag in ("(7.23)", "(7.24)", "(7.25)", "(7.26), (7.31)", "(7.27)", "(7.28)", "(7.29)", "(7.30)"):
        assert f"\n  {tag} " in out
    assert "result: PASS" in out and "points by case (Result 7.6)" in out


def test_kkt_command_json_on_a_csv_file(data_files, capsys) -> None:
    _, csv_path = data_files
    code = main(["kkt", "nu-svr", "--data", str(csv_path), "--gamma", "10", "--C", "5", "--nu", "0.6",
                 "--method", "libsvm", "--json"])
    payload = json.loads(capsys.readouterr().out)
    assert code == 0
    # LIBSVM at its default tol 1e-3 (LIBSVM's units), the report at the matched 2e-3 (twice its relative tol)
    assert payload["ok"] is True and payload["tol"] == pytest.approx(2e-3) and payload["method"] == "libsvm"
    assert {r["tag"] for r in payload["rows"]} >= {"(7.71)", "(7.72)", "(7.73)", "(7.74)", "(7.65)", "(7.68)"}
    assert sum(payload["categories"].values()) == 25
    assert payload["categories"]["outside the tube"] <= 0.6 * 25


def test_kkt_command_exit_status_and_errors(data_files, capsys) -> None:
    libsvm_path, csv_path = data_files
    assert main(["kkt", "hard", "--data", str(libsvm_path), "--kernel", "linear"]) == 2
    assert "InfeasibleError: the data are not separable" in capsys.readouterr().err
    assert main(["kkt", "soft", "--data", str(csv_path)]) == 2  # regression targets are not two classes
    assert "two class labels" in capsys.readouterr().err
    assert main(["kkt", "soft", "--data", str(libsvm_path), "--C", "-1"]) == 2
    assert "C must be a positive finite number; got -1.0" in capsys.readouterr().err
    assert main(["kkt", "one-class", "--data", str(libsvm_path), "--method", "osqp", "--tol", "1e-30"]) == 1
    assert "result: FAIL" in capsys.readouterr().out


def test_compare_command(data_files, capsys) -> None:
    libsvm_path, _ = data_files
    code = main(["compare", "nu-svc", "--data", str(libsvm_path), "--gamma", "0.45", "--nu", "0.6",
                 "--methods", "clarabel,osqp,qp-clarabel,libsvm"])
    out = capsys.readouterr().out
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "note: labels 0 -> -1 and 1 -> +1"
    # nu-SVC: LIBSVM's multipliers are N times the notes', so its 1e-3 is 1e-3 / 80 here, matched at twice that
    assert lines[1] == "note: libsvm at tol 0.001 (LIBSVM's units); table at the loosest matched tolerance 2.5e-05"
    assert lines[2].startswith("NuSVC: differences against clarabel")
    body = [line for line in lines if line.split() and line.split()[0] in ("clarabel", "osqp", "qp-clarabel", "libsvm")]
    assert len(body) == 4
    code = main(["compare", "nu-svc", "--data", str(libsvm_path), "--gamma", "0.45", "--nu", "0.6",
                 "--methods", "clarabel,libsvm", "--solver-tol", "1e-8", "--json"])
    summary = json.loads(capsys.readouterr().out)
    assert [r["method"] for r in summary["rows"]] == ["clarabel", "libsvm"]
    assert all(r["kkt_ok"] for r in summary["rows"])
    assert summary["rows"][1]["support_differences"] == 0
    assert summary["rows"][1]["max_delta_decision"] < 1e-5


#: Run the command line in a fresh interpreter; "nompl" first hides matplotlib (as where it is not installed).
RUN = ("import sys\nif sys.argv[1] == 'nompl': sys.modules['matplotlib'] = None\n"
       "from sparsekernel.cli import main\nsys.exit(main(sys.argv[2:]))")


def _bad_files(tmp_path) -> dict[str, str]:
    binary = b"\x00\x01\x02\xff\xfe"
    for name in ("bin.csv", "bin.svm", "bin.txt"):
        (tmp_path / name).write_bytes(binary)
    (tmp_path / "empty.svm").write_bytes(b"")
    (tmp_path / "ok.csv").write_text("1,2,1\n2,3,-1\n3,1,1\n0,0,-1\n")
    (tmp_path / "nan.csv").write_text("1,2,1\nnan,3,-1\n3,1,1\n0,0,-1\n")
    (tmp_path / "nan_target.csv").write_text("1,2,1\n2,3,nan\n3,1,1\n0,0,-1\n")
    (tmp_path / "nan_label.svm").write_text("1 1:1 2:2\nnan 1:2 2:3\n1 1:3 2:1\n-1\n")
    (tmp_path / "continuous.csv").write_text("1,2,0.5\n2,3,-1.25\n3,1,1\n0,0,-1\n")
    (tmp_path / "huge_target.csv").write_text("1,2,1e200\n2,3,-2e200\n3,1,3e200\n0,0,-1e200\n")
    (tmp_path / "large.csv").write_text("".join(f"{100 * i},{-50 * i},{(-1) ** i}\n" for i in range(1, 13)))
    (tmp_path / "key.model").write_text("svm_type c_svc\nkernel_type rbf\ngamma\nnr_class 2\nrho 0\nSV\n")
    (tmp_path / "one_class.csv").write_text("1,1\n2,1\n3,1\n")
    (tmp_path / "poly.csv").write_text("x1,x2,y\n0,0,-1\n1,1,1\n0,1,-1\n1,0,1\n2,2,1\n-1,-1,-1\n")
    (tmp_path / "huge_x.csv").write_text("1e308,1e308,1\n-1e308,1e308,-1\n1,2,1\n")
    (tmp_path / "blocked").mkdir()
    (tmp_path / "blocked" / "fig7_1.svg").symlink_to(os.devnull)             # a device where a figure goes
    names = {"binary": "bin.csv", "binary_svm": "bin.svm", "binary_txt": "bin.txt", "empty_svm": "empty.svm",
             "csv": "ok.csv", "missing": "none.csv", "folder": "figures", "nan": "nan.csv",
             "nan_target": "nan_target.csv", "nan_label": "nan_label.svm", "continuous": "continuous.csv", "huge_target": "huge_target.csv", "large": "large.csv",
             "model": "key.model", "one_class": "one_class.csv", "huge_x": "huge_x.csv",
             "blocked": "blocked", "under_file": "ok.csv/figures", "poly": "poly.csv"}
    return {k: str(tmp_path / v) for k, v in names.items()}


def test_a_solver_that_fails_is_a_row_of_the_tour_not_its_end(capsys, monkeypatch) -> None:
    """OSQP's duals of nu-SVC, the one-class SVM and SVDD fail their certificates on 1,000 points of the
    mixture (a SolverError each), which ended the tour with no table; here one such failure, raised for
    OSQP on NuSVC: the row says so, the other rows and the RVM's are there, and the exit status is 1."""
    import sparsekernel.tour as tour_module
    from sparsekernel.errors import SolverError

    solve_by = tour_module.solve_by

    def failing(machine, method):
        if method == "osqp" and type(machine).__name__ == "NuSVC":
            raise SolverError("OSQP reported 'optimal' on the dual of NuSVC, but its answer fails", "optimal")
        return solve_by(machine, method)

    monkeypatch.setattr(tour_module, "solve_by", failing)
    assert main(["tour", "--json", "--n-ripley", "60", "--methods", "clarabel,osqp"]) == 1
    payload = json.loads(capsys.readouterr().out)
    failed = [r for r in payload["rows"] if r["status"].startswith("failed")]
    assert [(r["machine"], r["method"], r["status"], r["kkt_ok"]) for r in failed] == \
        [("NuSVC", "osqp", "failed (optimal)", False)]
    assert failed[0]["objective"] is None and failed[0]["n_support"] == 0
    assert payload["failures"] == ["NuSVC, osqp: OSQP reported 'optimal' on the dual of NuSVC, but its answer fails"]
    assert payload["certified"] is False
    assert len(payload["rows"]) == 2 * len(MACHINES) + 2 * len(RVM_METHODS)
    assert main(["tour", "--quiet", "--n-ripley", "60", "--methods", "osqp"]) == 1
    out = capsys.readouterr().out
    assert "Failed (the row's objective is nan and its support 0):\n  NuSVC, osqp: OSQP reported" in out


def test_figures_where_the_folder_cannot_be_made_name_out(tmp_path, capsys, monkeypatch) -> None:
    """What the checks cannot foresee (``--out /proc/x``: mkdir fails) is an error naming --out, status 2."""
    import sparsekernel.figures

    def refused(out, names):
        raise FileNotFoundError(2, "No such file or directory", str(out))

    monkeypatch.setattr(sparsekernel.figures, "write_figures", refused)
    assert main(["figures", "--out", str(tmp_path / "x"), "--only", "fig7_1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--out must be a folder where the figures' files can be written" in err[0]
    assert "(No such file or directory: " in err[0]


@pytest.mark.parametrize("args, words", [
    (["kkt", "soft", "--data", "{binary}"], "not text"),
    (["kkt", "soft", "--data", "{empty_svm}"], "must hold at least one data row; got none"),
    (["kkt", "soft", "--data", "{csv}", "--gamma", "abc"], "argument --gamma: must be 'scale' or a positive"),
    (["kkt", "soft", "--data", "{csv}", "--gamma", "-1"], "got '-1'"),
    (["demo", "--port", "99999", "--no-browser"], "argument --port: must be an integer in [0, 65535]"),
    (["figures", "--out", "{csv}"], "--out must be a folder"),
    (["nompl", "figures", "--out", "{folder}"], "figures need matplotlib"),
    (["kkt", "soft", "--data", "{missing}"], "--data must be an existing data file"),
    (["kkt", "soft", "--data", "{csv}", "--method", "smoo"], "method must be 'smo'"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
], ids=["binary-file", "empty-svm", "gamma-text", "gamma-negative", "port", "figures-out-file",
        "figures-no-matplotlib", "missing-file", "method", "command"])
def test_every_bad_argument_is_one_line_with_exit_status_2(tmp_path, args, words) -> None:
    """Issues 15 and 19's command-line reproducers in a fresh interpreter: a named error on one line,
    status 2, no traceback, nor a numpy warning before it."""
    files = _bad_files(tmp_path)
    argv = [a.format(**files) for a in args]
    argv = argv if argv[0] == "nompl" else ["-", *argv]
    done = subprocess.run([sys.executable, "-c", RUN, *argv], capture_output=True, text=True, timeout=120)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert words in lines[0] and "Traceback" not in done.stderr


@pytest.mark.parametrize("args, words", [
    (["kkt", "soft", "--data", "{binary_svm}"], "not text"),
    (["rvm", "regression", "--data", "{binary_txt}"], "not text"),
    (["rvm", "regression", "--data", "{empty_svm}"], "must hold at least one data row; got none"),
    (["compare", "soft", "--data", "{csv}", "--solver-tol", "abc"], "argument --solver-tol: must be a positive"),
    (["kkt", "soft", "--data", "{csv}", "--tol", "-1"], "argument --tol: must be a positive"),
    (["tour", "--figures", "{csv}"], "--figures must be a folder"),
    (["nompl", "tour", "--figures", "{folder}"], "figures need matplotlib"),
    (["tour", "--methods", "nope"], "method must be 'smo'"),
    # rvm's words were the estimator's: 'Input y contains NaN' (no file, no row), 'X must ...' (no file)
    (["rvm", "regression", "--data", "{nan}"], "X (the features in"),
    (["rvm", "regression", "--data", "{nan_target}"], "the targets (the last column of"),
    (["rvm", "classification", "--data", "{nan_target}"], "must be finite; got nan at data row 2"),
    # a LIBSVM file's targets are the first field of each line, not its "last column"
    (["kkt", "soft", "--data", "{nan_label}"], "the targets (the first field of each line of"),
    (["rvm", "regression", "--data", "{nan_label}"], "the first field of each line of"),
    (["rvm", "classification", "--data", "{continuous}"], "y must hold class labels"),
    (["rvm", "regression", "--data", "{huge_target}"], "y must be targets whose standard deviation"),
    (["kkt", "soft", "--data", "{nan}"], "X (the features in"),
    (["kkt", "soft", "--data", "{nan_target}"], "must be finite; got nan at data row 2"),
    (["kkt", "soft", "--data", "{large}", "--kernel", "poly", "--degree", "1000", "--method", "libsvm"],
     "LIBSVM (scikit-learn's SVC) gave no answer"),
    (["tour", "--n-ripley", "2"], "--n-ripley must be an integer in [4, 1000]"),
    (["tour", "--n-ripley", "99999999999999999999"], "--n-ripley must be an integer in [4, 1000]"),
    (["figures", "--out", ""], "--out must name a folder"),
    (["compare", "soft", "--data", "{csv}", "--methods", "smo,SMO"], "names smo twice"),
    # an empty name was dropped without a word (exit 0), where tour --methods and figures --only refuse it
    (["compare", "soft", "--data", "{csv}", "--methods", "smo,,libsvm"], "--methods must be a comma-separated list"),
    (["compare", "soft", "--data", "{csv}", "--methods", "smo,libsvm,"], "none empty; got 'smo,libsvm,'"),
    (["kkt", "eps-svr", "--data", "{csv}", "--class-weight", "balanced"], "--class-weight applies to"),
    # an option the machine or the kernel does not read was ignored without a word (exit 0)
    (["kkt", "svdd", "--data", "{csv}", "--C", "3"], "--C applies to the machines that have it (eps-svr, nu-svr, soft)"),
    (["kkt", "hard", "--data", "{csv}", "--C", "5"], "--C applies to"),
    (["kkt", "soft", "--data", "{csv}", "--nu", "0.2"], "--nu applies to"),
    (["compare", "one-class", "--data", "{csv}", "--epsilon", "0.3"], "--epsilon applies to the machines that have it (eps-svr)"),
    (["kkt", "soft", "--data", "{csv}", "--kernel", "linear", "--gamma", "7"], "--gamma applies to the poly, rbf, sigmoid"),
    (["rvm", "regression", "--data", "{csv}", "--coef0", "nan"], "--coef0 applies to the poly, sigmoid kernels"),
    (["rvm", "regression", "--data", "{csv}", "--degree", "-3"], "--degree applies to the poly kernel; got --degree -3"),
    (["check", "--model", "{model}", "--data", "{csv}"], "got 'gamma' alone"),
    # found by fuzzing the command line: an OverflowError of Python's float in the polynomial's features,
    # a 30 GiB dense X, numpy's warnings before the error, a numpy repr, misleading words about --out
    (["kkt", "soft", "--data", "{poly}", "--kernel", "poly", "--gamma", "1e200"],
     "gives inf or NaN on its explicit features"),
    (["compare", "soft", "--data", "{poly}", "--kernel", "poly", "--coef0", "1e200", "--degree", "2"],
     "gives inf or NaN on its explicit features"),
    (["rvm", "classification", "--data", "{csv}", "--kernel", "poly", "--coef0", "1e308"],
     "gives inf or NaN on k(x, y)"),
    (["rvm", "classification", "--data", "{one_class}"], "y must hold at least two classes; got one class, 1.0"),
    (["rvm", "regression", "--data", "{huge_x}"], "X must have a finite, non-negligible variance"),
    (["figures", "--out", "{under_file}", "--only", "fig7_1"], "--out must be a folder (created if missing); got"),
    (["figures", "--out", "{blocked}", "--only", "fig7_1"], "fig7_1.svg is not a regular file (a folder, a device"),
    (["demo", "--port", "\u0663", "--no-browser"], "argument --port: must be an integer in [0, 65535]"),
], ids=["binary-svm", "binary-txt", "empty-svm-rvm", "solver-tol", "tol", "tour-figures-out-file",
        "tour-figures-no-matplotlib", "tour-method", "rvm-nan", "rvm-nan-target", "rvc-nan-target",
        "kkt-nan-libsvm-label", "rvm-nan-libsvm-label", "rvm-continuous-labels",
        "rvm-huge-targets", "kkt-nan", "kkt-nan-target", "libsvm-overflow", "n-ripley-small", "n-ripley-huge",
        "figures-out-empty", "compare-twice", "compare-empty-name", "compare-trailing-comma", "class-weight-regression", "C-svdd", "C-hard", "nu-soft",
        "epsilon-one-class", "gamma-linear", "coef0-rbf", "degree-rbf", "model-key-without-value",
        "poly-gamma-overflow", "poly-coef0-overflow", "rvm-poly-overflow", "rvm-one-class",
        "rvm-variance-overflow", "figures-out-under-file", "figures-out-device", "port-arabic-digit"])
def test_more_bad_arguments_in_process(tmp_path, capsys, monkeypatch, args, words) -> None:
    """The same, in this interpreter (an uncaught exception fails the test); the tour's errors come before
    any of its work (nothing on stdout)."""
    files = _bad_files(tmp_path)
    argv = [a.format(**files) for a in args]
    if argv[0] == "nompl":                                 # as where matplotlib is not installed
        monkeypatch.setitem(sys.modules, "matplotlib", None)
        argv = argv[1:]
    try:
        code = main(argv)
    except SystemExit as exc:                              # argparse's errors
        code = exc.code
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and words in lines[0], captured.err
    assert captured.out == ""


def test_a_closed_stdout_is_one_line_with_exit_status_2(data_files) -> None:
    """``sparsekernel kkt ... | head -0``: the reader has gone before the answer is written."""
    _, csv_path = data_files
    proc = subprocess.Popen([sys.executable, "-c", RUN, "-", "rvm", "regression", "--data", str(csv_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc.stdout.close()                                    # closed before the interpreter has even started
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 2
    assert err.strip().splitlines() == ["sparsekernel rvm: BrokenPipeError: standard output was closed before "
                                        "the answer was written"]


def test_kkt_method_auto_chooses_by_size(data_files, capsys, monkeypatch) -> None:
    import sparsekernel.cli
    import sparsekernel.methods

    libsvm_path, _ = data_files
    assert main(["kkt", "soft", "--data", str(libsvm_path), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["method"] == "clarabel" and payload["tol"] == 1e-6
    assert "method auto: clarabel (N = 80 <= 1000)" in payload["notes"]
    for module in (sparsekernel.cli, sparsekernel.methods):       # as if the 80 points were many
        monkeypatch.setattr(module, "AUTO_DUAL_MAX_N", 50)
    assert main(["kkt", "soft", "--data", str(libsvm_path)]) == 0
    out = capsys.readouterr().out
    assert "note: method auto: smo (N = 80 > 50)" in out
    assert "note: smo at tol 0.001 (LIBSVM's units); report at the matched tolerance 2.0e-03" in out
    assert "result: PASS" in out
    # the user's --tol replaces the matched one, and --solver-tol the SMO's
    assert main(["kkt", "soft", "--data", str(libsvm_path), "--method", "smo", "--solver-tol", "1e-6",
                 "--tol", "1e-4", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["tol"] == 1e-4 and payload["ok"]
    assert "smo at tol 1e-06 (LIBSVM's units); report at --tol 1.0e-04" in payload["notes"]


def test_compare_auto_methods(data_files, capsys) -> None:
    libsvm_path, _ = data_files
    assert main(["compare", "soft", "--data", str(libsvm_path), "--gamma", "0.45", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert [r["method"] for r in summary["rows"]] == ["clarabel", "osqp", "qp-clarabel", "smo", "libsvm"]
    assert summary["tol"] == pytest.approx(2e-3) and all(r["kkt_ok"] for r in summary["rows"])


def test_auto_solves_a_kernel_that_is_not_positive_semidefinite_by_the_smo(tmp_path, capsys) -> None:
    """A sigmoid kernel's dual is not convex: the cvxpy forms and the direct QP refuse it, so ``auto`` (kkt's
    --method, compare's --methods) chose a method that ended the command with status 2; the SMO and LIBSVM find a
    KKT point of it, and auto now picks them, saying why."""
    import numpy as np

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    t = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1, -1)
    path = tmp_path / "sigmoid.csv"
    np.savetxt(path, np.column_stack([X, t]), delimiter=",")
    common = ["--data", str(path), "--kernel", "sigmoid", "--gamma", "2", "--json"]
    assert main(["kkt", "soft", *common]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["method"] == "smo"
    assert any(n.startswith("method auto: smo (the Gram matrix is not positive semidefinite") for n in payload["notes"])
    assert main(["compare", "soft", *common]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert [r["method"] for r in summary["rows"]] == ["smo", "libsvm"]
    # the smallest eigenvalue the note quotes is the Gram matrix's, computed here on its own
    K = np.tanh(2.0 * X @ X.T)
    assert np.linalg.eigvalsh(K)[0] < -1.0


def test_a_method_that_fails_in_compare_is_status_1_and_the_others_are_compared(data_files, capsys,
                                                                                  monkeypatch) -> None:
    """OSQP's dual of nu-SVC fails its certificate on 1,000 points of the mixture (a SolverError): compare
    ended there with status 2, the README's status of a bad argument, file or environment, and no table.
    Here, raised for OSQP: one line on stderr names it, the other methods are compared, and the status is
    1, as for kkt's failing report; so is a table whose rows fail a --tol the solves were not run to."""
    import sparsekernel.cli as cli
    from sparsekernel.duality import check
    from sparsekernel.errors import SolverError

    libsvm_path, _ = data_files
    solve_by = cli.solve_by

    def failing(machine, method, **options):
        if method == "osqp":                    # an answer, and its failing certificate
            report = check(machine, solve_by(machine, "clarabel"), 1e-30)
            raise SolverError("OSQP reported 'optimal' on the dual of NuSVC, but its answer fails", "optimal",
                              report=report)
        return solve_by(machine, method, **options)

    monkeypatch.setattr(cli, "solve_by", failing)
    args = ["compare", "nu-svc", "--data", str(libsvm_path), "--gamma", "0.45", "--methods", "clarabel,osqp,smo"]
    assert main(args + ["--json"]) == 1
    captured = capsys.readouterr()
    assert [r["method"] for r in json.loads(captured.out)["rows"]] == ["clarabel", "smo"]
    assert captured.err.splitlines() == ["sparsekernel compare: SolverError: osqp: OSQP reported 'optimal' on the "
                                         "dual of NuSVC, but its answer fails"]
    monkeypatch.setattr(cli, "solve_by", solve_by)
    assert main(["compare", "soft", "--data", str(libsvm_path), "--methods", "clarabel,smo", "--tol", "1e-14"]) == 1
    assert "note: above the table's tolerance: " in capsys.readouterr().out


def test_rvm_on_a_libsvm_file_keeps_it_sparse(tmp_path, capsys) -> None:
    """One feature index of 1e9: densified, X was 30 GiB (a MemoryError, exit status 3); sparse, the fit is
    the one of the same points with that feature moved to column 3 of a CSV file."""
    rows = [(1, 0.0, 1.0), (-1, 2.0, 0.0), (1, 3.0, 0.5), (-1, 0.0, 0.0), (1, 1.0, 2.0), (-1, 2.5, 0.0)]
    (tmp_path / "wide.svm").write_text("".join(f"{y} 1:{a} 1000000000:{b}\n" for y, a, b in rows))
    (tmp_path / "narrow.csv").write_text("".join(f"{a},0,{b},{y}\n" for y, a, b in rows))
    fits = []
    for name in ("wide.svm", "narrow.csv"):
        assert main(["rvm", "classification", "--data", str(tmp_path / name), "--gamma", "0.5", "--json"]) in (0, 1)
        fits.append(json.loads(capsys.readouterr().out))
    wide, narrow = fits
    assert wide["D"] == 1_000_000_000 and narrow["D"] == 3
    assert wide["relevance_vectors"] == narrow["relevance_vectors"]
    assert wide["log_evidence"] == pytest.approx(narrow["log_evidence"], rel=1e-9)
    assert wide["training_error"] == narrow["training_error"]


def test_rvm_command(data_files, capsys) -> None:
    libsvm_path, csv_path = data_files
    assert main(["rvm", "regression", "--data", str(csv_path), "--gamma", "10"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("RVR (regression) on ") and "N = 25, D = 1, RBF(gamma=10.0), method fast" in out[0]
    assert out[1].startswith("relevance vectors: ") and " of 25 (rows from 0: " in out[1]
    assert out[2].startswith("noise: sigma = 1/sqrt(beta) = ")
    assert out[3].startswith("log evidence (7.85): ") and "(converged)" in out[3]
    assert any(line.startswith("RVM evidence certificate") for line in out) and "result: PASS" in out[-1]
    assert main(["rvm", "classification", "--data", str(libsvm_path), "--gamma", "0.45", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["estimator"] == "RVC" and s["classes"] == [0.0, 1.0] and s["evidence"] == "(7.114)"
    assert 0 < s["n_relevance"] == len(s["relevance_vectors"]) < 80 and s["report"]["ok"] is True
    assert 0 <= s["training_error"] < 0.35


class _Terminal(io.StringIO):
    """A stderr that says it is a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("quiet", [False, True])
def test_progress_goes_to_a_terminal_stderr_unless_quiet(data_files, capsys, monkeypatch, quiet: bool) -> None:
    _, csv_path = data_files
    err = _Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    assert main(["rvm", "regression", "--data", str(csv_path)] + (["--quiet"] if quiet else [])) == 0
    assert capsys.readouterr().out.startswith("RVR (regression) on ")      # stdout holds only the answer
    shown = err.getvalue()
    if quiet:
        assert shown == ""
    else:
        assert f"reading {csv_path}: " in shown and "fitting RVR by fast (N = 25): " in shown


def test_an_upper_case_method_runs_at_the_solver_tol_given(data_files, capsys) -> None:
    """``--method SMO`` is the SMO (``solve`` reads names in any case): --solver-tol applies, and the note
    says so (it used to run at the default and claim --solver-tol did not apply)."""
    _, csv_path = data_files
    # 0.2: at 0.5 the matched tolerance is 1.0 here, a verdict that certifies nothing (refused, cli.MAX_REPORT_TOL)
    main(["kkt", "eps-svr", "--data", str(csv_path), "--method", "SMO", "--solver-tol", "0.2", "--quiet"])
    out = capsys.readouterr().out
    assert "note: smo at tol 0.2 (LIBSVM's units)" in out


def test_figures_refuse_a_blocked_output_before_writing_anything(tmp_path, capsys) -> None:
    """An existing fig7_1.png is left as it was where fig7_1.svg cannot be written (a folder there): the
    outputs are checked before any is drawn."""
    out = tmp_path / "out"
    (out / "fig7_1.svg").mkdir(parents=True)
    (out / "fig7_1.png").write_bytes(b"OLD")
    assert main(["figures", "--out", str(out), "--only", "fig7_1", "--quiet"]) == 2
    assert "fig7_1.svg is not a regular file (a folder" in capsys.readouterr().err
    assert (out / "fig7_1.png").read_bytes() == b"OLD"


def test_an_error_no_check_foresaw_is_one_line_with_exit_status_3(data_files, capsys, monkeypatch) -> None:
    import sparsekernel.cli as cli

    def broken(*args, **kwargs):
        raise RuntimeError("something nobody checked")

    monkeypatch.setattr(cli, "machine_from_args", broken)
    _, csv_path = data_files
    assert main(["kkt", "eps-svr", "--data", str(csv_path), "--quiet"]) == 3
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "RuntimeError: something nobody checked" in lines[0] and "SPARSEKERNEL_DEBUG" in lines[0]
    monkeypatch.setenv("SPARSEKERNEL_DEBUG", "1")
    with pytest.raises(RuntimeError, match="something nobody checked"):
        main(["kkt", "eps-svr", "--data", str(csv_path), "--quiet"])


def test_python_dash_m_sparsekernel_is_the_command_line() -> None:
    """``python -m sparsekernel`` failed ("No module named sparsekernel.__main__"); it is the script's
    command line: its help, and a bad option as one line naming it with exit status 2, no traceback."""
    ok = subprocess.run([sys.executable, "-m", "sparsekernel", "--help"], capture_output=True, text=True)
    assert ok.returncode == 0 and "tour" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "sparsekernel", "tour", "--methods", "nope"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "got 'nope'" in bad.stderr


def _unreadable(monkeypatch, path) -> None:
    """``path`` as chmod 000 makes it for a user who is not root: opening it raises PermissionError (the
    tests may run as root, who reads any file)."""
    import builtins
    import pathlib

    real_open, real_read_text = builtins.open, pathlib.Path.read_text

    def refuse(file, *args, **kwargs):
        if os.fspath(file) == str(path):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(file, *args, **kwargs)

    def refuse_text(self, *args, **kwargs):
        if str(self) == str(path):
            raise PermissionError(13, "Permission denied", str(path))
        return real_read_text(self, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", refuse)
    monkeypatch.setattr(pathlib.Path, "read_text", refuse_text)


@pytest.mark.parametrize("args, words", [
    (["kkt", "soft", "--data", "{csv}"], "--data must be a readable data file; got "),
    (["rvm", "regression", "--data", "{csv}"], "--data must be a readable data file; got "),
    (["check", "--model", "{model}", "--data", "{other}"], "model must be a readable LIBSVM model file; got "),
])
def test_an_unreadable_file_is_named_as_unreadable(tmp_path, capsys, monkeypatch, args, words) -> None:
    """Found by running the command on a chmod 000 file as a user who is not root: --data was called a file
    that 'does not decompress' ('compressed as its name says (.csv)'), and --model was a bare
    PermissionError that named neither the option nor what it expects."""
    files = _bad_files(tmp_path)
    (tmp_path / "other.csv").write_text("1,2,1\n2,3,-1\n3,1,1\n0,0,-1\n")
    files["other"] = str(tmp_path / "other.csv")
    argv = [a.format(**files) for a in args]
    _unreadable(monkeypatch, files["model" if "--model" in args else "csv"])
    code = main(argv)
    lines = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(lines) == 1, lines
    assert words in lines[0] and "Permission denied" in lines[0] and "decompress" not in lines[0], lines[0]


@pytest.mark.parametrize("args, words", [
    (["tour", "--methods", "smo,smo", "--n-ripley", "4"], "--methods must name each method once; got 'smo,smo'"),
    (["tour", "--methods", "smo,", "--n-ripley", "4"], "--methods must be a comma-separated list of methods"),
    (["figures", "--out", "{folder}", "--only", "fig7_1,fig7_1"], "--only must name each figure once"),
])
def test_a_list_option_naming_one_item_twice_is_refused(tmp_path, capsys, args, words) -> None:
    """Found by probing the list options: ``tour --methods smo,smo`` solved every machine twice and printed
    each row twice (compare refuses it), ``figures --only fig7_1,fig7_1`` drew and listed the figure twice,
    and ``tour --methods smo,`` was refused as "method must be ...; got ''", naming no option."""
    argv = [a.format(folder=str(tmp_path / "figs")) for a in args]
    code = main(argv)
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and words in lines[0], captured.err
    assert captured.out == "" and not (tmp_path / "figs").exists()


def test_a_libsvm_file_with_a_byte_order_mark_is_read(tmp_path, capsys) -> None:
    """Found by probing data files saved by Windows editors: a CSV file's UTF-8 byte order mark is read past,
    a LIBSVM file's was refused as "could not convert string to float: b'\\xef\\xbb\\xbf-1'"."""
    rows = "".join(f"{(-1) ** i} 1:{i % 5} 2:{(3 * i) % 7}\n" for i in range(12))
    (tmp_path / "plain.libsvm").write_text(rows)
    (tmp_path / "bom.libsvm").write_text(rows, encoding="utf-8-sig")
    outs = []
    for name in ("plain.libsvm", "bom.libsvm"):
        assert main(["kkt", "soft", "--data", str(tmp_path / name), "--json", "--quiet"]) == 0
        outs.append(json.loads(capsys.readouterr().out))
    assert outs[0]["title"] == outs[1]["title"] and outs[0]["categories"] == outs[1]["categories"]
    assert (tmp_path / "bom.libsvm").read_bytes().startswith(b"\xef\xbb\xbf")    # the file is left as it was


@pytest.mark.parametrize("args, words", [
    (["nu-svr", "--tube-epsilon", "nan"], "--tube-epsilon (epsilon) must be a finite real number"),
    (["eps-svr"], "--a-hat (a_hat) must be the 4 multipliers of (7.54) for EpsilonSVR; got None"),
    (["soft", "--b", "inf"], "--b (b) must be a finite real number"),
    (["svdd", "--R2", "nan"], "--R2 (R2) must be a finite real number"),
])
def test_check_multipliers_errors_name_the_option(tmp_path, capsys, args, words) -> None:
    """Found by probing ``check --multipliers``: the errors of the multipliers and scalars named the library's
    parameters, 'epsilon must be a finite real number' for --tube-epsilon (where --epsilon is another option)
    and 'a_hat must be the 4 multipliers ...' where --a-hat was missing."""
    import numpy as np

    files = _bad_files(tmp_path)
    np.save(tmp_path / "a.npy", np.zeros(4))
    code = main(["check", "--multipliers", str(tmp_path / "a.npy"), args[0], "--data", files["csv"], *args[1:]])
    lines = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and words in lines[0], lines


@pytest.mark.parametrize("machine, huge", [("soft", 1e308), ("soft", 1e200), ("eps-svr", 1e200), ("svdd", 1e200),
                                           ("model", 1e300)])
def test_check_of_huge_multipliers_is_the_report_without_numpy_warnings(tmp_path, capsys, machine, huge) -> None:
    """Found by probing ``check`` with huge values: multipliers of 1e200 (or a model file's coefficients of
    1e300) fail their report, as they should, but numpy's RuntimeWarnings of the overflow ('overflow
    encountered in matmul', 'invalid value encountered in subtract', ...) came first, up to 16 lines on
    stderr naming nothing; the report already shows the overflow (inf, nan, 'not evaluated', FAIL)."""
    import numpy as np

    from sparsekernel.estimators import SVC
    from sparsekernel.libsvm_model import save_fitted_model

    X = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0], [2.0, 2.0], [-1.0, -1.0]])
    y = np.array([-1.0, 1.0, -1.0, 1.0, 1.0, -1.0])
    data = tmp_path / "d.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",")
    np.save(tmp_path / "a.npy", np.full(6, huge))
    if machine == "model":
        save_fitted_model(tmp_path / "m.model", SVC(kernel="linear").fit(X, y))
        text = (tmp_path / "m.model").read_text().split("SV\n")
        rows = [f"{huge:g} {' '.join(r.split()[1:])}" for r in text[1].splitlines()]
        (tmp_path / "m.model").write_text(text[0] + "SV\n" + "\n".join(rows) + "\n")
        argv = ["check", "--model", str(tmp_path / "m.model"), "--data", str(data)]
    else:
        argv = ["check", "--multipliers", str(tmp_path / "a.npy"), machine, "--data", str(data)]
        argv += ["--a-hat", str(tmp_path / "a.npy")] if machine == "eps-svr" else []
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert captured.err == "" and "check: FAIL" in captured.out


def test_compare_refuses_a_misspelled_method_before_solving_any(data_files, capsys, monkeypatch) -> None:
    """Found by probing compare on 2,000 points: ``--methods smo,clarabel,clarabl`` solved by the SMO and the
    cvxpy dual (10 s; 35 s at the help's estimate) before refusing 'clarabl', the answers thrown away; the
    tour checks its names before any work, and now compare does too."""
    import sparsekernel.cli

    _, csv_path = data_files
    solved, solve = [], sparsekernel.cli._solve

    def recording(machine, method, tol):
        solved.append(method)
        return solve(machine, method, tol)

    monkeypatch.setattr(sparsekernel.cli, "_solve", recording)
    assert main(["compare", "eps-svr", "--data", str(csv_path), "--methods", "smo,clarabel,clarabl"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "method must be 'smo'" in err[0] and "got 'clarabl'" in err[0], err
    assert solved == []


def test_figures_interrupted_while_writing_leave_no_partial_file(tmp_path, capsys, monkeypatch) -> None:
    """Found by sending SIGINT to ``sparsekernel figures``: the four files of a figure were written one by
    one in place, so a Ctrl-C (or an error) while writing its SVG left its PNG without the SVG, and one
    inside savefig a truncated file. Here the SVG's savefig is interrupted: no file of that figure is left."""
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    savefig = Figure.savefig

    def interrupted(self, fname, *args, **kwargs):
        if str(fname).endswith(".svg") or kwargs.get("format") == "svg":
            raise KeyboardInterrupt
        return savefig(self, fname, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", interrupted)
    out = tmp_path / "figs"
    assert main(["figures", "--out", str(out), "--only", "fig7_1", "--quiet"]) == 130
    assert capsys.readouterr().err.strip() == "sparsekernel figures: interrupted"
    assert sorted(p.name for p in out.iterdir()) == []


def test_demo_on_a_port_in_use_names_port(capsys) -> None:
    """Found by running ``demo --port P`` with P taken: the error was a bare 'OSError: [Errno 98] Address
    already in use (while attempting to bind ...)', naming no option."""
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["demo", "--port", str(port), "--no-browser"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and f"--port must be a port free on 127.0.0.1 (0: any free one); got {port}" in lines[0]
    assert "Address already in use" in lines[0]


def test_a_truncated_compressed_libsvm_file_is_one_line_with_status_2(tmp_path, capsys) -> None:
    """Found by probing compressed data files: a .libsvm.gz cut short after its first 64 KiB (which the
    format check reads) ended in 'EOFError: Compressed file ended ...' with status 3, 'not foreseen'; the
    same cut in a .csv.gz was refused with status 2."""
    import gzip

    import numpy as np

    rng = np.random.default_rng(0)
    text = "".join(f"{(-1) ** i} 1:{rng.normal()} 2:{rng.normal()} 3:{rng.normal()}\n" for i in range(5000))
    packed = gzip.compress(text.encode())
    (tmp_path / "cut.libsvm.gz").write_bytes(packed[: len(packed) * 2 // 3])
    assert main(["kkt", "soft", "--data", str(tmp_path / "cut.libsvm.gz"), "--quiet"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "is not a valid LIBSVM-format file" in lines[0]
    assert "Compressed file ended" in lines[0] and "not foreseen" not in lines[0], lines


def _separable_csv(tmp_path):
    import numpy as np

    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(size=(20, 2)) + 3.0, rng.normal(size=(20, 2)) - 3.0])
    t = np.r_[np.ones(20), -np.ones(20)]
    path = tmp_path / "separable.csv"
    np.savetxt(path, np.column_stack([X, t]), delimiter=",")
    return path


def test_kkt_cases_at_a_huge_C_are_those_at_a_moderate_one_on_separable_data(tmp_path, capsys) -> None:
    # no multiplier reaches C: the free ones (about 1) were 1e-20 of a box of 1e20 and all counted as zeros
    path = _separable_csv(tmp_path)
    counts = {}
    for C in ("1e3", "1e20"):
        assert main(["kkt", "soft", "--data", str(path), "--C", C, "--json", "--quiet"]) == 0
        counts[C] = json.loads(capsys.readouterr().out)["categories"]
    assert counts["1e3"]["on the margin"] > 0
    assert counts["1e20"] == counts["1e3"]


def test_kkt_at_the_largest_C_has_a_finite_gap_scale_and_no_numpy_warning(tmp_path, capsys) -> None:
    # the gap's scale, C summed over the 40 points, overflowed to inf with numpy's overflow warning
    import warnings

    path = _separable_csv(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        code = main(["kkt", "soft", "--data", str(path), "--C", "1e308", "--json", "--quiet"])
    out, err = capsys.readouterr()
    assert code == 0 and "Warning" not in err, err
    assert "Infinity" not in out and "NaN" not in out



def test_the_certificate_at_a_huge_C_refuses_multipliers_twice_the_optimal_ones(tmp_path, capsys) -> None:
    # the rows' scales were floored at 1e-5 of the box (1e15 at C = 1e20): twice the optimum passed there,
    # and failed at C = 1e3
    import numpy as np

    from sparsekernel.formulations import SoftMarginSVC
    from sparsekernel.kernels import RBF

    path = _separable_csv(tmp_path)
    data = np.loadtxt(path, delimiter=",")
    for C in ("1e3", "1e20"):
        a = SoftMarginSVC(data[:, :2], data[:, 2], RBF(0.5), C=float(C)).solve("clarabel").a
        for factor, status in ((1.0, 0), (2.0, 1)):
            np.save(tmp_path / "a.npy", factor * a)
            code = main(["check", "--multipliers", str(tmp_path / "a.npy"), "soft", "--data", str(path),
                         "--C", C, "--gamma", "0.5", "--quiet"])
            out = capsys.readouterr().out
            assert code == status, (C, factor, out)


def test_tour_help_says_methods_are_the_svms_and_the_rvm_rows_always_run(capsys) -> None:
    """'tour --methods' takes SVM methods only (an RVM method such as 'fast' is refused) and the RVM's
    three rows run whatever it says; the help said 'comma-separated methods (default: all)'."""
    with pytest.raises(SystemExit):
        main(["tour", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "comma-separated SVM methods" in text
    for method in TOUR_METHODS:
        assert method in text
    assert "always run " + ", ".join(RVM_METHODS[:-1]) + " and " + RVM_METHODS[-1] in text
    assert main(["tour", "--methods", RVM_METHODS[0], "--quiet"]) == 2
    assert "got 'fast'" in capsys.readouterr().err


def test_kkt_points_by_case_cite_the_result_of_their_task(tmp_path, capsys) -> None:
    """'kkt' headed every machine's case counts 'points by case (Result 7.6)', the soft margin's table,
    also for the tube's cases of SVM regression (inside, on, outside the tube), which are Result 7.9's."""
    import numpy as np

    from sparsekernel import datasets

    X, t = datasets.sinusoid()
    path = tmp_path / "sine.csv"
    np.savetxt(path, np.column_stack([X, t]), delimiter=",")
    assert main(["kkt", "eps-svr", "--data", str(path), "--gamma", "10", "--C", "5", "--epsilon", "0.2",
                 "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "points by case (Result 7.9):" in out and "Result 7.6" not in out and "inside the tube" in out
    Xr, tr = datasets.ripley_mixture(n=40)
    path = tmp_path / "ripley.csv"
    np.savetxt(path, np.column_stack([Xr, tr]), delimiter=",")
    assert main(["kkt", "soft", "--data", str(path), "--quiet"]) == 0
    assert "points by case (Result 7.6):" in capsys.readouterr().out


def test_rvm_classification_names_the_likelihood_it_fits(tmp_path, capsys) -> None:
    """'rvm classification' printed '(Bernoulli likelihood)' for every data set, yet three classes are fitted
    with K softmax outputs (7.121)-(7.122) (its certificate says K = 3); two classes keep the Bernoulli."""
    import numpy as np

    from sparsekernel import datasets

    X, t = datasets.ripley_mixture(n=60)
    labels = np.where(t > 0, 1.0, np.where(X[:, 0] > 0, 2.0, 0.0))     # three classes
    three, two = tmp_path / "three.csv", tmp_path / "two.csv"
    np.savetxt(three, np.column_stack([X, labels]), delimiter=",")
    np.savetxt(two, np.column_stack([X, t]), delimiter=",")
    main(["rvm", "classification", "--data", str(three), "--quiet"])
    out = capsys.readouterr().out
    assert "classes 0.0, 1.0, 2.0" in out and "softmax likelihood (7.121)-(7.122)" in out
    assert "Bernoulli" not in out.split("\n\n")[0]
    main(["rvm", "classification", "--data", str(two), "--quiet"])
    out = capsys.readouterr().out
    assert "Bernoulli likelihood" in out and "softmax" not in out.split("\n\n")[0]
