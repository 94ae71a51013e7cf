"""What the batch and the streaming pipelines share: query groups, their routing, and the
partial rows that Spark combines into result rows.

Queries are grouped by their unqualified partition attributes (those apply to every
variable, so every event a group reads has them and Spark can route by them exactly;
qualified attributes and their wildcard events are resolved by the engine). A group reads
the events of its types that have every key attribute
(:func:`trendagg.plan.routing.group_events`, for batch and stream alike).

An engine Runner sees only the events of its Spark partition (batch) or state key
(stream), so a (query, window, group) whose events span several of them comes out as
several partial rows: their registers travel as exact JSON text
(:func:`partial_cells`) and :func:`combine` merges them with the plan's own
``combine_rows`` (the engine's rule, not a second one here).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from fractions import Fraction
from typing import Any

from trendagg.errors import InputError
from trendagg.io.options import column_list
from trendagg.io.values import shown
from trendagg.plan.routing import QueryGroup, query_groups

#: Input rows per Arrow batch into the first Python step, batch and stream (Spark's default
#: of 10,000 costs that step a third more: its work per batch is per group and bucket)
ARROW_ROWS = 100_000


def prepare(workload: Any, strategy: str) -> tuple[str, list[Any], list[QueryGroup]]:
    """A workload (text or parsed) as the canonical text the workers compile again, its
    plans and its query groups; an unknown strategy is refused here, before Spark runs.

    The job's compiled kernels are compiled here, on the driver, when they are not
    cached (:func:`trendagg.kernels.warm.ensure_compiled`, with a line on stderr): the
    workers then load them, where each would compile the same kernel side by side."""
    from trendagg.engine import STRATEGIES
    from trendagg.kernels.warm import ALL, ensure_compiled, jit_disabled, kernels_for, missing
    from trendagg.language import to_text, workload_of
    from trendagg.plan.compile import compile_workload

    if strategy not in STRATEGIES:
        raise InputError(f"unknown strategy '{strategy}'; choose one of {', '.join(STRATEGIES)}")
    parsed = workload_of(workload, "workload")
    plans = compile_workload(parsed)
    if not jit_disabled() and missing(ALL):  # (all cached: no need to tell which)
        ensure_compiled(kernels_for(plans, strategy))
    return to_text(parsed), plans, query_groups(plans)


def check_frame_columns(columns: Sequence[str], reading: Any) -> None:
    """A DataFrame must have the time column and (without an event type) the type column."""
    needed = [reading.time_col] + ([] if reading.event_type else [reading.type_col])
    missing = [c for c in needed if c not in columns]
    if missing:
        flag = "--time-col" if missing[0] == reading.time_col else "--type-col (or --event-type)"
        raise InputError(
            f"column '{shown(missing[0])}' not found; columns are {column_list(columns)}; pass {flag}"
        )


# ----------------------------------------------------------------------------- partial rows


def value_text(value: object) -> str:
    """A value as JSON text, exact: ints in full, floats by repr, Decimal as a number."""
    if isinstance(value, Decimal):
        return str(value)
    return json.dumps(value)


def text_value(text: str) -> object:
    """Back from :func:`value_text`, exactly (numbers beyond float range stay Decimal)."""
    value = json.loads(text, parse_float=Decimal)
    if isinstance(value, Decimal):
        as_float = float(value)
        return as_float if as_float not in (float("inf"), float("-inf")) else value
    return value


def _encode(value: object) -> object:
    if isinstance(value, Fraction):
        return {"n": value.numerator, "d": value.denominator}
    return value


def _decode(value: object) -> object:
    if isinstance(value, dict):
        return Fraction(value["n"], value["d"])
    return value


def partial_cells(row: Any) -> tuple[str, int, str, str]:
    """A result row of one Spark partition or key, as text: query, window id, group, registers.

    Rows of one (query, window, group) from several partitions or keys are merged by
    :func:`combine`; the registers keep every value exact.
    """
    return (
        row.query,
        row.window,
        json.dumps(list(row.group.values()), default=str),
        json.dumps([_encode(v) for v in row.registers]),
    )


def combine_partials(plan: Any, window: int, group_json: str, registers: Sequence[str]) -> Any:
    """One final ResultRow from the partial rows (:func:`partial_cells`) of a group's window."""
    from trendagg.io.results import ResultRow
    from trendagg.plan.layout import combine_rows

    group = dict(zip(plan.group_names, json.loads(group_json), strict=True))
    partial = [
        ResultRow(
            query=plan.name,
            window_start=0,
            window_end=0,
            group=group,
            registers=tuple(_decode(v) for v in json.loads(r)),
            window=window,
        )
        for r in registers
    ]
    return combine_rows(plan, partial)


def combine(plans: Mapping[str, Any], partials: Iterable[tuple[str, int, str, str]]) -> list[Any]:
    """The final rows of partial rows (query, window id, group JSON, registers JSON), one per
    (query, window, group), in the order each first appears."""
    runs: dict[tuple[str, int, str], list[str]] = {}
    for query, window, group_json, registers in partials:
        runs.setdefault((query, window, group_json), []).append(registers)
    return [
        combine_partials(plans[query], window, group_json, registers)
        for (query, window, group_json), registers in runs.items()
    ]


__all__ = [
    "ARROW_ROWS",
    "QueryGroup",
    "check_frame_columns",
    "combine",
    "combine_partials",
    "partial_cells",
    "prepare",
    "query_groups",
    "text_value",
    "value_text",
]
