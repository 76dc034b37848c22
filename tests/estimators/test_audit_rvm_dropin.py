"""RVR and RVC as drop-ins for scikit-learn users: habits an audit found broken, one test each."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from sparsekernel.estimators import RVC, RVR
from sparsekernel.estimators.rvm import PoissonRVR
from sparsekernel.kernels import RBF, Precomputed


def _gram_problem():
    """A 40-point Gram matrix, a 5 x 40 cross-kernel, and a target per estimator."""
    rng = np.random.default_rng(0)
    X, Xt = rng.normal(size=(40, 3)), rng.normal(size=(5, 3))
    k = RBF(0.5)
    targets = {RVR: np.sin(X[:, 0]), RVC: (X[:, 0] > 0).astype(int), PoissonRVR: np.arange(40.0) % 3}
    return k(X, X), k(Xt, X), targets


@pytest.mark.parametrize("Estimator", [RVR, RVC, PoissonRVR])
def test_a_precomputed_kernel_object_predicts_as_the_string(Estimator) -> None:
    """``kernel`` is documented as a name or a Kernel: ``Precomputed()`` fitted (its relevance 'vectors' kept
    as rows of the Gram matrix, as if they were inputs), then predict raised numpy's matmul ValueError
    ('size 31 is different from 40'). The SVMs take either spelling."""
    K, K_test, targets = _gram_problem()
    y = targets[Estimator]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        by_name = Estimator(kernel="precomputed").fit(K, y)
        by_object = Estimator(kernel=Precomputed()).fit(K, y)
    assert by_object.X_relevance_ is None
    assert by_object.__sklearn_tags__().input_tags.pairwise
    assert not by_object.__sklearn_tags__().input_tags.sparse
    np.testing.assert_array_equal(by_object.predict(K_test), by_name.predict(K_test))


@pytest.mark.parametrize("Estimator", [RVR, RVC, PoissonRVR])
def test_a_sparse_gram_matrix_is_refused_for_a_precomputed_kernel_object(Estimator) -> None:
    """As for kernel='precomputed' (test_a_sparse_precomputed_gram_matrix_is_refused_naming_x): it was fitted."""
    import scipy.sparse as sp

    from sparsekernel.errors import SparseInputError

    K, _, targets = _gram_problem()
    with pytest.raises(SparseInputError, match=r"X must be a dense Gram matrix .* got a scipy.sparse matrix"):
        Estimator(kernel=Precomputed()).fit(sp.csr_matrix(K), targets[Estimator])


@pytest.mark.parametrize("Estimator", [RVC, "SVC"])
@pytest.mark.parametrize("labels, kinds", [
    ([1, "a"], "int and str"),           # a number first: "Unknown label type: unknown", no word of the mix
    (["a", 1], "int and str"),           # a string first: the mix was named (np.unique's TypeError)
    ([None, "a"], "NoneType and str"),   # a missing label among strings
])
def test_labels_of_two_kinds_are_named_as_a_mix_whichever_comes_first(Estimator, labels, kinds: str) -> None:
    """The same y of numbers and strings got two messages, by the type of its first entry: scikit-learn's
    type_of_target calls an object array whose first entry is not a string 'unknown', and the error said
    "Unknown label type: unknown", neither the kinds found nor that they do not sort together."""
    from sparsekernel.errors import ValidationError
    from sparsekernel.estimators import SVC

    Estimator = SVC if Estimator == "SVC" else Estimator
    X = np.random.default_rng(0).normal(size=(30, 2))
    y = np.array(labels * 15, dtype=object)
    with pytest.raises(ValidationError, match=rf"^y must hold class labels of one kind, all numbers or all "
                                              rf"strings; got a mix of {kinds}"):
        Estimator().fit(X, y)
