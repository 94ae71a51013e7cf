"""CSV files in chunks: pyarrow streams the text, Python's ``csv`` reads what pyarrow cannot.

pyarrow reads every column as text, in blocks, and each chunk of rows goes to
:func:`~trendagg.io.assemble.assemble_table`. A file whose rows do not
all fit the header (or that pyarrow cannot read) is read by Python's ``csv``
module from the chunk where pyarrow stopped: a row with fewer cells than the
header has its absent cells missing, a row with more cells is rejected (the extra
cells kept in its record under ``_extra``). Rows are numbered among the data
rows, blank lines excluded.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator, Sequence
from io import TextIOWrapper
from typing import TYPE_CHECKING, Any, TextIO

from trendagg.errors import InputError
from trendagg.io.assemble import assemble_table
from trendagg.io.batch import ReadResult, RejectedRow
from trendagg.io.formats import Input, open_binary
from trendagg.io.options import ReadOptions, column_list
from trendagg.io.text import has_byte
from trendagg.io.values import shown

if TYPE_CHECKING:
    import pyarrow as pa

_BLOCK_BYTES = 1 << 20  # pyarrow's CSV block: larger blocks parse slower
_MAX_BLOCK_BYTES = 1 << 30  # the largest block tried for a long row (Python's csv beyond)
_FIELD_CHARS = 2**31 - 1  # Python's csv: a cell as long as a C long allows (the default 131,072)


class _Irregular(Exception):
    """A row does not fit the header: Python's ``csv`` reads on."""


def header(file: Input, given: Sequence[str] | None) -> list[str]:
    """The column names: ``given`` for a file without a header row (checked as a header
    row is), else the first non-empty row of the file."""
    if given is not None:
        names = [name.strip() for name in given]
        if not names or any(not name for name in names):
            raise InputError(
                f"give a name for every column of {file.source}, separated by commas "
                "(for example --columns medallion,license,pickup,dropoff)"
            )
        return _unique(names, file.source)
    try:
        with _text_lines(file) as handle:
            first = next((record for record in csv_rows(handle) if record), None)
    except UnicodeDecodeError as error:
        raise not_utf8(file.source, error) from None
    except (csv.Error, OSError, EOFError) as error:
        raise InputError(f"cannot read {file.source} as CSV ({error}); check the file") from None
    if first is None:
        raise InputError(
            f"{file.source} is empty; a CSV event file needs a header row naming its columns "
            "(for example type,time,...)"
        )
    return _unique(first, file.source)


def _unique(names: list[str], source: str) -> list[str]:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise InputError(
                f"column '{shown(name)}' appears twice in the header of {source}; "
                f"rename one (columns are {column_list(names)})"
            )
        seen.add(name)
    return names


def csv_rows(lines: Iterable[str], **dialect: Any) -> Any:
    """Python's ``csv.reader`` with cells of any length, as pyarrow reads them (the
    module's default refuses cells over 131,072 characters; the limit is the module's,
    so it is raised for the process, once)."""
    if csv.field_size_limit() < _FIELD_CHARS:
        csv.field_size_limit(_FIELD_CHARS)
    return csv.reader(lines, **dialect)


def _text_lines(file: Input) -> TextIO:
    """A (possibly gzipped) UTF-8 text file for the csv module."""
    return TextIOWrapper(open_binary(file.location, file.gzipped), encoding="utf-8-sig", newline="")


def not_utf8(source: str, error: UnicodeDecodeError) -> InputError:
    """The message for a file that is not UTF-8."""
    return InputError(
        f"{source} is not UTF-8 text ({error.reason}, byte 0x{error.object[error.start]:02x}); "
        "re-encode it as UTF-8 (for example iconv -f latin1 -t utf-8)"
    )


def check_quotes(file: Input) -> None:
    """Refuse a file whose last quoted cell is never closed.

    Both CSV parsers would silently make the rest of the file one cell; only a
    cell holding a line break can be such a cell, so this extra pass runs only then.
    """
    start = 1
    try:
        with _text_lines(file) as handle:
            reader = csv_rows(handle, strict=True)
            for _ in reader:
                start = reader.line_num + 1
    except csv.Error as error:
        if "unexpected end of data" not in str(error):
            return  # other strictness complaints: both parsers read those cells leniently
        raise InputError(
            f"{file.source}: the quoted cell that starts on line {start} is never closed, so "
            "the rest of the file would be one cell; close the quote (a quote inside a quoted "
            'cell is written "")'
        ) from None


def csv_chunks(
    file: Input, names: list[str], options: ReadOptions, chunk_rows: int
) -> Iterator[ReadResult]:
    """The events of a CSV file in chunks of ``chunk_rows`` rows: read by pyarrow, and
    from the chunk where pyarrow stops (a row that does not fit the header) by Python's
    ``csv``. A row longer than pyarrow's block (a cell of megabytes) is read by pyarrow
    again with a block eight times larger, from the start, the rows already given skipped
    (pyarrow parses a row within one block; larger blocks parse slower, so only then)."""
    import pyarrow as pa

    done = 0  # source rows yielded so far
    quotes: list[bool] = []  # (checked once)
    block = _BLOCK_BYTES
    while True:
        try:
            for table in _arrow_tables(file, names, options, chunk_rows, block, skip=done):
                yield _text_chunk(table, file, options, quotes, first_row=done + 1)
                done += table.num_rows
            return
        except pa.ArrowInvalid as error:
            if "straddl" not in str(error) or block >= _MAX_BLOCK_BYTES:
                break
            block *= 8
        except (_Irregular, pa.ArrowException, OSError):
            break
    yield from python_csv_chunks(file, names, options, chunk_rows, skip=done)


