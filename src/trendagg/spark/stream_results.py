"""The CSV and Parquet results of a stream: one set of columns, one type per column.

:func:`stream_columns` fixes them from the queries when the stream starts, and
:func:`write_table` writes every micro-batch's rows with them, so that the files
of a results folder read as one table (``pyarrow.parquet.read_table(folder)``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class StreamColumn:
    """A column of a stream's CSV or Parquet results, the same in every file it writes."""

    name: str
    part: str  # "query", "window_start", "window_end", "group" or "values"
    key: str  # the group key or value name it shows
    arrow: str  # the Arrow type's name: "string", "int64" or "double"


def stream_columns(plans: Sequence[Any]) -> list[StreamColumn]:
    """The columns of a stream's table results, fixed by its queries for its whole life.

    A batch writer types a column by the values of its one file (int64, else
    decimal(38, 0), else text); the files of a stream would then disagree (a count
    int64 in one micro-batch and text in the next) and its folder could not be
    read as one table. A stream knows its values only as they come, so each
    column takes the type the same rule gives the values it can ever get
    (:func:`trendagg.spark.result_types.possible_values`):

    * ``query``: string;
    * ``window_start``, ``window_end``: int64 when every window length and slide
      is whole seconds, else double (a bound beyond int64, from a window longer than
      9.2e18 s, stops the stream: event times of 2**43 s or more are rejected before);
    * group keys: string (attribute values of any kind, as the CSV writer prints them);
    * COUNT, SUM, MIN, MAX: string, every digit (counts of trends grow without
      bound, 2**n for a run of n events, past decimal(38, 0) at 127; sums are
      integers of any size or floats);
    * AVG: double (a float or null).

    Columns are those of every query (a group key or value name of several queries
    is one column; one equal to an earlier column gets ``group.`` / ``values.``),
    null in the rows of the queries without them.
    """
    from trendagg.spark.result_types import column_type, possible_values

    def arrow(values: list[object]) -> str:
        return str(column_type(values))

    whole = all(p.window.within.denominator == 1 and p.window.slide.denominator == 1 for p in plans)
    bounds = arrow([0] if whole else [0.5])
    columns = [
        StreamColumn("query", "query", "query", "string"),
        StreamColumn("window_start", "window_start", "window_start", bounds),
        StreamColumn("window_end", "window_end", "window_end", bounds),
    ]
    names = {c.name for c in columns}
    for key in dict.fromkeys(k for p in plans for k in p.group_names):
        name = f"group.{key}" if key in names else key
        names.add(name)
        columns.append(StreamColumn(name, "group", key, arrow(possible_values(None))))
    possible: dict[str, list[object]] = {}
    for p in plans:
        for out in p.outputs:
            if out.aggregate is not None:
                possible.setdefault(out.name, []).extend(possible_values(out.aggregate.func))
    for key, values in possible.items():
        name = f"values.{key}" if key in names else key
        names.add(name)
        columns.append(StreamColumn(name, "values", key, arrow(values)))
    return columns


def _cell(row: Any, column: StreamColumn) -> object:
    from trendagg.errors import ExecutionError
    from trendagg.io.values import cell_text

    if column.part in ("query", "window_start", "window_end"):
        value = getattr(row, column.part)
    else:
        value = getattr(row, column.part).get(column.key)
    if value is None or column.arrow == "double":
        return None if value is None else float(value)
    if column.arrow == "int64":
        if not -(2**63) <= value < 2**63:
            raise ExecutionError(
                f"the {column.name} {value} of query {row.query} is beyond the int64 column "
                f"of the stream's results: give it a shorter window, or write --format jsonl"
            )
        return value
    return cell_text(value)


def write_table(rows: Sequence[Any], columns: Sequence[StreamColumn], path: str, fmt: str) -> None:
    """Results as CSV or Parquet with the stream's fixed columns (:func:`stream_columns`)."""
    cells = [[_cell(r, c) for c in columns] for r in rows]
    if fmt == "csv":
        import csv

        from trendagg.io.values import cell_text

        with open(path, "w", encoding="utf-8", newline="") as f:
            writer = csv.writer(f, lineterminator="\n")
            writer.writerow([c.name for c in columns])
            writer.writerows([cell_text(v) for v in line] for line in cells)
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([pa.field(c.name, pa.type_for_alias(c.arrow)) for c in columns])
    table = pa.table(
        [pa.array([line[j] for line in cells], f.type) for j, f in enumerate(schema)],
        schema=schema,
    )
    pq.write_table(table, path)


__all__ = ["StreamColumn", "stream_columns", "write_table"]
