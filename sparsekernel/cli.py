"""The ``sparsekernel`` command."""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from . import __version__
from .errors import SparseKernelError

__all__ = ["main"]


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
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sparsekernel",
        description="Sparse kernel machines (Bishop, PRML chapter 7): formulations, solvers, duality.",
    )
    parser.add_argument("--version", action="version", version=f"sparsekernel {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    tour = sub.add_parser("tour", help="solve every machine on the notes' data by every method")
    tour.add_argument("--methods", default="", help="comma-separated methods (default: all)")
    tour.add_argument("--n-ripley", type=int, default=200, help="size of the Ripley-type mixture")
    tour.add_argument("--json", action="store_true", help="print JSON instead of the table")
    tour.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    tour.set_defaults(func=_tour)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except SparseKernelError as exc:
        print(f"sparsekernel {args.command}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
