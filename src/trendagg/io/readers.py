"""Read events from CSV, JSON Lines and Parquet into an :class:`EventBatch`.

Each reader converts its source into columns of the value model (exact ints,
finite floats, strings, missing) and leaves the rules on types, times and
numeric attributes to :mod:`trendagg.io.assemble`, so that every format obeys
the same contract (SEMANTICS.md, "Events"). Nothing is dropped silently: a row
that cannot be an event comes back in ``ReadResult.rejected`` with its row
number, the reason and the raw record.

CSV goes through pyarrow's multi-threaded reader with every column read as
text, then each column is converted with vectorised checks (all-integer and
all-float columns are cast by pyarrow, other columns value by value). A file
whose rows do not all match the header is re-read with Python's ``csv``
module, which can keep the short rows and report the long ones.
"""

from __future__ import annotations

import csv
import gc
import gzip
import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast

from trendagg.errors import InputError
from trendagg.io.assemble import (
    assemble,
    check_columns,
    check_event_type,
    column_list,
    from_mappings,
)
from trendagg.io.batch import EventBatch, ReadResult, RejectedRow
from trendagg.io.formats import event_format, is_gzip
from trendagg.io.values import (
    INT_PATTERN,
    NUMBER_PATTERN,
    decimal_value,
    exact_int,
    normalize_value,
    parse_cell,
)

if TYPE_CHECKING:
    import pyarrow as pa

_INT64_SAFE_CHARS = 18  # any literal of at most 18 characters fits int64
_TIME_UNITS = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}
_JSON_BLANKS = " \t\r\n"  # the whitespace JSON allows around a value

Numeric = Mapping[str, Iterable[str]] | None


def locate(
    path: str | os.PathLike[str], fmt: str | None, event_type: str | None
) -> tuple[Path, str, str]:
    """The checks every reader makes first: (path, its text, format), or InputError."""
    check_event_type(event_type)
    location = Path(path)
    source = os.fspath(path)
    if not location.exists():
        raise InputError(f"event file '{source}' does not exist; check the path")
    return location, source, event_format(location, fmt)


def read_events(
    path: str | os.PathLike[str],
    *,
    type_col: str = "type",
    time_col: str = "time",
    event_type: str | None = None,
    fmt: str | None = None,
    numeric: Numeric = None,
    columns: Sequence[str] | None = None,
) -> ReadResult:
    """Read an event file (or a folder of Parquet files) into events.

    Parameters
    ----------
    path
        A ``.csv``, ``.jsonl``/``.ndjson``/``.json`` (JSON Lines), each
        optionally gzip-compressed (``.gz``, also detected from the content),
        a ``.parquet``/``.pq`` file, or a folder of Parquet files read as one
        dataset (hive partition folders ``key=value`` add a column).
    type_col, time_col
        Columns holding the event type and the event time.
    event_type
        The event type of every row, for files of one kind of event (daily
        stock prices as ``'Stock'``...). No type column is needed then, and
        a column named ``type_col``, if present, is an attribute like any
        other.
    fmt
        ``'csv'``, ``'jsonl'`` or ``'parquet'``; inferred from the extension
        when None.
    numeric
        Event type -> attributes that the queries read numerically (sums,
        arithmetic...). A row of that type whose value for such an attribute
        is present but not a number is rejected; missing values are kept.
    columns
        For a CSV file without a header row: the names of its columns, in
        order (its first line is then data).

    Returns
    -------
    ReadResult
        The events in source order and every rejected row, by row number.

    Raises
    ------
    InputError
        When the file does not exist, its format is unknown, it cannot be
        parsed at all, it lacks the time column or (without ``event_type``)
        the type column, or ``event_type`` is empty.
    """
    location, source, kind = locate(path, fmt, event_type)
    if kind == "parquet":
        return _read_parquet(location, source, type_col, time_col, numeric, event_type=event_type)
    if location.is_dir():
        raise InputError(
            f"'{source}' is a folder; only Parquet datasets can be read from a folder, "
            f"so pass one {kind} file or fmt='parquet'"
        )
    if columns is not None and kind != "csv":
        raise InputError(
            f"column names are for CSV files without a header row; {source} is {kind}, "
            "whose columns are named in the file"
        )
    gzipped = is_gzip(location)
    if kind == "csv":
        names = None if columns is None else _given_header(list(columns), source)
        return _read_csv(
            location,
            source,
            gzipped,
            type_col,
            time_col,
            numeric,
            event_type=event_type,
            names=names,
        )
    return _read_jsonl(
        location, source, gzipped, type_col, time_col, numeric, event_type=event_type
    )


