"""The chapter's figures, computed: PNG and SVG files with a caption giving their numbers.

Each ``fig7_*`` function solves what its figure shows on the notes' stand-in data (this library's draws) and
returns a ``FigureResult``: the matplotlib Figure (drawn on the Agg canvas, no
display needed), a caption, and the numbers behind it (support or relevance
vectors, C, nu, epsilon found, noise sigma, iterations). ``write_figures``
writes ``<name>.png``, ``<name>.svg`` and ``<name>.txt`` (the caption and the
numbers) for each. matplotlib is an optional dependency: ``pip install
sparsekernel[plot]``.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
from numpy.typing import NDArray

from . import chapter, datasets
from .duality import categories
from .formulations import EpsilonSVR, HardMarginSVC, NuSVC, NuSVR, SoftMarginSVC, Solution
from .kernels import RBF, Linear

__all__ = ["FigureResult", "FIGURES", "write_figures"]

Array = NDArray[np.float64]

RED, BLUE, GREEN, GREY = "#d62728", "#1f77b4", "#2ca02c", "#7f7f7f"

#: a slack variable above this (in output units) counts as positive in Figures 7.3 and 7.7
SLACK_TOL = 1e-6


@dataclass(frozen=True)
class FigureResult:
    """A computed figure with its caption and the numbers it shows."""

    name: str
    figure: Any
    caption: str
    numbers: dict[str, Any] = field(default_factory=dict)

    def text(self) -> str:
        lines = [f"{self.name}: {self.caption}", ""]
        lines += [f"  {k}: {_fmt(v)}" for k, v in self.numbers.items()]
        return "\n".join(lines)


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def _figure(width: float = 6.4, height: float = 5.2, ncols: int = 1) -> tuple[Any, Any]:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=110, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, ncols)
    return fig, axes


def _grid(X: Array, margin: float = 0.6, n: int = 220) -> tuple[Array, Array, Array]:
    lo, hi = X.min(axis=0) - margin, X.max(axis=0) + margin
    g1, g2 = np.meshgrid(np.linspace(lo[0], hi[0], n), np.linspace(lo[1], hi[1], n))
    return g1, g2, np.column_stack([g1.ravel(), g2.ravel()])


def _classes(ax: Any, X: Array, t: Array) -> None:
    ax.scatter(*X[t > 0].T, c=RED, marker="o", s=28, edgecolors="k", linewidths=0.4, label="$t = +1$", zorder=3)
    ax.scatter(*X[t < 0].T, c=BLUE, marker="s", s=26, edgecolors="k", linewidths=0.4, label="$t = -1$", zorder=3)


def _circle(ax: Any, points: Array, label: str) -> None:
    ax.scatter(*points.T, s=170, facecolors="none", edgecolors="k", linewidths=1.3, label=label, zorder=4)


def _decision_panel(ax: Any, X: Array, t: Array, sol: Solution, levels: tuple[float, ...], title: str,
                    field_scale: float = 1.0) -> None:
    """Field y(x), the surface y = 0, the margins and the circled support vectors."""
    g1, g2, G = _grid(X)
    values = (sol.decision_function(G) / field_scale).reshape(g1.shape)
    bound = max(1.5, float(np.percentile(np.abs(values), 95)))
    ax.contourf(g1, g2, values, levels=np.linspace(-bound, bound, 21), cmap="RdBu_r", alpha=0.35, extend="both")
    ax.contour(g1, g2, values, levels=[levels[0]], colors="k", linewidths=1.1, linestyles="--")
    ax.contour(g1, g2, values, levels=[0.0], colors="k", linewidths=2.0)
    ax.contour(g1, g2, values, levels=[levels[1]], colors="k", linewidths=1.1, linestyles="--")
    _classes(ax, X, t)
    _circle(ax, X[sol.support], f"support vectors ({sol.n_support})")
    ax.plot([], [], "k-", lw=2.0, label="$y = 0$")
    ax.plot([], [], "k--", lw=1.1, label=r"margins $y = \pm 1$" if levels == (-1.0, 1.0) else "margins")
    ax.set_xlabel("$x_1$")
    ax.set_ylabel("$x_2$")
    ax.set_title(title)
    _legend_outside(ax)
    ax.set_aspect("equal", adjustable="box")


def _legend_outside(ax: Any, **kwargs: Any) -> Any:
    """The axes' legend to the right of the panel, where it covers no point."""
    return ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, fontsize=8, **kwargs)


def fig7_1() -> FigureResult:
    """The maximum margin hyperplane on separable data (Figure 7.1)."""
    X, t = datasets.separable()
    m = HardMarginSVC(X, t, Linear())
    sol = m.solve("qp-clarabel")
    w = X.T @ sol.coef
    margin = 1.0 / float(np.linalg.norm(w))
    fig, ax = _figure(8.2, 5.2)
    _decision_panel(ax, X, t, sol, (-1.0, 1.0), "Figure 7.1: maximum margin, linear kernel")
    numbers = {"N": m.N, "support vectors": sol.n_support, "margin 1/||w||": margin,
               "sum_n a_n (= 1/rho^2, Result 7.5)": float(np.sum(sol.a)), "1/margin^2": 1.0 / margin**2}
    caption = (f"The maximum margin hyperplane on {m.N} separable points: the surface y = 0, the margins "
               f"y = ±1 at distance {margin:.3f}, and the {sol.n_support} support vectors circled.")
    return FigureResult("fig7_1", fig, caption, numbers)


