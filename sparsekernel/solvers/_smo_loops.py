"""The SMO's compiled entry points: built ahead of time at install, or numba's JIT without that.

Installing the package (``setup.py``) compiles the functions of
``_smo_numba.ENTRY_POINTS`` with numba.pycc into the extension
``_compiled`` (see ``_aot``, which also compiles the RVM's loops there), for
float64 and for float32 kernel rows, so that a fresh install never waits for
numba's compiler. This module binds each entry point to the extension's
function, chosen by the type of the kernel rows it is handed. It binds them
to ``_smo_numba``'s dispatchers instead (compiled on first use and cached by
numba) where the extension is missing, stale, built for another CPU, or
where ``SPARSEKERNEL_JIT=1`` asks for the JIT (``_aot.load``).

``AOT`` says which: True when the extension's functions are used.
"""

from __future__ import annotations

import inspect
from types import ModuleType
from typing import Any, Callable

import numpy as np

from . import _aot
from . import _smo_numba as jit

#: the parameters that hold kernel rows: the row cache (a tuple whose first member is the store) or the store
ROW_PARAMETERS = {"cache": True, "store": False}


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


_compiled = _aot.load()
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
add_point_rows = _bound["add_point_rows"]
claim_slots = _bound["claim_slots"]
rbf_exponents = _bound["rbf_exponents"]
exp_inplace = _bound["exp_inplace"]
exp32_inplace = _bound["exp32_inplace"]
