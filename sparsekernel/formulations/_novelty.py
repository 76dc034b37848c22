"""Pieces shared by the one-class machines (Schölkopf's one-class SVM and SVDD)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..validation import check_param, fail
from ..errors import ValidationError
from ..solvers.standard_qp import StandardQP
from .machine import DUAL, STATIONARITY, Condition, KKTState, Machine, over_box

Array = NDArray[np.float64]


class NoveltyMachine(Machine):
    """Unsupervised: no targets; box 0 <= a_n <= 1/(nu N), sum_n a_n = 1."""

    task = "novelty"
    _hyper_names = ("nu",)
    #: per-point weights W_n (None: unweighted); a machine that takes them sets them
    sample_weight: Array | None = None

    def _check_targets(self, t: ArrayLike | None) -> None:
        if t is not None:
            raise ValidationError(f"t must be None for a one-class machine; got {type(t).__name__}")
        return None

    def _set_hyper(self, nu: float) -> None:
        nu = float(check_param("nu", nu))
        total = nu * (self.N if self.sample_weight is None else float(np.sum(self.sample_weight)))
        if not total >= np.finfo(np.float64).tiny:
            # nu N below the smallest normal double: the box 1/(nu N) overflows, and every tolerance in
            # LIBSVM's units (its multipliers sum to nu N) with it
            raise fail("nu", f"a number in (0, 1] with nu * N (N = {self.N}; nu times the sum of the sample "
                             f"weights where there are some) at least {np.finfo(np.float64).tiny:.3g}, so that "
                             f"the box 1/(nu N) is finite", nu)
        self.nu = nu

    @property
    def box(self) -> float:
        """Upper bound 1/(nu N) of every multiplier (C of SVDD)."""
        return 1.0 / (self.nu * self.N)

    @property
    def relative_weights(self) -> Array:
        """N W_n / sum_m W_m (ones when unweighted): the box of a_n is ``box`` times this."""
        if self.sample_weight is None:
            return np.ones(self.N)
        return self.N * self.sample_weight / float(np.sum(self.sample_weight))

    @property
    def box_n(self) -> Array:
        """The box of each multiplier: 1/(nu N), or with weights W_n / (nu sum_m W_m)."""
        return self.box * self.relative_weights

    def parameter_values(self) -> dict[str, Any]:
        return {"nu": self.nu, "1/(nu N)": self.box}

    def _box_and_sum(self, s: KKTState, source: str, variable: str) -> list[Condition]:
        """0 <= a_n <= 1/(nu N), and sum_n a_n = 1 (the stationarity in ``variable``)."""
        box_n = self.box_n
        return [
            Condition(source, DUAL, "0 <= a_n <= 1/(nu N)", np.maximum.reduce([-s.a, over_box(s.a, box_n, float(np.max(box_n))), 0 * s.a]),
                      float(np.max(box_n))),
            Condition(source, STATIONARITY, f"sum_n a_n = 1 (d/d {variable})", abs(float(np.sum(s.a)) - 1.0), 1.0),
        ]

    def _intercept(self, s: KKTState, source: str, text: str, b: float) -> Condition:
        """The Solution's intercept b against the one its certified scalar gives (``b``), in output units.

        The conditions read rho (R^2) and the decision function reads b: a Solution whose b disagrees
        with them (built by hand, or by ``dataclasses.replace``) predicts what nothing here certified.
        """
        return Condition(source, STATIONARITY, text, abs(s.b - b), self.output_scale)

    def _unit_sum_qp(self, scale: float, p: Array) -> StandardQP:
        return StandardQP(
            kernel=self.kernel, X=self.X, index=np.arange(self.N), y=np.ones(self.N), scale=scale,
            p=p, lower=np.zeros(self.N), upper=self.box_n, delta=1.0,
            nu_sum=None, gram=self.gram,
        )
