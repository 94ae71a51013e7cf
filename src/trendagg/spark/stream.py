"""Trend aggregation over Spark Structured Streaming, with event-time watermarks.

The pipeline, per micro-batch:

1. A source (a directory of CSV / JSON Lines / Parquet files, the socket
   source with one JSON object per line, or the rate source turned into a
   ride-sharing stream) gives rows.
2. A ``mapInArrow`` (:func:`_router`) reads each Arrow batch of them with the
   local readers' rules, as the batch pipeline's first step does (rejected rows
   leave here, each once). Queries are grouped by their unqualified partition
   attributes; each group's events are split by the engine's hash of their key
   values into a fixed number of buckets (one per core), and each bucket's events
   of the batch leave as one row: the pickled arrays, keyed (group, bucket's
   key), each bucket in a task of its own (:func:`key_labels`). Every row carries
   the batch's latest event time, which feeds Spark's watermark: the largest
   event time seen so far minus the allowed lateness.
3. ``transformWithStateInPandas`` keeps, per key, in the state store (RocksDB),
   the engine's :class:`Runner` (which tells the partitions of its bucket
   apart; pickled with its plans by reference, see :mod:`trendagg.engine.state`,
   and zstd-compressed) and the events not yet fed.
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
import math
import os
import re
import threading
import time as _time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trendagg.errors import InputError
from trendagg.io.values import shown
from trendagg.limits import TIME_LIMIT, time_out_of_range
from trendagg.spark.checkpoint import (
    FileCheck,
    check_checkpoint,
    check_spark_files,
    checkpoint_failure,
    checkpoint_settings,
    start_holding,
)
from trendagg.spark.inputs import source_format_of
from trendagg.spark.partials import (
    ARROW_ROWS,
    check_frame_columns,
    combine,
    partial_cells,
    prepare,
    query_groups,
)
from trendagg.spark.records import (
    CSV_RAW,
    RECORD,
    Reading,
    csv_quoting,
    csv_reader,
    json_lines,
    record_of,
)

GROUP = "__trendagg_group"
KEY = "__trendagg_key"
WATERMARK = "__trendagg_event_time"

# the router's rows (see _router): per key, the events of one Arrow batch, a rejected
# row, or the count of a batch's events read; "t" is the batch's latest event time
EVENTS, REJECT, COUNT = 0, 1, 2
_ROUTED = (
    f"{GROUP} int, {KEY} int, kind tinyint, seq bigint, blob binary, reason string, "
    "record string, n bigint, t double"
)
_ROUTED_COLUMNS = [c.split()[0] for c in _ROUTED.split(", ")][:-1]
# what the keyed step gets, positionally: the router's columns, its batch's latest time
_KEYED_COLUMNS = [*_ROUTED_COLUMNS, "t"]
_FLOOR = -62_135_596_800.0  # year 1: the time of a batch without events (moves no watermark)

# the rows of the keyed part; "query" holds the queries of a late event
_OUT = (
    "kind string, query string, window bigint, group_json string, registers string, "
    "time double, record string, reason string, events bigint"
)
_OUT_COLUMNS = [c.split()[0] for c in _OUT.split(", ")]
_STATE = "data binary"
# how events find their key: 2, the engine's hash of its values (see _router); 3, each
# bucket's key chosen so that Spark puts the buckets in partitions of their own
ROUTING = 3


def default_buckets(spark: Any) -> int:
    """State keys per query group: one per core of Spark. Each key's state crosses the
    Python worker's socket and RocksDB whole on every micro-batch it gets events, and
    each key's engine has a fixed cost per feed, so fewer, larger keys cost less (1M
    events in ten micro-batches, 50 queries, 2 cores: 64 keys took 48.6 s and 8 keys
    37.6 s with a compile on the other core; quiet, 8 keys in 4 partitions took 26.3 s,
    4 in 4 25.2 s and 2 in 2 22.0 s)."""
    from trendagg.spark.batch import default_partitions

    return default_partitions(spark)  # (the cores, as batch's buckets)


def stream_partitions(spark: Any) -> int:
    """The state partitions (tasks per micro-batch) of a new stream: the session's
    ``spark.sql.shuffle.partitions`` when its configuration sets it, else its cores.
    (Spark's default, 200, would run 200 tasks a micro-batch; a checkpoint keeps the
    number it starts with.)"""
    conf = spark.sparkContext.getConf()
    if conf.contains("spark.sql.shuffle.partitions"):
        return int(conf.get("spark.sql.shuffle.partitions"))
    return default_buckets(spark)


def delay_ms(lateness: float) -> int:
    """The watermark's delay given Spark, in ms: one number for Spark's watermark and for
    the keys' safe time (:meth:`_TrendProcessor._safe`), which must not pass it."""
    return int(round(lateness * 1000))