def _arrow_tables(
    file: Input, names: list[str], options: ReadOptions, chunk_rows: int, block: int, *, skip: int
) -> Iterator[pa.Table]:
    """The text tables of ``chunk_rows`` rows that pyarrow reads in blocks of ``block``
    bytes, after the first ``skip`` rows (one empty table for a file without rows);
    _Irregular once a row does not fit the header."""
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    irregular: list[object] = []

    def on_invalid_row(row: object) -> str:
        irregular.append(row)
        return "skip"

    read = pa_csv.ReadOptions(
        column_names=None if options.columns is None else names,
        use_threads=pa.cpu_count() > 1,  # (its serial reader is faster on one core)
        block_size=block,
    )
    parse = pa_csv.ParseOptions(newlines_in_values=True, invalid_row_handler=on_invalid_row)
    convert = pa_csv.ConvertOptions(
        column_types={name: pa.string() for name in names},
        strings_can_be_null=False,
        quoted_strings_can_be_null=False,
    )
    stream = pa.input_stream(str(file.location), compression="gzip" if file.gzipped else None)
    given, skipped_before = 0, skip
    with stream:
        reader = pa_csv.open_csv(stream, read, parse, convert)
        if reader.schema.names != names:
            raise _Irregular
        rest = reader.schema.empty_table()
        for batch in reader:
            if irregular:
                raise _Irregular
            rest = pa.concat_tables([rest, pa.Table.from_batches([batch])])
            if skip:  # (read before, by a smaller block)
                skipped = min(skip, rest.num_rows)
                rest, skip = rest.slice(skipped), skip - skipped
            while rest.num_rows >= chunk_rows:
                yield rest.slice(0, chunk_rows)
                given += chunk_rows
                rest = rest.slice(chunk_rows)
        if irregular:
            raise _Irregular
        if rest.num_rows or not (given or skipped_before):
            yield rest


def _text_chunk(
    table: pa.Table,
    file: Input,
    options: ReadOptions,
    quotes: list[bool],
    **where: Any,
) -> ReadResult:
    """:func:`assemble_table` of a table of CSV text (``where``: its rows, as assemble_table
    takes them), the file's quotes checked once a cell holds a line break."""
    if not quotes and any(has_byte(column, ord("\n")) for column in table.columns):
        check_quotes(file)
        quotes.append(True)
    return assemble_table(table, options, source=file.source, csv=True, **where)


def python_csv_chunks(
    file: Input, names: list[str], options: ReadOptions, chunk_rows: int, *, skip: int = 0
) -> Iterator[ReadResult]:
    """The events of a CSV file read by Python's ``csv``, in chunks of ``chunk_rows``
    rows, from data row ``skip + 1``: a row's absent cells are missing, a row with
    more cells than the header is rejected (the extra cells kept under ``_extra``)."""
    import pyarrow as pa

    quotes: list[bool] = []
    need_one = not skip
    reader = None
    rows: list[int] = []
    records: list[dict[str, str]] = []
    rejected: list[RejectedRow] = []

    def chunk() -> ReadResult:
        """The rows so far, by the rules of the text pyarrow reads (a cell that a row does
        not have is a null there: missing)."""
        cells = {name: pa.array([r.get(name) for r in records], pa.string()) for name in names}
        return _text_chunk(
            pa.table(cells),
            file,
            options,
            quotes,
            rows=rows,
            records=lambda bad: [records[i] for i in bad],
            rejected=rejected,
        )

    try:
        with _text_lines(file) as handle:
            reader = csv_rows(handle)
            if options.columns is None:
                next((record for record in reader if record), [])
            row = 0
            for cells in reader:
                row += bool(cells)
                if not cells or row <= skip:
                    continue
                record = dict(zip(names, cells, strict=False))
                if len(cells) <= len(names):
                    rows.append(row)
                    records.append(record)
                else:
                    reason = (
                        f"row has {len(cells)} cells but the header has {len(names)} columns; "
                        "quote cells that contain commas"
                    )
                    extra: dict[str, object] = {**record, "_extra": cells[len(names) :]}
                    rejected.append(RejectedRow(file.source, row, reason, extra))
                if row - skip >= chunk_rows:
                    yield chunk()
                    need_one, skip, rows, records, rejected = False, row, [], [], []
            if rows or rejected or need_one:
                yield chunk()
    except UnicodeDecodeError as error:
        raise not_utf8(file.source, error) from None
    except (csv.Error, OSError, EOFError) as error:
        line = f", line {reader.line_num}" if reader is not None else ""
        message = f"cannot read {file.source}{line} as CSV ({error}); check the file"
        raise InputError(message) from None
