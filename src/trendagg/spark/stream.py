"""Trend aggregation over Spark Structured Streaming, with event-time watermarks.

The pipeline, per micro-batch:

1. A source (a directory of CSV / JSON Lines / Parquet files, the socket
   source with one JSON object per line, or the rate source turned into a
   ride-sharing stream) gives rows. Each row is kept whole as JSON text, so
   the engine reads every value with the same rules as the local engine.
2. The event time feeds Spark's watermark: the largest event time seen so far
   minus the allowed lateness.
3. Rows are keyed like the batch pipeline (per query group, by its
   unqualified partition attributes, hashed into a fixed number of buckets)
   and ``transformWithStateInPandas`` keeps, per key, in the state store
   (RocksDB), the engine's :class:`Runner` (which tells the partitions of its
   bucket apart)
   (pickled with its plans by reference, see :mod:`trendagg.engine.state`)
   and the events not yet fed.
4. Per key and micro-batch, with watermark W: an event earlier than W is late
   (counted and written to the side output, never fed); the others wait until
   W passes them, then are fed in time order; ``Runner.advance(W)`` returns
   the windows that end by W. An event-time timer at the next window end
   closes windows of keys that get no new events. A key whose windows have all
   closed and that waits for nothing is dropped from the state.
5. Every key closes the windows that end by W in the same micro-batch, so the
   sink (``foreachBatch``) combines the partial rows of a (query, window,
   group) from all keys into the final row, exactly as the batch pipeline does,
   and writes ``results/``, ``late/`` and ``rejects/`` files named by batch id
   (CSV and Parquet results with the columns and types of
   :mod:`trendagg.spark.stream_results`, the same in every file; a rejected row
   once, however many query groups read it).
   A batch run again after a failure writes the same files again (replaced, not
   appended): with the checkpoint, nothing is lost and nothing is duplicated.

A window's row is written once the watermark passes its end. Windows that
the watermark has not passed when a stream stops stay in the checkpoint and
are written when it runs again and time moves on.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time as _time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trendagg.errors import InputError
from trendagg.limits import TIME_LIMIT, time_out_of_range
from trendagg.spark.partials import (
    SORT_TIME,
    check_frame_columns,
    combine,
    group_rows,
    partial_cells,
    prepare,
    query_groups,
)
from trendagg.spark.records import (
    CSV_RAW,
    RECORD,
    Reading,
    as_record_text,
    column,
    csv_reader,
    json_lines,
    read_table,
    record_of,
    route_key,
    sort_time,
    stripped,
    unordered_reason,
    with_record_columns,
)

GROUP = "__trendagg_group"
KEY = "__trendagg_key"
WATERMARK = "__trendagg_event_time"

# the rows of the keyed part; "query" holds the queries of a late event, and the query
# group (its number) of a rejected row
_OUT = (
    "kind string, query string, window bigint, group_json string, registers string, "
    "time double, record string, reason string, events bigint"
)
_OUT_COLUMNS = [c.split()[0] for c in _OUT.split(", ")]
_STATE = "data binary"
BUCKETS = 64  # state keys per query group (partition keys are hashed into them)


@dataclass
class StreamStats:
    """Counters of a running stream, updated by the sink after every micro-batch."""

    batches: int = 0
    events: int = 0
    rows: int = 0
    late: int = 0
    rejected: int = 0
    # one line per attribute a query reads that no input column holds (said at the start)
    warnings: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def summary(self) -> str:
        return (
            f"{self.batches} micro-batches, {self.events:,} events, {self.rows:,} rows written, "
            f"{self.late:,} late, {self.rejected:,} rejected"
        )


def parse_lateness(text: str | float | int) -> float:
    """Allowed lateness in seconds, from a number or a duration of the query language
    ('30 s', '5 min', '1 hour', '250 ms')."""
    from trendagg.language import UNIT_NAMES, UNIT_SECONDS

    if isinstance(text, (int, float)):
        value = float(text)
    else:
        m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*", text)
        unit = UNIT_NAMES.get(m.group(2).lower(), None) if m else None
        if m is None or (m.group(2) and unit is None):
            raise InputError(
                f"cannot read the lateness '{text}': give a number of seconds or a duration "
                f"such as '30 s', '5 min', '1 h'"
            )
        value = float(m.group(1)) * float(UNIT_SECONDS[unit] if unit else 1)
    if value < 0:
        raise InputError(f"the allowed lateness must not be negative (got {text})")
    return value


# ----------------------------------------------------------------------------- sources


def _source_format(path: Path, given: str | None) -> str:
    """csv, json or parquet: as given, else from the first file of the directory whose name
    the readers know (the rules of :func:`trendagg.io.formats.event_format`)."""
    from trendagg.io.formats import event_format

    spark_name = {"csv": "csv", "jsonl": "json", "parquet": "parquet"}
    if given:
        return spark_name[event_format(path, given)]
    for file in sorted(path.iterdir(), key=lambda p: p.name.lower()):
        if not file.is_file() or file.name.startswith((".", "_")):
            continue
        try:
            return spark_name[event_format(file, None)]
        except InputError:
            continue
    raise InputError(
        f"cannot tell the format of the files in '{path}' (none ends in .csv, .jsonl, .json "
        f"or .parquet): pass --source-format csv|json|parquet"
    )


def read_stream(
    spark: Any,
    source: str,
    *,
    source_format: str | None = None,
    schema: str | None = None,
    max_files_per_trigger: int | None = None,
    rows_per_second: int = 1000,
) -> tuple[Any, bool]:
    """A streaming DataFrame of events, and whether its cells are CSV text.

    ``source`` is a directory (new files are picked up as they appear; the
    columns are taken from the files already there, or from ``schema``, a
    Spark DDL string), ``socket://HOST:PORT`` (one JSON object per line), or
    ``rate://`` (generated ride-sharing events, ``rows_per_second``).
    """
    from pyspark.sql import types as T

    from trendagg.spark.session import spark_failure

    if source.startswith("socket://"):
        host, _, port = source.removeprefix("socket://").rpartition(":")
        if not host or not port.isdigit():
            raise InputError(f"a socket source is socket://HOST:PORT, not '{source}'")
        lines = spark.readStream.format("socket").option("host", host).option("port", int(port))
        return json_lines(lines.load()), False
    if source.startswith("rate://"):
        return _rate_rideshare(spark, rows_per_second), False
    path = Path(source)
    if not path.is_dir():
        raise InputError(
            f"stream source '{source}' is not a directory: give a directory that files arrive "
            f"in, socket://HOST:PORT, or rate://"
        )
    kind = _source_format(path, source_format)
    reader = spark.readStream
    if max_files_per_trigger:
        reader = reader.option("maxFilesPerTrigger", int(max_files_per_trigger))
    if kind == "json":  # one text per line: the engine parses it as the JSON Lines reader does
        return json_lines(reader.text(str(path))), False
    given = None
    if schema is not None:
        try:
            given = T.StructType.fromDDL(schema)
        except Exception as exc:
            raise InputError(
                f"cannot read the schema '{schema}': write Spark DDL such as "
                f"'type string, time double, driver long' ({spark_failure(exc)})"
            ) from None
    if kind == "csv":
        if given is None:
            try:
                header = spark.read.option("header", True).csv(str(path)).columns
            except Exception as exc:
                raise InputError(
                    f"no CSV files in '{path}' to take the columns from: pass --schema "
                    f"'type string, time string, ...' ({spark_failure(exc)})"
                ) from None
        else:
            header = [f.name for f in given.fields]
        return csv_reader(reader, header, header=True).csv(str(path)), True
    if given is None:
        try:
            given = spark.read.parquet(str(path)).schema
        except Exception as exc:
            raise InputError(
                f"no Parquet files in '{path}' to take the columns from: pass --schema "
                f"'type string, time double, ...' ({spark_failure(exc)})"
            ) from None
    return reader.schema(given).parquet(str(path)), False


def _rate_rideshare(spark: Any, rows_per_second: int) -> Any:
    """The built-in rate source as a ride-sharing stream: row ``value`` -> one event.

    Event v belongs to driver v mod 50, as the n-th event (n = v div 50) of a
    fixed trip cycle: Request, Accept, Pickup, 1-6 Travel legs, Dropoff, Pay;
    its time is v / rows_per_second seconds. The same values give the same events.
    """
    from pyspark.sql import functions as F

    drivers = 50
    v = F.col("value")
    n = F.floor(v / drivers)
    trip = F.floor(n / 11)
    legs = (F.abs(F.hash(trip, v % drivers)) % 6) + 1
    step = n % 11
    kind = (
        F.when(step == 0, "Request")
        .when(step == 1, "Accept")
        .when(step == 2, "Pickup")
        .when(step <= 2 + legs, "Travel")
        .when(step == 3 + legs, "Dropoff")
        .when(step == 4 + legs, "Pay")
        .otherwise("Wait")
    )
    record = F.to_json(
        F.struct(
            kind.alias("type"),
            (v / F.lit(float(rows_per_second))).alias("time"),
            (v % drivers).alias("driver"),
            (trip * drivers + v % drivers).alias("rider"),
            (F.abs(F.hash(trip)) % 10).alias("district"),
            ((F.abs(F.hash(v)) % 300) + 30).alias("duration"),
            ((F.abs(F.hash(v, F.lit(1))) % 80) + 10).alias("speed"),
            ((F.abs(F.hash(trip, F.lit(2))) % 50) + 5).alias("price"),
        )
    )
    rate = spark.readStream.format("rate").option("rowsPerSecond", int(rows_per_second)).load()
    return rate.select(record.alias(RECORD))


# ----------------------------------------------------------------------------- keyed engine


def trend_stream(
    df: Any,
    workload: Any,
    *,
    lateness: float = 0.0,
    strategy: str = "hamlet",
    type_col: str = "type",
    time_col: str = "time",
    event_type: str | None = None,
    csv_cells: bool = False,
    buckets: int = BUCKETS,
) -> tuple[Any, list[Any]]:
    """The keyed, stateful part of the pipeline: a streaming DataFrame of partial rows.

    Returns the DataFrame (columns ``kind, query, window, group_json,
    registers, time, record, reason, events``; ``kind`` is ``row``, ``late``,
    ``reject`` or ``seen``) and the compiled plans. :func:`start_stream` writes
    it; its sink combines the partial rows into results.

    Per query group, the partition keys are hashed into ``buckets`` state keys,
    each with one engine Runner (which tells its partitions apart, as in the
    batch pipeline): a handful of state reads and writes per micro-batch
    instead of one per driver or rider. A restart must use the same number.
    """
    from pyspark.sql import functions as F

    if strategy == "twostep":
        raise InputError(
            "the twostep reference builds trends at the end and cannot stream; "
            "use hamlet, hamlet-static or greta"
        )
    if buckets < 1:
        raise InputError(f"the number of state buckets must be at least 1, not {buckets}")
    text, plans, groups = prepare(workload, strategy)
    # CSV: the header's names, to tell rows with more cells (Spark keeps their text)
    header = tuple(c for c in df.columns if c not in (RECORD, CSV_RAW)) if csv_cells else ()
    reading = Reading(type_col, time_col, event_type, csv_cells, header)
    if RECORD not in df.columns:
        check_frame_columns(df.columns, reading)
    # every row as JSON text (the engine reads it), and the fields Spark routes and orders by
    keys = {k for g in groups for k in g.key}
    rows = with_record_columns(as_record_text(df), {type_col, time_col} | keys)
    # a time the watermark cannot hold (microseconds in a long) is no time to order by:
    # its row is rejected below, not a failure of the stream
    ordered = sort_time(rows, time_col)
    ordered = F.when(F.abs(ordered) < F.lit(TIME_LIMIT), ordered)
    timed = rows.withColumn(SORT_TIME, ordered).withColumn(
        WATERMARK, F.timestamp_micros(F.floor(F.col(SORT_TIME) * F.lit(1_000_000)).cast("long"))
    )
    # the watermark: the latest event time seen, minus the allowed lateness
    timed = timed.withWatermark(WATERMARK, f"{int(round(lateness * 1000))} milliseconds")
    # Each row goes to the keys of the query groups that read it. This is an explode,
    # not a filter per group: Spark would push such filters below the watermark, and
    # rows no query reads would then not move the watermark.
    unreadable = F.col(SORT_TIME).isNull()
    if event_type is None:
        type_text = stripped(column(type_col).cast("string"))
        unreadable = unreadable | type_text.isNull() | (type_text == "")
    targets = []
    for i, group in enumerate(groups):
        wanted = group_rows(group, rows.columns, type_col, event_type)
        if wanted is None:
            continue
        key = (
            F.pmod(F.xxhash64(*[route_key(rows, k) for k in group.key]), F.lit(buckets))
            if group.key
            else F.lit(0)
        ).cast("string")
        targets.append(F.when(wanted, F.struct(F.lit(i).alias("g"), key.alias("k"))))
    # rows Spark cannot route or order (no type, no time it reads): to the engine's reader,
    # which rejects them with its reason, never dropped
    targets.append(F.when(unreadable, F.struct(F.lit(-1).alias("g"), F.lit("0").alias("k"))))
    routed = timed.select(
        F.col(RECORD), F.explode(F.filter(F.array(*targets), lambda x: x.isNotNull())).alias("t")
    )
    keyed = routed.select(F.col("t.g").alias(GROUP), F.col("t.k").alias(KEY), F.col(RECORD))
    out = keyed.groupBy(GROUP, KEY).transformWithStateInPandas(
        statefulProcessor=_TrendProcessor(
            text, [g.names for g in groups], strategy, reading, lateness
        ),
        outputStructType=_OUT,
        outputMode="Append",
        timeMode="EventTime",
    )
    return out, plans


def _processor_base() -> Any:
    from pyspark.sql.streaming import StatefulProcessor

    return StatefulProcessor


class _Key:
    """What a key keeps between micro-batches: its Runner, the events that wait for the
    watermark (an EventBatch, in arrival order, or None) and the latest time fed."""

    __slots__ = ("runner", "pending", "t_max")

    def __init__(self) -> None:
        self.runner: Any = None
        self.pending: Any = None
        self.t_max: Any = None


class _TrendProcessor(_processor_base()):  # type: ignore[misc]
    """Per key: the engine's runner and the events waiting for the watermark.

    Spark hands a key's rows over as pandas frames (``transformWithStateInPandas``);
    each row is the event's JSON text, because pandas would make a column of integers
    with a gap floats (inexact beyond 2**53). The texts are read as a batch by the
    workers' reader (:func:`~trendagg.spark.records.read_table`, the JSON Lines rules)
    into arrays, and the events stay arrays (kept, sorted, fed) from there on.
    """

    def __init__(
        self,
        workload_text: str,
        groups: Sequence[tuple[str, ...]],
        strategy: str,
        reading: Reading,
        lateness: float,
    ) -> None:
        self.workload_text = workload_text
        self.groups = [tuple(g) for g in groups]
        self.strategy = strategy
        self.reading = reading
        self.lateness = lateness

    # -- Spark's interface

    def init(self, handle: Any) -> None:
        from trendagg.language import parse
        from trendagg.plan.compile import compile_workload, numeric_requirements

        self.handle = handle
        self.state = handle.getValueState("engine", _STATE)
        plans = compile_workload(parse(self.workload_text))
        self.numeric = numeric_requirements(plans)
        by_name = {p.name: p for p in plans}
        self.plans = [[by_name[n] for n in names] for names in self.groups]
        # an event reaches one key per group that reads it; the first such group counts it
        self.routes: dict[str, list[tuple[int, tuple[str, ...]]]] = {}
        self.readers: list[dict[str, str]] = []  # per group: type -> its queries that read it
        for i, (group_plans, group) in enumerate(
            zip(self.plans, query_groups(plans), strict=False)
        ):
            readers: dict[str, list[str]] = {}
            for p in group_plans:
                for t in p.type_to_var:
                    readers.setdefault(t, []).append(p.name)
            for t in readers:
                self.routes.setdefault(t, []).append((i, group.key))
            self.readers.append({t: ",".join(names) for t, names in readers.items()})

    def handleInputRows(self, key: Any, rows: Iterator[Any], timerValues: Any) -> Iterator[Any]:
        import numpy as np

        from trendagg.io.gather import concat

        group = int(key[0])
        watermark = self._watermark(timerValues)
        records = []
        for pdf in rows:  # columns come positionally (_0, _1, ...): the record is the last
            records.extend(pdf.iloc[:, -1].tolist())
        out = _Output()
        events = self._read(records, group, out)
        if group < 0:  # rows Spark could not route: rejected, with the reader's reason if any
            for row, t in zip(events.rows.tolist(), events.time_values(), strict=True):
                out.add(
                    kind="reject", query=str(group), record=records[row - 1], reason=_unordered(t)
                )
            yield from out.frames()
            return
        # Spark routes a type padded with spaces here (as a CSV reader would strip it); a
        # reader that keeps the spaces reads another type, which this group does not read
        read_here = [c for c, name in enumerate(events.type_names) if name in self.readers[group]]
        if len(read_here) < len(events.type_names):
            events = events.take(np.flatnonzero(np.isin(events.types, read_here)))
        st = self._load()
        late = events.times < watermark
        if late.any():
            index = np.flatnonzero(late)
            times = events.take(index).time_values()
            for i, t in zip(index.tolist(), times, strict=True):
                out.add(
                    kind="late",
                    query=self.readers[group][events.type_names[events.types[i]]],
                    time=float(t),
                    record=records[events.rows[i] - 1],
                    reason=(
                        f"late: event time {t:g} is before the watermark {watermark:g} "
                        f"(latest event time seen minus the allowed lateness of "
                        f"{self.lateness:g} s)"
                    ),
                )
            events = events.take(np.flatnonzero(~late))
        if len(events):
            st.pending = events if st.pending is None else concat([st.pending, events])
        out.add(kind="seen", events=int(np.count_nonzero(self._first_group(events) == group)))
        self._advance(group, st, watermark, out)
        self._save(group, st, watermark)
        yield from out.frames()

    def handleExpiredTimer(
        self, key: Any, timerValues: Any, expiredTimerInfo: Any
    ) -> Iterator[Any]:
        group = int(key[0])
        if group < 0 or not self.state.exists():
            return
        watermark = self._watermark(timerValues)
        st = self._load()
        out = _Output()
        self._advance(group, st, watermark, out)
        self._save(group, st, watermark)
        yield from out.frames()

    def close(self) -> None:
        pass

    # -- the work

    @staticmethod
    def _watermark(timer_values: Any) -> float:
        ms = timer_values.getCurrentWatermarkInMs()
        return ms / 1000 if ms > 0 else float("-inf")

    def _read(self, texts: list[str], group: int, out: _Output) -> Any:
        """The events of a key's rows as arrays; the rejected ones go out with their
        reasons, and with their query group (a row read by several groups is rejected by
        each: the sink counts it once, see :func:`_rejected_rows`)."""
        import pyarrow as pa

        read = read_table(
            pa.table({RECORD: pa.array(texts, pa.string())}), self.reading, self.numeric
        )
        for bad in read.rejected:  # the record as the reader saw it (a bad line as _text)
            out.add(
                kind="reject",
                query=str(group),
                record=json.dumps(bad.record, default=str),
                reason=bad.reason,
            )
        return read.events

    def _first_group(self, events: Any) -> Any:
        """Per event, the first query group that reads it (its type, every key attribute
        present), or -1: the group that counts it as seen (each group's key gets it)."""
        import numpy as np

        first = np.full(len(events), -1, np.int64)
        for code, name in enumerate(events.type_names):
            undecided = events.types == code
            for g, key in self.routes.get(name, []):
                has = undecided.copy()
                for k in key:
                    col = events.columns.get(k)
                    has &= col.valid if col is not None else False
                first[has] = g
                undecided &= ~has
        return first

    def _load(self) -> _Key:
        from trendagg.engine.state import loads

        if not self.state.exists():
            return _Key()
        data = self.state.get()[0]
        st: _Key = loads(bytes(data), [p for g in self.plans for p in g])
        if isinstance(st.pending, list):  # a checkpoint that kept (time, type, attributes)
            st.pending = _as_batch(st.pending)
        return st

    def _advance(self, group: int, st: _Key, watermark: float, out: _Output) -> None:
        """Feed what the watermark has passed, in time order; close the windows ending by it."""
        import numpy as np

        from trendagg.engine import Runner

        if watermark == float("-inf"):
            return
        rows = []
        if st.pending is not None:
            ready = st.pending.times < watermark
            if ready.any():
                batch = st.pending.take(np.flatnonzero(ready))
                st.pending = None if ready.all() else st.pending.take(np.flatnonzero(~ready))
                batch = batch.take(np.argsort(batch.times, kind="stable"))
                if st.runner is None:
                    st.runner = Runner(self.plans[group], self.strategy)
                rows = st.runner.feed(batch)
                last = batch.time_values()[-1]
                st.t_max = last if st.t_max is None else max(st.t_max, last)
        if st.runner is not None:
            rows.extend(st.runner.advance(watermark))
        for r in rows:
            query, window, group_json, registers = partial_cells(r)
            out.add(
                kind="row", query=query, window=window, group_json=group_json, registers=registers
            )

    def _save(self, group: int, st: _Key, watermark: float) -> None:
        """Keep the key (and a timer at its next window end), or drop it when it is done."""
        from trendagg.engine.state import dumps

        plans = self.plans[group]
        for t in list(self.handle.listTimers()):
            self.handle.deleteTimer(t)
        done = st.pending is None and (
            st.t_max is None or all(p.window.last_end(st.t_max) <= watermark for p in plans)
        )
        if done:
            self.state.clear()
            return
        self.state.update((dumps(st, [p for g in self.plans for p in g]),))
        # the next window end after the watermark (before the first watermark: after the
        # earliest waiting event), when this key has a window to close even without input
        base = watermark if watermark != float("-inf") else st.pending.times.min().item()
        nxt = min(p.window.end(p.window.closed_before(base)) for p in plans)
        self.handle.registerTimer(int(-(-nxt * 1000 // 1)))


def _as_batch(pending: list[tuple[Any, str, dict[str, object]]]) -> Any:
    """Waiting events kept as (time, type, attributes) tuples, as arrays (None if none)."""
    from trendagg.io import EventBatch

    if not pending:
        return None
    names = sorted({k for e in pending for k in e[2]})
    columns = {n: [e[2].get(n) for e in pending] for n in names}
    return EventBatch.of([e[1] for e in pending], [e[0] for e in pending], columns)


def _unordered(time: Any) -> str:
    """Why the stream rejects a row the engine reads but Spark cannot order by time."""
    if isinstance(time, (int, float)) and not isinstance(time, bool) and abs(time) >= TIME_LIMIT:
        return time_out_of_range(str(time))
    return unordered_reason(time)


class _Output:
    """Rows a handler call returns, as one pandas DataFrame."""

    def __init__(self) -> None:
        self.rows: dict[str, list[Any]] = {c: [] for c in _OUT_COLUMNS}

    def add(self, **cells: Any) -> None:
        for c in _OUT_COLUMNS:
            self.rows[c].append(cells.get(c))

    def frames(self) -> Iterator[Any]:
        import pandas as pd

        if self.rows["kind"]:
            frame = pd.DataFrame(self.rows)
            for c in ("window", "events"):
                frame[c] = frame[c].astype("Int64")
            frame["time"] = frame["time"].astype("float64")
            yield frame


# ----------------------------------------------------------------------------- sink


class _Sink:
    """foreachBatch: combine the partial rows of each window, write files named by batch id."""

    def __init__(self, plans: Sequence[Any], output: str, fmt: str, stats: StreamStats):
        self.plans = {p.name: p for p in plans}
        self.order = {p.name: i for i, p in enumerate(plans)}
        self.output = Path(output)
        self.fmt = fmt
        self.stats = stats
        from trendagg.spark.stream_results import stream_columns

        self.columns = stream_columns(plans)

    def __call__(self, df: Any, batch_id: int) -> None:
        self.write(batch_id, df.collect())

    def write(self, batch_id: int, collected: Sequence[Any]) -> None:
        """Write one micro-batch's output rows (Spark Rows or dicts of the ``_OUT`` columns)."""
        from trendagg.io.writers import write_results
        from trendagg.spark.stream_results import write_table

        partial: list[tuple[str, int, str, str]] = []
        late_rows: list[Any] = []
        reject_rows: list[Any] = []
        seen = 0
        for r in collected:
            kind = r["kind"]
            if kind == "row":
                partial.append((r["query"], r["window"], r["group_json"], r["registers"]))
            elif kind == "late":
                late_rows.append(r)
            elif kind == "reject":
                reject_rows.append(r)
            elif kind == "seen":
                seen += r["events"] or 0
        results = combine(self.plans, partial)
        results.sort(
            key=lambda r: (self.order[r.query], r.window_start, repr(list(r.group.values())))
        )
        late = _late_events(late_rows, self.order)
        rejected = _rejected_rows(reject_rows)
        tag = f"part-{batch_id:08d}"
        if results:
            self._atomic(
                self.output / "results" / f"{tag}.{self.fmt}",
                lambda p: (
                    write_results(results, p, self.fmt)
                    if self.fmt == "jsonl"
                    else write_table(results, self.columns, p, self.fmt)
                ),
            )
        if late:
            self._atomic(self.output / "late" / f"{tag}.jsonl", lambda p: _jsonl(late, p))
        if rejected:
            self._atomic(self.output / "rejects" / f"{tag}.jsonl", lambda p: _jsonl(rejected, p))
        with self.stats.lock:
            self.stats.batches += 1
            self.stats.events += seen
            self.stats.rows += len(results)
            self.stats.late += len(late)
            self.stats.rejected += len(rejected)

    @staticmethod
    def _atomic(path: Path, write: Any) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        write(str(tmp))
        os.replace(tmp, path)


def _late_events(rows: Sequence[Any], order: dict[str, int]) -> list[dict[str, object]]:
    """One entry per late event, naming every query that missed it.

    An event read by query groups with different partition keys reaches one key
    per group, and each reports it late (the watermark of a micro-batch is the
    same for all). The k-th report of a record by one group and the k-th by
    another are the same event: identical events stay as many as they were.
    """
    reports: dict[str, dict[str, list[Any]]] = {}
    for r in rows:
        reports.setdefault(r["record"], {}).setdefault(r["query"], []).append(r)
    events: list[dict[str, object]] = []
    for record, by_group in reports.items():
        for k in range(max(len(v) for v in by_group.values())):
            mine = [v[k] for v in by_group.values() if len(v) > k]
            events.append(
                {
                    "time": mine[0]["time"],
                    "queries": sorted(
                        (q for r in mine for q in r["query"].split(",")), key=order.__getitem__
                    ),
                    "reason": mine[0]["reason"],
                    "record": json.loads(record),
                }
            )
    events.sort(key=lambda e: e["time"])  # type: ignore[arg-type, return-value]
    return events


def _rejected_rows(rows: Sequence[Any]) -> list[dict[str, object]]:
    """One entry per rejected row, however many query groups read it.

    A row goes to one key per query group that reads its type, and each key's
    reader rejects it with the same reason (the readers of all groups read with
    the same rules). As for late events, the k-th report of a record by one group
    and the k-th by another are the same row: identical rows stay as many as
    they were.
    """
    reports: dict[str, dict[str, list[Any]]] = {}
    for r in rows:
        reports.setdefault(r["record"], {}).setdefault(r["query"], []).append(r)
    rejected: list[dict[str, object]] = []
    for record, by_group in reports.items():
        for k in range(max(len(v) for v in by_group.values())):
            first = next(v[k] for v in by_group.values() if len(v) > k)
            rejected.append({"reason": first["reason"], "record": record_of(record)})
    return rejected


def _jsonl(items: list[dict[str, object]], path: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for item in items:
            f.write(json.dumps(item, default=str))
            f.write("\n")


def start_stream(
    partial: Any,
    plans: Sequence[Any],
    *,
    output: str,
    checkpoint: str,
    fmt: str = "jsonl",
    trigger: str | None = None,
    available_now: bool = False,
    stats: StreamStats | None = None,
) -> tuple[Any, StreamStats]:
    """Start writing a :func:`trend_stream` result; returns the StreamingQuery and its counters.

    Files go to ``output/results/part-<batch>.<fmt>`` (fmt: jsonl, csv or
    parquet), ``output/late/`` and ``output/rejects/`` (JSON Lines), one
    file per micro-batch that has something to write.
    """
    if fmt not in ("jsonl", "csv", "parquet"):
        raise InputError(f"unknown result format '{fmt}': use jsonl, csv or parquet")
    spark = partial.sparkSession
    for k, v in stream_conf(spark).items():
        spark.conf.set(k, v)
    stats = stats or StreamStats()
    writer = partial.writeStream.foreachBatch(_Sink(plans, output, fmt, stats)).option(
        "checkpointLocation", checkpoint
    )
    if available_now:
        writer = writer.trigger(availableNow=True)
    elif trigger:
        writer = writer.trigger(processingTime=trigger)
    query = writer.queryName(f"trendagg-{int(_time.time())}").start()
    return query, stats


def stream_trends(
    source: Any,
    workload: Any,
    *,
    output: str,
    checkpoint: str,
    lateness: float | str = 0,
    strategy: str = "hamlet",
    type_col: str = "type",
    time_col: str = "time",
    event_type: str | None = None,
    fmt: str = "jsonl",
    trigger: str | None = None,
    available_now: bool = False,
    spark: Any = None,
    buckets: int = BUCKETS,
    **source_options: Any,
) -> tuple[Any, StreamStats]:
    """Start a stream of trend aggregates; returns the StreamingQuery and its counters.

    ``source`` is a streaming DataFrame, or what :func:`read_stream` takes (a
    directory, ``socket://HOST:PORT``, ``rate://``; ``source_options`` go to it).
    Each window's rows are written under ``output/results`` once the
    watermark (latest event time minus ``lateness``, seconds or '5 min') passes
    its end; late events go to ``output/late``, rejected rows to ``output/rejects``.
    """
    from trendagg.spark.session import spark_session

    csv_cells = False
    if isinstance(source, str):
        session = spark if spark is not None else spark_session()
        source, csv_cells = read_stream(session, source, **source_options)
    partial, plans = trend_stream(
        source,
        workload,
        lateness=parse_lateness(lateness),
        strategy=strategy,
        type_col=type_col,
        time_col=time_col,
        event_type=event_type,
        csv_cells=csv_cells,
        buckets=buckets,
    )
    from trendagg.language import ast, to_text

    check_checkpoint(
        checkpoint,
        {
            "queries": to_text(ast.Workload(tuple(p.query for p in plans))),
            "type_col": type_col,
            "time_col": time_col,
            "event_type": event_type,
            "buckets": buckets,
        },
    )
    stats = StreamStats()
    if RECORD not in source.columns:  # (JSON Lines: only the rows know their keys)
        from trendagg.plan.compile import unknown_attributes

        stats.warnings = unknown_attributes(plans, source.columns)
    return start_stream(
        partial,
        plans,
        output=output,
        checkpoint=checkpoint,
        fmt=fmt,
        trigger=trigger,
        available_now=available_now,
        stats=stats,
    )


def check_checkpoint(checkpoint: str, settings: dict[str, object]) -> None:
    """Refuse to resume a checkpoint made with other queries or columns: its engine state
    would be read against the wrong plans. A new checkpoint records the settings."""
    if "://" in checkpoint and not checkpoint.startswith("file://"):
        return  # on a cluster file system: Spark keeps the checkpoint, unchecked here
    path = Path(checkpoint.removeprefix("file://")) / "trendagg.json"
    if path.is_file():
        before = json.loads(path.read_text(encoding="utf-8"))
        changed = [k for k in settings if before.get(k) != settings[k]]
        if changed:
            raise InputError(
                f"the checkpoint {checkpoint} belongs to a stream with other "
                f"{', '.join(changed)}: resume it with the same ones, or start a new stream "
                f"with another --checkpoint (and --output)"
            )
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings, indent=1) + "\n", encoding="utf-8")


def stream_conf(spark: Any) -> dict[str, str]:
    """Settings a trendagg stream needs on its SparkSession: the RocksDB state store, and,
    unless the session sets them, twice its cores as state partitions (Spark's default,
    200, would run 200 tasks a micro-batch; a new checkpoint keeps the number it starts with)."""
    conf = {
        "spark.sql.streaming.stateStore.providerClass": (
            "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
        ),
    }
    if not spark.sparkContext.getConf().contains("spark.sql.shuffle.partitions"):
        conf["spark.sql.shuffle.partitions"] = str(2 * spark.sparkContext.defaultParallelism)
    return conf


def read_results(output: str) -> list[Any]:
    """Every result row a stream has written under ``output`` (JSON Lines), in file order."""
    from trendagg.io.results import ResultRow

    rows: list[Any] = []
    for f in sorted((Path(output) / "results").glob("part-*.jsonl")):
        for line in f.read_text(encoding="utf-8").splitlines():
            d = json.loads(line)
            rows.append(
                ResultRow(
                    query=d["query"],
                    window_start=d["window_start"],
                    window_end=d["window_end"],
                    group=d["group"],
                    values=d["values"],
                )
            )
    return rows


__all__ = [
    "StreamStats",
    "parse_lateness",
    "read_results",
    "read_stream",
    "start_stream",
    "stream_conf",
    "stream_trends",
    "trend_stream",
]
