"""The compile pause: the first and second ``SVC`` fit in fresh processes, with an empty and a warm numba cache.

Run from the repository root:

    python benchmarks/cold_start.py                      # N = 300 and 5,000, every layout
    python benchmarks/cold_start.py --sizes 300 --layouts C F
    python benchmarks/cold_start.py --cold-every-layout  # an empty cache for each layout too
    python benchmarks/cold_start.py --jit                # numba's JIT, as without the install's build

An install compiles the SMO's loops ahead of time (``setup.py``, numba.pycc:
the extension ``sparsekernel/solvers/_compiled``, see ``_smo_loops``);
where that extension is missing, and with ``--jit`` (``SPARSEKERNEL_JIT=1``),
the loops are numba functions with ``cache=True``: the first process that
needs them compiles them and writes them to ``NUMBA_CACHE_DIR``; later
processes load them. The child processes import the package of this checkout
(``PYTHONPATH``), so the extension is the one an editable install built
there; column ``loops`` says which the fits used (``aot`` or ``jit``). Here
``NUMBA_CACHE_DIR`` is pointed at a fresh temporary directory, so that the
first process sees what a fresh install sees. For each N
(``make_classification``, 20 features, random_state 0, C = 1, gamma = 1/20,
tol 1e-3, 200 MB cache) the script runs

- ``cold``: one fresh process on the empty cache, layout C (C-ordered float64):
  first fit (compilation included, for the JIT) and second fit;
- ``warm``: one fresh process per layout on the cache that the cold process
  filled: first fit (cache load included) and second fit; the extra cost of
  the first fit over the second is what a user waits for;

and, with ``--cold-every-layout``, a cold process per layout (each on its own
empty cache). Layouts: C- and F-ordered float64, read-only, float32, sparse
CSR. Each process also reports how many numba specialisations the fits
created (``sig``): a layout that reached a new specialisation would show more
than the C layout, and with the ahead-of-time loops it is 0 (nothing is
compiled). The fits run one after the other in one process each, never
alongside another of this script's processes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAYOUTS = ("C", "F", "read-only", "float32", "csr")
SIZES = (300, 5000)
#: the issue's target: a first fit in a fresh process at most this many seconds above a warm one
TARGET_S = 2.0


def worker(N: int, layout: str) -> dict:
    """Two fits of ``layout`` in this (fresh) process; import time and the fits' wall times."""
    start = time.perf_counter()
    import numpy as np
    import scipy.sparse
    from sklearn.datasets import make_classification

    from sparsekernel.estimators import SVC
    from sparsekernel.solvers import _smo_loops

    imported = time.perf_counter() - start
    X, y = make_classification(n_samples=N, n_features=20, random_state=0)
    if layout == "F":
        X = np.asfortranarray(X)
    elif layout == "read-only":
        X.flags.writeable = False
    elif layout == "float32":
        X = X.astype(np.float32)
    elif layout == "csr":
        X = scipy.sparse.csr_matrix(X)
    fits = []
    for _ in range(2):
        t0 = time.perf_counter()
        SVC(C=1.0, gamma=1.0 / 20, tol=1e-3, cache_size=200).fit(X, y)
        fits.append(time.perf_counter() - t0)
    return {"import": imported, "first": fits[0], "second": fits[1], "signatures": _signatures(),
            "loops": "aot" if _smo_loops.AOT else "jit"}


def _signatures() -> int:
    """Numba specialisations compiled or loaded in this process (all jitted functions of the SMO)."""
    import importlib

    from numba.core.registry import CPUDispatcher

    module = importlib.import_module("sparsekernel.solvers._smo_numba")
    return sum(len(f.signatures) for f in vars(module).values() if isinstance(f, CPUDispatcher))


def run(N: int, layout: str, cache_dir: str, jit: bool) -> dict:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir, "SPARSEKERNEL_JIT": "1" if jit else "0",
           "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, __file__, "--worker", json.dumps([N, layout])], capture_output=True,
                          text=True, env=env, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"worker failed for N = {N}, {layout}:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def line(N: int, cache: str, layout: str, r: dict) -> str:
    extra = r["first"] - r["second"]
    verdict = "ok" if extra <= TARGET_S else "over"
    return (f"{N:6d} {cache:5s} {layout:10s} {r['import']:8.2f} {r['first']:9.2f} {r['second']:9.3f} "
            f"{extra:9.2f} {r['signatures']:5d} {r['loops']:>5s}  {verdict}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=list(SIZES))
    parser.add_argument("--layouts", nargs="*", default=list(LAYOUTS), choices=LAYOUTS)
    parser.add_argument("--cold-every-layout", action="store_true",
                        help="also a fresh process on an empty cache for each layout")
    parser.add_argument("--jit", action="store_true", help="numba's JIT even where the compiled extension is there")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        N, layout = json.loads(args.worker)
        print(json.dumps(worker(N, layout)))
        return
    print(f"SVC fits in fresh processes (C = 1, gamma = 1/20, tol 1e-3, 200 MB cache); seconds; "
          f"extra = first - second fit; target extra <= {TARGET_S:g} s; sig = numba specialisations in the process")
    print(f"{'N':>6s} {'cache':5s} {'layout':10s} {'import':>8s} {'1st fit':>9s} {'2nd fit':>9s} {'extra':>9s} "
          f"{'sig':>5s} {'loops':>5s}")
    for N in args.sizes:
        with tempfile.TemporaryDirectory(prefix="numba-cold-") as cache_dir:
            print(line(N, "cold", "C", run(N, "C", cache_dir, args.jit)), flush=True)
            for layout in args.layouts:
                print(line(N, "warm", layout, run(N, layout, cache_dir, args.jit)), flush=True)
        if args.cold_every_layout:
            for layout in args.layouts:
                if layout == "C":
                    continue
                with tempfile.TemporaryDirectory(prefix="numba-cold-") as cache_dir:
                    print(line(N, "cold", layout, run(N, layout, cache_dir, args.jit)), flush=True)


if __name__ == "__main__":
    main()
