"""The ``sparsekernel`` command.

``sparsekernel tour``                      every machine on the notes' data, every method, one table
``sparsekernel kkt MACHINE --data FILE``   the KKT report of one machine solved by one method
``sparsekernel compare MACHINE --data F``  several methods on one machine, side by side
``sparsekernel figures --out DIR``          the chapter's figures as PNG and SVG, with captions
``sparsekernel demo [--port P]``            the browser demonstrations, served on 127.0.0.1
``sparsekernel check --model F --data F``   certify a LIBSVM model file, or --multipliers a.npy MACHINE

Machine names: hard, soft, nu-svc, eps-svr, nu-svr, one-class, svdd. Data
files are CSV (last column the target) or LIBSVM format, told apart by the
extension ``.csv`` or by ``--format``. ``kkt`` exits with status 1 when the
report fails.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from . import __version__
from .errors import SparseKernelError, ValidationError
from .methods import solve_by

__all__ = ["main", "build_parser"]


def _tour(args: argparse.Namespace) -> int:
    from .tour import TOUR_METHODS, format_table, rows_to_json, run_tour

    methods = args.methods.split(",") if args.methods else list(TOUR_METHODS)
    live = sys.stderr.isatty() and not args.quiet and not args.json

    def progress(message: str) -> None:
        if live:
            print(f"\r\033[K  solving {message} ...", end="", file=sys.stderr, flush=True)

    rows = run_tour(methods, n_ripley=args.n_ripley, progress=progress)
    if live:
        print("\r\033[K", end="", file=sys.stderr, flush=True)
    print(rows_to_json(rows) if args.json else format_table(rows))
    if args.figures:
        args.out, args.only = args.figures, ""
        progress("the figures")
        written = _write_figures(args, quiet=args.json)
        if live:
            print("\r\033[K", end="", file=sys.stderr, flush=True)
        return written
    return 0


def _load(args: argparse.Namespace) -> tuple[Any, np.ndarray]:
    """X, t from the data file: a LIBSVM file's X stays sparse (CSR) through the fit."""
    from .datasets import load_csv, load_libsvm

    fmt = args.format or ("csv" if Path(args.data).suffix.lower() == ".csv" else "libsvm")
    return load_csv(args.data) if fmt == "csv" else load_libsvm(args.data)


def _labels(t: np.ndarray) -> tuple[np.ndarray, str | None]:
    """Two class labels as -1/+1 (the smaller label becomes -1)."""
    values = np.unique(t)
    if values.size != 2:
        raise ValidationError(f"the data's targets must hold two class labels for a classifier; got {values.size}")
    if set(values.tolist()) == {-1.0, 1.0}:
        return t, None
    return np.where(t == values[1], 1.0, -1.0), f"labels {values[0]:g} -> -1 and {values[1]:g} -> +1"


def machine_from_args(args: argparse.Namespace) -> tuple[Any, list[str]]:
    """Build the machine the command-line arguments describe, with notes to show the user."""
    from .formulations import MACHINES
    from .kernels import make_kernel
    from .sparse import variance as sparse_variance

    X, t = _load(args)
    cls = MACHINES[args.machine]
    notes = []
    gamma = None if args.gamma == "scale" else float(args.gamma)
    with np.errstate(over="ignore"):                 # an overflowing variance is refused by make_kernel
        variance = sparse_variance(X)
    kernel = make_kernel(args.kernel, gamma=gamma, degree=args.degree, coef0=args.coef0,
                         n_features=X.shape[1], X_var=variance)
    if cls.task == "classification":
        t, note = _labels(t)
        notes += [note] if note else []
    hyper: dict[str, Any] = {}
    names = cls._hyper_names
    for name in ("C", "nu", "epsilon"):
        if name in names:
            hyper[name] = getattr(args, name)
    if "class_weight" in names and args.class_weight:
        hyper["class_weight"] = args.class_weight
    if cls.task == "novelty":
        return cls(X, kernel, **hyper), notes
    return cls(X, t, kernel, **hyper), notes


def _kkt(args: argparse.Namespace) -> int:
    from .duality import categories, check
    machine, notes = machine_from_args(args)
    sol = solve_by(machine, args.method)
    report = check(machine, sol, args.tol)        # None: the tolerance of the solve's certificate
    if args.json:
        payload = report.to_dict()
        payload["categories"] = categories(machine, sol).counts
        payload["notes"] = payload["notes"] + notes
        import json

        print(json.dumps(payload, indent=2))
    else:
        for note in notes:
            print(f"note: {note}")
        print(report)
        print("\npoints by case (Result 7.6):")
        print(categories(machine, sol))
    return 0 if report.ok else 1


def _compare(args: argparse.Namespace) -> int:
    from .duality.compare import compare_many, dumps, format_many

    machine, notes = machine_from_args(args)
    methods = [m for m in args.methods.split(",") if m]
    if len(methods) < 2:
        raise ValidationError(f"--methods must name at least two methods; got {args.methods!r}")
    solutions = {m: solve_by(machine, m) for m in methods}
    summary = compare_many(machine, solutions, args.tol if args.tol is not None else 1e-5)
    summary["notes"] = notes
    print(dumps(summary) if args.json else "\n".join([f"note: {n}" for n in notes] + [format_many(summary)]))
    return 0


