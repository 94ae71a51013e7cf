"""Read CSV and Parquet straight into arrays, with exactly the rules of ``read_events``.

:func:`read_columnar` returns a :class:`~trendagg.io.columnar.ColumnarBatch`
whose :meth:`~trendagg.io.columnar.ColumnarBatch.to_events` equals what
:func:`~trendagg.io.readers.read_events` returns for the same file, value by
value (int, float, text, missing), with the same rejected rows, without a
Python object per cell on clean files. :func:`iter_columnar` yields the same
events chunk by chunk, in flat memory; :func:`read_columnar` gathers those
chunks into arrays sized once, so that it never holds the whole file as text.

pyarrow streams the file (CSV with every column as text and the options of
``read_events``, Parquet by record batches); each chunk goes through
:func:`~trendagg.io.columnar_assemble.assemble_table`. What the arrays cannot
decide is read by the Python readers, and converted with
:meth:`~trendagg.io.columnar.ColumnarBatch.from_events`:

- JSON Lines: ``read_events`` whole.
- A CSV file whose rows do not all fit the header, or that pyarrow cannot
  read: Python's ``csv`` module, as ``read_events`` does (from the start of
  the file; :func:`iter_columnar` goes on from the chunk where pyarrow
  stopped).
- A chunk that :func:`assemble_table` cannot decide (long integer times,
  unusual Arrow types for the type or time column): that chunk's table with
  the rules of ``readers._read_csv`` or ``readers.read_arrow``.
- Any input ``read_events`` refuses: ``read_events``, for its message.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from trendagg.errors import InputError
from trendagg.io.assemble import assemble, check_columns
from trendagg.io.batch import RejectedRow
from trendagg.io.columnar import Column, ColumnarBatch, ColumnarResult, column_of, times_of
from trendagg.io.columnar_assemble import Undecided, assemble_table, has_byte
from trendagg.io.formats import is_gzip
from trendagg.io.readers import (
    _check_quotes,
    _csv_header,
    _given_header,
    _not_utf8,
    _parquet_table,
    _text_column,
    _text_lines,
    assemble_text,
    csv_failure,
    keep_row,
    locate,
    read_arrow,
    read_events,
)

if TYPE_CHECKING:
    import pyarrow as pa

Numeric = Mapping[str, Iterable[str]] | None

_GATHER_ROWS = 1_000_000  # rows per chunk when read_columnar gathers a file
_BLOCK_BYTES = 1 << 20  # pyarrow's CSV block: larger blocks parse slower
_EXACT_FLOAT_INT = 2**53


class _Restart(Exception):
    """pyarrow stopped after a chunk was used: read the whole file with ``read_events``."""


@dataclass(frozen=True)
class _Source:
    """A checked input and the reading options."""

    path: str | os.PathLike[str]
    location: Path
    source: str
    kind: str
    fmt: str | None
    gzipped: bool
    header: list[str] | None  # CSV: the header row or the given names
    names: list[str] | None  # CSV without a header row: the given names
    type_col: str
    time_col: str
    event_type: str | None
    numeric: Numeric
    attributes: frozenset[str] | None = None  # the attribute columns kept (None: all)


def read_columnar(
    path: str | os.PathLike[str],
    *,
    fmt: str | None = None,
    type_col: str = "type",
    time_col: str = "time",
    numeric: Numeric = None,
    event_type: str | None = None,
    names: Sequence[str] | None = None,
    attributes: Iterable[str] | None = None,
) -> ColumnarResult:
    """Read an event file into arrays, with the rules of :func:`read_events`.

    Parameters are those of :func:`~trendagg.io.readers.read_events`
    (``names`` is its ``columns``: the column names of a CSV file without a
    header row). ``result.events.to_events()`` equals
    ``read_events(...).events`` and ``result.rejected`` its rejected rows.
    ``attributes``: keep only these attribute columns (and those of
    ``numeric``), for example
    :func:`~trendagg.plan.compile.attributes_read` of a workload: the others
    are not converted (rejected rows still show every cell), and the events
    equal ``read_events``' without them.

    Raises
    ------
    InputError
        As :func:`~trendagg.io.readers.read_events` does.
    """
    plan = _plan(path, fmt, type_col, time_col, event_type, names, numeric, attributes)
    if plan.kind == "jsonl":
        return _project(_slow(plan), plan)
    gather = _Gather(_capacity(plan))
    try:
        for chunk in _chunks(plan, _GATHER_ROWS, strict=True):
            gather.add(_project(chunk, plan))
    except _Restart:
        return _project(_slow(plan), plan)
    return gather.result(plan.source)


def iter_columnar(
    path: str | os.PathLike[str],
    *,
    fmt: str | None = None,
    type_col: str = "type",
    time_col: str = "time",
    numeric: Numeric = None,
    event_type: str | None = None,
    names: Sequence[str] | None = None,
    chunk_rows: int = 1_000_000,
    attributes: Iterable[str] | None = None,
) -> Iterator[ColumnarResult]:
    """Read an event file in chunks of ``chunk_rows`` source rows, in file order.

    Together the chunks hold the events and rejected rows of
    :func:`read_columnar` (row numbers continue across chunks); each chunk
    has its own type codes. CSV is streamed by pyarrow (a file whose rows do
    not all fit the header continues with Python's ``csv`` module from the
    chunk where pyarrow met such a row), Parquet by record batches (a chunk
    never spans two files of a dataset), JSON Lines is read whole and then
    cut. Argument errors are raised at once, errors of the content (an
    unclosed quote, a file that is not UTF-8) when the chunk that holds them
    is read. At least one chunk is yielded. ``attributes`` as for
    :func:`read_columnar`.
    """
    if chunk_rows < 1:
        raise InputError(f"chunk_rows must be at least 1, not {chunk_rows}")
    plan = _plan(path, fmt, type_col, time_col, event_type, names, numeric, attributes)
    if plan.kind == "jsonl":
        chunks = _cut(_slow(plan), chunk_rows)
    else:
        chunks = _chunks(plan, chunk_rows, strict=False)
    return (_project(chunk, plan) for chunk in chunks)


def _project(result: ColumnarResult, plan: _Source) -> ColumnarResult:
    """The result with only the attribute columns the plan keeps."""
    keep = plan.attributes
    columns = result.events.columns
    if keep is None or keep.issuperset(columns):
        return result
    events = replace(result.events, columns={k: v for k, v in columns.items() if k in keep})
    return ColumnarResult(events, result.rejected)


def _plan(
    path: str | os.PathLike[str],
    fmt: str | None,
    type_col: str,
    time_col: str,
    event_type: str | None,
    names: Sequence[str] | None,
    numeric: Numeric,
    attributes: Iterable[str] | None = None,
) -> _Source:
    """Check the arguments and the file as ``read_events`` does, with its messages."""
    location, source, kind = locate(path, fmt, event_type)
    gzipped = False
    header = given = None
    if kind != "parquet":
        if location.is_dir() or (names is not None and kind != "csv"):
            read_events(path, fmt=fmt, columns=names)  # raises read_events' message
        gzipped = is_gzip(location)
    if kind == "csv":
        given = None if names is None else _given_header(list(names), source)
        header = given if given is not None else _csv_header(location, source, gzipped)
        check_columns(
            header, source=source, type_col=type_col, time_col=time_col, event_type=event_type
        )
    keep = None
    if attributes is not None:
        keep = frozenset(attributes).union(*(numeric or {}).values())
    return _Source(
        path, location, source, kind, fmt, gzipped, header, given, type_col, time_col,
        event_type, numeric, keep,
    )  # fmt: skip


def _slow(plan: _Source) -> ColumnarResult:
    """The existing reader, converted: always right, slower."""
    result = read_events(
        plan.path,
        type_col=plan.type_col,
        time_col=plan.time_col,
        event_type=plan.event_type,
        fmt=plan.fmt,
        numeric=plan.numeric,
        columns=plan.names,
    )
    return ColumnarResult(ColumnarBatch.from_events(result.events), result.rejected)


def _cut(result: ColumnarResult, chunk_rows: int) -> Iterator[ColumnarResult]:
    """Chunks of ``chunk_rows`` events of a whole result; each rejected row goes with
    the first chunk whose last event comes after it (else the last chunk)."""
    events = result.events
    n = len(events)
    starts = list(range(0, n, chunk_rows)) or [0]
    assert events.rows is not None
    bounds = [int(events.rows[min(s + chunk_rows, n) - 1]) for s in starts[:-1]]
    taken = 0
    for k, start in enumerate(starts):
        last = k == len(starts) - 1
        mine = [r for r in result.rejected[taken:] if last or r.row < bounds[k]]
        taken += len(mine)
        yield ColumnarResult(events.take(np.arange(start, min(start + chunk_rows, n))), mine)


def _chunks(plan: _Source, chunk_rows: int, *, strict: bool) -> Iterator[ColumnarResult]:
    """The chunks of a CSV or Parquet file. ``strict``: raise :class:`_Restart` rather
    than go on row by row after pyarrow stopped in the middle of a CSV file."""
    if plan.kind == "csv":
        return _csv_chunks(plan, chunk_rows, strict=strict)
    return _parquet_chunks(plan, chunk_rows)


def _capacity(plan: _Source) -> int:
    """How many rows the file may hold, at most when it can tell (CSV: every row has at
    least one byte per column; Parquet: its metadata); the gatherer grows past it."""
    try:
        if plan.kind == "parquet":
            import pyarrow.parquet as pq

            files = [path for path, _ in _parquet_files(plan)]
            return sum(pq.ParquetFile(path).metadata.num_rows for path in files)
        size = plan.location.stat().st_size
        if plan.gzipped:
            with plan.location.open("rb") as handle:  # the gzip trailer: size modulo 2**32
                handle.seek(-4, os.SEEK_END)
                size = max(size, int.from_bytes(handle.read(4), "little"))
        assert plan.header is not None
        return size // max(1, len(plan.header)) + 2
    except Exception:  # only a hint: the read itself reports what is wrong
        return _GATHER_ROWS


# ----------------------------------------------------------------------------- CSV


def _csv_chunks(plan: _Source, chunk_rows: int, *, strict: bool) -> Iterator[ColumnarResult]:
    """Stream a CSV file with pyarrow, chunk by chunk; where pyarrow cannot go on, go on
    with Python's ``csv`` from the chunk it stopped in (as ``read_events`` would for the
    whole file)."""
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    irregular: list[object] = []

    def on_invalid_row(row: object) -> str:
        irregular.append(row)
        return "skip"

    assert plan.header is not None
    read = pa_csv.ReadOptions(
        column_names=plan.names, use_threads=_threads(), block_size=_BLOCK_BYTES
    )
    parse = pa_csv.ParseOptions(newlines_in_values=True, invalid_row_handler=on_invalid_row)
    convert = pa_csv.ConvertOptions(
        column_types={name: pa.string() for name in plan.header},
        strings_can_be_null=False,
        quoted_strings_can_be_null=False,
    )
    done = 0  # source rows yielded so far
    quotes_checked = [False]
    try:
        with _stream(plan) as stream:
            reader = pa_csv.open_csv(
                stream, read_options=read, parse_options=parse, convert_options=convert
            )
            if reader.schema.names != plan.header:
                raise Undecided
            pending: list[pa.RecordBatch] = []
            size = 0
            for batch in reader:
                pending.append(batch)
                size += batch.num_rows
                if irregular:
                    raise Undecided
                while size >= chunk_rows:
                    pending, size, piece = _split(pending, chunk_rows, reader.schema)
                    yield _text_table(piece, plan, done + 1, quotes_checked)
                    done += piece.num_rows
            if irregular:
                raise Undecided
            if size or not done:
                piece = pa.Table.from_batches(pending, schema=reader.schema)
                yield _text_table(piece, plan, done + 1, quotes_checked)
    except (Undecided, pa.ArrowException, OSError):
        if strict and done:
            raise _Restart from None
        yield from _python_csv_chunks(plan, chunk_rows, skip=done)


def _split(
    batches: list[pa.RecordBatch], rows: int, schema: pa.Schema
) -> tuple[list[pa.RecordBatch], int, pa.Table]:
    """The first ``rows`` rows of some batches as a table, and the batches left."""
    import pyarrow as pa

    table = pa.Table.from_batches(batches, schema=schema)
    rest = table.slice(rows)
    return rest.to_batches(), rest.num_rows, table.slice(0, rows)


def _threads() -> bool:
    """Whether pyarrow may use threads (its serial CSV reader is faster on one thread)."""
    import pyarrow as pa

    return bool(pa.cpu_count() > 1)


def _stream(plan: _Source) -> Any:
    import pyarrow as pa

    return pa.input_stream(str(plan.location), compression="gzip" if plan.gzipped else None)


def _text_table(
    table: pa.Table, plan: _Source, first_row: int, quotes_checked: list[bool]
) -> ColumnarResult:
    """Events of a table of CSV text (the rows ``first_row``, ``first_row + 1``, ...)."""
    if not quotes_checked[0] and any(has_byte(column, ord("\n")) for column in table.columns):
        _check_quotes(plan.location, plan.source, plan.gzipped)
        quotes_checked[0] = True
    try:
        return _assemble(table, plan, first_row, text=True)
    except Undecided:
        return _text_table_slow(table, plan, first_row)


def _text_table_slow(table: pa.Table, plan: _Source, first_row: int) -> ColumnarResult:
    """What ``readers._read_csv`` does with the table pyarrow read: Python values."""
    header = table.column_names
    columns: dict[str, list[object]] = {}
    for name, column in zip(header, table.columns, strict=True):
        if name == plan.type_col and plan.event_type is None:
            columns[name] = [text.strip() or None for text in column.to_pylist()]
        else:
            columns[name] = _text_column(column)

    def record_of(i: int) -> dict[str, object]:
        record: dict[str, object] = table.slice(i, 1).to_pylist()[0]
        return record

    result = assemble(
        source=plan.source,
        names=header,
        columns=columns,
        rows=list(range(first_row, first_row + table.num_rows)),
        record_of=record_of,
        type_col=plan.type_col,
        time_col=plan.time_col,
        event_type=plan.event_type,
        numeric=plan.numeric,
    )
    return ColumnarResult(ColumnarBatch.from_events(result.events), result.rejected)


def _python_csv_chunks(plan: _Source, chunk_rows: int, *, skip: int) -> Iterator[ColumnarResult]:
    """``readers._read_csv_python`` in chunks, from data row ``skip + 1``."""
    assert plan.header is not None
    header = plan.header
    quotes_checked = [False]
    need_one = not skip
    reader = None
    try:
        with _text_lines(plan.location, plan.gzipped) as handle:
            reader = csv.reader(handle)
            if plan.names is None:
                next((record for record in reader if record), [])
            row = 0
            raw: list[list[str | None]] = [[] for _ in header]
            rows: list[int] = []
            rejected: list[RejectedRow] = []
            for cells in reader:
                if not cells:
                    continue
                row += 1
                if row <= skip:
                    continue
                keep_row(header, cells, row, raw, rows, rejected, plan.source)
                if row - skip >= chunk_rows:
                    yield _python_chunk(plan, raw, rows, rejected, quotes_checked)
                    need_one = False
                    skip = row
                    raw, rows, rejected = [[] for _ in header], [], []
            if rows or rejected or need_one:
                yield _python_chunk(plan, raw, rows, rejected, quotes_checked)
    except UnicodeDecodeError as error:
        raise _not_utf8(plan.source, error) from None
    except (csv.Error, OSError, EOFError) as error:
        raise csv_failure(plan.source, reader, error) from None


def _python_chunk(
    plan: _Source,
    raw: list[list[str | None]],
    rows: list[int],
    rejected: list[RejectedRow],
    quotes_checked: list[bool],
) -> ColumnarResult:
    """One chunk of rows read by Python's ``csv``, with ``_read_csv_python``'s rules."""
    assert plan.header is not None
    header = plan.header
    if not quotes_checked[0] and any("\n" in text for values in raw for text in values if text):
        _check_quotes(plan.location, plan.source, plan.gzipped)
        quotes_checked[0] = True
    result = assemble_text(
        header,
        raw,
        rows,
        rejected,
        plan.source,
        plan.type_col,
        plan.time_col,
        plan.event_type,
        plan.numeric,
    )
    return ColumnarResult(ColumnarBatch.from_events(result.events), result.rejected)


# ----------------------------------------------------------------------------- Parquet


def _parquet_chunks(plan: _Source, chunk_rows: int) -> Iterator[ColumnarResult]:
    """Record batches of the file (or of each file of a dataset folder, with its hive
    partition keys as columns), as ``read_events`` reads them."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    for source, keys in _parquet_files(plan):
        sourced = replace(plan, source=source)
        try:
            handle = pq.ParquetFile(source)
        except (pa.ArrowException, OSError, ValueError):
            whole = _with_keys(_parquet_table(source, source), keys)  # raises its message
            for start in range(0, max(whole.num_rows, 1), chunk_rows):
                yield _typed_table(whole.slice(start, chunk_rows), sourced, start + 1)
            continue
        row = 1
        for batch in handle.iter_batches(batch_size=chunk_rows):
            table = _with_keys(pa.Table.from_batches([batch]), keys)
            yield _typed_table(table, sourced, row)
            row += batch.num_rows
        if row == 1:  # no rows: the columns are still checked
            yield _typed_table(_with_keys(handle.schema_arrow.empty_table(), keys), sourced, 1)


