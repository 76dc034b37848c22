"""The notes' stand-in data sets, seeded, and loaders for CSV and LIBSVM files
(a LIBSVM file's X is kept sparse, CSR).

One rule tells the two formats apart, for the command line and the demo's
upload alike (``infer_format``): the extension ``.csv`` is CSV; ``.libsvm``,
``.svm`` and ``.svmlight`` are LIBSVM (each also compressed, ``.gz`` or
``.bz2``, read decompressed); any other name (``.txt``, ``.dat``, none) is
read by its first data line of more than one field (a LIBSVM row of a label
alone, no features, tells nothing): ``index:value`` pairs are LIBSVM,
anything else CSV. ``load`` applies it to a file.

The book's data are not distributed; the notes reproduce each figure on a
stand-in set, and these functions generate them. Each returns ``(X, t)`` and
takes ``seed=`` so that a class sees the same pictures.

================  ====  =========================================  ===========
function          N     what                                       figures
================  ====  =========================================  ===========
``separable``     20    two linearly separable clusters in R^2     7.1
``ring``          32    a blob (t = +1) inside a ring (t = -1)     7.2
``ripley_mixture`` 200  Ripley-type two-class Gaussian mixture     7.4, 7.12
``sinusoid``      10    sin(2 pi x) + N(0, 0.2^2) on [0, 1]        7.8, 7.9
================  ====  =========================================  ===========
"""

from __future__ import annotations

import csv
import os
import re
import zlib
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .sparse import compact_indices
from .validation import check_param
from .errors import ValidationError

__all__ = ["separable", "ring", "ripley_mixture", "sinusoid", "text_like", "load_csv", "load_libsvm", "load", "infer_format",
           "FORMATS"]

Array = NDArray[np.float64]

#: The file formats, and the extensions that name each; other extensions are told by their content.
FORMATS: dict[str, tuple[str, ...]] = {"csv": (".csv",), "libsvm": (".libsvm", ".svm", ".svmlight")}
#: How much of a file ``load`` reads to tell its format and that it is text.
HEAD_BYTES = 1 << 16
#: Compressed files both loaders read (scikit-learn's LIBSVM reader opens them by these names too).
COMPRESSED = (".gz", ".bz2")


def _count(name: str, n: object, minimum: int) -> int:
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < minimum:
        raise ValidationError(f"{name} must be an integer >= {minimum}; got {n!r}")
    return int(n)


def separable(n: int = 20, seed: int = 0, gap: float = 0.6) -> tuple[Array, Array]:
    """Two clusters in the plane that a line separates with a gap (Figure 7.1).

    Points are drawn around (1, 1) for t = +1 and (-1, -1) for t = -1 and kept
    only when |x1 + x2| > gap, so the classes are linearly separable by
    construction. Half the points are in each class.
    """
    n = _count("n", n, 2)
    rng = np.random.default_rng(seed)
    X = np.empty((n, 2))
    t = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    for i in range(n):
        while True:
            x = t[i] * np.array([1.0, 1.0]) + 0.8 * rng.normal(size=2)
            if t[i] * (x[0] + x[1]) > gap:
                X[i] = x
                break
    return X, t


def ring(n: int = 32, seed: int = 0) -> tuple[Array, Array]:
    """A blob (t = +1) inside a ring (t = -1), not linearly separable (Figure 7.2).

    Half the points are N(0, 0.4^2 I); the other half lie at radius 2 +/- 0.25
    at uniform angles. A Gaussian kernel separates them exactly.
    """
    n = _count("n", n, 4)
    rng = np.random.default_rng(seed)
    n_in = n // 2
    inner = 0.4 * rng.normal(size=(n_in, 2))
    angle = rng.uniform(0.0, 2.0 * np.pi, size=n - n_in)
    radius = 2.0 + 0.25 * rng.uniform(-1.0, 1.0, size=n - n_in)
    outer = np.column_stack([radius * np.cos(angle), radius * np.sin(angle)])
    X = np.vstack([inner, outer])
    t = np.concatenate([np.ones(n_in), -np.ones(n - n_in)])
    return X, t


