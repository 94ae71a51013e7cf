"""Columns of text cells, read on their bytes as :func:`~trendagg.io.values.parse_cell`
reads each cell: missing, exact int, finite float or stripped text.

A column of plain integers (``-12``, ``007``) or plain decimals (``2.5``) is
recognised on its bytes and cast by pyarrow in one go. In any other column, the
cells that could be numbers (no ASCII byte outside digits, signs, dot, exponent and
whitespace) go through the regular expressions of :mod:`~trendagg.io.values`, the
others are text; what pyarrow does not hold (integers too long for int64,
``1e999``) is left to ``parse_cell``, cell by cell.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from trendagg.io.values import INT_PATTERN, NUMBER_PATTERN, NUMBER_RE, parse_cell

# What str.strip() removes: every character for which str.isspace() is true.
PY_WHITESPACE = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
    "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
INT64_SAFE_CHARS = 18  # any integer literal of at most 18 characters fits int64
# Cell classes: ODD is a number pyarrow does not hold (a long integer, 1e999);
# FAILED a time already refused, with its reason.
EMPTY, INT, FLOAT, ODD, TEXT, FAILED = 0, 1, 2, 3, 4, 5
_INT64 = (-(2**63), 2**63)
# ASCII bytes that no number (nor the whitespace around it) contains: a cell with one is text.
_NOT_NUMERIC = np.ones(256, dtype=np.bool_)
_NOT_NUMERIC[: ord(" ") + 1] = False  # control characters may be whitespace
_NOT_NUMERIC[128:] = False  # so may non-ASCII characters
for _char in "0123456789+-.eE":
    _NOT_NUMERIC[ord(_char)] = False
_DIGIT, _MINUS, _DOT = ord("0"), ord("-"), ord(".")


@dataclass
class Cells:
    """Classified cells: ``code`` per cell, the int64 values of INT cells, the float64
    values of FLOAT cells, and the reasons of FAILED cells."""

    code: np.ndarray
    ints: np.ndarray
    floats: np.ndarray
    failures: dict[int, str] = field(default_factory=dict)


def classify(column: Any, *, plain: bool = True) -> Cells:
    """Classify a text column (no nulls) as :func:`parse_cell` reads its cells.

    ``plain``: first try :func:`plain_numbers` (False: already tried).
    """
    quick = plain_numbers(column) if plain else None
    if quick is not None:
        kind, values, valid = quick
        n = len(values)
        if kind == "int":
            return Cells(valid.astype(np.uint8) * np.uint8(INT), values, np.zeros(n))
        return Cells(valid.astype(np.uint8) * np.uint8(FLOAT), np.zeros(n, np.int64), values)
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(column)
    cells = Cells(np.full(n, TEXT, np.uint8), np.zeros(n, np.int64), np.zeros(n, np.float64))
    maybe = np.concatenate(
        [_maybe_numbers(data, offsets) for data, offsets in _pieces(column)]
        or [np.zeros(0, np.bool_)]
    )
    index = np.flatnonzero(maybe)
    if not index.size:
        return cells
    trimmed = pc.utf8_trim_whitespace(column.take(pa.array(index, pa.int64())))
    is_number = bools(pc.match_substring_regex(trimmed, NUMBER_PATTERN))
    is_int = bools(pc.match_substring_regex(trimmed, INT_PATTERN))
    size = pc.utf8_length(trimmed).to_numpy(zero_copy_only=False)
    short = is_int & (size <= INT64_SAFE_CHARS)
    decimal = is_number & ~is_int
    missing = pa.scalar(None, pa.string())
    try:
        unsigned = pc.replace_substring_regex(trimmed, r"^\+", "")
        ints = filled(pc.if_else(pa.array(short), unsigned, missing).cast(pa.int64()), 0)
        floats = filled(pc.if_else(pa.array(decimal), trimmed, missing).cast(pa.float64()), 0.0)
    except pa.ArrowInvalid:
        return cells_of([parse_cell(text) for text in column.to_pylist()])
    finite = decimal & np.isfinite(floats)
    cells.code[index] = np.select(
        [size == 0, short, finite, is_number], [EMPTY, INT, FLOAT, ODD], default=TEXT
    )
    cells.ints[index] = ints
    cells.floats[index] = np.where(finite, floats, 0.0)
    return cells


def cells_of(values: list[object]) -> Cells:
    """The cells of values of the value model, one by one: None and blank text are EMPTY,
    a text that reads as a number (``'1e999'``) or an int beyond int64 ODD, other text TEXT."""
    if set(map(type, values)) == {int}:  # (the common case: every value an integer)
        try:
            ints = np.array(values, np.int64)
            return Cells(np.full(len(ints), INT, np.uint8), ints, np.zeros(len(ints)))
        except OverflowError:
            pass
    code = [_cell_code(value) for value in values]
    is_int = [c == INT for c in code]
    ints = np.array([v if ok else 0 for v, ok in zip(values, is_int, strict=True)], np.int64)
    floats = [v if c == FLOAT else 0.0 for v, c in zip(values, code, strict=True)]
    return Cells(np.array(code, np.uint8), ints, np.array(floats, np.float64))


def _cell_code(value: object) -> int:
    if value is None or (isinstance(value, str) and not value.strip()):
        return EMPTY
    if type(value) is int and _INT64[0] <= value < _INT64[1]:
        return INT
    if type(value) is float:
        return FLOAT
    return ODD if not isinstance(value, str) or NUMBER_RE.fullmatch(value.strip()) else TEXT


def text_values(column: Any, cells: Cells | None = None) -> list[object]:
    """The values of a text column (a null is an empty cell), from its ``cells`` when
    they are classified already."""
    import pyarrow.compute as pc

    if column.null_count:
        column = pc.fill_null(column, "")
    cells = classify(column) if cells is None else cells
    code = cells.code.tolist()
    texts = stripped(column).to_pylist() if TEXT in code or ODD in code else []
    ints, floats = cells.ints.tolist(), cells.floats.tolist()
    return [
        ints[i] if kind == INT else floats[i] if kind == FLOAT else None if kind == EMPTY
        else texts[i] if kind == TEXT else parse_cell(texts[i])
        for i, kind in enumerate(code)
    ]  # fmt: skip


def plain_numbers(column: Any) -> tuple[str, np.ndarray, np.ndarray] | None:
    """('int' or 'float', values, valid) of a column of plain numbers, or None.

    Plain: ``-?[0-9]+`` of at most 18 characters, or ``-?[0-9]*.[0-9]*`` with a
    digit, every cell of one kind (or empty); such a cell is what ``parse_cell``
    makes it, without trimming or signs to remove. Integers are parsed in one
    compiled pass over the bytes of each chunk; decimals are recognised on the
    bytes and cast by pyarrow.
    """
    from trendagg.io._scan import plain_ints

    n = len(column)
    kind = "empty"  # until a chunk has a number
    values = np.zeros(n, np.int64)
    valid = np.empty(n, dtype=np.bool_)
    at = 0
    for chunk in _chunks(column):
        size = len(chunk)
        if not size:
            continue
        data, offsets = _piece(chunk)
        lengths = np.diff(offsets)
        part = slice(at, at + size)
        at += size
        valid[part] = lengths > 0
        if kind != "float":
            status = plain_ints(data, offsets, values[part], INT64_SAFE_CHARS)
            if status:
                kind = "int" if status == 1 else kind
                continue
            if kind == "int":
                return None  # integers before, something else here
            kind, values = "float", np.zeros(n, np.float64)  # (only empty cells before)
        if not _plain_decimals(data, offsets, lengths):
            return None
        if valid[part].any():
            _cast_decimals(chunk, valid[part], values[part])
    if kind == "float" and not np.isfinite(values).all():
        return None  # a decimal too large for a float: text, as parse_cell says
    return "int" if kind == "empty" else kind, values, valid


def _plain_decimals(data: np.ndarray, offsets: np.ndarray, lengths: np.ndarray) -> bool:
    """Whether every non-empty cell of a chunk is ``-?[0-9]*.[0-9]*`` with a digit."""
    start, end = int(offsets[0]), int(offsets[-1])
    chars = data[start:end]
    odd = np.flatnonzero((chars - np.uint8(_DIGIT)) > 9)  # the bytes that are not digits
    signs = chars[odd]
    minus = signs == _MINUS
    dot = signs == _DOT
    if not np.all(minus | dot):
        return False
    cell = np.searchsorted(offsets, odd + start, side="right") - 1
    if not np.array_equal(offsets[cell[minus]] - start, odd[minus]):
        return False  # a minus inside a cell
    dotted = cell[dot]
    if dotted.size != np.count_nonzero(lengths) or np.any(np.diff(dotted) <= 0):
        return False  # a cell without a dot (an integer), or with two
    signed = np.zeros(len(lengths), dtype=np.int64)
    signed[cell[minus]] = 1
    return not np.any(lengths[dotted] - signed[dotted] < 2)  # no digit: '.' or '-.'


def _cast_decimals(chunk: Any, present: np.ndarray, out: np.ndarray) -> None:
    """Cast a chunk of plain decimal texts into ``out`` (zeros), where ``present``."""
    import pyarrow as pa

    if present.all():
        out[:] = chunk.cast(pa.float64()).to_numpy()
        return
    bits = np.concatenate([np.zeros(chunk.offset, np.bool_), present]) if chunk.offset else present
    validity = pa.py_buffer(np.packbits(bits, bitorder="little"))
    _, offsets, data = chunk.buffers()
    masked = pa.Array.from_buffers(
        chunk.type, len(chunk), [validity, offsets, data], offset=chunk.offset
    )
    cast = masked.cast(pa.float64())
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


def stripped(column: Any) -> Any:
    """``str.strip()`` of every cell (the column itself when no byte of it may be what
    ``str.strip()`` removes)."""
    import pyarrow.compute as pc

    for data, offsets in _pieces(column):
        chars = data[int(offsets[0]) : int(offsets[-1])]
        if chars.size and (chars.min() <= ord(" ") or chars.max() >= 128):
            return pc.utf8_trim(column, PY_WHITESPACE)
    return column


def has_byte(column: Any, byte: int) -> bool:
    """Whether some cell of a string column holds ``byte`` (a line break, say)."""
    return any(
        bool(np.any(data[int(offsets[0]) : int(offsets[-1])] == byte))
        for data, offsets in _pieces(column)
    )


def encode(column: Any) -> tuple[np.ndarray, list[str]]:
    """Dictionary codes (int32; 0 for nulls) and the words of a string column (its chunks
    combined first, so that one dictionary serves them all)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    encoded = pc.dictionary_encode(column)
    codes = pc.fill_null(encoded.indices, 0).to_numpy().astype(np.int32, copy=False)
    words: list[str] = encoded.dictionary.cast(pa.string()).to_pylist()
    return codes, words


def lengths(column: Any) -> np.ndarray:
    """The byte length of every cell."""
    import pyarrow.compute as pc

    values: np.ndarray = pc.binary_length(column).to_numpy(zero_copy_only=False)
    return values


def bools(array: Any) -> np.ndarray:
    """A boolean Arrow array as numpy (null is False)."""
    import pyarrow.compute as pc

    values: np.ndarray = pc.fill_null(array, False).to_numpy(zero_copy_only=False)
    return values.astype(np.bool_, copy=False)


def filled(array: Any, fill: float) -> np.ndarray:
    """A numeric Arrow array as numpy, nulls as ``fill``."""
    import pyarrow.compute as pc

    if array.null_count:
        array = pc.fill_null(array, fill)
    values: np.ndarray = array.to_numpy()
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
