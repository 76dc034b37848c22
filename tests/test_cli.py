"""The command line, end to end."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from sparsekernel.cli import main
from sparsekernel.tour import TOUR_METHODS

MACHINES = ["HardMarginSVC", "SoftMarginSVC", "NuSVC", "EpsilonSVR", "NuSVR", "OneClassSVM", "SVDD"]


def test_tour_json_covers_every_machine_and_method_with_small_gaps(capsys) -> None:
    assert main(["tour", "--json", "--n-ripley", "80"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {(r["machine"], r["method"]) for r in rows} == {(m, k) for m in MACHINES for k in TOUR_METHODS}
    for r in rows:
        assert abs(r["relative_gap"]) <= 1e-6, r
        assert 0 < r["n_support"] <= r["n_train"]
    # every method finds the same optimum for a machine
    for machine in MACHINES:
        values = [r["objective"] for r in rows if r["machine"] == machine]
        assert max(values) - min(values) <= 1e-6 * max(1.0, max(abs(v) for v in values))


def test_tour_table_is_readable(capsys) -> None:
    assert main(["tour", "--quiet", "--n-ripley", "60", "--methods", "clarabel,qp-osqp"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:4] == ["machine", "data", "method", "objective"]
    assert sum(line.startswith(tuple(MACHINES)) for line in out) == len(MACHINES)
    assert len(out) == 2 + 2 * len(MACHINES)


def test_the_console_script_runs() -> None:
    done = subprocess.run([sys.executable, "-m", "sparsekernel.cli", "--version"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.startswith("sparsekernel ")
    done = subprocess.run([sys.executable, "-m", "sparsekernel.cli", "tour", "--methods", "nope"],
                          capture_output=True, text=True)
    assert done.returncode == 2
    assert "ValidationError: solver must be one of the installed cvxpy solvers" in done.stderr
    assert "Traceback" not in done.stderr


def test_unknown_command_is_an_error() -> None:
    with pytest.raises(SystemExit):
        main(["frobnicate"])
