"""scikit-learn compatible estimators over sparsekernel's machines.

- ``svm``: ``SVC``, ``NuSVC``, ``SVR``, ``NuSVR``, ``OneClassSVM`` (the SMO by
  default, any method of ``formulations.solve`` by ``solver=``);
- ``rvm``: ``RVR`` and ``RVC`` (``solvers.rvm``);
- ``probability``: Platt scaling (7.43) and the pairwise coupling of
  one-versus-one probabilities.
"""

from .rvm import RVC, RVR
from .svm import SVC, SVR, NuSVC, NuSVR, OneClassSVM

__all__ = ["SVC", "NuSVC", "SVR", "NuSVR", "OneClassSVM", "RVR", "RVC"]
