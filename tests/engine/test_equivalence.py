"""Every executor and strategy == twostep on hypothesis-generated workloads and streams.

The generated queries nest SEQ, + and NOT, carry local and NEXT predicates,
unqualified and qualified partition attributes (wildcard events), GROUP-BY,
every aggregate and sliding windows; streams have ties in time and missing
attributes. Each workload also goes through the printer and the parser, so
the language layer is exercised on the same cases.

The matrix is explicit about the executor: ``compiled=False`` runs every query
on the Python engines (the readable reference), ``compiled=True`` sends the
queries the kernel supports to it (the rest stay in Python, in the same run).
It runs again over streams whose attribute x holds integers and decimals both:
each output keeps its kind (a SUM of integers is an integer, one that saw a
decimal a decimal), in both executors. sharon runs its SEQ queries under SHARON's
plan and the others under the hamlet plan, in one run, and aseq (SHARON's baseline)
its SEQ queries by A-Seq, the others by GRETA (their own tests, with
workloads that share sub-sequences, are ``tests/reference/test_sharon_execution.py``).
"""

from __future__ import annotations

from hypothesis import given

from helpers import canon, run_queries
from trendagg.language import ast, parse, to_text
from workloads import cases, shared_cases

MATRIX = [
    (strategy, compiled)
    for strategy in ("greta", "hamlet-static", "hamlet", "sharon", "gloria")
    for compiled in (False, True)
] + [("aseq", False)]


def assert_all_equal_twostep(case: tuple[list[ast.Query], list[dict[str, object]]]) -> None:
    """The rows of every strategy of :data:`MATRIX`, on the executor each names, are
    twostep's. One generated case runs through all of them against one twostep run:
    generating a case and enumerating its trends cost about four fifths of a strategy's
    test when each had its own (the same cases: the CI profile is derandomized per test
    function), eleven times over."""
    queries, events = case
    expected = canon(run_queries(queries, events, "twostep", trend_limit=500_000))
    wrong = [
        f"{strategy} ({'compiled' if compiled else 'Python'})"
        for strategy, compiled in MATRIX
        if canon(run_queries(queries, events, strategy, compiled=compiled)) != expected
    ]
    assert not wrong, f"not twostep's rows: {', '.join(wrong)}"


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


@given(case=cases(n_queries=3, max_events=14, max_depth=1))
def test_executors_and_strategies_equal_twostep(
    case: tuple[list[ast.Query], list[dict[str, object]]],
) -> None:
    assert_all_equal_twostep(case)


@given(case=shared_cases(max_queries=6, max_events=14))
def test_executors_and_strategies_equal_twostep_on_sharing_workloads(
    case: tuple[list[ast.Query], list[dict[str, object]]],
) -> None:
    """Workloads of 2-6 queries over one Kleene type: HAMLET's shared bursts in both
    executors (the Python engine's snapshot maps, the kernel's burst coefficients)."""
    assert_all_equal_twostep(case)


@given(case=cases(n_queries=3, max_events=14, max_depth=1, decimals=True))
def test_integers_and_decimals_in_one_attribute_equal_twostep(
    case: tuple[list[ast.Query], list[dict[str, object]]],
) -> None:
    assert_all_equal_twostep(case)


@given(case=shared_cases(max_queries=6, max_events=14, decimals=True))
def test_integers_and_decimals_in_one_attribute_equal_twostep_on_sharing_workloads(
    case: tuple[list[ast.Query], list[dict[str, object]]],
) -> None:
    """The kernel's shared bursts carry the hidden registers of an attribute of both
    kinds (the decimals it sums, the extremes of its integers) like any other."""
    assert_all_equal_twostep(case)
