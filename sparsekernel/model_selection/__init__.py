"""Model selection for the SVM estimators: a grid search whose C (or nu) paths are warm-started."""

from .grid_search import SVMGridSearchCV, path_groups

__all__ = ["SVMGridSearchCV", "path_groups"]
