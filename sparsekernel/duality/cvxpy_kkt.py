"""``kkt``: the KKT status of any solved cvxpy problem.

cvxpy's conventions, for the problem in minimisation form (a ``Maximize(g)``
is solved as ``Minimize(-g)`` and keeps that problem's dual values):

================================  ==========================  ===================
constraint                        Lagrangian term             multiplier domain
================================  ==========================  ===================
``lhs <= rhs`` (``Inequality``)   + lambda^T (lhs - rhs)      lambda >= 0
``lhs == rhs`` (``Equality``)     + nu^T (lhs - rhs)          nu free
``NonNeg(x)`` (x >= 0)            - lambda^T x                lambda >= 0
``NonPos(x)`` (x <= 0)            + lambda^T x                lambda >= 0
``SOC(t, X)`` (||X_i|| <= t_i)    - (mu_i t_i + lam_i^T X_i)  ||lam_i|| <= mu_i
================================  ==========================  ===================

The report has, per variable, the stationarity of the Lagrangian (the
objective's gradient plus each constraint's gradient times its multiplier,
from cvxpy's ``Expression.grad`` at the solution) and, per constraint, primal
feasibility, dual feasibility (cone membership) and complementary slackness.
The gap is f(x) - L(x, lambda) = -sum_i lambda_i^T g_i(x), which is the
duality gap whenever x minimises the Lagrangian (stationarity, convexity).

Each violation is relative to the size of the terms it is made of, so that
the report does not change when the objective or a constraint is multiplied
by a positive constant (its multipliers then scale by their ratio): a
constraint's rows against its values and its coefficients times the
variables' size (``Units.x``), a multiplier against the Lagrangian's gradient
(``Units.gradient``) over its constraint's coefficients, stationarity against
the size of its terms before they cancel, the gap against the objective's and
the Lagrangian's terms. No absolute floor of 1: with one, a problem whose data
are all of size 1e-6 passed any answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._lazy import cvxpy as cp
from ..validation import check_param
from ..errors import ValidationError
from .report import Gap, KKTReport, KKTRow, row_from_values

__all__ = ["kkt"]

STATIONARITY, PRIMAL, DUAL, SLACKNESS = ("stationarity", "primal feasibility", "dual feasibility",
                                         "complementary slackness")


@dataclass(frozen=True)
class Units:
    """The sizes against which a problem's violations are relative.

    Attributes
    ----------
    x : float
        The variables' size: the largest |x_j| over every variable, or of a
        constraint's values over its coefficients.
    gradient : float
        The Lagrangian gradient's size: the largest entry of the objective's
        gradient, or of a constraint's coefficients times its largest multiplier.
    objective : dict
        The objective gradient's size per variable (``_objective_gradient``).
    """

    x: float
    gradient: float
    objective: dict[Any, np.ndarray]


@dataclass
class _Term:
    """sign * multiplier^T expression, one piece of the Lagrangian."""

    expr: cp.Expression
    multiplier: np.ndarray
    sign: float


def kkt(problem: Any, tol: float = 1e-6) -> KKTReport:
    """KKT report of a solved ``cvxpy.Problem`` (or of a ``Formulation``, whose tags name the rows).

    Supports affine and convex smooth expressions in the objective and in
    ``<=``, ``>=``, ``==`` constraints, ``NonNeg``, ``NonPos`` and ``SOC``
    cones (explicit cones are certified through their conic duals (mu, lambda)).
    Stationarity needs gradients: a non-smooth atom (the 2-norm, abs, norm1,
    pos, maximum, max, norm_inf) is used where it is differentiable at the
    solution (away from its kinks); for a variable that enters one at a kink,
    where its gradient is only one subgradient, the row is reported as not
    evaluated (``ok`` None, "n/a") with the reason.
    """
    tol = float(check_param("tol", tol))
    tags = _tags(problem)
    problem = getattr(problem, "problem", problem)
    if not isinstance(problem, cp.Problem):
        raise ValidationError(f"problem must be a cvxpy.Problem or a Formulation; got {type(problem).__name__}")
    if problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE, cp.USER_LIMIT) or any(
            v.value is None for v in problem.variables()):
        raise ValidationError(f"problem must be solved with a solution present; got status {problem.status!r}")
    if problem.is_mixed_integer():
        raise ValidationError("problem must have continuous variables only: the KKT conditions do not certify "
                              "the optimum of a mixed-integer problem, and its solvers give no dual values; got "
                              f"{sum(v.attributes['boolean'] or v.attributes['integer'] for v in problem.variables())}"
                              " boolean or integer variable(s)")
    rows: list[KKTRow] = []
    terms: list[_Term] = []
    coefficients = [_coefficient(_constrained(con)) for con in problem.constraints]
    units = _units(problem, coefficients)
    for i, con in enumerate(problem.constraints):
        label = tags.get(id(con), f"constraint {i}")
        con_terms, con_rows = _constraint(con, label, tol, coefficients[i], units)
        terms += con_terms
        rows += con_rows
    rows = _stationarity(problem, terms, tol, units) + rows
    f_min = -problem.value if isinstance(problem.objective, cp.Maximize) else problem.value
    products = [t.sign * np.sum(t.multiplier * np.asarray(t.expr.value)) for t in terms]
    lagrangian = f_min + float(sum(products))
    # the gap against its terms: the objective's first-order size and each lambda_i^T g_i
    size = max([units.x * units.gradient] + [abs(float(v)) for v in products])
    gap = (Gap.of(problem.value, -lagrangian, size) if isinstance(problem.objective, cp.Maximize)
           else Gap.of(f_min, lagrangian, size))
    title = (f"KKT check of a cvxpy problem ({'maximise' if isinstance(problem.objective, cp.Maximize) else 'minimise'}, "
             f"{len(problem.variables())} variables, {len(problem.constraints)} constraints), status {problem.status}")
    return KKTReport(title, tuple(rows), gap, tol)


def _tags(problem: Any) -> dict[int, str]:
    constraints = getattr(problem, "constraints", None)
    if not isinstance(constraints, dict):
        return {}
    out = {}
    for tag, value in constraints.items():
        group = value if isinstance(value, tuple) else (value,)
        for k, con in enumerate(group):
            out[id(con)] = tag if len(group) == 1 else f"{tag} {'lower' if k == 0 else 'upper'}"
    return out


def _constrained(con: Any) -> list[Any]:
    """The expressions a constraint bounds (its g, h, x, or the cone's t and X)."""
    if isinstance(con, (cp.constraints.Inequality, cp.constraints.Equality)):
        return [con.expr]
    return list(con.args)


def _coefficient(exprs: list[Any]) -> float:
    """The constraint's coefficients: the largest entry of the gradients of ``exprs`` (0 where none is known:
    a kink, or no variable)."""
    largest = 0.0
    for expr in exprs:
        grads, _ = _gradients(expr)
        for G in (grads or {}).values():
            entries = G.data if sp.issparse(G) else np.asarray(G, dtype=np.float64)
            largest = max(largest, float(np.max(np.abs(entries), initial=0.0)))
    return largest


def _units(problem: cp.Problem, coefficients: list[float]) -> Units:
    """The problem's ``Units``: the variables' size (their largest entry, or a constraint's values over its
    coefficients, which x >= -1 gives where x = 0), and the objective's gradient or a constraint's
    coefficients times its largest multiplier (dual values of a solved problem; a missing one is refused
    later, by its constraint)."""
    x = max([float(np.max(np.abs(_flat(v.value)), initial=0.0)) for v in problem.variables()] + [0.0])
    for c, con in zip(coefficients, problem.constraints):
        if c > 0.0:                                  # the constraint's data over its coefficients: a size of x
            x = max(x, _magnitude(con.args, 0.0) / c)
    objective = _objective_gradient(problem, x)
    # an objective with no gradient at x nor at 2 x (a feasibility problem, min 0) gives the multipliers no
    # unit: any multiple of dual values is dual values; they are measured against 1, its own unit
    gradient = max([float(np.max(g, initial=0.0)) for g in objective.values()] + [0.0]) or 1.0
    for c, con in zip(coefficients, problem.constraints):
        duals = con.dual_value if isinstance(con.dual_value, list) else [con.dual_value]
        for d in duals:
            if d is not None:
                gradient = max(gradient, c * float(np.max(np.abs(np.asarray(d, dtype=np.float64)), initial=0.0)))
    return Units(x, gradient, objective)


def _objective_gradient(problem: cp.Problem, x_size: float) -> dict[Any, np.ndarray]:
    """The size of the objective's gradient, per variable: each entry's largest at the solution x, at 2 x
    and at x + X (every entry moved by the problem's size X = ``x_size``). At an unconstrained minimum inside
    every constraint (min ||x - c||^2 s.t. x <= 5) the gradient at x is 0 and every multiplier too: the
    gradient a step of the problem's size away (H x or H X for a quadratic, the gradient itself for a linear
    objective) is the size against which they are 0; at x = 0 (min ||x||^2 s.t. x >= -1) only the step X
    shows it. A point where the objective is not defined is skipped; an empty dict where the objective has no
    gradient at x (a kink)."""
    variables = problem.variables()
    size = {v: np.abs(_dense_gradient(G, v.size)) for v, G in (_gradients(problem.objective.expr)[0] or {}).items()}
    saved = [v.value for v in variables]
    for move in (lambda value: 2.0 * value, lambda value: value + x_size):
        try:
            for v, value in zip(variables, saved):
                v.save_value(move(np.asarray(value, dtype=np.float64)))
            with np.errstate(all="ignore"):
                for v, G in (_gradients(problem.objective.expr)[0] or {}).items():
                    g = np.abs(_dense_gradient(G, v.size))
                    if v in size and np.all(np.isfinite(g)):
                        np.maximum(size[v], g, out=size[v])
        except (ValueError, ArithmeticError, TypeError):     # not defined there (cvxpy's grad fails on a None)
            pass
        finally:
            for v, value in zip(variables, saved):
                v.save_value(value)
    return size


def _dense_gradient(G: Any, rows: int) -> np.ndarray:
    """A scalar expression's gradient in one variable (cvxpy's: sparse, dense or a scalar) as a flat array."""
    return _apply(G, rows, np.ones(1))


def _dual(con: Any) -> np.ndarray:
    if con.dual_value is None:
        raise ValidationError(f"constraint {con} must have a dual value; got None (was the problem solved?)")
    return np.asarray(con.dual_value, dtype=np.float64)


def _constraint(con: Any, label: str, tol: float, coefficient: float,
                units: Units) -> tuple[list[_Term], list[KKTRow]]:
    """The Lagrangian terms and the three rows (feasibility, cone, slackness) of one constraint, whose
    coefficients are of size ``coefficient``."""
    scale = _magnitude(con.args, coefficient * units.x)
    if isinstance(con, cp.constraints.Inequality):
        g, lam = np.asarray(con.expr.value, dtype=np.float64), _dual(con)
        return [_Term(con.expr, lam, 1.0)], _scalar_rows(label, "g(x) <= 0", g, lam, scale,
                                                         _multiplier_scale(lam, coefficient, units), tol)
    if isinstance(con, cp.constraints.NonPos):
        x, lam = np.asarray(con.args[0].value, dtype=np.float64), _dual(con)
        return [_Term(con.args[0], lam, 1.0)], _scalar_rows(label, "x <= 0", x, lam, scale,
                                                            _multiplier_scale(lam, coefficient, units), tol)
    if isinstance(con, cp.constraints.NonNeg):
        x, lam = np.asarray(con.args[0].value, dtype=np.float64), _dual(con)
        return [_Term(con.args[0], lam, -1.0)], _scalar_rows(label, "x >= 0", -x, lam, scale,
                                                             _multiplier_scale(lam, coefficient, units), tol)
    if isinstance(con, (cp.constraints.Equality, cp.constraints.Zero)):
        expr = con.expr if isinstance(con, cp.constraints.Equality) else con.args[0]
        h = np.asarray(expr.value, dtype=np.float64)
        row = row_from_values(label, PRIMAL, "h(x) = 0", np.abs(h), scale, tol)
        return [_Term(expr, _dual(con), 1.0)], [row]
    if isinstance(con, cp.constraints.SOC):
        return _soc(con, label, tol, scale, coefficient, units)
    raise ValidationError(f"constraint must be an inequality, equality, NonNeg, NonPos or SOC; got {type(con).__name__}")


def _multiplier_scale(lam: np.ndarray, coefficient: float, units: Units) -> float:
    """The size of a constraint's multipliers: their largest, and at least the Lagrangian's gradient over the
    constraint's coefficients (the multiplier whose term in the gradient is of the gradient's size)."""
    floor = units.gradient / coefficient if coefficient > 0.0 else 0.0
    return max(float(np.max(np.abs(lam), initial=0.0)), floor)


def _scalar_rows(label: str, text: str, g: np.ndarray, lam: np.ndarray, scale: float, lam_scale: float,
                 tol: float) -> list[KKTRow]:
    """Rows of g <= 0 (its terms of size ``scale``) with multiplier lambda >= 0 (of size ``lam_scale``)."""
    return [
        row_from_values(label, PRIMAL, text, np.maximum(0.0, g), scale, tol),
        row_from_values(label, DUAL, "lambda >= 0", np.maximum(0.0, -lam), lam_scale, tol),
        row_from_values(label, SLACKNESS, "lambda g(x) = 0", np.abs(lam * g), lam_scale * scale, tol),
    ]


def _soc(con: Any, label: str, tol: float, scale: float, coefficient: float,
         units: Units) -> tuple[list[_Term], list[KKTRow]]:
    """||X_i|| <= t_i (per cone along ``axis``) with dual (mu, lam) in the same cone; ``scale`` is the size of
    (t, X)."""
    t_expr, X_expr = con.args[0], con.args[1]
    t = np.atleast_1d(np.asarray(t_expr.value, dtype=np.float64))
    X = np.asarray(X_expr.value, dtype=np.float64).reshape(t.size, -1) if con.axis == 1 or t.size == 1 \
        else np.asarray(X_expr.value, dtype=np.float64).T.reshape(t.size, -1)
    mu, lam = (np.asarray(d, dtype=np.float64) for d in con.dual_value)
    mu = np.atleast_1d(mu).ravel()
    lam_m = lam.reshape(t.size, -1) if con.axis == 1 or t.size == 1 else lam.T.reshape(t.size, -1)
    dual_scale = _multiplier_scale(mu, coefficient, units)
    rows = [
        row_from_values(label, PRIMAL, "||X_i|| <= t_i", np.maximum(0.0, np.linalg.norm(X, axis=1) - t), scale, tol),
        row_from_values(label, DUAL, "||lambda_i|| <= mu_i", np.maximum(0.0, np.linalg.norm(lam_m, axis=1) - mu),
                        dual_scale, tol),
        row_from_values(label, SLACKNESS, "mu_i t_i + lambda_i^T X_i = 0",
                        np.abs(mu * t + np.sum(lam_m * X, axis=1)), dual_scale * scale, tol),
    ]
    return [_Term(t_expr, mu.reshape(t_expr.shape) if t_expr.shape else mu[0], -1.0),
            _Term(X_expr, lam.reshape(X_expr.shape), -1.0)], rows


def _magnitude(args: Any, floor: float) -> float:
    """The size of a constraint's terms: its arguments' largest value, and at least ``floor`` (its
    coefficients times the variables' size)."""
    values = [np.max(np.abs(np.asarray(a.value, dtype=np.float64)), initial=0.0) for a in args]
    return max([float(floor)] + [float(v) for v in values])


def _flat(value: Any) -> np.ndarray:
    return np.asarray(value, dtype=np.float64).ravel(order="F")


#: An argument within this much of a kink, relative to max(1, its largest entry), counts as at the kink
#: (solvers resolve a zero entry to about 1e-8 - 1e-10; near a kink the gradient certifies nothing).
KINK_TOL = 1e-7


def _gradients(expr: cp.Expression) -> tuple[dict[Any, Any] | None, str]:
    """({variable: d expr / d variable (variable.size x expr.size)}, "") where the expression is
    differentiable at the solution, else (None, why). A non-smooth atom (2-norm, abs, norm1, pos,
    maximum, max, norm_inf) is differentiable away from its kinks, where cvxpy's ``grad`` is the
    gradient; at a kink it is only one subgradient and cannot certify stationarity."""
    kink = _kink(expr)
    if kink:
        return None, kink
    grads = expr.grad
    if any(g is None for g in grads.values()):
        return None, f"cvxpy gives no gradient of {type(expr).__name__}"
    return grads, ""


def _kink(expr: Any) -> str:
    """Why ``expr`` is not differentiable at its current value ("" if it is)."""
    if isinstance(expr, cp.atoms.atom.Atom) and not expr.is_atom_smooth():
        why = _atom_kink(expr)
        if why:
            return why
    for arg in getattr(expr, "args", []):
        why = _kink(arg)
        if why:
            return why
    return ""


def _atom_kink(atom: Any) -> str:
    """"" where the non-smooth ``atom`` is differentiable at its arguments' values, else why not."""
    name = type(atom).__name__
    values = [np.asarray(a.value, dtype=np.float64) for a in atom.args]
    if any(v is None or np.any(np.isnan(v)) for v in values):
        return f"{name} has no value"
    x = values[0]
    scale = max(float(np.max(np.abs(x), initial=0.0)), 1.0)
    if name in ("Pnorm", "PnormApprox") and float(atom.p) == 2.0 and atom.axis is None:
        return "" if np.linalg.norm(x) > KINK_TOL * scale else "the 2-norm's argument is 0 (its kink)"
    if name in ("abs", "norm1"):
        small = np.abs(x) <= KINK_TOL * scale
        return f"{name} has an argument entry at 0 (its kink)" if np.any(small) else ""
    if name == "huber":
        return ""                                   # continuously differentiable
    if name == "maximum":
        stacked = np.stack(np.broadcast_arrays(*values))
        top = np.sort(stacked, axis=0)
        ties = stacked.shape[0] > 1 and np.any(top[-1] - top[-2] <= KINK_TOL * scale)
        return "maximum has tied arguments (its kink)" if ties else ""
    if name in ("max", "norm_inf") and atom.axis is None:
        v = np.sort((np.abs(x) if name == "norm_inf" else x).ravel())
        return f"{name} has a tied largest entry (its kink)" if v.size > 1 and v[-1] - v[-2] <= KINK_TOL * scale \
            else ""
    return f"{name} is not smooth and its differentiability is not known here"


def _apply(G: Any, rows: int, multiplier: np.ndarray) -> np.ndarray:
    """G @ multiplier for cvxpy's gradient (sparse, dense or a scalar for scalar variables)."""
    if sp.issparse(G):
        return np.asarray(G @ multiplier).ravel()
    return (np.asarray(G, dtype=np.float64).reshape(rows, -1) @ multiplier).ravel()


def _stationarity(problem: cp.Problem, terms: list[_Term], tol: float, units: Units) -> list[KKTRow]:
    """grad f + sum_i sign_i (d g_i / d x) multiplier_i = 0, one row per variable, against the size of its
    terms (the objective's, ``_objective_gradient``, and |d g_i / d x| |multiplier_i|, before they cancel)."""
    sign_f = -1.0 if isinstance(problem.objective, cp.Maximize) else 1.0
    pieces: list[tuple[cp.Expression, np.ndarray, float]] = [(problem.objective.expr, np.ones(1), sign_f)]
    pieces += [(t.expr, _flat(t.multiplier), t.sign) for t in terms]
    residual = {v: np.zeros(v.size) for v in problem.variables()}
    size = {v: np.zeros(v.size) for v in problem.variables()}
    missing: set[Any] = set()
    why: dict[Any, str] = {}
    for k, (expr, multiplier, sign) in enumerate(pieces):
        grads, reason = _gradients(expr)
        if grads is None:
            missing |= set(expr.variables())
            why.update({v: reason for v in expr.variables()})
            continue
        for v, G in grads.items():
            residual[v] += sign * _apply(G, v.size, multiplier)
            # the terms, before they cancel: the objective's at x and 2 x, each constraint's |G| |multiplier|
            size[v] += units.objective[v] if k == 0 else _apply(abs(G), v.size, np.abs(multiplier))
    rows = []
    for v in problem.variables():
        name = v.name()
        implied = _implied_bounds(v)
        if v in missing:
            rows.append(row_from_values(name, STATIONARITY, f"d L / d {name} = 0", np.nan, 1.0, tol,
                                        f"not evaluated: {why[v]} (state it in epigraph form)"))
        elif isinstance(implied, str):
            rows.append(row_from_values(name, STATIONARITY, f"d L / d {name} = 0", np.nan, 1.0, tol,
                                        f"not evaluated: its attribute {implied} implies constraints that have no "
                                        f"dual values (state it as a constraint)"))
        elif implied is not None:
            rows.append(row_from_values(name, STATIONARITY, f"d L / d {name} = mu (its bounds' multiplier)",
                                        _bounded_residual(v, residual[v], *implied, tol, units.x),
                                        float(np.max(size[v], initial=0.0)), tol))
        else:
            rows.append(row_from_values(name, STATIONARITY, f"d L / d {name} = 0", np.abs(residual[v]),
                                        float(np.max(size[v], initial=0.0)), tol))
    return rows


def _implied_bounds(v: Any) -> tuple[np.ndarray, np.ndarray] | str | None:
    """The bounds (lower, upper; flat) a variable's attributes impose (``nonneg``, ``nonpos``, ``bounds``),
    None for a free variable, or the name of an attribute whose constraint this check cannot state."""
    given = {k: a for k, a in v.attributes.items() if a is not None and a is not False}
    if not given:
        return None
    other = sorted(set(given) - {"nonneg", "nonpos", "bounds"})
    if other:
        return other[0]
    lower, upper = np.full(v.size, -np.inf), np.full(v.size, np.inf)
    if "bounds" in given:
        lb, ub = given["bounds"]
        lower = np.broadcast_to(np.asarray(-np.inf if lb is None else lb, dtype=np.float64), v.shape).ravel("F")
        upper = np.broadcast_to(np.asarray(np.inf if ub is None else ub, dtype=np.float64), v.shape).ravel("F")
    if "nonneg" in given:
        lower = np.maximum(lower, 0.0)
    if "nonpos" in given:
        upper = np.minimum(upper, 0.0)
    return lower, upper


def _bounded_residual(v: Any, r: np.ndarray, lower: np.ndarray, upper: np.ndarray, tol: float,
                      x_size: float) -> np.ndarray:
    """What of the Lagrangian's gradient r no multiplier of the variable's own bounds can take: the
    bound's multiplier mu = r must be >= 0 at a lower bound, <= 0 at an upper one, and 0 off them
    (complementary slackness); a variable within ``tol`` of the variables' size ``x_size`` of a bound
    counts as on it."""
    x = _flat(v.value)
    reach = tol * x_size
    at_lower, at_upper = x - lower <= reach, upper - x <= reach
    absorbed = np.where(at_lower & at_upper, r, np.where(at_lower, np.maximum(r, 0.0),
                                                          np.where(at_upper, np.minimum(r, 0.0), 0.0)))
    return np.abs(r - absorbed)
