"""Solvers: the standard-form QP, the direct OSQP/Clarabel path, the SMO and the RVM."""

from .standard_qp import StandardQP

__all__ = ["StandardQP"]
