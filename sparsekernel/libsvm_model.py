"""LIBSVM's model files (``svm-train``'s output, ``svm_save_model``): read, certify, write.

A model file holds the header (``svm_type``, ``kernel_type`` and the kernel's
``degree``, ``gamma``, ``coef0``, ``nr_class``, ``total_sv``, one ``rho`` per
binary problem, and for classifiers ``label``, ``nr_sv`` and optionally
``probA``/``probB``) and, after the line ``SV``, one line per support vector:
its ``nr_class - 1`` coefficients, then its features as ``index:value``.

LIBSVM's conventions, as this module undoes them (see ``Machine.solution`` with
``convention="libsvm"`` and each machine's ``libsvm_multipliers``):

- the decision value is sum_n coef_n k(x, x_n) - rho, so the notes' b = -rho;
- a classifier's coefficient is y_n alpha_n, y_n = +1 for the first label of
  its pair (label order), so the binary machine's t_n = +1 for that label;
- nu-SVC's coefficients and rho are divided by its r (the notes' margin rho);
- the one-class alpha sum to nu N (the notes' a to 1);
- nu-SVR's C is the notes' C / N;
- a k-class model is k (k - 1) / 2 one-versus-one problems, the pair (i, j),
  i < j in label order, taking class i's coefficients from row j - 1 of the
  coefficient matrix and class j's from row i.

The reader refuses what ``svm_load_model`` refuses (an unknown header key: a
misspelt ``coef_0`` would otherwise leave coef0 at a default) and what a
damaged file lacks: a classifier's ``label`` and ``nr_sv`` (which support
vector is of which class), the kernel's ``degree``, ``gamma`` and ``coef0``
as ``svm_save_model`` writes them.

The file keeps no C, nu or epsilon (``svm-train``'s ``-c``, ``-n``, ``-p``) and
no class or sample weights: give the values it was trained with (by default
``svm-train``'s, 1, 0.5 and 0.1; the one-class nu is read off the coefficients,
whose sum is nu N). It keeps the support vectors' features to 8 significant
digits, so they are matched to the training points at that precision.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from .errors import ValidationError
from .formulations import MACHINES
from .formulations.machine import Machine
from .formulations.solution import Solution
from .formulations.solve import matched_tol
from .kernels import Kernel, Linear, Polynomial, RBF, Sigmoid
from .sparse import issparse, to_dense
from .validation import check_param, fail

__all__ = ["LibsvmModel", "ModelProblem", "parse_libsvm_model", "read_libsvm_model", "check_libsvm_model",
           "save_libsvm_model", "save_fitted_model", "libsvm_tol_of"]

Array = NDArray[np.float64]

#: svm-train's defaults for what a model file does not keep (-c, -n, -p, -e)
SVM_TRAIN_DEFAULTS = {"C": 1.0, "nu": 0.5, "epsilon": 0.1, "eps": 1e-3}
#: digits LIBSVM writes a support vector's feature values with (``%.8g``)
FEATURE_DIGITS = 8
_KERNELS = {"linear": "linear", "polynomial": "poly", "rbf": "rbf", "sigmoid": "sigmoid"}


@dataclass(frozen=True)
class LibsvmModel:
    """A parsed model file, in LIBSVM's own terms.

    Attributes
    ----------
    svm_type : {"c_svc", "nu_svc", "one_class", "epsilon_svr", "nu_svr"}
    kernel_type : {"linear", "polynomial", "rbf", "sigmoid"}
    degree, gamma, coef0 : the kernel's parameters (LIBSVM's defaults where the file has none)
    nr_class : int
    rho : array (nr_class (nr_class - 1) / 2,)
    label : int array (nr_class,) or None (regression, one-class)
    nr_sv : int array (nr_class,) or None
    probA, probB : arrays or None
    sv_coef : array (nr_class - 1, total_sv)
    SV : csr_matrix (total_sv, D), the support vectors' features as written
    """

    svm_type: str
    kernel_type: str
    degree: int
    gamma: float
    coef0: float
    nr_class: int
    rho: Array
    label: NDArray[np.int64] | None
    nr_sv: NDArray[np.int64] | None
    sv_coef: Array
    SV: Any = field(repr=False)
    probA: Array | None = None
    probB: Array | None = None

    @property
    def total_sv(self) -> int:
        return int(self.sv_coef.shape[1])

    def kernel(self) -> Kernel:
        """The kernel in this library's terms (the same functions as LIBSVM's)."""
        if self.kernel_type == "linear":
            return Linear()
        if self.kernel_type == "polynomial":
            return Polynomial(degree=self.degree, gamma=self.gamma, coef0=self.coef0)
        if self.kernel_type == "rbf":
            return RBF(self.gamma)
        return Sigmoid(gamma=self.gamma, coef0=self.coef0)

    def sv_class(self) -> NDArray[np.intp] | None:
        """The class index (into ``label``) of each support vector (they are grouped by class)."""
        if self.nr_sv is None:
            return None
        return np.repeat(np.arange(self.nr_class), self.nr_sv)


@dataclass(frozen=True)
class ModelProblem:
    """One binary (or regression, or one-class) problem of a model, as a machine and its Solution.

    ``index`` are its rows of the training data; ``labels`` the pair (label of t = +1, of t = -1)
    for a classifier, else None; ``assumed`` the hyperparameters that the file does not keep and
    were taken from the caller or from svm-train's defaults; ``tol`` the KKT tolerance matched to
    the model's stopping tolerance (``libsvm_tol_of``).
    """

    machine: Machine
    solution: Solution
    index: NDArray[np.intp]
    labels: tuple[float, float] | None
    decision_factor: float
    assumed: tuple[str, ...]
    tol: float


# -- parsing -------------------------------------------------------------------------------

def parse_libsvm_model(path: str | Path) -> LibsvmModel:
    """Parse an svm-train model file (LIBSVM 2.x to 3.37).

    Raises
    ------
    ValidationError
        Naming the line and what was expected, where the file is not a model file.
    """
    p = Path(path)
    if not p.is_file():
        raise fail("model", "an existing LIBSVM model file", str(path))
    try:
        # utf-8-sig: a byte-order mark (a file saved by a Windows editor) is read past, as load_csv does; as
        # 'utf-8' it stayed on the first key, and '\ufeffsvm_type' was refused as no header key
        lines = p.read_text(encoding="utf-8-sig").splitlines()
    except OSError as exc:                           # a file this user may not read (chmod 000)
        raise ValidationError(f"model must be a readable LIBSVM model file; got {str(path)!r} "
                              f"({exc.strerror or exc})") from exc
    except UnicodeDecodeError as exc:
        raise ValidationError(f"model must be a LIBSVM model file (text); got {str(path)!r}, whose byte "
                              f"{exc.object[exc.start:exc.start + 1]!r} at offset {exc.start} is not text") from exc
    header: dict[str, list[str]] = {}
    for number, line in enumerate(lines):
        words = line.split()
        if not words:
            continue
        if words[0] == "SV":
            return _model(header, lines[number + 1:], number + 2, str(path))
        if len(words) < 2 and words[0] in _ONE_VALUE:
            raise ValidationError(f"model {str(path)!r}: line {number + 1} must be a header key and its value; "
                                  f"got {line.strip()!r} alone")
        if words[0] not in _KEYS:      # LIBSVM refuses the file too ("unknown text in model file")
            raise ValidationError(f"model {str(path)!r}: line {number + 1} must start with a header key "
                                  f"({', '.join(_KEYS)}) or be 'SV'; got {words[0][:40]!r}")
        if words[0] in header:         # svm_save_model writes each key once: the last one read won, silently
            raise ValidationError(f"model {str(path)!r}: line {number + 1} repeats the header key {words[0]!r} "
                                  f"(each is written once); got {line.strip()[:60]!r} after {header[words[0]]}")
        header[words[0]] = words[1:]
    raise ValidationError(f"model must be a LIBSVM model file with an 'SV' line; got {str(path)!r} without one")


#: header keys of one value each (rho, label, nr_sv, probA, probB hold one per class or pair: none for one class)
_ONE_VALUE = ("svm_type", "kernel_type", "nr_class", "total_sv", "degree", "gamma", "coef0")
#: every key svm_load_model reads (LIBSVM 3.37: prob_density_marks, one-class probabilities, is read and not used)
_KEYS = (*_ONE_VALUE, "rho", "label", "probA", "probB", "prob_density_marks", "nr_sv")
#: the kernel's parameters svm_save_model writes for each kernel type (read, not defaulted: a missing one
#: is a damaged file, whose decision values a default would change without a word)
_KERNEL_KEYS = {"linear": (), "polynomial": ("degree", "gamma", "coef0"), "rbf": ("gamma",),
                "sigmoid": ("gamma", "coef0")}
#: the svm types of classifiers, whose files hold label and nr_sv (which support vector is of which class)
_CLASSIFIERS = ("c_svc", "nu_svc")


def _model(header: dict[str, list[str]], body: list[str], first_line: int, path: str) -> LibsvmModel:
    def need(key: str) -> list[str]:
        if key not in header:
            raise ValidationError(f"model {path!r} must have a '{key}' line in its header; got none")
        return header[key]

    def numbers(key: str, kind: type = float) -> np.ndarray | None:
        if key not in header:
            return None
        try:
            values = np.array([kind(v) for v in header[key]])
        except ValueError:
            raise ValidationError(f"model {path!r}: '{key}' must be followed by numbers; got {header[key]}") from None
        if kind is int and not all(INT_RANGE[0] <= v <= INT_RANGE[1] for v in values.tolist()):
            # svm_load_model reads them with %d into a C int; a larger one made an object array, not a number
            raise ValidationError(f"model {path!r}: '{key}' must be followed by integers in [{INT_RANGE[0]}, "
                                  f"{INT_RANGE[1]}] (LIBSVM's C ints); got {header[key]}")
        if not np.all(np.isfinite(values)):      # svm_save_model writes none: a damaged or edited file
            raise ValidationError(f"model {path!r}: '{key}' must be followed by finite numbers; got {header[key]}")
        return values

    svm_type, kernel_type = need("svm_type")[0], need("kernel_type")[0]
    if svm_type not in {c.libsvm_svm_type for c in MACHINES.values() if c.libsvm_svm_type}:
        raise ValidationError(f"model {path!r}: svm_type must be c_svc, nu_svc, one_class, epsilon_svr or nu_svr; "
                              f"got {svm_type[:40]!r}")
    if kernel_type not in _KERNELS:
        raise ValidationError(f"model {path!r}: kernel_type must be linear, polynomial, rbf or sigmoid (precomputed "
                              f"is not read); got {kernel_type[:40]!r}")
    for key in _ONE_VALUE:
        if key in header and len(header[key]) != 1:
            raise ValidationError(f"model {path!r}: '{key}' must be followed by one value; got {header[key]}")
    nr_class = int(numbers("nr_class", int)[0]) if "nr_class" in header else 2
    if nr_class < 2:
        raise ValidationError(f"model {path!r}: nr_class must be an integer >= 2; got {nr_class}")
    for key in ("label", "nr_sv"):
        if key in header and len(header[key]) != nr_class:
            raise ValidationError(f"model {path!r}: '{key}' must hold nr_class = {nr_class} values; got {header[key]}")
    for key in _KERNEL_KEYS[kernel_type] + (("label", "nr_sv") if svm_type in _CLASSIFIERS else ()):
        need(key)
    rho = numbers("rho")
    if rho is None or rho.shape[0] != nr_class * (nr_class - 1) // 2:
        raise ValidationError(f"model {path!r}: rho must hold {nr_class * (nr_class - 1) // 2} values; got "
                              f"{None if rho is None else rho.tolist()}")
    coef, SV = _sv_lines(body, nr_class - 1, first_line, path)
    total = int(numbers("total_sv", int)[0]) if "total_sv" in header else coef.shape[1]
    if total != coef.shape[1]:
        raise ValidationError(f"model {path!r}: total_sv is {total} but it has {coef.shape[1]} SV lines")
    classifier = svm_type in _CLASSIFIERS         # a regression or one-class file's label and nr_sv are not used
    nr_sv = numbers("nr_sv", int) if classifier else None
    if nr_sv is not None and (int(nr_sv.sum()) != total or np.any(nr_sv < 0)):
        raise ValidationError(f"model {path!r}: nr_sv {nr_sv.tolist()} must be counts summing to total_sv = {total}")
    label = numbers("label", int) if classifier else None
    return LibsvmModel(svm_type, kernel_type, int(numbers("degree", int)[0]) if "degree" in header else 3,
                       float(numbers("gamma")[0]) if "gamma" in header else 0.0,
                       float(numbers("coef0")[0]) if "coef0" in header else 0.0,
                       nr_class, rho, label, nr_sv, coef, SV, numbers("probA"), numbers("probB"))


def _sv_lines(body: list[str], n_coef: int, first_line: int, path: str) -> tuple[Array, Any]:
    """The coefficient matrix (n_coef, total_sv) and the support vectors as CSR."""
    coef: list[list[float]] = []
    rows, cols, vals = [], [], []
    lines = [(first_line + offset, x) for offset, x in enumerate(body) if x.strip()]  # (file line, text)
    for k, (number, line) in enumerate(lines):
        words, first_value = line.split(), len(vals)
        try:
            coef.append([float(w) for w in words[:n_coef]])
            for pair in words[n_coef:]:
                index, value = pair.split(":")
                if int(index) < 1:
                    raise ValueError(pair)
                rows.append(k), cols.append(int(index) - 1), vals.append(float(value))
        except ValueError:
            raise ValidationError(f"model {path!r}, line {number}: an SV line must be {n_coef} "
                                  f"coefficients then index:value pairs (index >= 1); got {line[:60]!r}") from None
        if len(coef[-1]) != n_coef:
            raise ValidationError(f"model {path!r}, line {number}: expected {n_coef} coefficients")
        if not (np.all(np.isfinite(coef[-1])) and np.all(np.isfinite(vals[first_value:]))):
            raise ValidationError(f"model {path!r}, line {number}: an SV line's coefficients and values must be "
                                  f"finite numbers; got {line[:60]!r}")
        if np.any(np.diff(cols[first_value:]) <= 0):
            # svm_save_model writes them increasing, and LIBSVM's kernels merge two rows assuming so: read in
            # another order (or summed, for a repeated index), the row would be another point than LIBSVM's
            raise ValidationError(f"model {path!r}, line {number}: an SV line's feature indices must increase, as "
                                  f"svm_save_model writes them and LIBSVM's kernels read them; got {line[:60]!r}")
    n = len(coef)
    SV = sp.csr_matrix((vals, (rows, cols)), shape=(n, max(cols, default=-1) + 1))
    return np.array(coef, dtype=np.float64).reshape(n, n_coef).T, SV


# -- from a model to machines and Solutions -------------------------------------------------

def _feature_key(row: Any) -> tuple:
    """A row's nonzero features rounded as LIBSVM writes them (``%.8g``)."""
    return tuple((i, float(f"{v:.{FEATURE_DIGITS}g}")) for i, v in _nonzeros(row))


