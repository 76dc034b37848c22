"""The notes' stand-in data sets and the file loaders."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse
from sklearn.datasets import dump_svmlight_file, load_svmlight_file

from sparsekernel import datasets
from sparsekernel.errors import ValidationError
from sparsekernel.formulations import HardMarginSVC
from sparsekernel.kernels import RBF, Linear


@pytest.mark.parametrize(
    "make, n, d",
    [(datasets.separable, 20, 2), (datasets.ring, 32, 2), (datasets.ripley_mixture, 200, 2), (datasets.sinusoid, 10, 1)],
)
def test_shapes_and_seeds(make, n: int, d: int) -> None:
    X, t = make()
    assert X.shape == (n, d) and t.shape == (n,)
    X2, t2 = make(seed=0)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(t, t2)
    X3, t3 = make(seed=1)
    assert not (np.array_equal(X, X3) and np.array_equal(t, t3))


def test_classification_sets_have_both_classes_equally() -> None:
    for make in (datasets.separable, datasets.ring, datasets.ripley_mixture):
        _, t = make()
        assert set(np.unique(t)) == {-1.0, 1.0}
        assert np.sum(t == 1) == np.sum(t == -1)


def test_separable_is_linearly_separable() -> None:
    X, t = datasets.separable()
    sol = HardMarginSVC(X, t, Linear()).solve("qp-clarabel")
    assert np.all(t * sol.decision_function(X) >= 1 - 1e-6)


def test_ring_is_separated_exactly_by_the_gaussian_kernel() -> None:
    """Figure 7.2: hard margin with gamma = 0.8 separates the ring data."""
    X, t = datasets.ring()
    sol = HardMarginSVC(X, t, RBF(0.8)).solve("clarabel")
    assert np.all(np.sign(sol.decision_function(X)) == t)
    assert 0 < sol.n_support < len(t)


def test_sinusoid_noise_level() -> None:
    X, t = datasets.sinusoid(n=2000, noise=0.2)
    residual = t - np.sin(2 * np.pi * X[:, 0])
    assert residual.std() == pytest.approx(0.2, rel=0.1)
    np.testing.assert_allclose(X[:, 0], np.linspace(0, 1, 2000))


def test_ripley_overlap_gives_a_bayes_error_near_0_2() -> None:
    """The mixture's Bayes rule misclassifies about a fifth of the points."""
    from scipy.stats import multivariate_normal

    X, t = datasets.ripley_mixture(n=20000, seed=3)
    s2 = datasets.RIPLEY_SPREAD**2
    density = {c: sum(multivariate_normal(m, s2 * np.eye(2)).pdf(X) for m in datasets._RIPLEY_CENTRES[c]) for c in (1.0, -1.0)}
    bayes = np.where(density[1.0] > density[-1.0], 1.0, -1.0)
    assert np.mean(bayes != t) == pytest.approx(0.2, abs=0.02)


def test_load_csv_with_and_without_header(tmp_path) -> None:
    X, t = datasets.ripley_mixture(n=12)
    body = "\n".join(",".join(f"{v:.17g}" for v in row) + f",{c:g}" for row, c in zip(X, t))
    plain = tmp_path / "plain.csv"
    plain.write_text(body + "\n")
    headed = tmp_path / "headed.csv"
    headed.write_text("x1,x2,label\n# a comment\n" + body + "\n\n")
    bom = tmp_path / "bom.csv"                   # a byte order mark (Excel's "CSV UTF-8") before the first row
    bom.write_bytes(b"\xef\xbb\xbf" + body.encode() + b"\n")
    bom_headed = tmp_path / "bom_headed.csv"
    bom_headed.write_bytes(b"\xef\xbb\xbf" + b"x1,x2,label\n" + body.encode() + b"\n")
    for path in (plain, headed, bom, bom_headed):
        X2, t2 = datasets.load_csv(path)
        np.testing.assert_array_equal(X2, X)   # every data row kept: 12, not 11
        np.testing.assert_array_equal(t2, t)


