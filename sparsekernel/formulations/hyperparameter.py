"""The cvxpy Parameters of a machine's formulations, checked as the machine checks its hyperparameters.

A formulation's Parameters (C, nu, epsilon, and derived ones such as 1/(nu N)) are
nonnegative cvxpy Parameters, so that a re-solve with a new value does not
recompile. cvxpy refuses a negative value as it is assigned, in words that name
neither the Parameter nor the value ('Parameter value must be nonnegative.');
here the value is checked first, against the hyperparameter's own domain where it
has one (``validation.DOMAINS``: C positive, nu in (0, 1], ...), else as finite and
nonnegative, and refused with the one message template (the name, the domain, the
value). Imported on first use: it imports cvxpy.
"""

from __future__ import annotations

from typing import Any

import cvxpy as cp
import numpy as np

from ..validation import DOMAINS, check_param, fail

__all__ = ["HyperParameter", "hyperparameter"]

#: the domain of a Parameter that no hyperparameter's domain names (a derived one, or per-point boxes)
DERIVED_DOMAIN = "finite and >= 0 (a nonnegative cvxpy Parameter)"


class HyperParameter(cp.Parameter):
    """A nonnegative cvxpy Parameter whose assigned values are checked (module docstring); ``label`` is its
    key in the formulation's ``parameters`` (the name the message gives; cvxpy's name drops its spaces)."""

    label: str = ""

    @property
    def value(self) -> Any:
        return cp.Parameter.value.fget(self)

    @value.setter
    def value(self, val: Any) -> None:
        cp.Parameter.value.fset(self, checked(self.label or self.name(), val))


def hyperparameter(key: str, value: Any) -> HyperParameter:
    """The formulation's Parameter ``key`` (of the shape of ``value``), holding ``value``."""
    parameter = HyperParameter(np.shape(value), nonneg=True, name=key.replace(" ", ""))
    parameter.label = key
    parameter.value = value
    return parameter


def checked(name: str, value: Any) -> Any:
    """``value`` where it lies in the domain of the hyperparameter ``name`` (a scalar of ``validation.DOMAINS``),
    or is finite and nonnegative; None (a cleared value) as it is. Raises a ValidationError naming ``name``."""
    if value is None:
        return value
    if name in DOMAINS and np.ndim(value) == 0:
        check_param(name, value)
        return value
    try:
        values = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise fail(name, DERIVED_DOMAIN, value) from None
    if not (np.all(np.isfinite(values)) and np.all(values >= 0.0)):
        raise fail(name, DERIVED_DOMAIN, value)
    return value