# Ripley's (1994) layout, scaled by 3: each class is an equal mixture of two
# isotropic Gaussians. The spread 0.8 gives a Bayes error near 0.2 (measured by
# Monte Carlo on 200,000 points: 0.197), the overlap of the notes' Figure 7.12
# (training error 0.21 on the notes' draw; 0.18 on seed 0's, figures.fig7_12).
_RIPLEY_CENTRES = {
    1.0: np.array([[-2.1, 0.9], [0.9, 0.9]]),
    -1.0: np.array([[-0.9, 2.1], [1.2, 2.1]]),
}
RIPLEY_SPREAD = 0.8


def ripley_mixture(n: int = 200, seed: int = 0) -> tuple[Array, Array]:
    """Ripley-type two-class mixture of four Gaussians (Figures 7.4 and 7.12)."""
    n = _count("n", n, 4)
    rng = np.random.default_rng(seed)
    t = np.where(np.arange(n) < n // 2, 1.0, -1.0)
    component = rng.integers(0, 2, size=n)
    centres = np.where(
        (t == 1.0)[:, None], _RIPLEY_CENTRES[1.0][component], _RIPLEY_CENTRES[-1.0][component]
    )
    X = centres + RIPLEY_SPREAD * rng.normal(size=(n, 2))
    order = rng.permutation(n)
    return X[order], t[order]


def sinusoid(n: int = 10, seed: int = 0, noise: float = 0.2) -> tuple[Array, Array]:
    """t = sin(2 pi x) + N(0, noise^2) at n equally spaced x in [0, 1] (Figures 7.8, 7.9).

    Returns X of shape (n, 1) and t of shape (n,).
    """
    n = _count("n", n, 2)
    noise = float(check_param("noise", noise, "epsilon"))
    rng = np.random.default_rng(seed)
    x = np.linspace(0.0, 1.0, n)
    t = np.sin(2.0 * np.pi * x) + noise * rng.normal(size=n)
    return x[:, None], t


def text_like(n: int = 500, d: int = 5000, density: float = 0.01, words: int = 50,
              seed: int = 0) -> tuple[Any, NDArray[np.int64], Array]:
    """A bag-of-words-like CSR matrix with a planted linear rule: the sparse data of text
    classification, where kernel SVMs are used on thousands of features at under 1% density.

    X (n, d) has exponential "counts" at the given density; w is normal on ``words`` random
    columns and zero elsewhere. Returns X, the labels (X w above its median: 1, else 0) and the
    real target X w / std(X w).
    """
    import scipy.sparse as sp

    n, d, words = _count("n", n, 2), _count("d", d, 1), _count("words", words, 1)
    density = float(check_param("density", density, "nu"))
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, format="csr", random_state=seed,
                  data_rvs=lambda k: rng.exponential(1.0, size=k))
    w = np.zeros(d)
    w[rng.choice(d, min(words, d), replace=False)] = rng.normal(size=min(words, d))
    score = X @ w
    return compact_indices(X), np.where(score > np.median(score), 1, 0), score / score.std()


