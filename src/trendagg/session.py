"""One way from events to results (read -> run -> report) for the API, the CLI and the demo.

:func:`run_file` streams an event file through a :class:`~trendagg.engine.Runner`
in chunks of :data:`CHUNK_ROWS` source rows, so memory holds the open
windows and the results, not the file. The Runner needs each chunk no
earlier than the ones before it; a file whose events are out of time order
across chunks (OutOfOrder) is read again whole and sorted, which gives the
results of a whole-file read. What an attribute holds never matters to the
chunks: the Runner routes each query by its plan, and the compiled engine keeps
each output's kind, and ranks MIN/MAX values a float64 cannot order, as the
values come. :func:`run_events` runs events that
are already in memory (records, or an EventBatch).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from trendagg.errors import InputError, wrong_argument
from trendagg.io.assemble import from_mappings
from trendagg.io.batch import EventBatch, RejectedRow, Stamps
from trendagg.io.frames import frame_kind, frame_package, from_frame
from trendagg.io.options import ReadOptions
from trendagg.io.results import ResultRow
from trendagg.plan.compile import QueryPlan, attributes_read, numeric_requirements
from trendagg.plan.routing import KeysSeen

CHUNK_ROWS = 500_000
EVENTS_ACCEPTED = (
    "a path (CSV, JSON Lines, Parquet), an EventBatch, a pandas DataFrame, a polars "
    "DataFrame or LazyFrame, a pyarrow Table, or an iterable of mappings (one per event, "
    "with a type and a time)"
)
ENGINES = ("local", "reference", "python")  # python: an alias of reference


@dataclass
class RunResult:
    """What a run read and returned."""

    rows: list[ResultRow]
    events: int  # accepted events
    rejected: list[RejectedRow]
    names: set[str]  # the attribute columns read
    stats: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    chunks: int = 0  # 0: read whole
    stamps: Stamps | None = None  # what the times were written as (None: no events, a batch)


class _Reread(Exception):
    """The file cannot be streamed in chunks (see the module docstring)."""


def reader_options(plans: list[QueryPlan], read: ReadOptions) -> dict[str, Any]:
    """The readers' keywords a run of ``plans`` reads a file with: the columns as
    ``read`` says, the numbers the queries need checked, the attributes they read."""
    return {
        "type_col": read.type_col,
        "time_col": read.time_col,
        "event_type": read.event_type,
        "numeric": numeric_requirements(plans) if read.numeric is None else read.numeric,
        "columns": read.columns,
        "attributes": attributes_read(plans) if read.attributes is None else read.attributes,
    }


def run_file(
    plans: list[QueryPlan],
    path: str | os.PathLike[str],
    read: ReadOptions,
    *,
    engine: str = "local",
    strategy: str = "hamlet",
    trend_limit: int | None = None,
    progress: Callable[[int], None] | None = None,
    log: bool = False,
    chunk_rows: int = CHUNK_ROWS,
    partitions: bool = True,
) -> RunResult:
    """All rows of a workload over an event file (CSV, JSON Lines, Parquet), in
    workload order, with the rows the readers rejected; ``partitions``: count the
    partition keys for the summary (``stats["partitions"]``; 2% of a short run)."""
    started = time.perf_counter()
    keys = KeysSeen(plans) if partitions else None
    try:
        result = _streamed(
            plans, path, read, engine, strategy, trend_limit, progress, log, chunk_rows, keys
        )
    except _Reread:
        keys = KeysSeen(plans) if partitions else None
        result = _streamed(plans, path, read, engine, strategy, trend_limit, None, log, None, keys)
    result.seconds = time.perf_counter() - started
    return result


def run_events(
    plans: list[QueryPlan],
    events: Any,
    read: ReadOptions | None = None,
    *,
    engine: str = "local",
    strategy: str = "hamlet",
    trend_limit: int | None = None,
    progress: Callable[[int], None] | None = None,
    log: bool = False,
) -> RunResult:
    """All rows of a workload over events in memory: an EventBatch, a pyarrow Table, a
    pandas or polars DataFrame (columns are attributes, see :mod:`trendagg.io.frames`),
    or records (mappings with a type and a time), read with the readers' rules and
    ``read``'s type and time columns. ArgumentError for anything else (a Series too)."""
    from trendagg.engine import run_strategy

    started = time.perf_counter()
    rejected: list[RejectedRow] = []
    stamps = None
    if not isinstance(events, EventBatch):
        read = read or ReadOptions()
        options = ReadOptions(
            read.type_col, read.time_col, read.event_type, numeric_requirements(plans)
        )
        if frame_kind(events) is not None:
            got = from_frame(events, options)
        else:
            if events is None or isinstance(events, str | bytes | Mapping):
                raise wrong_argument("events", events, EVENTS_ACCEPTED)
            if frame_package(events) is not None:  # a Series, a RecordBatch, an array...
                raise wrong_argument("events", events, EVENTS_ACCEPTED)
            try:
                numbered = enumerate(events, start=1)
            except TypeError:
                raise wrong_argument("events", events, EVENTS_ACCEPTED) from None
            got = from_mappings(numbered, options, source="<records>", what="record")
        events, rejected, stamps = got.events, got.rejected, got.stamps
    stats: dict[str, Any] = {}
    rows = run_strategy(
        plans,
        events,
        strategy,
        trend_limit=trend_limit,
        progress=progress,
        stats=stats,
        log=log,
        compiled=_compiled(engine),
    )
    names = set(events.columns)
    seconds = time.perf_counter() - started
    return RunResult(rows, len(events), rejected, names, stats, seconds, stamps=stamps)


