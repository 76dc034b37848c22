"""The demos' JSON API: requests in, the library's answers out, errors as 4xx with a message.

``handle_svm(payload)`` and ``handle_rvm(payload)`` take the decoded JSON body
and return the JSON-ready answer, or raise ``ApiError`` with an HTTP status
(400 for a malformed request or a parameter out of its domain, 422 for a
problem without a solution, such as a hard margin on data that cannot be
separated). The HTTP layer (``server.py``) only moves bytes.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any, Callable

import numpy as np

from ..duality import categories, check
from ..errors import ConvergenceWarning, InfeasibleError, SolverError, ValidationError, ignored
from ..validation import shown
from ..formulations import MACHINES
from ..kernels import RBF, Linear
from ..methods import solve_by
from ..solvers.rvm.results import AllPrunedWarning

__all__ = ["ApiError", "handle_svm", "handle_rvm", "load_upload", "machine_options", "solve_cost", "MAX_POINTS",
           "MAX_COST", "LIGHT_COST", "SVM_METHODS", "RVM_METHODS", "MAX_COORDINATE",
           "DIRECT_TIME_LIMIT"]

MAX_POINTS = 5000
MAX_GRID = 120
MAX_COORDINATE = 1e9    # |x|, |t| and the grid's corners: squares and differences stay finite
SVM_MACHINES = MACHINES
# cost per point of each method, the SMO's at the unit, so that a request at MAX_COST solves in about
# 1-4 s on one core (measured on Ripley's mixture: the SMO at 5,000 points 3.5 s, qp-clarabel at 600
# 0.8 s, clarabel at 600 2.9 s, osqp at 300 0.6 s, primal-clarabel at 300 1.0 s; the RVM's classification
# at 60 points about 1 s and at 250 0.5 s, EM's at 250 8 s)
SVM_METHODS = {"smo": 1, "clarabel": 8, "osqp": 16, "primal-clarabel": 16, "qp-clarabel": 8, "qp-osqp": 8}
RVM_METHODS = {"fast": 20, "mackay": 20, "em": 100}
RVM_BASE = 1000         # an RVM fit's cost before its points: 1-5 s even at 10 points (iterating to 1e-6 nats)
MAX_COST = 5000         # points x method cost of one request
LIGHT_COST = 500        # requests up to this cost are light: they never wait behind the heavy ones
#: The SMO's steps in one demo solve (the library's default is 10 million): a soft margin with C = 1e6 on
#: overlapping points never converges, and took 9.6 s at 500 points, 105 s at 5,000, holding the one heavy
#: worker of a 2-core machine (every RVM fit queued behind it); it now stops, its status "inaccurate" and
#: its KKT table failing, after about 0.7 s at 500 points and 1.1 s at 2,000 (measured with a test suite
#: running beside it). The presets converge in a few thousand steps. With ``trace``, fewer: each traced step
#: is about 120 bytes of the answer (1.2 GB at 10 million steps, built in memory).
SMO_MAX_ITER = 100_000
TRACE_MAX_ITER = 50_000
#: Seconds a solve by the other methods (Clarabel, OSQP) may run: the costs above were measured on
#: classification, and a regression machine's dual has 2N variables; qp-osqp on 625 points of an
#: epsilon-SVR (cost 5,000) took 17-23 s and up to 160 s on a loaded machine, holding the one heavy
#: worker of a 2-core machine. At the limit the solver stops, its status "inaccurate" and its KKT
#: table failing (or a 422 where its answer is not one to show), as the SMO does at SMO_MAX_ITER.
DIRECT_TIME_LIMIT = 5.0


class ApiError(Exception):
    """A request the API refuses: ``status`` is the HTTP status, the message goes to the page."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def machine_options() -> str:
    """The SVM page's machine menu, from what each machine declares (label, task, hyperparameters)."""
    from html import escape

    return "".join(
        f'<option value="{escape(name)}" data-task="{escape(cls.task)}" data-params="{escape(" ".join(cls._hyper_names))}">'
        f"{escape(cls.demo_label)}</option>"
        for name, cls in SVM_MACHINES.items() if cls.demo_label)


