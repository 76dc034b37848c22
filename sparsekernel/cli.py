"""The ``sparsekernel`` command.

``sparsekernel tour``                      every machine on the notes' data, every method, one table
``sparsekernel kkt MACHINE --data FILE``   the KKT report of one machine solved by one method
``sparsekernel compare MACHINE --data F``  several methods on one machine, side by side
``sparsekernel rvm TASK --data FILE``       the relevance vector machine (regression or classification)
``sparsekernel figures --out DIR``          the chapter's figures as PNG and SVG, with captions
``sparsekernel demo [--port P]``            the browser demonstrations, served on 127.0.0.1
``sparsekernel check --model F --data F``   certify a LIBSVM model file, or --multipliers a.npy MACHINE

Machine names: hard, soft, nu-svc, eps-svr, nu-svr, one-class, svdd. Data
files are CSV (last column the target) or LIBSVM format, told apart by
``datasets.infer_format`` (the rule the demo's upload uses) or by ``--format``.
``kkt`` and ``compare`` solve by ``--method auto`` unless told otherwise
(``methods.auto_method``: the cvxpy dual up to ``AUTO_DUAL_MAX_N`` points, the
SMO above or where the Gram matrix is not positive semidefinite); the SMO and LIBSVM run at ``--solver-tol`` (LIBSVM's units,
default LIBSVM's 1e-3) and the report at the tolerance matched to it
(``formulations.solve.matched_tol``) unless ``--tol`` is given. ``kkt``,
``check`` and ``rvm`` exit with status 1 when the report fails, ``tour`` and
``compare`` when a method fails; every bad argument, file or
environment is one line on stderr and status 2; an error no check foresaw is
one line and status 3 (``SPARSEKERNEL_DEBUG=1`` raises it with its
traceback). Progress goes to stderr while it is a terminal, unless ``--quiet``.
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
import warnings
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from . import __version__
from ._progress import Progress
from .errors import SolverError, SparseKernelError, ValidationError
from .methods import AUTO_DUAL_MAX_N, auto_method, auto_rule, solve_by

__all__ = ["main", "build_parser", "machine_from_args", "LIBSVM_TOL"]

#: The SMO's and LIBSVM's tolerance on the command line where ``--solver-tol`` is not given: LIBSVM's
#: (and scikit-learn's) default, in LIBSVM's units.
LIBSVM_TOL = 1e-3
#: The largest ``tour --n-ripley``: the whole tour takes about 70 s at N = 1,000 (2 cores), where its cvxpy
#: duals hold an N x N term and EM's RVC costs O(N^3) an iteration (12 s); at 5,000 it ran for over 10 minutes
#: on the RVC rows alone.
MAX_TOUR_N = 1000
#: A report's tolerance is relative to each row's scale (the box C for the multipliers): at 1 a multiplier at twice
#: its bound passes, and the SMO at --solver-tol 1e300 stopped at its start (a = 0, relative gap 1), reported
#: 'result: PASS', exit status 0. A verdict at a tolerance of MAX_REPORT_TOL or more certifies nothing: refused.
MAX_REPORT_TOL = 1.0
#: where the notes list each task's cases of ``kkt``'s 'points by case': the soft margin's table (Result 7.6), the
#: tube's (Result 7.9 (iii)); one-class and SVDD have no table in the notes (Filling the gap 7.5 is their geometry)
CASES_SOURCE = {"classification": "Result 7.6", "regression": "Result 7.9",
                "novelty": "the boundary's analogue of Result 7.6"}


def _tour(args: argparse.Namespace) -> int:
    from .tour import TOUR_METHODS, format_table, rows_to_json, run_tour

    methods = args.methods.split(",") if args.methods else list(TOUR_METHODS)
    _listed_once(methods, args.methods, "--methods", "method")
    if not 4 <= args.n_ripley <= MAX_TOUR_N:
        raise ValidationError(f"--n-ripley must be an integer in [4, {MAX_TOUR_N}] (the tour solves every "
                              f"machine by every method, the cvxpy duals among them); got {args.n_ripley}")
    if args.figures:
        args.out, args.only = args.figures, ""
        _figure_names(args, "--figures")           # matplotlib and --figures checked before the tour runs
    with Progress(args.quiet) as progress:
        rows = run_tour(methods, n_ripley=args.n_ripley, progress=progress.step)
    print(rows_to_json(rows) if args.json else format_table(rows))
    status = 0 if rows.certified else 1            # a row whose solver failed, or whose KKT check did
    if args.figures:
        return _write_figures(args, quiet=args.json, option="--figures") or status
    return status


def _listed_once(items: list[str], text: str, option: str, what: str) -> None:
    """A ValidationError for an empty item of a comma-separated ``option`` or one named twice (each would
    be run, drawn and listed twice), as ``compare --methods`` refuses them."""
    if not all(item.strip() for item in items):
        raise ValidationError(f"{option} must be a comma-separated list of {what}s, none empty; got {text!r}")
    lowered = [item.lower() for item in items]
    repeated = sorted({m for m in lowered if lowered.count(m) > 1})
    if repeated:
        raise ValidationError(f"{option} must name each {what} once; got {text!r}, which names "
                              f"{', '.join(repeated)} twice")


def _load(args: argparse.Namespace) -> tuple[Any, np.ndarray]:
    """X, t from the data file: a LIBSVM file's X stays sparse (CSR) through the fit."""
    from .datasets import load

    return load(args.data, args.format, name="--data")


