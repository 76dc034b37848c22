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
    ([1.5, "a"], "float and str"),
])
def test_labels_of_two_kinds_are_named_as_a_mix_whichever_comes_first(Estimator, labels, kinds: str) -> None:
    """The same y of numbers and strings got two messages, by the type of its first entry: scikit-learn's
    type_of_target calls an object array whose first entry is not a string 'unknown', and the error said
    "Unknown label type: unknown", neither the kinds found nor that they do not sort together. (A None among
    them is a missing label: test_a_missing_class_label_is_named_in_y_with_its_index.)"""
    from sparsekernel.errors import ValidationError
    from sparsekernel.estimators import SVC

    Estimator = SVC if Estimator == "SVC" else Estimator
    X = np.random.default_rng(0).normal(size=(30, 2))
    y = np.array(labels * 15, dtype=object)
    with pytest.raises(ValidationError, match=rf"^y must hold class labels of one kind, all numbers or all "
                                              rf"strings; got a mix of {kinds}"):
        Estimator().fit(X, y)


@pytest.mark.parametrize("Estimator", [RVC, "SVC"])
@pytest.mark.parametrize("held", ["bytes array", "bytes objects"])
def test_labels_of_one_kind_that_scikit_learn_refuses_are_not_called_a_mix(Estimator, held: str) -> None:
    """Bytes labels (b"a", b"b"), one kind, which scikit-learn refuses ("convert the labels to a string or
    integer format"), were refused as "got a mix of bytes"."""
    from sparsekernel.errors import ValidationError
    from sparsekernel.estimators import SVC

    Estimator = SVC if Estimator == "SVC" else Estimator
    X = np.random.default_rng(0).normal(size=(30, 2))
    labels = [b"a", b"b"] * 15
    y = np.array(labels) if held == "bytes array" else np.array(labels, dtype=object)
    with pytest.raises(ValidationError, match=r"^y must hold class labels \(integers, strings, booleans, or floats "
                                              r"of integer value\); got labels of type bytes: .*string or integer") as err:
        Estimator().fit(X, y)
    assert "mix" not in str(err.value)


def _labels_with_a_gap(kind: str):
    """30 labels 'a'/'b', the one at index 28 missing, as pandas and numpy users hold them."""
    import pandas as pd

    labels = ["a", "b"] * 14 + [None, "a"]
    return {"object-nan": np.array([np.nan if v is None else v for v in labels], dtype=object),
            "object-none": np.array(labels, dtype=object),
            "series-none": pd.Series(labels),
            "categorical": pd.Series(labels).astype("category"),
            "string-dtype": pd.Series(labels, dtype="string")}[kind]


@pytest.mark.parametrize("kind", ["object-nan", "object-none", "series-none", "categorical", "string-dtype"])
def test_a_missing_class_label_is_named_in_y_with_its_index(kind: str) -> None:
    """A label missing from y (NaN, None or pandas.NA, as a pandas column of strings holds it) was refused as
    "X (...) and y (...) must be valid input for RVC; got: Input contains NaN" (scikit-learn's words, which
    do not say which of X and y), and a pandas 'string' column's NA raised TypeError: boolean value of NA is
    ambiguous (not a ValueError, naming nothing)."""
    from sparsekernel.errors import ValidationError

    X = np.random.default_rng(0).normal(size=(30, 2))
    with pytest.raises(ValidationError, match=r"^y must hold a class label in every row; got a missing value "
                                              r"\(.*\) at index 28"):
        RVC().fit(X, _labels_with_a_gap(kind))


@pytest.mark.parametrize("estimator", ["SVC", "NuSVC"])
@pytest.mark.parametrize("kind", ["object-nan", "object-none", "series-none", "categorical", "string-dtype"])
def test_the_svm_classifiers_name_a_missing_class_label_as_rvc_does(estimator: str, kind: str) -> None:
    """The same gaps in y for SVC and NuSVC: "Input contains NaN" (and a TypeError for pandas.NA) before."""
    from sparsekernel import estimators
    from sparsekernel.errors import ValidationError

    X = np.random.default_rng(0).normal(size=(30, 2))
    with pytest.raises(ValidationError, match=r"^y must hold a class label in every row; got a missing value "
                                              r"\(.*\) at index 28"):
        getattr(estimators, estimator)().fit(X, _labels_with_a_gap(kind))