# -- request fields --------------------------------------------------------------------------

def _object(payload: Any) -> dict[str, Any]:
    if not isinstance(payload, dict):
        raise ApiError(400, f"the request body must be a JSON object; got {type(payload).__name__}")
    return payload


def _choice(spec: dict[str, Any], key: str, options: Any, default: str | None = None) -> str:
    value = spec.get(key, default)
    if not isinstance(value, str) or value not in options:
        raise ApiError(400, f"{key} must be one of {sorted(options)}; got {value!r}")
    return value


def _number(spec: dict[str, Any], key: str, default: float, low: float = -math.inf, high: float = math.inf,
            open_low: bool = True) -> float:
    value = spec.get(key, default)
    try:
        finite = not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
    except OverflowError:       # a JSON integer beyond every double (10**400)
        finite = False
    if not finite:
        raise ApiError(400, f"{key} must be a finite number; got {shown(value)}")
    if value < low or value > high or (open_low and value == low):
        lo = "(" if open_low else "["
        raise ApiError(400, f"{key} must be in {lo}{low:g}, {high:g}]; got {value!r}")
    return float(value)


def _flag(spec: dict[str, Any], key: str) -> bool:
    """An optional true/false field (absent: false); anything else, such as the string "no", is refused."""
    value = spec.get(key, False)
    if not isinstance(value, bool):
        raise ApiError(400, f"{key} must be true or false; got {value!r}")
    return value


def solve_cost(route: str, payload: Any) -> float:
    """The cost of a request to ``route``: its points times its method's cost, plus RVM_BASE for an RVM
    (0 for a route that solves nothing, or a body the handler will refuse anyway); ApiError 413 above
    MAX_COST. Every RVM fit is thus heavy (above LIGHT_COST)."""
    methods = {"/api/svm": SVM_METHODS, "/api/rvm": RVM_METHODS}.get(route)
    if methods is None or not isinstance(payload, dict) or not isinstance(payload.get("points"), list) \
            or len(payload["points"]) > MAX_POINTS:
        return 0.0
    method = payload.get("method", next(iter(methods)))
    per_point = methods.get(method, 1) if isinstance(method, str) else 1
    if route == "/api/rvm" and payload.get("compare_svm"):
        per_point += SVM_METHODS["smo"]
    cost = len(payload["points"]) * per_point + (RVM_BASE if route == "/api/rvm" else 0)
    if cost > MAX_COST:
        raise ApiError(413, f"the demo solves requests of cost (points x method cost) at most {MAX_COST}; got "
                            f"{len(payload['points'])} points x {per_point} ({method})"
                            f"{f' + {RVM_BASE}' if route == '/api/rvm' else ''} = {cost}: use fewer points "
                            f"or a cheaper method ({', '.join(f'{m}: {c}' for m, c in methods.items())})")
    return float(cost)


def _points(spec: dict[str, Any], width: int) -> np.ndarray:
    """An (n, width) array of finite numbers of at most MAX_COORDINATE from ``points``."""
    rows = spec.get("points")
    if not isinstance(rows, list) or not rows:
        raise ApiError(400, "points must be a non-empty list of [x, y, label] (or [x, t]) rows")
    if len(rows) > MAX_POINTS:
        raise ApiError(400, f"points must hold at most {MAX_POINTS} rows; got {len(rows)}")
    for k, row in enumerate(rows):
        if not isinstance(row, list) or len(row) != width or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and abs(v) <= MAX_COORDINATE for v in row):
            raise ApiError(400, f"points[{k}] must be {width} finite numbers of at most {MAX_COORDINATE:g} in "
                                f"size; got {row!r}")
    return np.asarray(rows, dtype=np.float64)