def fig7_2() -> FigureResult:
    """Hard margin with a Gaussian kernel on the blob inside a ring (Figure 7.2)."""
    X, t = datasets.ring()
    m = HardMarginSVC(X, t, RBF(chapter.RING_GAMMA))
    sol = m.solve("qp-clarabel")
    errors = int(np.sum(np.where(sol.decision_function(X) >= 0, 1.0, -1.0) != t))
    fig, ax = _figure(8.2, 5.2)
    _decision_panel(ax, X, t, sol, (-1.0, 1.0),
                    f"Figure 7.2: hard margin, Gaussian kernel, $\\gamma$ = {chapter.RING_GAMMA}")
    numbers = {"N": m.N, "gamma": chapter.RING_GAMMA, "support vectors": sol.n_support, "training errors": errors}
    caption = (f"Contours of y(x) for a hard-margin SVM with a Gaussian kernel (gamma = {chapter.RING_GAMMA}) "
               f"on {m.N} points: {sol.n_support} support vectors, {errors} training errors (separated exactly).")
    return FigureResult("fig7_2", fig, caption, numbers)


#: where a point's label may go, in points from it (right first, then left, then above and below each)
_LABEL_OFFSETS = ((10, -3), (-10, -3), (10, 11), (10, -17), (-10, 11), (-10, -17))


def _place_labels(ax: Any, X: Array, labels: dict[int, str], clearance: float = 9.0) -> None:
    """Annotate point n of X with labels[n] at the first of ``_LABEL_OFFSETS`` where the label's box,
    as drawn, covers no point of X (within ``clearance`` pixels: a marker and its circle) and no label
    placed before it; where none is free, the one covering the fewest."""
    fig = ax.figure
    fig.canvas.draw()                                # the layout, final: the points' places on the canvas
    renderer = fig.canvas.get_renderer()
    points = ax.transData.transform(X)
    placed: list[Any] = []
    for n, text in labels.items():
        best, fewest = None, None
        for dx, dy in _LABEL_OFFSETS:
            note = ax.annotate(text, X[n], xytext=(dx, dy), textcoords="offset points", fontsize=8, va="center",
                               ha="left" if dx > 0 else "right",
                               bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.8})
            box = note.get_window_extent(renderer).expanded(1.0, 1.0)
            inside = ((points[:, 0] > box.x0 - clearance) & (points[:, 0] < box.x1 + clearance)
                      & (points[:, 1] > box.y0 - clearance) & (points[:, 1] < box.y1 + clearance))
            covered = int(np.sum(inside)) + sum(box.overlaps(other) for other in placed)
            if fewest is None or covered < fewest:
                if best is not None:
                    best.remove()
                best, fewest, best_box = note, covered, box
            else:
                note.remove()
            if covered == 0:
                break
        placed.append(best_box)


def fig7_3(C: float = 1.0, slack_tol: float = SLACK_TOL) -> FigureResult:
    """Slack variables of the soft margin on overlapping classes (Figure 7.3, (7.20)-(7.21)).

    The clusters of Figure 7.1, drawn so that they overlap; the linear C-SVM. Each point with
    xi_n > 0 gets a segment to its own margin y = t_n, of length xi_n / ||w|| in the plane.
    """
    X, t = datasets.separable(n=30, seed=0, gap=-1.0)
    m = SoftMarginSVC(X, t, Linear(), C=C)
    sol = m.solve("qp-clarabel")
    w = X.T @ sol.coef                                                  # (7.29)
    xi = np.asarray(sol.xi)
    slack = np.flatnonzero(xi > slack_tol)
    errors = int(np.sum(t * sol.decision_function(X) < 0))
    fig, ax = _figure(8.2, 5.2)
    _decision_panel(ax, X, t, sol, (-1.0, 1.0), f"Figure 7.3: soft margin, linear kernel, $C$ = {C:g}")
    for n in slack:
        end = X[n] + t[n] * xi[n] * w / float(w @ w)                    # on the margin y = t_n
        ax.plot([X[n, 0], end[0]], [X[n, 1], end[1]], color=GREEN, lw=1.8, zorder=2)
    ax.plot([], [], color=GREEN, lw=1.8, label=r"slack $\xi_n$ (to its margin)")
    _legend_outside(ax)
    _place_labels(ax, X, {n: f"$\\xi$ = {xi[n]:.2f}" for n in slack})      # after the layout: it moves the axes
    counts = categories(m, sol).counts
    numbers = {"N": m.N, "C": C, "support vectors": sol.n_support, "margin 1/||w||": 1.0 / float(np.linalg.norm(w)),
               "points with xi > 0": int(slack.size), "points with xi > 1": int(np.sum(xi > 1.0)),
               "training errors": errors, "sum_n xi_n (>= training errors)": float(np.sum(xi)),
               **{f"points {k}": v for k, v in counts.items()}}
    caption = (f"The soft-margin SVM (C = {C:g}, linear kernel) on {m.N} overlapping points: xi = 0 on or "
               f"outside the correct margin, 0 < xi <= 1 inside it ({counts['inside the margin']} points), "
               f"xi > 1 on the wrong side ({counts['misclassified']} points); sum xi = {np.sum(xi):.2f} bounds "
               f"the {errors} training errors (7.21). {sol.n_support} support vectors circled.")
    return FigureResult("fig7_3", fig, caption, numbers)


