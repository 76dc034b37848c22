"""scikit-learn compatible estimators over sparsekernel's machines.

- ``svm``: ``SVC``, ``NuSVC``, ``SVR``, ``NuSVR``, ``OneClassSVM`` (the SMO by
  default, any method of ``formulations.solve`` by ``solver=``);
- ``rvm``: ``RVR``, ``RVC`` and ``PoissonRVR`` (``solvers.rvm``: Gaussian, Bernoulli or softmax,
  and Poisson likelihoods), loaded on first use;
- ``probability``: Platt scaling (7.43) and the pairwise coupling of
  one-versus-one probabilities.
"""

from typing import Any

from .svm import SVC, SVR, NuSVC, NuSVR, OneClassSVM

__all__ = ["SVC", "NuSVC", "SVR", "NuSVR", "OneClassSVM", "RVR", "RVC", "PoissonRVR"]


def __getattr__(name: str) -> Any:
    """The RVM estimators on first use (PEP 562): the SVMs' users do not load the RVM."""
    if name in ("RVR", "RVC", "PoissonRVR"):
        from . import rvm

        return getattr(rvm, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