def _checked(X: Any, t: np.ndarray, path: str) -> tuple[Any, np.ndarray]:
    """The data file's X and targets, finite (a NaN would otherwise surface as a kernel width or a label);
    where the targets are told by the file's format (a LIBSVM file's X is sparse: its first field)."""
    import scipy.sparse as sp

    from .validation import check_matrix

    column = "the first field of each line" if sp.issparse(X) else "the last column"
    X = check_matrix(X, f"X (the features in {path})", sparse=True)
    bad = np.flatnonzero(~np.isfinite(t))
    if bad.size:
        raise ValidationError(f"the targets ({column} of {path}) must be finite; got {t[bad[0]]} at data "
                              f"row {int(bad[0]) + 1}")
    return X, t


def _labels(t: np.ndarray) -> tuple[np.ndarray, str | None]:
    """Two class labels as -1/+1 (the smaller label becomes -1)."""
    values = np.unique(t)
    if values.size != 2:
        raise ValidationError(f"the data's targets must hold two class labels for a classifier; got {values.size}")
    if set(values.tolist()) == {-1.0, 1.0}:
        return t, None
    return np.where(t == values[1], 1.0, -1.0), f"labels {values[0]:g} -> -1 and {values[1]:g} -> +1"


#: the kernel options where --gamma, --degree, --coef0 are not given, and the options each kernel reads
KERNEL_DEFAULTS = {"gamma": "scale", "degree": 3, "coef0": 0.0}
KERNEL_READS = {"linear": (), "poly": ("gamma", "degree", "coef0"), "rbf": ("gamma",), "sigmoid": ("gamma", "coef0")}


def flag(dest: str) -> str:
    """The option of an argparse destination: class_weight -> --class-weight."""
    return "--" + dest.replace("_", "-")


def kernel_options(args: argparse.Namespace) -> dict[str, Any]:
    """--gamma, --degree and --coef0 as ``args.kernel`` reads them (``KERNEL_DEFAULTS`` where not given); a
    ValidationError for one given to a kernel that does not read it (it would be ignored without a word)."""
    for name, default in KERNEL_DEFAULTS.items():
        value = getattr(args, name)
        if value is not None and name not in KERNEL_READS[args.kernel]:
            readers = [k for k, reads in KERNEL_READS.items() if name in reads]
            raise ValidationError(f"{flag(name)} applies to the {', '.join(readers)} kernel{'s' * (len(readers) > 1)}; "
                                  f"got {flag(name)} {value} "
                                  f"with --kernel {args.kernel}")
    return {name: default if getattr(args, name) is None else getattr(args, name)
            for name, default in KERNEL_DEFAULTS.items()}