def _match_support_vectors(model: LibsvmModel, X: Any, y: Array | None) -> NDArray[np.intp]:
    """The training row of each support vector: the same features to 8 digits and, for a classifier,
    the same label. Identical training points of a classifier (or one-class) are taken in turn: any
    order gives the same problem. A regression's identical inputs may have other targets: they are
    matched by ``_by_residual_order``."""
    if model.SV.shape[1] > X.shape[1]:
        raise ValidationError(f"X must have the model's {model.SV.shape[1]} features at least; got {X.shape[1]}")
    X = sp.csr_matrix(X) if issparse(X) else np.asarray(X)
    table: dict[tuple, list[int]] = {}
    cls = model.sv_class()
    for n in range(X.shape[0]):
        key = _feature_key(X[n])
        table.setdefault((key, None if cls is None else float(y[n])), []).append(n)
    wanted: dict[tuple, list[int]] = {}                      # each key's support vectors, in file order
    for k in range(model.total_sv):
        label = None if cls is None else float(model.label[cls[k]])
        wanted.setdefault((_feature_key(model.SV[k]), label), []).append(k)
    out = np.empty(model.total_sv, dtype=np.intp)
    for key, svs in wanted.items():
        rows = table.get(key, [])
        if len(rows) < len(svs):
            label = "" if key[1] is None else f" (label {key[1]:g})"
            why = (f"matches no training point to {FEATURE_DIGITS} digits" if not rows else
                   f"has no training point left: the data hold {len(rows)} of its {len(svs)} copies")
            raise ValidationError(f"the data must be the model's training set: support vector {svs[len(rows)] + 1}"
                                  f"{label} {why}")
        regression = cls is None and y is not None and len(rows) > 1
        out[svs] = _by_residual_order(model.sv_coef[0, svs], y[rows], rows) if regression else rows[:len(svs)]
    return out


