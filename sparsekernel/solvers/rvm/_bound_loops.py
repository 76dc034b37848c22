"""The RVM's compiled entry points: built ahead of time at install, or numba's JIT without that.

Installing the package compiles the functions of ``_loops.ENTRY_POINTS`` with
numba.pycc into the extension ``sparsekernel.solvers._compiled``, beside the
SMO's (see ``solvers/_aot``), so that a fresh install never waits for
numba's compiler. This module binds each entry point to the extension's
function ``rvm_<name>``, or to ``_loops``' dispatcher (compiled on first use
and cached by numba) where the extension is missing, stale, built for
another CPU, or where ``SPARSEKERNEL_JIT=1`` asks for the JIT (the same
rules as for the SMO, ``_aot.load``). The extension's functions do not
dispatch on their arguments' types: the callers pass exactly the types of
``_aot.rvm_argument_types`` (contiguous float64, int64 and boolean arrays of
their own: C order, except the F-ordered pool buffer, tier, W and syrk result).

``AOT`` says which: True when the extension's functions are used.
"""

from __future__ import annotations

from .. import _aot
from . import _loops as jit

_compiled = _aot.load()
AOT = _compiled is not None
_bound = {name: getattr(_compiled, f"{_aot.RVM}{name}") if AOT else getattr(jit, name) for name in jit.ENTRY_POINTS}

add_function = _bound["add_function"]
aligned = _bound["aligned"]
assemble_gram = _bound["assemble_gram"]
best_excluded_flat = _bound["best_excluded_flat"]
best_included_flat = _bound["best_included_flat"]
beta_step_due = _bound["beta_step_due"]
delete_function = _bound["delete_function"]
factors_over_rows = _bound["factors_over_rows"]
gather_rows = _bound["gather_rows"]
moves_beta = _bound["moves_beta"]
pool_steps = _bound["pool_steps"]
posterior_factor = _bound["posterior_factor"]
shift = _bound["shift"]
symmetrize = _bound["symmetrize"]
tier_rows = _bound["tier_rows"]
