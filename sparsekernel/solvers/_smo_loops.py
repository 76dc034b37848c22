"""The SMO's compiled entry points: built ahead of time at install, or numba's JIT without that.

Installing the package (``setup.py``) compiles the functions of
``_smo_numba.ENTRY_POINTS`` with numba.pycc into the extension
``_smo_compiled`` (see ``_smo_aot``), for float64 and for float32 kernel
rows, so that a fresh install never waits for numba's compiler. This module
binds each entry point to the extension's function, chosen by the type of
the kernel rows it is handed. It binds them to ``_smo_numba``'s dispatchers
instead (compiled on first use and cached by numba) where

- the extension is missing (a source checkout that was never built, or an
  install without a C compiler),
- it was built from other sources than the ones beside it (an editable
  install edited since: rebuild with ``pip install -e .``), or for another
  CPU than this one (a wheel built elsewhere), with a warning,
- or ``SPARSEKERNEL_JIT=1`` asks for the JIT (numba's debugging tools need it).

``AOT`` says which: True when the extension's functions are used.
"""

from __future__ import annotations

import importlib
import inspect
import os
import warnings
from types import ModuleType
from typing import Any, Callable

import numpy as np

from . import _smo_numba as jit

#: the parameters that hold kernel rows: the row cache (a tuple whose first member is the store) or the store
ROW_PARAMETERS = {"cache": True, "store": False}


def _extension() -> ModuleType | None:
    """The ahead-of-time extension, when it is there, current and wanted."""
    if os.environ.get("SPARSEKERNEL_JIT", "0") not in ("", "0"):
        return None
    try:
        compiled = importlib.import_module(f"{__package__}._smo_compiled")
    except ImportError:
        return None
    if compiled.source_digest() != jit.source_digest():
        _fall_back("from other sources than sparsekernel/solvers/_smo_numba.py")
        return None
    if compiled.cpu_digest() != jit.cpu_digest():
        _fall_back(f"for another CPU than this {jit.host_cpu()[0]}")
        return None
    return compiled


def _fall_back(why: str) -> None:
    warnings.warn(f"the ahead-of-time compiled SMO loops were built {why}: using numba's JIT, which compiles "
                  "them on first use (rebuild: pip install .)", RuntimeWarning, stacklevel=3)


def _by_row_type(name: str, compiled: ModuleType) -> Callable[..., Any]:
    """The entry point ``name`` of ``compiled``: one function, or one per kernel row type, picked by
    the dtype of the argument that holds the rows."""
    if hasattr(compiled, name):
        return getattr(compiled, name)
    f64, f32 = getattr(compiled, f"{name}_float64"), getattr(compiled, f"{name}_float32")
    params = list(inspect.signature(getattr(jit, name).py_func).parameters)
    position, in_tuple = next((params.index(p), t) for p, t in ROW_PARAMETERS.items() if p in params)

    def call(*args: Any) -> Any:
        rows = args[position][0] if in_tuple else args[position]
        return (f32 if rows.dtype == np.float32 else f64)(*args)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = getattr(jit, name).__doc__
    return call


_compiled = _extension()
AOT = _compiled is not None
_bound = {name: _by_row_type(name, _compiled) if AOT else getattr(jit, name) for name in jit.ENTRY_POINTS}

set_flags = _bound["set_flags"]
extremes = _bound["extremes"]
violation = _bound["violation"]
set_thresholds = _bound["set_thresholds"]
restore_order = _bound["restore_order"]
prefetch_candidates = _bound["prefetch_candidates"]
leave_compact = _bound["leave_compact"]
protect_pending = _bound["protect_pending"]
flush_G_bar = _bound["flush_G_bar"]
run_smo = _bound["run_smo"]
run_platt = _bound["run_platt"]
add_rows = _bound["add_rows"]
claim_slots = _bound["claim_slots"]
rbf_exponents = _bound["rbf_exponents"]
