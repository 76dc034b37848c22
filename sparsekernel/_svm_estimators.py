"""Old path of ``sparsekernel.estimators.svm`` (kept so that existing imports work)."""

from .estimators.svm import SVC, SVR, NuSVC, NuSVR, OneClassSVM

__all__ = ["SVC", "NuSVC", "SVR", "NuSVR", "OneClassSVM"]
