"""Where numba keeps the loops its JIT compiles (where the ahead-of-time extension is missing or stale).

numba caches a ``cache=True`` function beside its source (``__pycache__``) or
in the user's cache folder (``$XDG_CACHE_HOME/numba`` or ``~/.cache/numba``),
and refuses to define the function at all ("no locator available") where
neither is writable: an install owned by root, run by a user whose home is
not writable (a container's ``nobody``), would fail at import, on every
command. There, and only where ``NUMBA_CACHE_DIR`` is not set, the cache goes
to a folder of this user's in the temporary directory instead.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path


def _writable(folder: Path) -> bool:
    """Whether ``folder`` could be created (its nearest existing parent) and written."""
    try:
        for candidate in (folder, *folder.parents):
            if candidate.exists():
                return candidate.is_dir() and os.access(candidate, os.W_OK | os.X_OK)
    except OSError:                                   # a parent this user may not even look into
        return False
    return False


def _user_cache() -> Path:
    """numba's user-wide cache folder (appdirs' rule on Linux; ~/Library/Caches and %LOCALAPPDATA% alike)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "numba"


def ensure_cache_dir() -> None:
    """Point numba's cache at ``<tmp>/sparsekernel-numba-<uid>`` where neither default is writable."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    package = Path(__file__).resolve().parent
    if _writable(package / "solvers" / "__pycache__") or _writable(_user_cache()):
        return
    folder = os.path.join(tempfile.gettempdir(), f"sparsekernel-numba-{getattr(os, 'getuid', lambda: 'user')()}")
    os.environ["NUMBA_CACHE_DIR"] = folder            # read when numba is imported
    if "numba" in sys.modules:                          # imported already: its config was read then
        sys.modules["numba"].config.CACHE_DIR = folder
