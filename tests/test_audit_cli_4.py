"""Audit of the command line (4): a KKT verdict at a tolerance of 1 or more certifies nothing, and is refused.

The reports' violations are relative to each row's scale (the box C for the multipliers): at a tolerance of 1
a multiplier at twice its bound C passes, and the SMO run at ``--solver-tol 1e300`` stops at its start
(a = 0, relative gap 1) and was reported 'result: PASS', exit status 0.
"""

from __future__ import annotations

import numpy as np
import pytest

from sparsekernel.cli import main


@pytest.fixture
def files(tmp_path):
    """A soft-margin problem on 30 points, its optimal multipliers, and the same with one multiplier at
    1.5 C (outside the box 0 <= a_n <= C); a LIBSVM model file of it with one coefficient at 1.5 C."""
    from sparsekernel import datasets
    from sparsekernel.estimators import SVC
    from sparsekernel.formulations import MACHINES
    from sparsekernel.kernels import RBF
    from sparsekernel.libsvm_model import save_fitted_model

    X, t = datasets.ripley_mixture(n=30, seed=4)
    np.savetxt(tmp_path / "d.csv", np.column_stack([X, t]), delimiter=",")
    sol = MACHINES["soft"](X, t, RBF(0.5), C=1.0).solve("clarabel")
    np.save(tmp_path / "ok.npy", sol.a)
    a = sol.a.copy()
    a[int(np.argmax(a))] = 1.5
    np.save(tmp_path / "box.npy", a)
    save_fitted_model(tmp_path / "ok.model", SVC(kernel="rbf", gamma=0.5, C=1.0).fit(X, t))
    lines = (tmp_path / "ok.model").read_text().splitlines(keepends=True)
    first = lines.index("SV\n") + 1
    lines[first] = "1.5 " + lines[first].split(" ", 1)[1]
    (tmp_path / "box.model").write_text("".join(lines))
    names = {"data": "d.csv", "ok": "ok.npy", "box": "box.npy", "model_ok": "ok.model", "model_box": "box.model"}
    return {key: str(tmp_path / name) for key, name in names.items()}


def _run(argv, capsys):
    try:
        code = main(argv)
    except SystemExit as exc:               # argparse's errors
        code = exc.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err.strip().splitlines()


@pytest.mark.parametrize("args, words", [
    (["check", "soft", "--data", "{data}", "--multipliers", "{box}", "--gamma", "0.5", "--tol", "1"],
     "argument --tol: must be a positive number below 1"),
    (["kkt", "soft", "--data", "{data}", "--tol", "1e300"], "argument --tol: must be a positive number below 1"),
    (["compare", "soft", "--data", "{data}", "--methods", "smo,libsvm", "--tol", "2"],
     "argument --tol: must be a positive number below 1"),
    (["kkt", "soft", "--data", "{data}", "--method", "smo", "--solver-tol", "1e300"],
     "--solver-tol must give smo's certificate a tolerance below 1"),
    (["kkt", "soft", "--data", "{data}", "--method", "libsvm", "--solver-tol", "1e300"],
     "--solver-tol must give libsvm's certificate a tolerance below 1"),
    (["compare", "soft", "--data", "{data}", "--methods", "clarabel,smo", "--solver-tol", "1e300"],
     "--solver-tol must give smo's certificate a tolerance below 1"),
    (["check", "--model", "{model_box}", "--data", "{data}", "--eps", "1"],
     "--eps must give the certificate a tolerance below 1"),
    # the default --solver-tol 1e-3 on a one-class SVM at nu = 1e-9 matched 6.7e+04 (LIBSVM's scale is about
    # nu N): PASS, where the same answer fails at --tol 1e-3
    (["kkt", "one-class", "--data", "{data}", "--nu", "1e-9", "--method", "smo"],
     "got --solver-tol 0.001 (the default), a tolerance of"),
], ids=["check-tol", "kkt-tol", "compare-tol", "kkt-smo-solver-tol", "kkt-libsvm-solver-tol",
        "compare-solver-tol", "check-model-eps", "one-class-tiny-nu-default"])
def test_a_tolerance_that_certifies_nothing_is_refused(files, capsys, monkeypatch, args, words) -> None:
    """Each of these said PASS (exit status 0): a multiplier at 1.5 C at --tol 1, a model file's coefficient
    at 1.5 C at --eps 1 (tolerance 2.0), the SMO's and LIBSVM's first step at --solver-tol 1e300 (tolerance
    2e300). Refused now before any solve: one line, status 2."""
    import sparsekernel.cli as cli

    solved = []
    monkeypatch.setattr(cli, "solve_by", lambda *a, **k: solved.append(a) or pytest.fail("solved"))
    code, out, err = _run([a.format(**files) for a in args], capsys)
    assert code == 2 and len(err) == 1 and words in err[0], err
    assert out == "" and not solved


