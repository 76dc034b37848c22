"""``sparsekernel check``: certify an answer computed elsewhere against its machine's KKT conditions.

Two forms:

``sparsekernel check --model FILE --data FILE [--C C] [--nu NU] [--epsilon E] [--eps E]``
    A LIBSVM model file (``svm-train``'s) on its training file: the KKT table of each binary
    problem (one-versus-one pairs for k classes), its gap and a verdict, at the tolerance matched
    to svm-train's ``-e`` (``--eps``, default 1e-3) unless ``--tol`` is given. The kernel comes
    from the file; C, nu and epsilon, which the file does not keep, are svm-train's ``-c``, ``-n``,
    ``-p`` (default svm-train's own).
``sparsekernel check --multipliers a.npy [--a-hat FILE] [--b B] [--rho R] [--R2 R2] [--tube-epsilon E] MACHINE --data FILE ...``
    Your own multipliers (``.npy``, or text with one number a line) for MACHINE on the data, in
    the notes' convention (``--convention libsvm`` for LIBSVM's coefficients and rho); what is not
    given is recovered by the notes' formulas (``Machine.solution``).

Exit status: 0 when every problem passes, 1 when one fails (the failing conditions and by how
much are listed), 2 with a one-line message on bad input.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .cli import flag as _option
from .errors import ValidationError, ignored

__all__ = ["add_check_parser", "run_check"]

def add_check_parser(subparsers: Any, machine_arguments: Callable[[argparse.ArgumentParser], None],
                     positive: Callable[[str], float]) -> Any:
    """Add ``check`` to the command's subparsers; ``machine_arguments`` adds MACHINE, --data and the
    kernel and hyperparameter options (the ``kkt`` command's), ``positive`` reads --eps (the command's
    type for a positive finite number)."""
    p = subparsers.add_parser("check", help="certify your own multipliers or a LIBSVM model file (KKT table, gap, verdict)")
    machine_arguments(p)
    for action in p._actions:                  # MACHINE is not needed with --model
        if action.dest == "machine":
            action.nargs, action.required, action.default = "?", False, None
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--model", help="a LIBSVM model file (svm-train's output) trained on --data")
    source.add_argument("--multipliers", help="your multipliers a (.npy, or text with one number a line)")
    p.add_argument("--a-hat", dest="a_hat", default=None, help="regression: the multipliers a_hat of (7.54)")
    p.add_argument("--b", type=float, default=None, help="the intercept b (else recovered by the notes' formulas)")
    p.add_argument("--rho", type=float, default=None, help="nu-SVC's margin or the one-class rho (LIBSVM's rho with --convention libsvm)")
    p.add_argument("--R2", type=float, default=None, help="SVDD's squared radius")
    p.add_argument("--tube-epsilon", dest="tube_epsilon", type=float, default=None, help="nu-SVR's tube half-width")
    p.add_argument("--convention", choices=["notes", "libsvm"], default="notes",
                   help="the multipliers' convention (libsvm: coefficients y_n alpha_n and LIBSVM's rho)")
    p.add_argument("--eps", type=positive, default=None,
                   help="with --model: svm-train's -e, which sets the matched tolerance (default 1e-3, svm-train's)")
    p.set_defaults(func=run_check, C=None, nu=None, epsilon=None)
    p.set_defaults(multiplier_defaults={dest: p.get_default(dest) for dest in _MULTIPLIER_ONLY})
    return p


#: options of ``check --multipliers`` alone (the model file gives the kernel and scalars)
_MULTIPLIER_ONLY = ("a_hat", "b", "rho", "R2", "tube_epsilon", "convention", "kernel", "gamma", "degree", "coef0",
                    "class_weight")


def _refuse_unused(args: argparse.Namespace) -> None:
    """A ValidationError for an option the chosen source does not read (it would be ignored without a word),
    and for C, nu or epsilon outside their domains."""
    from .validation import check_param

    if args.solver_tol is not None:
        raise ValidationError(f"--solver-tol applies to kkt and compare (check solves nothing: it grades the "
                              f"multipliers or the model given); got --solver-tol {args.solver_tol:g}")
    if args.model is not None:
        given = [d for d, default in args.multiplier_defaults.items() if getattr(args, d) != default]
        if given:
            raise ValidationError(f"{_option(given[0])} applies to --multipliers (a model file gives its kernel and "
                                  f"scalars); got {_option(given[0])} {getattr(args, given[0])} with --model")
    elif args.eps is not None:
        raise ValidationError(f"--eps applies to --model (svm-train's -e); got --eps {args.eps:g} with --multipliers")
    for name in ("C", "nu", "epsilon"):
        if getattr(args, name) is not None:
            check_param(name, getattr(args, name))


def run_check(args: argparse.Namespace) -> int:
    """Run ``sparsekernel check``: 0 if every report passes, 1 if one fails (bad input raises
    ValidationError, which the command prints on one line with exit status 2)."""
    _refuse_unused(args)
    if args.model is not None and args.machine is not None:
        raise ValidationError(f"MACHINE must not be given with --model (the file names it); got {args.machine!r}")
    if args.model is None and args.machine is None:
        raise ValidationError("MACHINE must be given with --multipliers (hard, soft, nu-svc, eps-svr, nu-svr, "
                              "one-class or svdd); got none")
    # multipliers or coefficients as large as 1e200 overflow in the recovery and the rows: the report shows
    # it (inf, nan, 'not evaluated', FAIL), where numpy's RuntimeWarnings added up to 16 lines on stderr
    with np.errstate(over="ignore", invalid="ignore"):
        results = _model_reports(args) if args.model is not None else [_multiplier_report(args)]
    if args.model is not None and args.tol is None:
        _refuse_vacuous(args.eps, results)
    if args.json:
        payload = []
        for title, notes, report in results:
            entry = {"problem": title, **report.to_dict()}
            entry["notes"] = entry["notes"] + notes
            payload.append(entry)
        print(json.dumps(payload, indent=2))
    else:
        for title, notes, report in results:
            print(f"== {title}")
            for note in notes:
                print(f"note: {note}")
            print(report)
            for line in _failing(report):
                print(f"  fails: {line}")
            print()
        bad = sum(not r.ok for _, _, r in results)
        print(f"check: {'PASS' if not bad else 'FAIL'} ({len(results) - bad} of {len(results)} problems pass)")
    return 0 if all(r.ok for _, _, r in results) else 1


def _refuse_vacuous(eps: float | None, results: list[tuple[str, list[str], Any]]) -> None:
    """A ValidationError where --eps (or its default) matches a model's certificate to a tolerance of
    ``cli.MAX_REPORT_TOL`` or more: at --eps 1 (a tolerance of 2.0) a coefficient at 1.5 C passed."""
    from .cli import MAX_REPORT_TOL

    for title, _, report in results:
        if not report.tol < MAX_REPORT_TOL:
            raise ValidationError(f"--eps must give the certificate a tolerance below {MAX_REPORT_TOL:g} (relative to "
                                  f"each row's scale: at 1 a multiplier at twice its bound passes); got --eps "
                                  f"{1e-3 if eps is None else eps:g}{' (the default)' if eps is None else ''}, a "
                                  f"tolerance of {report.tol:.1e} for {title}: give a smaller --eps, or --tol")


def _failing(report: Any) -> list[str]:
    """Each failing condition and by how much."""
    lines = []
    for r in report.failed():
        at = "" if r.where is None else f" at n = {r.where}"
        lines.append(f"{r.tag} {r.condition}: violated by {r.violation:.1e} (relative; {r.absolute:.3g} absolute){at}")
    if not report.gap.relative <= report.tol:
        lines.append(f"duality gap: {report.gap.relative:.1e} relative ({report.gap.absolute:.3g} absolute)")
    return lines


def _load_data(args: argparse.Namespace) -> tuple[Any, np.ndarray]:
    """--data by the format rule of every command (``datasets.load``: ``--format``, else ``infer_format``)."""
    from .datasets import load

    return load(args.data, args.format, name="--data")


def _model_reports(args: argparse.Namespace) -> list[tuple[str, list[str], Any]]:
    from .libsvm_model import check_libsvm_model

    X, y = _load_data(args)
    out = []
    for problem, report in check_libsvm_model(args.model, X, y, args.tol, C=args.C, nu=args.nu,
                                              epsilon=args.epsilon, eps=1e-3 if args.eps is None else args.eps):
        what = (f"labels {problem.labels[0]:g} (t = +1) vs {problem.labels[1]:g} (t = -1)"
                if problem.labels else problem.machine.name)
        title = f"{Path(args.model).name}: {problem.machine.name}, {what}, N = {problem.machine.N}"
        out.append((title, list(problem.assumed), report))
    return out


#: the first bytes of every .npy file (numpy.lib.format.MAGIC_PREFIX)
NPY_MAGIC = b"\x93NUMPY"


def _vector_file(path: str, name: str) -> np.ndarray:
    """A vector from a .npy file or a text file with one number a line, told apart by numpy's magic string
    (by the name '.npy', a.NPY was read as text and refused: 'can't decode byte 0x93')."""
    p = Path(path)
    if not p.is_file():
        raise ValidationError(f"{name} must be an existing .npy or text file; got {path!r}")
    try:
        with open(p, "rb") as handle:
            npy = handle.read(len(NPY_MAGIC)) == NPY_MAGIC
        with ignored(".*input contained no data", UserWarning):    # loadtxt's; the empty file is refused below
            v = np.load(p, allow_pickle=False) if npy else np.loadtxt(p, dtype=np.float64, ndmin=1)
    except (ValueError, EOFError, OSError) as exc:   # an empty or truncated .npy: EOFError
        raise ValidationError(f"{name} must be a .npy or text file of numbers; got {path!r} ({exc})") from None
    if np.size(v) == 0:
        raise ValidationError(f"{name} must be a .npy or text file of numbers; got {path!r}, which holds none")
    return np.asarray(v)


#: ``Machine.solution``'s parameters and the options of ``check --multipliers`` that give them
_SOLUTION_OPTIONS = {"a": "--multipliers", "a_hat": "--a-hat", "b": "--b", "rho": "--rho", "R2": "--R2",
                     "epsilon": "--tube-epsilon"}


def _multiplier_report(args: argparse.Namespace) -> tuple[str, list[str], Any]:
    from .cli import machine_from_args
    from .duality import check
    from .formulations.solve import matched_tol

    machine, notes = machine_from_args(args)
    a = _vector_file(args.multipliers, "--multipliers")
    a_hat = None if args.a_hat is None else _vector_file(args.a_hat, "--a-hat")
    try:
        sol = machine.solution(a, args.b, a_hat, rho=args.rho, epsilon=args.tube_epsilon, R2=args.R2,
                               convention=args.convention, solver=Path(args.multipliers).name)
    except ValidationError as exc:          # named by the library's parameter: named here by the option too
        first, _, rest = str(exc).partition(" ")
        if first in _SOLUTION_OPTIONS and rest:
            raise ValidationError(f"{_SOLUTION_OPTIONS[first]} ({first}) {rest}") from exc
        raise
    # the tolerance matched to the multipliers' method ("user", or "libsvm" in LIBSVM's convention), not to their
    # file's name: check() matches a user solution's solver label, and the same multipliers in a file named 'smo'
    # were checked at the SMO's 2.0e-03 (PASS), in 'osqp' at 1.0e-05, in 'a.npy' at 1.0e-06 (FAIL)
    report = check(machine, sol, matched_tol(machine, sol.method) if args.tol is None else args.tol)
    title = f"{Path(args.multipliers).name}: {machine.name} on {Path(args.data).name}, N = {machine.N}"
    return title, notes, report
