"""Duality: KKT conditions, complementary slackness and gaps, for every machine and any cvxpy problem.

- ``check(machine, solution, tol)``: every KKT condition of a machine in the book's terms.
- ``categories(machine, solution)``: each point's case in Result 7.6's table.
- ``gap(machine, primal_solution, dual_solution)`` and ``compare(sol_a, sol_b)``.
- ``from_sklearn(estimator, X, t)``: LIBSVM's answer in the notes' convention.
- ``kkt(problem)``: the KKT status of any solved cvxpy problem.
"""

from .categories import CATEGORY_NAMES, Categories, categories
from .compare import Comparison, compare, compare_many, gap
from .cvxpy_kkt import kkt
from .kkt import check
from .report import Gap, KKTReport, KKTRow
from .sklearn_bridge import from_sklearn, machine_from_sklearn, solve_with_libsvm

__all__ = [
    "check", "kkt", "categories", "gap", "compare", "compare_many", "from_sklearn", "machine_from_sklearn",
    "solve_with_libsvm", "KKTReport", "KKTRow", "Gap", "Categories", "Comparison", "CATEGORY_NAMES",
]
