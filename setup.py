"""Build hook beside pyproject.toml: the SMO's and the RVM's loops compiled ahead of time (numba.pycc).

Everything else about the package is in pyproject.toml. This adds the optional
extension ``sparsekernel.solvers._compiled`` (see
``sparsekernel/solvers/_aot.py``); without it (no C compiler, or one
that fails) the package still installs and compiles its loops with numba's
JIT on first use.
"""

import atexit
import importlib.util
import os
import shutil
import sys
import tempfile

# numba compiles the forwarded functions just in time while building: an empty cache of its own
# keeps cached callees (object code, which cannot be linked into the extension) out of the build
# and leaves no cache files in the source tree. Set before numba is imported.
_cache_dir = tempfile.mkdtemp(prefix="sparsekernel-build-numba-")
atexit.register(shutil.rmtree, _cache_dir, ignore_errors=True)
os.environ["NUMBA_CACHE_DIR"] = _cache_dir

from setuptools import setup  # noqa: E402

SOLVERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sparsekernel", "solvers")


def _load(name):
    """``sparsekernel.solvers.<name>`` (``rvm._loops``, say) from its file alone: the package's
    ``__init__`` imports scikit-learn and others, which the build environment does not have."""
    path = os.path.join(SOLVERS, *name.split(".")) + ".py"
    spec = importlib.util.spec_from_file_location(f"sparsekernel.solvers.{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _extensions():
    """The compiled loops' extension; none where pycc finds no C compiler, where numba has no pycc
    any more (pending deprecation since numba 0.57) or where ``SPARSEKERNEL_NO_AOT=1`` asks for a
    build without it: the JIT will do."""
    if os.environ.get("SPARSEKERNEL_NO_AOT", "0") not in ("", "0"):  # a pure build: the JIT on first use
        print("sparsekernel: SPARSEKERNEL_NO_AOT is set; not compiling the loops ahead of time", file=sys.stderr)
        return []
    aot = _load("_aot")
    try:
        return [_survivable(aot.extension({"smo": _load("_smo_numba"), "rvm": _load("rvm._loops")}, aot))]
    except (ImportError, RuntimeError) as error:    # RuntimeError: pycc's "... without the compiler ... present"
        print(f"sparsekernel: not compiling the SMO's and the RVM's loops ahead of time ({error}); numba's JIT will "
              "compile them on first use", file=sys.stderr)
        return []


def _survivable(extension):
    """The extension with any failure of numba's compile (a typing or LLVM error, say) turned into the
    CompileError that setuptools lets an optional extension survive: the install goes on without it,
    and the loops are compiled by the JIT on first use."""
    from setuptools.errors import CompileError

    prepare = extension._prepare_object_files          # pycc's step that runs numba's compiler

    def guarded(build_ext):
        try:
            prepare(build_ext)
        except Exception as error:
            raise CompileError(f"numba.pycc could not compile the loops ({type(error).__name__}: {error}); "
                               "numba's JIT will compile them on first use") from error

    extension._prepare_object_files = guarded
    return extension


setup(ext_modules=_extensions())
