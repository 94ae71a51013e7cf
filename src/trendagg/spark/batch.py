"""Batch trend aggregation on Spark: Spark reads and moves the events; trendagg computes.

One job, one shuffle, and the input read once:

1. **Read and route** (``mapInArrow`` over the input's own partitions, no shuffle
   before it): each Arrow batch is read into the engine's arrays with the local
   readers' rules (``records.read_table``); its rejected rows leave here, each once,
   with Spark's row id (``monotonically_increasing_id``'s: input partition << 33 and
   the row's place in it). Queries are grouped by their unqualified partition
   attributes (see :mod:`trendagg.spark.partials`); the events each group reads (its
   types, every key attribute present) are split by a hash of their key values *as
   the engine reads them* (1 and 1.0 meet; a word is hashed by its UTF-8 bytes, the
   same in every process) into ``partitions`` buckets, and each bucket's events of the
   batch leave as one row: the pickled :class:`~trendagg.io.batch.EventBatch`.
2. **Shuffle**: the rows go to the Spark partition of their bucket (the bucket's
   label is a number whose Spark hash picks that partition: one bucket per
   partition). Spark moves a few large byte rows, not one row per event.
3. **Run** (``mapInArrow``): each task gathers its bucket's batches in row order,
   and one :class:`~trendagg.engine.Runner` per query group runs them (it orders
   them by time, ties in row order, as the local engine orders a file). The result
   rows leave pickled, exact (their registers too).

The driver collects the (small) output: result rows, rejected rows, and the rows per
input partition (for the rejects' row numbers). A (query, window, group) whose events
were run in several buckets comes as several partial rows, combined with the plan's
own ``combine_rows``. :func:`trend_aggregation` returns the results as a DataFrame
with the columns

    query         string
    window_start  epoch seconds: bigint when every bound is a whole second, else double;
                  when the time column is a timestamp or a date, timestamp (and
                  timestamp_ntz for timestamp_ntz), to the microsecond, as Spark's
                  ``window`` gives its bounds
    window_end    same type as window_start
    <group attributes>, then <output values> of every query, in workload order,
    each typed by its values with the Parquet writer's rule (one rule, see
    :mod:`trendagg.spark.result_types`): bigint when every integer fits 64 bits,
    decimal(38,0) when it fits 38 digits, else string (the exact digits);
    double for values that are not integers; string for strings and mixes.

A cell is null where the query of the row has no such column.

A task holds its bucket's events in memory (as arrays: about 100 bytes per event
here) while it runs them; more ``partitions`` make the buckets smaller.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from trendagg.errors import wrong_argument
from trendagg.io.csv import csv_rows
from trendagg.io.options import ReadOptions
from trendagg.io.rejects import record_json
from trendagg.plan.routing import group_events
from trendagg.spark.inputs import CheckedInput, check_input
from trendagg.spark.partials import ARROW_ROWS, check_frame_columns, prepare
from trendagg.spark.records import (
    CSV_RAW,
    RECORD,
    Reading,
    column,
    csv_reader,
    json_lines,
    long_csv_row,
    read_table,
)

# What leaves a task: per row its kind and what that kind carries (KEYS: in ``rows``, the
# distinct partition keys a bucket ran for a query group)
EVENTS, RESULTS, REJECT, COUNT, KEYS = 0, 1, 2, 3, 4
_OUT = (
    "kind tinyint, label bigint, seq bigint, blob binary, row_id bigint, reason string, "
    "record string, rows bigint, blank bigint"
)
_NAMES = ("kind", "label", "seq", "blob", "row_id", "reason", "record", "rows", "blank")
_RESULT_ROWS = 20_000  # result rows per output row of a task


def _out_schema(pa: Any) -> Any:
    return pa.schema(
        [
            ("kind", pa.int8()),
            ("label", pa.int64()),
            ("seq", pa.int64()),
            ("blob", pa.large_binary()),  # (Spark takes it as binary; 5x quicker to build)
            ("row_id", pa.int64()),
            ("reason", pa.string()),
            ("record", pa.string()),
            ("rows", pa.int64()),
            ("blank", pa.int64()),
        ]
    )


def _out_batch(pa: Any, kind: int, n: int, **cells: Any) -> Any:
    """``n`` output rows of ``kind``; the cells not given are null."""
    schema = _out_schema(pa)
    arrays = []
    for field in schema:
        if field.name == "kind":
            arrays.append(pa.array([kind] * n, pa.int8()))
        elif field.name in cells:
            arrays.append(pa.array(cells[field.name], field.type))
        else:
            arrays.append(pa.nulls(n, field.type))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


# ----------------------------------------------------------------------------- step 1


@dataclass
class ReadBatch:
    """One input Arrow batch as read: its rows (the input's columns), the engine's reading
    of them (events numbered by their row in ``table``), each row's Spark row id, the
    rejected rows (row id, reason, record as JSON, 1 when that record lacks the columns
    no query reads) and the blank lines of JSON Lines."""

    table: Any
    read: Any
    ids: Any
    rejected: list[tuple[int, str, str, int]]
    blank: int


def read_batch(rb: Any, ids: Any, numeric: Any, reading: Reading, pruned: bool) -> ReadBatch:
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    table = pa.Table.from_batches([rb])
    if reading.renamed:  # the names Spark could not carry, back
        original = dict(reading.renamed)
        table = table.rename_columns([original.get(n, n) for n in table.column_names])
    bad: list[tuple[int, str, str, int]] = []
    short: dict[int, dict[str, object]] = {}  # row -> cells of a row shorter than the header
    if CSV_RAW in table.column_names:
        raw = table.column(CSV_RAW)
        table = table.drop_columns([CSV_RAW])
        header = list(reading.csv_header) or table.column_names  # (the file's, every column)
        kept = np.ones(len(ids), np.bool_)
        # Spark keeps the text of a row whose cell count differs: the rare rows to check
        for n in np.flatnonzero(pc.is_valid(raw).to_numpy(zero_copy_only=False)).tolist():
            line = str(raw[n].as_py())
            found = long_csv_row(line, header)
            if found is not None:
                kept[n] = False
                bad.append((int(ids[n]), found[0], record_json(found[1]), 0))
            else:  # its record, as the local reader has it: the cells it has
                short[n] = dict(zip(header, next(csv_rows([line]), []), strict=False))
        if not kept.all():
            position = np.cumsum(kept) - 1
            short = {int(position[n]): cells for n, cells in short.items()}
            table = table.filter(pa.array(kept))
            ids = ids[kept]
    blank = 0
    if RECORD in table.column_names:  # blank lines count for the line numbers only
        blanks = " \t\r\n\ufeff"
        for line in table.column(RECORD).to_pylist():
            text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
            if text is not None and not text.strip(blanks):
                blank += 1
    read = read_table(table, reading, numeric)
    partial = int(pruned and RECORD not in table.column_names)
    for x in read.rejected:
        cells = short.get(x.row - 1)
        text = record_text(table, x.row, reading.csv_cells) if cells is None else record_json(cells)
        bad.append((int(ids[x.row - 1]), x.reason, text, partial))
    return ReadBatch(table, read, ids, bad, blank)


def record_text(table: Any, row: int, csv: bool = False) -> str:
    """Row ``row`` (from 1) as JSON text for the rejects, as the local readers write it: a
    JSON line as it was, typed cells as a JSON object (:func:`record_json`); with
    ``csv``, an empty cell (which Spark reads as null) is the empty text it was."""
    record = table.slice(row - 1, 1).to_pylist()[0]
    if RECORD in record:
        text = record[RECORD]
        return text.decode("utf-8", "backslashreplace") if isinstance(text, bytes) else str(text)
    if csv:
        record = {name: "" if value is None else value for name, value in record.items()}
    return record_json(record)


def _mix(x: Any) -> Any:
    """splitmix64's finaliser: every input bit moves every output bit (uint64, wrapping)."""
    import numpy as np

    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _word_hash(word: str) -> int:
    import zlib

    return zlib.crc32(word.encode("utf-8", "surrogatepass")) | (1 << 40)  # (not a float's)


def _value_hash(value: object) -> int:
    """A key value's hash, equal for values the engine finds equal (1, 1.0), the same in
    every process (a word by its bytes: Python's own hash of a str is per process)."""
    import struct

    if isinstance(value, str):
        return _word_hash(value)
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return _word_hash(repr(value))
    return int.from_bytes(struct.pack("<d", number + 0.0), "little")


def _column_hash(col: Any) -> Any:
    """Per value of a Column (all valid), :func:`_value_hash` (uint64)."""
    import numpy as np

    if col.kind == "int":
        return col.values.astype(np.float64).view(np.uint64)
    if col.kind == "float":
        return (col.values + 0.0).view(np.uint64)  # (-0.0 is 0.0)
    if col.kind == "text":
        words = np.array([_word_hash(w) for w in col.dictionary] or [0], np.uint64)
        return words[col.values]
    return np.array([_value_hash(v) for v in col.values], np.uint64)


def buckets(events: Any, key: Sequence[str], index: Any, n: int) -> Any:
    """The bucket (0..n-1) of each event at ``index`` by its values of ``key`` (present)."""
    import numpy as np

    h = np.zeros(len(index), np.uint64)
    for name in key:
        col = events.columns[name].take(index)
        h = _mix(h * np.uint64(0x9E3779B97F4A7C15) + _column_hash(col))
    return (h % np.uint64(n)).astype(np.int64)


class TaskReader:
    """The first step's reading in one task (batch and stream alike): the workload
    compiled once; each Arrow batch of the task's input partition read in turn
    (:func:`read_batch`), its rows numbered with Spark's row ids (the partition << 33
    and the row's place in it); and the events split per query group and bucket.
    ``pruned``: the batches hold only the columns the queries read."""

    def __init__(self, text: str, reading: Reading, pruned: bool):
        from pyspark import TaskContext

        from trendagg.language import parse
        from trendagg.plan.compile import compile_workload, numeric_requirements
        from trendagg.spark.partials import query_groups

        context = TaskContext.get()
        self.part = context.partitionId() if context is not None else 0
        plans = compile_workload(parse(text))
        self.numeric = numeric_requirements(plans)
        self.groups = query_groups(plans)
        self.reading = reading
        self.pruned = pruned
        self.position = 0  # rows read so far

    def read(self, rb: Any) -> ReadBatch:
        import numpy as np

        start = self.position + (self.part << 33)
        ids = np.arange(start, start + rb.num_rows, dtype=np.int64)
        self.position += rb.num_rows
        return read_batch(rb, ids, self.numeric, self.reading, self.pruned)

    def split(self, events: Any, n: int) -> Iterator[tuple[int, int, Any]]:
        """(query group, bucket, the indices of its events) for each bucket that gets
        events of a group (a group without key attributes is one partition: bucket 0)."""
        import numpy as np

        for g, group in enumerate(self.groups):
            index = group_events(group, events)
            if not len(index):
                continue
            where = buckets(events, group.key, index, n) if group.key else index * 0
            for b in np.unique(where).tolist():
                yield g, b, index[where == b]


def _router(text: str, reading: Reading, labels: Sequence[int], pruned: bool) -> Any:
    """Step 1, per input partition: read each Arrow batch, report its rejected rows, and
    send each query group's events to their buckets; last, the partition's row count.
    ``pruned``: the batches hold only the columns the queries read."""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pickle

        import pyarrow as pa

        task = TaskReader(text, reading, pruned)
        n = len(labels)
        blank = 0
        for rb in batches:
            batch = task.read(rb)
            blank += batch.blank
            if batch.rejected:
                row_id, reason, record, partial = zip(*batch.rejected, strict=True)
                yield _out_batch(
                    pa, REJECT, len(row_id), label=[labels[task.part % n]] * len(row_id),
                    row_id=list(row_id), reason=list(reason), record=list(record),
                    rows=list(partial),
                )  # fmt: skip
            events = batch.read.events
            if not len(events):
                continue
            row_ids = batch.ids[events.rows - 1]
            out_labels, seqs, blobs = [], [], []
            for g, b, picked in task.split(events, n):
                out_labels.append(labels[b])
                seqs.append(int(row_ids[picked[0]]))
                blobs.append(pickle.dumps((g, events.take(picked)), protocol=5))
            if blobs:
                yield _out_batch(pa, EVENTS, len(blobs), label=out_labels, seq=seqs, blob=blobs)
        yield _out_batch(
            pa, COUNT, 1, label=[labels[task.part % n]], seq=[task.part],
            rows=[task.position], blank=[blank],
        )  # fmt: skip

    return run


# ----------------------------------------------------------------------------- step 3


def _engines(text: str, strategy: str, trend_limit: int | None) -> Any:
    """Step 3, per bucket: gather each query group's batches in row order, run them
    through one Runner, and send the result rows; rejects and counts go on as they came."""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pickle

        import pyarrow as pa

        from trendagg.engine import Runner
        from trendagg.io.gather import concat
        from trendagg.language import parse
        from trendagg.plan.compile import compile_workload
        from trendagg.plan.routing import KeysSeen
        from trendagg.spark.partials import query_groups

        by_group: dict[int, list[tuple[int, Any]]] = {}
        for rb in batches:
            kinds = rb.column(0).to_numpy(zero_copy_only=False)
            others = kinds != EVENTS
            if others.any():  # (in this task's output schema: one per stream)
                yield rb.filter(pa.array(others)).cast(_out_schema(pa))
            if others.all():
                continue
            mine = rb.filter(pa.array(~others))
            blobs = mine.column(3).to_pylist()
            for seq, blob in zip(mine.column(2).to_pylist(), blobs, strict=True):
                g, batch = pickle.loads(blob)
                by_group.setdefault(g, []).append((seq, batch))
        if not by_group:
            return
        plans = compile_workload(parse(text))
        groups = query_groups(plans)
        for g in sorted(by_group):
            parts = sorted(by_group.pop(g), key=lambda x: x[0])
            events = concat([e for _, e in parts])
            del parts
            names = set(groups[g].names)
            mine = [p for p in plans if p.name in names]
            runner = Runner(mine, strategy, trend_limit=trend_limit)
            rows = runner.feed(events)
            keys = KeysSeen(mine)  # (a key is in one bucket: the buckets' counts add up)
            keys.add(events)
            yield _out_batch(pa, KEYS, 1, rows=[keys.count])
            del events
            rows += runner.finish()
            index = {p.name: i for i, p in enumerate(plans)}
            compact = [
                (index[r.query], r.window, tuple(r.group.values()), r.registers) for r in rows
            ]
            del rows
            for i in range(0, len(compact), _RESULT_ROWS):
                blob = pickle.dumps(compact[i : i + _RESULT_ROWS], protocol=5)
                yield _out_batch(pa, RESULTS, 1, blob=[blob])

    return run


# ----------------------------------------------------------------------------- the driver


def default_partitions(spark: Any) -> int:
    """Buckets (Spark partitions that run the engine): the cores Spark has. More buckets
    balance uneven keys better but run more engines, and every bucket sends a partial
    row per (query, window, group) it saw: at 10M events of the 50-query workload on 2
    cores, 2 buckets took 22.3 s, 4 took 24.3 s and 8 took 28.4 s."""
    return max(1, int(spark.sparkContext.defaultParallelism))


_MASK = 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _MASK


def _murmur(h: int, k: int) -> int:
    k = _rotl((k * 0xCC9E2D51) & _MASK, 15) * 0x1B873593 & _MASK
    return (_rotl(h ^ k, 13) * 5 + 0xE6546B64) & _MASK


def _final(h: int, length: int) -> int:
    h ^= length
    h = ((h ^ (h >> 16)) * 0x85EBCA6B) & _MASK
    h = ((h ^ (h >> 13)) * 0xC2B2AE35) & _MASK
    h ^= h >> 16
    return h - (1 << 32) if h >= 1 << 31 else h


def spark_hash_long(value: int) -> int:
    """Spark's ``hash`` of a bigint (Murmur3_x86_32.hashLong, seed 42), as a signed int."""
    return _final(_murmur(_murmur(42, value & _MASK), (value >> 32) & _MASK), 8)


def spark_hash_ints(*values: int) -> int:
    """Spark's ``hash`` of int columns (Murmur3_x86_32.hashInt of each, the previous
    column's hash the next one's seed, seed 42 first), as a signed int."""
    h = 42
    for v in values:
        h = _final(_murmur(h & _MASK, v & _MASK), 4)
    return h


def bucket_labels(n: int) -> list[int]:
    """For each bucket b < n, a number whose rows a ``repartition(n, label)`` puts in
    partition b: Spark's HashPartitioning takes pmod(hash(label), n)."""
    found: dict[int, int] = {}
    x = 0
    while len(found) < n:
        found.setdefault(spark_hash_long(x) % n, x)
        x += 1
    return [found[b] for b in range(n)]


@dataclass
class _Outcome:
    """What a run brings to the driver: the result rows (combined, in workload then window
    order), the rejected rows (row id, reason, record as JSON), and per input partition
    its rows and blank lines; the distinct partition keys run (the summary's partitions)."""

    plans: Sequence[Any]
    rows: list[Any]
    rejected: list[tuple[int, str, str]]
    counts: dict[int, tuple[int, int]]
    partitions: int = 0

    def collect(self) -> tuple[list[Any], list[tuple[int, str, str]]]:
        return self.rows, self.rejected

    def collect_rows(self) -> list[Any]:
        return self.rows

    def frame(self, spark: Any, times: str | None = None) -> tuple[Any, Any]:
        """The typed results and the rejected rows as DataFrames (``times``: see
        :func:`_typed`)."""
        return _typed(spark, self.plans, self.rows, times), spark.createDataFrame(
            self.rejected, "row_id bigint, reason string, record string"
        )


def trend_aggregation(
    df: Any,
    workload: Any,
    *,
    strategy: str = "hamlet",
    type_col: str = "type",
    time_col: str = "time",
    event_type: str | None = None,
    partitions: int | None = None,
) -> tuple[Any, Any]:
    """Results (a typed DataFrame) and rejected rows (row id, reason, record as JSON),
    from one run of the engine (one Spark job)."""
    outcome = _run(
        df,
        workload,
        strategy=strategy,
        type_col=type_col,
        time_col=time_col,
        event_type=event_type,
        partitions=partitions,
    )
    return outcome.frame(df.sparkSession, _time_type(df, time_col))


def _time_type(df: Any, time_col: str) -> str | None:
    """The Spark type of a DataFrame's time column when it holds moments: ``timestamp``
    (also for ``date``, as Spark's ``window`` gives it) or ``timestamp_ntz``; else None."""
    if time_col not in df.columns:
        return None
    name = df.schema[time_col].dataType.typeName()
    return {"timestamp": "timestamp", "date": "timestamp", "timestamp_ntz": "timestamp_ntz"}.get(
        name
    )


def _run(
    df: Any,
    workload: Any,
    *,
    strategy: str = "hamlet",
    type_col: str = "type",
    time_col: str = "time",
    event_type: str | None = None,
    partitions: int | None = None,
    csv_cells: bool = False,
    trend_limit: int | None = None,
    decimals: tuple[tuple[str, int, int], ...] = (),
    nanos: tuple[str, ...] = (),
) -> _Outcome:
    """The combined result rows and the rejected rows of a workload over a DataFrame
    (typed columns, or the ``RECORD`` shape of JSON texts, see :mod:`trendagg.spark.records`),
    from one Spark job that reads the input once (see the module docstring)."""
    import pickle

    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F

    from trendagg.plan.compile import attributes_read

    if not isinstance(df, DataFrame):
        raise wrong_argument(
            "df",
            df,
            "a Spark DataFrame (make one with spark.createDataFrame(...) or spark.read; "
            "trendagg.run(queries, frame) runs a pandas DataFrame or a pyarrow Table locally)",
        )
    text, plans, _ = prepare(workload, strategy)
    reading = Reading(type_col, time_col, event_type, csv_cells, decimals=decimals, nanos=nanos)
    if RECORD not in df.columns:  # (JSON texts: each row's fields are checked as it is read)
        check_frame_columns([c for c in df.columns if c != CSV_RAW], reading)
    spark = df.sparkSession
    n = partitions or default_partitions(spark)
    labels = bucket_labels(n)
    # the engine gets the columns the queries read (Spark converts each cell it sends);
    # a rejected row's record is completed from the input afterwards (_whole_records)
    wanted = attributes_read(plans) | {RECORD, CSV_RAW, time_col}
    if event_type is None:
        wanted.add(type_col)
    columns = [c for c in df.columns if c in wanted]
    if CSV_RAW in df.columns:  # (Spark's CSV parser tells a long row only with every column)
        columns = df.columns
    pruned = len(columns) < len(df.columns)
    if CSV_RAW in df.columns:  # (a long row is told by the file's whole header)
        reading = replace(reading, csv_header=tuple(c for c in df.columns if c != CSV_RAW))
    # mapInArrow cannot take a column whose name holds a backtick or a dot: such columns
    # reach the workers under a plain name and get theirs back there
    names = {c: c if not set("`.") & set(c) else f"__trendagg_c{i}" for i, c in enumerate(columns)}
    reading = replace(reading, renamed=tuple((s, c) for c, s in names.items() if s != c))
    source = df.select(
        *[
            column(c).cast("binary").alias(c)  # a line's bytes: the engine tells UTF-8 from not
            if c == RECORD
            else column(c).alias(names[c])
            for c in columns
        ]
    )
    routed = source.mapInArrow(_router(text, reading, labels, pruned), _OUT)
    ran = routed.repartition(n, F.col("label")).mapInArrow(
        _engines(text, strategy, trend_limit), _OUT
    )
    # Arrow batches of ARROW_ROWS rows into the Python steps, for this job only
    conf, key = spark.conf, "spark.sql.execution.arrow.maxRecordsPerBatch"
    before = conf.get(key, None)
    conf.set(key, str(ARROW_ROWS))
    try:
        table = ran.toArrow()  # (Arrow: far quicker than Row objects)
    finally:
        conf.unset(key) if before is None else conf.set(key, before)
    kinds = table.column("kind").to_pylist()
    rows: list[Any] = []
    rejected: list[tuple[int, str, str]] = []
    partial: list[int] = []
    counts: dict[int, tuple[int, int]] = {}
    keys = 0
    data = {name: table.column(name) for name in _NAMES}
    for i, kind in enumerate(kinds):
        if kind == RESULTS:
            rows += pickle.loads(data["blob"][i].as_py())
        elif kind == REJECT:
            row_id = data["row_id"][i].as_py()
            rejected.append((row_id, data["reason"][i].as_py(), data["record"][i].as_py()))
            if data["rows"][i].as_py():
                partial.append(row_id)
        elif kind == COUNT:
            counts[data["seq"][i].as_py()] = (data["rows"][i].as_py(), data["blank"][i].as_py())
        elif kind == KEYS:
            keys += data["rows"][i].as_py()
    if partial:
        whole = _whole_records(df, partial)
        rejected = [(r, why, whole.get(r, record)) for r, why, record in rejected]
    rejected.sort()
    return _Outcome(plans, _combined(plans, rows), rejected, counts, keys)


def _whole_records(df: Any, row_ids: list[int]) -> dict[int, str]:
    """The rows of ``row_ids`` (Spark's row ids of ``df``, as the engine's input had them)
    with every column, as the rejects' JSON text: a second read of the input, made only
    when rows were rejected (the input must read the same again: a file, or a DataFrame
    in memory)."""
    from pyspark.sql import functions as F

    marker = "__trendagg_row_id"
    marked = df.withColumn(marker, F.monotonically_increasing_id())
    ids = df.sparkSession.createDataFrame([(r,) for r in row_ids], f"{marker} bigint")
    found = marked.join(F.broadcast(ids), marker).toArrow().to_pylist()
    whole = {}
    for record in found:
        row_id = record.pop(marker)
        record.pop(CSV_RAW, None)
        whole[row_id] = record_json(record)
    return whole


def _combined(plans: Sequence[Any], partials: list[tuple[Any, ...]]) -> list[Any]:
    """One result row per (query, window, group) of the buckets' partial rows (query
    index, window id, group values, registers): the registers of a group run in several
    buckets added exactly (the plan's own rule, ``add_registers``); in workload order,
    then window order, then group."""
    from trendagg.plan.layout import RowMaker, add_registers

    runs: dict[tuple[int, int, str], tuple[tuple[object, ...], list[Any]]] = {}
    sizes = [(p.layout.n_additive, p.layout.max_start, p.layout.size) for p in plans]
    for q, k, group, registers in partials:
        key = (q, k, repr(group))  # (1 and 1.0 are two groups, as the engine keeps them)
        found = runs.get(key)
        if found is None:
            runs[key] = (group, list(registers))
            continue
        add_registers(found[1], registers, *sizes[q])
    makers = [RowMaker(p) for p in plans]
    return [makers[q](k, group, vec) for (q, k, _), (group, vec) in sorted(runs.items())]


def _typed(spark: Any, plans: Sequence[Any], rows: Sequence[Any], times: str | None = None) -> Any:
    """The rows as a DataFrame, each column typed by the writers' rule on its values
    (:mod:`trendagg.spark.result_types`; the window bounds share one type), the columns
    those of the workload's queries (a query's GROUP-BY attributes, then its outputs).
    With ``times`` (``timestamp`` or ``timestamp_ntz``, the time column's type), the
    window bounds are moments of that type, to the microsecond, as Spark's ``window``
    gives them."""
    import pyarrow as pa

    from trendagg.spark.result_types import column_type

    group_cols: list[str] = []
    value_cols: list[str] = []
    for p in plans:
        for g in p.group_names:
            if g not in group_cols:
                group_cols.append(g)
        for o in p.outputs:
            if o.aggregate is not None and o.name not in value_cols:
                value_cols.append(o.name)
    starts = [r.window_start for r in rows]
    ends = [r.window_end for r in rows]
    bounds = column_type(starts + ends)
    header = ["query", "window_start", "window_end"]
    arrays = [pa.array([r.query for r in rows], pa.string())]
    if times is not None:
        moment = pa.timestamp("us", tz="UTC" if times == "timestamp" else None)
        arrays += [_moments(pa, starts, moment), _moments(pa, ends, moment)]
    else:
        arrays += [_array(pa, starts, bounds), _array(pa, ends, bounds)]
    cells = [("group", c, [r.group.get(c) for r in rows]) for c in group_cols]
    cells += [("values", c, [r.values.get(c) for r in rows]) for c in value_cols]
    for kind, name, values in cells:
        header.append(name if name not in header else f"{kind}.{name}")
        arrays.append(_array(pa, values, column_type(values)))
    table = pa.table(arrays, names=header)
    if times == "timestamp_ntz":  # (Spark takes an Arrow timestamp without zone as its own)
        from pyspark.sql.pandas.types import from_arrow_schema

        return spark.createDataFrame(table, from_arrow_schema(table.schema, True))
    return spark.createDataFrame(table)


def _moments(pa: Any, seconds: list[Any], kind: Any) -> Any:
    """Epoch seconds (exact numbers) as Arrow timestamps of ``kind``: the nearest
    microsecond (Spark's timestamps hold microseconds)."""
    from fractions import Fraction

    micros = [round(Fraction(s) * 1_000_000) for s in seconds]
    return pa.array(micros, pa.int64()).cast(kind)


def _array(pa: Any, values: list[object], kind: Any) -> Any:
    """``values`` as an Arrow array of the writers' type ``kind`` (nulls only: int64)."""
    from trendagg.io.writers import arrow_column

    if pa.types.is_null(kind):
        return pa.nulls(len(values), pa.int64())
    column = arrow_column(values)
    return column if column.type == kind else column.cast(kind)


def aggregate_trends(
    df: Any,
    workload: Any,
    *,
    strategy: str = "hamlet",
    type_col: str = "type",
    time_col: str = "time",
    event_type: str | None = None,
    partitions: int | None = None,
) -> Any:
    """Trend aggregates of a workload (text or parsed) over an event DataFrame.

    See the module docstring for the result schema. Rows that cannot be read
    (no type, no time, a non-number where a query reads a number) are left out;
    :func:`trend_aggregation` returns them too.
    """
    results, _ = trend_aggregation(
        df,
        workload,
        strategy=strategy,
        type_col=type_col,
        time_col=time_col,
        event_type=event_type,
        partitions=partitions,
    )
    return results


def read_frame(
    spark: Any,
    path: str,
    columns: Sequence[str] | None = None,
    needed: Collection[str] | None = None,
    checked: CheckedInput | None = None,
) -> tuple[Any, bool, tuple[tuple[str, int, int], ...], tuple[str, ...]]:
    """An event file or folder as a DataFrame, whether its cells are CSV text, the
    Parquet decimals that travel as text (name, precision, scale; see below), and the
    Parquet nanosecond timestamps that travel as longs (Spark's timestamps hold
    microseconds; the workers make them timestamps again, to the nanosecond).

    CSV is read with every column as text, so each cell is then read with the
    same rule as the local engine (a column of numbers and words keeps its numbers);
    JSON Lines as one text per line, parsed by the engine as the local reader parses it.
    ``columns`` names the columns of a CSV file without a header row; ``needed``, the
    columns a workload reads: Parquet decimals wider than Spark's 38 digits are left out
    when no query reads them; when one does, the driver reads the file with pyarrow and
    those decimals travel as their exact text, made decimals again in the workers. A
    file the local reader refuses is refused with its message: ``checked`` is the file
    as :func:`~trendagg.spark.inputs.check_input` found it (checked here when None, its
    columns aside).
    """
    from pathlib import Path

    import pyarrow as pa

    if checked is None:
        checked = check_input(path, columns)
    p = Path(path)
    if checked.kind == "parquet":
        schema = checked.schema
        nanos = [f.name for f in schema if pa.types.is_timestamp(f.type) and f.type.unit == "ns"]
        wide = [f.name for f in schema if pa.types.is_decimal(f.type) and f.type.precision > 38]
        used = [name for name in wide if needed is None or name in needed]
        if used:  # Spark reads no decimal wider than 38 digits: the driver reads the file
            frame = _wide_decimals(spark, p, path, schema, used)
            return frame, False, _decimal_types(schema), tuple(nanos)
        if nanos:  # Spark reads them as nanoseconds since the epoch (a long)
            spark.conf.set("spark.sql.legacy.parquet.nanosAsLong", "true")
        reader = spark.read
        # Spark reads only the columns of a given schema (so the wide ones can be left out),
        # and a given schema spares it a job that reads the footer the driver just read
        # (0.6 s of the demo's Spark run): given for one file of plain types, as Spark
        # would type it itself
        if wide or (p.is_file() and not nanos and _plain_schema(schema)):
            from pyspark.sql.pandas.types import from_arrow_type
            from pyspark.sql.types import LongType, StructField, StructType

            fields = [
                StructField(f.name, LongType() if f.name in nanos else from_arrow_type(f.type))
                for f in schema
                if f.name not in wide
            ]
            reader = reader.schema(StructType(fields))
        return reader.parquet(path), False, (), tuple(nanos)
    if checked.kind == "csv":
        assert checked.names is not None
        reader = csv_reader(
            spark.read, checked.names, header=columns is None, multiline=checked.multiline
        )
        return reader.csv(checked.readable), True, (), ()
    frame = json_lines(spark.read.text(checked.readable), keep_blank=True)
    return frame, False, (), ()


def _plain_schema(schema: Any) -> bool:
    """Whether Spark types every column of this Parquet schema as pyspark's
    ``from_arrow_type`` does: signed integers, 32- and 64-bit floats, booleans, texts,
    dates, timestamps of seconds to microseconds, decimals of up to 38 digits, and
    names that differ also without case (Spark's default)."""
    import pyarrow as pa

    def plain(t: Any) -> bool:
        return (
            pa.types.is_signed_integer(t)
            or pa.types.is_float32(t)
            or pa.types.is_float64(t)
            or pa.types.is_boolean(t)
            or pa.types.is_string(t)
            or pa.types.is_large_string(t)
            or pa.types.is_date32(t)
            or (pa.types.is_timestamp(t) and t.unit in ("s", "ms", "us"))
            or (pa.types.is_decimal(t) and t.precision <= 38)
        )

    names = [f.name.lower() for f in schema]
    return len(set(names)) == len(names) and all(plain(f.type) for f in schema)


def _wide_decimals(spark: Any, p: Any, path: str, schema: Any, used: list[str]) -> Any:
    """A Parquet file or folder read on the driver (pyarrow, as the local reader reads it)
    into a DataFrame, its decimals as exact text and nanosecond times as longs:
    for files with decimals wider than Spark reads (rare; the file passes the driver)."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    table = ds.dataset(str(p), format="parquet", partitioning="hive").to_table()
    for i, field in enumerate(table.schema):
        if pa.types.is_decimal(field.type):
            table = table.set_column(i, field.name, table.column(i).cast(pa.string()))
        elif pa.types.is_timestamp(field.type) and field.type.unit == "ns":
            table = table.set_column(i, field.name, table.column(i).cast(pa.int64()))
    return spark.createDataFrame(table)


def _decimal_types(schema: Any) -> tuple[tuple[str, int, int], ...]:
    import pyarrow as pa

    return tuple(
        (f.name, f.type.precision, f.type.scale) for f in schema if pa.types.is_decimal(f.type)
    )


def collect(
    spark: Any,
    path: str,
    workload: Any,
    columns: Sequence[str] | None = None,
    checked: CheckedInput | None = None,
    **options: Any,
) -> tuple[list[Any], list[tuple[int, str, str]], int, list[str] | None, int]:
    """For the CLI: result rows and rejected rows on the driver (with their row numbers in
    the input, from 1, as the local readers number them), the rows read, the input's
    columns (None for JSON Lines, whose keys only the rows know) and the distinct partition
    keys (:class:`~trendagg.plan.routing.KeysSeen`, as the local engines count them).
    ``checked``: the file as :func:`~trendagg.spark.inputs.check_input` found it before
    Spark started (checked here when None)."""
    from trendagg.plan.compile import attributes_read

    _, plans, _ = prepare(workload, options.get("strategy", "hamlet"))
    reading = ReadOptions(
        options.get("type_col", "type"), options.get("time_col", "time"), options.get("event_type")
    )
    if checked is None:
        checked = check_input(path, columns, reading)
    needed = attributes_read(plans) | {reading.type_col, reading.time_col}
    df, csv_cells, decimals, nanos = read_frame(spark, path, columns, needed, checked)
    if RECORD not in df.columns:  # (as checked; Spark's columns are the engine's input)
        reading.check_columns([c for c in df.columns if c != CSV_RAW], path)
    outcome = _run(df, workload, csv_cells=csv_cells, decimals=decimals, nanos=nanos, **options)
    # Spark's row id is (input partition << 33) + the row's place in it; the rows of each
    # input partition (in input order) turn it into the row's number in the input
    # (the blank lines of JSON Lines count for the line numbers, not as rows read)
    before, offsets = 0, {}
    for part in sorted(outcome.counts):
        offsets[part] = before
        before += outcome.counts[part][0]
    read = before - sum(blank for _, blank in outcome.counts.values())
    rejected = [(row_number(r, offsets), why, record) for r, why, record in outcome.rejected]
    rejected.sort(key=lambda r: r[0])
    names = None if RECORD in df.columns else [c for c in df.columns if c != CSV_RAW]
    return outcome.rows, rejected, read, names, outcome.partitions


def row_number(row_id: int, offsets: dict[int, int]) -> int:
    """A row's number in the input (from 1) from Spark's row id and the rows of the input
    partitions before its own."""
    part, place = row_id >> 33, row_id & ((1 << 33) - 1)
    return offsets.get(part, 0) + place + 1
