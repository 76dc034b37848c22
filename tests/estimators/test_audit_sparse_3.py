"""Audit of the SVM estimators as drop-in replacements of ``sklearn.svm`` on sparse and unusual input
layouts: each test fails on the code before its fix, and checks against scikit-learn (LIBSVM) or a
certificate, never against our own earlier output."""

from __future__ import annotations

import os
import resource

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn import svm

from sparsekernel.errors import ValidationError
from sparsekernel.estimators import SVC, SVR, NuSVC, NuSVR, OneClassSVM


def _in_child_under_memory_limit(call, extra_mb: int) -> int:
    """Run ``call()`` in a forked child whose address space may grow by at most ``extra_mb``; its exit
    status: 0 when it returned, 1 when it raised MemoryError, 2 on any other exception (an allocation
    beyond the limit fails at once, so nothing is touched, and the parent's memory is not at stake)."""
    pid = os.fork()
    if pid == 0:                                                    # pragma: no cover (the child)
        status = 2
        try:
            with open("/proc/self/status") as f:
                size_kb = next(int(line.split()[1]) for line in f if line.startswith("VmSize:"))
            limit = (size_kb + extra_mb * 1024) * 1024
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            call()
            status = 0
        except MemoryError:
            status = 1
        except BaseException:
            status = 2
        os._exit(status)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


@pytest.mark.skipif(not os.path.exists("/proc/self/status") or not hasattr(os, "fork"), reason="Linux only")
@pytest.mark.parametrize("make", [SVC, SVR])
def test_coef_of_sparse_rows_over_far_more_columns_than_values_costs_memory_by_the_values(make) -> None:
    """``coef_`` (the linear kernel's w = sum_n coef_n x_n) was scipy's sparse product of the dual
    coefficients and the support vectors, which keeps an index of one entry per column: 1.1 GB and
    1.5 s for 40 stored values in 10^8 columns (a fit and its predictions there take a few MB,
    ``sparse.used_columns``), killed for want of memory at 3e9. Now it is scikit-learn's coef_ on the
    same rows in 40 columns, put back in their columns, within 64 MB."""
    rng = np.random.default_rng(0)
    rows = np.repeat(np.arange(60), 5)
    cols = rng.integers(0, 40, size=rows.size)
    values = rng.normal(size=rows.size)
    narrow = sp.csr_matrix((values, (rows, cols)), shape=(60, 40))
    spread = np.sort(rng.choice(10**8, size=40, replace=False))
    wide = sp.csr_matrix((values, (rows, spread[cols])), shape=(60, 10**8))
    target = (rng.normal(size=60) > 0).astype(int) if make is SVC else rng.normal(size=60)
    fitted = make(kernel="linear", tol=1e-8).fit(wide, target)
    assert _in_child_under_memory_limit(lambda: fitted.coef_, extra_mb=64) == 0
    coef = fitted.coef_
    reference = getattr(svm, make.__name__)(kernel="linear", tol=1e-8).fit(narrow, target).coef_.toarray()
    assert sp.issparse(coef) and coef.shape == (1, 10**8)
    np.testing.assert_allclose(coef[:, spread].toarray(), reference, rtol=0, atol=1e-6)
    assert coef.nnz == coef[:, spread].nnz                          # nothing stored in any other column


@pytest.mark.parametrize("make", [SVC, NuSVC, SVR, NuSVR, OneClassSVM])
@pytest.mark.parametrize("layout", [sp.csr_matrix, sp.csr_array, lambda w: sp.csr_matrix(w).T])
def test_a_sparse_sample_weight_is_refused_on_one_line_naming_it_and_its_shape(make, layout) -> None:
    """A scipy.sparse sample_weight (scikit-learn: ValueError 'setting an array element with a sequence')
    was read by np.asarray as an object scalar holding the matrix, and refused as 'sample_weight must be an
    array of 30 real numbers; got an array of dtype object holding <Compressed Sparse Row sparse matrix ...'
    over two lines, the matrix's repr. Now the one line y gets: sparse, its shape, and what to pass."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    y = {SVC: (X[:, 0] > 0).astype(int), NuSVC: (X[:, 0] > 0).astype(int), SVR: X[:, 1], NuSVR: X[:, 1],
         OneClassSVM: None}[make]
    weight = layout(np.ones((1, 30)))
    args = () if y is None else (y,)
    with pytest.raises(ValueError):                                 # scikit-learn's kind of error too
        getattr(svm, make.__name__)().fit(X, *args, sample_weight=weight)
    with pytest.raises(ValidationError) as info:
        make().fit(X, *args, sample_weight=weight)
    message = str(info.value)
    assert "\n" not in message and "sample_weight must be a dense 1-D array" in message, message
    assert f"scipy.sparse matrix of shape {weight.shape}" in message, message


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")          # numpy's, on making an np.matrix
@pytest.mark.parametrize("make, where", [(make, where) for make in (SVC, NuSVC, SVR, NuSVR, OneClassSVM)
                                         for where in ("fit X", "fit y", "predict X")
                                         if not (make is OneClassSVM and where == "fit y")])   # it takes no y
def test_an_np_matrix_is_refused_naming_the_argument_and_a_type_error_as_scikit_learns(make, where) -> None:
    """scikit-learn refuses an np.matrix X or y with a TypeError, 'np.matrix is not supported. Please
    convert to a numpy array with np.asarray', which ours passed through: it names neither X nor y (for a
    y of shape (n, 1) too). Now a ValidationError naming the argument, its domain and the matrix's shape,
    still a TypeError for code written for sklearn.svm."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    y = (X[:, 0] > 0).astype(int) if make in (SVC, NuSVC) else X[:, 1]
    args = {"fit X": (np.asmatrix(X), y), "fit y": (X, np.asmatrix(y).T), "predict X": (X, y)}[where]
    args = args[:1] if make is OneClassSVM else args

    def call(estimator):
        fitted = estimator.fit(*args)
        return fitted.predict(np.asmatrix(X)) if where == "predict X" else fitted

    with pytest.raises(TypeError):
        call(getattr(svm, make.__name__)())
    with pytest.raises(ValidationError) as info:
        call(make())
    assert isinstance(info.value, TypeError)
    name = where.split()[1]
    assert str(info.value).startswith(f"{name} must be ") and "np.matrix of shape" in str(info.value), str(info.value)