def _compiled(engine: str) -> bool:
    if engine not in ENGINES:
        raise InputError(f"unknown engine '{engine}'; choose one of {', '.join(ENGINES)}")
    return engine == "local"


def _streamed(
    plans: list[QueryPlan],
    path: str | os.PathLike[str],
    read: ReadOptions,
    engine: str,
    strategy: str,
    trend_limit: int | None,
    progress: Callable[[int], None] | None,
    log: bool,
    chunk_rows: int | None,
    keys: KeysSeen | None,
) -> RunResult:
    """Feed the file's chunks (or, with ``chunk_rows`` None, the whole file) to a Runner,
    and count their partition keys into ``keys``."""
    from trendagg.engine import Runner
    from trendagg.engine.runner import OutOfOrder
    from trendagg.io.readers import iter_events, read_events

    options = reader_options(plans, read)
    runner = Runner(plans, strategy, trend_limit=trend_limit, log=log, compiled=_compiled(engine))
    if chunk_rows is None:
        parts: Iterable[Any] = [read_events(path, **options)]
    else:
        parts = iter_events(path, chunk_rows=chunk_rows, **options)
    rows: list[ResultRow] = []
    rejected: list[RejectedRow] = []
    names: set[str] = set()
    stamps: Stamps | None = None
    events = chunks = 0
    try:
        for part in parts:
            chunks += 1
            rows += runner.feed(part.events)
            if keys is not None:
                keys.add(part.events)
            rejected += part.rejected
            if part.stamps is not None:
                stamps = part.stamps.join(stamps)
            names.update(part.events.columns)
            events += len(part.events)
            if progress is not None:
                progress(len(part.events))
        rows += runner.finish()
    except OutOfOrder:
        if chunk_rows is None:
            raise
        raise _Reread() from None
    stats: dict[str, Any] = {} if keys is None else {"partitions": keys.count}
    runner.report(stats)
    order = {p.name: i for i, p in enumerate(plans)}
    rows.sort(key=lambda r: order[r.query])  # stable: windows stay in order within a query
    chunked = chunks if chunk_rows else 0
    return RunResult(rows, events, rejected, names, stats, 0.0, chunked, stamps)
