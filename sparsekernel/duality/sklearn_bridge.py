"""LIBSVM's answers, through scikit-learn, in the notes' convention: ``formulations.libsvm``.

Kept here as the duality package's entry point (``duality.from_sklearn``); the
conversions themselves are declared by each machine with a LIBSVM twin.
"""

from ..formulations.libsvm import from_fitted, from_sklearn, machine_from_fitted, machine_from_sklearn, solve_with_libsvm

__all__ = ["from_sklearn", "machine_from_sklearn", "from_fitted", "machine_from_fitted", "solve_with_libsvm"]
