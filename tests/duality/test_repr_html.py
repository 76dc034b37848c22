"""Notebook display: the HTML of a report, a solution, a comparison and the categories holds every
row of its text form, colours PASS and FAIL, and escapes what it shows."""

from __future__ import annotations

import math
import re

import pytest

from sparsekernel import datasets
from sparsekernel.duality import Categories, KKTReport, KKTRow, categories, compare
from sparsekernel.duality.report import Gap
from sparsekernel.formulations import SoftMarginSVC
from sparsekernel.kernels import RBF

PASS_STYLE, FAIL_STYLE = "color:#1a7f37", "color:#c62828"


@pytest.fixture(scope="module")
def solved():
    X, t = datasets.ripley_mixture(n=40)
    machine = SoftMarginSVC(X, t, RBF(0.45), C=1.0)
    return machine, machine.solve("smo"), machine.solve("qp-clarabel")


def _cells(html: str) -> list[str]:
    return re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", html)


def test_report_html_has_every_row_and_colours_its_verdicts(solved) -> None:
    report = solved[1].report
    html = report._repr_html_()
    assert html.count("<tr>") == len(report.rows) + 2            # head, rows, the gap
    cells = _cells(html)
    for row in report.rows:
        assert row.tag in cells and f"{row.violation:.1e}" in cells
    assert html.count(f'<span style="{PASS_STYLE}') == len(report.rows) + 2   # rows, gap, verdict
    assert "result:" in html and "PASS (all" in html


def test_report_html_escapes_and_marks_a_failure() -> None:
    rows = (KKTRow("(7.23)", "dual feasibility", "a_n >= 0 & <b>", 0.5, 0.5, 1.0, 3, False),
            KKTRow("(7.30)", "stationarity", "sum_n a_n t_n = 0", math.nan, math.nan, 1.0, None, None, "no <t>"))
    report = KKTReport("<script>alert(1)</script>", rows, Gap.of(1.0, 0.9), 1e-6)
    html = report._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "a_n &gt;= 0 &amp; &lt;b&gt;" in html and "<b>" not in html
    assert "no &lt;t&gt;" in html
    assert f'<span style="{FAIL_STYLE};font-weight:bold">FAIL</span>' in html
    assert ">n/a<" in html and "FAIL (2 of 3 checks" in html


def test_solution_html_shows_its_numbers_and_certificate(solved) -> None:
    _, sol, _ = solved
    html = sol._repr_html_()
    cells = _cells(html)
    for name in ("machine", "method, solver", "support vectors", "b", "primal objective", "dual objective",
                 "gap (relative)", "iterations", "KKT certificate"):
        assert name in cells
    assert f"{sol.n_support} of {sol.a.shape[0]}" in cells and f"{sol.primal_objective:.10g}" in cells
    assert PASS_STYLE in html


def test_comparison_html_has_every_row_of_its_text(solved) -> None:
    machine, a, b = solved
    comparison = compare(a, b, machine=machine)
    html = comparison._repr_html_()
    cells = _cells(html)
    for line in str(comparison).splitlines()[1:]:
        assert line.split("  ")[1].strip() in cells
    assert "max |delta a|" in cells and "points changing case" in cells
    assert "smo/smo" in cells and "qp/clarabel" in cells


def test_categories_html_counts_every_case_and_escapes(solved) -> None:
    machine, sol, _ = solved
    cases = categories(machine, sol)
    cells = _cells(cases._repr_html_())
    for name, count in cases.counts.items():
        i = cells.index(name)
        assert cells[i + 1] == str(count)
    assert cells[-2:] == ["all points", str(machine.N)]
    odd = Categories(("a<b",), {"a<b": 1}, "x & y")._repr_html_()
    assert "a&lt;b" in odd and "x &amp; y" in odd and "a<b" not in odd