def _by_residual_order(coef: Array, targets: Array, rows: list[int]) -> NDArray[np.intp]:
    """The rows of support vectors of coefficients ``coef`` among training points of one input x whose
    targets are ``targets``: at an optimum of epsilon- or nu-SVR a point's coefficient a_n - a_hat_n is
    non-decreasing in its residual t_n - y(x_n) (0 inside the tube, (7.65)-(7.66)), and points of one x
    share y(x): so the coefficients, padded with the zeros of the points that are not support vectors,
    are matched to the targets in the same order (LIBSVM's coefficient is the notes' a_n - a_hat_n)."""
    padded = np.concatenate([coef, np.zeros(len(rows) - coef.size)])
    by_coef = np.argsort(padded, kind="stable")              # the k-th smallest coefficient ...
    by_target = np.asarray(rows)[np.argsort(targets, kind="stable")]   # ... goes to the k-th smallest target
    out = np.empty(len(rows), dtype=np.intp)
    out[by_coef] = by_target
    return out[:coef.size]


def libsvm_tol_of(machine: Machine, eps: float) -> float:
    """The KKT tolerance matched to svm-train's stopping tolerance ``-e eps`` (LIBSVM's gradient units):
    the relative tol eps / (libsvm_scale * qp.tol_scale), at ``matched_tol``'s factor and floor."""
    eps = float(check_param("tol", eps))
    relative = eps / (machine.libsvm_scale * machine.standard_qp().tol_scale)
    return matched_tol(machine, "libsvm", relative)