def machine_from_args(args: argparse.Namespace) -> tuple[Any, list[str]]:
    """Build the machine the command-line arguments describe, with notes to show the user."""
    from .formulations import MACHINES
    from .kernels import make_kernel
    from .libsvm_model import SVM_TRAIN_DEFAULTS
    from .sparse import variance as sparse_variance

    X, t = _checked(*_load(args), args.data)
    cls = MACHINES[args.machine]
    names = cls._hyper_names
    for name in ("C", "nu", "epsilon", "class_weight"):
        if getattr(args, name) is not None and name not in names:
            having = ", ".join(sorted(n for n, c in MACHINES.items() if name in c._hyper_names))
            raise ValidationError(f"{flag(name)} applies to the machines that have it ({having}); got "
                                  f"{flag(name)} {getattr(args, name)} for {args.machine}")
    notes = []
    options = kernel_options(args)
    gamma = None if options["gamma"] == "scale" else float(options["gamma"])
    with np.errstate(over="ignore"):                 # an overflowing variance is refused by make_kernel
        variance = sparse_variance(X)
    kernel = make_kernel(args.kernel, gamma=gamma, degree=options["degree"], coef0=options["coef0"],
                         n_features=X.shape[1], X_var=variance)
    if cls.task == "classification":
        t, note = _labels(t)
        notes += [note] if note else []
    hyper: dict[str, Any] = {}
    for name in ("C", "nu", "epsilon"):
        if name in names:
            # svm-train's defaults where --C, --nu, --epsilon are not given
            hyper[name] = SVM_TRAIN_DEFAULTS[name] if getattr(args, name) is None else getattr(args, name)
    if "class_weight" in names and args.class_weight:
        hyper["class_weight"] = args.class_weight
    if cls.task == "novelty":
        return cls(X, kernel, **hyper), notes
    return cls(X, t, kernel, **hyper), notes


def _method(name: str, machine: Any) -> tuple[str, list[str]]:
    """The method ``name`` names for ``machine`` (``auto`` resolved), with a note when it was chosen; lower
    case, as ``solve`` reads it (``--method SMO`` is the SMO, at ``--solver-tol``)."""
    name = name.lower()
    if name != "auto":
        return name, []
    method = auto_method(machine)
    return method, [f"method auto: {method} ({auto_rule(machine)})"]


def _solve(machine: Any, method: str, solver_tol: float | None) -> Any:
    """``solve_by``, with the SMO and LIBSVM at ``solver_tol`` in LIBSVM's units (``LIBSVM_TOL`` if None)."""
    from .formulations.solve import libsvm_tol

    tol = LIBSVM_TOL if solver_tol is None else solver_tol
    if method == "smo":
        return solve_by(machine, "smo", tol=tol, tol_units="libsvm")
    if method == "libsvm":
        return solve_by(machine, "libsvm", tol=libsvm_tol(machine, tol))
    return solve_by(machine, method)


def _refuse_vacuous(machine: Any, methods: list[str], solver_tol: float | None) -> None:
    """A ValidationError where ``--solver-tol`` (or its default) matches the SMO's or LIBSVM's certificate to a
    tolerance of ``MAX_REPORT_TOL`` or more (``matched_tol``, the report's where ``--tol`` is not given), before
    anything is solved."""
    from .formulations.solve import libsvm_tol, matched_tol

    tol = LIBSVM_TOL if solver_tol is None else solver_tol
    for method in methods:
        if method not in ("smo", "libsvm"):
            continue
        report_tol = matched_tol(machine, method, libsvm_tol(machine, tol))
        if not report_tol < MAX_REPORT_TOL:
            raise ValidationError(f"--solver-tol must give {method}'s certificate a tolerance below {MAX_REPORT_TOL:g} "
                                  f"(relative to each row's scale: at 1 a multiplier at twice its bound passes); got "
                                  f"--solver-tol {tol:g}{' (the default)' if solver_tol is None else ''}, a tolerance "
                                  f"of {report_tol:.1e} for {machine.name}: give a smaller --solver-tol, or --tol")


def _tol_note(method: str, solver_tol: float | None, report_tol: float, given: bool) -> str:
    """Which tolerance the solve ran at and which the report is checked at."""
    if method in ("smo", "libsvm"):
        run = f"{method} at tol {LIBSVM_TOL if solver_tol is None else solver_tol:g} (LIBSVM's units)"
    else:
        run = f"{method} at its fixed accuracy" + (" (--solver-tol applies to smo and libsvm only)"
                                                    if solver_tol is not None else "")
    return f"{run}; report at {'--tol' if given else 'the matched tolerance'} {report_tol:.1e}"