def key_labels(groups: int, buckets: int, partitions: int) -> list[list[int]]:
    """Per query group, per bucket: the key number under which Spark's hash partitioning
    (pmod(hash(group, key), partitions)) puts bucket b of group g in partition
    (g * buckets + b) mod partitions, so that the buckets spread evenly over the tasks
    (numbered keys 0, 1, ... would share a task by chance: 2 keys in 2 tasks, half the
    time). The keys name the engine state: a stream keeps them while it lives."""
    from trendagg.spark.batch import spark_hash_ints

    labels = []
    for g in range(groups):
        found: list[int] = []
        k = 0
        for b in range(buckets):
            target = (g * buckets + b) % partitions
            while spark_hash_ints(g, k) % partitions != target or k in found:
                k += 1
            found.append(k)
            k = 0
        labels.append(found)
    return labels


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
    # one line per source file that looked unfinished when read (see checkpoint.FileCheck)
    unfinished: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def summary(self) -> str:
        n = len(self.unfinished)
        cut = f", {n} unfinished file{'' if n == 1 else 's'}" if n else ""
        return (
            f"{self.batches} micro-batches, {self.events:,} events, {self.rows:,} rows written, "
            f"{self.late:,} late, {self.rejected:,} rejected{cut}"
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
    kind = source_format_of(path, source_format)
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
                header = csv_quoting(spark.read).option("header", True).csv(str(path)).columns
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
    rate = spark.readStream.format("rate").option("rowsPerSecond", int(rows_per_second)).load()
    return rate.select(
        kind.alias("type"),
        (v / F.lit(float(rows_per_second))).alias("time"),
        (v % drivers).alias("driver"),
        (trip * drivers + v % drivers).alias("rider"),
        (F.abs(F.hash(trip)) % 10).alias("district"),
        ((F.abs(F.hash(v)) % 300) + 30).alias("duration"),
        ((F.abs(F.hash(v, F.lit(1))) % 80) + 10).alias("speed"),
        ((F.abs(F.hash(trip, F.lit(2))) % 50) + 5).alias("price"),
    )


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
    buckets: int | None = None,
    partitions: int | None = None,
) -> tuple[Any, list[Any]]:
    """The keyed, stateful part of the pipeline: a streaming DataFrame of partial rows.

    Returns the DataFrame (columns ``kind, query, window, group_json,
    registers, time, record, reason, events``; ``kind`` is ``row``, ``late``,
    ``reject`` or ``seen``) and the compiled plans. :func:`start_stream` writes
    it; its sink combines the partial rows into results.

    Per query group, the partition keys are hashed into ``buckets`` state keys
    (None: :func:`default_buckets`), each with one engine Runner (which tells its
    partitions apart, as in the batch pipeline): a handful of state reads and writes
    per micro-batch instead of one per driver or rider. Each bucket's key is chosen so
    that the buckets spread evenly over the stream's ``partitions`` (None:
    :func:`stream_partitions`). A restart must use the same two numbers
    (:func:`stream_trends` takes them from the checkpoint).
    """
    from pyspark.sql import functions as F

    if strategy == "twostep":
        raise InputError(
            "the twostep reference builds trends at the end and cannot stream; "
            "use hamlet, hamlet-static, greta, sharon, aseq or gloria"
        )
    if buckets is None:
        buckets = default_buckets(df.sparkSession)
    if buckets < 1:
        raise InputError(f"the number of state buckets must be at least 1, not {buckets}")
    if partitions is None:
        partitions = stream_partitions(df.sparkSession)
    if partitions < 1:
        raise InputError(f"the number of state partitions must be at least 1, not {partitions}")
    text, plans, _ = prepare(workload, strategy)
    labels = key_labels(len(query_groups(plans)), buckets, partitions)
    # CSV: the header's names, to tell rows with more cells (Spark keeps their text)
    header = tuple(c for c in df.columns if c not in (RECORD, CSV_RAW)) if csv_cells else ()
    reading = Reading(type_col, time_col, event_type, csv_cells, header)
    if RECORD not in df.columns:
        check_frame_columns(df.columns, reading)
    routed = df.mapInArrow(_router(text, reading, labels), _ROUTED)
    # the watermark: the latest event time seen, minus the allowed lateness
    micros = F.floor(F.col("t") * F.lit(1_000_000)).cast("long")
    timed = routed.withColumn(WATERMARK, F.timestamp_micros(micros))
    timed = timed.withWatermark(WATERMARK, f"{delay_ms(lateness)} milliseconds")
    # (without the event-time column, the stateful step gets the late events too: it
    # reports them, where Spark would drop them unsaid)
    keyed = timed.select(*_KEYED_COLUMNS)
    out = keyed.groupBy(GROUP, KEY).transformWithStateInPandas(
        statefulProcessor=_TrendProcessor(text, strategy, reading, lateness),
        outputStructType=_OUT,
        outputMode="Append",
        timeMode="EventTime",
    )
    return out, plans


