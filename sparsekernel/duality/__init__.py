"""Duality: KKT conditions, complementary slackness and gaps, for every machine and any cvxpy problem.

- ``check(machine, solution, tol)``: every KKT condition of a machine in the book's terms
  (module ``conditions``).
- ``categories(machine, solution)``: each point's case in Result 7.6's table.
- ``gap(machine, primal_solution, dual_solution)`` and ``compare(sol_a, sol_b)``.
- ``from_sklearn(estimator, X, t)``: LIBSVM's answer in the notes' convention; ``from_fitted`` for any
  estimator with scikit-learn's attributes (ThunderSVM, cuML, your own).
- ``kkt(problem)``: the KKT status of any solved cvxpy problem.
"""

import sys as _sys

from . import conditions as _conditions
from .categories import CATEGORY_NAMES, Categories, categories
from .compare import Comparison, compare, compare_many, gap
from .conditions import check
from .cvxpy_kkt import kkt
from .report import Gap, KKTReport, KKTRow
from .sklearn_bridge import from_fitted, from_sklearn, machine_from_fitted, machine_from_sklearn, solve_with_libsvm

# The module of ``check`` was ``duality.kkt`` before the function ``kkt`` took that
# attribute; the old import path keeps working without ever replacing the function.
_sys.modules.setdefault(__name__ + ".kkt", _conditions)

__all__ = [
    "check", "kkt", "categories", "gap", "compare", "compare_many", "from_sklearn", "machine_from_sklearn", "from_fitted", "machine_from_fitted",
    "solve_with_libsvm", "KKTReport", "KKTRow", "Gap", "Categories", "Comparison", "CATEGORY_NAMES",
]
