"""Ahead-of-time compilation of the SMO's and the RVM's entry points (numba.pycc), run by ``setup.py`` at install.

The extension ``_compiled`` holds every function of ``_smo_numba.ENTRY_POINTS``
(what ``smo.py`` and ``kernel_cache.py`` call) and, as ``rvm_<name>``, every
function of ``rvm/_loops.ENTRY_POINTS`` (what ``rvm/sequential.py`` and
``rvm/design.py`` call), for the argument types the solvers pass: their own
buffers, so one signature per entry point, or, for the SMO's that read
kernel rows, two (``<name>_float64``, ``<name>_float32``): rows are float64
for N <= 1448 and float32 above. A pycc function converts its arguments
without numba's type dispatch (an array of another layout or a same-sized
dtype would be misread), so these signatures must be exactly the ones the JIT
compiles for; a test holds them to that.

Each export is a forwarder that calls the jitted function: pycc compiles the
forwarder, and numba compiles the function it calls, with its callees, from
the one source in ``_smo_numba`` or ``rvm/_loops`` and with that function's
own options (``rbf_exponents`` keeps its ``fastmath``, the RVM's loops their
``error_model="numpy"``). The machine code targets the
CPU model and features that numba's JIT targets on the building machine, so
that the extension computes what the JIT computes there, rounding included
(pycc's default, a generic x86-64, has no FMA: float32 kernel rows, and so
the iterates, would differ in their last bits, and the RBF rows be slower).
The extension also exports ``source_digest()`` and ``cpu_digest()``, digests
of the sources it was built from (``BUILT_FROM``) and of that CPU, so that a
stale build (an editable install edited since) or one for another CPU (a
wheel carried to another machine) is noticed at import (``load``) and the JIT
used instead.

This module is loaded by file at build time, without the package (whose
``__init__`` imports scikit-learn and others that a build does not install): it
imports nothing from ``sparsekernel`` and gets the loops' modules as arguments.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import os
import warnings
from types import ModuleType
from typing import Any, Callable

from numba import types

#: the extension's module name, inside ``sparsekernel.solvers``
EXTENSION = "_compiled"
#: the files an ahead-of-time build compiles from, beside this one: the loops and their signatures
BUILT_FROM = ("_smo_numba.py", os.path.join("rvm", "_loops.py"), "_aot.py")
#: the prefix of the RVM's exports
RVM = "rvm_"
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
    """store, slot_of, last_used, pend_slot, pend_coef, cbuf, cslot_of, cowner, ident, Xd, owner, filled, Xt,
    sums, fill_slots."""
    f4 = types.float32
    return types.Tuple((_array(rows, 2), I8, I8, I8, F8, _array(rows), I8, I8, I4, _array(types.float64, 2),
                        I8, I8, _array(f4, 2), _array(f4), I8))


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
        "add_point_rows": (I8, _array(f8, 2), _array(rows, 2), _array(f8, 2)),
        "claim_slots": (I8, I8, I8, I8, I8, I8, i8),
        "rbf_exponents": (_array(types.float32, 2), I8, f8, _array(types.float32, 2), I8, _array(types.float32)),
        "exp_inplace": (F8,),
        "exp32_inplace": (_array(types.float32),),
    }


def rvm_argument_types() -> dict[str, tuple]:
    """The argument types of every entry point of ``rvm/_loops``, as ``rvm/sequential.py`` and
    ``rvm/design.py`` pass them: vectors and Sigma C-contiguous; the pool's Phi_P^T Phi_a buffer G,
    the tier's rows of it T, the triangular products W of them and BLAS syrk's U column-major (F).

    The JIT types an array that is both C- and F-contiguous (one row or one column, as the tier
    or G of a single function) as C; the F export reads it alike."""
    f8, i8, b1 = types.float64, types.int64, types.boolean
    B1, C2, F2 = _array(types.boolean), _array(f8, 2), types.Array(f8, 2, "F")
    return {
        "best_excluded_flat": (F8, F8, F8, B1, B1, I8, f8, f8, f8),
        "best_included_flat": (F8, C2, F8, f8),
        "symmetrize": (C2,),
        "shift": (C2, F8, F2, I8, F8, F8, i8, f8, f8, F8),
        "add_function": (F2, F2, I8, C2, C2, F8, F8, F8, i8, f8, f8, F8),
        "delete_function": (F2, F2, I8, C2, F8, F8, I8, F8, F8, i8, f8, F8),
        "aligned": (F2, i8, i8, F8, I8, f8),
        "moves_beta": (f8, f8, f8, f8),
        "beta_step_due": (f8, F8, I8, F8, C2, F8, f8, i8, f8, f8, f8, f8),
        "pool_steps": (F2, F2, I8, C2, F8, F8, I8, F8, F8, C2, F8, B1, B1, F8,     # G .. PhiTt
                       f8, i8, f8, f8, f8, f8, f8, f8, f8, f8, f8,                  # tt, N, beta .. beta_cost
                       i8, b1, i8, i8, i8, i8, F8, F8),                             # check_beta_from .. work
        "posterior_factor": (F2, I8, F8, f8, F8, f8, f8),
        "factors_over_rows": (F2, F2, F8, F8, F8, I8, f8, F8, F8),
        "tier_rows": (F8, F8, F8, B1, B1, f8, f8, i8),
        "gather_rows": (F2, I8, i8, F2),
        "assemble_gram": (F2, F8, f8, F8, b1, C2),
    }


def exports() -> dict[str, tuple[str, str, tuple]]:
    """Export name -> (loops, entry point, argument types), loops "smo" or "rvm": for the SMO one
    export where the row type does not matter, ``<name>_<row type>`` for each row type where it
    does; ``rvm_<name>`` for the RVM."""
    per_rows = {suffix: argument_types(rows) for suffix, rows in ROW_TYPES.items()}
    first = per_rows["float64"]
    out = {}
    for name, args in first.items():
        if all(table[name] == args for table in per_rows.values()):
            out[name] = ("smo", name, args)
        else:
            out.update({f"{name}_{suffix}": ("smo", name, table[name]) for suffix, table in per_rows.items()})
    out.update({f"{RVM}{name}": ("rvm", name, args) for name, args in rvm_argument_types().items()})
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


def _digest(parts: list[bytes]) -> int:
    """56 bits of the sha256 of ``parts``: an int64 for the extension to return."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part)
    return int.from_bytes(digest.digest()[:7], "little")