def _router(text: str, reading: Reading, labels: list[list[int]]) -> Any:
    """Per micro-batch partition: read each Arrow batch with the local readers' rules (as
    the batch pipeline's first step does) and send each query group's events to the key
    of their bucket (``labels[group][bucket]``, :func:`key_labels`), one pickled batch of
    arrays per key; the rejected rows and the count
    of events read go to key (-1, 0). Every row carries the batch's latest event time,
    which moves the watermark (rows no query reads too)."""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pickle

        import numpy as np
        import pyarrow as pa

        from trendagg.io.batch import float_below
        from trendagg.spark.batch import TaskReader, record_text

        task = TaskReader(text, reading, False)
        n = len(labels[0]) if labels else 1
        for rb in batches:
            batch = task.read(rb)
            ids = batch.ids
            rejects = [(reason, record) for _, reason, record, _ in batch.rejected]
            events = batch.read.events
            far = ~(np.abs(events.times) < TIME_LIMIT)  # (no watermark holds such a time)
            if events.per_second != 1:  # (ticks: of timestamps, inside the limit)
                far[:] = False
            if far.any():
                assert events.rows is not None
                times = events.time_values()
                for i in np.flatnonzero(far).tolist():
                    record = record_text(batch.table, int(events.rows[i]), reading.csv_cells)
                    rejects.append((time_out_of_range(shown(times[i])), record))
                events = events.take(np.flatnonzero(~far))
            top = (
                float_below(events.time_at(int(np.argmax(events.times)))) if len(events) else _FLOOR
            )
            read = np.zeros(len(events), np.bool_)
            cells: dict[str, list[Any]] = {c: [] for c in _ROUTED_COLUMNS}
            for g, b, picked in task.split(events, n):
                read[picked] = True
                seq = int(ids[events.rows[picked[0]] - 1])
                blob = pickle.dumps(events.take(picked), protocol=5)
                _cell(cells, g, labels[g][b], EVENTS, seq=seq, blob=blob)
            for reason, record in rejects:
                _cell(cells, -1, 0, REJECT, reason=reason, record=record)
            _cell(cells, -1, 0, COUNT, n=int(np.count_nonzero(read)))
            cells["t"] = [top] * len(cells["kind"])
            yield pa.RecordBatch.from_pydict(cells, schema=_routed_schema(pa))

    return run


def _cell(cells: dict[str, list[Any]], g: int, k: int, kind: int, **given: Any) -> None:
    """One more router row: key (g, k), ``kind``, the cells given (the others null)."""
    given.update({GROUP: g, KEY: k, "kind": kind})
    for name, values in cells.items():
        values.append(given.get(name))


def _routed_schema(pa: Any) -> Any:
    return pa.schema(
        [
            (GROUP, pa.int32()),
            (KEY, pa.int32()),
            ("kind", pa.int8()),
            ("seq", pa.int64()),
            ("blob", pa.binary()),
            ("reason", pa.string()),
            ("record", pa.string()),
            ("n", pa.int64()),
            ("t", pa.float64()),
        ]
    )


def _processor_base() -> Any:
    from pyspark.sql.streaming import StatefulProcessor

    return StatefulProcessor


class _Key:
    """What a key keeps between micro-batches: its Runner, the events that wait (an
    EventBatch, in arrival order, or None), the latest time fed, the time of its timer
    (ms; kept here, as listing the timers costs a call to the state server per key and
    micro-batch), the time before which no event of a later micro-batch can count
    (``safe``, see :meth:`_TrendProcessor._safe`) and the rows of the windows that
    closed there but that the watermark has not passed yet (``held``)."""

    __slots__ = ("runner", "pending", "t_max", "timer", "safe", "held")

    def __init__(self) -> None:
        self.runner: Any = None
        self.pending: Any = None
        self.t_max: Any = None
        self.timer: int | None = None
        self.safe = float("-inf")
        self.held: list[Any] = []

    def bound(self, watermark: float) -> float:
        """The time this key feeds its events up to: the watermark or its safe time,
        whichever is later (-inf: neither is known yet)."""
        return max(watermark, self.safe)