@contextmanager
def _text_lines(path: Path, gzipped: bool) -> Iterator[IO[str]]:
    """Open a (possibly gzipped) UTF-8 text file for the csv module."""
    if gzipped:
        with gzip.open(path, "rt", encoding="utf-8-sig", newline="") as handle:
            yield handle
    else:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            yield handle


@contextmanager
def _binary(path: Path, gzipped: bool) -> Iterator[IO[bytes]]:
    """Open a (possibly gzipped) file for reading bytes."""
    if gzipped:
        with gzip.open(path, "rb") as handle:
            yield cast(IO[bytes], handle)
    else:
        with path.open("rb") as handle:
            yield handle


def _not_utf8(source: str, error: UnicodeDecodeError) -> InputError:
    return InputError(
        f"{source} is not UTF-8 text ({error.reason}, byte 0x{error.object[error.start]:02x}); "
        "re-encode it as UTF-8 (for example iconv -f latin1 -t utf-8)"
    )


# ----------------------------------------------------------------------------- CSV


def _read_csv(
    path: Path,
    source: str,
    gzipped: bool,
    type_col: str,
    time_col: str,
    numeric: Numeric,
    *,
    event_type: str | None,
    names: list[str] | None = None,
) -> ReadResult:
    header = names if names is not None else _csv_header(path, source, gzipped)
    check_columns(
        header, source=source, type_col=type_col, time_col=time_col, event_type=event_type
    )
    table = _arrow_csv(path, gzipped, header, has_header=names is None)
    if table is None:
        return _read_csv_python(
            path, source, gzipped, type_col, time_col, numeric, event_type=event_type, names=names
        )
    if _has_line_breaks(table.columns):
        _check_quotes(path, source, gzipped)
    columns: dict[str, list[object]] = {}
    for name, column in zip(header, table.columns, strict=True):
        if name == type_col and event_type is None:
            columns[name] = [text.strip() or None for text in column.to_pylist()]
        else:
            columns[name] = _text_column(column)
    raw: list[list[Any]] = []

    def record_of(i: int) -> dict[str, object]:
        if not raw:
            raw.extend(column.to_pylist() for column in table.columns)
        return {name: values[i] for name, values in zip(header, raw, strict=True)}

    return assemble(
        source=source,
        names=header,
        columns=columns,
        rows=list(range(1, table.num_rows + 1)),
        record_of=record_of,
        type_col=type_col,
        time_col=time_col,
        event_type=event_type,
        numeric=numeric,
    )


def _given_header(names: list[str], source: str) -> list[str]:
    """Column names given for a header-less CSV file, checked like a header row."""
    names = [name.strip() for name in names]
    if not names or any(not name for name in names):
        raise InputError(
            f"give a name for every column of {source}, separated by commas "
            "(for example --columns medallion,license,pickup,dropoff)"
        )
    _check_unique(names, source)
    return names


def _check_unique(header: list[str], source: str) -> None:
    seen: set[str] = set()
    for name in header:
        if name in seen:
            raise InputError(
                f"column '{name}' appears twice in the header of {source}; "
                f"rename one (columns are {column_list(header)})"
            )
        seen.add(name)


def _csv_header(path: Path, source: str, gzipped: bool) -> list[str]:
    try:
        with _text_lines(path, gzipped) as handle:
            header = next((record for record in csv.reader(handle) if record), None)
    except UnicodeDecodeError as error:
        raise _not_utf8(source, error) from None
    except (csv.Error, OSError, EOFError) as error:
        raise InputError(f"cannot read {source} as CSV ({error}); check the file") from None
    if header is None:
        raise InputError(
            f"{source} is empty; a CSV event file needs a header row naming its columns "
            "(for example type,time,...)"
        )
    _check_unique(header, source)
    return header


