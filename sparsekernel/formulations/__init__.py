"""The seven machines of chapter 7, each with its primal and dual as cvxpy problems."""

from .base import FeatureSpace, Formulation, Machine
from .eps_svr import EpsilonSVR
from .hard_margin import HardMarginSVC
from .nu_svc import NuSVC
from .nu_svr import NuSVR
from .one_class import OneClassSVM
from .soft_margin import SoftMarginSVC
from .solution import Solution
from .svdd import SVDD

#: The machines by command-line name.
MACHINES = {
    cls.cli_name: cls
    for cls in (HardMarginSVC, SoftMarginSVC, NuSVC, EpsilonSVR, NuSVR, OneClassSVM, SVDD)
}

__all__ = [
    "Machine", "Formulation", "FeatureSpace", "Solution", "MACHINES",
    "HardMarginSVC", "SoftMarginSVC", "NuSVC", "EpsilonSVR", "NuSVR", "OneClassSVM", "SVDD",
]