@pytest.mark.parametrize("first, fields", [
    ("0.5,1.O,1", r"\['0.5', '1.O', '1'\], whose \['0.5', '1'\] are numbers and \['1.O'\] are neither numbers "
                  r"nor names"),  # O for 0
    ("1.5,", r"\['1.5', ''\], whose \['1.5'\] are numbers and \[''\] are neither"),     # a missing target
    ("1.5,1x", r"\['1.5', '1x'\]"),                                                # one number of two
    ("1,NA,1", r"\['1', 'NA', '1'\]"), ("1,2,1,", r"\['1', '2', '1', ''\]"),      # a trailing comma
])
def test_a_first_row_that_mixes_numbers_and_text_is_refused_not_dropped(tmp_path, first: str, fields: str) -> None:
    """A data row with a typo in its first line was taken as a header and dropped: with a warning where most
    of its fields were numbers, without a word in a two-column file ('1.5,' or '1.5,1x': N = 30 read of 31).
    It is refused, naming the line and its fields. A header of names is read without a word, also where some
    names are numbers: pandas' names for unnamed columns (0, 1, 2: to_csv(index=False), after an empty index
    field with index=True), years or wavelengths as column names."""
    import warnings

    typo = tmp_path / "typo.csv"
    typo.write_text(first + "\n" + "\n".join(",".join(["0.2"] * (first.count(",") + 1)) for _ in range(2)) + "\n")
    with pytest.raises(ValidationError, match=r"line 1: the first row must be a header \(names\) or data "
                                              r"\(only numbers\); got " + fields):
        datasets.load_csv(typo)
    for header in ("0,1,target", "x1,x2,t", ",x,t", "2019,2020,target", "400,410,label", "x,410.5,t"):
        named = tmp_path / "named.csv"
        named.write_text(header + "\n0.2,0.3,-1\n0.1,0.9,1\n")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            X, t = datasets.load_csv(named)
        assert X.shape == (2, 2) and t.tolist() == [-1.0, 1.0]
    for header in (",0,1,target", ",0,1,2"):       # pandas' to_csv(index=True): the index is a column of data
        named = tmp_path / "named.csv"
        named.write_text(header + "\n0,0.2,0.3,-1\n1,0.1,0.9,1\n")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            X, t = datasets.load_csv(named)
        assert X.shape == (2, 3) and X[:, 0].tolist() == [0.0, 1.0] and t.tolist() == [-1.0, 1.0]


def test_csv_errors_name_the_line_and_blank_lines_are_skipped(tmp_path) -> None:
    """A ragged row or a bad field 500 lines down said neither where nor which; a line of spaces was an
    error though blank lines are skipped; Python's float() (and numpy) read 1_000 as a number, which no CSV
    writer writes; a row of empty fields is a row of missing values, not a blank line."""
    rows = [f"{i},{i % 3},1" for i in range(600)]
    for n, bad, words in ((500, "3,4", r"line 501: every row must have the first data row's 3 columns; got 2"),
                          (500, "3,x,1", r"line 501, column 2: a data field must be a number; got 'x'"),
                          (7, "3,1_000,1", r"line 8, column 2: a data field must be a number; got '1_000'"),
                          (9, ",,", r"line 10, column 1: a data field must be a number; got ''"),
                          (3, "0x10,1,1", r"line 4, column 1: a data field must be a number; got '0x10'")):
        path = tmp_path / "long.csv"
        path.write_text("\n".join(rows[:n] + [bad] + rows[n + 1:]) + "\n")
        with pytest.raises(ValidationError, match=words):
            datasets.load_csv(path)
    spaced = tmp_path / "spaced.csv"
    spaced.write_text("x,y,t\n1,2,1\n   \n\t\n3,4,-1\n")
    X, t = datasets.load_csv(spaced)
    assert X.tolist() == [[1.0, 2.0], [3.0, 4.0]] and t.tolist() == [1.0, -1.0]


