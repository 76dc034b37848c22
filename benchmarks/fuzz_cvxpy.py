"""Differential fuzz of the cvxpy paths: the dual by Clarabel and OSQP, the primals, the hinge form (7.44).

Run from the repository root (one core is plenty):

    python benchmarks/fuzz_cvxpy.py                       # 300 problems, seed 0
    python benchmarks/fuzz_cvxpy.py --problems 100 --seed 4 --json out.json
    python benchmarks/fuzz_cvxpy.py --replay SEED         # one problem, every method, verbosely

(400 problems take about two minutes on one core; OSQP is skipped above
``OSQP_MAX_N`` points.)

``benchmarks/fuzz_references.py`` fuzzes the SMO, the direct Clarabel QP and
LIBSVM; this one covers what it does not: ``solve(machine, m)`` for m in
"clarabel", "osqp" (the cvxpy dual), "primal-clarabel", "primal-osqp",
"hinge-clarabel", "hinge-osqp" (C-SVC only), on all seven machines, SVDD
included, with the SMO (at tol 1e-6) as the reference answer.

Each problem draws a machine, N in [3, 120], D in [1, 20], a kernel (linear,
polynomial of degree 2 or 3, RBF with gamma = 10^u / D, u in [-4, 2]),
C = 10^u, u in [-3, 4], nu in (0.02, 0.98), a feature scale 10^u, u in [-5, 5]
(gamma scaled to match), a target scale 10^u, u in [-4, 4] for regression (C
and epsilon scaled alike, so that the multipliers are the notes' up to the
unit), and a degeneracy (none, duplicated points, duplicated points with
opposite labels, a constant feature, a class of one point, all targets equal).

Each (problem, method) ends as one of ``optimal`` (certified), ``uncertified``
(status "optimal" but ``duality.check`` at the solution's own tolerance fails:
a defect), ``warned`` (status "inaccurate" with a ConvergenceWarning),
``silent`` (status "inaccurate" without one: a defect), ``refused``
(InfeasibleError), ``solver-error`` (SolverError), ``invalid`` (ValidationError),
``unexpected`` (any other exception: a defect, with its type and message),
``n/a``. Two certified answers of a problem must agree in dual objective within
the sum of their tolerances times max(gap_scale, |dual|); their decision values
on the training points are listed where they differ by more than
``DECISION_TOL`` of the output scale (information: b is not unique where no
multiplier is free). With a kernel whose values do not depend on the feature
scale (RBF, polynomial with gamma scaled), each problem is also solved at unit
feature (and target) scale by the cvxpy dual; the two certified dual
objectives, in output units, must agree likewise, and the problems certified
at one scale only are listed. Last, a certified answer's predictions on the
training points (the expansion over its support) must be the outputs its
certificate checked (every multiplier) to within its tol.

Its first runs found targets all equal but for rounding taken as the output
scale (every cvxpy path failed EpsilonSVR with t = 0.3 everywhere) and a
support cut that dropped a free multiplier from the predictions of a
certified answer; both are tests in ``tests/formulations/test_certificate.py``.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time
import warnings
from typing import Any

import numpy as np

MACHINES = ("hard", "soft", "nu-svc", "eps-svr", "nu-svr", "one-class", "svdd")
METHODS = ("smo", "clarabel", "osqp", "primal-clarabel", "primal-osqp", "hinge-clarabel", "hinge-osqp")
DEGENERACIES = ("none", "duplicates", "opposite-duplicates", "constant-feature", "singleton-class",
                "equal-targets")
OUTCOMES = ("optimal", "uncertified", "warned", "silent", "refused", "solver-error", "invalid", "unexpected",
            "n/a")
#: OSQP on more points than this is skipped (its 100,000 iterations on a dense Gram matrix take long).
OSQP_MAX_N = 80
#: Decision values of two certified answers that differ by more than this (in output units) are listed.
DECISION_TOL = 1e-2


def draw(seed: int) -> dict[str, Any]:
    """One random problem (everything needed to build it again from the seed)."""
    rng = np.random.default_rng(seed)
    return {
        "seed": seed, "machine": MACHINES[rng.integers(len(MACHINES))], "N": int(rng.integers(3, 121)),
        "D": int(rng.integers(1, 21)), "kernel": ("linear", "poly", "rbf")[rng.integers(3)],
        "degree": int(rng.integers(2, 4)), "u_gamma": float(rng.uniform(-4, 2)), "C": float(10 ** rng.uniform(-3, 4)),
        "nu": float(rng.uniform(0.02, 0.98)), "scale": float(10 ** rng.uniform(-5, 5)),
        "target_scale": float(10 ** rng.uniform(-4, 4)), "epsilon": float(rng.uniform(0.0, 0.5)),
        "degeneracy": DEGENERACIES[rng.integers(len(DEGENERACIES))],
    }


def build(spec: dict[str, Any], unit: bool = False):
    """The machine of a drawn problem (``unit``: at feature and target scale 1, the same problem)."""
    from sparsekernel.formulations import MACHINES as REGISTRY
    from sparsekernel.kernels import RBF, Linear, Polynomial

    rng = np.random.default_rng(spec["seed"] + 1)
    N, D = spec["N"], spec["D"]
    s, ts = (1.0, 1.0) if unit else (spec["scale"], spec["target_scale"])
    X = rng.normal(size=(N, D))
    t = np.where(X[:, 0] + 0.5 * rng.normal(size=N) > 0, 1.0, -1.0)
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=N)
    kind = spec["degeneracy"]
    half = N // 2
    if kind in ("duplicates", "opposite-duplicates") and N >= 4:
        X[half:half + 2] = X[:2]
        t[half:half + 2] = -t[:2] if kind == "opposite-duplicates" else t[:2]
        y[half:half + 2] = y[:2]
    elif kind == "constant-feature":
        X[:, -1] = 1.0
    elif kind == "singleton-class":
        t[:] = 1.0
        t[rng.integers(N)] = -1.0
    elif kind == "equal-targets":
        y[:] = 0.7
    if np.all(t == t[0]):
        t[0] = -t[0]
    X = X * s
    if spec["kernel"] == "linear":
        kernel = Linear()
    elif spec["kernel"] == "poly":
        kernel = Polynomial(degree=spec["degree"], gamma=1.0 / (D * s * s), coef0=1.0)
    else:
        kernel = RBF(10 ** spec["u_gamma"] / (D * s * s))
    cls = REGISTRY[spec["machine"]]
    hyper = {k: spec[k] for k in ("C", "nu") if k in cls._hyper_names}
    if cls.task == "regression":
        hyper["C"] = spec["C"] * ts                # the multipliers scale with the targets
        if "epsilon" in cls._hyper_names:
            hyper["epsilon"] = spec["epsilon"] * ts
    if cls.task == "novelty":
        return cls(X, kernel, **hyper)
    return cls(X, t if cls.task == "classification" else y * ts, kernel, **hyper)


def run_method(machine, method: str) -> dict[str, Any]:
    """The outcome of one method on one machine."""
    from sparsekernel.duality import check
    from sparsekernel.errors import (
        ConvergenceWarning,
        InfeasibleError,
        SolverError,
        ValidationError,
    )

    if method.startswith("hinge-") and getattr(machine, "hinge", None) is None:
        return {"outcome": "n/a"}
    if "osqp" in method and machine.N > OSQP_MAX_N:
        return {"outcome": "n/a"}
    opts = {"tol": 1e-6, "max_iter": 2_000_000} if method == "smo" else {}
    start = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sol = machine.solve(method, **opts)
    except InfeasibleError as exc:
        return {"outcome": "refused", "why": str(exc)[:200]}
    except SolverError as exc:
        return {"outcome": "solver-error", "why": str(exc)[:200]}
    except ValidationError as exc:
        return {"outcome": "invalid", "why": str(exc)[:200]}
    except Exception as exc:  # noqa: BLE001 - what this fuzz is for
        return {"outcome": "unexpected", "why": f"{type(exc).__module__}.{type(exc).__name__}: {str(exc)[:200]}"}
    seconds = time.perf_counter() - start
    warned = any(issubclass(w.category, ConvergenceWarning) for w in caught)
    if sol.status == "inaccurate":
        return {"outcome": "warned" if warned else "silent", "seconds": seconds}
    report = check(machine, sol)
    decision = sol.decision_function(machine.X)
    return {"outcome": "optimal" if report.ok else "uncertified", "dual": float(sol.dual_objective),
            "off_support": expansion_gap(machine, sol, decision),
            "tol": float(sol.tol), "scale": max(machine.gap_scale, abs(float(sol.dual_objective))),
            "output_scale": float(machine.output_scale), "seconds": seconds, "b": float(sol.b),
            "decision": None if decision is None else decision.tolist(),
            "why": None if report.ok else str([r.tag for r in report.failed()])}


def expansion_gap(machine, sol, decision: np.ndarray) -> float:
    """How far the predicted y(x_n) (the expansion over ``sol.support``) is from the certified one (over every
    multiplier), in output units: more than the solution's tol is a prediction the certificate did not cover."""
    full = machine.gram() @ sol.coef + sol.b + sol.self_coef * machine.kernel.diag(machine.X)
    return float(np.max(np.abs(decision - full))) / machine.output_scale