def read_libsvm_model(path: str | Path, X: ArrayLike, y: ArrayLike | None = None, *, C: float | None = None,
                      nu: float | None = None, epsilon: float | None = None,
                      eps: float = SVM_TRAIN_DEFAULTS["eps"]) -> list[ModelProblem]:
    """The machines and Solutions a model file encodes, on its training data.

    Parameters
    ----------
    path : str or Path
        The model file (``svm-train``'s output or ``svm_save_model``'s).
    X : array or sparse matrix (N, D)
        The training inputs the model was fitted on (a LIBSVM-format file's, as ``datasets.load_libsvm``).
    y : array (N,), optional
        The training labels (classifiers, as in the file) or targets (regression); None for one-class.
    C, nu, epsilon : float, optional
        svm-train's ``-c``, ``-n``, ``-p`` (LIBSVM's units: nu-SVR's C is the notes' C / N). None:
        svm-train's defaults 1, 0.5, 0.1; the one-class nu is read off the coefficients (sum alpha = nu N).
    eps : float
        svm-train's ``-e`` (default 1e-3), which sets each problem's matched KKT tolerance.

    Returns
    -------
    list of ModelProblem
        One per binary problem (k (k - 1) / 2 for k classes, in LIBSVM's order), else one.
    """
    model = parse_libsvm_model(path)
    y_arr = None if y is None else np.asarray(y, dtype=np.float64).ravel()
    if model.label is not None and y_arr is None:
        raise fail("y", f"the training labels of the {model.svm_type} model", None)
    if y_arr is not None and y_arr.shape[0] != X.shape[0]:
        raise fail("y", f"one label or target per row of X ({X.shape[0]})", y_arr)
    if y_arr is not None and not np.all(np.isfinite(y_arr)):     # no training file holds nan or inf
        raise fail("y", "finite labels or targets, as the model's training file held them",
                   y_arr[~np.isfinite(y_arr)][0])
    if model.label is not None and not np.all(y_arr == np.trunc(y_arr)):
        odd = y_arr[y_arr != np.trunc(y_arr)][0]
        raise ValidationError(f"y must be the training labels as the {model.svm_type} model holds them, integers "
                              f"(svm-train reads a label {odd:g} as {int(np.trunc(odd))}); got {odd:g}")
    rows = _match_support_vectors(model, X, y_arr)
    cls_name = next(c for c in MACHINES.values() if c.libsvm_svm_type == model.svm_type and c.libsvm_twin)
    if model.label is None:
        coef = np.zeros(X.shape[0])
        np.add.at(coef, rows, model.sv_coef[0])
        nu_given = nu
        if model.svm_type == "one_class" and nu is None:
            nu = float(np.sum(coef)) / X.shape[0]                # LIBSVM: sum alpha = nu N
        params, assumed = _params(C, nu, epsilon, cls_name, given_nu=nu_given)
        target = None if model.svm_type == "one_class" else y_arr
        return [_problem(model, cls_name, X, target, coef, float(model.rho[0]), np.arange(X.shape[0]), None,
                         params, assumed, eps)]
    params, assumed = _params(C, nu, epsilon, cls_name, given_nu=nu)
    return [_pair(model, cls_name, X, y_arr, rows, i, j, p, params, assumed, eps)
            for p, (i, j) in enumerate((i, j) for i in range(model.nr_class) for j in range(i + 1, model.nr_class))]