def fig7_4(nu: float = 0.5) -> FigureResult:
    """The nu-SVC on the Ripley-type mixture (Figure 7.4)."""
    X, t = datasets.ripley_mixture()
    m = NuSVC(X, t, RBF(chapter.RIPLEY_GAMMA), nu=nu)
    sol = m.solve("qp-clarabel")
    margin_errors = float(np.mean(sol.xi > 1e-6 * sol.rho))
    C = 1.0 / (m.N * sol.rho)
    fig, ax = _figure(8.2, 5.2)
    # in margin units (y / rho), the margins are at +/-1
    _decision_panel(ax, X, t, sol, (-1.0, 1.0),
                    f"Figure 7.4: $\\nu$-SVC, $\\nu$ = {nu}, $\\gamma$ = {chapter.RIPLEY_GAMMA}", field_scale=sol.rho)
    counts = categories(m, sol).counts
    numbers = {"N": m.N, "nu": nu, "gamma": chapter.RIPLEY_GAMMA, "support vectors": sol.n_support,
               "support fraction": sol.n_support / m.N, "margin-error fraction": margin_errors,
               "rho": sol.rho, "equivalent C = 1/(N rho)": C,
               "training error": float(np.mean(np.where(sol.decision_function(X) >= 0, 1.0, -1.0) != t)),
               **{f"points {k}": v for k, v in counts.items()}}
    caption = (f"nu-SVC (nu = {nu}) with a Gaussian kernel on the {m.N}-point Ripley-type mixture: "
               f"{sol.n_support} support vectors ({sol.n_support / m.N:.0%} >= nu), margin errors "
               f"{margin_errors:.3f} (<= nu); the same solution as the C-SVM with C = 1/(N rho) = {C:.3g}. "
               "Field shown as y(x)/rho, so the margins are at ±1.")
    return FigureResult("fig7_4", fig, caption, numbers)


def fig7_5() -> FigureResult:
    """Error functions of z = y t: hinge, logistic / ln 2, misclassification, squared (Figure 7.5)."""
    z = np.linspace(-2.0, 2.0, 401)
    fig, ax = _figure(6.0, 4.2)
    ax.plot(z, np.maximum(0.0, 1.0 - z), color=BLUE, lw=2.2, label="hinge $[1 - z]_+$ (7.45)")
    ax.plot(z, np.log1p(np.exp(-z)) / math.log(2.0), color=RED, lw=2.2, label=r"logistic $\ln(1+e^{-z})/\ln 2$ (7.48)")
    ax.plot(z, (z < 0).astype(float), color="k", lw=2.2, label="misclassification")
    ax.plot(z, (z - 1.0) ** 2, color=GREEN, lw=2.2, label="squared $(z - 1)^2$")
    ax.set_ylim(-0.05, 4.0)
    ax.set_xlabel("$z = y\\,t$")
    ax.set_ylabel("$E(z)$")
    ax.set_title("Figure 7.5: error functions")
    ax.axvline(1.0, color=GREY, lw=0.8, ls=":")
    ax.legend(fontsize=9, loc="upper right")          # the one corner that no curve crosses
    numbers = {"hinge at z = 1": 0.0, "logistic / ln 2 at z = 0": 1.0, "logistic / ln 2 at z = 1":
               float(np.log1p(np.exp(-1.0)) / math.log(2.0))}
    caption = ("Error functions of z = y t: the hinge loss is exactly zero for z >= 1 (the flat region that "
               "makes the SVM sparse); the logistic loss, scaled to pass through (0, 1), is never zero.")
    return FigureResult("fig7_5", fig, caption, numbers)


