"""Every input layout reaches the same fit and the same compiled loops.

C- and F-ordered float64, read-only, float32 and CSR inputs give the same
solution as C-ordered float64 (a float32 X is the float64 X rounded, so it is
compared with a fit on that rounded X). That no layout adds a specialisation
of numba's JIT is checked where the JIT runs, in the child process of
``tests/solvers/test_aot.py`` (``test_no_input_layout_adds_a_jit_specialisation``):
with the ahead-of-time extension loaded here, no dispatcher is ever called.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from sparsekernel.estimators import SVC, SVR

N, D = 120, 5
TOL = 1e-3


def _data(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, D))
    labels = np.where(X[:, 0] + 0.7 * rng.normal(size=N) > 0, 1, 0)
    values = np.sin(X[:, 0]) + 0.1 * rng.normal(size=N)
    return X, labels, values


def _read_only(X: np.ndarray) -> np.ndarray:
    X = X.copy()
    X.flags.writeable = False
    return X


LAYOUTS = {
    "F": np.asfortranarray,
    "read-only": _read_only,
    "non-contiguous": lambda X: np.repeat(X, 2, axis=1)[:, ::2],
    "csr": sp.csr_matrix,
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("estimator, target", [(SVC(gamma=0.5, tol=TOL), "labels"),
                                               (SVR(gamma=0.5, tol=TOL), "values")])
def test_a_layout_gives_the_c_ordered_float64_solution(layout: str, estimator, target: str) -> None:
    X, labels, values = _data()
    y = labels if target == "labels" else values
    reference = estimator.__class__(**estimator.get_params()).fit(X, y)
    other = estimator.__class__(**estimator.get_params()).fit(LAYOUTS[layout](X), y)
    np.testing.assert_array_equal(other.support_, reference.support_)
    assert sp.issparse(other.dual_coef_) == (layout == "csr")       # CSR after a sparse fit, as scikit-learn's
    dual_coef = other.dual_coef_.toarray() if layout == "csr" else other.dual_coef_
    np.testing.assert_allclose(dual_coef, reference.dual_coef_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(other.intercept_, reference.intercept_, rtol=1e-10, atol=1e-12)
    assert other.n_iter_ == reference.n_iter_


def test_float32_inputs_give_the_solution_of_their_float64_values() -> None:
    X, labels, _ = _data()
    X32 = X.astype(np.float32)
    reference = SVC(gamma=0.5, tol=TOL).fit(X32.astype(np.float64), labels)
    other = SVC(gamma=0.5, tol=TOL).fit(X32, labels)
    np.testing.assert_array_equal(other.support_, reference.support_)
    np.testing.assert_allclose(other.dual_coef_, reference.dual_coef_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(other.intercept_, reference.intercept_, rtol=1e-10, atol=1e-12)
    assert other.kkt_report_.ok