def _params(C: float | None, nu: float | None, epsilon: float | None, cls: type[Machine],
            given_nu: float | None) -> tuple[dict[str, Any], tuple[str, ...]]:
    """LIBSVM's hyperparameters for ``from_libsvm``, and a note for each one not given."""
    values = {"C": C, "nu": nu, "epsilon": epsilon}
    names = {"C": "C", "nu": "nu", "epsilon": "epsilon"}
    needed = [k for k in ("C", "nu", "epsilon") if k in cls._hyper_names]
    for key in ("C", "nu", "epsilon"):
        if values[key] is not None and key not in needed:   # it would be ignored without a word
            raise ValidationError(f"{key} must not be given for a {cls.libsvm_svm_type} model (its hyperparameters: "
                                  f"{', '.join(needed)}); got {key} = {values[key]!r}")
    assumed = []
    for key in needed:
        if values[key] is None:
            values[key] = SVM_TRAIN_DEFAULTS[key]
            assumed.append(f"{names[key]} = {values[key]:g} (svm-train's default; the model file does not keep it)")
        elif key == "nu" and given_nu is None:
            assumed.append(f"nu = {values[key]:.10g} (read off the coefficients: sum alpha = nu N)")
    return {**values, "class_weight": None}, tuple(assumed)


def _pair(model: LibsvmModel, cls: type[Machine], X: Any, y: Array, rows: NDArray[np.intp], i: int, j: int,
          p: int, params: dict[str, Any], assumed: tuple[str, ...], eps: float) -> ModelProblem:
    """The binary problem of classes i < j: t = +1 for label i, coefficients from rows j - 1 and i."""
    li, lj = float(model.label[i]), float(model.label[j])
    index = np.flatnonzero((y == li) | (y == lj))
    position = np.full(y.shape[0], -1)
    position[index] = np.arange(index.size)
    cls_of = model.sv_class()
    coef = np.zeros(index.size)
    for k in np.flatnonzero((cls_of == i) | (cls_of == j)):
        coef[position[rows[k]]] += model.sv_coef[j - 1 if cls_of[k] == i else i, k]
    t = np.where(y[index] == li, 1.0, -1.0)
    return _problem(model, cls, X[index], t, coef, float(model.rho[p]), index, (li, lj), params, assumed, eps)


