"""greta == twostep on hypothesis-generated workloads and streams.

The generated queries nest SEQ, + and NOT, carry local and NEXT predicates,
unqualified and qualified partition attributes (wildcard events), GROUP-BY,
every aggregate and sliding windows; streams have ties in time and missing
attributes. Each workload also goes through the printer and the parser, so
the language layer is exercised on the same cases.
"""

from __future__ import annotations

from hypothesis import given

from helpers import canon, run_queries
from trendagg.language import ast, parse, to_text
from workloads import cases


@given(cases(n_queries=1))
def test_greta_equals_twostep_single_query(
    case: tuple[list[ast.Query], list[dict[str, object]]],
) -> None:
    queries, events = case
    expected = run_queries(queries, events, "twostep", trend_limit=500_000)
    assert canon(run_queries(queries, events, "greta")) == canon(expected)


@given(cases(n_queries=3, max_events=14, max_depth=1))
def test_greta_equals_twostep_workload(
    case: tuple[list[ast.Query], list[dict[str, object]]],
) -> None:
    queries, events = case
    workload = parse(to_text(ast.Workload(tuple(queries))))
    assert list(workload.queries) == queries
    expected = run_queries(queries, events, "twostep", trend_limit=500_000)
    assert canon(run_queries(list(workload.queries), events, "greta")) == canon(expected)


@given(cases(n_queries=1, max_events=14, max_time=5))
def test_greta_equals_twostep_dense_ties(
    case: tuple[list[ast.Query], list[dict[str, object]]],
) -> None:
    """Many events share a time: ties at every negation and window boundary."""
    queries, events = case
    expected = run_queries(queries, events, "twostep", trend_limit=500_000)
    assert canon(run_queries(queries, events, "greta")) == canon(expected)