def _parquet_files(plan: _Source) -> list[tuple[str, dict[str, object]]]:
    """(path, hive partition keys) of the file or of each file of the folder, sorted."""
    if not plan.location.is_dir():
        return [(plan.source, {})]
    import pyarrow as pa
    import pyarrow.dataset as ds

    try:
        dataset = ds.dataset(str(plan.location), format="parquet", partitioning="hive")
        fragments = sorted(dataset.get_fragments(), key=lambda fragment: fragment.path)
    except (pa.ArrowException, OSError, ValueError):
        fragments = []
    if not fragments:
        _slow(plan)  # raises read_events' message
    return [
        (fragment.path, ds.get_partition_keys(fragment.partition_expression))
        for fragment in fragments
    ]


def _with_keys(table: pa.Table, keys: Mapping[str, object]) -> pa.Table:
    import pyarrow as pa

    for key, value in keys.items():
        if key not in table.column_names:
            table = table.append_column(key, pa.array([value] * table.num_rows))
    return table


def _assemble(table: pa.Table, plan: _Source, first_row: int, *, text: bool) -> ColumnarResult:
    return assemble_table(
        table,
        source=plan.source,
        type_col=plan.type_col,
        time_col=plan.time_col,
        event_type=plan.event_type,
        numeric=plan.numeric,
        text=text,
        first_row=first_row,
        attributes=plan.attributes,
    )


