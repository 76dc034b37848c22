"""Old path of ``formulations.machine`` (kept so that existing imports work)."""

from .machine import (
    BOUND_TOL, CATEGORY_NAMES, DUAL, PRIMAL, SLACKNESS, SOLVER_DEFAULTS, STATIONARITY, Condition, FeatureSpace,
    Formulation, KKTState, Machine, flatten,
)

__all__ = [
    "Machine", "Formulation", "FeatureSpace", "Condition", "KKTState", "SOLVER_DEFAULTS", "flatten",
    "BOUND_TOL", "CATEGORY_NAMES", "STATIONARITY", "PRIMAL", "DUAL", "SLACKNESS",
]