@pytest.mark.parametrize("args, status", [
    (["check", "soft", "--data", "{data}", "--multipliers", "{ok}", "--gamma", "0.5"], 0),
    (["check", "soft", "--data", "{data}", "--multipliers", "{box}", "--gamma", "0.5"], 1),
    (["check", "soft", "--data", "{data}", "--multipliers", "{box}", "--gamma", "0.5", "--tol", "0.1"], 1),
    (["check", "--model", "{model_ok}", "--data", "{data}"], 0),
    (["check", "--model", "{model_box}", "--data", "{data}"], 1),
    # a solve at a huge --solver-tol is judged honestly at a --tol below 1: the SMO's start fails it
    (["kkt", "soft", "--data", "{data}", "--method", "smo", "--solver-tol", "1e300", "--tol", "1e-3"], 1),
    (["kkt", "soft", "--data", "{data}", "--method", "smo", "--solver-tol", "0.1"], 0),
], ids=["check-ok", "check-box", "check-box-tol", "model-ok", "model-box", "smo-huge-solver-tol-judged",
        "smo-loose-solver-tol"])
def test_verdicts_at_tolerances_below_1(files, capsys, args, status) -> None:
    code, out, err = _run([a.format(**files) for a in args], capsys)
    assert code == status, err
    assert ("PASS" if status == 0 else "FAIL") in out


@pytest.mark.parametrize("name", ["a.NPY", "a.Npy", "multipliers.bin"])
def test_a_npy_file_is_read_by_its_content_whatever_its_name(files, capsys, tmp_path, name) -> None:
    """A .npy file named a.NPY (a case-insensitive file system's copy) was read as text and refused: '--multipliers
    must be a .npy or text file of numbers; got ... ('utf-8' codec can't decode byte 0x93 in position 0 ...)'.
    numpy's magic string tells the format now."""
    import shutil

    shutil.copy(files["ok"], tmp_path / name)
    code, out, err = _run(["check", "soft", "--data", files["data"], "--multipliers", str(tmp_path / name),
                           "--gamma", "0.5"], capsys)
    assert code == 0 and "check: PASS" in out, err


def test_a_text_file_named_npy_is_read_as_text(files, capsys, tmp_path) -> None:
    np.savetxt(tmp_path / "a.npy", np.load(files["ok"]))
    code, out, err = _run(["check", "soft", "--data", files["data"], "--multipliers", str(tmp_path / "a.npy"),
                           "--gamma", "0.5"], capsys)
    assert code == 0 and "check: PASS" in out, err


def test_figures_list_every_file_they_write(tmp_path, capsys) -> None:
    """The listing said 'fig7_5.png, .svg, .txt' where the command also wrote fig7_5.json (the figure's numbers)."""
    pytest.importorskip("matplotlib")
    out = tmp_path / "figs"
    code, printed, err = _run(["figures", "--out", str(out), "--only", "fig7_5", "--quiet"], capsys)
    assert code == 0, err
    listed = printed.split(":")[0]
    assert listed == f"{out}/fig7_5.png, .svg, .txt, .json"
    assert sorted(p.name for p in out.iterdir()) == ["fig7_5.json", "fig7_5.png", "fig7_5.svg", "fig7_5.txt"]


@pytest.mark.parametrize("first", ["0.5,O.1,1", "x0.5,0.1,-1", "0.5,l1,1"])
def test_a_first_data_row_with_a_letter_typo_is_refused_not_dropped(tmp_path, capsys, first) -> None:
    """'0.5,O.1,1' (the letter O for a zero) was taken as a header, its fields not numbers being names (led by a
    letter), and dropped without a word: kkt solved N = 3 of the file's 4 rows. A header names the target's
    column (the last): a first row whose last field is a number, and which holds other numbers, is refused."""
    data = tmp_path / "typo.csv"
    data.write_text(first + "\n0.2,0.3,-1\n0.9,0.1,1\n0.1,0.8,-1\n")
    code, out, err = _run(["kkt", "soft", "--data", str(data)], capsys)
    assert code == 2 and len(err) == 1 and "line 1: the first row must be a header (names) or data" in err[0], err
    assert out == ""


@pytest.mark.parametrize("header", ["0,1,target", "x1,x2,t", ",x,t", "2019,2020,target", "400,410,label",
                                    "x,410.5,t", "x,y,2", "x1,x2,1"])
def test_headers_that_name_the_target_are_still_read(tmp_path, header) -> None:
    from sparsekernel import datasets

    data = tmp_path / "named.csv"
    data.write_text(header + "\n0.2,0.3,-1\n0.1,0.9,1\n")
    X, t = datasets.load_csv(data)
    assert X.shape == (2, 2) and t.tolist() == [-1.0, 1.0]


@pytest.mark.parametrize("name", ["smo", "SMO", "osqp", "a.npy"])
def test_the_verdict_on_multipliers_does_not_depend_on_their_file_name(files, capsys, tmp_path, name) -> None:
    """The report's tolerance was matched to the solver label of the user's Solution, the file's name: the same
    multipliers (the optimum, 1e-4 added to each non-zero one) in a file named 'smo' were checked at the SMO's
    2.0e-03 and PASSED, in 'osqp' at 1.0e-05, in 'a.npy' at 1.0e-06 and FAILED."""
    a = np.load(files["ok"])
    np.save(tmp_path / "x.npy", a + 1e-4 * (a > 0))
    (tmp_path / name).write_bytes((tmp_path / "x.npy").read_bytes())
    code, out, err = _run(["check", "soft", "--data", files["data"], "--multipliers", str(tmp_path / name),
                           "--gamma", "0.5"], capsys)
    assert code == 1 and "check: FAIL" in out, err
    assert "tolerance 1.0e-06" in out