def fig7_6(epsilon: float = 0.5) -> FigureResult:
    """The epsilon-insensitive error and the quadratic error (Figure 7.6)."""
    z = np.linspace(-2.0, 2.0, 401)
    fig, ax = _figure(6.0, 4.2)
    ax.plot(z, np.maximum(0.0, np.abs(z) - epsilon), color=RED, lw=2.2, label=f"$E_\\epsilon(z)$, $\\epsilon$ = {epsilon} (7.51)")
    ax.plot(z, z**2, color=GREEN, lw=2.2, label="quadratic $z^2$")
    ax.axvspan(-epsilon, epsilon, color=RED, alpha=0.08)
    ax.set_ylim(-0.05, 2.5)
    ax.set_xlabel("$z = y(\\mathbf{x}) - t$")
    ax.set_ylabel("$E(z)$")
    ax.set_title("Figure 7.6: the $\\epsilon$-insensitive error")
    ax.legend(fontsize=9)
    caption = f"The epsilon-insensitive error (zero for |z| < {epsilon}, linear outside) and the quadratic error."
    return FigureResult("fig7_6", fig, caption, {"epsilon": epsilon})


def fig7_7(C: float = 1.0, epsilon: float = 0.2, n: int = 20, slack_tol: float = SLACK_TOL) -> FigureResult:
    """The epsilon-tube and the slack variables of SVM regression (Figure 7.7, (7.53)-(7.55)).

    The epsilon-SVR on 20 points of the sinusoid of Figure 7.8: xi_n > 0 above the tube,
    xi_hat_n > 0 below it, each drawn as the vertical segment from t_n to the tube.
    """
    X, t = datasets.sinusoid(n=n)
    m = EpsilonSVR(X, t, RBF(chapter.SINUSOID_GAMMA), C=C, epsilon=epsilon)
    sol = m.solve("qp-clarabel")
    xi, xi_hat = np.asarray(sol.xi), np.asarray(sol.xi_hat)
    y_n = sol.decision_function(X)
    above, below = np.flatnonzero(xi > slack_tol), np.flatnonzero(xi_hat > slack_tol)
    x = np.linspace(0.0, 1.0, 300)[:, None]
    y = sol.decision_function(x)
    fig, ax = _figure(8.4, 4.6)
    ax.fill_between(x[:, 0], y - epsilon, y + epsilon, color=RED, alpha=0.12)
    ax.plot(x[:, 0], y, color=RED, lw=2.0, label="$y(x)$")
    ax.plot(x[:, 0], y + epsilon, color=RED, lw=0.9, ls="--", label=r"$y + \epsilon$ and $y - \epsilon$")
    ax.plot(x[:, 0], y - epsilon, color=RED, lw=0.9, ls="--")
    inside = np.setdiff1d(np.arange(m.N), np.union1d(above, below))
    ax.scatter(X[inside, 0], t[inside], c=GREEN, s=34, edgecolors="k", linewidths=0.5, zorder=3,
               label=r"inside or on the tube, $\xi_n = \hat\xi_n = 0$")
    sides = ((above, y_n + epsilon, xi, BLUE, "above", r"\xi", 1),            # (7.53)
             (below, y_n - epsilon, xi_hat, "#9467bd", "below", r"\hat\xi", -1))  # (7.54)
    for idx, edge, slack, color, where, symbol, side in sides:
        ax.vlines(X[idx, 0], edge[idx], t[idx], color=color, lw=1.8, zorder=2)
        ax.scatter(X[idx, 0], t[idx], c=color, s=40, edgecolors="k", linewidths=0.5, zorder=3,
                   label=f"{where} the tube, ${symbol}_n > 0$")
        for k in idx:
            ax.annotate(f"${symbol}_{{{k + 1}}}$ = {slack[k]:.2f}", (X[k, 0], t[k]), xytext=(12 * side, 0),  # n from 1
                        textcoords="offset points", fontsize=8, va="center", ha="left" if side > 0 else "right")
    _circle(ax, np.column_stack([X[sol.support, 0], t[sol.support]]), f"support vectors ({sol.n_support})")
    ax.set_xlabel("$x$")
    ax.set_ylabel("$t$")
    ax.set_title(f"Figure 7.7: the $\\epsilon$-tube and its slack variables, $\\epsilon$ = {epsilon:g}, $C$ = {C:g}")
    _legend_outside(ax)
    numbers = {"N": m.N, "C": C, "epsilon": epsilon, "gamma": chapter.SINUSOID_GAMMA,
               "support vectors": sol.n_support, "above the tube (xi > 0)": int(above.size),
               "below the tube (xi_hat > 0)": int(below.size), "inside or on the tube": int(inside.size),
               "sum_n xi_n": float(np.sum(xi)), "sum_n xi_hat_n": float(np.sum(xi_hat))}
    caption = (f"The epsilon-insensitive SVR (epsilon = {epsilon:g}, C = {C:g}) on {m.N} points of sin(2 pi x) plus "
               f"N(0, 0.2^2) noise: {above.size} point(s) above the tube with xi > 0 (7.53), {below.size} below it "
               f"with xi_hat > 0 (7.54), {inside.size} inside or on it with both slacks zero; "
               f"{sol.n_support} support vectors.")
    return FigureResult("fig7_7", fig, caption, numbers)


