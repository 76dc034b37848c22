"""Old path of ``sparsekernel.solvers.rvm.design``, kept as a re-export for its importers."""

from .rvm.design import *  # noqa: F401,F403
from .rvm.design import __all__  # noqa: F401
