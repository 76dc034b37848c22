"""Audit of the demo's JSON API (handlers called directly, no server): a bad field is refused before any
work is done, and an upload's row count is taken before its parse whatever its line endings."""

from __future__ import annotations

import pytest

from sparsekernel.demo.api import MAX_POINTS, ApiError, handle_rvm, handle_svm, load_upload
from sparsekernel.formulations import MACHINES

POINTS = [[0.0, 0.0, 1.0], [1.0, 1.0, -1.0], [0.0, 1.0, 1.0], [1.0, 0.0, -1.0]]


def _no_solve(*args, **kwargs):
    raise AssertionError("the request was solved before its fields were checked")


@pytest.mark.parametrize("machine, points, grid, words", [
    ("soft", POINTS, {"n": 1000}, "n must be in [2, 120]; got 1000"),
    ("soft", POINTS, {"xmin": 3, "xmax": 1}, "grid must have xmin < xmax"),
    ("one-class", [p[:2] for p in POINTS], {"n": 1.5}, "n must be in [2, 120]"),
    ("eps-svr", [[0.0, 0.0], [1.0, 1.0], [2.0, 0.5]], [], "grid must be an object"),
])
def test_a_bad_svm_grid_is_refused_before_the_solve(monkeypatch, machine, points, grid, words) -> None:
    """The grid was read after the solve (``_svm_field``): a request with a grid of 1,000 lines solved first
    (qp-clarabel on 600 points: 0.5 s of a worker, up to the demo's limit of about 4 s) and was then refused."""
    monkeypatch.setattr(MACHINES[machine], "solve", _no_solve)
    with pytest.raises(ApiError) as refused:
        handle_svm({"machine": machine, "points": points, "grid": grid})
    assert refused.value.status == 400 and words in refused.value.message


@pytest.mark.parametrize("task, extra, words", [
    ("classification", {"compare_svm": True, "nu": 5}, "nu must be in (0, 1]; got 5"),
    ("classification", {"grid": {"n": 1000}}, "n must be in [2, 120]; got 1000"),
    ("regression", {"grid": {"xmin": 2, "xmax": 1}}, "grid must have xmin < xmax"),
])
def test_a_bad_rvm_field_is_refused_before_the_fit(monkeypatch, task, extra, words) -> None:
    """compare_svm's nu and the grid were read after the RVM's fit (EM on 40 points: 0.3-0.7 s, up to about
    8 s at the demo's cost limit), then refused."""
    from sparsekernel.solvers import rvm

    monkeypatch.setattr(rvm, "rvm_regression", _no_solve)
    monkeypatch.setattr(rvm, "rvm_classification", _no_solve)
    points = [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [0.5, 0.0, 1.0]] if task == "classification" else \
        [[0.0, 0.0], [0.5, 1.0], [1.0, 0.0]]
    with pytest.raises(ApiError) as refused:
        handle_rvm({"task": task, "points": points, **extra})
    assert refused.value.status == 400 and words in refused.value.message


def test_the_fields_checked_first_still_solve_a_good_request() -> None:
    answer = handle_svm({"points": POINTS, "grid": {"n": 5, "xmin": -1, "xmax": 2, "ymin": -1, "ymax": 2}})
    assert len(answer["field"]["x"]) == 5 and len(answer["field"]["values"]) == 5
    answer = handle_svm({"machine": "eps-svr", "points": [[0.0, 0.0], [1.0, 1.0], [2.0, 0.5]],
                         "grid": {"xmin": -1, "xmax": 3}})
    assert answer["curve"]["x"][0] == -1 and answer["curve"]["x"][-1] == 3
    answer = handle_rvm({"task": "classification", "points": [[0, 0, 0], [1, 1, 1], [0.5, 0, 1], [0, 1, 0]],
                         "compare_svm": True, "nu": 0.5, "grid": {"n": 4}})
    assert len(answer["field"]["values"]) == 4 and "svm_support" in answer


@pytest.mark.parametrize("newline", ["\r", "\r\n", "\n"])
def test_an_upload_of_far_too_many_rows_is_refused_before_it_is_parsed_whatever_its_line_ends(
        monkeypatch, newline) -> None:
    """Only '\\n' was counted before the parse: 1.3 million rows ended by '\\r' alone (old Mac line ends,
    which the csv reader splits on) were parsed whole, 3.6 s in a light thread against 0.23 s for '\\n',
    before their count was refused."""
    from sparsekernel import datasets

    def parse(*args, **kwargs):
        raise AssertionError("the file was parsed")

    monkeypatch.setattr(datasets, "load_csv", parse)
    with pytest.raises(ApiError) as refused:
        load_upload({"name": "big.csv", "content": newline.join(["x,y,t"] + ["0,0,1"] * (MAX_POINTS + 10))})
    assert refused.value.status == 400 and f"at most {MAX_POINTS} data rows; got {MAX_POINTS + 11} lines" \
        in refused.value.message


def test_an_upload_with_carriage_returns_alone_is_read() -> None:
    answer = load_upload({"name": "mac.csv", "content": "x,y,t\r0,0,1\r1,1,-1\r"})
    assert answer["points"] == [[0.0, 0.0, 1.0], [1.0, 1.0, -1.0]]


@pytest.mark.parametrize("content, columns", [
    ("0," * 4_000 + "1\n", 4000),
    ("0," * 4_000 + "1\n0,0,1\n", 4000),
    ("x,y,t\n" + "0," * 4_000 + "1\n", 4000),
    ("\ufeff# a comment\n\n  \nx1,x2,x3,t\n0,0,0,1\n", 3),
    ('"a, b",c,d,t\n0,0,0,1\n', 3),
])
def test_an_upload_of_too_many_columns_is_refused_before_it_is_parsed(monkeypatch, content, columns) -> None:
    """The width was checked after the parse: one line of 4 million fields (7.6 MB) was parsed whole, 1.8 s
    in a light thread, before '1 input column or 2' refused it. The first data line (or header) tells it."""
    from sparsekernel import datasets

    def parse(*args, **kwargs):
        raise AssertionError("the file was parsed")

    monkeypatch.setattr(datasets, "load_csv", parse)
    with pytest.raises(ApiError) as refused:
        load_upload({"name": "wide.csv", "content": content})
    assert refused.value.status == 400
    assert f"must have 1 input column (regression) or 2 (classification); got {columns} in its first lines" \
        in refused.value.message


@pytest.mark.parametrize("content, shape", [
    ("\ufeff# a comment\n\nx,y,t\n0,0,1\n1,1,-1\n", (2, 2)),
    ('"x, first",t\n0,1\n', (1, 1)),
    ("0.5,1\n", (1, 1)),
    # a header wider than its rows, as load_csv reads it (the width is the first data row's)
    ("x,y,t,\n0,0,1\n", (1, 2)),
])
def test_an_upload_of_one_or_two_input_columns_is_still_read(content, shape) -> None:
    answer = load_upload({"name": "ok.csv", "content": content})
    assert (answer["n"], answer["inputs"]) == shape


def test_an_rvm_fit_that_prunes_every_function_says_so_in_its_answer_not_on_the_servers_stderr() -> None:
    """Four points whose classes no function separates: the fit keeps the bias alone; its AllPrunedWarning reached
    the server's stderr (and the suite's warnings summary), where the answer already shows no relevance vector."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        answer = handle_rvm({"task": "classification", "points": [[0, 0, 0], [1, 1, 1], [0.5, 0, 1], [0, 1, 0]]})
    assert len(answer["relevance"]) == 0 and answer["bias_used"] is True
    assert not [w for w in caught if "pruned" in str(w.message)]
