"""Solvers: the standard-form QP, the direct OSQP/Clarabel path, the SMO and the RVM."""

from .rvm import rvm_classification, rvm_regression
from .standard_qp import StandardQP

__all__ = ["StandardQP", "rvm_regression", "rvm_classification"]
