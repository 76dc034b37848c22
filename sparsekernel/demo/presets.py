"""The demos' presets (the notes' "Demonstrations for this chapter"), with seeded data."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import chapter, datasets

__all__ = ["SVM_PRESETS", "RVM_PRESETS", "svm_preset", "rvm_preset"]


def _points(X: np.ndarray, t: np.ndarray | None = None) -> list[list[float]]:
    if t is None:
        return [[float(a), float(b)] for a, b in X]
    return [[float(a), float(b), float(c)] for (a, b), c in zip(X, t)]


def _regression_points(X: np.ndarray, t: np.ndarray) -> list[list[float]]:
    return [[float(x), float(v)] for x, v in zip(X[:, 0], t)]


def _separable() -> dict[str, Any]:
    X, t = datasets.separable()
    return {"machine": "hard", "kernel": "linear", "points": _points(X, t)}


def _gaussian() -> dict[str, Any]:
    X, t = datasets.ring()
    return {"machine": "hard", "kernel": "rbf", "gamma": chapter.RING_GAMMA, "points": _points(X, t)}


def _overlap() -> dict[str, Any]:
    X, t = datasets.ripley_mixture(n=80, seed=2)
    return {"machine": "soft", "kernel": "rbf", "gamma": chapter.RIPLEY_GAMMA, "C": 1.0, "points": _points(X, t)}


def _effect_of_c() -> dict[str, Any]:
    X, t = datasets.ripley_mixture(n=60, seed=3)
    return {"machine": "soft", "kernel": "linear", "C": 0.05, "points": _points(X, t),
            "hint": "move the C slider: small C, wide margin and many support vectors; large C, narrow margin"}


def _regression() -> dict[str, Any]:
    X, t = datasets.sinusoid(n=25, seed=1)
    return {"machine": "eps-svr", "kernel": "rbf", "gamma": chapter.SINUSOID_GAMMA, "C": 5.0, "epsilon": 0.2,
            "points": _regression_points(X, t)}


def _only_support() -> dict[str, Any]:
    X, t = datasets.separable(n=16, seed=4)
    return {"machine": "hard", "kernel": "linear", "points": _points(X, t),
            "hint": "drag a point that is not circled: the boundary stays; drag a circled one: it moves"}


#: preset number -> (title, builder); the numbering is the notes'
SVM_PRESETS = {
    1: ("Maximum margin, separable data (Figures 7.1, 7.2)", _separable),
    2: ("Gaussian kernel (Figure 7.2)", _gaussian),
    3: ("Overlapping classes: soft margin (Figure 7.4)", _overlap),
    4: ("The effect of C", _effect_of_c),
    5: ("SVM regression and its epsilon-tube (Figure 7.8)", _regression),
    6: ("Only the support vectors matter", _only_support),
}


def _rvm_regression(noise: float = 0.2, n: int = 10, seed: int = 0) -> dict[str, Any]:
    X, t = datasets.sinusoid(n=n, seed=seed, noise=noise)
    return {"task": "regression", "gamma": chapter.SINUSOID_GAMMA, "method": "fast", "noise": noise,
            "points": _regression_points(X, t)}


def _rvm_evidence(noise: float = 0.2) -> dict[str, Any]:
    spec = _rvm_regression(noise=noise, n=20, seed=3)
    return {**spec, "method": "mackay", "steps": 1,
            "hint": "step the re-estimation (7.87)-(7.88): most alpha_i run off to infinity, the evidence rises"}


def _rvm_classification() -> dict[str, Any]:
    X, t = datasets.ripley_mixture(n=100, seed=1)
    return {"task": "classification", "gamma": chapter.RIPLEY_GAMMA, "method": "fast", "points": _points(X, t)}


def _rvm_versus_svm() -> dict[str, Any]:
    return {**_rvm_classification(), "compare_svm": True, "nu": 0.5}


def _rvm_noise(noise: float = 0.4) -> dict[str, Any]:
    return {**_rvm_regression(noise=noise, n=30, seed=5), "noise": noise,
            "hint": "raise the noise: evidence maximisation finds a larger noise and keeps fewer relevance vectors"}


RVM_PRESETS = {
    1: ("RVM regression: few relevance vectors (Figure 7.9)", lambda noise=0.2: _rvm_regression(noise=noise)),
    2: ("Hyperparameter evidence updates (Section 7.2.2)", _rvm_evidence),
    3: ("RVM classification (Figure 7.12)", _rvm_classification),
    4: ("RVM versus SVM sparsity (Figures 7.4 and 7.12)", _rvm_versus_svm),
    5: ("Noise level and relevance vectors", _rvm_noise),
}


def svm_preset(number: int, **options: Any) -> dict[str, Any]:
    title, build = SVM_PRESETS[number]
    return {"title": title, "preset": number, **build(**options)}


def rvm_preset(number: int, **options: Any) -> dict[str, Any]:
    title, build = RVM_PRESETS[number]
    return {"title": title, "preset": number, **build(**options)}
