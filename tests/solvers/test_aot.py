"""The SMO's and the RVM's loops compiled ahead of time (``_aot``, ``_smo_loops``, ``rvm/_bound_loops``)
against numba's JIT of the same source.

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

from sparsekernel.solvers import _aot, _smo_loops, _smo_numba
from sparsekernel.solvers.rvm import _bound_loops, _loops

BUILT = importlib.util.find_spec("sparsekernel.solvers._compiled") is not None
needs_extension = pytest.mark.skipif(not BUILT, reason="the ahead-of-time extension is not built")

#: fits whose every number the two compilations must share, float64 rows (N = 300) and float32 (N = 2100),
#: one long enough to shrink (the first pass comes at step 1,000, ``smo.SHRINK_FIRST``),
#: after warming every rule for both row types; a RVR and a RVC fit, and a RVR under a Gamma hyperprior (the
#: Python steps); then the specialisations the JIT made of
#: each entry point, the SMO's and the RVM's
FITS = """
import json
import numpy as np
from sklearn.datasets import make_classification, make_friedman1
from sparsekernel.estimators import RVC, RVR, SVC, NuSVC, SVR
from sparsekernel.solvers import _smo_loops, _smo_numba
from sparsekernel.solvers.rvm import _bound_loops, _loops
from sparsekernel.solvers.smo import ensure_compiled
from sparsekernel.solvers import _aot
from sparsekernel.solvers.rvm import design, sequential
from numba import types
ensure_compiled(np.float64)
ensure_compiled(np.float32)
mismatches = set()
def checked(name, f):  # f, noting each argument not of the exported type (layout and writability included)
    expected = _aot.rvm_argument_types()[name]
    def call(*args):
        if len(args) != len(expected):
            mismatches.add(f"{name}: {len(args)} arguments")
        for i, (a, t) in enumerate(zip(args, expected)):
            if isinstance(t, types.Array):
                ok = (isinstance(a, np.ndarray) and a.dtype == np.dtype(str(t.dtype)) and a.ndim == t.ndim
                      and a.flags.writeable and (a.flags.f_contiguous if t.layout == "F" else a.flags.c_contiguous))
            elif t == types.boolean:
                ok = isinstance(a, (bool, np.bool_))
            elif t == types.int64:
                ok = isinstance(a, (int, np.integer)) and not isinstance(a, bool)
            else:
                ok = isinstance(a, (float, np.floating))
            if not ok:
                mismatches.add(f"{name} argument {i}: {type(a).__name__} {getattr(a, 'flags', '')}")
        return f(*args)
    return call
for module in (sequential, design):
    for name in _loops.ENTRY_POINTS:
        if hasattr(module, name):
            setattr(module, name, checked(name, getattr(module, name)))
out = {"aot": _smo_loops.AOT, "rvm aot": _bound_loops.AOT}
X, t = make_friedman1(n_samples=300, random_state=0)
for name, model, n in (("rvr", RVR(), 300), ("rvc", RVC(), 300), ("rvr prior", RVR(hyperprior=(2.0, 0.1, 1.001, 1e-4)), 150)):
    fit = model.fit(X[:n], (t > np.median(t)).astype(int)[:n] if name == "rvc" else t[:n])
    numbers = np.concatenate([fit.alpha_.ravel(), fit.mean_.ravel(), [fit.beta_]])
    out[name] = [float(v).hex() for v in numbers]
    out[f"{name} relevance"] = fit.relevance_vectors_.tolist()
for N in (300, 2100):
    X, y = make_classification(n_samples=N, n_features=5, random_state=1)
    for name, model, target in (("svc", SVC(gamma=0.2, tol=1e-3), y), ("linear", SVC(kernel="linear", C=0.1), y),
                                ("shrunk", SVC(gamma=0.2, C=10.0), y),  # 5,000 steps at N = 2,100: shrinking passes
                                ("nu", NuSVC(nu=0.3, gamma=0.2), y), ("svr", SVR(gamma=0.2), X[:, 0])):
        fit = model.fit(X, target)
        out[f"{name} {N}"] = [float(v).hex() for v in np.concatenate([fit.dual_coef_.ravel(), fit.intercept_])]
        out[f"{name} {N} support"] = fit.support_.tolist()
def specialisations():
    return {name: len(getattr(_smo_numba, name).signatures) for name in _smo_numba.ENTRY_POINTS}
before = specialisations()
rng = np.random.default_rng(1)
X = rng.normal(size=(120, 5))
labels, values = (X[:, 0] + 0.7 * rng.normal(size=120) > 0).astype(int), np.sin(X[:, 0])
def read_only(Z):
    Z = Z.copy()
    Z.flags.writeable = False
    return Z
import scipy.sparse as sp
for layout in (np.asfortranarray, read_only, lambda Z: np.repeat(Z, 2, axis=1)[:, ::2], sp.csr_matrix,
               lambda Z: Z.astype(np.float32)):
    Z = layout(X)
    SVC(gamma=0.5).fit(Z, labels)
    SVR(gamma=0.5).fit(Z, values)
    SVC(gamma=0.5, shrinking=False).fit(Z, labels)
after = specialisations()
layouts = {"before": sum(before.values()), "added": {k: after[k] - before[k] for k in after if after[k] != before[k]}}
signatures = {key: {name: [[repr(t) for t in s.args] for s in getattr(module, name).nopython_signatures]
                   for name in module.ENTRY_POINTS} for key, module in (("smo", _smo_numba), ("rvm", _loops))}