def _kkt(args: argparse.Namespace) -> int:
    from .duality import categories, check

    with Progress(args.quiet) as progress:
        progress.step(f"reading {args.data}")
        machine, notes = machine_from_args(args)
        method, chosen = _method(args.method, machine)
        if args.tol is None:                    # the report at the tolerance matched to --solver-tol
            _refuse_vacuous(machine, [method], args.solver_tol)
        progress.step(f"solving {machine.name} (N = {machine.N}) by {method}")
        try:
            sol = _solve(machine, method, args.solver_tol)
        except SolverError as exc:              # an answer that fails its certificate: the report, status 1
            if exc.report is None:
                raise
            print(f"sparsekernel kkt: SolverError: {exc}", file=sys.stderr)
            print(exc.report.to_json() if args.json else exc.report)
            return 1
        if args.tol is None and sol.report is not None:
            report = sol.report                 # the certificate of the solve, at its matched tolerance
        else:
            progress.step("checking the KKT conditions")
            report = check(machine, sol, args.tol)
        progress.step(f"sorting the points by case ({CASES_SOURCE[machine.task]})")
        cases = categories(machine, sol)
    notes = chosen + notes + [_tol_note(method, args.solver_tol, report.tol, args.tol is not None)]
    if args.json:
        import json

        payload = report.to_dict()
        payload["method"] = method
        payload["categories"] = cases.counts
        payload["notes"] = payload["notes"] + notes
        print(json.dumps(payload, indent=2))
    else:
        for note in notes:
            print(f"note: {note}")
        print(report)
        print(f"\npoints by case ({CASES_SOURCE[machine.task]}):")
        print(cases)
    return 0 if report.ok else 1


def _compare_methods(text: str, machine: Any) -> list[str]:
    """``--methods``: a comma-separated list (``auto`` in it resolved), or ``auto`` alone: the cvxpy dual by
    Clarabel and OSQP, the direct QP, the SMO and LIBSVM up to ``AUTO_DUAL_MAX_N`` points, the SMO and
    LIBSVM above."""
    from .methods import has_libsvm_twin

    text = text.lower()
    if text == "auto":
        # the cvxpy dual by Clarabel and OSQP and the direct QP where they take it (a convex dual, N small)
        small = auto_method(machine) == "clarabel"
        methods = ["clarabel", "osqp", "qp-clarabel", "smo"] if small else ["smo"]
        methods += ["libsvm"] if has_libsvm_twin(machine) else []
        if len(methods) < 2:
            raise ValidationError(f"--methods auto has only the SMO for {machine.name} ({auto_rule(machine)}; LIBSVM "
                                  f"has no such machine): name two methods; got 'auto'")
        return methods
    from .formulations.solve import _check_method

    _listed_once(text.split(","), text, "--methods", "method")      # as tour's: 'smo,,libsvm' is a typo
    # each name checked before any is solved (a typo in the last would otherwise end the command after the others)
    methods = [auto_method(machine) if m == "auto" else _check_method(m) for m in text.split(",")]
    if len(methods) < 2:
        raise ValidationError(f"--methods must name at least two methods; got {text!r}")
    repeated = sorted({m for m in methods if methods.count(m) > 1})
    if repeated:
        auto = f" (auto is {auto_method(machine)} here)" if "auto" in text.split(",") else ""
        raise ValidationError(f"--methods must name each method once{auto}; got {text!r}, which names "
                              f"{', '.join(repeated)} twice")
    return methods


