"""trendagg: online aggregation of event trends matched by Kleene patterns.

>>> import trendagg
>>> rows = trendagg.run(
...     "RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 1 min",
...     [{"type": "A", "time": 1}, {"type": "B", "time": 2}, {"type": "B", "time": 3}],
... )
>>> rows[0].values
{'COUNT(*)': 3}
>>> rows.to_arrow().column("COUNT(*)").to_pylist()
[3]

Importing this package loads nothing heavy: the parser (lark), the IO layer
(pyarrow) and the engines are imported when first used.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from trendagg.errors import (
    ArgumentError,
    ExecutionError,
    InputError,
    QueryError,
    QuerySyntaxError,
    TrendAggError,
)

if TYPE_CHECKING:
    from trendagg.io import EventBatch
    from trendagg.io.tables import Results
    from trendagg.language.ast import Workload

__version__ = "0.1.0"

__all__ = [
    "ArgumentError",
    "ExecutionError",
    "InputError",
    "QueryError",
    "QuerySyntaxError",
    "TrendAggError",
    "__version__",
    "parse",
    "run",
]


def parse(text: str) -> Workload:
    """Parse and validate a workload of queries (see docs/language.md for the language)."""
    from trendagg.language import parse as _parse

    return _parse(text)


def run(
    queries: str | Workload,
    events: str | os.PathLike[str] | EventBatch | Any | Iterable[Mapping[str, Any]],
    *,
    strategy: str = "hamlet",
    type_col: str = "type",
    time_col: str = "time",
    event_type: str | None = None,
    columns: list[str] | None = None,
) -> Results:
    """Run a workload over events and return one row per (query, group, window).

    ``queries`` is query text or a parsed Workload. ``events`` is a path (CSV,
    JSON Lines, Parquet), an EventBatch, a pandas DataFrame, a polars DataFrame or
    LazyFrame, or a pyarrow Table (its columns are the attributes, read by their types as
    a Parquet file's are; a timestamp time column keeps its exact times, to the
    nanosecond), or an iterable of dicts with a type and a time (``event_type`` gives
    every row one type when there is no type column; ``columns`` names the columns of a
    CSV file without a header row). Rows the reader rejects raise InputError here,
    listing the reasons; the CLI instead reports them and can write them out. Arguments
    of another kind raise ArgumentError (a TypeError) naming what is accepted.

    The rows come as :class:`~trendagg.io.tables.Results`, a list of
    :class:`~trendagg.io.results.ResultRow` with ``to_pandas()`` and ``to_arrow()``: one
    table in the layout of the CSV and Parquet writers, whose window bounds are
    timestamps when the events' times were. pandas and polars are imported only when
    given (or asked for).
    """
    from trendagg.io import summarize_rejects
    from trendagg.io.options import ReadOptions
    from trendagg.io.tables import Results
    from trendagg.language import workload_of
    from trendagg.plan.compile import compile_workload
    from trendagg.session import run_events, run_file

    workload = workload_of(queries)
    plans = compile_workload(workload)
    read = ReadOptions(type_col, time_col, event_type, columns=tuple(columns) if columns else None)
    if isinstance(events, str | os.PathLike):
        result = run_file(plans, events, read, strategy=strategy)
    else:
        result = run_events(plans, events, read, strategy=strategy)
    if result.rejected:
        raise InputError(summarize_rejects(result.rejected))
    windows = {plan.name: (plan.window.slide, plan.window.within) for plan in plans}
    return Results(result.rows, stamps=result.stamps, windows=windows)
