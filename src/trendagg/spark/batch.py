"""Batch trend aggregation on Spark: Spark partitions, orders and routes; trendagg computes.

Queries are grouped by their unqualified partition attributes (see
:mod:`trendagg.spark.partials`). For each group the rows it reads are
repartitioned by its key, sorted within partitions by time and a deterministic
tie-breaker, and ``mapInArrow`` runs one :class:`~trendagg.engine.Runner` per
Spark partition, fed one Arrow batch at a time as arrays (``records.read_table``,
the local readers' rules): the state is carried across batches and no partition
is held in memory whole.

One pass: the workers that run the engine also report the rejected rows, in the
same output (a row id and a reason instead of a result row), so the input is
read once. Each row has one reporter: the first query group that reads it; the
rows no group reads (a type no query uses, a null key, a time Spark cannot
order, no type) go, to be read and checked only, to the workers of the first
group that reads any row. The output is kept once and split into results and
rejects. The result is a DataFrame with the columns

    query         string
    window_start  bigint when every bound is a whole second, else double
    window_end    same type as window_start
    <group attributes>, then <output values> of every query, in workload order,
    each typed by its values with the Parquet writer's rule (one rule, see
    :mod:`trendagg.spark.result_types`): bigint when every integer fits 64 bits,
    decimal(38,0) when it fits 38 digits, else string (the exact digits);
    double for values that are not integers; string for strings and mixes.

A cell is null where the query of the row has no such column.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from trendagg.errors import InputError
from trendagg.spark.partials import (
    SORT_TIME,
    QueryGroup,
    check_frame_columns,
    combine,
    group_rows,
    partial_cells,
    prepare,
    text_value,
    value_text,
)
from trendagg.spark.records import (
    BLANK_LINE,
    CSV_RAW,
    RECORD,
    Reading,
    column,
    csv_reader,
    json_lines,
    long_csv_row,
    read_table,
    route_key,
    sort_time,
    unordered_reason,
    with_record_columns,
)

ROW_ID = "__trendagg_row"
ROLE = "__trendagg_role"  # what a worker does with a row: FEED it, REPORT it if rejected
FEED, REPORT = 1, 2

_LONG = "query string, window bigint, group_json string, registers string"
# a partial row, or (final_row set) a whole one, or (row_id set) a rejected row
_WORK = f"{_LONG}, final_row string, row_id bigint, reason string, record string"
_FINAL = (
    "query string, window_start string, window_end string, group_names array<string>, "
    "group_texts array<string>, value_names array<string>, value_texts array<string>"
)


@dataclass
class _Batch:
    """One Arrow batch of a worker: its rows (an Arrow table of the input's columns) and
    the engine's reading of them; per row (numpy arrays) Spark's row id, the worker's role
    and whether Spark could not order it by time; and the CSV rows with more cells than the
    header (row id, reason, record), which are left out of the table."""

    table: Any
    read: Any
    ids: Any
    roles: Any
    unordered: Any
    long_rows: list[tuple[int, str, dict[str, object]]]


def _read_batches(batches: Iterator[Any], numeric: Any, reading: Reading) -> Iterator[_Batch]:
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    for rb in batches:
        names = rb.schema.names
        ids = rb.column(names.index(ROW_ID)).to_numpy()
        roles = rb.column(names.index(ROLE)).to_numpy()
        unordered = rb.column(names.index(SORT_TIME)).is_null().to_numpy(zero_copy_only=False)
        table = pa.Table.from_batches([rb]).drop_columns([ROW_ID, SORT_TIME, ROLE])
        if reading.renamed:  # the names Spark could not carry, back
            original = dict(reading.renamed)
            table = table.rename_columns([original.get(n, n) for n in table.column_names])
        long_rows = []
        if CSV_RAW in names:
            raw = table.column(CSV_RAW)
            table = table.drop_columns([CSV_RAW])
            header = table.column_names
            kept = np.ones(len(ids), np.bool_)
            # Spark keeps the text of a row whose cell count differs: the rare rows to check
            for n in np.flatnonzero(pc.is_valid(raw).to_numpy(zero_copy_only=False)).tolist():
                found = long_csv_row(str(raw[n].as_py()), header)
                if found is not None:
                    kept[n] = False
                    if roles[n] & REPORT:
                        long_rows.append((int(ids[n]), *found))
            if not kept.all():
                table = table.filter(pa.array(kept))
                ids, roles, unordered = ids[kept], roles[kept], unordered[kept]
        yield _Batch(table, read_table(table, reading, numeric), ids, roles, unordered, long_rows)


def _worker(
    workload_text: str,
    names: tuple[str, ...],
    strategy: str,
    reading: Reading,
    whole: frozenset[str],
    trend_limit: int | None = None,
) -> Any:
    """One Runner per Spark partition, fed batch by batch with the rows whose role says
    FEED. Rows of the queries in ``whole`` (their groups never span Spark partitions)
    leave finished, as JSON in ``final_row``; the others as partial rows to combine. The
    rows whose role says REPORT leave with their reason when the reader rejects them, or
    when Spark could not order them by time (the engine never gets them): nothing is
    dropped silently, and no row is reported by two workers."""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import numpy as np
        import pyarrow as pa

        from trendagg.engine import Runner
        from trendagg.language import parse
        from trendagg.plan.compile import compile_workload, numeric_requirements

        all_plans = compile_workload(parse(workload_text))
        numeric = numeric_requirements(all_plans)
        plans = [p for p in all_plans if p.name in names]
        runner = Runner(plans, strategy, trend_limit=trend_limit) if plans else None
        schema = _arrow_schema(pa)

        def emit(rows: list[Any]) -> Any:
            cells = [
                (r.query, None, None, None, _final_json(r), None, None, None)
                if r.query in whole
                else (*partial_cells(r), None, None, None, None)
                for r in rows
            ]
            columns = list(zip(*cells, strict=True))
            return pa.RecordBatch.from_arrays([pa.array(c) for c in columns], schema=schema)

        for batch in _read_batches(batches, numeric, reading):
            events = batch.read.events
            place = events.rows - 1  # each event's row in the batch's table
            fed = (batch.roles[place] & FEED) != 0
            if runner is not None and fed.any():
                rows = runner.feed(events if fed.all() else events.take(np.flatnonzero(fed)))
                if rows:
                    yield emit(rows)
            rejected = _rejects(batch, place, fed)
            if rejected:
                yield pa.RecordBatch.from_arrays(
                    [
                        pa.nulls(len(rejected), pa.string()),
                        pa.nulls(len(rejected), pa.int64()),
                        pa.nulls(len(rejected), pa.string()),
                        pa.nulls(len(rejected), pa.string()),
                        pa.nulls(len(rejected), pa.string()),
                        pa.array([row_id for row_id, _, _ in rejected], pa.int64()),
                        pa.array([reason for _, reason, _ in rejected], pa.string()),
                        pa.array([record for _, _, record in rejected], pa.string()),
                    ],
                    schema=schema,
                )
        if runner is not None:
            rows = runner.finish()
            if rows:
                yield emit(rows)

    return run


def _rejects(batch: _Batch, place: Any, fed: Any) -> list[tuple[int, str, str]]:
    """The rejected rows a worker reports of a batch (row id, reason, record as JSON): the
    reader's, the long CSV rows, and the rows it reads but Spark could not order by time."""
    import numpy as np

    bad = [(row_id, reason, json.dumps(record)) for row_id, reason, record in batch.long_rows]
    found = [(x.row, x.reason) for x in batch.read.rejected if batch.roles[x.row - 1] & REPORT]
    unordered = np.flatnonzero(~fed & batch.unordered[place])
    if unordered.size:  # (only rows to check come unordered: a group reads none of them)
        times = batch.read.events.take(unordered).time_values()
        rows = batch.read.events.rows[unordered].tolist()
        found += [(row, unordered_reason(t)) for row, t in zip(rows, times, strict=True)]
    bad += [(int(batch.ids[row - 1]), why, _record_text(batch.table, row)) for row, why in found]
    return bad


def _record_text(table: Any, row: int) -> str:
    """Row ``row`` (from 1) as JSON text for the rejects: a JSON line as it was, typed
    cells as a JSON object."""
    record = table.slice(row - 1, 1).to_pylist()[0]
    if RECORD in record:
        text = record[RECORD]
        return text.decode("utf-8", "backslashreplace") if isinstance(text, bytes) else str(text)
    return json.dumps(record, default=str)


def _arrow_schema(pa: Any) -> Any:
    text = pa.string()
    return pa.schema(
        [
            ("query", text),
            ("window", pa.int64()),
            ("group_json", text),
            ("registers", text),
            ("final_row", text),
            ("row_id", pa.int64()),
            ("reason", text),
            ("record", text),
        ]
    )


def _final_json(row: Any) -> str:
    """A finished result row as JSON text: query, bounds, group and values, each value as
    exact JSON text (what the typing pass and the driver read)."""
    return json.dumps(
        {
            "query": row.query,
            "window_start": value_text(row.window_start),
            "window_end": value_text(row.window_end),
            "group_names": list(row.group),
            "group_texts": [value_text(v) for v in row.group.values()],
            "value_names": list(row.values),
            "value_texts": [value_text(v) for v in row.values.values()],
        }
    )


def whole_groups(plan: Any, group: QueryGroup) -> bool:
    """Whether every group of a query lies in one Spark partition: the Spark key (the
    unqualified partition attributes) is made of the query's unqualified GROUP-BY
    attributes, so a group's rows never need combining across partitions."""
    grouped = {a.name for a in plan.group_attrs if a.var is None}
    return set(group.key) <= grouped


def _combiner(workload_text: str) -> Any:
    """Partial rows of one (query, window, group) from several Spark partitions -> one row.

    Runs over a Spark partition whose rows are sorted by (query, window, group):
    each run of equal keys is one final row. A run may go on in the next Arrow
    batch, so the last run of a batch waits for the next one (or the end).
    """

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        from trendagg.language import parse
        from trendagg.plan.compile import compile_workload

        plans = {p.name: p for p in compile_workload(parse(workload_text))}
        schema = pa.schema(
            [
                ("query", pa.string()),
                ("window_start", pa.string()),
                ("window_end", pa.string()),
                ("group_names", pa.list_(pa.string())),
                ("group_texts", pa.list_(pa.string())),
                ("value_names", pa.list_(pa.string())),
                ("value_texts", pa.list_(pa.string())),
            ]
        )

        def final(partials: list[tuple[str, int, str, str]]) -> Any:
            rows = combine(plans, partials)
            return pa.RecordBatch.from_pydict(
                {
                    "query": [r.query for r in rows],
                    "window_start": [value_text(r.window_start) for r in rows],
                    "window_end": [value_text(r.window_end) for r in rows],
                    "group_names": [list(r.group) for r in rows],
                    "group_texts": [[value_text(v) for v in r.group.values()] for r in rows],
                    "value_names": [list(r.values) for r in rows],
                    "value_texts": [[value_text(v) for v in r.values.values()] for r in rows],
                },
                schema=schema,
            )

        waiting: list[tuple[str, int, str, str]] = []
        for rb in batches:
            data = rb.to_pydict()
            waiting += zip(
                data["query"], data["window"], data["group_json"], data["registers"], strict=True
            )
            last = waiting[-1][:3] if waiting else None
            done = [p for p in waiting if p[:3] != last]  # (sorted: the last run is at the end)
            if done:
                yield final(done)
                waiting = waiting[len(done) :]
        if waiting:
            yield final(waiting)

    return run


def default_partitions(spark: Any) -> int:
    """Spark partitions per query group: twice the cores Spark has (each runs one engine
    Runner, so more would only add Python workers to start)."""
    return max(1, int(spark.sparkContext.defaultParallelism)) * 2


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
    """Results (a typed DataFrame) and rejected rows (row id, reason, record as JSON).

    Both come from one run of the engine: the results are computed here, and the
    rejected rows with them (kept by Spark, see :meth:`_Results.frame`)."""
    results = _run(
        df,
        workload,
        strategy=strategy,
        type_col=type_col,
        time_col=time_col,
        event_type=event_type,
        partitions=partitions,
    )
    return results.frame()


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
) -> _Results:
    """The combined result rows and the rejected rows of a workload over a DataFrame
    (typed columns, or the ``RECORD`` shape of JSON texts, see :mod:`trendagg.spark.records`),
    from one pass of the engine over the input."""
    from pyspark.sql import functions as F

    text, plans, groups = prepare(workload, strategy)
    reading = Reading(type_col, time_col, event_type, csv_cells, decimals=decimals)
    if RECORD in df.columns:  # JSON texts: Spark reads the few fields it routes and orders by
        df = with_record_columns(df, [time_col, type_col, *(k for g in groups for k in g.key)])
    columns = df.columns
    check_frame_columns(columns, reading)
    spark = df.sparkSession
    n = partitions or default_partitions(spark)
    base = df.withColumn(ROW_ID, F.monotonically_increasing_id()).withColumn(
        SORT_TIME, sort_time(df, time_col)
    )
    engine_columns = [RECORD, ROW_ID, SORT_TIME] if RECORD in columns else base.columns
    # mapInArrow cannot take a column whose name holds a backtick or a dot: such columns
    # reach the workers under a plain name and get theirs back there
    spark_names = {
        c: c if not set("`.") & set(c) else f"__trendagg_c{i}" for i, c in enumerate(engine_columns)
    }
    reading = replace(reading, renamed=tuple((s, c) for c, s in spark_names.items() if s != c))
    to_engine = [
        column(c).cast("binary").alias(c)  # a line's bytes: the engine tells UTF-8 from not
        if c == RECORD
        else column(c).alias(spark_names[c])
        for c in engine_columns
    ] + [F.col(ROLE)]
    # which rows each group reads; a row is reported (if rejected) by the first that reads
    # it, and the rows none reads are checked by the first group that reads any
    reads = [group_rows(g, columns, type_col, event_type) for g in groups]
    active = [i for i, r in enumerate(reads) if r is not None]
    earlier = F.lit(False)
    routed: list[tuple[QueryGroup, Any, Any]] = []  # (group, its input, its rows' roles)
    for i in active:
        own = reads[i] & ~earlier
        routed.append((groups[i], reads[i], F.when(own, FEED | REPORT).otherwise(FEED)))
        earlier = earlier | reads[i]
    if routed:
        group, rows, role = routed[0]
        routed[0] = (group, rows | ~earlier, F.when(rows, role).otherwise(REPORT))
    parts = []
    whole: set[str] = set()
    for group, rows, role in routed:
        finished_here = frozenset(
            p.name for p in plans if p.name in group.names and whole_groups(p, group)
        )
        whole |= finished_here
        events = base.where(rows).withColumn(ROLE, role.cast("byte"))
        keyed = (
            events.repartition(n, *[route_key(df, k) for k in group.key])
            if group.key
            else events.repartition(1)
        )
        ordered = keyed.sortWithinPartitions(F.col(SORT_TIME), F.col(ROW_ID))
        parts.append(
            ordered.select(*to_engine).mapInArrow(
                _worker(text, group.names, strategy, reading, finished_here, trend_limit), _WORK
            )
        )
    if not parts:  # no group reads a row: every row is only checked
        checked = base.withColumn(ROLE, F.lit(REPORT).cast("byte")).select(*to_engine)
        parts.append(checked.mapInArrow(_worker(text, (), strategy, reading, frozenset()), _WORK))
    work = parts[0]
    for p in parts[1:]:
        work = work.unionByName(p)
    # the engine runs once: its output is kept for the branches that read it (the
    # rejected rows, the finished rows, the partial rows to combine)
    work = work.persist()
    results = work.where(F.col("row_id").isNull())
    rejects = work.where(F.col("row_id").isNotNull()).select("row_id", "reason", "record")
    # Rows of queries whose groups stay in one Spark partition are finished by the workers;
    # the others are combined in one sorted pass per partition.
    kinds = {p.name in whole for p in plans}
    parts_of_final = []
    if True in kinds:
        finished = results.where(F.col("final_row").isNotNull())
        parts_of_final.append(
            finished.select(F.from_json("final_row", _FINAL).alias("r")).select("r.*")
        )
    if False in kinds:
        keys = ["query", "window", "group_json"]
        partial = results.where(F.col("final_row").isNull()).select(*keys, "registers")
        parts_of_final.append(
            partial.repartition(n, *keys)
            .sortWithinPartitions(*keys)
            .mapInArrow(_combiner(text), _FINAL)
        )
    if not parts_of_final:
        parts_of_final.append(spark.createDataFrame([], _FINAL))
    final = parts_of_final[0]
    for p in parts_of_final[1:]:
        final = final.unionByName(p)
    return _Results(final, plans, work, rejects)