def _grid(spec: dict[str, Any], X: np.ndarray) -> dict[str, float]:
    grid = spec.get("grid")
    grid = {} if grid is None else grid       # absent or null: the default grid; 0, [], false or "" are refused
    if not isinstance(grid, dict):
        raise ApiError(400, f"grid must be an object with xmin, xmax, ymin, ymax, n; got {grid!r}")
    # the default: the points' range and one unit around it, within the coordinates' bounds (a point at
    # MAX_COORDINATE is allowed; a default beyond it was refused as if the client had sent it)
    lo = np.maximum(X.min(axis=0) - 1.0, -MAX_COORDINATE)
    hi = np.minimum(X.max(axis=0) + 1.0, MAX_COORDINATE)
    corner = {"low": -MAX_COORDINATE, "high": MAX_COORDINATE, "open_low": False}
    out = {
        "xmin": _number(grid, "xmin", float(lo[0]), **corner), "xmax": _number(grid, "xmax", float(hi[0]), **corner),
        "ymin": _number(grid, "ymin", float(lo[-1]), **corner), "ymax": _number(grid, "ymax", float(hi[-1]), **corner),
        "n": _number(grid, "n", 60, 2, MAX_GRID, open_low=False),
    }
    if not float(out["n"]).is_integer():
        raise ApiError(400, f"n must be a whole number of grid lines; got {grid['n']!r}")
    if out["xmin"] >= out["xmax"] or out["ymin"] >= out["ymax"]:
        raise ApiError(400, f"grid must have xmin < xmax and ymin < ymax; got {grid!r}")
    return out


