"""Solvers: the standard-form QP, the SMO, the direct OSQP/Clarabel path, and the RVM.

Nothing here imports a machine: ``smo(qp)`` and ``direct.solve_standard_qp(qp)``
answer a ``StandardQP`` with a ``QPResult``, and each machine in
``formulations`` builds its own QP and maps the answer back.

``smo`` is the function (the module is ``sparsekernel.solvers.smo`` in
``sys.modules``: ``from sparsekernel.solvers.smo import SMOTrace`` works);
the RVM's entry points load on first use.
"""

from typing import Any

from .._numba_cache import ensure_cache_dir

ensure_cache_dir()  # before any of the numba loops below is defined

from .direct import solve_standard_qp  # noqa: E402
from .smo import smo  # noqa: E402
from .standard_qp import QPResult, StandardQP  # noqa: E402
from .warm_start import RegularisationPath  # noqa: E402

__all__ = ["StandardQP", "QPResult", "smo", "solve_standard_qp", "RegularisationPath", "rvm_regression", "rvm_classification",
           "rvm_poisson"]


def __getattr__(name: str) -> Any:
    """``rvm_regression``, ``rvm_classification`` and ``rvm_poisson`` on first use (PEP 562)."""
    if name in ("rvm_regression", "rvm_classification", "rvm_poisson"):
        from . import rvm

        return getattr(rvm, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