def source_digest() -> int:
    """Digest of the BUILT_FROM files as they are now."""
    here = os.path.dirname(os.path.abspath(__file__))
    parts = []
    for name in BUILT_FROM:
        with open(os.path.join(here, name), "rb") as f:
            parts.append(f.read())
    return _digest(parts)


def host_cpu() -> tuple[str, str]:
    """The CPU model and features numba's JIT compiles for here (NUMBA_CPU_NAME and
    NUMBA_CPU_FEATURES included): the ahead-of-time build targets the same."""
    import llvmlite.binding as ll
    from numba.core import config
    from numba.core.codegen import get_host_cpu_features

    return (config.CPU_NAME or ll.get_host_cpu_name(), config.CPU_FEATURES or get_host_cpu_features())


def cpu_digest() -> int:
    """Digest of ``host_cpu()``."""
    return _digest([part.encode() for part in host_cpu()])


def extension(loops: dict[str, ModuleType], source_module: ModuleType) -> Any:
    """The setuptools Extension that compiles the entry points of ``loops`` (``_smo_numba`` as
    "smo", ``rvm/_loops`` as "rvm") into ``EXTENSION``.

    ``source_module`` names the package the extension goes into (this module, loaded as
    ``sparsekernel.solvers._aot``). Optional: without a C compiler the install goes on
    and the solvers use numba's JIT.
    """
    from numba.pycc import CC

    for key, table in (("smo", argument_types(types.float64)), ("rvm", rvm_argument_types())):
        unmatched = set(loops[key].ENTRY_POINTS) ^ set(table)
        if unmatched:
            raise ValueError(f"{key}: entry points without argument types, or argument types of no entry point: "
                             f"{unmatched}")
    _target_host_features()
    cc = CC(EXTENSION, source_module=source_module)
    cc.target_cpu = host_cpu()[0]
    for export, (key, name, args) in exports().items():
        cc.export(export, args)(_forwarder(getattr(loops[key], name)))
    cc.export("source_digest", types.int64())(_constant(source_digest()))
    cc.export("cpu_digest", types.int64())(_constant(cpu_digest()))
    return cc.distutils_extension(optional=True)


_loaded: list = []


def _extension() -> ModuleType | None:
    """The ahead-of-time extension, when it is there, current and wanted: not where

    - it is missing (a source checkout that was never built, or an install without a C compiler),
    - it was built from other sources than the BUILT_FROM files beside it (an editable install
      edited since: rebuild with ``pip install -e .``), or for another CPU than this one (a wheel
      built elsewhere), with a warning,
    - or ``SPARSEKERNEL_JIT=1`` asks for the JIT (numba's debugging tools need it).
    """
    if os.environ.get("SPARSEKERNEL_JIT", "0") not in ("", "0"):
        return None
    try:
        compiled = importlib.import_module(f"{__package__}.{EXTENSION}")
    except ImportError:
        return None
    if compiled.source_digest() != source_digest():
        _fall_back("from other sources than " + ", ".join(f"sparsekernel/solvers/{name}" for name in BUILT_FROM))
        return None
    if compiled.cpu_digest() != cpu_digest():
        _fall_back(f"for another CPU than this {host_cpu()[0]}")
        return None
    return compiled


def _fall_back(why: str) -> None:
    warnings.warn(f"the ahead-of-time compiled SMO and RVM loops were built {why}: using numba's JIT, which "
                  "compiles them on first use (rebuild: pip install .)", RuntimeWarning, stacklevel=4)


def load() -> ModuleType | None:
    """``_extension()``, looked up once per process (the SMO's and the RVM's bindings share it)."""
    if not _loaded:
        _loaded.append(_extension())
    return _loaded[0]