def _compare(args: argparse.Namespace) -> int:
    from .duality.compare import compare_many, dumps, format_many

    with Progress(args.quiet) as progress:
        progress.step(f"reading {args.data}")
        machine, notes = machine_from_args(args)
        methods = _compare_methods(args.methods, machine)
        if args.tol is None:                    # the table at the loosest tolerance matched to the methods
            _refuse_vacuous(machine, methods, args.solver_tol)
        solutions, failures = {}, []
        for m in methods:
            progress.step(f"solving {machine.name} (N = {machine.N}) by {m}")
            try:
                solutions[m] = _solve(machine, m, args.solver_tol)
            except SolverError as exc:          # an answer that fails its certificate: status 1, as kkt's
                if exc.report is None:
                    raise
                failures.append(f"{m}: {exc}")  # one line on stderr, the other methods compared
        if solutions:
            progress.step("comparing the solutions")
            # one tolerance for the table: the loosest of the methods' matched ones, unless --tol is given
            tol = args.tol if args.tol is not None else max(sol.tol for sol in solutions.values())
            summary = compare_many(machine, solutions, tol)
    for failure in failures:
        print(f"sparsekernel compare: SolverError: {failure}", file=sys.stderr)
    if not solutions:
        return 1
    if args.methods.lower() == "auto":
        notes = [f"methods auto: {', '.join(methods)} ({auto_rule(machine)})"] + notes
    tuned = [m for m in methods if m in ("smo", "libsvm")]
    solver_tol = LIBSVM_TOL if args.solver_tol is None else args.solver_tol
    notes.append((f"{' and '.join(tuned)} at tol {solver_tol:g} (LIBSVM's units); " if tuned else "")
                 + (f"table at --tol {tol:.1e}" if args.tol is not None
                    else f"table at the loosest matched tolerance {tol:.1e}"))
    failed = [r["method"] for r in summary["rows"] if not r["kkt_ok"]]
    if failed:
        notes.append(f"above the table's tolerance: {', '.join(failed)}")
    if failures:
        notes.append(f"failed (SolverError, on stderr), not in the table: {', '.join(f.split(':')[0] for f in failures)}")
    summary["notes"] = notes
    print(dumps(summary) if args.json else "\n".join([f"note: {n}" for n in notes] + [format_many(summary)]))
    return 1 if failures or failed else 0       # as kkt's: 0 only where every method is certified


def _figures(args: argparse.Namespace) -> int:
    return _write_figures(args, quiet=False)


def _figure_names(args: argparse.Namespace, option: str = "--out") -> list[str]:
    """The figures to write, after checking that matplotlib is there, that ``--out`` (``option``) can be a
    folder, and that none of the files to write is a folder there: nothing is written before all are known
    to be writable."""
    try:
        import matplotlib  # noqa: F401  (the optional extra "plot")

        from .figures import FIGURES
    except ImportError as exc:
        raise ValidationError(f"figures need matplotlib (pip install 'sparsekernel[plot]'); got {exc}") from exc
    if not args.out.strip():
        raise ValidationError(f"{option} must name a folder (created if missing); got an empty name")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise ValidationError(f"{option} must be a folder (created if missing); got the file {args.out!r}")
    names = args.only.split(",") if args.only else list(FIGURES)
    _listed_once(names, args.only, "--only", "figure")
    unknown = sorted(set(names) - set(FIGURES))
    if unknown:
        raise ValidationError(f"--only must name figures among {sorted(FIGURES)}; got {unknown}")
    from .figures import OUTPUT_SUFFIXES

    blocked = [str(out / f"{n}{suffix}") for n in names for suffix in OUTPUT_SUFFIXES
               if (out / f"{n}{suffix}").exists() and not (out / f"{n}{suffix}").is_file()]
    if blocked:
        raise ValidationError(f"{option} must be a folder where the figures' files can be written; got {args.out!r}, "
                              f"where {blocked[0]} is not a regular file (a folder, a device or a link to one)")
    writable = next(p for p in (out, *out.resolve().parents) if p.exists())
    if not writable.is_dir():
        raise ValidationError(f"{option} must be a folder (created if missing); got {args.out!r}, under the file "
                              f"{writable}")
    if not os.access(writable, os.W_OK | os.X_OK):
        raise ValidationError(f"{option} must be a folder this user can write; got {args.out!r} ({writable} is "
                              f"not writable)")
    return names


def _write_figures(args: argparse.Namespace, quiet: bool, option: str = "--out") -> int:
    names = _figure_names(args, option)
    from .figures import OUTPUT_SUFFIXES, write_figures

    with Progress(args.quiet) as progress:
        results = []
        for name in names:
            progress.step(f"drawing {name}")
            try:
                results += write_figures(args.out, [name])
            except OSError as exc:   # what the checks could not foresee: a folder that cannot be made (/proc/x)
                raise ValidationError(f"{option} must be a folder where the figures' files can be written; got "
                                      f"{args.out!r} ({exc.strerror or exc}: {exc.filename})") from exc
    for result in results:
        if not quiet:   # every file written (the listing said .png, .svg, .txt, and the .json was written too)
            print(f"{args.out}/{result.name}{', '.join(OUTPUT_SUFFIXES)}: {result.caption}")
    return 0


