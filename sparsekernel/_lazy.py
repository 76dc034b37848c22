"""Heavy optional-at-import dependencies, loaded on first use.

``cvxpy`` takes about a second to import; most users of the estimators and
the solvers never build a cvxpy problem. The standard library's
``importlib.util.LazyLoader`` returns the module object at once and runs its
import on the first attribute access, so ``from sparsekernel._lazy import
cvxpy as cp`` costs nothing until ``cp.Variable`` (say) is used.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

__all__ = ["lazy_module", "cvxpy"]


def lazy_module(name: str) -> ModuleType:
    """``name``'s module, imported on its first attribute access (at once if already imported)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module


cvxpy = lazy_module("cvxpy")