def _problem(model: LibsvmModel, cls: type[Machine], X: Any, t: Array | None, coef: Array, rho: float,
             index: NDArray[np.intp], labels: tuple[float, float] | None, params: dict[str, Any],
             assumed: tuple[str, ...], eps: float) -> ModelProblem:
    machine = cls.from_libsvm(X, t, model.kernel(), params, None)
    solution = machine.solution(coef, rho=rho, convention="libsvm", solver="LIBSVM model file")
    return ModelProblem(machine, solution, index, labels, machine.libsvm_decision_factor(solution), assumed,
                        libsvm_tol_of(machine, eps))


def check_libsvm_model(path: str | Path, X: ArrayLike, y: ArrayLike | None = None, tol: float | None = None,
                       **hyper: Any) -> list[tuple[ModelProblem, Any]]:
    """Each problem of a model file with its KKT report (``duality.check``), at ``tol`` or at the
    tolerance matched to svm-train's ``eps`` (``hyper``: ``C``, ``nu``, ``epsilon``, ``eps`` as for
    ``read_libsvm_model``)."""
    from .duality import check

    problems = read_libsvm_model(path, X, y, **hyper)
    return [(pr, check(pr.machine, pr.solution, pr.tol if tol is None else tol)) for pr in problems]


# -- writing ---------------------------------------------------------------------------------