def _json(value: Any) -> Any:
    """numpy and dataclasses to plain JSON values (NaN and inf to None)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): _json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json(v) for v in value]
    if isinstance(value, np.ndarray):
        return _json(value.tolist())
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(float(value)) else None
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def _library_call(work: Callable[[], Any]) -> Any:
    """Run a library call, turning its errors into API errors: 400 for an argument out of its domain,
    422 for a problem without a solution or one its solver could not solve (the message says which)."""
    try:
        return work()
    except ValidationError as exc:
        raise ApiError(400, str(exc)) from exc
    except (InfeasibleError, SolverError) as exc:
        raise ApiError(422, str(exc)) from exc


# -- the SVM ----------------------------------------------------------------------------------

def _svm_machine(spec: dict[str, Any], name: str) -> tuple[Any, np.ndarray]:
    cls = SVM_MACHINES[name]
    kernel_name = _choice(spec, "kernel", ("linear", "rbf"), "rbf")
    kernel = Linear() if kernel_name == "linear" else RBF(_number(spec, "gamma", 1.0, 0.0, 1e6))
    if cls.task == "regression":
        P = _points(spec, 2)
        X, t = P[:, :1], P[:, 1]
    elif cls.task == "novelty":
        P = _points(spec, 2)
        X, t = P, None
    else:
        P = _points(spec, 3)
        X, t = P[:, :2], P[:, 2]
    hyper: dict[str, float] = {}
    if "C" in cls._hyper_names:
        hyper["C"] = _number(spec, "C", 1.0, 0.0, 1e6)
    if "nu" in cls._hyper_names:
        hyper["nu"] = _number(spec, "nu", 0.5, 0.0, 1.0)
    if "epsilon" in cls._hyper_names:
        hyper["epsilon"] = _number(spec, "epsilon", 0.1, 0.0, 1e6, open_low=False)
    args = (X, kernel) if t is None else (X, t, kernel)
    return _library_call(lambda: cls(*args, **hyper)), X


def handle_svm(payload: Any) -> dict[str, Any]:
    """Solve one SVM: its multipliers, objectives, gap, KKT table, cases, field and SMO trace."""
    spec = _object(payload)
    name = _choice(spec, "machine", SVM_MACHINES, "soft")
    method = _choice(spec, "method", SVM_METHODS, "smo")
    machine, X = _svm_machine(spec, name)
    # the grid read before the solve: read after it, a grid of 1,000 lines was refused once the solve was done
    # (qp-clarabel on 600 points: 0.5 s of a worker spent on an answer never sent)
    grid = _grid(spec, _grid_points(machine.task, X))
    options: dict[str, Any] = {}
    trace = _flag(spec, "trace")
    if method == "smo":   # at most SMO_MAX_ITER steps (TRACE_MAX_ITER traced): a solve that would not converge
        options = {"tol": 1e-6, "record": trace, "max_iter": TRACE_MAX_ITER if trace else SMO_MAX_ITER}
    else:                 # Clarabel and OSQP (through cvxpy or directly): at most DIRECT_TIME_LIMIT seconds
        options = {"time_limit": DIRECT_TIME_LIMIT}
    start = time.perf_counter()
    # a solve stopped at the cap: its status and KKT table say so on the page. errors.ignored, not
    # catch_warnings: the light solves run in several threads at once (the server's light pool)
    with ignored("", ConvergenceWarning):
        sol = _library_call(lambda: machine.solve(method, **options))
    seconds = time.perf_counter() - start
    report = check(machine, sol)                     # at the tolerance its certificate used (sol.tol)
    answer = {
        "machine": machine.name, "method": method, "status": sol.status, "iterations": sol.iterations,
        "a": sol.a, "a_hat": sol.a_hat, "b": sol.b, "rho": sol.rho, "epsilon": sol.epsilon, "R2": sol.R2,
        "support": sol.support, "categories": list(categories(machine, sol).labels),
        "primal": report.gap.primal, "dual": report.gap.dual, "gap": report.gap,
        "kkt": report.to_dict(), "solve_ms": 1000.0 * seconds,
        "trace": sol.trace if method == "smo" and trace else None,
    }
    answer.update(_svm_field(grid, machine, sol))
    return _json(answer)


def _grid_points(task: str, X: np.ndarray) -> np.ndarray:
    """The points whose range is the default grid's: a regression's inputs on both axes (its curve's x)."""
    return np.column_stack([X[:, 0], X[:, 0]]) if task == "regression" else X


def _svm_field(grid: dict[str, float], machine: Any, sol: Any) -> dict[str, Any]:
    """The decision field on ``grid`` (classification, one-class) or the curve y(x) (regression)."""
    if machine.task == "regression":
        xs = np.linspace(grid["xmin"], grid["xmax"], 200)
        return {"curve": {"x": xs, "y": sol.decision_function(xs[:, None])}}
    n = int(grid["n"])
    xs, ys = np.linspace(grid["xmin"], grid["xmax"], n), np.linspace(grid["ymin"], grid["ymax"], n)
    g1, g2 = np.meshgrid(xs, ys)
    values = sol.decision_function(np.column_stack([g1.ravel(), g2.ravel()])).reshape(n, n)
    scale = machine.margin_level(sol)               # the margin at t y = +/- 1 on the page
    return {"field": {"x": xs, "y": ys, "values": values / scale, "margin": 1.0 if machine.task == "classification"
                      else None}}


# -- the RVM ----------------------------------------------------------------------------------

def handle_rvm(payload: Any) -> dict[str, Any]:
    """Fit an RVM (regression or classification) and return its sparse model and evidence.

    ``steps`` (optional) stops the re-estimation after that many iterations, to
    watch the alphas run off to infinity (preset 2); ``compare_svm`` adds the
    nu-SVC's support vectors on the same data (preset 4).
    """
    from ..solvers.rvm import rvm_classification, rvm_regression

    spec = _object(payload)
    task = _choice(spec, "task", ("regression", "classification"), "regression")
    method = _choice(spec, "method", RVM_METHODS, "fast")
    kernel = RBF(_number(spec, "gamma", 1.0, 0.0, 1e6))
    P = _points(spec, 2 if task == "regression" else 3)
    X = P[:, :1] if task == "regression" else P[:, :2]
    t = P[:, -1]
    steps = spec.get("steps")
    if steps is not None and (isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= 10000):
        raise ApiError(400, f"steps must be an integer in [1, 10000]; got {steps!r}")
    if task == "classification" and np.unique(t).shape[0] != 2:
        raise ApiError(400, f"points must hold two class labels for classification; got {np.unique(t).tolist()}")
    # the grid and compare_svm's nu read before the fit: read after it, they were refused once it was done
    # (EM on 40 points: 0.3-0.7 s of a worker spent on an answer never sent)
    grid = _grid(spec, _grid_points(task, X))
    nu = _number(spec, "nu", 0.5, 0.0, 1.0) if _flag(spec, "compare_svm") and task == "classification" else None
    fit_rvm = rvm_regression if task == "regression" else rvm_classification
    labels = None if task == "regression" else (t == np.max(t)).astype(float)
    start = time.perf_counter()
    # stepping stops the iteration on purpose; a fit that pruned every function says so in its answer (no
    # relevance vector, the bias alone), where the warning only reached the server's stderr
    with ignored("", ConvergenceWarning), ignored("", AllPrunedWarning):
        # a tolerance of 1e-6 nats: MacKay's and EM's slow tails (alphas creeping to infinity) are the lesson
        fit = _library_call(lambda: fit_rvm(kernel(X, X), t if labels is None else labels, method=method,
                                             max_iter=steps, tol=1e-6))
    seconds = time.perf_counter() - start
    answer = {"task": task, "method": method, "solve_ms": 1000.0 * seconds, **_rvm_summary(fit, X.shape[0])}
    answer.update(_rvm_field(grid, task, fit, kernel, X))
    if labels is not None:
        train = _rvm_probability(fit, kernel(X, X))
        answer["training_error"] = float(np.mean((train >= 0.5) != (labels == 1.0)))
    if nu is not None and labels is not None:
        svm = _library_call(lambda: MACHINES["nu-svc"](X, np.where(labels == 1.0, 1.0, -1.0), kernel, nu=nu))
        answer["svm_support"] = _library_call(lambda: solve_by(svm, "smo")).support
    return _json(answer)


def _rvm_summary(fit: Any, N: int) -> dict[str, Any]:
    """Relevance vectors, the alphas of all N basis functions (inf where pruned), noise, evidence."""
    alpha = np.asarray(fit.alpha, dtype=np.float64)
    kept = alpha[int(fit.bias_used):]
    kept = kept if kept.ndim == 1 else np.min(kept, axis=1)  # classification: (functions, outputs)
    alpha_all = np.full(N, np.inf)
    alpha_all[np.asarray(fit.relevance, dtype=int)] = kept
    return {"relevance": fit.relevance, "alpha_all": alpha_all, "beta": fit.beta, "bias_used": fit.bias_used,
            "log_evidence": fit.log_evidence, "iterations": fit.iterations, "converged": fit.converged}


def _rvm_probability(fit: Any, Phi: np.ndarray) -> np.ndarray:
    """p(class 1 | x) from the Laplace posterior, moderated (probit approximation)."""
    proba = fit.predict_proba(Phi[:, np.asarray(fit.relevance, dtype=int)])
    return np.asarray(proba)[:, -1]


def _rvm_field(grid: dict[str, float], task: str, fit: Any, kernel: Any, X: np.ndarray) -> dict[str, Any]:
    if task == "regression":
        xs = np.linspace(grid["xmin"], grid["xmax"], 200)
        mean, std = fit.predict(kernel(xs[:, None], X), return_std=True)     # (7.90)-(7.91)
        return {"curve": {"x": xs, "mean": mean, "std": std}}
    n = int(grid["n"])
    xs, ys = np.linspace(grid["xmin"], grid["xmax"], n), np.linspace(grid["ymin"], grid["ymax"], n)
    g1, g2 = np.meshgrid(xs, ys)
    p1 = _rvm_probability(fit, kernel(np.column_stack([g1.ravel(), g2.ravel()]), X))
    return {"field": {"x": xs, "y": ys, "values": p1.reshape(n, n), "margin": None}}


# -- an uploaded data file --------------------------------------------------------------------

#: the fields of a CSV upload's first line past which it is refused before the parse, even over a narrow row: a
#: header may name more columns than the rows hold (load_csv reads the width from the first data row), not 16
HEADER_FIELDS = 16


def _refuse_wide(content: str) -> None:
    """ApiError 400, before the parse, for a CSV upload whose data rows are certain to be too wide (the parse
    would refuse them): one line of 4 million fields (7.6 MB) was parsed whole, 1.8 s in a light thread (its
    header test and float conversion), before its width was refused; the csv reader reads that line alone in
    0.07 s. The first two lines that are neither blank nor comments tell: a second of more than 3 fields (a data
    row, whatever the first is), or a first of more than 3 alone or of more than ``HEADER_FIELDS``."""
    import csv
    from itertools import islice

    lines = (line for line in content.removeprefix("\ufeff").splitlines()
             if line.strip() and not line.lstrip().startswith("#"))
    widths = [len(next(csv.reader([line]), [])) if line.count(",") > 2 else 3 for line in islice(lines, 2)]
    if not widths:
        return
    if (len(widths) == 2 and widths[1] > 3) or widths[0] > (3 if len(widths) == 1 else HEADER_FIELDS):
        raise ApiError(400, f"the file must have 1 input column (regression) or 2 (classification); got "
                            f"{max(widths) - 1} in its first lines")


def load_upload(payload: Any) -> dict[str, Any]:
    """Parse an uploaded data file with the library's loaders into the pages' rows of points.

    The body is ``{"name": "data.txt", "content": "..."}``, the format told by the one file-type rule
    the command line uses (``datasets.infer_format``: the extension, else the first data line), or
    ``{"format": "csv" or "libsvm", "content": "..."}`` to say it. The file must hold 1 input column
    (regression) or 2 (classification) of finite numbers.
    """
    import tempfile
    from pathlib import Path

    from ..datasets import infer_format, load_csv, load_libsvm

    spec = _object(payload)
    fmt, name, content = spec.get("format"), spec.get("name"), spec.get("content")
    if not isinstance(content, str) or fmt not in (None, "csv", "libsvm") or (fmt is None and not isinstance(name, str)):
        raise ApiError(400, "the body must be {\"name\": \"the file's name\", \"content\": \"...\"} or "
                            "{\"format\": \"csv\" or \"libsvm\", \"content\": \"...\"}")
    # "\r" too: the csv reader ends a line at a "\r" alone (old Mac files), and 1.3 million rows so ended were
    # parsed whole (3.6 s in a light thread) before their count was refused
    if content.count("\n") + content.count("\r") > MAX_POINTS:   # at C speed; the lines that hold data, then
        lines = sum(1 for line in content.splitlines() if line.strip() and not line.lstrip().startswith("#"))
        if lines > MAX_POINTS + 1:          # the rows and a header: refused before the parse, which took 3.8 s
            raise ApiError(400, f"the file must hold at most {MAX_POINTS} data rows; got {lines} lines that are "
                                f"neither blank nor comments")   # for 1.15 million rows in a light thread
    try:
        fmt = fmt or infer_format(name, content)
    except ValidationError as exc:
        raise ApiError(400, str(exc)) from exc
    if fmt == "csv":
        _refuse_wide(content)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"upload.{fmt}"
        try:
            path.write_text(content, encoding="utf-8")
        except UnicodeEncodeError as exc:  # a lone surrogate ("\ud800"), which JSON may carry
            raise ApiError(400, f"content must be text that UTF-8 can hold; got {exc.object[exc.start:exc.end]!r} "
                                f"at character {exc.start}") from None
        try:
            X, t = load_csv(path) if fmt == "csv" else load_libsvm(path)
        except ValidationError as exc:
            raise ApiError(400, str(exc).replace(str(path), "the file")) from exc
    if X.shape[1] not in (1, 2):
        raise ApiError(400, f"the file must have 1 input column (regression) or 2 (classification); got {X.shape[1]}")
    if X.shape[0] > MAX_POINTS:    # the pages could not solve it (a solve takes at most MAX_POINTS rows)
        raise ApiError(400, f"the file must hold at most {MAX_POINTS} data rows; got {X.shape[0]}")
    # the demo draws 1 or 2 input columns in the plane: dense values, densified once the width is known
    X = np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64)
    P = np.column_stack([X, t])
    bad = np.flatnonzero(~np.all(np.abs(P) <= MAX_COORDINATE, axis=1))
    if bad.size:
        raise ApiError(400, f"the file's values must be finite numbers of at most {MAX_COORDINATE:g} in size; "
                            f"data row {int(bad[0]) + 1} holds {P[bad[0]].tolist()}")
    return {"points": P.tolist(), "n": int(P.shape[0]), "inputs": int(X.shape[1]), "format": fmt}