def fig7_8(nu: float = 0.7, C: float = 5.0) -> FigureResult:
    """nu-SVR on the noisy sinusoid, with its tube (Figure 7.8)."""
    X, t = datasets.sinusoid()
    m = NuSVR(X, t, RBF(chapter.SINUSOID_GAMMA), C=C, nu=nu)
    sol = m.solve("qp-clarabel")
    x = np.linspace(0.0, 1.0, 300)[:, None]
    y = sol.decision_function(x)
    fig, ax = _figure(6.4, 4.4)
    ax.fill_between(x[:, 0], y - sol.epsilon, y + sol.epsilon, color=RED, alpha=0.15,
                    label=f"$\\epsilon$-tube ($\\epsilon$ = {sol.epsilon:.3f})")
    ax.plot(x[:, 0], np.sin(2 * np.pi * x[:, 0]), color=GREY, lw=1.0, ls=":", label=r"$\sin(2\pi x)$")
    ax.plot(x[:, 0], y, color=RED, lw=2.0, label="$y(x)$")
    ax.scatter(X[:, 0], t, c=GREEN, s=36, edgecolors="k", linewidths=0.5, label="data", zorder=3)
    _circle(ax, np.column_stack([X[sol.support, 0], t[sol.support]]), f"support vectors ({sol.n_support})")
    ax.set_xlabel("$x$")
    ax.set_ylabel("$t$")
    ax.set_title(f"Figure 7.8: $\\nu$-SVR, $\\nu$ = {nu}, $C$ = {C}")
    ax.legend(fontsize=8, loc="lower left")
    numbers = {"N": m.N, "nu": nu, "C": C, "gamma": chapter.SINUSOID_GAMMA, "epsilon found": sol.epsilon,
               "support vectors": sol.n_support, "outside the tube": int(np.sum(sol.xi + sol.xi_hat > 1e-9))}
    caption = (f"nu-SVR (nu = {nu}, C = {C}) with Gaussian kernels on sin(2 pi x) plus N(0, 0.2^2) noise, "
               f"N = {m.N}: epsilon = {sol.epsilon:.3f} found, {sol.n_support} support vectors of {m.N} "
               f"(at least nu N = {nu * m.N:g}).")
    return FigureResult("fig7_8", fig, caption, numbers)


def fig7_9() -> FigureResult:
    """RVM regression on the sinusoid of Figure 7.8 (Figure 7.9)."""
    from .solvers.rvm import rvm_regression

    X, t = datasets.sinusoid()
    kernel = RBF(chapter.SINUSOID_GAMMA)
    fit = rvm_regression(kernel(X, X), t, method="fast", tol=1e-6)
    x = np.linspace(0.0, 1.0, 300)[:, None]
    mean, std = fit.predict(kernel(x, X), return_std=True)          # (7.90)-(7.91)
    sigma = 1.0 / math.sqrt(fit.beta)
    fig, ax = _figure(6.4, 4.4)
    ax.fill_between(x[:, 0], mean - std, mean + std, color=RED, alpha=0.15, label=r"$\pm$ one standard deviation (7.91)")
    ax.plot(x[:, 0], np.sin(2 * np.pi * x[:, 0]), color=GREY, lw=1.0, ls=":", label=r"$\sin(2\pi x)$")
    ax.plot(x[:, 0], mean, color=RED, lw=2.0, label="predictive mean (7.90)")
    ax.scatter(X[:, 0], t, c=GREEN, s=36, edgecolors="k", linewidths=0.5, label="data", zorder=3)
    rv = np.asarray(fit.relevance, dtype=int)
    _circle(ax, np.column_stack([X[rv, 0], t[rv]]), f"relevance vectors ({rv.size})")
    ax.set_xlabel("$x$")
    ax.set_ylabel("$t$")
    ax.set_title("Figure 7.9: RVM regression")
    ax.legend(fontsize=8, loc="lower left")
    numbers = {"N": X.shape[0], "gamma": chapter.SINUSOID_GAMMA, "relevance vectors": int(rv.size),
               "bias kept": bool(fit.bias_used), "noise sigma found": sigma, "iterations": fit.iterations,
               "log evidence (7.85)": float(fit.log_evidence[-1])}
    caption = (f"RVM regression on the data and Gaussian kernels of Figure 7.8: {rv.size} relevance vectors "
               f"(bias {'kept' if fit.bias_used else 'pruned'}) against the nu-SVR's support vectors; noise "
               f"sigma = {sigma:.3f} found by evidence maximisation after {fit.iterations} iterations.")
    return FigureResult("fig7_9", fig, caption, numbers)


