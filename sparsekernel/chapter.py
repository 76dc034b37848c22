"""The notes' machines on the notes' stand-in data sets (this library's seeded draws, not the notes' own:
counts such as support vectors differ from the notes' captions): the settings behind the tour and the figures.

Each entry names the figure it stands for. The Gaussian kernel widths are the
notes' where they give one (gamma = 0.8 for Figure 7.2, 0.45 for Figure 7.4);
for the sinusoid the notes give none, and gamma = 10 (length scale about
0.22 on [0, 1]) is used.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from . import datasets
from .formulations import (
    SVDD,
    EpsilonSVR,
    HardMarginSVC,
    Machine,
    NuSVC,
    NuSVR,
    OneClassSVM,
    SoftMarginSVC,
)
from .kernels import RBF

__all__ = ["NotesCase", "notes_cases", "sparsity_machines", "SINUSOID_GAMMA", "RIPLEY_GAMMA", "RING_GAMMA"]

RING_GAMMA = 0.8
RIPLEY_GAMMA = 0.45
SINUSOID_GAMMA = 10.0


@dataclass(frozen=True)
class NotesCase:
    """One machine on one of the notes' data sets."""

    label: str
    data: str
    figure: str
    build: Callable[[], Machine]


def notes_cases(n_ripley: int = 200) -> list[NotesCase]:
    """The seven machines as the tour runs them (``n_ripley`` shrinks the mixture for tests)."""
    ring = datasets.ring()
    ripley = datasets.ripley_mixture(n=n_ripley)
    sine = datasets.sinusoid()
    return [
        NotesCase("HardMarginSVC", "ring (32)", "7.2", lambda: HardMarginSVC(*ring, RBF(RING_GAMMA))),
        NotesCase("SoftMarginSVC", f"ripley ({n_ripley})", "7.4",
                  lambda: SoftMarginSVC(*ripley, RBF(RIPLEY_GAMMA), C=1.0)),
        NotesCase("NuSVC", f"ripley ({n_ripley})", "7.4", lambda: NuSVC(*ripley, RBF(RIPLEY_GAMMA), nu=0.5)),
        NotesCase("EpsilonSVR", "sinusoid (10)", "7.8",
                  lambda: EpsilonSVR(*sine, RBF(SINUSOID_GAMMA), C=5.0, epsilon=0.2)),
        NotesCase("NuSVR", "sinusoid (10)", "7.8", lambda: NuSVR(*sine, RBF(SINUSOID_GAMMA), C=5.0, nu=0.7)),
        NotesCase("OneClassSVM", f"ripley ({n_ripley})", "gap 7.5",
                  lambda: OneClassSVM(ripley[0], RBF(RIPLEY_GAMMA), nu=0.1)),
        NotesCase("SVDD", f"ripley ({n_ripley})", "gap 7.5", lambda: SVDD(ripley[0], RBF(RIPLEY_GAMMA), nu=0.1)),
    ]


def sparsity_machines(n_ripley: int = 200) -> tuple[Machine, Machine]:
    """The SVMs that the tour sets beside the RVM (section 7.2's comparison of sparsity):
    the nu-SVR on the sinusoid (nu = 0.7, C = 5) and the nu-SVC on the mixture (nu = 0.5)."""
    X, t = datasets.sinusoid()
    Xr, tr = datasets.ripley_mixture(n=n_ripley)
    return NuSVR(X, t, RBF(SINUSOID_GAMMA), C=5.0, nu=0.7), NuSVC(Xr, tr, RBF(RIPLEY_GAMMA), nu=0.5)
