"""The rules of :mod:`trendagg.io.assemble`, applied to Arrow tables on arrays.

:func:`assemble_table` turns a table of CSV text (every column a string) or a
typed table (Parquet) into a :class:`~trendagg.io.columnar.ColumnarBatch`
and the rejected rows, and gives exactly what ``read_events`` gives for the
same rows: the cell rules of ``readers._text_column`` and
``readers.arrow_values``, then the type, time and numeric rules of
``assemble``, with the same reasons in the same order of precedence.

CSV text is classified on its bytes with numpy: a column of plain integers
(``-12``, ``007``) or plain decimals (``2.5``) is cast by pyarrow in one go;
in any other column, the cells that could be numbers (no ASCII byte outside
digits, signs, dot, exponent and whitespace) go through the regular
expressions of ``_text_column`` and the others are text. Text columns and
event types are dictionary encoded. ISO-8601 times of the plain shapes of
``values.iso_column`` are parsed by pyarrow, any other by ``time_value``.

What this module cannot decide raises :class:`Undecided` (the caller then
uses the Python readers): time columns holding integers too long for int64 or
non-finite number texts, integer times beyond 2**53 beside fractions, and
Parquet type or time columns of unusual Arrow types. Columns that mix kinds
(numbers and text, integers and decimals, non-finite floats, decimals, nested
values) are built from the Python values of ``_text_column`` or
``arrow_values`` (a ``mixed`` column): correct, not fast.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from trendagg.errors import InputError
from trendagg.io._scan import plain_ints
from trendagg.io.assemble import check_columns
from trendagg.io.batch import RejectedRow
from trendagg.io.columnar import Column, ColumnarBatch, ColumnarResult, column_of
from trendagg.io.readers import _INT64_SAFE_CHARS, _TIME_UNITS, _text_column, arrow_values
from trendagg.io.values import (
    _PLAIN_ISO,
    _ZONED_ISO,
    INT_PATTERN,
    NUMBER_PATTERN,
    normalize_value,
    shown,
    time_value,
)
from trendagg.limits import TIME_LIMIT, time_out_of_range

if TYPE_CHECKING:
    import pyarrow as pa

# What str.strip() removes: every character for which str.isspace() is true.
PY_WHITESPACE = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
    "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_EXACT_FLOAT_INT = 2**53
_MICROS = 1_000_000
# Cell classes (FAILED: a time already refused, with its reason).
EMPTY, INT, FLOAT, ODD, TEXT, FAILED = 0, 1, 2, 3, 4, 5
# ASCII bytes that no number (nor the whitespace around it) contains: a cell with one is text.
_NOT_NUMERIC = np.ones(256, dtype=np.bool_)
_NOT_NUMERIC[: ord(" ") + 1] = False  # control characters may be whitespace
_NOT_NUMERIC[128:] = False  # so may non-ASCII characters
for _char in "0123456789+-.eE":
    _NOT_NUMERIC[ord(_char)] = False
_DIGIT, _MINUS, _DOT = ord("0"), ord("-"), ord(".")


class Undecided(Exception):
    """The arrays cannot say what ``read_events`` says here: use the Python readers."""


def assemble_table(
    table: pa.Table,
    *,
    source: str,
    type_col: str,
    time_col: str,
    event_type: str | None,
    numeric: Mapping[str, Iterable[str]] | None,
    text: bool,
    first_row: int = 1,
    attributes: Collection[str] | None = None,
) -> ColumnarResult:
    """Events and rejected rows of a table, as ``assemble`` makes them.

    Parameters
    ----------
    table
        The rows ``first_row``, ``first_row + 1``, ... of ``source``.
    text
        True: every column is CSV text (``readers._read_csv``'s rules); False:
        typed columns (``readers._table_result``'s rules, as for Parquet).
    source, type_col, time_col, event_type, numeric
        As for :func:`~trendagg.io.assemble.assemble`.
    attributes
        The attribute columns to convert and keep (None: all); the attributes
        of ``numeric`` must be among them.

    Raises
    ------
    Undecided
        When the arrays cannot decide (see the module notes), and when the
        table lacks a needed column or repeats one (``read_events`` then says
        so in its words).
    """
    names = table.column_names
    if len(set(names)) != len(names):
        raise Undecided
    try:
        check_columns(
            names, source=source, type_col=type_col, time_col=time_col, event_type=event_type
        )
    except InputError:
        raise Undecided from None
    n = table.num_rows
    reasons: dict[int, str] = {}
    if event_type is None:
        codes, type_words, has_type = _type_codes(table.column(type_col), text)
        for i in np.flatnonzero(~has_type).tolist():
            reasons[i] = f"no event type in column '{type_col}'"
        not_attributes = {type_col, time_col}
    else:
        codes = np.zeros(n, dtype=np.int32)
        type_words = _words([event_type])
        has_type = np.ones(n, dtype=np.bool_)
        not_attributes = {time_col}
    bad = ~has_type
    times, time_ints = _times(table.column(time_col), text, bad, reasons, time_col)
    attributes: dict[str, Column | _Text] = {
        name: _attribute(column, text)
        for name, column in zip(names, table.columns, strict=True)
        if name not in not_attributes and (attributes is None or name in attributes)
    }
    if numeric:
        _check_numeric(attributes, codes, type_words, numeric, bad, reasons)
    bad_rows = sorted(reasons)
    rejected: list[RejectedRow] = []
    if bad_rows:
        import pyarrow as pa

        records = table.take(pa.array(bad_rows, pa.int64())).to_pylist()
        rejected = [
            RejectedRow(source, first_row + i, reasons[i], record)
            for i, record in zip(bad_rows, records, strict=True)
        ]
    keep = np.flatnonzero(~bad) if bad_rows else None
    rows = np.arange(first_row, first_row + n, dtype=np.int64)
    if keep is not None:
        codes, rows, times = codes[keep], rows[keep], times[keep]
        time_ints = None if time_ints is None else time_ints[keep]
    codes, type_names = _compact(codes, None, type_words)
    if times.dtype == np.float64 and time_ints is not None and time_ints.all():
        times, time_ints = times.astype(np.int64), None  # the float times were all rejected
    if time_ints is not None and not time_ints.any():
        time_ints = None
    batch = ColumnarBatch(
        types=codes,
        type_names=type_names,
        times=times,
        columns={name: _finish(column, keep) for name, column in attributes.items()},
        rows=rows,
        source=source,
        time_ints=time_ints,
    )
    return ColumnarResult(batch, rejected)


@dataclass
class _Text:
    """A text column before its dictionary is trimmed to the kept rows."""

    codes: np.ndarray
    valid: np.ndarray
    dictionary: pa.Array


def _finish(column: Column | _Text, keep: np.ndarray | None) -> Column:
    if isinstance(column, _Text):
        codes, valid = column.codes, column.valid
        if keep is not None:
            codes, valid = codes[keep], valid[keep]
        codes, words = _compact(codes, valid, column.dictionary)
        return Column("text", codes, valid, words)
    return column if keep is None else column.take(keep)


def _compact(
    codes: np.ndarray, valid: np.ndarray | None, dictionary: pa.Array
) -> tuple[np.ndarray, list[str]]:
    """Codes and words of the dictionary entries in use (``valid`` None: every code
    is; codes of missing cells become 0)."""
    import pyarrow as pa

    size = len(dictionary)
    if size == 0:
        return np.zeros(len(codes), np.int32), []
    used = np.bincount(codes if valid is None else codes[valid], minlength=size) > 0
    if used.all():
        if valid is not None and not valid.all():
            codes = np.where(valid, codes, 0).astype(np.int32)
        return codes, dictionary.to_pylist()
    remap = (np.cumsum(used) - 1).astype(np.int32)
    codes = remap[codes] if valid is None else np.where(valid, remap[codes], 0)
    return codes.astype(np.int32, copy=False), dictionary.filter(pa.array(used)).to_pylist()


def _words(words: list[str]) -> pa.Array:
    import pyarrow as pa

    return pa.array(words, pa.string())


def _check_numeric(
    attributes: Mapping[str, Column | _Text],
    codes: np.ndarray,
    type_words: pa.Array,
    numeric: Mapping[str, Iterable[str]],
    bad: np.ndarray,
    reasons: dict[int, str],
) -> None:
    """``assemble._check_numeric`` on arrays: a text value of an attribute read
    numerically rejects the rows of the listed types."""
    readers: dict[str, set[str]] = {}
    for event_type, names in numeric.items():
        for name in names:
            readers.setdefault(name, set()).add(str(event_type))
    words = type_words.to_pylist()
    for name, event_types in readers.items():
        column = attributes.get(name)
        if column is None or (isinstance(column, Column) and column.kind in ("int", "float")):
            continue
        wanted = [k for k, word in enumerate(words) if word in event_types]
        of_type = np.isin(codes, wanted)
        if isinstance(column, _Text):
            rows = np.flatnonzero(column.valid & of_type & ~bad)
            if rows.size:
                texts = column.dictionary.to_pylist()
                said: dict[int, str] = {}
                for i, code in zip(rows.tolist(), column.codes[rows].tolist(), strict=True):
                    if code not in said:
                        said[code] = _not_a_number(name, texts[code])
                    reasons[i] = said[code]
                bad[rows] = True
            continue
        for i, value in enumerate(column.python_values()):
            kind = type(value)
            if value is None or kind is int or kind is float or bad[i] or not of_type[i]:
                continue
            reasons[i] = _not_a_number(name, value)
            bad[i] = True


def _not_a_number(name: str, value: object) -> str:
    return f"attribute '{name}' is '{shown(value)}', not a number (the queries read it numerically)"


# ----------------------------------------------------------------------------- types


def _type_codes(column: Any, text: bool) -> tuple[np.ndarray, pa.Array, np.ndarray]:
    """Codes, words and presence of the event types of a column.

    CSV: the cell stripped, blank = missing; Parquet (``assemble._types``):
    a non-blank string as it is, an integer as its digits, null or blank =
    missing; other Arrow types are left to ``read_events``.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = column.type
    if pa.types.is_dictionary(kind):
        column, kind = column.cast(kind.value_type), kind.value_type
    if not text:
        if pa.types.is_integer(kind):
            column, kind = column.cast(pa.string()), pa.string()
        if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
            raise Undecided
    stripped = _stripped(pc.fill_null(column, "") if column.null_count else column)
    present = pc.binary_length(stripped).to_numpy(zero_copy_only=False) > 0
    codes, words = _encode(stripped if text else column)
    return codes, words, present


def _stripped(column: Any, *, arrow_first: bool = False) -> Any:
    """``str.strip()`` of every cell (after pyarrow's own trim with ``arrow_first``)."""
    import pyarrow.compute as pc

    if arrow_first:
        column = pc.utf8_trim_whitespace(column)
    if not _has_space(column):
        return column
    return pc.utf8_trim(column, PY_WHITESPACE)


def _encode(column: Any) -> tuple[np.ndarray, pa.Array]:
    """Dictionary codes (int32; 0 for nulls) and the dictionary of a string column."""
    import pyarrow as pa
    import pyarrow.compute as pc

    encoded = pc.dictionary_encode(column)
    chunks = encoded.chunks if isinstance(encoded, pa.ChunkedArray) else [encoded]
    chunks = [chunk for chunk in chunks if len(chunk)]
    if not chunks:
        return np.zeros(0, np.int32), _words([])
    first = chunks[0].dictionary
    if any(not _same_buffers(chunk.dictionary, first) for chunk in chunks[1:]):
        table = pa.Table.from_arrays([pa.chunked_array(chunks)], ["c"]).unify_dictionaries()
        chunks = table.column(0).chunks
        first = chunks[0].dictionary
    codes = np.concatenate(
        [pc.fill_null(chunk.indices, 0).to_numpy().astype(np.int32, copy=False) for chunk in chunks]
    )
    return codes, first.cast(pa.string())


def _same_buffers(one: pa.Array, other: pa.Array) -> bool:
    if one is other:
        return True
    return len(one) == len(other) and all(
        a is None and b is None or a is not None and b is not None and a.address == b.address
        for a, b in zip(one.buffers(), other.buffers(), strict=True)
    )


# ----------------------------------------------------------------------------- times


def _times(
    column: Any, text: bool, bad: np.ndarray, reasons: dict[int, str], time_col: str
) -> tuple[np.ndarray, np.ndarray | None]:
    """Epoch seconds of a time column, as ``assemble._parse_times`` gives them.

    Rows without a time, or whose time is not one, are marked in ``bad`` with
    their reason (rows already bad are left alone). Returns the times (int64
    when every kept one is an int, else float64) and, with float64 times, the
    mask of those that are ints in the value model.
    """
    cells = _time_cells(column, text)
    code = cells.code
    if np.any((code == ODD) & ~bad):
        raise Undecided  # integers too long for int64 (or non-finite number texts)
    ints, floats = cells.ints, cells.floats
    is_int = code == INT
    is_float = code == FLOAT
    missing = (code == EMPTY) & ~bad
    for i in np.flatnonzero(missing).tolist():
        reasons[i] = f"no time in column '{time_col}'"
    assert cells.failures is not None
    for i, reason in cells.failures.items():
        if not bad[i]:
            reasons[i] = reason
            bad[i] = True
    bad |= missing
    parse = np.flatnonzero((code == TEXT) & ~bad)
    if parse.size:
        assert cells.texts is not None
        _parse_texts(cells.texts, parse, ints, floats, is_int, is_float, bad, reasons)
    far = ~bad & (
        (is_int & (np.abs(ints) >= TIME_LIMIT)) | (is_float & (np.abs(floats) >= TIME_LIMIT))
    )
    for i in np.flatnonzero(far).tolist():
        reasons[i] = time_out_of_range(str(int(ints[i]) if is_int[i] else float(floats[i])))
    bad |= far
    kept = ~bad
    if not np.any(is_float & kept):
        return ints, None
    if np.any(is_int & kept & (np.abs(ints) > _EXACT_FLOAT_INT)):
        raise Undecided  # huge integers beside fractions: only Python's numbers hold both
    return np.where(is_int, ints.astype(np.float64), floats), is_int


@dataclass
class _Cells:
    """Classified cells: ``code`` per cell (EMPTY, INT, FLOAT, ODD, TEXT), the
    int64 values of INT cells, the float64 values of FLOAT cells, the text of
    TEXT cells (aligned with the rows) and reasons of cells already refused."""

    code: np.ndarray
    ints: np.ndarray
    floats: np.ndarray
    texts: Any = None
    failures: dict[int, str] | None = None

    def __post_init__(self) -> None:
        if self.failures is None:
            self.failures = {}


def _time_cells(column: Any, text: bool) -> _Cells:
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = column.type
    if pa.types.is_dictionary(kind):
        column, kind = column.cast(kind.value_type), kind.value_type
    if text or pa.types.is_string(kind) or pa.types.is_large_string(kind):
        # Parquet strings go through time_value, whose rules on a cell are the CSV rules.
        if column.null_count:
            column = pc.fill_null(column, "")
        cells = _classify(column)
        has_numbers = bool(
            np.any((cells.code == INT) | (cells.code == FLOAT) | (cells.code == ODD))
        )
        if np.any(cells.code == TEXT):  # (only those cells are parsed from their text)
            cells.texts = _stripped(column, arrow_first=has_numbers) if text else column
        return cells
    n = len(column)
    valid = column.is_valid().to_numpy(zero_copy_only=False) if column.null_count else None
    if pa.types.is_integer(kind):
        try:
            ints = _filled(column.cast(pa.int64()), 0)
        except pa.ArrowInvalid:
            raise Undecided from None  # uint64 beyond int64
        return _Cells(_present(valid, n, INT), ints, np.zeros(n))
    if pa.types.is_floating(kind):
        floats = _filled(column.cast(pa.float64()), 0.0)
        code = _present(valid, n, FLOAT)
        failures = {}
        for i in np.flatnonzero((code == FLOAT) & ~np.isfinite(floats)).tolist():
            code[i] = FAILED
            try:
                time_value(normalize_value(float(floats[i])))
            except ValueError as error:
                failures[i] = str(error)
        return _Cells(code, np.zeros(n, np.int64), floats, failures=failures)
    scaled = _scaled_ints(column)
    if scaled is None:
        raise Undecided  # booleans, decimals, nested values...
    ints, floats, is_int = scaled
    code = np.where(is_int, INT, FLOAT).astype(np.uint8)
    if valid is not None:
        code[~valid] = EMPTY
    return _Cells(code, ints, floats)


def _present(valid: np.ndarray | None, n: int, code: int) -> np.ndarray:
    out = np.full(n, code, dtype=np.uint8)
    if valid is not None:
        out[~valid] = EMPTY
    return out


def _scaled_ints(column: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Timestamps, durations and dates as ``readers.arrow_values`` gives them:
    whole seconds as ints, else the float quotient (None for other types)."""
    import pyarrow as pa

    kind = column.type
    if pa.types.is_timestamp(kind) or pa.types.is_duration(kind):
        per_second = _TIME_UNITS[kind.unit]
        raw = _filled(column.cast(pa.int64()), 0)
    elif pa.types.is_date32(kind):
        days = _filled(column.cast(pa.int32()), 0).astype(np.int64)
        return days * 86400, np.zeros(len(days)), np.ones(len(days), np.bool_)
    elif pa.types.is_date64(kind):
        per_second = 1000
        raw = _filled(column.cast(pa.int64()), 0)
    else:
        return None
    if per_second == 1:
        return raw, np.zeros(len(raw)), np.ones(len(raw), np.bool_)
    whole = raw % per_second == 0
    floats = raw / per_second  # correctly rounded while |raw| <= 2**53
    for i in np.flatnonzero(~whole & (np.abs(raw) > _EXACT_FLOAT_INT)).tolist():
        floats[i] = int(raw[i]) / per_second  # Python's int division rounds once
    return raw // per_second, floats, whole


def _filled(array: Any, fill: float) -> np.ndarray:
    import pyarrow.compute as pc

    if array.null_count:
        array = pc.fill_null(array, fill)
    values: np.ndarray = array.to_numpy()
    return values


def _parse_texts(
    texts: Any,
    index: np.ndarray,
    ints: np.ndarray,
    floats: np.ndarray,
    is_int: np.ndarray,
    is_float: np.ndarray,
    bad: np.ndarray,
    reasons: dict[int, str],
) -> None:
    """Convert the time texts at ``index``: ISO-8601 timestamps of a plain shape by
    pyarrow (as ``values.iso_column``), the rest by ``time_value``."""
    import pyarrow as pa

    subset = texts.take(pa.array(index, pa.int64()))
    micros, parsed = _iso_micros(subset)
    whole = parsed & (micros % _MICROS == 0)
    fraction = parsed & ~whole
    at = index[whole]
    ints[at] = micros[whole] // _MICROS
    is_int[at] = True
    at = index[fraction]
    seconds = micros[fraction] / _MICROS
    huge = np.flatnonzero(np.abs(micros[fraction]) > _EXACT_FLOAT_INT)
    for k in huge.tolist():
        seconds[k] = int(micros[fraction][k]) / _MICROS
    floats[at] = seconds
    is_float[at] = True
    rest = np.flatnonzero(~parsed)
    if not rest.size:
        return
    values = subset.take(pa.array(rest, pa.int64())).to_pylist()
    for k, value in zip(rest.tolist(), values, strict=True):
        i = int(index[k])
        try:
            seconds_value = time_value(value)
        except ValueError as error:
            reasons[i] = str(error)
            bad[i] = True
            continue
        if type(seconds_value) is int:
            if not -(2**63) <= seconds_value < 2**63:
                raise Undecided
            ints[i] = seconds_value
            is_int[i] = True
        else:
            floats[i] = seconds_value
            is_float[i] = True


def _iso_micros(texts: Any) -> tuple[np.ndarray, np.ndarray]:
    """Microseconds since the epoch of plain-shaped ISO-8601 texts, and which
    texts were converted (the shapes and refusals of ``values.iso_column``)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(texts)
    micros = np.zeros(n, dtype=np.int64)
    plain = _bools(pc.match_substring_regex(texts, _PLAIN_ISO))
    plain &= ~_bools(pc.starts_with(texts, "0000"))  # year 0: pyarrow takes it, Python not
    index = np.flatnonzero(plain)
    if not index.size:
        return micros, plain
    subset = texts.take(pa.array(index, pa.int64()))
    zoned = pc.match_substring_regex(subset, _ZONED_ISO)
    missing = pa.scalar(None, pa.string())
    with_zone = _cast_or_null(pc.if_else(zoned, subset, missing), pa.timestamp("us", tz="UTC"))
    without = _cast_or_null(pc.if_else(zoned, missing, subset), pa.timestamp("us"))
    both = pc.coalesce(with_zone.cast(pa.int64()), without.cast(pa.int64()))
    converted = _bools(pc.is_valid(both))
    micros[index] = _filled(both, 0)
    plain[index] = converted
    return micros, plain


def _cast_or_null(array: Any, target: Any) -> Any:
    """Cast each value on its own: null where pyarrow refuses it (halving the array
    around the refused values, so a few bad texts cost a few casts)."""
    import pyarrow as pa

    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    try:
        return array.cast(target)
    except pa.ArrowInvalid:
        if len(array) == 1:
            return pa.nulls(1, target)
    half = len(array) // 2
    return pa.concat_arrays(
        [_cast_or_null(array.slice(0, half), target), _cast_or_null(array.slice(half), target)]
    )


def _bools(array: Any) -> np.ndarray:
    import pyarrow.compute as pc

    values: np.ndarray = pc.fill_null(array, False).to_numpy(zero_copy_only=False)
    return values.astype(np.bool_, copy=False)


# ----------------------------------------------------------------------------- attributes


def _attribute(column: Any, text: bool) -> Column | _Text:
    return _text_attribute(column) if text else _typed_attribute(column)


def _text_attribute(column: Any) -> Column | _Text:
    """A column of CSV text with the cell rules of ``readers._text_column``."""
    quick = _plain_numbers(column)
    if quick is not None:
        return Column(*quick)
    try:
        cells = _classify(column, plain=False)
    except Undecided:
        return column_of(_text_column(column))
    code = cells.code
    numbers = (code == INT) | (code == FLOAT) | (code == ODD)
    if not numbers.any():
        stripped = _stripped(column)
        valid = _lengths(stripped) > 0
        codes, words = _encode(stripped)
        return _Text(codes, valid, words)
    if not np.any((code == TEXT) | (code == ODD)):
        if not np.any(code == FLOAT):
            return Column("int", cells.ints, code == INT)
        if not np.any(code == INT):
            return Column("float", cells.floats, code == FLOAT)
    return column_of(_text_column(column))


def _typed_attribute(column: Any) -> Column | _Text:
    """A Parquet column with the rules of ``readers.arrow_values``."""
    import pyarrow as pa

    kind = column.type
    if pa.types.is_dictionary(kind):
        column, kind = column.cast(kind.value_type), kind.value_type
    n = len(column)
    valid = (
        column.is_valid().to_numpy(zero_copy_only=False)
        if column.null_count
        else np.ones(n, np.bool_)
    )
    if pa.types.is_null(kind):
        return Column("int", np.zeros(n, np.int64), np.zeros(n, np.bool_))
    if pa.types.is_integer(kind):
        try:
            return Column("int", _filled(column.cast(pa.int64()), 0), valid)
        except pa.ArrowInvalid:
            pass  # uint64 beyond int64
    elif pa.types.is_string(kind) or pa.types.is_large_string(kind):
        codes, words = _encode(column)
        return _Text(codes, valid, words)
    elif pa.types.is_floating(kind):
        floats = _filled(column.cast(pa.float64()), 0.0)
        if np.isfinite(floats).all():
            return Column("float", floats, valid)
    elif pa.types.is_boolean(kind):
        codes = np.where(_filled(column, False), 0, 1).astype(np.int32)
        return _Text(codes, valid, _words(["true", "false"]))
    else:
        scaled = _scaled_ints(column)
        if scaled is not None:
            ints, floats, whole = scaled
            if whole[valid].all():
                return Column("int", ints, valid)
            if not whole[valid].any():
                return Column("float", floats, valid)
    return column_of(arrow_values(column))


# ----------------------------------------------------------------------------- cells of CSV text


def _classify(column: Any, *, plain: bool = True) -> _Cells:
    """Classify cells of CSV text exactly as ``readers._text_column`` does.

    Columns of plain integers or plain decimals are recognised on their bytes
    and cast in one go (unless ``plain`` is False: already tried); otherwise the cells that could be numbers (no ASCII
    byte outside digits, signs, dot, exponent and whitespace) go through the
    regular expressions of ``_text_column``, and the others are text.
    Raises :class:`Undecided` when pyarrow refuses a decimal it matched.
    """
    quick = _plain_numbers(column) if plain else None
    if quick is not None:
        kind, values, valid = quick
        n = len(values)
        if kind == "int":
            return _Cells(valid.astype(np.uint8) * np.uint8(INT), values, np.zeros(n))
        return _Cells(valid.astype(np.uint8) * np.uint8(FLOAT), np.zeros(n, np.int64), values)
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(column)
    code = np.full(n, TEXT, dtype=np.uint8)
    ints = np.zeros(n, dtype=np.int64)
    floats = np.zeros(n, dtype=np.float64)
    maybe = np.concatenate(
        [_maybe_numbers(data, offsets) for data, offsets in _pieces(column)]
        or [np.zeros(0, np.bool_)]
    )
    index = np.flatnonzero(maybe)
    if not index.size:
        return _Cells(code, ints, floats)
    subset = column.take(pa.array(index, pa.int64()))
    trimmed = pc.utf8_trim_whitespace(subset)
    is_number = _bools(pc.match_substring_regex(trimmed, NUMBER_PATTERN))
    is_int = _bools(pc.match_substring_regex(trimmed, INT_PATTERN))
    empty = _lengths(trimmed) == 0
    short = is_int & (pc.utf8_length(trimmed).to_numpy(zero_copy_only=False) <= _INT64_SAFE_CHARS)
    decimal = is_number & ~is_int
    missing = pa.scalar(None, pa.string())
    try:
        unsigned = pc.replace_substring_regex(trimmed, r"^\+", "")
        sub_ints = _filled(pc.if_else(pa.array(short), unsigned, missing).cast(pa.int64()), 0)
        sub_floats = _filled(
            pc.if_else(pa.array(decimal), trimmed, missing).cast(pa.float64()), 0.0
        )
    except pa.ArrowInvalid:
        raise Undecided from None
    finite = decimal & np.isfinite(sub_floats)
    sub_code = np.select(
        [empty, short, finite, is_number], [EMPTY, INT, FLOAT, ODD], default=TEXT
    ).astype(np.uint8)
    code[index] = sub_code
    ints[index] = sub_ints
    floats[index] = np.where(finite, sub_floats, 0.0)
    return _Cells(code, ints, floats)


def _plain_numbers(column: Any) -> tuple[str, np.ndarray, np.ndarray] | None:
    """('int' or 'float', values, valid) of a column of plain numbers, or None.

    Plain: ``-?[0-9]+`` of at most 18 characters, or ``-?[0-9]*.[0-9]*`` with a
    digit, every cell of one kind (or empty); such a cell is what
    ``_text_column`` makes it, without trimming or signs to remove. Decided
    on the bytes of each chunk, which is then cast by pyarrow.
    """
    import pyarrow as pa

    n = len(column)
    kind = "empty"
    values: np.ndarray | None = None
    valid = np.empty(n, dtype=np.bool_)
    at = 0
    for chunk in _chunks(column):
        size = len(chunk)
        if not size:
            continue
        data, offsets = _piece(chunk)
        lengths = np.diff(offsets)
        present = lengths > 0
        valid[at : at + size] = present
        if kind in ("empty", "int"):  # integers (the common case) in one compiled pass
            if values is None:
                values = np.zeros(n, dtype=np.int64)
            status = plain_ints(data, offsets, values[at : at + size], _INT64_SAFE_CHARS)
            if status:
                kind = "int" if status == 1 else kind
                at += size
                continue
            if kind == "int":
                return None  # integers before, something else here
            values = None  # (only empty cells before)
        found = _plain_kind(data, offsets, lengths)
        if found is None or (found != "empty" and kind not in ("empty", found)):
            return None
        if found != "empty":
            if values is None:
                values = np.zeros(n, dtype=np.int64 if found == "int" else np.float64)
            kind = found
            target = pa.int64() if found == "int" else pa.float64()
            _cast_present(chunk, target, present, values[at : at + size])
        at += size
    if values is None or kind == "empty":
        return "int", np.zeros(n, np.int64), valid
    if kind == "float" and not np.isfinite(values).all():
        return None  # a decimal too large for a float: text, as _text_column says
    return kind, values, valid


def _plain_kind(data: np.ndarray, offsets: np.ndarray, lengths: np.ndarray) -> str | None:
    """'empty', 'int' or 'float' for a chunk whose cells are all plain of that kind."""
    start, end = int(offsets[0]), int(offsets[-1])
    if start == end:
        return "empty"
    chars = data[start:end]
    odd = np.flatnonzero((chars - np.uint8(_DIGIT)) > 9)  # the bytes that are not digits
    if not odd.size:
        return "int" if lengths.max() <= _INT64_SAFE_CHARS else None
    signs = chars[odd]
    minus = signs == _MINUS
    dot = signs == _DOT
    if not np.all(minus | dot):
        return None
    cell = np.searchsorted(offsets, odd + start, side="right") - 1
    if minus.any() and not np.array_equal(offsets[cell[minus]] - start, odd[minus]):
        return None  # a minus inside a cell
    if not dot.any():
        if np.any(lengths[cell[minus]] < 2):
            return None  # a lone minus
        return "int" if lengths.max() <= _INT64_SAFE_CHARS else None
    dotted = cell[dot]
    if dotted.size != np.count_nonzero(lengths) or np.any(np.diff(dotted) <= 0):
        return None  # a cell without a dot (an integer), or with two
    signed = np.zeros(len(lengths), dtype=np.int64)
    signed[cell[minus]] = 1
    if np.any(lengths[dotted] - signed[dotted] < 2):
        return None  # no digit: '.' or '-.'
    return "float"


def _cast_present(chunk: Any, target: Any, present: np.ndarray, out: np.ndarray) -> None:
    """Cast a chunk of plain number texts into ``out`` (zeros), where ``present``."""
    import pyarrow as pa

    if present.all():
        out[:] = chunk.cast(target).to_numpy()
        return
    bits = np.concatenate([np.zeros(chunk.offset, np.bool_), present]) if chunk.offset else present
    validity = pa.py_buffer(np.packbits(bits, bitorder="little"))
    _, offsets, data = chunk.buffers()
    masked = pa.Array.from_buffers(
        chunk.type, len(chunk), [validity, offsets, data], offset=chunk.offset
    )
    cast = masked.cast(target)
    values = np.frombuffer(cast.buffers()[1], dtype=out.dtype, count=cast.offset + len(cast))
    np.copyto(out, values[cast.offset :], where=present)  # ``out`` is zeros: null slots stay 0


def _maybe_numbers(data: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """True for the cells without a byte that rules out a number."""
    start, end = int(offsets[0]), int(offsets[-1])
    seen = np.zeros(end - start + 1, dtype=np.int64)
    np.cumsum(_NOT_NUMERIC[data[start:end]], out=seen[1:])
    relative = offsets - start
    result: np.ndarray = seen[relative[1:]] == seen[relative[:-1]]
    return result


def _has_space(column: Any) -> bool:
    """Whether a cell may start or end with what ``str.strip()`` removes."""
    for data, offsets in _pieces(column):
        chars = data[int(offsets[0]) : int(offsets[-1])]
        if chars.size and (chars.min() <= ord(" ") or chars.max() >= 128):
            return True
    return False


def has_byte(column: Any, byte: int) -> bool:
    """Whether some cell of a string column holds ``byte`` (a line break, say)."""
    return any(
        bool(np.any(data[int(offsets[0]) : int(offsets[-1])] == byte))
        for data, offsets in _pieces(column)
    )


def _lengths(column: Any) -> np.ndarray:
    import pyarrow.compute as pc

    values: np.ndarray = pc.binary_length(column).to_numpy(zero_copy_only=False)
    return values


def _chunks(column: Any) -> list[Any]:
    import pyarrow as pa

    return list(column.chunks) if isinstance(column, pa.ChunkedArray) else [column]


def _pieces(column: Any) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(bytes, offsets into them) of each non-empty chunk of a string column."""
    for chunk in _chunks(column):
        if len(chunk):
            yield _piece(chunk)


def _piece(chunk: Any) -> tuple[np.ndarray, np.ndarray]:
    import pyarrow as pa

    n = len(chunk)
    _, offsets, data = chunk.buffers()
    width = np.int64 if pa.types.is_large_string(chunk.type) else np.int32
    cells = np.frombuffer(offsets, dtype=width, count=chunk.offset + n + 1)[chunk.offset :]
    chars = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
    return chars, cells


__all__ = ["PY_WHITESPACE", "Undecided", "assemble_table", "has_byte"]