@pytest.mark.parametrize("suffix", [".gz", ".bz2"])
def test_compressed_files_are_read_as_scikit_learn_reads_them(tmp_path, suffix: str) -> None:
    """load refused a gzip or bz2 LIBSVM file, which load_svmlight_file reads, as 'not text' and as 'path'
    where the command line's argument is --data; a compressed CSV is read too."""
    import bz2
    import gzip

    from sklearn.datasets import load_svmlight_file

    opener = {".gz": gzip.open, ".bz2": bz2.open}[suffix]
    libsvm = tmp_path / ("data.txt" + suffix)
    with opener(libsvm, "wt") as handle:
        handle.write("1 1:0.5 3:2\n-1 2:1\n")
    X, t = datasets.load(libsvm, name="--data")
    X_ref, t_ref = load_svmlight_file(str(libsvm))
    np.testing.assert_array_equal(X.toarray(), X_ref.toarray())
    np.testing.assert_array_equal(t, t_ref)
    table = tmp_path / ("data.csv" + suffix)
    with opener(table, "wt") as handle:
        handle.write("x,t\n0.5,1\n2,-1\n")
    X, t = datasets.load(table)
    assert X.tolist() == [[0.5], [2.0]] and t.tolist() == [1.0, -1.0]
    broken = tmp_path / ("broken.libsvm" + suffix)
    broken.write_text("1 1:0.5\n")
    with pytest.raises(ValidationError, match=r"^--data must be a data file, compressed as its name says"):
        datasets.load(broken, name="--data")
    # a corrupt stream inside a good header: gzip raised zlib.error, which neither loader caught
    packed = bytearray(gzip.compress(b"x,t\n" + b"0.5,1\n2,-1\n" * 2000) if suffix == ".gz"
                       else bz2.compress(b"x,t\n" + b"0.5,1\n2,-1\n" * 2000))
    packed[20:40] = bytes(b ^ 0xFF for b in packed[20:40])
    corrupt = tmp_path / ("corrupt.csv" + suffix)
    corrupt.write_bytes(bytes(packed))
    with pytest.raises(ValidationError, match=r"^--data must be a data file, compressed as its name says"):
        datasets.load(corrupt, name="--data")
    with pytest.raises(ValidationError, match=r"^path must be a CSV file of numbers; got .*corrupt"):
        datasets.load_csv(corrupt)


def test_load_libsvm_round_trip(tmp_path) -> None:
    X, t = datasets.ripley_mixture(n=15)
    path = tmp_path / "data.libsvm"
    dump_svmlight_file(X, t, str(path))
    X2, t2 = datasets.load_libsvm(path)
    assert scipy.sparse.issparse(X2) and X2.format == "csr"          # kept sparse by default
    np.testing.assert_allclose(X2.toarray(), X, rtol=1e-15)
    np.testing.assert_array_equal(t2, t)
    X3, _ = datasets.load_libsvm(path, dense=True)
    assert isinstance(X3, np.ndarray)
    np.testing.assert_allclose(X3, X, rtol=1e-15)


def test_loaders_report_bad_files(tmp_path) -> None:
    with pytest.raises(ValidationError, match="path must be an existing CSV file"):
        datasets.load_csv(tmp_path / "missing.csv")
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("1,2,3\n4,5\n")
    with pytest.raises(ValidationError, match="line 2: every row must have the first data row's 3 columns; got 2"):
        datasets.load_csv(ragged)
    words = tmp_path / "words.csv"
    words.write_text("a,b\n1,x\n")
    with pytest.raises(ValidationError, match="line 2, column 2: a data field must be a number; got 'x'"):
        datasets.load_csv(words)
    bad = tmp_path / "bad.libsvm"
    bad.write_text("1 1:0.5 2:oops\n")
    with pytest.raises(ValidationError, match="not a valid LIBSVM-format file"):
        datasets.load_libsvm(bad)
    with pytest.raises(ValidationError, match="n must be an integer >= 2"):
        datasets.sinusoid(n=1)