def load_csv(path: str | os.PathLike[str], delimiter: str = ",") -> tuple[Array, Array]:
    """Read a CSV file whose last column is the target.

    The first row is a header, and skipped, when none of its fields is a number,
    or when every field that is not a number is a name (led by a letter and not a
    missing-value mark such as ``NA``): ``x1,x2,label``, ``2019,2020,target``
    (years or wavelengths as column names) and pandas' ``to_csv`` headers, whose
    first field is empty where the index was written and whose unnamed columns
    are called 0, 1, 2. A first row that mixes numbers with fields that are not
    names (``1.5,``, ``0.5,1.O,1``, ``1,NA,1``) is refused, naming its fields, for
    it is a data row with a typo that would otherwise be lost without a word; so
    is one of two numbers or more whose last field, the target's name, is a
    number (``0.5,O.1,1``, the letter O for a zero). A
    UTF-8 byte order mark is read past; lines of whitespace alone and lines
    starting with ``#`` are ignored. Every other error names the file's line: a
    row of another width, a field that is not a number (a decimal, with an
    exponent or not, ``nan`` or ``inf``). A ``.gz`` or ``.bz2`` file is read
    decompressed.
    """
    p = Path(path)
    if not p.is_file():
        raise ValidationError(f"path must be an existing CSV file; got {str(path)!r}")
    try:
        with _open_text(p, "utf-8-sig") as handle:
            numbers: list[int] = []                  # the file's number of each line the csv reader is given
            reader = csv.reader(_uncommented(handle, numbers), delimiter=delimiter)
            rows = [(numbers[reader.line_num - 1], r) for r in reader
                    if not (len(r) <= 1 and not "".join(r).strip()) and not r[0].lstrip().startswith("#")]
    except UnicodeDecodeError as exc:
        raise ValidationError(f"path must be a text (UTF-8) CSV file; got {str(path)!r}, whose byte "
                              f"{exc.object[exc.start:exc.start + 1]!r} at offset {exc.start} is not text") from exc
    except (csv.Error, OSError, EOFError, zlib.error) as exc:  # a field over the csv limit, a NUL byte, bad gzip
        raise ValidationError(f"path must be a CSV file of numbers; got {str(path)!r}, which the csv reader "
                              f"refuses: {exc}") from exc
    _check_delimiter(str(path), rows, delimiter)
    if rows and not _numeric(rows[0][1]):
        _check_header(str(path), *rows[0])
        rows = rows[1:]
    if not rows:
        raise ValidationError(f"{str(path)!r} must hold at least one data row; got none")
    width = len(rows[0][1])
    if width < 2:
        raise ValidationError(f"{str(path)!r}, line {rows[0][0]}: a row must have at least 2 columns (the inputs, "
                              f"then the target); got {width}")
    data = _as_numbers(str(path), rows, width)
    return data[:, :-1], data[:, -1]


def _uncommented(lines: Any, numbers: list[int]) -> Any:
    """The lines not starting with ``#`` (after whitespace), each one's number appended to ``numbers``.
    They are dropped before the csv reader sees them: a quote in a comment ('# x,"y') opened a quoted
    field there that ran on through the data rows, and the file was refused as holding none."""
    for number, line in enumerate(lines, start=1):
        if not line.lstrip().startswith("#"):
            numbers.append(number)
            yield line


def _as_numbers(path: str, rows: list[tuple[int, list[str]]], width: int) -> Array:
    """The data rows as an (N, width) float64 array. numpy converts them at once; the rows are walked
    field by field, to name the line and column of the first bad one, only where that fails or where a
    field may hold an underscore (1_000, which numpy reads as Python's float() does and no CSV writer
    writes)."""
    try:
        data = np.array([row for _, row in rows], dtype=np.float64)
        if data.ndim == 2 and data.shape[1] == width and not any("_" in "".join(row) for _, row in rows):
            return data
    except ValueError:
        pass
    for line, row in rows:
        if len(row) != width:
            raise ValidationError(f"{path!r}, line {line}: every row must have the first data row's {width} "
                                  f"columns; got {len(row)}: {_quoted(row)}")
        for column, field in enumerate(row, start=1):
            if not _NUMBER.fullmatch(field):
                raise ValidationError(f"{path!r}, line {line}, column {column}: a data field must be a "
                                      f"number; got {field[:40]!r}")
    return np.array([row for _, row in rows], dtype=np.float64)


def _check_delimiter(path: str, rows: list[tuple[int, list[str]]], delimiter: str) -> None:
    """Refuse a file whose every row is one field holding a tab or a semicolon and no ``delimiter``: a file
    separated by another character. Its first row was taken as a header (no field of it a number), and the
    error was that the file held no data row ("0\t0\t1", one data row) or that line 2 had 1 column. Spaces
    too: ``np.savetxt``'s default (no row of one field is data, a row needing two columns)."""
    if not rows or any(len(row) != 1 for _, row in rows):
        return
    for mark, name in (("\t", "tabs"), (";", "semicolons"), (" ", "spaces")):
        if mark != delimiter and all(mark in row[0] for _, row in rows):
            line, row = rows[0]
            raise ValidationError(f"{path!r} must be a CSV file separated by {delimiter!r}; got rows separated by "
                                  f"{name} (line {line}: {row[0][:80]!r}): save it with {delimiter!r} between fields")


