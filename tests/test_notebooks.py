"""The lecture notebooks in examples/ run top to bottom (nbclient, a fresh kernel each) and assert
their own certificates; they are stored without outputs, and the reports display as HTML."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
NOTEBOOKS = sorted(p.name for p in EXAMPLES.glob("*.ipynb"))

#: what each notebook must show as HTML (a KKTReport, Solution, Comparison or Categories)
HTML = {
    "duality_soft_margin.ipynb": ["KKT check: SoftMarginSVC", "points by case", "clarabel against", "PASS"],
    "smo_step_by_step.ipynb": ["KKT check: SoftMarginSVC", "Solution of SoftMarginSVC", "PASS"],
    "rvm_sparsity.ipynb": [],
}


def test_the_three_lecture_notebooks_are_there() -> None:
    assert set(NOTEBOOKS) == set(HTML)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_is_stored_without_outputs_and_asserts_its_certificates(name: str) -> None:
    nb = nbformat.read(EXAMPLES / name, as_version=4)
    nbformat.validate(nb)
    cells = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.outputs == [] and c.execution_count is None for c in cells)
    assert sum("assert " in c.source for c in cells) >= 3


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs_and_shows_its_reports(name: str) -> None:
    nb = nbformat.read(EXAMPLES / name, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=180, kernel_name="python3",
                                     resources={"metadata": {"path": str(EXAMPLES)}})
    client.execute()                          # raises CellExecutionError when a cell (an assert) fails
    html = "\n".join(out.get("data", {}).get("text/html", "") for cell in nb.cells if cell.cell_type == "code"
                     for out in cell.outputs)
    for words in HTML[name]:
        assert words in html, words
    assert '<span style="color:#c62828' not in html          # no FAIL anywhere