def agree(x: dict[str, Any], y: dict[str, Any], unit_x: float = 1.0, unit_y: float = 1.0) -> bool:
    """Dual objectives (each divided by its unit) within what the two certificates allow."""
    allowed = (x["tol"] + y["tol"]) * max(x["scale"] / unit_x, y["scale"] / unit_y)
    return abs(x["dual"] / unit_x - y["dual"] / unit_y) <= allowed + 1e-12


def decision_gap(x: dict[str, Any], y: dict[str, Any]) -> float:
    """The largest difference of two answers' training decision values, in output units."""
    if x.get("decision") is None or y.get("decision") is None:
        return 0.0
    return float(np.max(np.abs(np.subtract(x["decision"], y["decision"])))) / x["output_scale"]


def scale_free(spec: dict[str, Any]) -> bool:
    """Whether the problem at unit scale is the same one (the kernel's values do not change)."""
    return spec["kernel"] != "linear"


def unit_check(spec: dict[str, Any], scaled: dict[str, Any]) -> dict[str, Any] | None:
    """The cvxpy dual at unit scale against the scaled problem's certified answer."""
    from sparsekernel.errors import InfeasibleError, ValidationError

    if not scale_free(spec) or scaled.get("outcome") in (None, "n/a"):
        return None
    try:
        machine = build(spec, unit=True)
    except (ValidationError, InfeasibleError):
        return None
    unit = run_method(machine, "clarabel")
    if unit["outcome"] != "optimal" or scaled["outcome"] != "optimal":
        return {"outcome": unit["outcome"], "scaled": scaled["outcome"]}
    factor = spec["target_scale"] if spec["machine"] in ("eps-svr", "nu-svr") else 1.0
    # regression: the multipliers and outputs scale by the target scale, the dual objective by its square
    ok = agree(scaled, unit, factor**2, 1.0)
    gap = float(np.max(np.abs(np.asarray(scaled["decision"]) / factor - np.asarray(unit["decision"])))) \
        / unit["output_scale"]
    return {"outcome": "optimal", "agree": ok, "decision_gap": gap}