def _check_header(path: str, line: int, first: list[str]) -> None:
    """Refuse a first row that mixes numbers with fields that are not names (``load_csv``): it is a data
    row with a typo, not a header. A number equal to its column's index (pandas' name for an unnamed
    column, counted after an empty index field) is taken as a name."""
    offset = 1 if first and not first[0].strip() else 0      # pandas wrote its index: the first field is empty
    fields = first[offset:]
    numbers = [v for i, v in enumerate(fields) if _numeric([v]) and v.strip() != str(i)]
    other = [v for v in fields if not _numeric([v]) and not _is_name(v)]
    if numbers and other:
        raise ValidationError(f"{path!r}, line {line}: the first row must be a header (names) or data (only "
                              f"numbers); got {_quoted(first)}, whose {_quoted(numbers)} are numbers and "
                              f"{_quoted(other)} are neither numbers nor names")
    # a header names the target's column (the last): '0.5,O.1,1' (the letter O for a zero) was taken as a header,
    # 'O.1' a name, and the data row dropped without a word (kkt solved N = 3 of a file's 4 rows)
    last = len(fields) - 1
    if len(numbers) > 1 and last >= 0 and _numeric([fields[last]]) and fields[last].strip() != str(last):
        raise ValidationError(f"{path!r}, line {line}: the first row must be a header (names) or data (only "
                              f"numbers); got {_quoted(first)}, whose {_quoted(numbers)} are numbers and whose "
                              f"target (the last column) is the number {fields[last].strip()!r}: a data row with a "
                              f"typo, or a header that does not name its target")


#: the marks for a missing value that pandas' read_csv knows (na_values), which are not names
_MISSING = frozenset({"na", "n/a", "null", "none", "nan", "<na>", "#n/a", "#na", "#n/a n/a", "-nan", "1.#ind",
                      "1.#qnan", "-1.#ind", "-1.#qnan", "missing"})


def _is_name(field: str) -> bool:
    """A header field: led by a letter (or an underscore), and not a missing-value mark (``_MISSING``)."""
    v = field.strip()
    return bool(v) and (v[0].isalpha() or v[0] == "_") and v.lower() not in _MISSING


def _quoted(fields: list[str]) -> str:
    """Fields as a message quotes them: the first few, each cut at 20 characters."""
    shown = ", ".join(repr(f[:20]) for f in fields[:6])
    return f"[{shown}{', ...' if len(fields) > 6 else ''}]"


#: a CSV number: a decimal, with an exponent or not, or nan / inf / infinity (Python's float() also
#: reads 1_000, which a CSV writer does not write)
_NUMBER = re.compile(r"\s*[+-]?(\d+\.?\d*(e[+-]?\d+)?|\.\d+(e[+-]?\d+)?|inf|infinity|nan)\s*", re.IGNORECASE)


def _numeric(row: list[str]) -> bool:
    return all(_NUMBER.fullmatch(v) for v in row)


def _open_text(path: Path, encoding: str) -> Any:
    """``path`` opened for reading as text, decompressed where its name ends in .gz or .bz2 (as
    scikit-learn's LIBSVM reader does)."""
    opener = _decompressing(path)
    if opener is None:
        return path.open(newline="", encoding=encoding)
    return opener(path, "rt", newline="", encoding=encoding)


def _decompressing(path: Path) -> Any:
    """``gzip.open`` or ``bz2.open`` for a name ending in .gz or .bz2 (``COMPRESSED``), else None."""
    import bz2
    import gzip

    return {".gz": gzip.open, ".bz2": bz2.open}.get(path.suffix.lower())