def _typed_table(table: pa.Table, plan: _Source, first_row: int) -> ColumnarResult:
    """A batch of Parquet rows; what the arrays cannot decide, by ``read_arrow``."""
    try:
        return _assemble(table, plan, first_row, text=False)
    except Undecided:
        result = read_arrow(
            table,
            source=plan.source,
            type_col=plan.type_col,
            time_col=plan.time_col,
            event_type=plan.event_type,
            numeric=plan.numeric,
        )
        events = ColumnarBatch.from_events(result.events)
        assert events.rows is not None
        events.rows += first_row - 1
        rejected = [replace(r, row=r.row + first_row - 1) for r in result.rejected]
        return ColumnarResult(events, rejected)


# ----------------------------------------------------------------------------- gathering


class _Gather:
    """Chunks of events into one batch, in arrays allocated once for ``capacity`` rows
    (untouched capacity costs no memory) and doubled if that is not enough."""

    def __init__(self, capacity: int) -> None:
        self.capacity = max(int(capacity), 16)
        self.size = 0
        self.type_ids: dict[str, int] = {}
        self.types = np.empty(self.capacity, np.int32)
        self.rows = np.empty(self.capacity, np.int64)
        self.times: np.ndarray = np.empty(self.capacity, np.int64)
        self.time_ints: np.ndarray | None = None  # with float64 times
        self.exact: list[int | float] | None = None  # when no array holds the times
        self.columns: dict[str, _GatherColumn] = {}
        self.rejected: list[RejectedRow] = []

    def add(self, chunk: ColumnarResult) -> None:
        batch = chunk.events
        self.rejected.extend(chunk.rejected)
        start, end = self.size, self.size + len(batch)
        if end > self.capacity:
            self._grow(end)
        remap = [self.type_ids.setdefault(name, len(self.type_ids)) for name in batch.type_names]
        self.types[start:end] = np.array(remap or [0], np.int32)[batch.types]
        assert batch.rows is not None
        self.rows[start:end] = batch.rows
        self._add_times(batch, start, end)
        for name in batch.columns:
            if name not in self.columns:
                self.columns[name] = _GatherColumn(self.capacity)
        for name, column in self.columns.items():
            column.add(batch.columns.get(name), start, end)
        self.size = end

    def _add_times(self, batch: ColumnarBatch, start: int, end: int) -> None:
        if self.exact is None and batch.exact_times is None:
            ints = batch.times.dtype == np.int64
            if ints and self.time_ints is None:  # ints so far, ints here
                self.times[start:end] = batch.times
                return
            fits = not ints or not np.any(np.abs(batch.times) > _EXACT_FLOAT_INT)
            if fits and self._floats(start):  # floats somewhere: ints beside them as floats
                assert self.time_ints is not None
                self.times[start:end] = batch.times
                whole = True if ints else batch.time_ints
                self.time_ints[start:end] = False if whole is None else whole
                return
        if self.exact is None:  # integers beyond 2**53 beside fractions: Python's numbers
            self.exact = self._time_list(start)
        self.exact.extend(batch.time_values())

    def _floats(self, start: int) -> bool:
        """Turn the int64 times so far into floats (and their mask); False when they do
        not all fit a float exactly."""
        if self.time_ints is not None:
            return True
        if np.any(np.abs(self.times[:start]) > _EXACT_FLOAT_INT):
            return False
        floats = np.empty(self.capacity, np.float64)
        floats[:start] = self.times[:start]
        self.times = floats
        self.time_ints = np.zeros(self.capacity, np.bool_)
        self.time_ints[:start] = True
        return True

    def _time_list(self, size: int) -> list[int | float]:
        times = self.times[:size].tolist()
        if self.time_ints is None:
            return times  # type: ignore[no-any-return]
        return [
            int(t) if whole else t
            for t, whole in zip(times, self.time_ints[:size].tolist(), strict=True)
        ]

    def _grow(self, need: int) -> None:
        self.capacity = max(need, 2 * self.capacity)
        self.types = _grown(self.types, self.capacity, self.size)
        self.rows = _grown(self.rows, self.capacity, self.size)
        self.times = _grown(self.times, self.capacity, self.size)
        if self.time_ints is not None:
            self.time_ints = _grown(self.time_ints, self.capacity, self.size)
        for column in self.columns.values():
            column.grow(self.capacity, self.size)

    def result(self, source: str) -> ColumnarResult:
        n = self.size
        time_ints = None
        exact = None
        if self.exact is not None:
            times, time_ints, exact = times_of(self.exact)
        else:
            times = self.times[:n]
            if self.time_ints is not None and self.time_ints[:n].any():
                time_ints = self.time_ints[:n]
        batch = ColumnarBatch(
            types=self.types[:n],
            type_names=list(self.type_ids),
            times=times,
            columns={name: column.result(n) for name, column in self.columns.items()},
            rows=self.rows[:n],
            source=source,
            time_ints=time_ints,
            exact_times=exact,
        )
        return ColumnarResult(batch, self.rejected)


