"""Where numba caches its JIT loops when neither of its default folders is writable (_numba_cache)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import numba

from sparsekernel import _numba_cache


def _unset(monkeypatch) -> None:
    """NUMBA_CACHE_DIR absent here and restored after the test (setenv records its value first; a
    delenv of an absent variable records nothing, and what ensure_cache_dir sets would outlive the test)."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", "recorded")
    monkeypatch.delenv("NUMBA_CACHE_DIR")


def test_unwritable_defaults_send_the_cache_to_a_folder_in_tmp(monkeypatch) -> None:
    _unset(monkeypatch)
    monkeypatch.setattr(_numba_cache, "_writable", lambda folder: False)
    monkeypatch.setattr(numba.config, "CACHE_DIR", "")
    _numba_cache.ensure_cache_dir()
    folder = os.environ["NUMBA_CACHE_DIR"]
    assert os.path.dirname(folder) == tempfile.gettempdir() and "sparsekernel-numba-" in folder
    assert numba.config.CACHE_DIR == folder             # numba was imported already: its config follows


def test_a_writable_default_or_a_users_choice_is_left_alone(monkeypatch) -> None:
    _unset(monkeypatch)
    monkeypatch.setattr(_numba_cache, "_writable", lambda folder: True)
    _numba_cache.ensure_cache_dir()
    assert "NUMBA_CACHE_DIR" not in os.environ
    monkeypatch.setenv("NUMBA_CACHE_DIR", "/somewhere/chosen")
    monkeypatch.setattr(_numba_cache, "_writable", lambda folder: False)
    _numba_cache.ensure_cache_dir()
    assert os.environ["NUMBA_CACHE_DIR"] == "/somewhere/chosen"


def test_a_folder_under_one_this_user_cannot_enter_is_not_writable(tmp_path) -> None:
    assert _numba_cache._writable(tmp_path / "new" / "deeper")          # created on demand
    blocker = tmp_path / "file.txt"
    blocker.write_text("x")
    assert not _numba_cache._writable(blocker / "below")


def test_the_command_line_starts_with_no_writable_cache_folder(tmp_path) -> None:
    """numba refuses to define a cache=True function where no cache folder is writable ("no locator
    available"): every command, --version included, failed at import (seen as the user nobody with an
    unreadable HOME). Here HOME points at a file, so no ~/.cache can be made, and the package's own folder
    is reported unwritable."""
    home = tmp_path / "home"
    home.write_text("not a folder")
    code = ("from sparsekernel import _numba_cache as c; import os, pathlib; "
            "root = pathlib.Path(c.__file__).resolve().parent; w = c._writable; "
            "c._writable = lambda f: False if root in (f, *f.parents) else w(f); "
            "from sparsekernel.cli import main; "
            "print(os.environ.get('NUMBA_CACHE_DIR', '')); raise SystemExit(main(['--version']))")
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME")}
    env["HOME"] = str(home)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "sparsekernel-numba-" in done.stdout.splitlines()[0]


def test_a_folder_another_user_could_write_is_not_used(tmp_path, monkeypatch) -> None:
    """numba unpickles its cache's index files: a shared folder, writable by others (or not this user's),
    is replaced by a fresh private one."""
    shared = tmp_path / "sparsekernel-numba-shared"
    shared.mkdir(mode=0o777)
    os.chmod(shared, 0o777)
    chosen = _numba_cache._private_folder(str(shared))
    assert chosen != str(shared) and os.stat(chosen).st_mode & 0o777 == 0o700
    private = tmp_path / "mine"
    assert _numba_cache._private_folder(str(private)) == str(private)
    assert os.stat(private).st_mode & 0o077 == 0
