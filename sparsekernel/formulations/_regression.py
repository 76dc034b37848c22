"""Pieces shared by the two regression machines (epsilon-SVR and nu-SVR).

Both have 2N multipliers (a, a_hat); in standard form z = (a, a_hat),
y = (+1, ..., -1, ...), index(i) = i mod N, so that Q = [[K, -K], [-K, K]] and
u = a - a_hat is the expansion coefficient vector of (7.64).
"""

from __future__ import annotations

from typing import Any

import cvxpy as cp
import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_real_targets, check_same_length
from .base import Formulation, Machine

Array = NDArray[np.float64]


class RegressionMachine(Machine):
    task = "regression"

    def _check_targets(self, t: ArrayLike | None) -> Array:
        v = check_real_targets(t, "t")
        check_same_length(self.X, v)
        return v

    def split(self, z: Array) -> tuple[Array, Array]:
        return z[: self.N], z[self.N:]

    def _doubled(self) -> tuple[NDArray[np.intp], Array]:
        index = np.concatenate([np.arange(self.N), np.arange(self.N)])
        y = np.concatenate([np.ones(self.N), -np.ones(self.N)])
        return index, y

    def tube_slacks(self, Ku: Array, b: float, epsilon: float) -> tuple[Array, Array]:
        """Smallest slacks allowed by (7.53) and (7.54): xi above the tube, xi_hat below."""
        y = Ku + b
        return np.maximum(0.0, self.t - y - epsilon), np.maximum(0.0, y - self.t - epsilon)

    def _tube_constraints(self, y: cp.Expression, epsilon: Any, xi: cp.Variable,
                          xi_hat: cp.Variable) -> dict[str, Any]:
        return {
            "(7.53)": self.t <= y + epsilon + xi,                        # (7.53)
            "(7.54)": self.t >= y - epsilon - xi_hat,                    # (7.54)
            "xi>=0": xi >= 0,
            "xi_hat>=0": xi_hat >= 0,
        }

    def _read_tube(self, f: Formulation) -> tuple[Array, dict[str, Any], tuple[Array, Array], Array]:
        v = f.variables
        z = np.concatenate([self._read_duals(f, "(7.53)"), self._read_duals(f, "(7.54)")])
        slacks = (np.asarray(v["xi"].value, dtype=np.float64), np.asarray(v["xi_hat"].value, dtype=np.float64))
        return z, {"b": float(v["b"].value)}, slacks, np.asarray(v["w"].value, dtype=np.float64)