def _demo(args: argparse.Namespace) -> int:
    from .demo import serve

    try:
        serve(port=args.port, open_browser=not args.no_browser)
    except OSError as exc:
        if exc.errno not in (errno.EADDRINUSE, errno.EACCES):
            raise
        raise ValidationError(f"--port must be a port free on 127.0.0.1 (0: any free one); got {args.port} "
                              f"({exc.strerror})") from exc
    return 0


def _gamma(text: str) -> str:
    """--gamma: 'scale' or a positive finite number."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if text != "scale" and not (np.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be 'scale' or a positive finite number; got {text!r}")
    return text


def _positive(text: str) -> float:
    """--tol, --solver-tol: a positive finite number."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not (np.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a positive finite number; got {text!r}")
    return value


def _relative(text: str) -> float:
    """--tol of kkt, compare and check: a positive number below ``MAX_REPORT_TOL`` (a relative tolerance)."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < MAX_REPORT_TOL:
        raise argparse.ArgumentTypeError(f"must be a positive number below {MAX_REPORT_TOL:g} (relative to each "
                                         f"row's scale: at 1 a multiplier at twice its bound passes); got {text!r}")
    return value


def _port(text: str) -> int:
    """--port: 0 (a free port) to 65535."""
    if not (text.isascii() and text.isdigit()) or not 0 <= int(text) <= 65535:   # not "\u0663" (Arabic 3)
        raise argparse.ArgumentTypeError(f"must be an integer in [0, 65535]; got {text!r}")
    return int(text)


class _Parser(argparse.ArgumentParser):
    """argparse, with a bad argument reported on one line (exit status 2, no usage block)."""

    def error(self, message: str) -> Any:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _quiet_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quiet", action="store_true", help="no progress on stderr (none either when stderr "
                   "is not a terminal)")


def _data_arguments(p: argparse.ArgumentParser) -> None:
    """The data file and the kernel, shared by the SVM commands and ``rvm``."""
    p.add_argument("--data", required=True, help="CSV (last column the target) or LIBSVM-format file")
    p.add_argument("--format", choices=["csv", "libsvm"], default=None,
                   help="file format (default: .csv is CSV; .libsvm, .svm, .svmlight are LIBSVM; any other "
                        "name by its first data line: index:value pairs are LIBSVM)")
    p.add_argument("--kernel", default="rbf", choices=["linear", "poly", "rbf", "sigmoid"])
    p.add_argument("--gamma", default=None, type=_gamma,
                   help="width of the rbf, poly and sigmoid kernels, or 'scale' = 1/(D var X) (default)")
    p.add_argument("--degree", type=int, default=None, help="degree of the poly kernel (default 3)")
    p.add_argument("--coef0", type=float, default=None, help="coef0 of the poly and sigmoid kernels (default 0)")
    p.add_argument("--json", action="store_true", help="print JSON instead of the table")
    _quiet_argument(p)


_AUTO_HELP = (f"auto (the default): the cvxpy dual with Clarabel for N <= {AUTO_DUAL_MAX_N}, the SMO above "
              f"(the cvxpy dual's dense N x N term: about 5 s at N = 1,000, 35 s and 0.8 GB at 2,000, 230 s at "
              f"5,000, over 6 GB at 20,000; the SMO 18 to 26 s at 20,000, report included); the SMO too where the Gram "
              f"matrix is not positive semidefinite (a sigmoid kernel), whose dual is not convex")


def _machine_arguments(p: argparse.ArgumentParser) -> None:
    from .formulations import MACHINES

    p.add_argument("machine", choices=sorted(MACHINES), help="which machine")
    _data_arguments(p)
    p.add_argument("--C", type=float, default=None, help="C of soft, eps-svr, nu-svr (default 1)")
    p.add_argument("--nu", type=float, default=None, help="nu of nu-svc, nu-svr, one-class, svdd (default 0.5)")
    p.add_argument("--epsilon", type=float, default=None, help="epsilon of eps-svr (default 0.1)")
    p.add_argument("--class-weight", dest="class_weight", default=None, choices=["balanced"])
    p.add_argument("--solver-tol", dest="solver_tol", type=_positive, default=None,
                   help=f"the SMO's and LIBSVM's tolerance, in LIBSVM's units as scikit-learn's tol "
                        f"(default {LIBSVM_TOL:g}, LIBSVM's); the other methods run at their fixed accuracy")
    p.add_argument("--tol", type=_relative, default=None,
                   help="KKT report tolerance, relative, below 1 (default: the one the solve was certified at, matched "
                        "to the method: twice the SMO's or LIBSVM's relative tol, at least 1e-6 for LIBSVM; "
                        "1e-6 for Clarabel, 1e-5 for OSQP)")


def build_parser() -> argparse.ArgumentParser:
    from ._cli_rvm import add_rvm_parser

    parser = _Parser(
        prog="sparsekernel",
        description="Sparse kernel machines (Bishop, PRML chapter 7): formulations, solvers, duality.",
    )
    parser.add_argument("--version", action="version", version=f"sparsekernel {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    tour = sub.add_parser("tour", help="solve every machine on the notes' data by every method")
    tour.add_argument("--methods", default="",
                      help="comma-separated SVM methods (default: the table's seven, "
                           "primal-clarabel, clarabel, osqp, qp-clarabel, qp-osqp, smo, libsvm); the RVM's rows "
                           "always run fast, mackay and em")
    tour.add_argument("--n-ripley", type=int, default=200, help="size of the Ripley-type mixture")
    tour.add_argument("--json", action="store_true", help="print JSON instead of the table")
    _quiet_argument(tour)
    tour.add_argument("--figures", default="", metavar="DIR", help="also write the chapter's figures into DIR")
    tour.set_defaults(func=_tour)
    kkt = sub.add_parser("kkt", help="KKT report of one machine solved by one method")
    _machine_arguments(kkt)
    kkt.add_argument("--method", default="auto",
                     help=f"{_AUTO_HELP}; smo, libsvm, clarabel, osqp, primal-clarabel, qp-clarabel, qp-osqp")
    kkt.set_defaults(func=_kkt)
    compare = sub.add_parser("compare", help="several methods on one machine, side by side")
    _machine_arguments(compare)
    compare.add_argument("--methods", default="auto",
                         help=f"comma-separated methods, 'auto' among them as for kkt; 'auto' alone (the "
                              f"default): clarabel, osqp, qp-clarabel, smo and libsvm for N <= {AUTO_DUAL_MAX_N}, "
                              f"smo and libsvm above or where the Gram matrix is not positive semidefinite (libsvm where "
                              f"LIBSVM has the machine)")
    compare.set_defaults(func=_compare)
    add_rvm_parser(sub, _data_arguments, _positive)
    figures = sub.add_parser("figures", help="write the chapter's figures (PNG, SVG, captions)")
    figures.add_argument("--out", required=True, help="output folder")
    figures.add_argument("--only", default="", help="comma-separated figure names (default: all)")
    _quiet_argument(figures)
    figures.set_defaults(func=_figures)
    demo = sub.add_parser("demo", help="the SVM and RVM demonstrations in the browser (pages /svm and /rvm)")
    demo.add_argument("--port", type=_port, default=0, help="port on 127.0.0.1 (default: a free one, printed)")
    demo.add_argument("--no-browser", action="store_true", help="do not open a browser")
    demo.set_defaults(func=_demo)
    from ._cli_check import add_check_parser
    add_check_parser(sub, _machine_arguments, _positive)
    return parser


def _one_line_warning(name: str) -> Any:
    """``warnings.showwarning`` for the command line: a warning (an inaccurate solve) on one line."""

    def show(message: Any, category: type, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
        print(f"{name}: {category.__name__}: {message}", file=sys.stderr)

    return show


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    name = f"sparsekernel {args.command}"
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _one_line_warning(name)
            code = int(args.func(args))
        sys.stdout.flush()                      # a closed pipe is found here, not at the interpreter's exit
        return code
    except BrokenPipeError:
        # stdout was closed (``sparsekernel tour | head -1``): what is still buffered goes nowhere
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        print(f"{name}: BrokenPipeError: standard output was closed before the answer was written",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{name}: interrupted", file=sys.stderr)
        return 130
    except (SparseKernelError, OSError) as exc:     # OSError: a file that cannot be read, a port in use
        print(f"{name}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - what no check foresaw: one line too (SPARSEKERNEL_DEBUG=1: the traceback)
        if os.environ.get("SPARSEKERNEL_DEBUG"):
            raise
        print(f"{name}: {type(exc).__name__}: {exc} (not foreseen by the command's checks: please report it; "
              f"SPARSEKERNEL_DEBUG=1 shows the traceback)", file=sys.stderr)
        return 3


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