def save_libsvm_model(path: str | Path, machine: Machine, solution: Solution,
                      labels: Sequence[float] = (1, -1)) -> None:
    """Write ``solution`` of ``machine`` as a LIBSVM model file (``svm_save_model``'s format).

    LIBSVM's ``svm_load_model`` reads it and ``svm_predict`` gives LIBSVM's decision values:
    the notes' y(x) times ``machine.libsvm_decision_factor(solution)``. A two-class machine's
    t = +1 is written as ``labels[0]`` (LIBSVM's first class), t = -1 as ``labels[1]``.
    Values are written with 17 significant digits (LIBSVM writes features with 8).

    Raises
    ------
    ValidationError
        For a machine LIBSVM does not have (SVDD), a kernel it does not have, a solution of
        another machine, or ``labels`` that are not two different integers within a C int.
    """
    svm_type = machine.libsvm_svm_type
    if svm_type is None:
        raise fail("machine", "one LIBSVM solves (c_svc, nu_svc, one_class, epsilon_svr, nu_svr)", machine.name)
    kernel_type = {v: k for k, v in _KERNELS.items()}.get(machine.kernel.name)
    if kernel_type is None:
        raise fail("machine.kernel", "linear, poly, rbf or sigmoid (LIBSVM's kernels)", machine.kernel)
    if solution.machine != machine.name or solution.coef.shape[0] != machine.N:
        raise fail("solution", f"a Solution of this {machine.name} (N = {machine.N})", solution.machine)
    factor = machine.libsvm_decision_factor(solution)
    coef = factor * np.asarray(solution.coef)
    support = np.asarray(solution.support)[coef[solution.support] != 0.0]   # the expansion y(x) uses
    lines = [f"svm_type {svm_type}", f"kernel_type {kernel_type}", *_kernel_lines(kernel_type, machine.kernel)]
    lines += ["nr_class 2", f"total_sv {support.size}", f"rho {-factor * float(solution.b):.17g}"]
    if machine.task == "classification":
        first, second = _integer_labels(labels)
        support = np.concatenate([support[machine.t[support] > 0], support[machine.t[support] < 0]])
        n_pos = int(np.sum(machine.t[support] > 0))
        lines += [f"label {first} {second}", f"nr_sv {n_pos} {support.size - n_pos}"]
    lines.append("SV")
    X = machine.X.tocsr() if issparse(machine.X) else np.asarray(machine.X)
    for n in support:
        lines.append(f"{coef[n]:.17g} " + " ".join(f"{i + 1}:{v:.17g}" for i, v in _features(X, n)))
    Path(path).write_text("\n".join(lines) + "\n")


#: the labels a model file can hold: LIBSVM reads them with %d into a C int
INT_RANGE = (-2**31, 2**31 - 1)


def _is_label(value: Any) -> bool:
    """An integer LIBSVM's C int holds: an int, a numpy integer, or a float equal to one (not a bool)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        return False
    return bool(np.isfinite(value) and value == np.floor(value) and INT_RANGE[0] <= value <= INT_RANGE[1])


def _integer_labels(labels: Any) -> tuple[int, int]:
    """``save_libsvm_model``'s two labels as ints, refused unless two different integers LIBSVM holds."""
    domain = (f"two different integers in [{INT_RANGE[0]}, {INT_RANGE[1]}] (t = +1's label, t = -1's; "
              "LIBSVM's are C ints)")
    try:
        pair = list(labels)
    except TypeError:
        raise fail("labels", domain, labels) from None
    if len(pair) != 2 or not all(map(_is_label, pair)) or int(pair[0]) == int(pair[1]):
        raise fail("labels", domain, labels)
    return int(pair[0]), int(pair[1])


