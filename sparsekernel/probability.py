"""Old path of ``sparsekernel.estimators.probability`` (kept so that existing imports work)."""

from .estimators.probability import Sigmoid, consistent_with, couple, fit_platt

__all__ = ["Sigmoid", "fit_platt", "couple", "consistent_with"]
