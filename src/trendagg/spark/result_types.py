"""The type of a result column, by one rule for the local writers, Spark batch and stream.

The rule is the Parquet writer's (:func:`trendagg.io.writers.arrow_column`): int64,
then decimal(38, 0), then the exact digits as text for integers; float64 for floats
(with integers only when each converts exactly); text for text and for any mix. It
looks at values, and Spark never has a column's values in one place: each task sees a
part. A column's type under that rule depends only on a few of its values, its
*witnesses* (:func:`witnesses`): one value of each kind, and for integers and decimals
the extremes the rule compares with its limits (the least and the greatest integer, the
decimal of largest magnitude and the one with the longest fraction, a non-finite one).
So the tasks send their witnesses, the driver takes the witnesses of those and asks the
writers' function itself (:func:`column_type`): nothing of the rule is written twice.

A stream cannot wait for its values: its files must agree on one type per column for
the stream's whole life, so it asks the same function with the values a column can
ever take (:func:`possible_values`): a count can grow past any bound.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal
from typing import Any

# An integer past decimal(38, 0): what a count, or a sum or extreme of integers, can reach
UNBOUNDED_INT = 10**38


def witnesses(values: Iterable[object]) -> list[object]:
    """The values of a column that decide its type under the writers' rule (see the module
    docstring): ``column_type(witnesses(v)) == column_type(v)``, and the witnesses of
    witnesses of parts are the witnesses of the whole."""
    least: int | None = None
    greatest: int | None = None
    widest: Decimal | None = None  # the decimal of largest magnitude
    finest: Decimal | None = None  # the decimal with the longest fraction
    odd: Decimal | None = None  # a non-finite decimal
    others: dict[type, object] = {}  # one value of each other kind
    for value in values:
        if value is None:
            continue
        if type(value) is int:
            least = value if least is None else min(least, value)
            greatest = value if greatest is None else max(greatest, value)
        elif isinstance(value, Decimal):
            if not value.is_finite():
                odd = value
                continue
            if widest is None or abs(value) > abs(widest):
                widest = value
            if finest is None or _scale(value) > _scale(finest):
                finest = value
        else:
            others.setdefault(type(value), value)
    found = [least, greatest, widest, finest, odd, *others.values()]
    return [v for v in found if v is not None]


def _scale(value: Decimal) -> int:
    return max(0, -int(value.as_tuple().exponent))


def column_type(values: list[object]) -> Any:
    """The Arrow type the writers give a column of these values (or of their witnesses)."""
    from trendagg.io.writers import arrow_column

    return arrow_column(values).type


def spark_type(kind: Any) -> str:
    """The Spark SQL type of an Arrow result type (a column of nulls only: bigint)."""
    import pyarrow as pa

    if pa.types.is_null(kind) or pa.types.is_int64(kind):
        return "bigint"
    if pa.types.is_decimal(kind):
        return f"decimal({kind.precision},{kind.scale})"
    if pa.types.is_float64(kind):
        return "double"
    if pa.types.is_boolean(kind):
        return "boolean"
    return "string"


def possible_values(aggregate: str | None) -> list[object]:
    """Values that stand for all a stream's column can ever take: an AVG is a float; a
    COUNT, SUM, MIN or MAX an integer past every bound (or a float or a text: the type of
    the unbounded integer, text, holds them too); a group key (None) any text."""
    if aggregate == "AVG":
        return [0.5]
    if aggregate is None:
        return ["text"]
    return [UNBOUNDED_INT]


__all__ = ["UNBOUNDED_INT", "column_type", "possible_values", "spark_type", "witnesses"]
