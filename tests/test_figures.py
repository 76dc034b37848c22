"""Every figure renders on the Agg backend, writes PNG, SVG and its caption, and shows the notes' numbers."""

from __future__ import annotations

import json

import matplotlib
import pytest

matplotlib.use("Agg")

import numpy as np  # noqa: E402

from sparsekernel import datasets  # noqa: E402
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
    result = figures[1]["fig7_12"]
    n = result.numbers
    assert n["relevance vectors"] <= 10
    assert n["training error"] == pytest.approx(0.21, abs=0.06)
    # the caption says how many relevance vectors lie away from the boundary, as counted; it said "the
    # relevance vectors lie away from the boundary" of a fit with one of them 0.08 from it
    away = n["relevance vectors farther from the boundary than the median point"]
    assert 0 <= away <= n["relevance vectors"]
    assert f"{away} of the {n['relevance vectors']} relevance vectors lie farther" in result.caption
    # the same count measured on the drawing, in the plane: each circled point's distance to the drawn
    # p = 1/2 contour against the median training point's (Ripley's data, as drawn)
    from scipy.spatial import cKDTree

    left = result.figure.axes[0]
    contour = cKDTree(np.vstack([path.vertices for path in left.collections[0].get_paths()]))
    circled = np.asarray(left.collections[-1].get_offsets(), dtype=float)
    assert circled.shape == (n["relevance vectors"], 2)
    X, _ = datasets.ripley_mixture(n=n["N"])
    median = np.median(contour.query(X)[0])
    assert int(np.sum(contour.query(circled)[0] > median)) == away


def test_smo_trace_figure_reaches_the_optimum_by_every_rule(figures) -> None:
    n = figures[1]["fig_smo_trace"].numbers
    for rule in ("platt", "first-order", "second-order"):
        assert abs(n[f"final dual - optimum ({rule})"]) <= 1e-8 * abs(n["optimal dual (Clarabel)"])
    assert n["steps (second-order)"] <= n["steps (first-order)"] <= n["steps (platt)"]


# -- how the figures read: titles, mathtext, legends, colour bars ------------------------------------

import re  # noqa: E402


#: words and symbols written in ASCII that a figure should typeset (outside $...$)
ASCII_MATHS = re.compile(r"\b(phi|alpha|beta|gamma|lambda|epsilon|nu|xi|rho|pi|infinity)\b|\^|\|\s*x\)|\bsin\(")


def _titles(result) -> list[str]:
    fig = result.figure
    titles = [fig.get_suptitle()] + [ax.get_title() for ax in fig.axes]
    return [t for t in titles if t]


def _texts(result) -> list[str]:
    """Every piece of text drawn: titles, labels, legend entries, annotations, tick labels excluded."""
    fig = result.figure
    fig.canvas.draw()
    texts = [fig.get_suptitle()]
    for ax in fig.axes:
        texts += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()] + [t.get_text() for t in ax.texts]
        legend = ax.get_legend()
        if legend is not None:
            texts += [t.get_text() for t in legend.get_texts()]
    for legend in fig.legends:
        texts += [t.get_text() for t in legend.get_texts()]
    return [t for t in texts if t]


def _outside_maths(text: str) -> str:
    return re.sub(r"\$[^$]*\$", " ", text)


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_every_figure_has_its_title_and_typesets_its_maths(figures, name: str) -> None:
    result = figures[1][name]
    titles = _titles(result)
    number = name.removeprefix("fig").replace("_", ".")
    if name.startswith("fig7_"):
        assert any(t.startswith(f"Figure {number}:") for t in titles), titles
    else:
        assert titles and "Algorithm 7.1" in titles[0]
    for text in _texts(result):
        assert not ASCII_MATHS.search(_outside_maths(text)), text


def _data_points(ax) -> np.ndarray:
    """Display coordinates of every point drawn on the axes: scatter offsets and the vertices of
    every line (the curves are sampled densely, so a legend over a curve covers vertices)."""
    points = [c.get_offset_transform().transform(c.get_offsets()) for c in ax.collections
              if hasattr(c, "get_offsets") and len(c.get_offsets()) and c.get_label() != "_nolegend_"
              and type(c).__name__ == "PathCollection"]
    for line in ax.get_lines():
        if len(line.get_xydata()):
            points.append(line.get_transform().transform(line.get_xydata()))
    return np.vstack(points) if points else np.empty((0, 2))


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_no_legend_covers_a_data_point(figures, name: str) -> None:
    fig = figures[1][name].figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    for ax in fig.axes:
        points = _data_points(ax)
        for legend in legends:
            box = legend.get_window_extent(renderer)
            inside = (points[:, 0] > box.x0) & (points[:, 0] < box.x1) & (points[:, 1] > box.y0) & (points[:, 1] < box.y1)
            assert not inside.any(), f"{name}: the legend covers {int(inside.sum())} point(s) of {ax.get_title()}"


