"""Result column types: the witnesses of a column give it the type the writers give it."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from trendagg.io.writers import arrow_column
from trendagg.spark.result_types import column_type, possible_values, witnesses

VALUES = st.one_of(
    st.none(),
    st.integers(-(2**70), 2**70),
    st.integers(-(10**40), 10**40),
    st.sampled_from([2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 2**53, 2**53 + 1, 10**38 - 1]),
    st.floats(allow_nan=False, allow_infinity=False),
    # (at most 28 digits: the writers quantize decimals in Python's default context)
    st.decimals(-(10**20), 10**20, allow_nan=False, allow_infinity=False, places=3),
    st.sampled_from([Decimal("1.5"), Decimal("1e-40"), Decimal("NaN"), Decimal(10**24)]),
    st.text(max_size=3),
    st.booleans(),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(VALUES, max_size=12), st.lists(VALUES, max_size=12))
def test_witnesses_decide_the_writers_type(one: list[object], two: list[object]) -> None:
    assert column_type(witnesses(one)) == arrow_column(one).type
    # the witnesses of the parts' witnesses are those of the whole (what Spark's tasks send)
    merged = witnesses(witnesses(one) + witnesses(two))
    assert column_type(merged) == arrow_column(one + two).type


def test_the_extremes_are_the_witnesses() -> None:
    assert witnesses([3, None, -(2**64), 7, 2**70]) == [-(2**64), 2**70]
    assert str(column_type(witnesses([1, 2**63 - 1]))) == "int64"
    assert str(column_type(witnesses([1, 2**63]))) == "decimal128(38, 0)"
    assert str(column_type(witnesses([1, 10**38]))) == "string"
    assert str(column_type(witnesses([1, 2.5, 2**53 + 1]))) == "string"


def test_a_stream_column_takes_the_type_of_every_value_it_can_get() -> None:
    assert str(column_type(possible_values("COUNT"))) == "string"
    assert str(column_type(possible_values("AVG"))) == "double"
    assert str(column_type(possible_values("AVG") + possible_values("SUM"))) == "string"
    assert str(column_type(possible_values(None))) == "string"