class _GatherColumn:
    """One attribute column being gathered: arrays while the chunks agree on its kind,
    else the value model's list (``mixed``)."""

    def __init__(self, capacity: int) -> None:
        self.kind: str | None = None  # None until a chunk has the column
        self.values: Any = None
        self.valid = np.zeros(capacity, np.bool_)
        self.words: dict[str, int] = {}

    def add(self, column: Column | None, start: int, end: int) -> None:
        if column is None:  # missing for these rows (a file of a dataset without it)
            if self.kind == "mixed":
                self.values.extend([None] * (end - start))
            return
        self.valid[start:end] = column.valid
        if self.kind is None and column.kind != "mixed":
            self.kind = column.kind
            dtype = {"int": np.int64, "float": np.float64, "text": np.int32}[column.kind]
            self.values = np.zeros(len(self.valid), dtype)
        if self.kind == column.kind and column.kind in ("int", "float"):
            self.values[start:end] = column.values
        elif self.kind == column.kind == "text":
            assert column.dictionary is not None
            remap = [self.words.setdefault(word, len(self.words)) for word in column.dictionary]
            self.values[start:end] = np.array(remap or [0], np.int32)[column.values]
        else:
            if self.kind != "mixed":
                self.values = self._list(start)
                self.kind = "mixed"
            self.values.extend(column.python_values())

    def _list(self, size: int) -> list[object]:
        if self.kind is None:
            return [None] * size
        words = list(self.words) if self.kind == "text" else None
        return Column(self.kind, self.values[:size], self.valid[:size], words).python_values()

    def grow(self, capacity: int, size: int) -> None:
        self.valid = _grown(self.valid, capacity, size)
        if isinstance(self.values, np.ndarray):
            self.values = _grown(self.values, capacity, size)

    def result(self, n: int) -> Column:
        if self.kind == "mixed":
            return column_of(self.values)
        if self.kind == "text":
            return Column("text", self.values[:n], self.valid[:n], list(self.words))
        assert self.kind is not None
        return Column(self.kind, self.values[:n], self.valid[:n])


def _grown(array: np.ndarray, capacity: int, size: int) -> np.ndarray:
    bigger = np.zeros(capacity, array.dtype)
    bigger[:size] = array[:size]
    return bigger


__all__ = ["ColumnarResult", "iter_columnar", "read_columnar"]