def load_libsvm(path: str | os.PathLike[str], dense: bool = False) -> tuple[Any, Array]:
    """Read a LIBSVM/svmlight file with scikit-learn's reader (a UTF-8 byte order mark is read past).

    Parameters
    ----------
    path : str or path
    dense : bool
        False (the default): X is the file's sparse matrix, ``scipy.sparse.csr_matrix`` of
        float64, shape (N, D), as stored (every machine and estimator takes it as it is);
        True: X is densified to an ndarray (N, D), for callers that need dense values.

    Returns
    -------
    X : csr_matrix or ndarray, shape (N, D)
    t : ndarray, shape (N,)
    """
    from sklearn.datasets import load_svmlight_file

    p = Path(path)
    if not p.is_file():
        raise ValidationError(f"path must be an existing LIBSVM-format file; got {str(path)!r}")
    try:
        with (_decompressing(p) or open)(p, "rb") as handle:
            if handle.read(3) != b"\xef\xbb\xbf":    # a UTF-8 byte order mark is read past, as load_csv does
                handle.seek(0)
            X, t = load_svmlight_file(handle)
    except (ValueError, OverflowError, EOFError, zlib.error) as exc:  # OverflowError: a feature index beyond
        # the C reader's int; EOFError, zlib.error: a .gz or .bz2 cut short or damaged past the format check's head
        raise ValidationError(f"{str(path)!r} is not a valid LIBSVM-format file: {exc}{_bad_libsvm_line(p)}") \
            from exc
    if X.shape[0] == 0:
        raise ValidationError(f"{str(path)!r} must hold at least one data row; got none")
    X = compact_indices(X.tocsr().astype(np.float64, copy=False))
    return (np.asarray(X.toarray(), dtype=np.float64) if dense else X), np.asarray(t, dtype=np.float64)


#: the largest feature index scikit-learn's LIBSVM reader holds (a C int)
_MAX_INDEX = 2**31 - 1


def _bad_libsvm_line(path: Path) -> str:
    """' (line n: what it must be; got its text)' for the first line of a LIBSVM-format file that
    scikit-learn's reader refuses, read again as that reader reads it (a comment from '#' on, blank lines
    skipped, an optional qid:value first); '' where no line is found (a file damaged past reading). The
    reader's own errors name no line ("Feature indices ... should be sorted and unique")."""
    try:
        with (_decompressing(path) or open)(path, "rb") as handle:
            for number, raw in enumerate(handle, start=1):
                line = raw[3:] if number == 1 and raw.startswith(b"\xef\xbb\xbf") else raw
                why = _libsvm_line_error(line.split(b"#")[0].split())
                if why:
                    text = raw.rstrip(b"\r\n").decode("utf-8", "backslashreplace")
                    return f" (line {number}: {why}; got {text[:80]!r})"
    except (OSError, EOFError, zlib.error):
        pass
    return ""


def _libsvm_line_error(words: list[bytes]) -> str:
    """What a LIBSVM-format line split into ``words`` breaks, in words; '' where it is well formed."""
    if not words:
        return ""
    try:
        float(words[0])
    except ValueError:
        return "a line must start with its label, a number"
    features = words[2:] if len(words) > 1 and words[1].startswith(b"qid:") else words[1:]
    previous = -1
    for word in features:
        index, colon, value = word.partition(b":")
        shown = repr(word.decode("utf-8", "backslashreplace")[:40])
        if not colon:       # a lone number: the file spaced as '1 : 0.5', or a value without its index
            return f"a feature must be index:value, not {shown}"
        try:
            i = int(index)
            float(value)
        except ValueError:
            return f"a feature must be index:value, an integer index and a number, not {shown}"
        if i < 0 or i > _MAX_INDEX:
            return f"a feature index must be in [0, {_MAX_INDEX}], not {i}"
        if i <= previous:
            return f"feature indices must increase along a line, and {i} follows {previous}"
        previous = i
    return ""


