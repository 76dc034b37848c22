"""Import cost: ``sparsekernel.errors`` alone, and our ``SVC`` against scikit-learn's, side by side.

Run from the repository root:

    python benchmarks/import_time.py             # 7 interleaved fresh interpreters per import
    python benchmarks/import_time.py --repeats 15

Each measurement is a fresh ``python -c`` that times one import statement
with ``time.perf_counter`` (the interpreter's own start-up excluded); the
imports alternate so that both see the same load. Medians are printed, and the
ratio of ours to scikit-learn's ``from sklearn.svm import SVC``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys

STATEMENTS = {
    "import sparsekernel.errors": "import sparsekernel.errors",
    "from sparsekernel.estimators import SVC": "from sparsekernel.estimators import SVC",
    "from sklearn.svm import SVC": "from sklearn.svm import SVC",
}


def once(statement: str) -> float:
    code = f"import time; t = time.perf_counter(); {statement}; print(time.perf_counter() - t)"
    return float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    times: dict[str, list[float]] = {name: [] for name in STATEMENTS}
    for _ in range(args.repeats):
        for name, statement in STATEMENTS.items():
            times[name].append(once(statement))
    median = {name: statistics.median(v) for name, v in times.items()}
    for name, value in median.items():
        print(f"{name:<42} {value:7.3f} s  (min {min(times[name]):.3f}, max {max(times[name]):.3f})")
    ratio = median["from sparsekernel.estimators import SVC"] / median["from sklearn.svm import SVC"]
    print(f"ours / scikit-learn's SVC import: {ratio:.2f}")


if __name__ == "__main__":
    main()
