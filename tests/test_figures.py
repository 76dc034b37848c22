"""Every figure renders on the Agg backend, writes PNG, SVG and its caption, and shows the notes' numbers."""

from __future__ import annotations

import json

import matplotlib
import pytest

matplotlib.use("Agg")

from sparsekernel.figures import FIGURES, write_figures  # noqa: E402


@pytest.fixture(scope="module")
def figures(tmp_path_factory):
    out = tmp_path_factory.mktemp("figures")
    results = {r.name: r for r in write_figures(out)}
    return out, results


def test_every_figure_writes_its_files(figures) -> None:
    out, results = figures
    assert set(results) == set(FIGURES)
    for name, result in results.items():
        for suffix in (".png", ".svg", ".txt", ".json"):
            assert (out / f"{name}{suffix}").stat().st_size > 0
        assert (out / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert result.caption in (out / f"{name}.txt").read_text()
        assert json.loads((out / f"{name}.json").read_text())["caption"] == result.caption
        for ax in result.figure.axes:
            if ax.get_label() == "<colorbar>":
                continue
            assert ax.get_xlabel() and ax.get_ylabel()


def test_fig7_2_separates_the_ring_exactly(figures) -> None:
    n = figures[1]["fig7_2"].numbers
    assert n["training errors"] == 0 and n["gamma"] == 0.8 and 0 < n["support vectors"] < n["N"]


def test_fig7_4_nu_bounds_the_fractions(figures) -> None:
    n = figures[1]["fig7_4"].numbers
    assert n["nu"] == 0.5 and n["support fraction"] >= 0.5 and n["margin-error fraction"] <= 0.5
    assert n["equivalent C = 1/(N rho)"] == pytest.approx(1 / (n["N"] * n["rho"]))


def test_fig7_8_keeps_at_least_nu_n_support_vectors(figures) -> None:
    n = figures[1]["fig7_8"].numbers
    assert n["nu"] == 0.7 and n["support vectors"] >= 7 and n["epsilon found"] > 0
    assert n["outside the tube"] <= 7


def test_fig7_9_has_about_three_relevance_vectors(figures) -> None:
    n = figures[1]["fig7_9"].numbers
    assert 2 <= n["relevance vectors"] <= 5
    assert 0.05 <= n["noise sigma found"] <= 0.5  # of the order of the true 0.2
    assert n["relevance vectors"] < figures[1]["fig7_8"].numbers["support vectors"]


def test_fig7_10_same_determinant_and_a_higher_evidence_without_the_basis_vector(figures) -> None:
    n = figures[1]["fig7_10"].numbers
    assert n["|C| (alpha = infinity)"] == pytest.approx(n["|C| (finite alpha)"], rel=1e-12)
    assert n["ln p(t) (alpha = infinity)"] > n["ln p(t) (finite alpha)"]


def test_fig7_11_maximum_at_one_third(figures) -> None:
    n = figures[1]["fig7_11"].numbers
    assert n["s^2 / (q^2 - s)"] == pytest.approx(1 / 3)
    assert n["argmax alpha (q^2 = 4, s = 1)"] == pytest.approx(1 / 3, rel=0.03)  # on a 400-point grid
    assert n["lambda increasing (q^2 = 1, s = 2)"] is True


def test_fig7_12_has_at_most_ten_relevance_vectors(figures) -> None:
    n = figures[1]["fig7_12"].numbers
    assert n["relevance vectors"] <= 10
    assert n["training error"] == pytest.approx(0.21, abs=0.06)


def test_smo_trace_figure_reaches_the_optimum_by_every_rule(figures) -> None:
    n = figures[1]["fig_smo_trace"].numbers
    for rule in ("platt", "first-order", "second-order"):
        assert abs(n[f"final dual - optimum ({rule})"]) <= 1e-8 * abs(n["optimal dual (Clarabel)"])
    assert n["steps (second-order)"] <= n["steps (first-order)"] <= n["steps (platt)"]
