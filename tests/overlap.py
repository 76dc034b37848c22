"""Two threads whose blocks overlap, the first to start ending first: the order in which
``warnings.catch_warnings`` left one block's filters in the process for good."""

from __future__ import annotations

import threading
import warnings
from typing import Any, Callable


class Overlap:
    """``blocking(original)`` wraps a call so that thread "first" waits inside it until "second" is inside
    too, and "second" waits there until "first" has ended; ``run(work)`` runs ``work`` in both threads
    and returns the exceptions they raised and whether the process's warnings filters came back as they
    were."""

    def __init__(self) -> None:
        self.first_in, self.second_in, self.first_done = threading.Event(), threading.Event(), threading.Event()

    def wait_inside(self) -> None:
        """Called inside the block: the first thread waits for the second, the second for the first's end."""
        first = threading.current_thread().name == "first"
        (self.first_in if first else self.second_in).set()
        (self.second_in if first else self.first_done).wait(5)

    def run(self, work: Callable[[], Any]) -> tuple[list[BaseException], bool]:
        errors: list[BaseException] = []

        def target() -> None:
            try:
                work()
            except Exception as exc:                      # pragma: no cover (the caller's assertion names it)
                errors.append(exc)
            finally:
                if threading.current_thread().name == "first":
                    self.first_done.set()

        filters = list(warnings.filters)
        first, second = threading.Thread(target=target, name="first"), threading.Thread(target=target, name="second")
        first.start()
        assert self.first_in.wait(5)
        second.start()
        first.join(10)
        second.join(10)
        return errors, warnings.filters == filters