@pytest.mark.parametrize("name", ["fig7_3", "fig7_7"])
def test_no_slack_label_covers_a_data_point(figures, name: str) -> None:
    """Figure 7.3's label "xi = 0.18" covered a red point (reported from the PNG); each label's drawn box
    must leave every data point's centre uncovered, and the labels must not cover one another."""
    fig = figures[1][name].figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    points = np.vstack([c.get_offset_transform().transform(c.get_offsets()) for c in ax.collections
                        if type(c).__name__ == "PathCollection" and len(c.get_offsets())])     # the scatters
    boxes = [text.get_window_extent(renderer) for text in ax.texts if "xi" in text.get_text()]
    assert boxes, f"{name} has no slack labels"
    for box in boxes:
        inside = (points[:, 0] > box.x0) & (points[:, 0] < box.x1) & (points[:, 1] > box.y0) & (points[:, 1] < box.y1)
        assert not inside.any(), f"{name}: a slack label covers {int(inside.sum())} point(s)"
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])


def test_fig7_12_colour_bar_is_as_tall_as_its_panel(figures) -> None:
    fig = figures[1]["fig7_12"].figure
    fig.canvas.draw()
    panel = fig.axes[1]
    (bar,) = panel.child_axes                      # the colour bar, on an inset of the panel
    panel = panel.get_window_extent()
    assert bar.get_window_extent().height == pytest.approx(panel.height, abs=1.0)


def test_fig7_3_slack_cases_bound_the_training_errors(figures) -> None:
    n = figures[1]["fig7_3"].numbers
    assert n["points inside the margin"] > 0 and n["points misclassified"] > 0
    assert n["points with xi > 1"] == n["points misclassified"] == n["training errors"]
    assert n["sum_n xi_n (>= training errors)"] >= n["training errors"]
    assert n["points with xi > 0"] == n["points inside the margin"] + n["points misclassified"]


def test_fig7_7_slacks_are_the_distances_to_the_tube(figures) -> None:
    n = figures[1]["fig7_7"].numbers
    assert n["above the tube (xi > 0)"] >= 1 and n["below the tube (xi_hat > 0)"] >= 1
    assert n["above the tube (xi > 0)"] + n["below the tube (xi_hat > 0)"] + n["inside or on the tube"] == n["N"]
    from sparsekernel import chapter, datasets
    from sparsekernel.formulations import EpsilonSVR
    from sparsekernel.kernels import RBF

    X, t = datasets.sinusoid(n=n["N"])
    sol = EpsilonSVR(X, t, RBF(chapter.SINUSOID_GAMMA), C=n["C"], epsilon=n["epsilon"]).solve("qp-clarabel")
    y = sol.decision_function(X)
    # at the optimum each slack is its side's epsilon-insensitive error: (7.53), (7.54)
    np.testing.assert_allclose(sol.xi, np.maximum(0.0, t - y - n["epsilon"]), atol=1e-6)
    np.testing.assert_allclose(sol.xi_hat, np.maximum(0.0, y - n["epsilon"] - t), atol=1e-6)
    assert n["sum_n xi_n"] == pytest.approx(float(np.sum(sol.xi)), abs=1e-6)


def test_fig7_10_says_its_example_is_not_the_notes_and_why_the_numbers_differ() -> None:
    """The notes' computed Figure 7.10 has |C| = 2.139 and ln p(t) = -3.218 (alpha = infinity) and -3.581;
    this figure has the same |C| but -2.833 and -3.448, and its caption did not say why. At alpha = infinity
    C = |C|^(1/2) I, so the notes' value puts their t at t^T C^-1 t = 2.000 and this t is at 1.231."""
    import math

    from sparsekernel.figures import fig7_10

    result = fig7_10()
    n = result.numbers
    det = n["|C| (alpha = infinity)"]
    assert det == pytest.approx(2.139, abs=5e-4)
    notes_distance = -2 * -3.218 - 2 * math.log(2 * math.pi) - math.log(det)
    assert notes_distance == pytest.approx(2.0, abs=2e-3)
    for which in ("alpha = infinity", "finite alpha"):
        assert n[f"ln p(t) ({which})"] == pytest.approx(
            -0.5 * (2 * math.log(2 * math.pi) + math.log(det) + n[f"t^T C^-1 t ({which})"]), rel=1e-12)
    assert n["t^T C^-1 t (alpha = infinity)"] == pytest.approx(float(np.dot(n["t"], n["t"])) / math.sqrt(det))
    assert "-3.218" in result.caption and "-3.581" in result.caption
    assert f"{n['t^T C^-1 t (alpha = infinity)']:.3f}" in result.caption
