"""Drive the streaming processor without Spark, making the calls Spark makes, in its order.

Each micro-batch's rows go through the stream's router (:func:`trendagg.spark.stream._router`,
as JSON Lines texts), which keys them by query group and a bucket of their partition key
(three buckets, so that keys hold several partitions, as Spark's do). Per micro-batch: ``handleInputRows`` for every key with input (the watermark
of the batch: the latest event time of earlier batches minus the lateness),
then ``handleExpiredTimer`` for every timer at or before the watermark, then
the sink gets the batch's output. The state store and the timers outlive the
processors, so a restart (new processors, same store) can be simulated.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from trendagg.io.batch import float_below
from trendagg.io.values import time_value
from trendagg.language import parse, to_text
from trendagg.plan.compile import compile_workload
from trendagg.spark.partials import query_groups
from trendagg.spark.records import RECORD, Reading
from trendagg.spark.stream import (
    _KEYED_COLUMNS,
    StreamStats,
    _router,
    _Sink,
    _TrendProcessor,
    key_labels,
    read_results,
)


class _ValueState:
    def __init__(self) -> None:
        self.value: Any = None

    def exists(self) -> bool:
        return self.value is not None

    def get(self) -> Any:
        return self.value

    def update(self, value: Any) -> None:
        self.value = value

    def clear(self) -> None:
        self.value = None


class _Handle:
    def __init__(self, store: dict[Any, Any], timers: dict[Any, set[int]], key: Any):
        self.store, self.timers, self.key = store, timers, key

    def getValueState(self, name: str, schema: str) -> _ValueState:  # noqa: N802 (Spark's name)
        return self.store.setdefault((name, self.key), _ValueState())  # type: ignore[no-any-return]

    def listTimers(self) -> list[int]:  # noqa: N802
        return sorted(self.timers.get(self.key, set()))

    def registerTimer(self, t: int) -> None:  # noqa: N802
        self.timers.setdefault(self.key, set()).add(t)

    def deleteTimer(self, t: int) -> None:  # noqa: N802
        self.timers.get(self.key, set()).discard(t)


class _TimerValues:
    def __init__(self, ms: int):
        self.ms = ms

    def getCurrentWatermarkInMs(self) -> int:  # noqa: N802
        return self.ms


def run_stream(
    text: str,
    chunks: Sequence[Sequence[dict[str, object]]],
    lateness: float,
    out_dir: Path,
    *,
    strategy: str = "hamlet",
    restart_after: int | None = None,
    fmt: str = "jsonl",
    after_batch: Callable[[int, dict[Any, Any]], None] | None = None,
) -> tuple[list[Any], StreamStats]:
    """Rows written by a stream whose micro-batches bring ``chunks`` (then one empty batch);
    with another ``fmt`` than jsonl, the files are written in it and no rows are read back.
    ``after_batch(b, store)`` is called after each micro-batch b with the state store."""
    import pandas as pd
    import pyarrow as pa

    workload = parse(text)
    plans = compile_workload(workload)
    store: dict[Any, Any] = {}
    timers: dict[Any, set[int]] = {}
    sink = _Sink(plans, str(out_dir), fmt, StreamStats())
    procs: dict[Any, _TrendProcessor] = {}

    def processor(key: Any) -> _TrendProcessor:
        if key not in procs:
            p = _TrendProcessor(to_text(workload), strategy, Reading(), lateness)
            p.init(_Handle(store, timers, key))
            procs[key] = p
        return procs[key]

    watermark_ms = 0
    latest: Any = None
    # three buckets (so that keys hold partitions), keyed as over two Spark partitions
    labels = key_labels(len(query_groups(plans)), 3, 2)
    route = _router(to_text(workload), Reading(), labels)
    for b, chunk in enumerate([*chunks, []]):
        if restart_after is not None and b == restart_after:
            procs.clear()  # a restarted query: new processors over the same state store
        keyed: dict[Any, list[list[Any]]] = {}
        if chunk:  # the router, over the micro-batch's rows as JSON Lines texts
            texts = pa.array([json.dumps(r) for r in chunk], pa.string())
            for routed in route(iter(pa.table({RECORD: texts}).to_batches())):
                for row in zip(
                    *(routed.column(c).to_pylist() for c in _KEYED_COLUMNS), strict=True
                ):
                    keyed.setdefault((row[0], row[1]), []).append(list(row))
        out: list[dict[str, Any]] = []
        for key, rows in keyed.items():
            frame = pd.DataFrame(rows, columns=[f"_{i}" for i in range(len(_KEYED_COLUMNS))])
            for f in processor(key).handleInputRows(key, iter([frame]), _TimerValues(watermark_ms)):
                out.extend(f.to_dict("records"))
        for key in list(timers):
            for t in sorted(timers[key]):
                if t <= watermark_ms and t in timers[key]:
                    timers[key].discard(t)
                    for f in processor(key).handleExpiredTimer(
                        key, _TimerValues(watermark_ms), None
                    ):
                        out.extend(f.to_dict("records"))
        sink.write(b, out)
        if after_batch is not None:
            after_batch(b, store)
        if chunk:
            top = max(float_below(time_value(r["time"])) for r in chunk)
            latest = top if latest is None else max(latest, top)
            watermark_ms = max(watermark_ms, int((latest - lateness) * 1000))
    return read_results(str(out_dir)), sink.stats
