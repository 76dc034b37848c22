"""Progress of a command-line run on stderr: the step in hand, a spinner and the time it has taken.

Shown with ``rich`` while stderr is a terminal and ``--quiet`` is not given;
otherwise every call is a no-op, so that a pipe or a log file receives only
the command's answer. Each finished step stays on screen with its time.
"""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import Any

__all__ = ["Progress"]


class Progress:
    """Named steps of one command, each reported on stderr as it starts and with its time when it ends.

    Use as a context manager; ``step(text)`` ends the previous step and starts the next.
    """

    def __init__(self, quiet: bool = False) -> None:
        self.live = not quiet and sys.stderr.isatty()
        self._bar: Any = None
        self._task: Any = None
        self._text = ""
        self._start = 0.0

    def __enter__(self) -> "Progress":
        return self

    def step(self, text: str) -> None:
        """Finish the step in hand (its time stays on screen) and show ``text`` as the next one."""
        if not self.live:
            return
        if self._bar is None:
            from rich.console import Console
            from rich.progress import Progress as Bar, SpinnerColumn, TextColumn, TimeElapsedColumn

            self._bar = Bar(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                            console=Console(file=sys.stderr, soft_wrap=True), transient=True,
                            redirect_stdout=False)          # stdout is the answer's, even mid-step
            self._bar.start()
            self._task = self._bar.add_task(text, total=None)
        self._bar.reset(self._task, description=text)
        self._finish()
        self._text, self._start = text, time.perf_counter()

    def note(self, text: str) -> None:
        """A line on stderr above the spinner (a time measured apart, a remark)."""
        if self._bar is not None:
            self._bar.console.print(f"  {text}", highlight=False, markup=False)

    def _finish(self) -> None:
        if self._text:
            self.note(f"{self._text}: {time.perf_counter() - self._start:.1f} s")
            self._text = ""

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        if self._bar is not None:
            if kind is None:
                self._finish()
            self._bar.stop()
