"""The estimators' shortcut past ``validate_data`` (``svm._validated``) agrees with it.

For a 2-D float64 ndarray (and a 1-D integer, boolean or finite float y) the
estimators set ``n_features_in_`` and drop old feature names themselves; every
other input goes through scikit-learn's ``validate_data``. Here each input is
given to both, on fresh estimators, and what they return, set and raise is
compared: the same arrays (X the very object, as validate_data keeps it; y the same values, layout
and dtype),
the same attributes, the same error or warning where one is due.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.utils.validation import validate_data

from sparsekernel.estimators import SVC, SVR, NuSVC, NuSVR, OneClassSVM
from sparsekernel.estimators.svm import _NO_Y, SPARSE, _validated

ESTIMATORS = (SVC, NuSVC, SVR, NuSVR, OneClassSVM)


def _reference(estimator, X, y, reset, **options):
    return validate_data(estimator, X, y, reset=reset, dtype=np.float64, ensure_all_finite=False,
                         accept_sparse=SPARSE, **options)


def _inputs():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 4))
    labels = (X[:, 0] > 0).astype(np.int64)
    fortran = np.asfortranarray(X)
    read_only = X.copy()
    read_only.flags.writeable = False
    wide = rng.normal(size=(30, 8))
    yield "C float64, int y", X, labels
    yield "F float64, int8 y", fortran, labels.astype(np.int8)
    yield "read-only X, bool y", read_only, labels.astype(bool)
    yield "strided X and y", wide[:, ::2], np.repeat(labels, 2)[::2]
    yield "float y", X, X[:, 1].copy()
    yield "uint y", X, labels.astype(np.uint16) + 3


@pytest.mark.parametrize("name, X, y", list(_inputs()), ids=[case[0] for case in _inputs()])
def test_fit_inputs_return_and_set_what_validate_data_does(name, X, y):
    for cls in ESTIMATORS:
        ours, theirs = cls(), cls()
        got_X, got_y = _validated(ours, X, y, True)
        want_X, want_y = _reference(theirs, X, y, True)
        assert got_X is X and want_X is X                   # validate_data keeps such an X as it is
        np.testing.assert_array_equal(got_y, want_y)
        assert got_y.dtype == want_y.dtype and got_y.flags.c_contiguous and want_y.flags.c_contiguous
        assert ours.n_features_in_ == theirs.n_features_in_ == X.shape[1]
        assert not hasattr(ours, "feature_names_in_") and not hasattr(theirs, "feature_names_in_")
        assert _validated(ours, X, _NO_Y, False) is X         # predict's check: the same X back


def test_a_kkt_row_built_by_the_shortcut_is_the_dataclass_row():
    from dataclasses import asdict, replace

    from sparsekernel.formulations.report import KKTRow, _row

    values = ("(7.24)", "primal", "t_n y_n - 1 + xi_n >= 0", 0.5, 0.25, 0.5, 3, False, "")
    row, reference = _row(*values), KKTRow(*values)
    assert row == reference and hash(row) == hash(reference) and repr(row) == repr(reference)
    assert asdict(row) == asdict(reference) and replace(row, ok=True) == replace(reference, ok=True)
    with pytest.raises(ValueError):
        _row(*values[:-1])                                   # a field missing is an error, not a default


def test_refit_on_an_array_forgets_the_feature_names_of_a_frame():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    for cls in (SVC, SVR):
        est = cls().fit(frame, y)
        np.testing.assert_array_equal(est.feature_names_in_, ["a", "b", "c"])
        est.fit(X, y)
        assert not hasattr(est, "feature_names_in_")
        assert est.n_features_in_ == 3


def test_an_array_after_a_frame_warns_as_scikit_learn_does():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int)
    est = SVC().fit(pd.DataFrame(X, columns=["a", "b", "c"]), y)
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        est.predict(X)


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_wrong_width_at_predict_gets_scikit_learns_message(cls):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int) if cls in (SVC, NuSVC) else X[:, 1]
    est = cls().fit(X, y) if cls is not OneClassSVM else cls().fit(X)
    with pytest.raises(ValueError) as ours:
        est.predict(rng.normal(size=(5, 4)))
    theirs = cls()
    theirs.n_features_in_ = 3
    with pytest.raises(ValueError) as reference:
        _reference(theirs, rng.normal(size=(5, 4)), _NO_Y, False)
    assert str(ours.value) == str(reference.value)


@pytest.mark.parametrize("y_bad", [np.array([0.0, np.nan, 1.0, 0.0]), np.array([0.0, np.inf, 1.0, 0.0])])
def test_a_non_finite_y_gets_scikit_learns_error(y_bad):
    X = np.arange(8.0).reshape(4, 2)
    with pytest.raises(ValueError) as reference:
        _reference(SVR(), X, y_bad, True, y_numeric=True)
    with pytest.raises(ValueError) as ours:
        SVR().fit(X, y_bad)
    # ours names the domain and the index first (test_audit_regression_novelty), scikit-learn's words after it
    assert str(ours.value) == f"y must contain only finite values; got NaN or inf at index 1; scikit-learn's check: {reference.value}"


@pytest.mark.parametrize("cls", [SVC, NuSVC, SVR, NuSVR])
def test_a_y_of_none_gets_scikit_learns_error(cls):
    X = np.arange(8.0).reshape(4, 2)
    with pytest.raises(ValueError, match="requires y to be passed"):
        cls().fit(X, None)


def test_inputs_outside_the_shortcut_are_converted_by_validate_data():
    X = [[0.0, 1.0], [1.0, 0.0], [2.0, 1.0], [3.0, 0.0]]     # a list
    y = [0, 1, 0, 1]
    est = SVC().fit(X, y)
    assert est.n_features_in_ == 2 and est.shape_fit_ == (4, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        SVC().fit(np.asarray(X, dtype=np.float32), np.asarray(y))   # float32: converted, no warning
    with pytest.raises(ValueError, match="0 sample"):
        SVC().fit(np.zeros((0, 2)), np.zeros(0, dtype=int))