class _Results:
    """The combined rows of a run, typed as a DataFrame or collected as ResultRows, and its
    rejected rows; both read the workers' output, kept until they have been read."""

    def __init__(self, final: Any, plans: Sequence[Any], kept: Any, rejects: Any):
        self.final = final
        self.plans = plans
        self.kept = kept  # the workers' output, persisted
        self.rejects = rejects

    def frame(self) -> tuple[Any, Any]:
        """The typed results and the rejected rows as DataFrames. The typing pass and the
        result both read the (small) result, kept; the rejected rows are checkpointed
        (local) before the workers' output is released, so that reading them later does
        not run the engine again."""
        typed = _typed(self.final.persist(), self.plans)  # runs the job
        rejects = self.rejects.localCheckpoint(eager=True)
        self.kept.unpersist()
        return typed, rejects

    def collect(self) -> tuple[list[Any], list[Any]]:
        """Every result row on the driver (in workload order, then window order) and every
        rejected row (Spark Rows of row_id, reason, record)."""
        from trendagg.io.results import ResultRow

        order = {p.name: i for i, p in enumerate(self.plans)}
        rows = []
        collected = self.final.toArrow().to_pylist()  # Arrow: far quicker than Row objects
        rejected = self.rejects.collect()
        self.kept.unpersist()  # identical later runs must recompute
        for r in collected:
            rows.append(
                ResultRow(
                    query=r["query"],
                    window_start=json.loads(r["window_start"]),
                    window_end=json.loads(r["window_end"]),
                    group={
                        n: text_value(t)
                        for n, t in zip(r["group_names"], r["group_texts"], strict=True)
                    },
                    values={
                        n: text_value(t)
                        for n, t in zip(r["value_names"], r["value_texts"], strict=True)
                    },
                )
            )
        rows.sort(key=lambda r: (order[r.query], r.window_start, repr(list(r.group.values()))))
        return rows, rejected

    def collect_rows(self) -> list[Any]:
        """Every result row on the driver, in workload order then window order."""
        return self.collect()[0]


