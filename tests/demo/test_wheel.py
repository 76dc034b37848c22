"""The built wheel, installed outside the checkout, serves both demo pages and their scripts.

The editable install the other tests use reads the checkout, so it cannot see a file the wheel
leaves out. This test copies the tracked files to a temporary folder, builds the wheel there
(``pip wheel --no-deps``; pip fetches the build backend as in any build), installs it with
``--no-deps`` into a fresh venv that sees this venv's packages through a ``.pth`` line (so nothing
else is downloaded), starts ``sparsekernel demo`` from that venv in a folder outside the checkout,
and fetches ``/svm``, ``/rvm`` and every script and style sheet they name. Bounded: each step has
a timeout; about 30 s in all.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.wheel     # in the normal suite; -m "not wheel" leaves it out


def _run(*command: str | Path, timeout: float, **kwargs) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([str(c) for c in command], capture_output=True, text=True, timeout=timeout, **kwargs)
    assert result.returncode == 0, f"{command} failed:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"
    return result


def _tracked_copy(target: Path) -> None:
    """The files git tracks (what a clone holds), or, outside git, the tree less build outputs."""
    try:
        files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True,
                               timeout=30).stdout.decode().split("\0")
    except (OSError, subprocess.SubprocessError):
        shutil.copytree(ROOT, target, ignore=shutil.ignore_patterns(".git", ".venv", "build", "*.egg-info",
                                                                     "__pycache__"))
        return
    for name in filter(None, files):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def _clean_env() -> dict[str, str]:
    """This environment without what would point Python back at the checkout."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["PYTHONNOUSERSITE"] = "1"
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A venv outside the checkout with the built wheel installed; its bin folder."""
    work = tmp_path_factory.mktemp("wheel")
    source, wheels, venv = work / "source", work / "dist", work / "venv"
    _tracked_copy(source)
    # the package's files, not the compiled loops, are what this test checks: a pure build takes
    # seconds where compiling the loops ahead of time takes about two minutes (tests/solvers/test_aot.py)
    _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", wheels, source, timeout=180,
         env={**_clean_env(), "SPARSEKERNEL_NO_AOT": "1"})
    (wheel,) = wheels.glob("sparsekernel-*.whl")
    _run(sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", venv, timeout=60)
    # this venv's packages (numpy, scipy, cvxpy, numba, ...) behind the new venv's own: no downloads
    site = Path(_run(venv / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))",
                     timeout=30).stdout.strip())
    ours = {sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}
    (site / "zz_test_venv.pth").write_text("\n".join(sorted(ours)) + "\n")
    _run(sys.executable, "-m", "pip", "--python", venv / "bin" / "python", "install", "--no-deps", "-q", wheel,
         timeout=120, env=_clean_env())
    return venv / "bin"


def test_the_installed_package_is_the_wheel(installed: Path, tmp_path: Path) -> None:
    where = _run(installed / "python", "-c", "import sparsekernel; print(sparsekernel.__file__)", timeout=60,
                 cwd=tmp_path, env=_clean_env()).stdout.strip()
    assert Path(where).is_relative_to(installed.parent) and not Path(where).is_relative_to(ROOT), where


def test_the_wheel_serves_both_pages_and_their_scripts(installed: Path, tmp_path: Path) -> None:
    server = subprocess.Popen([str(installed / "sparsekernel"), "demo", "--no-browser"], cwd=tmp_path,
                              env=_clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              start_new_session=True)
    try:
        line = server.stdout.readline()                     # the address it announces
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert match, (line, server.poll())
        base = f"http://127.0.0.1:{match.group(1)}"
        for page, script in (("/svm", "/static/svm.js"), ("/rvm", "/static/rvm.js")):
            with urllib.request.urlopen(base + page, timeout=30) as response:
                assert response.status == 200
                html = response.read().decode()
            assets = re.findall(r'(?:src|href)="(/static/[^"]+)"', html)
            assert script in assets, (page, assets)
            for asset in assets:
                with urllib.request.urlopen(base + asset, timeout=30) as response:
                    assert response.status == 200 and response.read(), asset
    finally:
        os.killpg(server.pid, signal.SIGINT)                 # Ctrl-C: serve() closes; its workers end too
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=10)
        time.sleep(0.2)