def _figures(args: argparse.Namespace) -> int:
    return _write_figures(args, quiet=False)


def _write_figures(args: argparse.Namespace, quiet: bool) -> int:
    try:
        from .figures import FIGURES, write_figures
    except ImportError as exc:  # matplotlib is the optional extra "plot"
        raise ValidationError(f"figures need matplotlib (pip install sparsekernel[plot]); got {exc}") from exc
    if Path(args.out).exists() and not Path(args.out).is_dir():
        raise ValidationError(f"--out must be a folder (created if missing); got the file {args.out!r}")
    names = args.only.split(",") if args.only else list(FIGURES)
    unknown = sorted(set(names) - set(FIGURES))
    if unknown:
        raise ValidationError(f"--only must name figures among {sorted(FIGURES)}; got {unknown}")
    for result in write_figures(args.out, names):
        if not quiet:
            print(f"{args.out}/{result.name}.png, .svg, .txt: {result.caption}")
    return 0


def _demo(args: argparse.Namespace) -> int:
    from .demo import serve

    serve(port=args.port, open_browser=not args.no_browser)
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


def _port(text: str) -> int:
    """--port: 0 (a free port) to 65535."""
    if not text.isdigit() or not 0 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"must be an integer in [0, 65535]; got {text!r}")
    return int(text)


class _Parser(argparse.ArgumentParser):
    """argparse, with a bad argument reported on one line (exit status 2, no usage block)."""

    def error(self, message: str) -> Any:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _machine_arguments(p: argparse.ArgumentParser) -> None:
    from .formulations import MACHINES

    p.add_argument("machine", choices=sorted(MACHINES), help="which machine")
    p.add_argument("--data", required=True, help="CSV (last column the target) or LIBSVM-format file")
    p.add_argument("--format", choices=["csv", "libsvm"], default=None, help="file format (default: by extension)")
    p.add_argument("--kernel", default="rbf", choices=["linear", "poly", "rbf", "sigmoid"])
    p.add_argument("--gamma", default="scale", type=_gamma, help="kernel width, or 'scale' = 1/(D var X) (default)")
    p.add_argument("--degree", type=int, default=3)
    p.add_argument("--coef0", type=float, default=0.0)
    p.add_argument("--C", type=float, default=1.0)
    p.add_argument("--nu", type=float, default=0.5)
    p.add_argument("--epsilon", type=float, default=0.1)
    p.add_argument("--class-weight", dest="class_weight", default=None, choices=["balanced"])
    p.add_argument("--tol", type=float, default=None, help="KKT tolerance, relative (default: the one the solve was certified at, matched to the method)")
    p.add_argument("--json", action="store_true", help="print JSON instead of the table")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="sparsekernel",
        description="Sparse kernel machines (Bishop, PRML chapter 7): formulations, solvers, duality.",
    )
    parser.add_argument("--version", action="version", version=f"sparsekernel {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    tour = sub.add_parser("tour", help="solve every machine on the notes' data by every method")
    tour.add_argument("--methods", default="", help="comma-separated methods (default: all)")
    tour.add_argument("--n-ripley", type=int, default=200, help="size of the Ripley-type mixture")
    tour.add_argument("--json", action="store_true", help="print JSON instead of the table")
    tour.add_argument("--quiet", action="store_true", help="no progress line on stderr")
    tour.add_argument("--figures", default="", metavar="DIR", help="also write the chapter's figures into DIR")
    tour.set_defaults(func=_tour)
    kkt = sub.add_parser("kkt", help="KKT report of one machine solved by one method")
    _machine_arguments(kkt)
    kkt.add_argument("--method", default="clarabel",
                     help="smo, clarabel, osqp, primal-clarabel, qp-clarabel, qp-osqp or libsvm")
    kkt.set_defaults(func=_kkt)
    compare = sub.add_parser("compare", help="several methods on one machine, side by side")
    _machine_arguments(compare)
    compare.add_argument("--methods", default="clarabel,osqp,qp-clarabel,libsvm", help="comma-separated methods")
    compare.set_defaults(func=_compare)
    figures = sub.add_parser("figures", help="write the chapter's figures (PNG, SVG, captions)")
    figures.add_argument("--out", required=True, help="output folder")
    figures.add_argument("--only", default="", help="comma-separated figure names (default: all)")
    figures.set_defaults(func=_figures)
    demo = sub.add_parser("demo", help="the SVM and RVM demonstrations in the browser (pages /svm and /rvm)")
    demo.add_argument("--port", type=_port, default=0, help="port on 127.0.0.1 (default: a free one, printed)")
    demo.add_argument("--no-browser", action="store_true", help="do not open a browser")
    demo.set_defaults(func=_demo)
    from ._cli_check import add_check_parser
    add_check_parser(sub, _machine_arguments)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except (SparseKernelError, OSError) as exc:     # OSError: a file that cannot be read, a port in use
        print(f"sparsekernel {args.command}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
