"""Turn columns into events on arrays, rejecting the rows that cannot be events.

Every reader hands its rows here, so that the rules on types, times and numeric
attributes are written once and hold for CSV, JSON Lines, Parquet and Python
records alike (docs/semantics.md, "Events"). A column comes in one of three forms: CSV
text (each cell as :func:`~trendagg.io.values.parse_cell` reads it, on its bytes,
see :mod:`trendagg.io.text`; the event type is the stripped cell), a typed Arrow
column (Parquet, as :func:`arrow_values` reads it), or values of the value model
(JSON Lines, Python records). Text columns and event types are dictionary encoded;
ISO-8601 times of plain shapes are parsed by pyarrow, the others by
:func:`~trendagg.io.values.time_value`. A cell that no array holds (an integer too
long for int64, ``1e999``, a boolean time, a decimal...) is read as a value, by the
same rules.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import date
from fractions import Fraction
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from trendagg.errors import InputError
from trendagg.io import text
from trendagg.io.batch import (
    TICKS,
    Column,
    EventBatch,
    ReadResult,
    RejectedRow,
    Stamps,
    Time,
    column_of,
    rescaled,
    tick_seconds,
)
from trendagg.io.options import ReadOptions
from trendagg.io.text import EMPTY, FAILED, FLOAT, INT, ODD, TEXT, Cells
from trendagg.io.values import json_text, normalize_value, shown, time_value, type_text
from trendagg.limits import TIME_LIMIT, time_out_of_range

if TYPE_CHECKING:
    import pyarrow as pa

_PER_SECOND = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}  # Arrow time units
_NANOS = 10**9
# A time cell with a fraction of a second in decimal digits (ISO-8601 text, an Arrow
# timestamp): ``Cells.ints`` holds its whole seconds (the floor) and ``Cells.floats``
# its nanoseconds past them (a whole number below 10**9, exact), under a code of its
# own beside text's
FINE = 250
# ISO-8601 shapes on which pyarrow's parser and datetime.fromisoformat agree (checked
# value by value in the tests), the year 0 aside: pyarrow parses these.
_PLAIN_ISO = (
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}"
    r"([T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,6})?)?(Z|[+-][0-9]{2}:?[0-9]{2})?)?$"
)
_NANO_ISO = (  # the same with seven to nine decimals, parsed to the nanosecond
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}"
    r"[T ][0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{7,9}(Z|[+-][0-9]{2}:?[0-9]{2})?$"
)
_ZONED_ISO = r"[T ][0-9:.]+(Z|[+-][0-9]{2}:?[0-9]{2})$"
Records = Callable[[list[int]], list[dict[str, object]]]  # positions -> raw records


def assemble_table(
    table: pa.Table,
    options: ReadOptions,
    *,
    source: str,
    csv: bool,
    first_row: int = 1,
    rows: Sequence[int] | None = None,
    records: Records | None = None,
    rejected: Sequence[RejectedRow] = (),
) -> ReadResult:
    """Events and rejected rows of the rows ``first_row``, ``first_row + 1``, ... of
    ``source`` (or of the given ``rows``): with ``csv`` every column is CSV text (a null
    is an empty cell), else the columns are typed. ``records`` and ``rejected`` are those
    of :func:`assemble_columns` (by default the rejected records are the table's rows).
    InputError when a column appears twice or a needed column is missing."""
    import pyarrow as pa

    names = table.column_names
    if len(set(names)) != len(names):
        twice = sorted({shown(name) for name in names if names.count(name) > 1})
        raise InputError(f"columns {twice} appear twice in {source}; rename them")
    if rows is None:
        numbers = np.arange(first_row, first_row + table.num_rows, dtype=np.int64)
    else:
        numbers = np.asarray(rows, dtype=np.int64)

    def table_records(bad: list[int]) -> list[dict[str, object]]:
        taken = table.take(pa.array(bad, pa.int64()))
        try:
            return cast(list[dict[str, object]], taken.to_pylist())
        except (OverflowError, ValueError):  # a timestamp beyond Python's dates: by the rules
            cells = {name: arrow_values(taken.column(name)) for name in taken.column_names}
            return [{name: cells[name][i] for name in cells} for i in range(taken.num_rows)]

    form = "text" if csv else "typed"
    columns = {name: (form, table.column(name)) for name in names}
    return _assemble(
        columns, table.num_rows, options, source, numbers, records or table_records, rejected
    )


def assemble_columns(
    columns: Mapping[str, list[object]],
    rows: Sequence[int],
    records: Records,
    options: ReadOptions,
    *,
    source: str,
    rejected: Iterable[RejectedRow] = (),
) -> ReadResult:
    """Events of columns of values of the value model (name -> one value per row; the
    type column may hold any value, made text), for the 1-based ``rows``. ``records``
    gives the raw records of rejected rows by position; ``rejected`` are rows already
    rejected while parsing, merged in by row number."""
    forms = {name: ("values", values) for name, values in columns.items()}
    numbers = np.asarray(rows, dtype=np.int64)
    return _assemble(forms, len(numbers), options, source, numbers, records, list(rejected))


def _assemble(
    columns: dict[str, tuple[str, Any]],
    n: int,
    options: ReadOptions,
    source: str,
    rows: np.ndarray,
    records: Records,
    rejected: Sequence[RejectedRow] = (),
) -> ReadResult:
    options.check()
    if columns or n:
        options.check_columns(columns, source)
    none: tuple[str, Any] = ("values", [])  # (no rows, no columns)
    reasons: dict[int, str] = {}
    type_form = columns.get(options.type_col, none)
    if options.event_type is None:
        codes, type_names, has_type = _type_codes(*type_form)
        for i in np.flatnonzero(~has_type).tolist():
            reasons[i] = f"no event type in column '{shown(options.type_col)}'"
    else:
        codes, type_names, has_type = np.zeros(n, np.int32), [options.event_type], np.ones(n, bool)
    bad = ~has_type
    time_form, time_column = columns.get(options.time_col, none)
    times, time_ints, per_second, exact, stamped = _times(
        time_form, time_column, bad, reasons, options.time_col
    )
    kept, needed = options.kept(), options.needed()
    attributes = {
        name: _attribute(*form)
        for name, form in columns.items()
        if name not in needed and (kept is None or name in kept)
    }
    if options.numeric:
        _check_numeric(attributes, codes, type_names, options, bad, reasons)
    found = sorted(reasons)
    given = [
        RejectedRow(source, int(rows[i]), reasons[i], record)
        for i, record in zip(found, records(found) if found else [], strict=True)
    ]
    if rejected:
        given = sorted([*rejected, *given], key=lambda row: row.row)
    keep = np.flatnonzero(~bad) if found else None
    if keep is not None:
        codes, rows, times = codes[keep], rows[keep], times[keep]
        time_ints = None if time_ints is None else time_ints[keep]
        exact = None if exact is None else [exact[i] for i in keep.tolist()]
    codes, type_names = _compact(codes, None, type_names)
    if type_form[0] == "values":  # types named in the order the kept events have them
        order = np.argsort(np.unique(codes, return_index=True)[1])
        remap = np.empty(len(order), np.int32)
        remap[order] = np.arange(len(order), dtype=np.int32)
        codes, type_names = remap[codes], [type_names[k] for k in order.tolist()]
    if time_ints is not None and time_ints.all():
        times, time_ints = times.astype(np.int64), None  # the float times were all rejected
    if exact is not None and not any(type(t) is Fraction for t in exact):
        exact = None  # (the timestamps with fractions were all rejected)
    columns_kept = {name: _finish(column, keep) for name, column in attributes.items()}
    time_ints = time_ints if np.any(time_ints) else None
    batch = EventBatch(
        codes, type_names, times, columns_kept, rows, source, time_ints, exact, per_second
    )
    dated = stamped if keep is None else stamped[keep]
    stamps = Stamps(bool(dated.all()), _zone(time_form, time_column)) if len(batch) else None
    return ReadResult(batch, given, stamps)


def _finish(column: Column | list[object], keep: np.ndarray | None) -> Column:
    if isinstance(column, list):  # values: their kinds are those of the kept rows
        return column_of(column if keep is None else [column[i] for i in keep.tolist()])
    if keep is not None:
        column = column.take(keep)
    if column.kind == "text":  # the words of the kept rows only
        assert column.dictionary is not None
        codes, words = _compact(column.values, column.valid, column.dictionary)
        return Column("text", codes, column.valid, words)
    return column


def _compact(
    codes: np.ndarray, valid: np.ndarray | None, words: list[str]
) -> tuple[np.ndarray, list[str]]:
    """Codes and words of the words in use (``valid`` None: every code is; codes of
    missing cells become 0)."""
    if not words:
        return np.zeros(len(codes), np.int32), []
    used = np.bincount(codes if valid is None else codes[valid], minlength=len(words)) > 0
    if used.all():
        if valid is not None and not valid.all():
            codes = np.where(valid, codes, 0).astype(np.int32)
        return codes, words
    remap = (np.cumsum(used) - 1).astype(np.int32)
    codes = remap[codes] if valid is None else np.where(valid, remap[codes], 0)
    return codes.astype(np.int32, copy=False), [w for w, u in zip(words, used, strict=True) if u]


def _check_numeric(
    attributes: Mapping[str, Column | list[object]],
    codes: np.ndarray,
    type_names: list[str],
    options: ReadOptions,
    bad: np.ndarray,
    reasons: dict[int, str],
) -> None:
    """Reject rows whose numerically-read attributes hold text. Missing values are fine:
    the engine does not bind such an event (docs/semantics.md, "Predicates")."""
    readers: dict[str, set[str]] = {}
    for event_type, names in (options.numeric or {}).items():
        for name in names:
            readers.setdefault(name, set()).add(str(event_type))
    for name, event_types in readers.items():
        column = attributes.get(name)
        if column is None or (isinstance(column, Column) and column.kind in ("int", "float")):
            continue
        of_type = np.isin(codes, [k for k, word in enumerate(type_names) if word in event_types])
        if isinstance(column, Column) and column.dictionary is not None:  # text
            rows = np.flatnonzero(column.valid & of_type & ~bad)
            for i, code in zip(rows.tolist(), column.values[rows].tolist(), strict=True):
                reasons[i] = _nan(name, column.dictionary[code])
            bad[rows] = True
            continue
        values = column if isinstance(column, list) else column.python_values()
        for i, value in enumerate(values):
            if value is not None and type(value) not in (int, float) and of_type[i] and not bad[i]:
                reasons[i] = _nan(name, value)
                bad[i] = True


def _nan(name: str, value: object) -> str:
    return f"attribute '{shown(name)}' is '{shown(value)}', not a number (the queries read it numerically)"


def _type_codes(form: str, column: Any) -> tuple[np.ndarray, list[str], np.ndarray]:
    """Codes, words and presence of the event types of a column. CSV: the cell stripped,
    blank is missing; Arrow strings and integers: a non-blank string as it is, an integer
    as its digits; values: a non-blank string as it is, any other value as its text."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if form == "values":
        types = column  # (the common case: every type a non-blank text)
        if set(map(type, column)) != {str} or not all(map(str.strip, column)):
            types = [v if isinstance(v, str) and v.strip() else type_text(v) for v in column]
        words = [word for word in dict.fromkeys(types) if word is not None]
        ids = {word: code for code, word in enumerate(words)}
        codes = np.fromiter(map(ids.get, types, itertools.repeat(-1)), np.int32, len(types))
        codes[~(present := codes >= 0)] = 0
        return codes, words, present
    kind = column.type
    if pa.types.is_dictionary(kind):
        column, kind = column.cast(kind.value_type), kind.value_type
    if form == "typed":
        if pa.types.is_integer(kind):
            column, kind = column.cast(pa.string()), pa.string()
        if not _is_text(kind):  # floats, booleans, decimals...: as their values' text
            return _type_codes("values", arrow_values(column))
    trimmed = text.stripped(pc.fill_null(column, "") if column.null_count else column)
    codes, words = text.encode(trimmed if form == "text" else column)
    return codes, words, text.lengths(trimmed) > 0


# ----------------------------------------------------------------------------- times


def _times(
    form: str, column: Any, bad: np.ndarray, reasons: dict[int, str], time_col: str
) -> tuple[np.ndarray, np.ndarray | None, int, list[Time] | None, np.ndarray]:
    """Epoch seconds of a time column, exactly, and their unit (``per_second``, see
    :class:`~trendagg.io.batch.EventBatch`): int64 seconds when every kept one is an
    int; int64 ticks of a millisecond, microsecond or nanosecond (the coarsest that
    holds them) when the others have decimal fractions of a second (timestamps); else
    float64 and the mask of those that are ints in the value model (numbers with a
    fraction), and where timestamps with fractions stand beside these, every exact time
    (``exact_times``), and which were timestamps (:class:`~trendagg.io.batch.Stamps`).
    Rows without a time, or whose time is none, are marked in ``bad`` with their reason
    (rows already bad are left alone)."""
    cells, texts, stamped = _time_cells(form, column, bad)
    stamped |= cells.code == TEXT  # (not a number: ISO-8601, or rejected)
    parse = np.flatnonzero((cells.code == TEXT) & ~bad)
    if parse.size:
        _parse_texts(texts.take(parse), parse, cells)
    code, ints, floats = cells.code, cells.ints, cells.floats
    is_int, is_float, is_fine = code == INT, code == FLOAT, code == FINE
    far = (is_int & (np.abs(ints) >= TIME_LIMIT)) | (is_float & (np.abs(floats) >= TIME_LIMIT))
    for i in np.flatnonzero(~bad & (far | (code == EMPTY) | (code == FAILED))).tolist():
        if code[i] == EMPTY:
            reasons[i] = f"no time in column '{shown(time_col)}'"
        elif code[i] == FAILED:
            reasons[i] = cells.failures[i]
        else:
            reasons[i] = time_out_of_range(shown(int(ints[i]) if is_int[i] else float(floats[i])))
        bad[i] = True
    fine = is_fine & ~bad
    if not np.any(is_float & ~bad):
        if not fine.any():
            return ints, None, 1, None, stamped
        ticks = _ticks(ints, floats, is_fine, fine)
        if ticks is not None:
            return (*ticks, stamped)
    if not fine.any():
        return np.where(is_int, ints.astype(np.float64), floats), is_int, 1, None, stamped
    # beside numbers with fractions (or past 2**62 ticks): the nearest floats, and the
    # exact values beside them (EventBatch.exact_times)
    exact: list[Time] = np.where(is_int, ints.astype(np.float64), floats).tolist()
    for i in np.flatnonzero(is_int).tolist():
        exact[i] = int(ints[i])
    for i in np.flatnonzero(is_fine).tolist():
        exact[i] = Fraction(int(ints[i]) * _NANOS + int(floats[i]), _NANOS)
    return np.array([float(t) for t in exact]), is_int, 1, exact, stamped


def _ticks(
    ints: np.ndarray, floats: np.ndarray, is_fine: np.ndarray, fine: np.ndarray
) -> tuple[np.ndarray, None, int, None] | None:
    """Whole seconds and the nanoseconds of the FINE cells as ticks of the coarsest
    unit that holds every kept one (``fine``) exactly, or None where they would pass
    2**62."""
    nanos = np.where(is_fine, floats, 0).astype(np.int64)
    per_second = next(p for p in TICKS if not np.any(nanos[fine] % (_NANOS // p)))
    ticks = rescaled(ints, 1, per_second)
    if ticks is None:
        return None
    return ticks + nanos // (_NANOS // per_second), None, per_second, None


def _time_cells(form: str, column: Any, bad: np.ndarray) -> tuple[Cells, Any, np.ndarray]:
    """The classified cells of a time column, its texts (for the TEXT cells), and which
    cells are timestamps by their type (``datetime``, Arrow timestamps and dates)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(column)
    if form == "values":
        cells = text.cells_of(column)
        stamped = np.zeros(n, np.bool_)
        for i in np.flatnonzero(cells.code == ODD).tolist():
            _decide(cells, i, column[i])
            stamped[i] = isinstance(column[i], date)  # (a datetime is a date)
        texts = [v if isinstance(v, str) else None for v in column] if TEXT in cells.code else []
        return cells, pa.array(texts, pa.string()), stamped
    kind = column.type
    if pa.types.is_dictionary(kind):
        column, kind = column.cast(kind.value_type), kind.value_type
    if form == "text" or _is_text(kind):  # (time_value's rules on text are the CSV rules)
        texts = pc.fill_null(column, "") if column.null_count else column
        cells = text.classify(texts)
        for i in np.flatnonzero((cells.code == ODD) & ~bad).tolist():
            _decide(cells, i, texts[i].as_py())  # integers too long for int64, 1e999
        words = text.stripped(texts) if np.any(cells.code == TEXT) else None
        return cells, words, np.zeros(n, np.bool_)
    if (scaled := _time_counts(column)) is not None:
        cells = Cells(np.zeros(n, np.uint8), np.zeros(n, np.int64), np.zeros(n))
        _count_cells(cells, np.arange(n), *scaled)
    else:
        typed = _typed_column(column)
        if typed.kind == "int":
            cells = Cells(np.full(n, INT, np.uint8), typed.values, np.zeros(n))
        elif typed.kind == "float":
            cells = Cells(np.full(n, FLOAT, np.uint8), np.zeros(n, np.int64), typed.values)
        else:  # non-finite floats, uint64 beyond int64, booleans, decimals, nested values...
            return _time_cells("values", typed.python_values(), bad)
    if column.null_count:
        cells.code[~column.is_valid().to_numpy(zero_copy_only=False)] = EMPTY
    dated = pa.types.is_timestamp(kind) or pa.types.is_date(kind)
    return cells, None, np.full(n, dated, np.bool_)


def _zone(form: str, column: Any) -> str | None:
    """The time zone of a typed timestamp time column (see :class:`Stamps`)."""
    if form != "typed":
        return None
    kind = column.type
    if hasattr(kind, "value_type"):  # (a dictionary)
        kind = kind.value_type
    return getattr(kind, "tz", None) or None


def _decide(cells: Cells, i: int, value: object) -> None:
    """A time cell by :func:`time_value`: its number, or FAILED with the reason."""
    try:
        seconds = time_value(value)
    except ValueError as error:
        cells.code[i] = FAILED
        cells.failures[i] = str(error)
        return
    if type(seconds) is int:
        cells.code[i], cells.ints[i] = INT, seconds
        return
    if type(seconds) is Fraction:
        whole = seconds.numerator // seconds.denominator
        nanos = (seconds - whole) * _NANOS
        if nanos.denominator == 1 and abs(whole) < 2**63:
            cells.code[i], cells.ints[i], cells.floats[i] = FINE, whole, int(nanos)
            return
    cells.code[i], cells.floats[i] = FLOAT, float(seconds)  # (more than nine decimals too)


def _scaled_ints(column: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Timestamps, durations and dates in seconds (None for other types)."""
    counts = _time_counts(column)
    return None if counts is None else _seconds(*counts)


def _time_counts(column: Any) -> tuple[np.ndarray, int] | None:
    """Timestamps, durations and dates as counts of ``1/per_second`` seconds and that
    ``per_second`` (None for other types)."""
    import pyarrow as pa

    kind = column.type
    if pa.types.is_timestamp(kind) or pa.types.is_duration(kind):
        return text.filled(column.cast(pa.int64()), 0), _PER_SECOND[kind.unit]
    if pa.types.is_date32(kind):
        return text.filled(column.cast(pa.int32()), 0).astype(np.int64) * 86400, 1
    if pa.types.is_date64(kind):
        return text.filled(column.cast(pa.int64()), 0), 1000
    return None


def _count_cells(cells: Cells, at: np.ndarray, counts: np.ndarray, per_second: int) -> None:
    """Set the time cells at ``at`` to counts of ``1/per_second`` s: whole seconds as
    INT, the others as FINE."""
    seconds, part = np.divmod(counts, per_second)
    cells.code[at] = np.where(part == 0, INT, FINE)
    cells.ints[at] = seconds
    cells.floats[at] = part * (_NANOS // per_second)


def _seconds(raw: np.ndarray, per_second: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Counts of 1/``per_second`` s as seconds: the whole ones as ints, the others as
    the float quotient (the correctly rounded one, as Python's int division gives it),
    and which are whole."""
    floats, whole = tick_seconds(raw, per_second)
    return raw // per_second, floats, whole


def _parse_texts(texts: Any, index: np.ndarray, cells: Cells) -> None:
    """Convert the time texts of the cells at ``index``: ISO-8601 timestamps of a plain
    shape by pyarrow (to the microsecond, or with more decimals to the nanosecond), the
    rest by ``time_value``."""
    parsed = np.zeros(len(texts), dtype=np.bool_)
    for shape, unit in ((_PLAIN_ISO, "us"), (_NANO_ISO, "ns")):
        rest = np.flatnonzero(~parsed)
        if not rest.size:
            break
        counts, done = _iso_counts(texts.take(rest) if parsed.any() else texts, shape, unit)
        _count_cells(cells, index[rest[done]], counts[done], _PER_SECOND[unit])
        parsed[rest[done]] = True
    rest = np.flatnonzero(~parsed)
    for k, value in zip(rest.tolist(), texts.take(rest).to_pylist(), strict=True):
        _decide(cells, int(index[k]), value)


def _iso_counts(texts: Any, shape: str, unit: str) -> tuple[np.ndarray, np.ndarray]:
    """Counts of ``unit`` since the epoch of the ISO-8601 texts of a plain ``shape``,
    and which texts were converted (pyarrow casts each alone, so one it refuses leaves
    the others converted)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    counts = np.zeros(len(texts), dtype=np.int64)
    plain = text.bools(pc.match_substring_regex(texts, shape))
    plain &= ~text.bools(pc.starts_with(texts, "0000"))  # year 0: pyarrow takes it, Python not
    index = np.flatnonzero(plain)
    if not index.size:
        return counts, plain
    subset = texts.take(index)
    zoned = pc.match_substring_regex(subset, _ZONED_ISO)
    missing = pa.scalar(None, pa.string())
    with_zone = _cast_or_null(pc.if_else(zoned, subset, missing), pa.timestamp(unit, tz="UTC"))
    without = _cast_or_null(pc.if_else(zoned, missing, subset), pa.timestamp(unit))
    both = pc.coalesce(with_zone.cast(pa.int64()), without.cast(pa.int64()))
    counts[index] = text.filled(both, 0)
    plain[index] = text.bools(pc.is_valid(both))
    return counts, plain


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


# ----------------------------------------------------------------------------- attributes


def _attribute(form: str, column: Any) -> Column | list[object]:
    if form == "values":
        return cast(list[object], column)
    if form == "typed":
        return _typed_column(column)
    import pyarrow.compute as pc

    if column.null_count:
        column = pc.fill_null(column, "")
    quick = text.plain_numbers(column)
    if quick is not None:
        return Column(*quick)
    cells = text.classify(column, plain=False)
    numbers = (cells.code == INT) | (cells.code == FLOAT) | (cells.code == ODD)
    if not numbers.any():
        trimmed = text.stripped(column)
        codes, words = text.encode(trimmed)
        return Column("text", codes, text.lengths(trimmed) > 0, words)
    for kind, code, values in (("int", INT, cells.ints), ("float", FLOAT, cells.floats)):
        if np.all((cells.code == code) | (cells.code == EMPTY)):
            return Column(kind, values, cells.code == code)
    return column_of(text.text_values(column, cells))


def arrow_values(column: Any) -> list[object]:
    """An Arrow column in the value model, one Python value per cell, by its type.

    Integers and strings as they are; floats with non-finite values as text;
    booleans as ``'true'``/``'false'``; timestamps and dates as epoch seconds
    (naive means UTC); durations as seconds; decimals as ``int`` when integral
    else ``float``; nested and other types as :func:`normalize_value` says.
    """
    return _typed_column(column).python_values()


def _typed_column(column: Any) -> Column:
    """A typed Arrow column with the rules of :func:`arrow_values`: on arrays, or as
    Python values for what no array holds (uint64 beyond int64, non-finite floats,
    timestamps with and without fractions of a second, decimals, nested values)."""
    import pyarrow as pa

    kind = column.type
    if pa.types.is_dictionary(kind):
        column, kind = column.cast(kind.value_type), kind.value_type
    n = len(column)
    valid = column.is_valid().to_numpy(zero_copy_only=False) if column.null_count else None
    valid = np.ones(n, np.bool_) if valid is None else valid
    if pa.types.is_null(kind):
        return Column("int", np.zeros(n, np.int64), valid)
    if pa.types.is_integer(kind):
        try:
            return Column("int", text.filled(column.cast(pa.int64()), 0), valid)
        except pa.ArrowInvalid:
            pass  # uint64 beyond int64
    elif _is_text(kind):
        codes, words = text.encode(column)
        return Column("text", codes, valid, words)
    elif pa.types.is_floating(kind):
        floats = text.filled(column.cast(pa.float64()), 0.0)
        if np.isfinite(floats).all():
            return Column("float", floats, valid)
    elif pa.types.is_boolean(kind):
        codes = np.where(text.filled(column, False), 0, 1).astype(np.int32)
        return Column("text", codes, valid, ["true", "false"])
    elif (scaled := _scaled_ints(column)) is not None:
        ints, floats, whole = scaled
        if whole[valid].all():
            return Column("int", ints, valid)
        if not whole[valid].any():
            return Column("float", floats, valid)
        parts = zip(ints.tolist(), floats.tolist(), whole.tolist(), valid.tolist(), strict=True)
        return column_of([None if not ok else i if w else f for i, f, w, ok in parts])
    return column_of([normalize_value(value) for value in column.to_pylist()])


def _is_text(kind: Any) -> bool:
    import pyarrow as pa

    return bool(pa.types.is_string(kind) or pa.types.is_large_string(kind))


# ----------------------------------------------------------------------------- mappings


def from_mappings(
    numbered: Iterable[tuple[int, object]],
    options: ReadOptions,
    *,
    source: str,
    what: str,
    rejected: Iterable[RejectedRow] = (),
    parsed_json: bool = False,
    known: Collection[str] = (),
    texts: Sequence[str] | None = None,
) -> ReadResult:
    """Events from (row number, mapping) pairs: JSON Lines and Python records.

    Columns are the union of the keys in first-appearance order; a key absent
    from a record is a missing value. An item that is not a mapping is rejected
    ("line is an array, not an object"). ``parsed_json``: the mappings are dicts
    with text keys (fresh from ``json``). ``known``: the keys of other rows of the
    source (other chunks); a needed column among them is one here too. ``texts``: the
    JSON text of each item, as the input wrote it (JSON Lines), kept by the rows
    rejected (RejectedRow.text).
    """
    earlier = list(rejected)
    if texts is not None and not isinstance(numbered, list):
        numbered = list(numbered)
    records: list[dict[str, object]] = []
    rows: list[int] = []
    names: dict[str, None] = {}
    last_keys: object = None
    for k, (row, record) in enumerate(numbered):
        if type(record) is not dict and not isinstance(record, Mapping):
            reason = f"{what} is {_kind(record)}, not an object"
            if texts is None:
                text_ = json_text(record, compact=True, ensure_ascii=False)
            else:
                text_ = texts[k]
            earlier.append(RejectedRow(source, row, reason, {"_text": text_}))
            continue
        if not parsed_json and (
            type(record) is not dict or not all(type(key) is str for key in record)
        ):
            record = {str(key): value for key, value in record.items()}
        if (keys := record.keys()) != last_keys:
            names.update(dict.fromkeys(keys))
            last_keys = keys
        records.append(cast(dict[str, object], record))
        rows.append(row)
    columns: dict[str, list[object]] = {}
    for name in names:
        values = [record.get(name) for record in records]
        kinds = set(map(type, values))
        if not kinds <= {str, int, float, type(None)} or (
            float in kinds and not all(math.isfinite(v) for v in values if type(v) is float)  # type: ignore[arg-type]
        ):
            # a datetime time stays one: time_value keeps its fraction exactly (and the
            # results' window bounds its type), where an attribute's value is a float
            stamp = date if name == options.time_col else ()
            values = [v if isinstance(v, stamp) else normalize_value(v) for v in values]
        columns[name] = values
    for name in options.needed().intersection(known).difference(names) if rows else ():
        columns[name] = [None] * len(rows)
    read = assemble_columns(
        columns, rows, lambda bad: [records[i] for i in bad], options, source=source, rejected=earlier
    )  # fmt: skip
    if texts is not None and read.rejected:  # (the objects' rows: numbered is a list then)
        pairs = cast(Sequence[tuple[int, object]], numbered)
        at = {row: k for k, (row, item) in enumerate(pairs) if isinstance(item, Mapping)}
        read.rejected = [
            replace(r, text=texts[at[r.row]]) if r.row in at and r.text is None else r
            for r in read.rejected
        ]
    return read


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, int | float):
        return "a number"
    return "an array" if isinstance(value, list | tuple) else f"a {type(value).__name__}"


def from_records(
    records: Iterable[Mapping[str, object]],
    *,
    type_col: str = "type",
    time_col: str = "time",
    event_type: str | None = None,
    source: str = "<records>",
    numeric: Mapping[str, Iterable[str]] | None = None,
) -> ReadResult:
    """Events of Python mappings (rows numbered from 1), with the JSON Lines rules.

    Values are brought into the value model as JSON values are (booleans become
    ``'true'``/``'false'``, nested values their JSON text); times may be numbers,
    ISO-8601 strings, or ``datetime``/``date`` objects. The options are those of
    :func:`~trendagg.io.readers.read_events`; ``source`` names the records in
    messages and rejected rows. InputError when there are records but none has the
    type key (unless ``event_type`` is given) or the time key, or when
    ``event_type`` is empty.
    """
    options = ReadOptions(type_col, time_col, event_type, numeric)
    return from_mappings(enumerate(records, start=1), options, source=source, what="record")