def _arrow_csv(
    path: Path, gzipped: bool, header: list[str], *, has_header: bool = True
) -> pa.Table | None:
    """Read every column as text with pyarrow; None when the rows are irregular."""
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    irregular: list[object] = []

    def on_invalid_row(row: object) -> str:
        irregular.append(row)
        return "skip"

    try:
        with pa.input_stream(str(path), compression="gzip" if gzipped else None) as stream:
            table = pa_csv.read_csv(
                stream,
                read_options=pa_csv.ReadOptions(column_names=None if has_header else header),
                parse_options=pa_csv.ParseOptions(
                    newlines_in_values=True, invalid_row_handler=on_invalid_row
                ),
                convert_options=pa_csv.ConvertOptions(
                    column_types={name: pa.string() for name in header},
                    strings_can_be_null=False,
                    quoted_strings_can_be_null=False,
                ),
            )
    except (pa.ArrowException, OSError):
        return None  # the Python reader says precisely what is wrong
    if irregular or table.column_names != header:
        return None
    return table


def _has_line_breaks(columns: list[pa.ChunkedArray]) -> bool:
    import pyarrow.compute as pc

    return any(pc.any(pc.match_substring(column, "\n")).as_py() for column in columns)


def _check_quotes(path: Path, source: str, gzipped: bool) -> None:
    """Refuse a file whose last quoted cell is never closed.

    Both CSV parsers would silently make the rest of the file one cell; only
    a cell holding a line break can be such a cell, so this extra pass runs
    only then.
    """
    start = 1
    try:
        with _text_lines(path, gzipped) as handle:
            reader = csv.reader(handle, strict=True)
            for _ in reader:
                start = reader.line_num + 1
    except csv.Error as error:
        if "unexpected end of data" not in str(error):
            return  # other strictness complaints: both parsers read those cells leniently
        raise InputError(
            f"{source}: the quoted cell that starts on line {start} is never closed, so the "
            "rest of the file would be one cell; close the quote (a quote inside a quoted "
            'cell is written "")'
        ) from None


