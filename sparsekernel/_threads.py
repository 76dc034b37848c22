"""BLAS thread limits through one threadpoolctl controller (its library scan is done once per process)."""

from __future__ import annotations

from typing import Any

__all__ = ["blas_threads", "limit_blas"]

_CONTROLLER: Any = None


def _controller() -> Any:
    global _CONTROLLER
    if _CONTROLLER is None:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER


def limit_blas(limit: int | None) -> Any:
    """A context manager limiting BLAS to ``limit`` threads (None: no limit)."""
    return _controller().limit(limits=limit, user_api="blas")


def blas_threads() -> int:
    """The number of threads BLAS uses now (1 when no BLAS library is found)."""
    return max((info["num_threads"] for info in _controller().info() if info["user_api"] == "blas"), default=1)
