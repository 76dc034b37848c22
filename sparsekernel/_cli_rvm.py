"""``sparsekernel rvm TASK --data FILE``: the relevance vector machine (section 7.2) on a data file.

``regression`` fits ``estimators.RVR`` (Gaussian noise, the evidence (7.85));
``classification`` fits ``estimators.RVC`` (any labels, the Laplace evidence
(7.114)). The answer: the relevance vectors (rows of the file, from 0), the
noise (regression), the log evidence, the iterations, and the fit's
certificate (``report_``: the largest evidence gain one move of Algorithm 7.2
would still make, ``solvers.rvm.evidence_report`` or ``laplace_report``).
Exit status 1 when the certificate fails.
"""

from __future__ import annotations

import argparse
import json
import math
from typing import Any, Callable

import numpy as np

from ._progress import Progress
from .solvers.rvm.checks import METHODS as RVM_METHODS     # Algorithm 7.2, (7.87)-(7.88), EM

__all__ = ["add_rvm_parser", "rvm_summary"]


def add_rvm_parser(sub: Any, data_arguments: Callable[[argparse.ArgumentParser], None],
                   positive: Callable[[str], float]) -> None:
    """Add the ``rvm`` command to the subparsers ``sub`` (with the SVM commands' data arguments)."""
    rvm = sub.add_parser("rvm", help="relevance vector regression or classification on a data file")
    rvm.add_argument("task", choices=["regression", "classification"],
                     help="regression (RVR, the evidence (7.85)) or classification (RVC, Laplace (7.114))")
    data_arguments(rvm)
    rvm.add_argument("--method", default="fast", choices=RVM_METHODS,
                     help="fast (Tipping and Faul, Algorithm 7.2; the default), mackay (7.87)-(7.88), em")
    rvm.add_argument("--tol", type=positive, default=1e-3,
                     help="stop when no single move gains more than tol nats (default 1e-3); the certificate "
                          "is checked at max(10 tol, 1e-2)")
    rvm.add_argument("--no-bias", dest="bias", action="store_false", help="no constant basis function")
    rvm.set_defaults(func=run_rvm)


def _estimator(args: argparse.Namespace) -> Any:
    from .cli import kernel_options
    from .estimators import RVC, RVR

    cls = RVR if args.task == "regression" else RVC
    options = kernel_options(args)
    gamma = options["gamma"] if options["gamma"] == "scale" else float(options["gamma"])
    return cls(kernel=args.kernel, gamma=gamma, degree=options["degree"], coef0=options["coef0"], method=args.method,
               bias=args.bias, tol=args.tol)


def rvm_summary(est: Any, X: np.ndarray, t: np.ndarray, data: str) -> dict[str, Any]:
    """What the command prints of a fitted ``RVR`` or ``RVC``: a JSON-ready dict."""
    regression = not hasattr(est, "classes_")
    relevance = [int(i) for i in est.relevance_vectors_]
    summary: dict[str, Any] = {
        "task": "regression" if regression else "classification", "estimator": type(est).__name__,
        "data": data, "N": int(X.shape[0]), "D": int(X.shape[1]), "kernel": repr(est.kernel_),
        "method": est.method, "bias": bool(est.bias_used_), "relevance_vectors": relevance,
        "n_relevance": len(relevance), "log_evidence": float(est.log_evidence_[-1]),
        "evidence": est.report_.evidence_tag, "iterations": int(est.n_iter_),
        "converged": bool(est.result_.converged),
    }
    if regression:
        residual = t - est.predict(X)
        summary.update(beta=est.beta_, noise_sigma=1.0 / math.sqrt(est.beta_), target_std=float(np.std(t)),
                       training_rmse=float(np.sqrt(np.mean(residual ** 2))))
    else:
        summary.update(classes=[c.item() for c in est.classes_],
                       training_error=float(np.mean(est.predict(X) != t)))
    summary["report"] = est.report_.to_dict()
    return summary


def _lines(s: dict[str, Any]) -> list[str]:
    shown = ", ".join(map(str, s["relevance_vectors"][:20])) + (", ..." if s["n_relevance"] > 20 else "")
    lines = [f"{s['estimator']} ({s['task']}) on {s['data']}: N = {s['N']}, D = {s['D']}, {s['kernel']}, "
             f"method {s['method']}{', bias' if s['bias'] else ''}",
             f"relevance vectors: {s['n_relevance']} of {s['N']} (rows from 0: {shown or 'none'})"]
    if s["task"] == "regression":
        lines.append(f"noise: sigma = 1/sqrt(beta) = {s['noise_sigma']:.4g} (beta = {s['beta']:.4g}); the targets' "
                     f"standard deviation {s['target_std']:.4g}, training RMSE {s['training_rmse']:.4g}")
    else:
        likelihood = ("Bernoulli likelihood, logistic output (7.108)" if len(s["classes"]) == 2
                      else "softmax likelihood (7.121)-(7.122)")  # classification.rvm_classification's choice
        lines.append(f"classes {', '.join(map(str, s['classes']))}; no noise level ({likelihood}); "
                     f"training error {s['training_error']:.3f}")
    state = "converged" if s["converged"] else "stopped at the iteration cap"
    lines += [f"log evidence {s['evidence']}: {s['log_evidence']:.6f} after {s['iterations']} iterations ({state})",
              ""]
    return lines


def run_rvm(args: argparse.Namespace) -> int:
    """The ``rvm`` command: fit, print the summary and the certificate; 1 if the certificate fails."""
    from .cli import _checked
    from .datasets import load

    with Progress(args.quiet) as progress:
        progress.step(f"reading {args.data}")
        # a LIBSVM file's X stays sparse (CSR); a NaN or inf refused with its file and row, as kkt's
        X, t = _checked(*load(args.data, args.format, name="--data"), args.data)
        est = _estimator(args)
        progress.step(f"fitting {type(est).__name__} by {args.method} (N = {X.shape[0]})")
        est.fit(X, t)
        summary = rvm_summary(est, X, t, args.data)
    if args.json:
        print(json.dumps(_finite(summary), indent=2))
    else:
        print("\n".join(_lines(summary)))
        print(est.report_)
    return 0 if est.report_.ok else 1


def _finite(value: Any) -> Any:
    """``value`` with numpy scalars as Python numbers and nan, inf as None (JSON has neither)."""
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    value = value.item() if isinstance(value, np.generic) else value
    return None if isinstance(value, float) and not math.isfinite(value) else value
