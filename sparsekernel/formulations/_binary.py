"""Pieces shared by the two-class machines (hard margin, soft margin, nu-SVC)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..validation import check_binary_targets, check_same_length
from .machine import STATIONARITY, Condition, KKTState, Machine, sum_scale

Array = NDArray[np.float64]


class BinaryMachine(Machine):
    """A two-class machine: t in {-1, +1}, coef = a * t, y(x) by (7.13)."""

    task = "classification"

    def _check_targets(self, t: ArrayLike | None) -> Array:
        v = check_binary_targets(t, "t")
        check_same_length(self.X, v)
        return v

    def margins(self, Ku: Array, b: float) -> Array:
        """t_n y(x_n) with y_n = (K u)_n + b."""
        return self.t * (Ku + b)

    def _balance(self, s: KKTState, tag: str, box: float = np.inf) -> Condition:
        """sum_n a_n t_n = 0, the stationarity of the Lagrangian in b (``sum_scale``)."""
        return Condition(tag, STATIONARITY, "sum_n a_n t_n = 0", abs(float(self.t @ s.a)), sum_scale(s.a, self.zero_box(box)))

    def _primal_common(self, f: Any) -> dict[str, Any]:
        v = f.variables
        return {"w": np.asarray(v["w"].value, dtype=np.float64), "b": float(v["b"].value)}