def fuzz(problems: int, seed: int, methods: tuple[str, ...] = METHODS) -> list[dict[str, Any]]:
    from sparsekernel.errors import InfeasibleError, ValidationError

    records = []
    for k in range(problems):
        spec = draw(seed * 1_000_003 + k)
        try:
            machine = build(spec)
        except (ValidationError, InfeasibleError) as exc:      # an infeasible nu for the labels, ...
            records.append({**spec, "built": False, "why": str(exc)[:120]})
            continue
        except Exception as exc:  # noqa: BLE001
            records.append({**spec, "built": False, "unexpected": f"{type(exc).__name__}: {str(exc)[:160]}"})
            continue
        outcomes = {m: run_method(machine, m) for m in methods}
        unit = unit_check(spec, outcomes.get("clarabel", {}))
        records.append({**spec, "built": True, "outcomes": outcomes, "unit": unit})
        print(f"problem {k} (seed {spec['seed']}, {spec['machine']}, N = {spec['N']}, {spec['kernel']}, "
              f"{spec['degeneracy']}): " + ", ".join(f"{m} {o['outcome']}" for m, o in outcomes.items())
              + ("" if unit is None else f", unit {unit.get('agree', unit['outcome'])}"), file=sys.stderr, flush=True)
    return records


def table(records: list[dict[str, Any]], methods: tuple[str, ...] = METHODS) -> str:
    built = [r for r in records if r["built"]]
    lines = [f"{len(records)} problems drawn, {len(built)} built",
             "", f"{'machine':<10} {'method':<16} " + " ".join(f"{o[:9]:>9}" for o in OUTCOMES)]
    for machine in MACHINES:
        for method in methods:
            counts = collections.Counter(r["outcomes"][method]["outcome"] for r in built if r["machine"] == machine)
            lines.append(f"{machine:<10} {method:<16} " + " ".join(f"{counts.get(n, 0):>9}" for n in OUTCOMES))
    total = collections.Counter(r["outcomes"][m]["outcome"] for r in built for m in methods)
    lines.append(f"{'all':<10} {'all':<16} " + " ".join(f"{total.get(n, 0):>9}" for n in OUTCOMES))
    lines.append("")
    for i, a in enumerate(methods):
        for b in methods[i + 1:]:
            both = [r for r in built if r["outcomes"][a]["outcome"] == r["outcomes"][b]["outcome"] == "optimal"]
            if not both:
                continue
            differ = [r["seed"] for r in both if not agree(r["outcomes"][a], r["outcomes"][b])]
            far = [r["seed"] for r in both if decision_gap(r["outcomes"][a], r["outcomes"][b]) > DECISION_TOL]
            lines.append(f"{a} vs {b}: {len(both)} both certified, {len(differ)} duals differ"
                         + (f" {differ[:8]}" if differ else "") + f", {len(far)} decision values differ"
                         + (f" {far[:8]}" if far else ""))
    units = [r for r in built if r["unit"] and r["unit"]["outcome"] == "optimal" and "agree" in r["unit"]]
    lost = [r["seed"] for r in built if r["unit"] and r["unit"].get("scaled", "optimal") != "optimal"
            and r["unit"]["outcome"] == "optimal"]
    lines.append(f"\ncertified at unit scale, not at the drawn scale (clarabel dual): {len(lost)} {lost[:10]}")
    lines.append(f"unit scale (clarabel dual): {len(units)} compared, "
                 f"{sum(not r['unit']['agree'] for r in units)} duals differ "
                 f"{[r['seed'] for r in units if not r['unit']['agree']][:8]}, "
                 f"{sum(r['unit']['decision_gap'] > DECISION_TOL for r in units)} decision values differ "
                 f"{[r['seed'] for r in units if r['unit']['decision_gap'] > DECISION_TOL][:8]}")
    off = [(r["seed"], m, r["outcomes"][m]["off_support"]) for r in built for m in methods
           if r["outcomes"][m]["outcome"] == "optimal" and r["outcomes"][m]["off_support"] > r["outcomes"][m]["tol"]]
    lines.append(f"certified answers whose predictions (over the support) leave the certified outputs by more than "
                 f"their tol: {len(off)}" + "".join(f"\n  seed {s} {m}: {g:.1e}" for s, m, g in off[:12]))
    for kind in ("uncertified", "silent", "unexpected"):
        bad = [(r["seed"], m, r["outcomes"][m].get("why")) for r in built for m in methods
               if r["outcomes"][m]["outcome"] == kind]
        lines.append(f"{kind}: {len(bad)}" + "".join(f"\n  seed {s} {m}: {w}" for s, m, w in bad[:12]))
    broken = [(r["seed"], r["unexpected"]) for r in records if "unexpected" in r]
    lines.append(f"unexpected at construction: {len(broken)}" + "".join(f"\n  seed {s}: {w}" for s, w in broken[:8]))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default="", help="also write every record to this file")
    parser.add_argument("--replay", type=int, default=None, help="run one problem by its seed and print it")
    args = parser.parse_args()
    if args.replay is not None:
        spec = draw(args.replay)
        print(spec)
        machine = build(spec)
        for method in METHODS:
            out = run_method(machine, method)
            out.pop("decision", None)
            print(method, out)
        return
    start = time.perf_counter()
    records = fuzz(args.problems, args.seed)
    print(table(records))
    print(f"({time.perf_counter() - start:.0f} s)")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(records, handle, indent=1, default=float)


if __name__ == "__main__":
    main()
