"""Rows of a Spark DataFrame as the engine reads them: the local readers' rules, on Spark.

A DataFrame reaches the engine in one of two shapes:

* typed columns (a user's DataFrame, Parquet): each row becomes a mapping of
  its values, read like records passed to ``trendagg.run``;
* one text column ``RECORD`` holding a JSON object per row (JSON Lines files,
  the socket and rate sources): each text is parsed exactly as the JSON
  Lines reader parses a line (integers of any size, invalid JSON rejected with
  the column of the fault).

With ``csv_cells``, text cells are read with the CSV reader's rule (a cell
that looks like a number is a number), so CSV read by Spark as text gives
the same events as ``trendagg run --engine local``. Spark itself reads no value:
the batch and streaming pipelines read each Arrow batch here, in Python, and route
the events by the values the engine read (:mod:`trendagg.spark.batch`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

RECORD = "__trendagg_record"
CSV_RAW = "__trendagg_csv_line"  # Spark's text of a CSV row whose cells do not fit the header


@dataclass(frozen=True)
class Reading:
    """Which columns hold the type and time, and how cells are read."""

    type_col: str = "type"
    time_col: str = "time"
    event_type: str | None = None
    csv_cells: bool = False
    csv_header: tuple[str, ...] = ()  # the CSV columns, when rows come as JSON texts
    renamed: tuple[tuple[str, str], ...] = ()  # (Spark's name, the column's name) pairs
    # Parquet decimals wider than Spark reads, as text: (name, precision, scale)
    decimals: tuple[tuple[str, int, int], ...] = ()
    # Parquet nanosecond timestamps, as Spark reads them: longs
    nanos: tuple[str, ...] = ()


def read_table(table: Any, reading: Reading, numeric: Mapping[str, Iterable[str]] | None) -> Any:
    """Events as arrays (a ReadResult) and rejected rows (numbered from 1) of an Arrow
    table of typed columns, or of one ``RECORD`` column of JSON texts. With ``csv_cells``,
    every text cell is read as the CSV reader reads it: a cell that looks like a number is
    a number, and the event type is the stripped text ("007" stays "007"); other columns
    by their type. Columns go from Arrow to the arrays without a Python object per cell."""
    import pyarrow as pa

    from trendagg.io.assemble import arrow_values, assemble_columns, assemble_table
    from trendagg.io.options import ReadOptions
    from trendagg.io.text import text_values

    for name, precision, scale in reading.decimals:  # the exact text, a decimal again
        if name in table.column_names:
            index = table.column_names.index(name)
            exact = table.column(index).cast(pa.decimal256(precision, scale))
            table = table.set_column(index, name, exact)
    for name in reading.nanos:  # a timestamp again, to the nanosecond
        if name in table.column_names:
            index = table.column_names.index(name)
            exact = table.column(index).cast(pa.timestamp("ns"))
            table = table.set_column(index, name, exact)
    if RECORD in table.column_names:
        return read_rows(table.column(RECORD).to_pylist(), reading, numeric)
    options = ReadOptions(reading.type_col, reading.time_col, reading.event_type, numeric)
    texts = (pa.string(), pa.large_string())
    if not reading.csv_cells:
        return assemble_table(table, options, source="<spark>", csv=False)
    if all(column.type in texts for column in table.columns):  # (CSV: every column is text)
        return assemble_table(table, options, source="<spark>", csv=True)
    columns = {
        name: text_values(column) if column.type in texts else arrow_values(column)
        for name, column in zip(table.column_names, table.columns, strict=True)
    }
    if reading.event_type is None and reading.type_col in columns:
        type_column = table.column(reading.type_col)
        if type_column.type in texts:  # the type is the stripped cell, as the CSV reader says
            cells = type_column.to_pylist()
            columns[reading.type_col] = [None if c is None else c.strip() or None for c in cells]

    def records(bad: list[int]) -> list[dict[str, object]]:
        rows: list[dict[str, object]] = table.take(pa.array(bad, pa.int64())).to_pylist()
        return rows

    numbers = range(1, table.num_rows + 1)
    return assemble_columns(columns, numbers, records, options, source="<spark>")


def read_rows(
    items: Sequence[object],
    reading: Reading,
    numeric: Mapping[str, Iterable[str]] | None,
    source: str = "<spark>",
) -> Any:
    """Events and rejected rows (numbered from 1 in ``items``) of JSON texts or mappings."""
    from trendagg.io.assemble import from_mappings
    from trendagg.io.batch import RejectedRow
    from trendagg.io.jsonl import parse_json_line
    from trendagg.io.options import ReadOptions
    from trendagg.io.values import parse_cell, shown

    rejected: list[RejectedRow] = []
    numbered: list[tuple[int, object]] = []
    type_col = reading.type_col if reading.event_type is None else None
    names: set[str] = set()
    for i, item in enumerate(items, start=1):
        if isinstance(item, bytes):  # a line as read from the file: UTF-8, or rejected
            try:
                item = item.decode("utf-8")
            except UnicodeDecodeError as error:
                reason = (
                    f"line is not UTF-8 text (byte 0x{item[error.start]:02x} at column "
                    f"{error.start + 1})"
                )
                text = item.decode("utf-8", "backslashreplace")
                rejected.append(RejectedRow(source, i, reason, {"_text": text}))
                continue
        if isinstance(item, str):
            if not item.strip(" \t\r\n\ufeff"):  # a blank line: skipped, still counted
                continue
            try:
                item = parse_json_line(item.removeprefix("\ufeff"))  # a file's byte order mark
            except ValueError as error:
                rejected.append(RejectedRow(source, i, str(error), {"_text": item}))
                continue
        if isinstance(item, dict):
            if CSV_RAW in item:  # a CSV row whose cells do not fit the header
                line = item.pop(CSV_RAW)
                long = long_csv_row(str(line), reading.csv_header)
                if long is not None:
                    rejected.append(RejectedRow(source, i, *long))
                    continue
            if reading.csv_cells:  # CSV cells; the event type is the stripped text
                item = {
                    k: (v.strip() if k == type_col else parse_cell(v)) if isinstance(v, str) else v
                    for k, v in item.items()
                }
            names.update(item)
        numbered.append((i, item))
    # a column no row has (from_mappings would refuse the whole batch): each row that is
    # an object is rejected for it, as a row lacking it is
    missing = None
    if not reading.event_type and reading.type_col not in names:
        missing = f"no event type in column '{shown(reading.type_col)}'"
    elif reading.time_col not in names:
        missing = f"no time in column '{shown(reading.time_col)}'"
    if missing is not None:
        rejected += [RejectedRow(source, i, missing, x) for i, x in numbered if isinstance(x, dict)]
        numbered = [(i, x) for i, x in numbered if not isinstance(x, dict)]
    options = ReadOptions(reading.type_col, reading.time_col, reading.event_type, numeric)
    what = (
        "line" if items and isinstance(items[0], (str, bytes)) else "record"
    )  # as the readers say
    return from_mappings(numbered, options, source=source, what=what, rejected=rejected)


def column(name: str) -> Any:
    """A column by its name as written, whatever it holds (a dot or a backtick too)."""
    from pyspark.sql import functions as F

    return F.col("`" + name.replace("`", "``") + "`")


def csv_quoting(reader: Any) -> Any:
    """A Spark CSV reader that reads quotes as the local reader does: a quote inside a
    quoted cell is doubled (``"we""ird"`` is ``we"ird``) and a backslash is a character
    (Spark's default escape is the backslash, which refused such a header and read such
    cells otherwise)."""
    return reader.option("quote", '"').option("escape", '"')


def csv_reader(reader: Any, names: Sequence[str], *, header: bool, multiline: bool = False) -> Any:
    """A (batch or stream) CSV reader: every cell as text, headers checked against ``names``,
    and the text of a row whose cell count differs kept in ``CSV_RAW`` (without it Spark
    would drop a long row's extra cells; :func:`long_csv_row` rejects such rows). With
    ``multiline``, a quoted cell may hold line breaks, as the local reader reads it."""
    from pyspark.sql import types as T

    schema = T.StructType([T.StructField(c, T.StringType()) for c in [*names, CSV_RAW]])
    return (
        csv_quoting(reader.schema(schema))
        .option("header", header)
        .option("enforceSchema", False)  # a file whose header differs fails, never misreads
        .option("mode", "PERMISSIVE")
        .option("columnNameOfCorruptRecord", CSV_RAW)
        .option("multiLine", multiline)
    )


def long_csv_row(line: str, names: Sequence[str]) -> tuple[str, dict[str, object]] | None:
    """The CSV reader's reason and record for a row with more cells than the header, or
    None (a shorter row is kept: its absent cells are missing)."""
    from trendagg.io.csv import csv_rows

    cells = next(csv_rows([line]), [])
    if len(cells) <= len(names):
        return None
    record: dict[str, object] = dict(zip(names, cells, strict=False))
    record["_extra"] = cells[len(names) :]
    reason = (
        f"row has {len(cells)} cells but the header has {len(names)} columns; "
        "quote cells that contain commas"
    )
    return reason, record


def json_lines(text: Any, *, keep_blank: bool = False) -> Any:
    """A DataFrame of text lines (``spark.read.text``, the socket source) as the ``RECORD``
    shape; blank lines are skipped, as the JSON Lines reader skips them (``keep_blank``:
    left for :func:`read_rows` to skip, so that the rows keep their line numbers)."""
    from pyspark.sql import functions as F

    if keep_blank:
        return text.select(F.col("value").alias(RECORD))
    return text.where(F.trim(F.col("value")) != "").select(F.col("value").alias(RECORD))


BLANK_LINE = "^[ \t\r\n\ufeff]*$"  # what read_rows skips, as a Spark regular expression


def rejected_row(source: str, row: int, reason: str, text: str) -> Any:
    """A row Spark rejected as the local readers give it: its record (:func:`record_of`)
    and, for a JSON object, its text as written (RejectedRow.text: the rejects file
    writes it as it is, as the local JSON Lines reader does)."""
    from trendagg.io.batch import RejectedRow
    from trendagg.io.jsonl import JSON_BLANKS

    record = record_of(text)
    if "_text" in record and len(record) == 1 and record["_text"] == text:
        return RejectedRow(source, row, reason, record)
    return RejectedRow(source, row, reason, record, text.removeprefix("\ufeff").strip(JSON_BLANKS))


def record_of(text: str) -> dict[str, object]:
    """A rejected row's record from its JSON text, as the local readers write it: the
    object, or ``{"_text": ...}`` for a line that the JSON Lines reader does not take as
    an object (not JSON, a key named twice, an array...)."""
    from trendagg.io.jsonl import parse_json_line

    try:
        value = parse_json_line(text)
    except (TypeError, ValueError):
        return {"_text": text}
    return value if isinstance(value, dict) else {"_text": text}