def _text_column(column: pa.ChunkedArray) -> list[object]:
    """Convert a column of CSV text as :func:`parse_cell` does, vectorised.

    pyarrow classifies the cells with regular expressions and casts the short
    integers and the finite decimals; Python only merges the pieces (mixed
    columns) and parses the rest (integers too long for int64, ``1e999``).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    trimmed = pc.utf8_trim_whitespace(column)
    is_number = pc.match_substring_regex(trimmed, NUMBER_PATTERN)
    if pc.any(is_number).as_py() is not True:
        return [text.strip() or None for text in column.to_pylist()]
    is_int = pc.match_substring_regex(trimmed, INT_PATTERN)
    is_empty = pc.equal(trimmed, "")
    short_int = pc.and_(is_int, pc.less_equal(pc.utf8_length(trimmed), _INT64_SAFE_CHARS))
    decimal = pc.and_(is_number, pc.invert(is_int))
    try:
        unsigned = pc.replace_substring_regex(trimmed, r"^\+", "")
        ints = pc.if_else(short_int, unsigned, pa.scalar(None, pa.string())).cast(pa.int64())
        floats = pc.if_else(decimal, trimmed, pa.scalar(None, pa.string())).cast(pa.float64())
    except pa.ArrowInvalid:
        return [parse_cell(text) for text in trimmed.to_pylist()]
    floats = pc.if_else(pc.is_finite(floats), floats, pa.scalar(None, pa.float64()))
    if pc.all(pc.or_(short_int, is_empty)).as_py():
        return _pylist(ints)
    if pc.all(pc.or_(pc.is_valid(floats), is_empty)).as_py():
        return _pylist(floats)
    merged: list[object] = []
    pieces = (ints.to_pylist(), floats.to_pylist(), trimmed.to_pylist(), is_number.to_pylist())
    for whole, real, text, number in zip(*pieces, strict=True):
        if whole is not None:
            merged.append(whole)
        elif real is not None:
            merged.append(real)
        elif number:
            merged.append(parse_cell(text))  # a long integer, or 1e999 (stays text)
        else:
            merged.append(text.strip() or None)
    return merged


def _read_csv_python(
    path: Path,
    source: str,
    gzipped: bool,
    type_col: str,
    time_col: str,
    numeric: Numeric,
    *,
    event_type: str | None,
    names: list[str] | None = None,
) -> ReadResult:
    """Row-by-row CSV reading for files whose rows do not all fit the header.

    A row with fewer cells than the header has its absent cells missing; a row
    with more cells is rejected (the extra cells are kept in the record under
    ``_extra``). Rows are numbered among the data rows, blank lines excluded.
    """
    header: list[str] = []
    raw: list[list[str | None]] = []
    rows: list[int] = []
    rejected: list[RejectedRow] = []
    reader = None
    try:
        with _text_lines(path, gzipped) as handle:
            reader = csv.reader(handle)
            header = names if names is not None else next((r for r in reader if r), [])
            raw = [[] for _ in header]
            row = 0
            for cells in reader:
                if not cells:
                    continue
                row += 1
                keep_row(header, cells, row, raw, rows, rejected, source)
    except UnicodeDecodeError as error:
        raise _not_utf8(source, error) from None
    except (csv.Error, OSError, EOFError) as error:
        raise csv_failure(source, reader, error) from None
    if any("\n" in text for values in raw for text in values if text):
        _check_quotes(path, source, gzipped)
    return assemble_text(
        header, raw, rows, rejected, source, type_col, time_col, event_type, numeric
    )


def keep_row(
    header: list[str],
    cells: list[str],
    row: int,
    raw: list[list[str | None]],
    rows: list[int],
    rejected: list[RejectedRow],
    source: str,
) -> None:
    """A CSV row into the text columns (absent cells missing), or rejected when it has
    more cells than the header (the extra cells kept under ``_extra``)."""
    width = len(header)
    if len(cells) > width:
        record: dict[str, object] = dict(zip(header, cells, strict=False))
        record["_extra"] = cells[width:]
        reason = (
            f"row has {len(cells)} cells but the header has {width} columns; "
            "quote cells that contain commas"
        )
        rejected.append(RejectedRow(source, row, reason, record))
        return
    for values, cell in zip(raw, cells, strict=False):
        values.append(cell)
    for values in raw[len(cells) :]:
        values.append(None)
    rows.append(row)


def csv_failure(source: str, reader: Any, error: Exception) -> InputError:
    line = f", line {reader.line_num}" if reader is not None else ""
    return InputError(f"cannot read {source}{line} as CSV ({error}); check the file")


def assemble_text(
    header: list[str],
    raw: list[list[str | None]],
    rows: list[int],
    rejected: list[RejectedRow],
    source: str,
    type_col: str,
    time_col: str,
    event_type: str | None,
    numeric: Numeric,
) -> ReadResult:
    """Events of CSV text columns (cells parsed as the value model reads them)."""
    columns: dict[str, list[object]] = {}
    for name, values in zip(header, raw, strict=True):
        if name == type_col and event_type is None:
            columns[name] = [None if text is None else text.strip() or None for text in values]
        else:
            columns[name] = [parse_cell(text) for text in values]

    def record_of(i: int) -> dict[str, object]:
        return {
            name: values[i]
            for name, values in zip(header, raw, strict=True)
            if values[i] is not None
        }

    return assemble(
        source=source,
        names=header,
        columns=columns,
        rows=rows,
        record_of=record_of,
        type_col=type_col,
        time_col=time_col,
        event_type=event_type,
        numeric=numeric,
        rejected=rejected,
    )


# ----------------------------------------------------------------------------- JSON Lines


def _read_jsonl(
    path: Path,
    source: str,
    gzipped: bool,
    type_col: str,
    time_col: str,
    numeric: Numeric,
    *,
    event_type: str | None,
) -> ReadResult:
    rejected: list[RejectedRow] = []
    with _gc_paused():
        objects = _json_objects(path, source, gzipped, rejected)
        return from_mappings(
            objects,
            source=source,
            type_col=type_col,
            time_col=time_col,
            event_type=event_type,
            numeric=numeric,
            what="line",
            rejected=rejected,
            parsed_json=True,
        )


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while millions of dicts are built.

    Parsed JSON objects hold no cycles, yet each allocation batch triggers a
    collection pass over all of them; pausing saves about a third of the time.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _json_objects(
    path: Path, source: str, gzipped: bool, rejected: list[RejectedRow]
) -> list[tuple[int, object]]:
    """(line number, parsed value) of the non-blank lines of a JSON Lines file.

    Lines that are not JSON (or not UTF-8) are added to ``rejected`` with the
    decoder's message; the row number is the physical line number. Each line
    goes straight to the C scanner of :mod:`json`; only a line it refuses
    goes through ``json.loads`` again, for the message (or for integers longer
    than the interpreter's digit limit).
    """
    decoder: Any = json.JSONDecoder()
    scan = decoder.scan_once  # the C scanner, without json.loads' Python layers
    parsed: list[tuple[int, object]] = []
    first = True
    try:
        with _binary(path, gzipped) as handle:
            for number, line in enumerate(handle, start=1):
                if number == 1 and line.startswith(b"\xef\xbb\xbf"):
                    line = line[3:]
                try:
                    decoded = line.decode("utf-8")
                except UnicodeDecodeError as error:
                    reason = (
                        f"line is not UTF-8 text (byte 0x{line[error.start]:02x} at column "
                        f"{error.start + 1})"
                    )
                    raw = line.decode("utf-8", "backslashreplace").rstrip("\r\n")
                    rejected.append(RejectedRow(source, number, reason, {"_text": raw}))
                    continue
                text = decoded.strip(_JSON_BLANKS)
                if not text:
                    continue
                if first:
                    first = False
                    _refuse_json_array(text, source)
                try:
                    value, end = scan(text, 0)
                    if end != len(text):
                        raise ValueError(text)
                except (StopIteration, ValueError, RecursionError):
                    try:
                        value = parse_json_line(decoded)
                    except ValueError as error:
                        record: dict[str, object] = {"_text": decoded.rstrip("\r\n")}
                        rejected.append(RejectedRow(source, number, str(error), record))
                        continue
                parsed.append((number, value))
    except (OSError, EOFError) as error:
        raise InputError(f"cannot read {source} ({error}); check the file") from None
    return parsed


def parse_json_line(line: str) -> object:
    """One line of JSON Lines, read as the JSON Lines reader reads it (integers of any size
    exactly); raises ``ValueError`` with the reason (and column) when it is not JSON."""
    try:
        return _parse_json(line.strip(_JSON_BLANKS))
    except ValueError as error:
        indent = len(line) - len(line.lstrip(_JSON_BLANKS))
        raise ValueError(_json_reason(error, indent)) from None


def _refuse_json_array(first_line: str, source: str) -> None:
    if first_line.startswith("["):
        raise InputError(
            f"{source} starts with '[': it looks like one JSON array, not JSON Lines; "
            f"write one object per line (for example: jq -c '.[]' {source} > events.jsonl)"
        )


def _json_reason(error: ValueError, indent: int) -> str:
    if isinstance(error, json.JSONDecodeError):
        return f"invalid JSON at column {error.colno + indent}: {error.msg}"
    return f"invalid JSON: {error}"


def _parse_json(text: str) -> object:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except ValueError:
        # More digits than int() accepts by default: parse integers exactly.
        return json.loads(text, parse_int=exact_int)
    except RecursionError:
        raise ValueError(
            "nested deeper than the JSON parser goes (about 1,000 levels of objects and "
            "arrays); flatten the line"
        ) from None


# ----------------------------------------------------------------------------- Parquet


def _read_parquet(
    location: Path,
    source: str,
    type_col: str,
    time_col: str,
    numeric: Numeric,
    *,
    event_type: str | None,
) -> ReadResult:
    if not location.is_dir():
        table = _parquet_table(str(location), source)
        return _table_result(table, source, type_col, time_col, numeric, event_type=event_type)
    import pyarrow as pa
    import pyarrow.dataset as ds

    _, fragments = _parquet_folder(location, source)
    parts = []
    for fragment in fragments:
        table = _parquet_table(fragment.path, fragment.path)
        for key, value in ds.get_partition_keys(fragment.partition_expression).items():
            if key not in table.column_names:
                table = table.append_column(key, pa.array([value] * table.num_rows))
        parts.append(
            _table_result(table, fragment.path, type_col, time_col, numeric, event_type=event_type)
        )
    return _concat(parts, source)


def decimal_warnings(path: str, attributes: set[str]) -> list[str]:
    """One warning per Parquet decimal column with a fractional scale that a query reads:
    its values are read as binary floats, so sums show float rounding, not decimal cents."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    location = Path(path)
    if not location.exists() or event_format(location, None) != "parquet":
        return []
    try:
        schema = ds.dataset(path, format="parquet").schema
    except (pa.ArrowException, OSError, ValueError):
        return []  # the reader says what is wrong with the file
    return [
        f"warning: column '{f.name}' is {f.type}: its values are read as binary floats "
        f"(0.10 is 0.1000000000000000055...), so its sums show float rounding "
        f"(0.1 + 0.2 = 0.30000000000000004); for exact amounts store integers (cents)"
        for f in schema
        if pa.types.is_decimal(f.type) and f.type.scale > 0 and f.name in attributes
    ]


def _parquet_folder(location: Path, source: str) -> tuple[Any, list[Any]]:
    """A folder of Parquet files as a dataset and its files in name order, or InputError."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    try:
        dataset = ds.dataset(str(location), format="parquet", partitioning="hive")
        fragments = sorted(dataset.get_fragments(), key=lambda fragment: fragment.path)
    except (pa.ArrowException, OSError, ValueError) as error:
        raise InputError(f"cannot read folder {source} as a Parquet dataset ({error})") from None
    if not fragments:
        raise InputError(
            f"folder {source} holds no Parquet files; pass a folder of .parquet files or one file"
        )
    return dataset, fragments


def parquet_schema(location: Path, source: str) -> Any:
    """The Arrow schema of a Parquet file or folder, refused as the reader refuses it (a
    file that is not Parquet, a folder without Parquet files): for readers that read the
    data elsewhere (Spark), so that they give the same verdict."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if location.is_dir():
        return _parquet_folder(location, source)[0].schema
    try:
        pq.read_table(str(location), columns=[])  # the footer, as read_table checks it
        return pq.read_schema(str(location))
    except (pa.ArrowException, OSError, ValueError) as error:
        raise _not_parquet(source, error) from None


def _not_parquet(source: str, error: Exception) -> InputError:
    return InputError(
        f"cannot read {source} as Parquet ({error}); check that it is an intact Parquet "
        "file; if it holds CSV or JSON Lines, name it .csv or .jsonl (or in the Python API "
        "pass fmt='csv' or fmt='jsonl')"
    )


def _parquet_table(path: str, source: str) -> pa.Table:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.read_table(path)
    except (pa.ArrowException, OSError, ValueError) as error:
        raise _not_parquet(source, error) from None


def _table_result(
    table: pa.Table,
    source: str,
    type_col: str,
    time_col: str,
    numeric: Numeric,
    *,
    event_type: str | None,
    text_cells: bool = False,
) -> ReadResult:
    import pyarrow as pa
    import pyarrow.compute as pc

    names = table.column_names
    if len(set(names)) != len(names):
        twice = sorted({name for name in names if names.count(name) > 1})
        raise InputError(f"columns {twice} appear twice in {source}; rename them")
    check_columns(names, source=source, type_col=type_col, time_col=time_col, event_type=event_type)
    columns = {
        name: _text_column(pc.fill_null(column, ""))
        if text_cells and (pa.types.is_string(column.type) or pa.types.is_large_string(column.type))
        else arrow_values(column)
        for name, column in zip(names, table.columns, strict=True)
    }
    return assemble(
        source=source,
        names=names,
        columns=columns,
        rows=list(range(1, table.num_rows + 1)),
        record_of=lambda i: table.slice(i, 1).to_pylist()[0],
        type_col=type_col,
        time_col=time_col,
        event_type=event_type,
        numeric=numeric,
    )


def read_arrow(
    table: pa.Table,
    *,
    source: str,
    type_col: str = "type",
    time_col: str = "time",
    event_type: str | None = None,
    numeric: Numeric = None,
    text_cells: bool = False,
) -> ReadResult:
    """Events of an Arrow table (rows numbered from 1): typed columns as the Parquet reader
    reads them, or, with ``text_cells``, columns of CSV text as the CSV reader reads them
    (a null is an empty cell). Used by the Spark pipeline, whose Arrow batches come so."""
    return _table_result(
        table, source, type_col, time_col, numeric, event_type=event_type, text_cells=text_cells
    )


def arrow_values(column: pa.ChunkedArray | pa.Array) -> list[object]:
    """Convert an Arrow column to the value model, by its type.

    Integers and strings as they are; floats with non-finite values as text;
    booleans as ``'true'``/``'false'``; timestamps and dates as epoch seconds
    (naive means UTC); durations as seconds; decimals as ``int`` when integral
    else ``float``; nested and other types as :func:`normalize_value` says.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = column.type
    if pa.types.is_dictionary(kind):
        column = column.cast(kind.value_type)
        kind = kind.value_type
    if pa.types.is_integer(kind) or pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return _pylist(column)
    if pa.types.is_null(kind):
        return [None] * len(column)
    if pa.types.is_floating(kind):
        floats = column.cast(pa.float64())
        if pc.all(pc.is_finite(floats)).as_py() is not False:
            return _pylist(floats)
        return [normalize_value(value) for value in floats.to_pylist()]
    if pa.types.is_boolean(kind):
        return [
            None if value is None else "true" if value else "false" for value in column.to_pylist()
        ]
    if pa.types.is_timestamp(kind) or pa.types.is_duration(kind):
        return _scaled(column.cast(pa.int64()).to_pylist(), _TIME_UNITS[kind.unit])
    if pa.types.is_date32(kind):
        return [
            None if days is None else days * 86400 for days in column.cast(pa.int32()).to_pylist()
        ]
    if pa.types.is_date64(kind):
        return _scaled(column.cast(pa.int64()).to_pylist(), 1000)
    if pa.types.is_decimal(kind):
        return [None if value is None else decimal_value(value) for value in column.to_pylist()]
    return [normalize_value(value) for value in column.to_pylist()]


def _pylist(column: pa.ChunkedArray | pa.Array) -> list[object]:
    values: list[object] = column.to_pylist()
    return values


def _scaled(values: list[int | None], per_second: int) -> list[object]:
    if per_second == 1:
        return list(values)
    return [
        None
        if value is None
        else value // per_second
        if value % per_second == 0
        else value / per_second
        for value in values
    ]


def _concat(parts: list[ReadResult], source: str) -> ReadResult:
    """One batch from the batches of the files of a dataset (missing columns padded)."""
    names: dict[str, None] = {}
    for part in parts:
        names.update(dict.fromkeys(part.events.columns))
    types: list[str] = []
    times: list[int | float] = []
    rows: list[int] = []
    columns: dict[str, list[object]] = {name: [] for name in names}
    rejected: list[RejectedRow] = []
    for part in parts:
        events = part.events
        types.extend(events.types)
        times.extend(events.times)
        rows.extend(events.rows)
        for name, values in columns.items():
            values.extend(events.columns.get(name) or [None] * len(events))
        rejected.extend(part.rejected)
    return ReadResult(EventBatch(types, times, columns, rows, source), rejected)