@pytest.mark.parametrize("name, text, expected", [
    ("a.csv", None, "csv"), ("A.CSV", "1 1:2\n", "csv"),             # the extension decides where it can
    ("a.libsvm", None, "libsvm"), ("a.svm", None, "libsvm"), ("a.svmlight", "1,2\n", "libsvm"),
    ("a.txt", "# comment\n\n+1 1:0.5 3:2\n", "libsvm"), ("a.txt", "x,t\n0.5,1\n", "csv"),
    ("data", "-1 7:1e-3\n", "libsvm"), ("a.dat", "", "csv"),
    # a first row of a label alone (a LIBSVM row without features) tells nothing: the next line does
    ("a.txt", "1\n-1 1:0.5 2:1\n", "libsvm"), ("a.dat", "+1\n# note, with a comma\n2,3\n", "csv"),
    ("a.libsvm.gz", None, "libsvm"), ("a.csv.bz2", None, "csv"),
])
def test_infer_format_is_one_rule_for_name_and_text(name: str, text, expected: str) -> None:
    assert datasets.infer_format(name, text) == expected


def test_load_tells_the_format_and_refuses_what_is_not_data(tmp_path) -> None:
    X, t = datasets.ripley_mixture(n=12)
    dump_svmlight_file(X, t, str(tmp_path / "ripley.txt"))             # LIBSVM content under .txt
    np.savetxt(tmp_path / "table.txt", np.column_stack([X, t]), delimiter=",")
    Xl, tl = datasets.load(tmp_path / "ripley.txt")
    Xc, tc = datasets.load(tmp_path / "table.txt")
    assert scipy.sparse.issparse(Xl) and not scipy.sparse.issparse(Xc)
    np.testing.assert_allclose(Xl.toarray(), Xc)
    np.testing.assert_array_equal(tl, tc)
    with pytest.raises(ValidationError, match="name must end in one of"):
        datasets.infer_format("a.txt")
    (tmp_path / "empty.svm").write_bytes(b"")
    with pytest.raises(ValidationError, match="must hold at least one data row; got none"):
        datasets.load(tmp_path / "empty.svm")
    (tmp_path / "binary.txt").write_bytes(b"1,2\n\xff\xfe")
    with pytest.raises(ValidationError, match=r"not text"):
        datasets.load(tmp_path / "binary.txt")
    with pytest.raises(ValidationError, match="format must be one of"):
        datasets.load(tmp_path / "table.txt", format="xls")


def test_a_feature_index_beyond_the_readers_int_is_a_validation_error(tmp_path) -> None:
    """scikit-learn's reader raises OverflowError there, which reached the command line as exit status 3."""
    path = tmp_path / "huge.svm"
    path.write_text("1 1:2 3000000000:4\n-1 2:1\n")
    with pytest.raises(ValidationError, match="is not a valid LIBSVM-format file: value too large"):
        datasets.load_libsvm(path)


@pytest.mark.parametrize("text, name", [("0\t0\t1\n", "tabs"), ("0;0;1\n1;1;-1\n", "semicolons"),
                                        ("x;y;t\n0;0;1\n", "semicolons"),
                                        # np.savetxt's default: line 1 was taken as a header, then 'line 2: a
                                        # row must have at least 2 columns ...; got 1'
                                        ("1.0e+00 2.0e+00 1.0e+00\n3.0e+00 4.0e+00 -1.0e+00\n", "spaces"),
                                        ("x y t\n0 0 1\n", "spaces"), ("0 0 1\n", "spaces")])
def test_load_csv_names_a_file_separated_by_tabs_or_semicolons(tmp_path, text: str, name: str) -> None:
    """A file of one field per row holding tabs or semicolons had its first row taken as a header: one data
    row separated by tabs was refused as holding none, two separated by semicolons as line 2 having 1 column.
    The error now says how the file is separated."""
    path = tmp_path / "data.csv"
    path.write_text(text)
    with pytest.raises(ValidationError, match=f"separated by ','; got rows separated by {name}"):
        datasets.load_csv(path)


