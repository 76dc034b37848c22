"""BLAS thread limits through one threadpoolctl controller (its library scan is done once per process)."""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Iterator

__all__ = ["blas_threads", "limit_blas"]

_CONTROLLER: Any = None
#: per thread, the limits of the ``limit_blas`` blocks it is inside, innermost last
_ACTIVE = threading.local()


def _controller() -> Any:
    global _CONTROLLER
    if _CONTROLLER is None:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER


@contextlib.contextmanager
def limit_blas(limit: int | None) -> Iterator[None]:
    """A context manager limiting BLAS to ``limit`` threads (None: no limit).

    threadpoolctl's ``limit`` queries every library's state and builds its limiter object at each
    entry (about 16 us); a solve at N = 100 takes a few hundred. Here each BLAS library's count is
    read and set through the controller's ``lib_controllers`` only where it differs from ``limit``,
    and restored on exit. Inside a block of the same limit (a multiclass fit's pairs, each solve
    limiting BLAS) nothing is read or set: the enclosing block has set it. The blocks are counted per
    thread, and BLAS's count is the process's: another thread's block that ends meanwhile restores
    its own count, here as before this shortcut (then for one solve, now for the rest of the
    enclosing block): the threads BLAS uses, never a result, can differ from the limit then."""
    stack = _ACTIVE.__dict__.setdefault("limits", [])
    if limit is None or (stack and stack[-1] == limit):
        yield
        return
    libraries = [lib for lib in _controller().lib_controllers if lib.user_api == "blas"]
    changed = [(lib, lib.get_num_threads()) for lib in libraries]
    changed = [(lib, before) for lib, before in changed if before != limit]
    for lib, _ in changed:
        lib.set_num_threads(limit)
    stack.append(limit)
    try:
        yield
    finally:
        stack.pop()
        for lib, before in changed:
            lib.set_num_threads(before)


def blas_threads() -> int:
    """The number of threads BLAS uses now (1 when no BLAS library is found)."""
    return max((info["num_threads"] for info in _controller().info() if info["user_api"] == "blas"), default=1)