def _typed(final: Any, plans: Sequence[Any]) -> Any:
    """Spread the long rows into columns, each typed by the writers' rule on its values
    (:mod:`trendagg.spark.result_types`): the tasks find each column's witnesses, the
    driver the type, and Spark casts the exact texts to it."""
    from pyspark.sql import functions as F

    from trendagg.spark.result_types import column_type, spark_type, witnesses

    group_cols: list[str] = []
    value_cols: list[str] = []
    for p in plans:
        for g in p.group_names:
            if g not in group_cols:
                group_cols.append(g)
        for o in p.outputs:
            if o.aggregate is not None and o.name not in value_cols:
                value_cols.append(o.name)
    cells = {
        **{
            ("g", c): F.element_at(F.map_from_arrays("group_names", "group_texts"), F.lit(c))
            for c in group_cols
        },
        **{
            ("v", c): F.element_at(F.map_from_arrays("value_names", "value_texts"), F.lit(c))
            for c in value_cols
        },
    }
    spread = final.select(
        "query",
        F.col("window_start").alias("__ws"),
        F.col("window_end").alias("__we"),
        *[expr.alias(f"__{kind}_{i}") for i, ((kind, _), expr) in enumerate(cells.items())],
    )
    names = ["__ws", "__we"] + [f"__{kind}_{i}" for i, (kind, _) in enumerate(cells)]
    found: dict[str, list[object]] = {n: [] for n in names}
    for r in spread.select(*names).mapInArrow(_witnesses(names), _WITNESS).collect():
        found[r["name"]].append(text_value(r["witness"]))
    found["__ws"] = found["__we"] = found["__ws"] + found["__we"]  # (one type for both)
    types = {n: spark_type(column_type(witnesses(found[n]))) for n in names}
    out = [
        F.col("query"),
        _cast(F.col("__ws"), types["__ws"]).alias("window_start"),
        _cast(F.col("__we"), types["__we"]).alias("window_end"),
    ]
    used: set[str] = {"query", "window_start", "window_end"}
    for i, (kind, name) in enumerate(cells):
        alias = name if name not in used else f"{'group' if kind == 'g' else 'values'}.{name}"
        used.add(alias)
        out.append(_cast(F.col(f"__{kind}_{i}"), types[f"__{kind}_{i}"]).alias(alias))
    return spread.select(*out)


