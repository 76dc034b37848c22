"""The seven machines of chapter 7, each whole in one module; the public base; the one dispatch.

- ``machine``: ``Machine`` (the public base a new machine subclasses), ``Formulation``, ``FeatureSpace``;
- ``solve``: ``solve(machine, method)``, the one dispatch by method name and its status policy;
- ``libsvm``: LIBSVM through scikit-learn, by what each machine declares of its twin;
- one module per machine: ``hard_margin``, ``soft_margin``, ``nu_svc``, ``eps_svr``, ``nu_svr``,
  ``one_class``, ``svdd``.
"""

from .eps_svr import EpsilonSVR
from .hard_margin import HardMarginSVC
from .machine import FeatureSpace, Formulation, Machine
from .nu_svc import NuSVC
from .nu_svr import NuSVR
from .one_class import OneClassSVM
from .soft_margin import SoftMarginSVC
from .solution import Solution
from .solve import matched_tol, solve
from .svdd import SVDD

#: The machines by command-line name.
MACHINES = {
    cls.cli_name: cls
    for cls in (HardMarginSVC, SoftMarginSVC, NuSVC, EpsilonSVR, NuSVR, OneClassSVM, SVDD)
}

__all__ = [
    "Machine", "Formulation", "FeatureSpace", "Solution", "MACHINES", "solve", "matched_tol",
    "HardMarginSVC", "SoftMarginSVC", "NuSVC", "EpsilonSVR", "NuSVR", "OneClassSVM", "SVDD",
]