print(json.dumps({"fits": out, "signatures": signatures, "mismatches": sorted(mismatches), "layouts": layouts}))
"""


def _child(code: str, jit: bool) -> dict:
    env = {**os.environ, "SPARSEKERNEL_JIT": "1" if jit else "0"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def jit_child() -> dict:
    return _child(FITS, jit=True)


@pytest.mark.parametrize("key, module", [("smo", _smo_numba), ("rvm", _loops)])
def test_the_exports_are_the_signatures_the_jit_compiles(jit_child: dict, key: str, module) -> None:
    """Every entry point is reached, and every specialisation the JIT makes is exported."""
    exported: dict[str, list[list[str]]] = {}
    for loops, name, args in _aot.exports().values():
        if loops == key:
            exported.setdefault(name, []).append([repr(t) for t in args])
    compiled = jit_child["signatures"][key]
    assert set(compiled) == set(exported) == set(module.ENTRY_POINTS)
    for name, signatures in compiled.items():
        assert signatures, f"{name} is not reached"
        for signature in signatures:
            assert any(map(_reads_alike, [signature] * len(exported[name]), exported[name])), \
                f"{name} compiled for {signature}, not exported"


def _reads_alike(compiled: list[str], exported: list[str]) -> bool:
    """The same types, but where the export takes a column-major matrix and the JIT typed the array
    as C-contiguous: one row or one column, C- and F-contiguous both (the RVM's G or tier of one
    function), which the F export reads alike; that those arrays are F-contiguous is checked
    (``test_the_rvm_is_handed_the_exported_types``)."""
    return len(compiled) == len(exported) and all(
        c == e or (", 2, 'F'," in e and c == e.replace(", 2, 'F',", ", 2, 'C',")) for c, e in zip(compiled, exported))


def test_the_rvm_is_handed_the_exported_types(jit_child: dict) -> None:
    """Every argument of the RVM's entry points in the RVR and RVC fits: dtype, ndim, layout (C- or
    F-contiguous as exported), writable; Python or numpy scalars of the exported kind."""
    assert jit_child["mismatches"] == []


def test_no_input_layout_adds_a_jit_specialisation(jit_child: dict) -> None:
    """Without the extension (the JIT child), after the fits above a fit on F-ordered, read-only,
    non-contiguous, CSR or float32 X (SVC, SVR, SVC without shrinking, N = 120) compiles nothing
    more: a user's first fit in another layout pays no second compile. (With the extension no
    dispatcher is ever called: ``test_with_the_extension_a_fit_compiles_nothing``.)"""
    assert jit_child["layouts"]["before"] > 0
    assert jit_child["layouts"]["added"] == {}


def test_every_entry_point_is_bound() -> None:
    for name in _smo_numba.ENTRY_POINTS:
        assert callable(getattr(_smo_loops, name))
    for name in _loops.ENTRY_POINTS:
        assert callable(getattr(_bound_loops, name))


@needs_extension
def test_the_extension_computes_what_the_jit_computes(jit_child: dict) -> None:
    """Same supports, bit-identical coefficients and intercepts, float64 and float32 rows, four machines;
    the same relevance vectors and bit-identical alpha, mean and beta of a RVR and a RVC."""
    aot, jit = _child(FITS, jit=False)["fits"], dict(jit_child["fits"])
    assert aot.pop("aot") and not jit.pop("aot")
    assert aot.pop("rvm aot") and not jit.pop("rvm aot")
    assert aot == jit


@needs_extension
def test_with_the_extension_a_fit_compiles_nothing() -> None:
    from numba.core.registry import CPUDispatcher

    from sparsekernel.estimators import RVC, RVR, SVC

    if not _smo_loops.AOT:
        pytest.skip("SPARSEKERNEL_JIT asks for the JIT")

    def specialisations() -> int:
        return sum(len(f.signatures) for module in (_smo_numba, _loops) for f in vars(module).values()
                   if isinstance(f, CPUDispatcher))

    before = specialisations()
    rng = np.random.default_rng(0)
    for N in (100, 2100):          # float64 and float32 kernel rows
        X = rng.normal(size=(N, 3))
        SVC(gamma=0.5).fit(X, np.where(X[:, 0] > 0, 1, -1))
    X = rng.normal(size=(200, 3))
    RVR().fit(X, X[:, 0] + 0.1 * rng.normal(size=200))
    RVC().fit(X, X[:, 0] > 0)
    assert specialisations() == before


@needs_extension
@pytest.mark.parametrize("digest", ["source_digest", "cpu_digest"])
def test_a_stale_or_foreign_extension_is_not_used(monkeypatch, digest: str) -> None:
    """Sources edited since the build, or another CPU: a warning, and the JIT."""
    monkeypatch.delenv("SPARSEKERNEL_JIT", raising=False)
    monkeypatch.setattr(_aot, digest, lambda: -1)
    with pytest.warns(RuntimeWarning, match="numba's JIT"):
        assert _aot._extension() is None


def test_the_source_digest_covers_every_loop() -> None:
    """Editing the SMO's or the RVM's loops (or their signatures) makes an extension stale."""
    here = os.path.dirname(_aot.__file__)
    for module in (_smo_numba, _loops, _aot):
        assert os.path.relpath(module.__file__, here) in _aot.BUILT_FROM