_WITNESS = "name string, witness string"


def _witnesses(names: list[str]) -> Any:
    """Per Spark partition, the witnesses of each column of exact JSON texts (see
    :func:`trendagg.spark.result_types.witnesses`), as (column, JSON text) rows."""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        from trendagg.spark.result_types import witnesses

        found: dict[str, list[object]] = {n: [] for n in names}
        for rb in batches:
            for n in names:
                texts = rb.column(rb.schema.names.index(n)).to_pylist()
                values = [text_value(t) for t in texts if t is not None and t != "null"]
                found[n] = witnesses(found[n] + values)
        rows = [(n, value_text(w)) for n in names for w in found[n]]
        yield pa.RecordBatch.from_arrays(
            [
                pa.array([n for n, _ in rows], pa.string()),
                pa.array([w for _, w in rows], pa.string()),
            ],
            names=["name", "witness"],
        )

    return run


def _cast(col: Any, kind: str) -> Any:
    """A column of exact JSON texts as Spark type ``kind``; as text, a JSON string is its
    string and a number its exact text (the writers' text of a mixed column)."""
    from pyspark.sql import functions as F

    present = col != "null"
    if kind != "string":
        return F.when(present, col).cast(kind)
    decoded = F.element_at(F.from_json(F.concat(F.lit("["), col, F.lit("]")), "array<string>"), 1)
    return F.when(present, F.when(col.startswith('"'), decoded).otherwise(col))


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
) -> tuple[Any, bool, tuple[tuple[str, int, int], ...]]:
    """An event file or folder as a DataFrame, whether its cells are CSV text, and the
    Parquet decimals that travel as text (name, precision, scale; see below).

    CSV is read with every column as text, so each cell is then read with the
    same rule as the local engine (a column of numbers and words keeps its numbers);
    JSON Lines as one text per line, parsed by the engine as the local reader parses it.
    ``columns`` names the columns of a CSV file without a header row; ``needed``, the
    columns a workload reads: Parquet decimals wider than Spark's 38 digits are left out
    when no query reads them; when one does, the driver reads the file with pyarrow and
    those decimals travel as their exact text, made decimals again in the workers. A
    file the local reader refuses is refused with its message (see :func:`check_csv`,
    :func:`trendagg.io.parquet.parquet_schema`).
    """
    from pathlib import Path

    import pyarrow as pa
    from pyspark.sql import functions as F

    from trendagg.io.formats import event_format
    from trendagg.io.parquet import parquet_schema

    p = Path(path)
    if not p.exists():
        raise InputError(f"event file '{path}' does not exist; check the path")
    kind = event_format(p, None)
    if columns is not None and kind != "csv":
        raise InputError(
            f"column names are for CSV files without a header row; {path} is {kind}, "
            "whose columns are named in the file"
        )
    if kind == "parquet":
        schema = parquet_schema(p, path)
        nanos = [f.name for f in schema if pa.types.is_timestamp(f.type) and f.type.unit == "ns"]
        wide = [f.name for f in schema if pa.types.is_decimal(f.type) and f.type.precision > 38]
        used = [name for name in wide if needed is None or name in needed]
        if used:  # Spark reads no decimal wider than 38 digits: the driver reads the file
            return _wide_decimals(spark, p, path, schema, used), False, _decimal_types(schema)
        if nanos:  # Spark reads them as nanoseconds since the epoch (a long)
            spark.conf.set("spark.sql.legacy.parquet.nanosAsLong", "true")
        reader = spark.read
        if wide:  # Spark reads only the columns of a given schema: leave the wide ones out
            from pyspark.sql.pandas.types import from_arrow_type
            from pyspark.sql.types import LongType, StructField, StructType

            fields = [
                StructField(f.name, LongType() if f.name in nanos else from_arrow_type(f.type))
                for f in schema
                if f.name not in wide
            ]
            reader = reader.schema(StructType(fields))
        df = reader.parquet(path)
        for name in nanos:  # a timestamp again, to the microsecond (Spark's precision)
            micros = F.floor(column(name) / F.lit(1000))
            df = df.withColumn(name, F.timestamp_micros(micros))
        return df, False, ()
    if kind != "parquet" and p.is_dir():
        raise InputError(
            f"'{path}' is a folder; only Parquet datasets can be read from a folder, "
            f"so pass one {kind} file or fmt='parquet'"
        )
    if kind == "csv":
        header, multiline, readable = check_csv(p, path, has_header=columns is None)
        names = header if columns is None else [c.strip() for c in columns]
        reader = csv_reader(spark.read, names, header=columns is None, multiline=multiline)
        return reader.csv(readable), True, ()
    return json_lines(spark.read.text(check_jsonl(p, path)), keep_blank=True), False, ()