def fig7_12() -> FigureResult:
    """RVM classification on the Ripley-type data of Figure 7.4 (Figure 7.12)."""
    from .solvers.rvm import rvm_classification

    X, t = datasets.ripley_mixture()
    kernel = RBF(chapter.RIPLEY_GAMMA)
    labels = (t > 0).astype(float)
    fit = rvm_classification(kernel(X, X), labels, method="fast", tol=1e-6)
    rv = np.asarray(fit.relevance, dtype=int)
    g1, g2, G = _grid(X)
    p = fit.predict_proba(kernel(G, X)[:, rv])[:, -1].reshape(g1.shape)
    train = fit.predict_proba(kernel(X, X)[:, rv])[:, -1]
    error = float(np.mean((train >= 0.5) != (labels == 1.0)))
    fig, (left, right) = _figure(11.0, 4.4, ncols=2)
    fig.suptitle(f"Figure 7.12: RVM classification, Gaussian kernel, $\\gamma$ = {chapter.RIPLEY_GAMMA}")
    left.contour(g1, g2, p, levels=[0.5], colors="k", linewidths=2.0)
    _classes(left, X, t)
    _circle(left, X[rv], f"relevance vectors ({rv.size})")
    left.plot([], [], "k-", lw=2.0, label="$p = 1/2$")
    left.set_title("decision boundary and relevance vectors", fontsize=10)
    fig.legend(*left.get_legend_handles_labels(), loc="outside lower center", ncols=4, fontsize=9)
    from matplotlib.colors import LinearSegmentedColormap

    ink = LinearSegmentedColormap.from_list("ink", [BLUE, RED])
    image = right.pcolormesh(g1, g2, p, cmap=ink, vmin=0, vmax=1, shading="auto")
    right.contour(g1, g2, p, levels=[0.5], colors="k", linewidths=1.2)
    # the bar on an inset of the panel itself: exactly the panel's height
    bar = fig.colorbar(image, cax=right.inset_axes((1.04, 0.0, 0.045, 1.0)))
    bar.set_label(r"$p(t = +1 \mid \mathbf{x})$")
    right.set_title("posterior probability (red and blue ink)", fontsize=10)
    for ax in (left, right):
        ax.set_xlabel("$x_1$")
        ax.set_ylabel("$x_2$")
        ax.set_aspect("equal", adjustable="box")
    # how far from the boundary: |ln p / (1 - p)|, the latent value's size, against the median training point's
    logit = np.abs(np.log(np.clip(train, 1e-300, None)) - np.log(np.clip(1.0 - train, 1e-300, None)))
    away = int(np.sum(logit[rv] > np.median(logit)))
    numbers = {"N": X.shape[0], "gamma": chapter.RIPLEY_GAMMA, "relevance vectors": int(rv.size),
               "training error": error, "iterations": fit.iterations,
               "relevance vectors farther from the boundary than the median point": away}
    caption = (f"The RVM classifier on the {X.shape[0]}-point data of Figure 7.4: {rv.size} relevance vectors "
               f"(training error {error:.2f}) against about half the points as support vectors; {away} of the "
               f"{rv.size} relevance vectors lie farther from the boundary (|ln p/(1 - p)|) than the median "
               "training point.")
    return FigureResult("fig7_12", fig, caption, numbers)


def _log_gauss_2d(t: Array, C: Array) -> float:
    sign, logdet = np.linalg.slogdet(C)
    return float(-0.5 * (2 * math.log(2 * math.pi) + logdet + t @ np.linalg.solve(C, t)))