# per Python worker: the workload's plans, groups, state codec and readers, by its text
# (Spark calls init once per task: each micro-batch would compile the workload again)
_PREPARED: dict[str, tuple[Any, Any, Any]] = {}


def _prepared(text: str) -> tuple[Any, Any, Any]:
    """(plans per group, state codec, per group: type -> the queries that read it)."""
    found = _PREPARED.get(text)
    if found is None:
        from trendagg.engine.state import StateCodec
        from trendagg.language import parse
        from trendagg.plan.compile import compile_workload

        plans = compile_workload(parse(text))
        by_name = {p.name: p for p in plans}
        grouped = [[by_name[n] for n in g.names] for g in query_groups(plans)]
        # the state store's bytes: compressed (the keys' state crosses a socket and
        # RocksDB each micro-batch), plans stored by name (see trendagg.engine.state)
        codec = StateCodec([p for g in grouped for p in g], compress=True)
        readers: list[dict[str, str]] = []  # per group: type -> its queries that read it
        for group_plans in grouped:
            names: dict[str, list[str]] = {}
            for p in group_plans:
                for t in p.type_to_var:
                    names.setdefault(t, []).append(p.name)
            readers.append({t: ",".join(n) for t, n in names.items()})
        found = _PREPARED[text] = (grouped, codec, readers)
    return found


