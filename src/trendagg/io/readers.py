"""Read events from CSV, JSON Lines and Parquet: whole, or in chunks.

Each format streams its chunks (:mod:`~trendagg.io.csv`, :mod:`~trendagg.io.jsonl`,
:mod:`~trendagg.io.parquet`) and :mod:`~trendagg.io.assemble` applies the rules on
types, times and numeric attributes to each, so that every format obeys the same
contract (docs/semantics.md, "Events"). Nothing is dropped silently: a row that cannot
be an event comes back with its row number, the reason and the raw record.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

from trendagg.errors import InputError
from trendagg.io.batch import ReadResult
from trendagg.io.csv import csv_chunks, header
from trendagg.io.formats import Input, event_format, is_gzip
from trendagg.io.gather import Gather
from trendagg.io.jsonl import jsonl_chunks
from trendagg.io.options import ReadOptions
from trendagg.io.parquet import parquet_chunks, parquet_rows

Numeric = Mapping[str, Iterable[str]] | None

_GATHER_ROWS = 1_000_000  # rows per chunk when read_events gathers a file


def read_events(
    path: str | os.PathLike[str],
    *,
    type_col: str = "type",
    time_col: str = "time",
    event_type: str | None = None,
    fmt: str | None = None,
    numeric: Numeric = None,
    columns: Sequence[str] | None = None,
    attributes: Iterable[str] | None = None,
) -> ReadResult:
    """Read an event file (or a folder of Parquet files) into events: the events in
    source order and every rejected row, by row number, gathered from the chunks of
    :func:`iter_events` into arrays sized once (the file is never held as text).

    ``path`` is a ``.csv`` or ``.jsonl``/``.ndjson``/``.json`` (JSON Lines) file, each
    optionally gzip-compressed (``.gz``, also detected from the content), a
    ``.parquet``/``.pq`` file, or a folder of Parquet files read as one dataset (hive
    partition folders ``key=value`` add a column). ``fmt`` (``'csv'``, ``'jsonl'`` or
    ``'parquet'``) is inferred from the extension when None. The other keywords are
    those of :class:`~trendagg.io.options.ReadOptions`: ``attributes`` keeps only these
    attribute columns (and those of ``numeric``), for example
    :func:`~trendagg.plan.compile.attributes_read` of a workload; the others are not
    converted (rejected rows still show every cell).

    Raises InputError when the file does not exist, its format is unknown, it cannot be
    parsed at all, it lacks the time column or (without ``event_type``) the type column,
    or ``event_type`` is empty.
    """
    options = ReadOptions(type_col, time_col, event_type, numeric, columns, attributes)
    file, names, chunks = _open(path, fmt, options, _GATHER_ROWS)
    gather = Gather(_capacity(file, names))
    for chunk in chunks:
        gather.add(chunk)
    return gather.result(file.source)


def iter_events(
    path: str | os.PathLike[str],
    *,
    type_col: str = "type",
    time_col: str = "time",
    event_type: str | None = None,
    fmt: str | None = None,
    numeric: Numeric = None,
    columns: Sequence[str] | None = None,
    attributes: Iterable[str] | None = None,
    chunk_rows: int = 1_000_000,
) -> Iterator[ReadResult]:
    """The events and rejected rows of :func:`read_events` in chunks of ``chunk_rows``
    source rows, in file order (row numbers go on across chunks; each chunk has its own
    type codes; a chunk never spans two files of a dataset). CSV is streamed by pyarrow
    (from the chunk where a row does not fit the header, by Python's ``csv``), JSON Lines
    by lines, Parquet by record batches. Errors of the arguments are raised at once,
    those of the content when the chunk that holds them is read. At least one chunk.
    """
    if chunk_rows < 1:
        raise InputError(f"chunk_rows must be at least 1, not {chunk_rows}")
    options = ReadOptions(type_col, time_col, event_type, numeric, columns, attributes)
    return _open(path, fmt, options, chunk_rows)[2]


def _open(
    path: str | os.PathLike[str], fmt: str | None, options: ReadOptions, chunk_rows: int
) -> tuple[Input, list[str] | None, Iterator[ReadResult]]:
    """The checks every reader makes first, with their messages, then the input, the
    column names of a CSV file (its header row, or the given names) and its chunks."""
    options.check()
    location = Path(path)
    source = os.fspath(path)
    if not location.exists():
        raise InputError(f"event file '{source}' does not exist; check the path")
    kind = event_format(location, fmt)
    if kind == "parquet":
        file = Input(location, source, kind)
        return file, None, parquet_chunks(file, options, chunk_rows)
    if location.is_dir():
        raise InputError(
            f"'{source}' is a folder; only Parquet datasets can be read from a folder, "
            f"so pass one {kind} file or fmt='parquet'"
        )
    if options.columns is not None and kind != "csv":
        raise InputError(
            f"column names are for CSV files without a header row; {source} is {kind}, "
            "whose columns are named in the file"
        )
    file = Input(location, source, kind, is_gzip(location))
    if kind == "jsonl":
        return file, None, jsonl_chunks(file, options, chunk_rows)
    columns = header(file, options.columns)
    options.check_columns(columns, source)
    return file, columns, csv_chunks(file, columns, options, chunk_rows)


def _capacity(file: Input, columns: list[str] | None) -> int:
    """How many rows the file may hold (CSV: a byte per column and row, JSON Lines: 10
    bytes per event, Parquet: its metadata); only a hint, the gatherer grows past it."""
    try:
        if file.kind == "parquet":
            return parquet_rows(file.location, file.source)
        size = file.location.stat().st_size
        if file.gzipped:
            with file.location.open("rb") as handle:  # the gzip trailer: size modulo 2**32
                handle.seek(-4, os.SEEK_END)
                size = max(size, int.from_bytes(handle.read(4), "little"))
        return size // (10 if columns is None else max(1, len(columns))) + 2
    except Exception:  # (the read itself says what is wrong)
        return _GATHER_ROWS


__all__ = ["iter_events", "read_events"]