def save_fitted_model(path: str | Path, estimator: Any) -> None:
    """Write a fitted ``estimators.SVC`` or ``NuSVC``, any number of classes, as a LIBSVM model file.

    One-versus-one as LIBSVM stores it: the classes in ``classes_`` order (integer labels), with
    ``probability=True`` Platt's sigmoids (``probA``, ``probB``: ``svm-predict -b 1`` then gives the
    pairs' probabilities coupled, those of ``predict_proba`` before its projection onto the decision
    function's order), the
    support vectors grouped by class (``support_vectors_``, ``n_support_``), K - 1 coefficients per
    support vector (``dual_coef_``, LIBSVM's layout) and one rho per pair (-``intercept_``). For two
    classes scikit-learn's layout has the signs of LIBSVM's flipped (positive for ``classes_[1]``), so
    they are flipped back: LIBSVM's first label is ``classes_[0]``. ``svm_predict`` then gives the
    estimator's ``decision_function`` (``decision_function_shape="ovo"``; for two classes its negative).

    Raises
    ------
    ValidationError
        For an estimator that is not a fitted SVC or NuSVC of this library, a kernel LIBSVM does not
        have (callable, precomputed), or labels that are not integers within a C int.
    """
    from sklearn.base import is_classifier
    from sklearn.utils.validation import check_is_fitted

    from .estimators.svm import _BaseSVM
    from .formulations.libsvm import machine_for_twin

    if not (isinstance(estimator, _BaseSVM) and is_classifier(estimator)):
        raise fail("estimator", "a fitted sparsekernel.estimators.SVC or NuSVC", type(estimator).__name__)
    check_is_fitted(estimator)
    svm_type = machine_for_twin(estimator._twin).libsvm_svm_type       # c_svc or nu_svc
    kernel = estimator.solutions_[0].kernel
    kernel_type = {v: k for k, v in _KERNELS.items()}.get(kernel.name)
    if kernel_type is None:
        raise fail("estimator.kernel", "linear, poly, rbf or sigmoid (LIBSVM's kernels)", estimator.kernel)
    classes = np.asarray(estimator.classes_)
    if not (classes.dtype.kind == "b" or (classes.dtype.kind in "iuf" and all(map(_is_label, classes.tolist())))):
        raise fail("estimator.classes_", f"integer labels in [{INT_RANGE[0]}, {INT_RANGE[1]}] (LIBSVM's model "
                                         "files hold C ints)", classes.tolist())
    sign = -1.0 if classes.size == 2 else 1.0                 # scikit-learn's two-class flip, undone
    coef = sign * np.asarray(to_dense(estimator.dual_coef_), dtype=np.float64)   # CSR after a sparse fit
    rho = sign * -np.asarray(estimator.intercept_, dtype=np.float64)
    lines = [f"svm_type {svm_type}", f"kernel_type {kernel_type}"]
    lines += _kernel_lines(kernel_type, kernel)
    lines += [f"nr_class {classes.size}", f"total_sv {coef.shape[1]}",
              "rho " + " ".join(f"{r:.17g}" for r in rho),
              "label " + " ".join(str(int(c)) for c in classes)]
    A, B = estimator._libsvm_sigmoids(classes.size)
    if A.size:          # the fit's Platt sigmoids (not the parameter's), per pair (i, j), i < j: svm-predict -b 1
        lines += ["probA " + " ".join(f"{a:.17g}" for a in A), "probB " + " ".join(f"{b:.17g}" for b in B)]
    lines += ["nr_sv " + " ".join(str(int(n)) for n in estimator.n_support_), "SV"]
    SV = estimator.support_vectors_
    SV = SV.tocsr() if issparse(SV) else np.asarray(SV)
    for n in range(coef.shape[1]):
        lines.append(" ".join(f"{c:.17g}" for c in coef[:, n]) + " "
                     + " ".join(f"{i + 1}:{v:.17g}" for i, v in _features(SV, n)))
    Path(path).write_text("\n".join(lines) + "\n")


def _kernel_lines(kernel_type: str, k: Kernel) -> list[str]:
    """The header lines of a kernel's parameters, as svm_save_model writes them."""
    lines = []
    if kernel_type == "polynomial":
        lines.append(f"degree {int(k.degree)}")
    if kernel_type != "linear":
        lines.append(f"gamma {float(k.gamma):.17g}")
    if kernel_type in ("polynomial", "sigmoid"):
        lines.append(f"coef0 {float(k.coef0):.17g}")
    return lines


def _features(X: Any, n: int) -> list[tuple[int, float]]:
    """Row n's nonzero (index, value) pairs, in index order."""
    return _nonzeros(X[n])


def _nonzeros(row: Any) -> list[tuple[int, float]]:
    """A row's (index, value) pairs where the value is not zero, in index order (dense or sparse)."""
    if issparse(row):
        row = sp.csr_matrix(row)
        return [(int(i), float(v)) for i, v in sorted(zip(row.indices, row.data)) if v != 0.0]
    values = np.asarray(row, dtype=np.float64).ravel()
    return [(int(i), float(values[i])) for i in np.flatnonzero(values)]