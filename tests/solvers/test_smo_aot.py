"""The SMO's loops compiled ahead of time (``_smo_aot``, ``_smo_loops``) against numba's JIT of the same source.

The extension's functions convert their arguments without checking layouts,
so its signatures must be those the JIT compiles for the solver's arguments;
and it must compute what the JIT computes. The JIT side runs in a child
process with ``SPARSEKERNEL_JIT=1``; the tests that need the extension skip
where it was not built (a source checkout without ``pip install -e .``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from sparsekernel.solvers import _smo_aot, _smo_loops, _smo_numba

BUILT = importlib.util.find_spec("sparsekernel.solvers._smo_compiled") is not None
needs_extension = pytest.mark.skipif(not BUILT, reason="the ahead-of-time extension is not built")

#: fits whose every number the two compilations must share, float64 rows (N = 300) and float32 (N = 2100),
#: after warming every rule for both row types; then the specialisations the JIT made of each entry point
FITS = """
import json
import numpy as np
from sklearn.datasets import make_classification
from sparsekernel.estimators import SVC, NuSVC, SVR
from sparsekernel.solvers import _smo_loops, _smo_numba
from sparsekernel.solvers.smo import ensure_compiled
ensure_compiled(np.float64)
ensure_compiled(np.float32)
out = {"aot": _smo_loops.AOT}
for N in (300, 2100):
    X, y = make_classification(n_samples=N, n_features=5, random_state=1)
    for name, model, target in (("svc", SVC(gamma=0.2, tol=1e-3), y), ("linear", SVC(kernel="linear", C=0.1), y),
                                ("nu", NuSVC(nu=0.3, gamma=0.2), y), ("svr", SVR(gamma=0.2), X[:, 0])):
        fit = model.fit(X, target)
        out[f"{name} {N}"] = [float(v).hex() for v in np.concatenate([fit.dual_coef_.ravel(), fit.intercept_])]
        out[f"{name} {N} support"] = fit.support_.tolist()
signatures = {name: [[repr(t) for t in s.args] for s in getattr(_smo_numba, name).nopython_signatures]
              for name in _smo_numba.ENTRY_POINTS}
print(json.dumps({"fits": out, "signatures": signatures}))
"""


def _child(code: str, jit: bool) -> dict:
    env = {**os.environ, "SPARSEKERNEL_JIT": "1" if jit else "0"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def jit_child() -> dict:
    return _child(FITS, jit=True)


def test_the_exports_are_the_signatures_the_jit_compiles(jit_child: dict) -> None:
    """Every entry point is reached, and every specialisation the JIT makes is exported."""
    exported: dict[str, list[list[str]]] = {}
    for name, args in _smo_aot.exports().values():
        exported.setdefault(name, []).append([repr(t) for t in args])
    compiled = jit_child["signatures"]
    assert set(compiled) == set(exported) == set(_smo_numba.ENTRY_POINTS)
    for name, signatures in compiled.items():
        assert signatures, f"{name} is not reached"
        for signature in signatures:
            assert signature in exported[name], f"{name} compiled for {signature}, not exported"


def test_every_entry_point_is_bound() -> None:
    for name in _smo_numba.ENTRY_POINTS:
        assert callable(getattr(_smo_loops, name))


@needs_extension
def test_the_extension_computes_what_the_jit_computes(jit_child: dict) -> None:
    """Same supports, bit-identical coefficients and intercepts, float64 and float32 rows, four machines."""
    aot, jit = _child(FITS, jit=False)["fits"], dict(jit_child["fits"])
    assert aot.pop("aot") and not jit.pop("aot")
    assert aot == jit


@needs_extension
def test_with_the_extension_a_fit_compiles_nothing() -> None:
    from numba.core.registry import CPUDispatcher

    from sparsekernel.estimators import SVC

    if not _smo_loops.AOT:
        pytest.skip("SPARSEKERNEL_JIT asks for the JIT")

    def specialisations() -> int:
        return sum(len(f.signatures) for f in vars(_smo_numba).values() if isinstance(f, CPUDispatcher))

    before = specialisations()
    rng = np.random.default_rng(0)
    for N in (100, 2100):          # float64 and float32 kernel rows
        X = rng.normal(size=(N, 3))
        SVC(gamma=0.5).fit(X, np.where(X[:, 0] > 0, 1, -1))
    assert specialisations() == before


@needs_extension
@pytest.mark.parametrize("digest", ["source_digest", "cpu_digest"])
def test_a_stale_or_foreign_extension_is_not_used(monkeypatch, digest: str) -> None:
    """Sources edited since the build, or another CPU: a warning, and the JIT."""
    monkeypatch.delenv("SPARSEKERNEL_JIT", raising=False)
    monkeypatch.setattr(_smo_numba, digest, lambda: -1)
    with pytest.warns(RuntimeWarning, match="numba's JIT"):
        assert _smo_loops._extension() is None