def fig7_10() -> FigureResult:
    """The mechanism of sparsity, computed (Figure 7.10): N = 2 targets, one basis vector.

    Left, alpha = infinity: C = (1/beta_1) I. Right, finite alpha: C = (1/beta_2) I +
    phi phi^T / alpha with beta_2 chosen so that |C| is the same. The target t is poorly
    aligned with phi, so the stretched Gaussian puts less density on it.

    This is the library's own example, not the notes' computed one: both have |C| = 2.139, but the
    notes' ln p(t) = -3.218 at alpha = infinity, where C = 1.4625 I, puts their target at squared
    Mahalanobis distance 2.000 (|t|^2 = 2.925), and this t = (1.2, -0.6) is at 1.231 (|t|^2 = 1.8);
    the notes do not give their t, phi and alpha. The caption says so with the numbers.
    """
    t = np.array([1.2, -0.6])
    phi = np.array([1.0, 1.0]) / math.sqrt(2.0) * 1.5
    beta1, alpha = 1.0 / 1.4625, 0.9
    C1 = np.eye(2) / beta1
    det = float(np.linalg.det(C1))
    # (1/beta2)^2 + (1/beta2) ||phi||^2 / alpha = det: solve for v = 1/beta2
    v = (-phi @ phi / alpha + math.sqrt((phi @ phi / alpha) ** 2 + 4 * det)) / 2
    C2 = v * np.eye(2) + np.outer(phi, phi) / alpha
    logp = [_log_gauss_2d(t, C1), _log_gauss_2d(t, C2)]
    fig, axes = _figure(9.0, 5.0, ncols=2)
    fig.suptitle("Figure 7.10: the mechanism of sparsity, $N = 2$ targets and one basis vector")
    for ax, C, label, lp in zip(axes, (C1, C2), (r"$\alpha = \infty$: $\mathbf{C} = \beta^{-1}\mathbf{I}$",
                                                  r"finite $\alpha$: $\mathbf{C} = \beta^{-1}\mathbf{I}"
                                                  r" + \alpha^{-1}\varphi\varphi^{\mathrm{T}}$"), logp):
        _ellipse(ax, C)
        circle = np.sqrt(v if C is C2 else 1 / beta1)
        theta = np.linspace(0, 2 * np.pi, 200)
        ax.plot(circle * np.cos(theta), circle * np.sin(theta), color=GREEN, ls="--", lw=1.2, label=r"noise $\beta^{-1}\mathbf{I}$")
        ax.plot(*t, "kx", ms=11, mew=2.5, label=r"target $\mathbf{t}$")
        if C is C2:
            ax.annotate("", xy=phi, xytext=(0, 0), arrowprops={"arrowstyle": "->", "lw": 1.8, "color": BLUE})
            ax.text(*(phi * 1.05), r"$\varphi$", color=BLUE, fontsize=13)
        ax.set_title(f"{label}\n$|\\mathbf{{C}}|$ = {np.linalg.det(C):.3f}, "
                     f"$\\ln p(\\mathbf{{t}})$ = {lp:.3f}", fontsize=10)
        ax.set_xlim(-2.6, 2.6)
        ax.set_ylim(-2.6, 2.6)
        ax.set_aspect("equal")
        ax.set_xlabel("$t_1$")
        ax.set_ylabel("$t_2$")
        ax.legend(fontsize=8, loc="lower right")
    mahalanobis = [float(t @ np.linalg.solve(C, t)) for C in (C1, C2)]
    numbers = {"|C| (alpha = infinity)": float(np.linalg.det(C1)), "|C| (finite alpha)": float(np.linalg.det(C2)),
               "ln p(t) (alpha = infinity)": logp[0], "ln p(t) (finite alpha)": logp[1], "alpha": alpha,
               "t": [float(v) for v in t], "phi": [float(v) for v in phi],
               "t^T C^-1 t (alpha = infinity)": mahalanobis[0], "t^T C^-1 t (finite alpha)": mahalanobis[1]}
    caption = (f"The sparsity mechanism for two targets and one basis vector phi: with the same |C| = {det:.3f}, "
               f"the Gaussian stretched along phi puts less density on t (ln p(t) = {logp[1]:.3f} against "
               f"{logp[0]:.3f} for alpha = infinity), so the evidence prefers pruning phi. Our own example "
               f"(t = ({t[0]:g}, {t[1]:g}), alpha = {alpha:g}): the notes' computed figure has the same |C| but "
               f"ln p(t) = -3.218 and -3.581, for a target at t^T C^-1 t = 2.000 with alpha = infinity where this "
               f"one is at {mahalanobis[0]:.3f}.")
    return FigureResult("fig7_10", fig, caption, numbers)


def _ellipse(ax: Any, C: Array) -> None:
    """The unit Mahalanobis ellipse of N(0, C)."""
    lam, U = np.linalg.eigh(C)
    theta = np.linspace(0, 2 * np.pi, 300)
    pts = U @ (np.sqrt(lam)[:, None] * np.vstack([np.cos(theta), np.sin(theta)]))
    ax.plot(pts[0], pts[1], color=RED, lw=2.0, label="unit Mahalanobis ellipse")


def fig7_11() -> FigureResult:
    """lambda(alpha_i) against ln alpha_i for q^2 > s and q^2 < s (Figure 7.11, (7.97))."""
    ln_alpha = np.linspace(-5.0, 5.0, 400)
    alpha = np.exp(ln_alpha)
    fig, axes = _figure(9.0, 4.2, ncols=2)
    fig.suptitle(r"Figure 7.11: the contribution $\lambda(\alpha_i)$ (7.97) to the log evidence")
    numbers: dict[str, Any] = {}
    for ax, (q2, s) in zip(axes, ((4.0, 1.0), (1.0, 2.0))):
        lam = 0.5 * (np.log(alpha) - np.log(alpha + s) + q2 / (alpha + s))        # (7.97)
        ax.plot(ln_alpha, lam, color=RED, lw=2.2)
        ax.set_xlabel("$\\ln \\alpha_i$")
        ax.set_ylabel("$\\lambda(\\alpha_i)$")
        if q2 > s:
            best = s * s / (q2 - s)                                               # (7.101)
            ax.axvline(math.log(best), color="k", ls="--", lw=1.0)
            ax.set_title(f"$q_i^2 = {q2:g} > s_i = {s:g}$: maximum at\n"
                         f"$\\alpha_i = s_i^2/(q_i^2 - s_i) = {best:.3g}$ (7.101)", fontsize=10)
            numbers["argmax alpha (q^2 = 4, s = 1)"] = float(alpha[np.argmax(lam)])
            numbers["s^2 / (q^2 - s)"] = best
        else:
            ax.set_title(f"$q_i^2 = {q2:g} < s_i = {s:g}$: increasing,\n"
                         "maximum at $\\alpha_i = \\infty$ (pruned)", fontsize=10)
            numbers["lambda increasing (q^2 = 1, s = 2)"] = bool(np.all(np.diff(lam) > 0))
    caption = ("The contribution lambda(alpha_i) of (7.97) to the log evidence: a single maximum at "
               "alpha = s^2/(q^2 - s) = 1/3 when q^2 = 4 > s = 1 (7.101), and monotone increasing, hence "
               "pruning (alpha = infinity), when q^2 = 1 < s = 2.")
    return FigureResult("fig7_11", fig, caption, numbers)


