"""scikit-learn compatible estimators: SVC, NuSVC, SVR, NuSVR, OneClassSVM (and the RVM's RVR, RVC)."""

from ._svm_estimators import SVC, SVR, NuSVC, NuSVR, OneClassSVM

__all__ = ["SVC", "NuSVC", "SVR", "NuSVR", "OneClassSVM"]
