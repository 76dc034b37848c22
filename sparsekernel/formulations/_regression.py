"""Pieces shared by the two regression machines (epsilon-SVR and nu-SVR).

Both have 2N multipliers (a, a_hat); in standard form z = (a, a_hat),
y = (+1, ..., -1, ...), index(i) = i mod N, so that Q = [[K, -K], [-K, K]] and
u = a - a_hat is the expansion coefficient vector of (7.64).
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._lazy import cvxpy as cp
from ..validation import check_real_targets, check_same_length
from .machine import (_positive, DUAL, PRIMAL, SLACKNESS, STATIONARITY, Condition, Formulation, KKTState, Machine,
                      multiplier_scale, over_box, sum_scale)

Array = NDArray[np.float64]

#: The targets' spread, over their size, below which they are all equal but for rounding (as ``kernel_spread``).
EQUAL_TARGETS = 1e-14


class RegressionMachine(Machine):
    task = "regression"

    def _check_targets(self, t: ArrayLike | None) -> Array:
        v = check_real_targets(t, "t")
        check_same_length(self.X, v)
        return v

    @cached_property
    def output_scale(self) -> float:
        """The targets' standard deviation (their largest size where they are all equal, else 1):
        the outputs approximate the targets, their mean taken up by b.

        Targets all equal have a standard deviation of the rounding of their mean (5.6e-17 for ten
        0.3s), not 0: a spread below ``EQUAL_TARGETS`` of their size counts as none.
        """
        size = _positive(float(np.max(np.abs(self.t))))
        spread = float(np.std(self.t))
        return spread if spread > EQUAL_TARGETS * size and np.isfinite(spread) else size

    def split(self, z: Array) -> tuple[Array, Array]:
        return z[: self.N], z[self.N:]

    @staticmethod
    def _split_coef(coef: Array) -> Array:
        """(a, a_hat) from LIBSVM's dual_coef_ = a_n - a_hat_n (at most one of the two is non-zero)."""
        return np.concatenate([np.maximum(coef, 0.0), np.maximum(-coef, 0.0)])

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

    def _tube_conditions(self, s: KKTState, box_n: Any, epsilon: float, box_tags: tuple[str, str],
                         source: str, box_name: str = "C") -> list[Condition]:
        """(7.53)-(7.54) with their slacks, (7.65)-(7.68), a_n a_hat_n = 0, (7.57) and the box
        (``box_n``: one number or one per point)."""
        box = float(np.max(box_n))                                            # the box's scale
        y = s.g + s.b                                                         # y(x_n)
        size = self.output_scale
        a, a_hat, xi, xi_hat = s.a, s.a_hat, s.xi, s.xi_hat
        largest = float(np.max(np.abs(s.z), initial=0.0))                    # the multipliers' size
        scale = multiplier_scale(s.z, self.zero_box(box), size, 2.0 * max(epsilon, 0.0))  # of the rows a_n r_n: r_n <= 2 epsilon inside
        return [
            Condition(box_tags[0], DUAL, f"0 <= a_n <= {box_name}", np.maximum.reduce([-a, over_box(a, box_n, box, largest), 0 * a]), box),
            Condition(box_tags[1], DUAL, f"0 <= a_hat_n <= {box_name}",
                      np.maximum.reduce([-a_hat, over_box(a_hat, box_n, box, largest), 0 * a]), box),
            Condition("(7.53)", PRIMAL, "y_n + epsilon + xi_n - t_n >= 0",
                      np.maximum(0.0, self.t - y - epsilon - xi), size),
            Condition("(7.54)", PRIMAL, "t_n - y_n + epsilon + xi_hat_n >= 0",
                      np.maximum(0.0, y - self.t - epsilon - xi_hat), size),
            Condition(source, PRIMAL, "xi_n >= 0 and xi_hat_n >= 0", np.maximum.reduce([-xi, -xi_hat, 0 * xi]), size),
            Condition("(7.65)", SLACKNESS, "a_n (epsilon + xi_n + y_n - t_n) = 0",
                      np.abs(a * (epsilon + xi + y - self.t)), scale),
            Condition("(7.66)", SLACKNESS, "a_hat_n (epsilon + xi_hat_n - y_n + t_n) = 0",
                      np.abs(a_hat * (epsilon + xi_hat - y + self.t)), scale),
            Condition("(7.67)", SLACKNESS, f"({box_name} - a_n) xi_n = 0", np.abs((box_n - a) * xi), box * size),
            Condition("(7.68)", SLACKNESS, f"({box_name} - a_hat_n) xi_hat_n = 0",
                      np.abs((box_n - a_hat) * xi_hat), box * size),
            # Result 7.9 (ii): (7.65) + (7.66) give min(a_n, a_hat_n) (2 epsilon + xi_n + xi_hat_n) = 0,
            # so a point carries both multipliers only if epsilon = 0
            Condition("Result 7.9", SLACKNESS, "a_n a_hat_n = 0: min(a_n, a_hat_n) 2 epsilon = 0",
                      np.abs(np.minimum(a, a_hat)) * 2.0 * max(epsilon, 0.0), scale),  # |.|: a wrong sign too
            self._stationarity_w(s, "(7.57)", "w = sum_n (a_n - a_hat_n) phi(x_n)"),
        ]

    def _sum_condition(self, s: KKTState, tag: str, box: float) -> Condition:
        """sum_n (a_n - a_hat_n) = 0, the stationarity in b (``sum_scale``)."""
        return Condition(tag, STATIONARITY, "sum_n (a_n - a_hat_n) = 0", abs(float(np.sum(s.u))), sum_scale(s.z, self.zero_box(box)))

    def _read_tube(self, f: Formulation) -> tuple[Array, dict[str, Any], tuple[Array, Array], Array]:
        v = f.variables
        z = np.concatenate([self._read_duals(f, "(7.53)"), self._read_duals(f, "(7.54)")])
        slacks = (np.asarray(v["xi"].value, dtype=np.float64), np.asarray(v["xi_hat"].value, dtype=np.float64))
        return z, {"b": float(v["b"].value)}, slacks, np.asarray(v["w"].value, dtype=np.float64)