def fig_smo_trace(C: float = 1.0) -> FigureResult:
    """The SMO's progress per step for the three working-set rules (Algorithm 7.1; the step is the
    notes' Filling the gap 7.3)."""
    X, t = datasets.ripley_mixture()
    m = SoftMarginSVC(X, t, RBF(chapter.RIPLEY_GAMMA), C=C)
    best = m.solve("qp-clarabel").dual_objective
    fig, axes = _figure(10.0, 4.6, ncols=2)
    fig.suptitle(f"SMO (Algorithm 7.1) on the soft-margin dual, $C$ = {C:g}, $N$ = {m.N}: three working-set rules")
    numbers: dict[str, Any] = {"N": m.N, "C": C, "optimal dual (Clarabel)": best}
    for wss, color in (("platt", GREEN), ("first-order", BLUE), ("second-order", RED)):
        sol = m.solve("smo", tol=1e-8, wss=wss, record=True, shrinking=False)
        dual = -sol.trace.objective                                         # L~ = -f
        steps = np.arange(1, dual.shape[0] + 1)
        axes[0].semilogy(steps, np.maximum(best - dual, 1e-16), color=color, lw=1.6, label=wss)
        axes[1].semilogy(steps, np.maximum(sol.trace.violation, 1e-16), color=color, lw=1.2, label=wss)
        numbers[f"steps ({wss})"] = int(dual.shape[0])
        numbers[f"final dual - optimum ({wss})"] = float(dual[-1] - best)
    axes[0].set_xlabel("step")
    axes[0].set_ylabel(r"optimum minus dual  $\widetilde{L}^\star - \widetilde{L}(\mathbf{a})$")
    axes[0].set_title("dual objective (7.32), distance to the optimum", fontsize=10)
    axes[1].set_xlabel("step")
    axes[1].set_ylabel(r"maximal KKT violation  $m(\mathbf{a}) - M(\mathbf{a})$")
    axes[1].set_title(r"stopping measure (tol = $10^{-8}$)", fontsize=10)
    for ax in axes:
        ax.legend(fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
    caption = (f"The SMO on the soft-margin dual (C = {C}, N = {m.N}, Ripley-type data): the three working-set "
               "rules, each step an analytic two-multiplier update (Filling the gap 7.3 of the notes), reach Clarabel's optimum; "
               "Fan, Chen and Lin's second-order rule needs the fewest steps.")
    return FigureResult("fig_smo_trace", fig, caption, numbers)


#: figure name -> function
FIGURES: dict[str, Callable[[], FigureResult]] = {
    "fig7_1": fig7_1, "fig7_2": fig7_2, "fig7_3": fig7_3, "fig7_4": fig7_4, "fig7_5": fig7_5, "fig7_6": fig7_6,
    "fig7_7": fig7_7, "fig7_8": fig7_8, "fig7_9": fig7_9, "fig7_10": fig7_10, "fig7_11": fig7_11, "fig7_12": fig7_12,
    "fig_smo_trace": fig_smo_trace,
}


#: The files ``write_figures`` writes for each figure, by suffix.
OUTPUT_SUFFIXES = (".png", ".svg", ".txt", ".json")


def write_figures(out: str | Path, names: list[str] | None = None) -> list[FigureResult]:
    """Write PNG, SVG, a caption file and the numbers (JSON) for each figure into ``out`` (``OUTPUT_SUFFIXES``)."""
    directory = Path(out)
    directory.mkdir(parents=True, exist_ok=True)
    results = []
    for name in names or list(FIGURES):
        result = FIGURES[name]()
        # each file written beside its place under a temporary name, the four moved there once all are written:
        # an error or Ctrl-C while writing leaves no partial file, nor a figure's PNG without its SVG
        temporary = {suffix: directory / f".{name}{suffix}.{os.getpid()}.tmp" for suffix in OUTPUT_SUFFIXES}
        try:
            result.figure.savefig(temporary[".png"], format="png")
            result.figure.savefig(temporary[".svg"], format="svg")
            temporary[".txt"].write_text(result.text() + "\n")
            temporary[".json"].write_text(json.dumps({"caption": result.caption, "numbers": result.numbers},
                                                     indent=2, default=str) + "\n")
            for suffix, path in temporary.items():
                os.replace(path, directory / f"{name}{suffix}")
        finally:
            for path in temporary.values():
                path.unlink(missing_ok=True)
        results.append(result)
    return results
