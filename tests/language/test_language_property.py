"""Property: printing then parsing gives back the same workload, for random ASTs.

The strategies build every node the parser can produce (patterns nesting SEQ,
``+`` and NOT; comparisons with arithmetic, OR and AND; every aggregate shape;
decimal durations in every unit), valid or not: the printer must spell any of
them, so parsing runs with ``validate=False``. A second property checks that
the validator, on the same random ASTs, either accepts or raises QueryError,
never anything else.
"""

from __future__ import annotations

from fractions import Fraction

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trendagg.errors import QueryError
from trendagg.language import (
    UNIT_SECONDS,
    Aggregate,
    And,
    Attr,
    BinOp,
    Comparison,
    Duration,
    Equivalence,
    EventPattern,
    Negate,
    Not,
    Number,
    Or,
    PartAttr,
    Plus,
    Query,
    ReturnItem,
    Seq,
    String,
    Workload,
    parse,
    to_text,
    validate,
)

KEYWORDS = {
    "RETURN",
    "PATTERN",
    "WHERE",
    "WITHIN",
    "SLIDE",
    "SEQ",
    "NOT",
    "NEXT",
    "AND",
    "OR",
    "AS",
    "COUNT",
    "SUM",
    "MIN",
    "MAX",
    "AVG",
    "GROUP",
    "BY",
}

_FIRST = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_"
names = st.builds(
    lambda first, rest: first + rest,
    st.sampled_from(_FIRST),
    st.text(alphabet=_FIRST + "0123456789", max_size=5),
).filter(lambda name: name.upper() not in KEYWORDS)
small_names = st.sampled_from(["A", "B", "C", "E", "T", "x", "speed", "d"])
any_name = st.one_of(small_names, names)

# ---------------------------------------------------------------- patterns


def _event(type_: str, var: str | None) -> EventPattern:
    return EventPattern(type_, var if var is not None else type_)


events = st.builds(_event, any_name, st.none() | any_name)
patterns = st.recursive(
    events,
    lambda inner: st.one_of(
        inner.map(Plus),
        inner.map(Not),
        st.lists(inner, min_size=1, max_size=4).map(lambda items: Seq(tuple(items))),
    ),
    max_leaves=8,
)

# ---------------------------------------------------------------- expressions

numbers = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False),
).map(Number)
strings = st.text(max_size=8).map(String)
attrs = st.builds(Attr, any_name, any_name, st.booleans())
expressions = st.recursive(
    st.one_of(numbers, strings, attrs),
    lambda inner: st.one_of(
        st.builds(BinOp, st.sampled_from("+-*/%"), inner, inner),
        inner.map(Negate),
    ),
    max_leaves=4,
)
comparisons = st.builds(
    Comparison, st.sampled_from(["=", "!=", "<", "<=", ">", ">="]), expressions, expressions
)
booleans = st.recursive(
    comparisons,
    lambda inner: st.one_of(
        st.lists(inner, min_size=2, max_size=3).map(lambda items: Or(tuple(items))),
        st.lists(inner, min_size=2, max_size=3).map(lambda items: And(tuple(items))),
    ),
    max_leaves=4,
)
part_attrs = st.builds(PartAttr, any_name, st.none() | any_name)
conditions = st.one_of(
    st.lists(part_attrs, min_size=1, max_size=3).map(lambda a: Equivalence(tuple(a))),
    booleans,
)

# ---------------------------------------------------------------- query parts

aggregates = st.one_of(
    st.builds(Aggregate, st.sampled_from(["COUNT", "SUM", "MIN", "MAX", "AVG"])),
    st.builds(Aggregate, st.sampled_from(["COUNT", "SUM", "MIN", "MAX", "AVG"]), any_name),
    st.builds(
        Aggregate, st.sampled_from(["COUNT", "SUM", "MIN", "MAX", "AVG"]), any_name, any_name
    ),
)
return_items = st.builds(ReturnItem, st.one_of(aggregates, part_attrs), st.none() | any_name)
decimal_values = st.builds(
    lambda digits, places: Fraction(digits, 10**places),
    st.integers(min_value=-(10**9), max_value=10**9),
    st.integers(min_value=0, max_value=6),
)
durations = st.builds(
    Duration,
    st.one_of(st.integers(min_value=-10, max_value=10**12), decimal_values),
    st.sampled_from(sorted(UNIT_SECONDS)),
)
queries = st.builds(
    Query,
    name=names,
    returns=st.lists(return_items, min_size=1, max_size=4).map(tuple),
    pattern=patterns,
    where=st.lists(conditions, max_size=2).map(tuple),
    group_by=st.lists(part_attrs, max_size=3).map(tuple),
    within=durations,
    slide=st.none() | durations,
)
workloads = st.lists(queries, min_size=1, max_size=3).map(lambda qs: Workload(tuple(qs)))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads)
def test_parse_of_print_is_identity(workload: Workload) -> None:
    text = to_text(workload)
    again = parse(text, validate=False)
    assert again == workload
    assert to_text(again) == text


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads)
def test_validate_only_raises_query_errors(workload: Workload) -> None:
    text = to_text(workload)
    try:
        validate(parse(text, validate=False))
    except QueryError as error:
        message = str(error)
        assert message.isprintable() or "\n" in message
        assert "Line " in message.split("\n")[0]
