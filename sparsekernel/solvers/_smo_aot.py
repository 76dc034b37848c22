"""Ahead-of-time compilation of the SMO's entry points (numba.pycc), run by ``setup.py`` at install.

The extension ``_smo_compiled`` holds every function of ``_smo_numba.ENTRY_POINTS``
(what ``smo.py`` and ``kernel_cache.py`` call) for the argument types the solver
passes: its own buffers, all C-contiguous and writable, so one signature per
entry point, or two (``<name>_float64``, ``<name>_float32``) for those that
read kernel rows, which are float64 for N <= 1448 and float32 above. A pycc
function converts its arguments without numba's type dispatch (an array of
another layout or a same-sized dtype would be misread), so these signatures
must be exactly the ones the JIT compiles for; a test holds them to that.

Each export is a forwarder that calls the jitted function: pycc compiles the
forwarder, and numba compiles the function it calls, with its callees, from
the one source in ``_smo_numba`` and with that function's own options
(``rbf_exponents`` keeps its ``fastmath``). The machine code targets the
CPU model and features that numba's JIT targets on the building machine, so
that the extension computes what the JIT computes there, rounding included
(pycc's default, a generic x86-64, has no FMA: float32 kernel rows, and so
the iterates, would differ in their last bits, and the RBF rows be slower).
The extension also exports ``source_digest()`` and ``cpu_digest()``, digests
of the sources it was built from and of that CPU, so that a stale build (an
editable install edited since) or one for another CPU (a wheel carried to
another machine) is noticed at import and the JIT used instead.

This module is loaded by file at build time, without the package (whose
``__init__`` imports scipy and others that a build does not install): it
imports nothing from ``sparsekernel`` and gets ``_smo_numba`` as an argument.
"""

from __future__ import annotations

import inspect
from types import ModuleType
from typing import Any, Callable

from numba import types

#: the extension's module name, inside ``sparsekernel.solvers``
EXTENSION = "_smo_compiled"
#: kernel row types, by the suffix of the exports that read rows
ROW_TYPES = {"float64": types.float64, "float32": types.float32}


def _array(dtype: types.Type, ndim: int = 1) -> types.Array:
    return types.Array(dtype, ndim, "C")


F8, I8, I4 = _array(types.float64), _array(types.int64), _array(types.int32)
#: the tuples of ``_smo_numba``'s docstring, member by member (as smo.py builds them)
PROB = types.Tuple((F8, F8, F8, F8, I4, F8, F8, I4))          # y, p, lower, upper, index, QD, y0, index0
ST = types.Tuple((F8, F8, F8, I8, _array(types.int8)))        # a, v, G_bar, perm, flags
TRACE = types.Tuple((I8, I8, F8, F8, F8, F8, F8, F8))         # i, j, delta, L, H, eta, objective, violation


def _cache(rows: types.Type) -> types.Tuple:
    """store, slot_of, last_used, pend_slot, pend_coef, cbuf, cslot_of, cowner, ident, Xd."""
    return types.Tuple((_array(rows, 2), I8, I8, I8, F8, _array(rows), I8, I8, I4, _array(types.float64, 2)))


def argument_types(rows: types.Type) -> dict[str, tuple]:
    """The argument types of every entry point, for kernel rows of type ``rows``."""
    cache, f8, i8 = _cache(rows), types.float64, types.int64
    return {
        "set_flags": (PROB, ST, types.boolean),
        "extremes": (PROB, ST, i8),
        "violation": (f8, f8, f8, f8),
        "set_thresholds": (PROB, ST, I8, F8),
        "restore_order": (PROB, ST),
        "prefetch_candidates": (PROB, ST, I8, F8, I8, i8, I8, I8),
        "leave_compact": (cache, I8),
        "protect_pending": (cache, I8),
        "flush_G_bar": (PROB, ST, cache, I8),
        "run_smo": (PROB, ST, cache, I8, F8, TRACE),
        "run_platt": (PROB, ST, cache, I8, F8, TRACE),
        "add_rows": (I8, I8, F8, _array(rows, 2), F8, I4, F8, i8, i8, f8),
        "claim_slots": (I8, I8, I8, I8, I8, I8, i8),
        "rbf_exponents": (_array(types.float32, 2), I8, f8, _array(types.float32, 2), I8, _array(types.float32)),
    }


def exports() -> dict[str, tuple[str, tuple]]:
    """Export name -> (entry point, argument types): one export where the row type does not
    matter, ``<name>_<row type>`` for each row type where it does."""
    per_rows = {suffix: argument_types(rows) for suffix, rows in ROW_TYPES.items()}
    first = per_rows["float64"]
    out = {}
    for name, args in first.items():
        if all(table[name] == args for table in per_rows.values()):
            out[name] = (name, args)
        else:
            out.update({f"{name}_{suffix}": (name, table[name]) for suffix, table in per_rows.items()})
    return out


def _forwarder(dispatcher: Any) -> Callable:
    """A plain function that calls ``dispatcher`` with its own parameters (see the module docstring)."""
    params = ", ".join(inspect.signature(dispatcher.py_func).parameters)
    namespace = {"_jitted_": dispatcher}          # a name no parameter has (add_rows has a ``target``)
    exec(f"def forward({params}):\n    return _jitted_({params})\n", namespace)
    return namespace["forward"]


def _constant(value: int) -> Callable[[], int]:
    """A function that returns ``value`` (a digest, for the extension to carry)."""
    def constant() -> int:
        return value
    return constant


def _target_host_features() -> None:
    """Have pycc's code generator use the JIT's CPU features, not the CPU model's defaults.

    pycc takes a CPU model (``target_cpu``) and gives it the model's full feature
    set; the JIT passes the features the CPU reports, which a virtual machine may
    have trimmed (AVX-512 off on an AVX-512 model, say). Build-time only.
    """
    from numba.core.codegen import AOTCPUCodegen

    AOTCPUCodegen._customize_tm_features = lambda self: self._get_host_cpu_features()


def extension(jit: ModuleType, source_module: ModuleType) -> Any:
    """The setuptools Extension that compiles ``jit``'s entry points into ``EXTENSION``.

    ``source_module`` names the package the extension goes into (this module, loaded as
    ``sparsekernel.solvers._smo_aot``). Optional: without a C compiler the install goes on
    and the solver uses numba's JIT.
    """
    from numba.pycc import CC

    unmatched = set(jit.ENTRY_POINTS) ^ set(argument_types(types.float64))
    if unmatched:
        raise ValueError(f"entry points without argument types, or argument types of no entry point: {unmatched}")
    _target_host_features()
    cc = CC(EXTENSION, source_module=source_module)
    cc.target_cpu = jit.host_cpu()[0]
    for export, (name, args) in exports().items():
        cc.export(export, args)(_forwarder(getattr(jit, name)))
    cc.export("source_digest", types.int64())(_constant(jit.source_digest()))
    cc.export("cpu_digest", types.int64())(_constant(jit.cpu_digest()))
    return cc.distutils_extension(optional=True)