def _wide_decimals(spark: Any, p: Any, path: str, schema: Any, used: list[str]) -> Any:
    """A Parquet file or folder read on the driver (pyarrow, as the local reader reads it)
    into a DataFrame, its decimals as exact text and nanosecond times to the microsecond:
    for files with decimals wider than Spark reads (rare; the file passes the driver)."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    table = ds.dataset(str(p), format="parquet", partitioning="hive").to_table()
    for i, field in enumerate(table.schema):
        if pa.types.is_decimal(field.type):
            table = table.set_column(i, field.name, table.column(i).cast(pa.string()))
        elif pa.types.is_timestamp(field.type) and field.type.unit == "ns":
            unit = pa.timestamp("us", field.type.tz)
            table = table.set_column(i, field.name, table.column(i).cast(unit, safe=False))
    return spark.createDataFrame(table)


def _decimal_types(schema: Any) -> tuple[tuple[str, int, int], ...]:
    import pyarrow as pa

    return tuple(
        (f.name, f.type.precision, f.type.scale) for f in schema if pa.types.is_decimal(f.type)
    )


def check_csv(path: Any, source: str, *, has_header: bool) -> tuple[list[str], bool, str]:
    """A CSV file checked on the driver as the local reader checks it (an empty file, a
    duplicate header name, text that is not UTF-8, a quoted cell never closed are refused
    with its messages): its header, whether a quoted cell may hold a line break, and the
    path Spark reads (gzip content without a .gz name is linked under a .gz name, as Spark
    tells compression by the name). One pass over the bytes, at disk speed."""
    import codecs

    from trendagg.io.csv import check_quotes, header, not_utf8
    from trendagg.io.formats import Input, is_gzip, open_binary

    file = Input(path, source, "csv", is_gzip(path))
    names = header(file, None) if has_header else []
    decoder = codecs.getincrementaldecoder("utf-8")()
    quotes = 0
    try:
        with open_binary(path, file.gzipped) as handle:
            while chunk := handle.read(1 << 22):
                decoder.decode(chunk)
                quotes += chunk.count(b'"')
            decoder.decode(b"", final=True)
    except UnicodeDecodeError as error:
        raise not_utf8(source, error) from None
    except (OSError, EOFError) as error:
        raise InputError(f"cannot read {source} as CSV ({error}); check the file") from None
    if quotes % 2:
        check_quotes(file)
    return names, quotes > 0, _spark_path(path, file.gzipped)


def check_jsonl(path: Any, source: str) -> str:
    """A JSON Lines file checked on the driver as the local reader checks it (a file that
    is one JSON array is refused with its message): the path Spark reads."""
    from trendagg.io.formats import is_gzip, open_binary
    from trendagg.io.jsonl import JSON_BLANKS, refuse_json_array

    gzipped = is_gzip(path)
    try:
        with open_binary(path, gzipped) as handle:
            for number, line in enumerate(handle, start=1):
                if number == 1:
                    line = line.removeprefix(b"\xef\xbb\xbf")
                text = line.decode("utf-8", "replace").strip(JSON_BLANKS)
                if text and "\ufffd" not in text:
                    refuse_json_array(text, source)
                    break
    except (OSError, EOFError) as error:
        raise InputError(f"cannot read {source} ({error}); check the file") from None
    return _spark_path(path, gzipped)


def _spark_path(path: Any, gzipped: bool) -> str:
    """The path Spark reads: gzip content without a .gz name is linked under a .gz name,
    as Spark tells compression by the name."""
    import atexit
    import shutil
    import tempfile
    from pathlib import Path

    if not gzipped or Path(path).suffix.lower() == ".gz":
        return str(path)
    folder = tempfile.mkdtemp(prefix="trendagg-")
    atexit.register(shutil.rmtree, folder, True)
    link = Path(folder) / (Path(path).name + ".gz")
    link.symlink_to(Path(path).resolve())
    return str(link)


def collect(
    spark: Any,
    path: str,
    workload: Any,
    columns: Sequence[str] | None = None,
    **options: Any,
) -> tuple[list[Any], list[tuple[int, str, str]], int, list[str] | None]:
    """For the CLI: result rows and rejected rows on the driver (with their row numbers in
    the input, from 1, as the local readers number them), the rows read, and the input's
    columns (None for JSON Lines, whose keys only the rows know)."""
    from pyspark.sql import functions as F

    from trendagg.io.options import ReadOptions
    from trendagg.plan.compile import attributes_read

    _, plans, _ = prepare(workload, options.get("strategy", "hamlet"))
    needed = attributes_read(plans) | {
        options.get("type_col", "type"),
        options.get("time_col", "time"),
    }
    df, csv_cells, decimals = read_frame(spark, path, columns, needed)
    if RECORD not in df.columns:  # the local readers' message for a missing column
        reading = ReadOptions(
            options.get("type_col", "type"),
            options.get("time_col", "time"),
            options.get("event_type"),
        )
        reading.check_columns([c for c in df.columns if c != CSV_RAW], path)
    results = _run(df, workload, csv_cells=csv_cells, decimals=decimals, **options)
    rows, bad = results.collect()
    # Spark's row id is (input partition << 33) + the row's place in it; the rows of each
    # input partition (in input order) turn it into the row's number in the input
    # (the blank lines of JSON Lines count for the line numbers, not as rows read)
    blank = F.col(RECORD).rlike(BLANK_LINE) if RECORD in df.columns else F.lit(False)
    per_part = (
        df.groupBy(F.spark_partition_id().alias("p"))
        .agg(F.count("*").alias("n"), F.sum(blank.cast("long")).alias("blank"))
        .collect()
    )
    counts = {r["p"]: r["n"] for r in per_part}
    before, offsets = 0, {}
    for part in sorted(counts):
        offsets[part] = before
        before += counts[part]
    read = before - sum(r["blank"] or 0 for r in per_part)
    rejected = [(row_number(r["row_id"], offsets), r["reason"], r["record"]) for r in bad]
    rejected.sort(key=lambda r: r[0])
    names = None if RECORD in df.columns else [c for c in df.columns if c != CSV_RAW]
    return rows, rejected, read, names


def row_number(row_id: int, offsets: dict[int, int]) -> int:
    """A row's number in the input (from 1) from Spark's row id and the rows of the input
    partitions before its own."""
    part, place = row_id >> 33, row_id & ((1 << 33) - 1)
    return offsets.get(part, 0) + place + 1
