"""Machines on the notes' data and on scikit-learn's bundled data, with their LIBSVM twins.

Each case builds our machine, the scikit-learn estimator that solves the same
problem through LIBSVM, the factor that maps LIBSVM's decision values to ours
(the documented rescalings), and held-out points to compare them on.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import numpy as np
from sklearn import datasets as skdata
from sklearn import svm
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from sparsekernel import datasets
from sparsekernel.formulations import (
    SVDD, EpsilonSVR, HardMarginSVC, Machine, NuSVC, NuSVR, OneClassSVM, SoftMarginSVC, Solution,
)
from sparsekernel.kernels import RBF


@dataclass(frozen=True)
class Case:
    name: str
    build: Callable[[], Machine]
    libsvm: Callable[[Machine], object]          # fitted scikit-learn estimator
    scale: Callable[[Solution, Machine], float]  # ours = scale * LIBSVM's decision value
    X_test: np.ndarray


@lru_cache(maxsize=None)
def cancer() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    X, y = skdata.load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    t = np.where(y == 1, 1.0, -1.0)
    X_train, X_test, t_train, _ = train_test_split(X, t, test_size=0.3, random_state=0, stratify=t)
    return X_train, t_train, X_test


@lru_cache(maxsize=None)
def diabetes() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    X, y = skdata.load_diabetes(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    t = (y - y.mean()) / y.std()
    X_train, X_test, t_train, _ = train_test_split(X, t, test_size=0.3, random_state=0)
    return X_train, t_train, X_test


ONE = lambda s, m: 1.0  # noqa: E731
TOL = 1e-8


def _cases() -> list[Case]:
    ring, ring_test = datasets.ring(), datasets.ring(seed=1)[0]
    rip, rip_test = datasets.ripley_mixture(), datasets.ripley_mixture(seed=1)[0]
    sine, sine_test = datasets.sinusoid(), np.linspace(-0.1, 1.1, 41)[:, None]
    Xc, tc, Xc_test = cancer()
    Xd, td, Xd_test = diabetes()
    g_c, g_d = 0.05, 0.1
    weights = {1: 2.0, -1: 0.5}
    return [
        Case("hard-ring", lambda: HardMarginSVC(*ring, RBF(0.8)),
             lambda m: svm.SVC(C=1e6, gamma=0.8, tol=TOL).fit(m.X, m.t), ONE, ring_test),
        Case("soft-ripley", lambda: SoftMarginSVC(*rip, RBF(0.45), C=1.0),
             lambda m: svm.SVC(C=1.0, gamma=0.45, tol=TOL).fit(m.X, m.t), ONE, rip_test),
        Case("weighted-ripley", lambda: SoftMarginSVC(*rip, RBF(0.45), C=1.0, class_weight=weights),
             lambda m: svm.SVC(C=1.0, gamma=0.45, tol=TOL, class_weight=weights).fit(m.X, m.t), ONE, rip_test),
        Case("nusvc-ripley", lambda: NuSVC(*rip, RBF(0.45), nu=0.5),
             lambda m: svm.NuSVC(nu=0.5, gamma=0.45, tol=TOL).fit(m.X, m.t), lambda s, m: s.rho, rip_test),
        Case("eps-sine", lambda: EpsilonSVR(*sine, RBF(10.0), C=5.0, epsilon=0.2),
             lambda m: svm.SVR(C=5.0, epsilon=0.2, gamma=10.0, tol=TOL).fit(m.X, m.t), ONE, sine_test),
        Case("nusvr-sine", lambda: NuSVR(*sine, RBF(10.0), C=5.0, nu=0.7),
             lambda m: svm.NuSVR(C=5.0 / m.N, nu=0.7, gamma=10.0, tol=TOL).fit(m.X, m.t), ONE, sine_test),
        Case("oneclass-ripley", lambda: OneClassSVM(rip[0], RBF(0.45), nu=0.1),
             lambda m: svm.OneClassSVM(nu=0.1, gamma=0.45, tol=TOL).fit(m.X),
             lambda s, m: 1.0 / (m.nu * m.N), rip_test),
        Case("svdd-ripley", lambda: SVDD(rip[0], RBF(0.45), nu=0.1),
             lambda m: svm.OneClassSVM(nu=0.1, gamma=0.45, tol=TOL).fit(m.X),
             lambda s, m: 2.0 / (m.nu * m.N), rip_test),
        Case("hard-cancer", lambda: HardMarginSVC(Xc, tc, RBF(g_c)),
             lambda m: svm.SVC(C=1e6, gamma=g_c, tol=TOL).fit(m.X, m.t), ONE, Xc_test),
        Case("soft-cancer", lambda: SoftMarginSVC(Xc, tc, RBF(g_c), C=1.0),
             lambda m: svm.SVC(C=1.0, gamma=g_c, tol=TOL).fit(m.X, m.t), ONE, Xc_test),
        Case("nusvc-cancer", lambda: NuSVC(Xc, tc, RBF(g_c), nu=0.3),
             lambda m: svm.NuSVC(nu=0.3, gamma=g_c, tol=TOL).fit(m.X, m.t), lambda s, m: s.rho, Xc_test),
        Case("eps-diabetes", lambda: EpsilonSVR(Xd, td, RBF(g_d), C=1.0, epsilon=0.1),
             lambda m: svm.SVR(C=1.0, epsilon=0.1, gamma=g_d, tol=TOL).fit(m.X, m.t), ONE, Xd_test),
        Case("nusvr-diabetes", lambda: NuSVR(Xd, td, RBF(g_d), C=1.0, nu=0.5),
             lambda m: svm.NuSVR(C=1.0 / m.N, nu=0.5, gamma=g_d, tol=TOL).fit(m.X, m.t), ONE, Xd_test),
        Case("oneclass-cancer", lambda: OneClassSVM(Xc, RBF(g_c), nu=0.2),
             lambda m: svm.OneClassSVM(nu=0.2, gamma=g_c, tol=TOL).fit(m.X),
             lambda s, m: 1.0 / (m.nu * m.N), Xc_test),
        Case("svdd-cancer", lambda: SVDD(Xc, RBF(g_c), nu=0.2),
             lambda m: svm.OneClassSVM(nu=0.2, gamma=g_c, tol=TOL).fit(m.X),
             lambda s, m: 2.0 / (m.nu * m.N), Xc_test),
    ]


CASES: dict[str, Case] = {c.name: c for c in _cases()}
NOTES_CASES = [n for n in CASES if n.split("-")[1] in ("ring", "ripley", "sine")]


@lru_cache(maxsize=None)
def machine(name: str) -> Machine:
    return CASES[name].build()


#: the SMO's tolerance, in LIBSVM's units (scaled into the notes' by libsvm_scale)
SMO_TOL = 1e-6


@lru_cache(maxsize=None)
def solution(name: str, method: str) -> Solution:
    m = machine(name)
    if method == "smo":
        return m.solve("smo", tol=SMO_TOL / m.libsvm_scale)
    return m.solve(method)


@lru_cache(maxsize=None)
def libsvm(name: str) -> object:
    return CASES[name].libsvm(machine(name))


def box(m: Machine, sol: Solution) -> float:
    """Scale of a single multiplier: the box width, or max a for the hard margin."""
    width = float(np.max(m.standard_qp().upper[: m.N]))
    return width if np.isfinite(width) else float(np.max(sol.a))


def libsvm_decision(name: str, X: np.ndarray) -> np.ndarray:
    est = libsvm(name)
    return est.decision_function(X) if hasattr(est, "decision_function") else est.predict(X)