class _TrendProcessor(_processor_base()):  # type: ignore[misc]
    """Per key: the engine's runner and the events waiting for the watermark.

    Spark hands a key's rows over as pandas frames (``transformWithStateInPandas``),
    a few per micro-batch: each holds the key's events of one Arrow batch of the
    input, read by the router into arrays and pickled (:func:`_router`), so the
    events stay arrays (kept, sorted, fed) from the input to the engine. Key
    (-1, 0) gets the rejected rows and the counts of events read.
    """

    def __init__(self, workload_text: str, strategy: str, reading: Reading, lateness: float):
        self.workload_text = workload_text
        self.strategy = strategy
        self.reading = reading
        self.lateness = lateness
        self.lateness_ms = delay_ms(lateness)  # (the watermark's delay, as Spark has it)

    # -- Spark's interface

    def init(self, handle: Any) -> None:
        self.handle = handle
        self.state = handle.getValueState("engine", _STATE)
        self.plans, self.codec, self.readers = _prepared(self.workload_text)

    def handleInputRows(self, key: Any, rows: Iterator[Any], timerValues: Any) -> Iterator[Any]:
        import pickle

        import numpy as np

        from trendagg.io.gather import concat
        from trendagg.io.values import time_text

        group = int(key[0])
        watermark = self._watermark(timerValues)
        out = _Output()
        parts: list[tuple[int, bytes]] = []
        seen = float("-inf")  # the latest time of the input batches this key's rows come from
        for pdf in rows:  # columns come positionally, in the order of _KEYED_COLUMNS
            seen = max(seen, float(pdf.iloc[:, 8].max()))
            kinds = pdf.iloc[:, 2].tolist()
            seqs, blobs = pdf.iloc[:, 3].tolist(), pdf.iloc[:, 4].tolist()
            reasons, records, counts = (pdf.iloc[:, c].tolist() for c in (5, 6, 7))
            for i, kind in enumerate(kinds):
                if kind == EVENTS:
                    parts.append((int(seqs[i]), blobs[i]))
                elif kind == REJECT:
                    out.add(kind="reject", query="", record=records[i], reason=reasons[i])
                else:
                    out.add(kind="seen", events=int(counts[i]))
        if group < 0 or not parts:
            yield from out.frames()
            return
        parts.sort(key=lambda p: p[0])  # (the input's order within a micro-batch partition)
        events = concat([pickle.loads(blob) for _, blob in parts])
        st = self._load() or _Key()
        # (an event before the time fed up to is late: the next watermark is at least
        # that time, so with Spark's watermark this is the watermark alone)
        late = events.ticks_before(st.bound(watermark))
        if late.any():
            index = np.flatnonzero(late)
            taken = events.take(index)
            for t, record in zip(taken.time_values(), self._records(taken), strict=True):
                out.add(
                    kind="late",
                    query=self.readers[group][record[self.reading.type_col]]
                    if self.reading.event_type is None
                    else self.readers[group][self.reading.event_type],
                    time=float(t),
                    record=json.dumps(record, default=str),
                    reason=(
                        f"late: event time {time_text(t)} is before the watermark {watermark:g} "
                        f"(latest event time seen minus the allowed lateness of "
                        f"{self.lateness:g} s)"
                    ),
                )
            events = events.take(np.flatnonzero(~late))
        if len(events):
            st.pending = events if st.pending is None else concat([st.pending, events])
        st.safe = max(st.safe, self._safe(seen))
        self._advance(group, st, watermark, out)
        self._save(group, st, watermark)
        yield from out.frames()

    def handleExpiredTimer(
        self, key: Any, timerValues: Any, expiredTimerInfo: Any
    ) -> Iterator[Any]:
        group = int(key[0])
        if group < 0:
            return
        st = self._load()
        if st is None:
            return
        watermark = self._watermark(timerValues)
        st.timer = None  # (it fired: Spark dropped it)
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

    def _safe(self, seen: float) -> float:
        """A time before which no event of a later micro-batch is fed, given that this
        one's input holds an event at ``seen``: the next watermark is at least ``seen``
        minus the lateness (Spark's, in ms; one ms less, for the rounding of times), and
        an event before the watermark is late. So the events before it can be fed now
        instead of waiting a micro-batch in the state."""
        if seen == float("-inf"):
            return seen
        return (math.floor(seen * 1000) - self.lateness_ms - 1) / 1000

    def _records(self, events: Any) -> list[dict[str, object]]:
        """The events as the engine read them, one JSON object each (the late events'
        record): type, time and the attributes each has."""
        reading = self.reading
        out = []
        for kind, t, attributes in events.records():
            head: dict[str, object] = {} if reading.event_type else {reading.type_col: kind}
            out.append({**head, reading.time_col: t, **attributes})
        return out

    def _load(self) -> _Key | None:
        """The key's state (None: it has none; one call to the state server)."""
        value = self.state.get()
        if value is None:
            return None
        st: _Key = self.codec.loads(bytes(value[0]))
        if isinstance(st.pending, list):  # a checkpoint that kept (time, type, attributes)
            st.pending = _as_batch(st.pending)
        if not hasattr(st, "held"):  # a checkpoint from before events were fed early
            st.safe, st.held = float("-inf"), []
        return st

    def _advance(self, group: int, st: _Key, watermark: float, out: _Output) -> None:
        """Feed, in time order, the events before the watermark or the key's safe time
        (whichever is later); close the windows that end by it. Rows of windows that end
        after the watermark are held until it passes them: every key writes a window's
        partial rows in the same micro-batch, which the sink combines."""
        import numpy as np

        from trendagg.engine import Runner

        bound = st.bound(watermark)
        if bound == float("-inf"):
            return
        rows = []
        if st.pending is not None:
            ready = st.pending.ticks_before(bound)
            if ready.any():
                batch = st.pending.take(np.flatnonzero(ready))
                st.pending = None if ready.all() else st.pending.take(np.flatnonzero(~ready))
                order = batch.order()
                batch = batch if order is None else batch.take(order)
                if st.runner is None:
                    st.runner = Runner(self.plans[group], self.strategy)
                rows = st.runner.feed(batch)
                last = batch.time_at(-1)
                st.t_max = last if st.t_max is None else max(st.t_max, last)
        if st.runner is not None:
            rows.extend(st.runner.advance(bound))
        if st.held:
            rows = st.held + rows
        st.held = []
        for r in rows:
            if r.window_end > watermark:
                st.held.append(r)
                continue
            query, window, group_json, registers = partial_cells(r)
            out.add(
                kind="row", query=query, window=window, group_json=group_json, registers=registers
            )

    def _save(self, group: int, st: _Key, watermark: float) -> None:
        """Keep the key (and a timer at its next window end), or drop it when it is done."""
        plans = self.plans[group]
        done = (
            st.pending is None
            and not st.held
            and (st.t_max is None or all(p.window.last_end(st.t_max) <= watermark for p in plans))
        )
        if done:
            if st.timer is not None:
                self.handle.deleteTimer(st.timer)
            self.state.clear()
            return
        # the next window end after the time fed up to (before any: after the earliest
        # waiting event), or a held row's, when this key has rows to write without input
        bound = st.bound(watermark)
        base = (
            bound if bound != float("-inf") else st.pending.time_at(int(st.pending.times.argmin()))
        )
        ends = [p.window.end(p.window.closed_before(base)) for p in plans]
        nxt = min(ends + [r.window_end for r in st.held])
        timer = int(-(-nxt * 1000 // 1))
        if timer != st.timer:
            if st.timer is not None:
                self.handle.deleteTimer(st.timer)
            self.handle.registerTimer(timer)
            st.timer = timer
        self.state.update((self.codec.dumps(st),))


def _as_batch(pending: list[tuple[Any, str, dict[str, object]]]) -> Any:
    """Waiting events kept as (time, type, attributes) tuples, as arrays (None if none)."""
    from trendagg.io import EventBatch

    if not pending:
        return None
    names = sorted({k for e in pending for k in e[2]})
    columns = {n: [e[2].get(n) for e in pending] for n in names}
    return EventBatch.of([e[1] for e in pending], [e[0] for e in pending], columns)


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

    def __init__(
        self,
        plans: Sequence[Any],
        output: str,
        fmt: str,
        stats: StreamStats,
        checkpoint: str | None = None,
    ):
        self.plans = {p.name: p for p in plans}
        self.order = {p.name: i for i, p in enumerate(plans)}
        self.output = Path(output)
        self.fmt = fmt
        self.stats = stats
        self.files = FileCheck(checkpoint)  # (the source files read, from the checkpoint)
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
        unfinished = self.files.warnings()
        with self.stats.lock:
            self.stats.unfinished += unfinished
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
    check_spark_files(checkpoint)
    sink = _Sink(plans, output, fmt, stats, checkpoint)
    writer = partial.writeStream.foreachBatch(sink).option("checkpointLocation", checkpoint)
    if available_now:
        writer = writer.trigger(availableNow=True)
    elif trigger:
        writer = writer.trigger(processingTime=trigger)
    # Arrow batches of 100,000 rows into the router, as batch's step 1 takes them (Spark's
    # 10,000 cost a 500,000-event micro-batch 0.3 s more here: the router's work per
    # batch is per key); a query keeps the session's settings of its start, so for this
    # stream only
    key = "spark.sql.execution.arrow.maxRecordsPerBatch"
    before = spark.conf.get(key, None)
    spark.conf.set(key, str(ARROW_ROWS))
    try:
        query = start_holding(checkpoint, writer.queryName(f"trendagg-{int(_time.time())}").start)
    except Exception as exc:
        damage = checkpoint_failure(checkpoint, exc)
        if damage is None:
            raise
        raise damage from None
    finally:
        spark.conf.unset(key) if before is None else spark.conf.set(key, before)
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
    buckets: int | None = None,
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
    if isinstance(source, str):  # (checked before Spark starts, as the local readers check)
        from trendagg.io.options import ReadOptions
        from trendagg.spark.inputs import check_source

        check_source(
            source,
            ReadOptions(type_col, time_col, event_type),
            source_format=source_options.get("source_format"),
            schema=source_options.get("schema"),
        )
        session = spark if spark is not None else spark_session()
        source, csv_cells = read_stream(session, source, **source_options)
    kept = checkpoint_settings(checkpoint)  # a resumed stream keeps its keys
    if buckets is None:
        b = kept.get("buckets")
        buckets = b if isinstance(b, int) else default_buckets(source.sparkSession)
    p = kept.get("partitions")
    partitions = p if isinstance(p, int) else stream_partitions(source.sparkSession)
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
        partitions=partitions,
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
            "partitions": partitions,
            "routing": ROUTING,
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


def stream_conf(spark: Any) -> dict[str, str]:
    """Settings a trendagg stream needs on its SparkSession: the RocksDB state store, and,
    unless the session sets them, changelog checkpoints and :func:`stream_partitions`."""
    conf = {
        "spark.sql.streaming.stateStore.providerClass": (
            "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
        ),
    }
    changelog = "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled"
    if not spark.sparkContext.getConf().contains(changelog):
        conf[changelog] = "true"
    if not spark.sparkContext.getConf().contains("spark.sql.shuffle.partitions"):
        conf["spark.sql.shuffle.partitions"] = str(stream_partitions(spark))
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
    "checkpoint_settings",
    "default_buckets",
    "delay_ms",
    "key_labels",
    "parse_lateness",
    "read_results",
    "read_stream",
    "start_stream",
    "stream_conf",
    "stream_partitions",
    "stream_trends",
    "trend_stream",
]
