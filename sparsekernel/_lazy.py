"""Heavy dependencies, loaded on first use.

``cvxpy`` takes about a second to import, numba's compiled SMO loops another
few tenths; most users of the estimators never build a cvxpy problem, and
``import sparsekernel.errors`` needs neither. ``lazy_module(name)`` returns a
stand-in whose first attribute access imports the module by
``importlib.import_module`` (so Python's per-module import lock makes a first
use from several threads at once safe: the others wait for the import to
finish) and from then on forwards to it.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

__all__ = ["lazy_module", "cvxpy"]


class _LazyModule(ModuleType):
    """A module's stand-in: the module is imported on the first attribute access."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.__dict__["_lazy_target"] = name

    def _load(self) -> ModuleType:
        module = importlib.import_module(self.__dict__["_lazy_target"])
        self.__dict__.update({k: v for k, v in module.__dict__.items() if not k.startswith("__")})
        return module

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return getattr(self._load(), attr)

    def __dir__(self) -> list[str]:
        return dir(self._load())


def lazy_module(name: str) -> ModuleType:
    """A stand-in for module ``name`` that imports it on its first attribute access."""
    return _LazyModule(name)


cvxpy = lazy_module("cvxpy")