def infer_format(name: str, text: str | None = None) -> str:
    """The format of a data file, ``"csv"`` or ``"libsvm"``, from its name and, where the name does not
    tell, its text (module docstring).

    Parameters
    ----------
    name : str
        The file's name or path; only its extension is read.
    text : str, optional
        The file's content, or its beginning (the first data line is enough).

    Raises
    ------
    ValidationError
        When the extension does not tell and no text is given.
    """
    path = Path(str(name))
    if path.suffix.lower() in COMPRESSED:            # data.csv.gz is CSV, compressed
        path = path.with_suffix("")
    suffix = path.suffix.lower()
    for fmt, suffixes in FORMATS.items():
        if suffix in suffixes:
            return fmt
    if text is None:
        raise ValidationError(f"name must end in one of {', '.join(s for v in FORMATS.values() for s in v)}, "
                              f"or the file's text must be given to tell its format; got {str(name)!r}")
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#") and (len(line.split()) > 1 or "," in line):
            return "libsvm" if re.search(r"(^|\s)\d+:\S", line) else "csv"
    return "csv"            # no line but labels alone (LIBSVM rows without features) or a single column


def load(path: str | os.PathLike[str], format: str | None = None, *, name: str = "path") -> tuple[Any, Array]:
    """Read a CSV or LIBSVM-format file, its format told by ``infer_format`` unless ``format`` is given.

    Returns ``(X, t)`` as ``load_csv`` (dense) or ``load_libsvm`` (CSR) do. ``name`` is what the
    error for a missing file calls the path (the command line's ``--data``).

    Raises
    ------
    ValidationError
        For a missing file, a file that is not text (a NUL byte in its first 64 KiB, or a byte that is not
        UTF-8 there unless its name or ``format`` tells LIBSVM, a format read as bytes), or one the loader
        refuses.
    """
    if format is not None and format not in FORMATS:
        raise ValidationError(f"format must be one of {sorted(FORMATS)} or None; got {format!r}")
    p = Path(path)
    if not p.is_file():
        raise ValidationError(f"{name} must be an existing data file (CSV or LIBSVM format); got {str(path)!r}")
    fmt = format or _format_of_name(p.name)
    # a LIBSVM file is read as bytes (scikit-learn's reader): a comment of another encoding ('# caf\xe9') is
    # read past there, so only a NUL byte refuses it here; a byte that is no number is named by its line
    text = _text_head(p, name, utf8=fmt != "libsvm")
    fmt = fmt or infer_format(p.name, text)
    return load_csv(p) if fmt == "csv" else load_libsvm(p)


def _format_of_name(name: str) -> str | None:
    """The format ``infer_format`` tells from a name alone, or None where the name does not tell."""
    try:
        return infer_format(name)
    except ValidationError:
        return None


def _text_head(path: Path, name: str = "path", utf8: bool = True) -> str:
    """The first ``HEAD_BYTES`` of a file (decompressed: ``COMPRESSED``) as text; ValidationError, calling
    the file ``name``, for a NUL byte or, where ``utf8``, one that is not UTF-8 (else it is replaced), or a
    compressed file that does not open."""
    opener = _decompressing(path) or open
    try:
        handle = open(path, "rb")
    except OSError as exc:                           # a file this user may not read (chmod 000)
        raise ValidationError(f"{name} must be a readable data file; got {str(path)!r} ({exc.strerror or exc})") \
            from exc
    handle.close()
    try:
        with opener(path, "rb") as handle:
            head = handle.read(HEAD_BYTES)
    except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError; a bad deflate stream is not
        raise ValidationError(f"{name} must be a data file, compressed as its name says ({path.suffix}); got "
                              f"{str(path)!r}, which does not decompress: {exc}") from exc
    bad = head.find(b"\0")
    try:
        if bad < 0:
            return head.decode("utf-8", "strict" if utf8 else "replace")
    except UnicodeDecodeError as exc:
        if len(head) == HEAD_BYTES and exc.start >= len(head) - 3:   # a character cut at the end of the head
            return head[:exc.start].decode("utf-8")
        bad = exc.start
    raise ValidationError(f"{name} must be a text (UTF-8) data file; got {str(path)!r}, whose byte "
                          f"{head[bad:bad + 1]!r} at offset {bad} is not text")
