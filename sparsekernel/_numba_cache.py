"""Where numba keeps the loops its JIT compiles (where the ahead-of-time extension is missing or stale).

numba caches a ``cache=True`` function beside its source (``__pycache__``) or
in the user's cache folder (``$XDG_CACHE_HOME/numba`` or ``~/.cache/numba``),
and refuses to define the function at all ("no locator available") where
neither is writable: an install owned by root, run by a user whose home is
not writable (a container's ``nobody``), would fail at import, on every
command. There, and only where ``NUMBA_CACHE_DIR`` is not set, the cache goes
to a folder of this user's alone in the temporary directory instead (numba
unpickles its cache's index files: a folder another user made there first is
not used).
"""

from __future__ import annotations

import os
import stat
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
    """numba's user-wide cache folder by appdirs' rule on Linux (on macOS and Windows numba's is elsewhere,
    and the fallback is taken only where the package's folder is not writable either)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "numba"


def ensure_cache_dir() -> None:
    """Point numba's cache at ``<tmp>/sparsekernel-numba-<uid>`` where neither default is writable."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    package = Path(__file__).resolve().parent
    if _writable(package / "solvers" / "__pycache__") or _writable(_user_cache()):
        return
    folder = _private_folder(os.path.join(tempfile.gettempdir(),
                                          f"sparsekernel-numba-{getattr(os, 'getuid', lambda: 'user')()}"))
    os.environ["NUMBA_CACHE_DIR"] = folder            # read when numba is imported
    if "numba" in sys.modules:                          # imported already: its config was read then
        sys.modules["numba"].config.CACHE_DIR = folder


def _private_folder(folder: str) -> str:
    """``folder``, made (mode 0700) if missing, where it is this user's alone: a real folder this user owns
    that no one else may write; else a fresh private one (``tempfile.mkdtemp``, not kept between runs)."""
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        st = os.lstat(folder)
        mine = not hasattr(os, "getuid") or st.st_uid == os.getuid()
        if stat.S_ISDIR(st.st_mode) and mine and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            return folder
    except OSError:
        pass
    return tempfile.mkdtemp(prefix="sparsekernel-numba-")