@pytest.mark.parametrize("text, where", [
    ("1 1:1\n-1 2:1\n1 3:1 1:2\n",
     "line 3: feature indices must increase along a line, and 1 follows 3; got '1 3:1 1:2'"),
    ("1 1:1\n# note\n\n-1 1:1 1:2\n", "line 4: feature indices must increase along a line, and 1 follows 1"),
    ("1 1:1\n-1 qid:2 2:1 2:5\n", "line 2: feature indices must increase along a line, and 2 follows 2"),
    ("1 1:1\nyes 2:1\n", "line 2: a line must start with its label, a number; got 'yes 2:1'"),
    ("1 1:1\n-1 2:oops\n", "line 2: a feature must be index:value, an integer index and a number, not '2:oops'"),
    ("1 1 : 0.5\n", "line 1: a feature must be index:value, not '1'"),
    ("1 1:1\n-1 -3:1\n", r"line 2: a feature index must be in \[0, 2147483647\], not -3"),
])
def test_a_bad_libsvm_line_is_named_with_its_number_and_text(tmp_path, text: str, where: str) -> None:
    """scikit-learn's reader names no line ('Feature indices in SVMlight/LibSVM data file should be sorted
    and unique.', 'could not convert string to float: b'yes''): in a file of many lines the bad one
    could not be found from the message. Its own message is kept, and the line is named after it."""
    path = tmp_path / "bad.libsvm"
    path.write_text(text)
    with pytest.raises(ValidationError, match=r"'.*bad.libsvm' is not a valid LIBSVM-format file: .*\(" + where):
        datasets.load_libsvm(path)


def test_a_comment_line_holding_a_quote_leaves_the_data_rows_alone(tmp_path) -> None:
    """Comment lines were dropped after the csv reader had parsed them: the quote in '# columns x,"y ...'
    opened a quoted field that swallowed every data row, and the file was refused as holding none."""
    path = tmp_path / "quoted.csv"
    path.write_text('# columns x,"y and the label\nx,y,t\n# a note, "half quoted\n1,2,1\n\n3,4,-1\n5,oops,1\n')
    with pytest.raises(ValidationError, match="line 7, column 2: a data field must be a number; got 'oops'"):
        datasets.load_csv(path)
    path.write_text('# columns x,"y and the label\n1,2,1\n3,4,-1\n')
    X, t = datasets.load_csv(path)
    np.testing.assert_array_equal(X, [[1, 2], [3, 4]])
    np.testing.assert_array_equal(t, [1, -1])


def test_load_reads_a_libsvm_file_whose_comment_is_not_utf8_as_load_libsvm_does(tmp_path) -> None:
    """load refused '# caf\\xe9' (Latin-1) in a .libsvm file as 'not text', which load_libsvm and
    scikit-learn's load_svmlight_file read (as bytes, the comment skipped). A NUL byte is still refused,
    a byte that is no number is named with its line, and a CSV file must still be UTF-8."""
    path = tmp_path / "latin1.libsvm"
    path.write_bytes(b"# caf\xe9 au lait\n1 1:0.5 2:1\n-1 2:2 # cr\xe8me\n")
    X, t = datasets.load(path)
    Xs, ts = load_svmlight_file(str(path))
    np.testing.assert_array_equal(X.toarray(), Xs.toarray())
    np.testing.assert_array_equal(t, ts)
    path.write_bytes(b"1 1:0.5 2:\xe9\n")
    with pytest.raises(ValidationError, match=r"line 1: a feature must be index:value"):
        datasets.load(path)
    path.write_bytes(b"1 1:0.5\x00\n")
    with pytest.raises(ValidationError, match="not text"):
        datasets.load(path)
    (tmp_path / "latin1.csv").write_bytes(b"# caf\xe9\n1,2,1\n")
    with pytest.raises(ValidationError, match="not text"):
        datasets.load(tmp_path / "latin1.csv")
