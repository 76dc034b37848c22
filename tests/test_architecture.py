"""The layering rules, read from the source: the solvers know no machine, and no generic module names one.

- ``solvers/`` imports nothing from ``formulations``, ``duality`` or ``estimators``
  (at module level, inside functions or under TYPE_CHECKING alike);
- ``formulations/`` imports nothing from ``duality``, ``estimators`` or the
  command line;
- no module outside ``formulations/`` names a concrete machine class (by import,
  attribute or a comparison with its name), except the lecture's content:
  ``chapter.py`` (the notes' machines on the notes' data) and ``figures.py``
  (each figure of the chapter draws a given machine).

The concrete machines are read from ``formulations.MACHINES``, so a machine
added there is covered without editing this file.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import sparsekernel
from sparsekernel.formulations import MACHINES

PACKAGE = Path(sparsekernel.__file__).resolve().parent
#: Modules whose subject is particular machines (the notes' cases and figures).
CONTENT = {"chapter.py", "figures.py"}
MACHINE_NAMES = {cls.__name__ for cls in MACHINES.values()}


def _modules(under: str = "") -> list[Path]:
    return sorted((PACKAGE / under).rglob("*.py"))


def _imported_modules(path: Path) -> list[tuple[int, str]]:
    """Every module an import statement of ``path`` names, resolved to 'sparsekernel.x.y'."""
    tree = ast.parse(path.read_text(), str(path))
    package = ".".join(("sparsekernel", *path.relative_to(PACKAGE).parent.parts))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            out.append((node.lineno, base))
            out.extend((node.lineno, f"{base}.{alias.name}") for alias in node.names)
    return out


def _machine_references(path: Path) -> list[tuple[int, str]]:
    """Where ``path`` names a concrete machine class, other than by defining a class of that name."""
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and "formulations" in node.module:
            found += [(node.lineno, a.name) for a in node.names if a.name in MACHINE_NAMES]
        elif isinstance(node, ast.Attribute) and node.attr in MACHINE_NAMES:
            found.append((node.lineno, node.attr))
        elif isinstance(node, ast.Name) and node.id in MACHINE_NAMES and isinstance(node.ctx, ast.Load):
            found.append((node.lineno, node.id))
        elif isinstance(node, ast.Compare):
            for value in [node.left, *node.comparators]:
                if isinstance(value, ast.Constant) and value.value in MACHINE_NAMES:
                    found.append((node.lineno, repr(value.value)))
                if isinstance(value, (ast.Tuple, ast.List, ast.Set)):
                    found += [(node.lineno, repr(e.value)) for e in value.elts
                              if isinstance(e, ast.Constant) and e.value in MACHINE_NAMES]
    return found


@pytest.mark.parametrize("path", _modules("solvers"), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_the_solvers_import_no_machine_duality_or_estimator(path: Path) -> None:
    bad = [(line, name) for line, name in _imported_modules(path)
           if name.startswith(("sparsekernel.formulations", "sparsekernel.duality", "sparsekernel.estimators"))]
    assert not bad, f"{path.name} imports {bad}"


@pytest.mark.parametrize("path", _modules("formulations"), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_the_formulations_import_no_duality_estimator_or_command_line(path: Path) -> None:
    bad = [(line, name) for line, name in _imported_modules(path)
           if name.startswith(("sparsekernel.duality", "sparsekernel.estimators", "sparsekernel.cli",
                               "sparsekernel.demo", "sparsekernel.tour"))]
    assert not bad, f"{path.name} imports {bad}"


@pytest.mark.parametrize("path", [p for p in _modules() if "formulations" not in p.relative_to(PACKAGE).parts
                                  and p.name not in CONTENT], ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_generic_module_names_a_machine(path: Path) -> None:
    assert not _machine_references(path), f"{path.relative_to(PACKAGE)} names {_machine_references(path)}"


def test_the_rules_catch_what_they_forbid(tmp_path: Path) -> None:
    """The readers find an import of a machine, its use by attribute, and a comparison of names."""
    probe = PACKAGE / "solvers" / "_probe_for_the_architecture_test.py"
    probe.write_text("from ..formulations import NuSVC\nimport sparsekernel.duality\n"
                     "def f(m):\n    return m.name == 'SVDD' or sparsekernel.formulations.HardMarginSVC\n")
    try:
        assert {n for _, n in _imported_modules(probe)} >= {"sparsekernel.formulations", "sparsekernel.duality"}
        assert {n for _, n in _machine_references(probe)} == {"NuSVC", "'SVDD'", "HardMarginSVC"}
    finally:
        probe.unlink()


def test_the_old_import_paths_still_work() -> None:
    """Module paths that ../shared/API.md or earlier code named keep importing (re-exports)."""
    from sparsekernel.duality import kkt
    from sparsekernel.duality.kkt import check, matched_tol
    from sparsekernel.formulations.base import Machine
    from sparsekernel.probability import fit_platt
    from sparsekernel.solvers import smo
    from sparsekernel.solvers.qp import solve_qp, solve_standard_qp

    import sparsekernel.duality
    from sparsekernel.solvers.smo import SMOTrace, smo_standard

    assert callable(kkt) and sparsekernel.duality.kkt is kkt            # the function, in any import order
    assert callable(check) and callable(matched_tol) and Machine is sparsekernel.formulations.Machine
    assert callable(fit_platt) and callable(solve_qp) and callable(solve_standard_qp)
    module = importlib.import_module("sparsekernel.solvers.smo")
    assert smo is module.smo and importlib.import_module("sparsekernel.solvers").smo is smo   # always the function
    assert module.SMOTrace is SMOTrace and module.smo_standard is smo_standard


def test_importing_errors_does_not_import_scikit_learn() -> None:
    """``import sparsekernel.errors`` is cheap: measured in a fresh interpreter."""
    import subprocess
    import sys

    code = ("import sys, time; t = time.perf_counter(); import sparsekernel.errors; "
            "print(time.perf_counter() - t, 'sklearn' in sys.modules, 'cvxpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out[1:] == ["False", "False"], out


def test_the_estimators_load_cvxpy_only_when_a_problem_is_built() -> None:
    """cvxpy (about a second to import) runs only when a Formulation is built, numba at the first solve."""
    import subprocess
    import sys

    code = ("import sys; import numpy as np; from sparsekernel.estimators import SVC; "
            "from sparsekernel.formulations import MACHINES; "
            "assert 'numba' not in sys.modules, 'numba loaded on import'; "
            "before = 'cvxpy.problems' in sys.modules; SVC().fit(np.eye(4), [0, 1, 0, 1]); "
            "fit = 'cvxpy.problems' in sys.modules; MACHINES['soft'](np.eye(4), [1, -1, 1, -1]).dual(); "
            "print(before, fit, 'cvxpy.problems' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False", "True"], out


def test_a_first_use_from_several_threads_at_once_is_safe() -> None:
    """Review finding: the lazily loaded modules (cvxpy, the SMO's loops) used by several threads
    at once in a fresh process (a threaded grid search's first fits) all get the whole module."""
    import subprocess
    import sys

    code = ("import threading, numpy as np\n"
            "from sparsekernel.estimators import SVC\n"
            "from sparsekernel._lazy import cvxpy as cp\n"
            "X = np.random.default_rng(0).normal(size=(50, 2)); y = (X[:, 0] > 0).astype(int)\n"
            "errors = []; barrier = threading.Barrier(6)\n"
            "def fit():\n"
            "    barrier.wait()\n"
            "    try: SVC().fit(X, y); cp.Variable(3)\n"
            "    except Exception as exc: errors.append(repr(exc))\n"
            "threads = [threading.Thread(target=fit) for _ in range(6)]\n"
            "[t.start() for t in threads]; [t.join() for t in threads]\n"
            "print(errors)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", out


def test_limit_blas_sets_the_threads_inside_and_restores_them_after() -> None:
    """``_threads.limit_blas`` (the SMO's one BLAS thread): the limit inside, the count before
    restored on exit and after an exception; None changes nothing; nested blocks. In a fresh process with two
    OpenBLAS threads asked for, so that the limit has something to change."""
    import os
    import subprocess
    import sys

    code = ("import numpy\n"
            "from sparsekernel._threads import blas_threads, limit_blas\n"
            "before = blas_threads()\n"
            "with limit_blas(1):\n"
            "    inside = blas_threads()\n"
            "    with limit_blas(None):\n"
            "        unlimited = blas_threads()\n"
            "after = blas_threads()\n"
            "try:\n"
            "    with limit_blas(1):\n"
            "        raise KeyError\n"
            "except KeyError:\n"
            "    pass\n"
            "after_exception = blas_threads()\n"
            "from sparsekernel import _threads\n"
            "left = len(_threads._ACTIVE.limits)\n"
            "calls = []\n"
            "controller = _threads._controller\n"
            "_threads._controller = lambda: calls.append(1) or controller()\n"
            "with limit_blas(1):\n"
            "    with limit_blas(1):\n"
            "        reads = len(calls)\n"
            "        nested = blas_threads()\n"
            "    with limit_blas(2):\n"
            "        other = blas_threads()\n"
            "    back = blas_threads()\n"
            "print(before, inside, unlimited, after, after_exception, nested, other, back, left, reads)\n")
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "2", "OMP_NUM_THREADS": "2"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    before, inside, unlimited, after, after_exception, nested, other, back, left, reads = map(int, out.split())
    assert (inside, unlimited) == (1, 1)
    assert after == before and after_exception == before
    # a block left by an exception is no longer taken for an enclosing one; a block inside one of the same
    # limit reads and sets nothing (one look at the libraries, the outer block's) and keeps the limit; one of
    # another limit sets it (where OpenBLAS has two CPUs to run on: there ``before`` is 2) and restores the
    # outer one
    assert left == 0 and reads == 1
    assert (nested, back) == (1, 1) and (other == 2 or before == 1)
