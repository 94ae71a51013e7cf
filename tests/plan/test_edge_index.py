"""O(log n) edge predicates: the ordered key index equals testing every pair.

* The index (:class:`~trendagg.reference.key_index.KeyIndex` under an
  :class:`~trendagg.plan.edge_index.EdgeIndex`) returns, for every query and
  operator, the combined registers of exactly the vertices for which the
  compiled predicate closure holds: mixed int/float/string keys, NaN,
  infinities, large ints next to floats, undefined keys (x / 0, 'a' + 1, a
  missing attribute).
* greta and hamlet equal twostep on workloads whose NEXT predicates are
  indexable, over streams with ties in time and sliding windows.
* The index is really used: the predicate closure is never called, and the
  graph's transitions carry per-window indexes that closed windows drop.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers import canon, run_queries
from trendagg.engine import run_strategy
from trendagg.io import EventBatch, from_records
from trendagg.language import ast, parse
from trendagg.optimizer.plan import sharing_plan
from trendagg.plan.compile import QueryPlan, compile_query, compile_workload
from trendagg.plan.edge_index import FLIP, UNDEFINED, edge_index
from trendagg.plan.layout import AggLayout
from trendagg.plan.predicates import compile_bool
from trendagg.reference.greta import GretaExecutor, time_batches
from trendagg.reference.hamlet import HamletExecutor
from trendagg.reference.key_index import KeyIndex
from trendagg.reference.registers import Registers

OPS = ["=", "!=", "<", "<=", ">", ">="]

# registers: trend count, SUM, MIN, MAX (so ranges must combine extremes, not subtract)
REGS = Registers(
    AggLayout(count_vars=(), sums=(("V", "a"),), mins=(("V", "a"),), maxs=(("V", "a"),))
)

values = st.one_of(
    st.integers(-4, 4),
    st.sampled_from([0.5, -0.0, 1.0, 2.5, -3.25, math.inf, -math.inf, math.nan]),
    st.sampled_from([2**53 + 1, float(2**53), 10**30, 1e30]),  # int/float ties and near-ties
    st.sampled_from(["a", "b", "ab", "", "4"]),
    st.booleans(),  # compared with nothing: only != holds
)

vectors = st.builds(
    lambda c, s, m, x: [c, s, m, x],
    st.integers(1, 10**20),
    st.one_of(st.integers(-100, 100), st.fractions(max_denominator=8)),
    st.one_of(st.none(), st.integers(-50, 50)),
    st.one_of(st.none(), st.floats(-50, 50)),
)


def _brute(pairs: list[tuple[dict[str, object], list[Any]]], pred: Any, y: dict[str, object]):
    """The registers of the x's for which the closure holds, summed pair by pair."""
    acc = None
    for x, vec in pairs:
        try:
            holds = pred(x, y)
        except KeyError:  # a missing attribute: the event is not bound (SEMANTICS.md)
            holds = False
        if holds:
            if acc is None:
                acc = list(vec)
            else:
                REGS.add_into(acc, vec)
    return acc


def _indexed(pairs: list[tuple[dict[str, object], list[Any]]], ix: Any, y: dict[str, object]):
    index = KeyIndex(REGS)
    for x, vec in pairs:
        kind, key = ix.key_of(x)
        if kind != UNDEFINED:
            index.insert(kind, key, vec)
    kind, q = ix.query_of(y)
    return index.collect(ix.op, kind, q, None)


def _same(a: list[Any] | None, b: list[Any] | None) -> bool:
    """Equal registers; NaN never reaches MIN/MAX here, so == is exact."""
    return a == b


# -- (a) the index against every pair --------------------------------------------------


@given(
    st.lists(st.tuples(values, vectors), max_size=25),
    st.lists(values, min_size=1, max_size=6),
    st.sampled_from(OPS),
)
def test_index_equals_the_closure_on_every_pair(
    keyed: list[tuple[object, list[Any]]], queries: list[object], op: str
) -> None:
    cond = ast.Comparison(op, ast.Attr("V", "a"), ast.Attr("W", "b", next=True))
    ix = edge_index(cond)
    assert ix is not None and ix.op == op
    pred = compile_bool(cond)
    pairs = [({"a": k}, vec) for k, vec in keyed]
    for q in queries:
        y = {"b": q}
        assert _same(_indexed(pairs, ix, y), _brute(pairs, pred, y)), (op, q)


_ARITH = ["+", "-", "*", "/", "%"]
constants = st.sampled_from([0, 1, 2, 3, -1, 0.5, 1.05, 2.5, "k"])


@st.composite
def _side(draw: st.DrawFn, var: str, name: str, next_: bool) -> ast.Expr:
    """An expression over one attribute and constants: V.a, V.a * 1.05, 3 - V.a, -(V.a / 0) ..."""
    expr: ast.Expr = ast.Attr(var, name, next=next_)
    for _ in range(draw(st.integers(0, 2))):
        c = draw(constants)
        const: ast.Expr = ast.String(c) if isinstance(c, str) else ast.Number(c)
        op = draw(st.sampled_from(_ARITH))
        expr = ast.BinOp(op, const, expr) if draw(st.booleans()) else ast.BinOp(op, expr, const)
        if draw(st.integers(0, 5)) == 0:
            expr = ast.Negate(expr)
    return expr


@given(
    _side("V", "a", False),
    _side("W", "b", True),
    st.sampled_from(OPS),
    st.booleans(),
    st.lists(st.tuples(st.one_of(st.none(), values), vectors), max_size=20),
    st.lists(st.one_of(st.none(), values), min_size=1, max_size=5),
)
def test_index_with_arithmetic_equals_the_closure(
    key_side: ast.Expr,
    query_side: ast.Expr,
    op: str,
    next_on_left: bool,
    keyed: list[tuple[object, list[Any]]],
    queries: list[object],
) -> None:
    """Arithmetic on constants on either side, NEXT on either side; None: attribute missing."""
    if next_on_left:
        cond = ast.Comparison(op, query_side, key_side)
    else:
        cond = ast.Comparison(op, key_side, query_side)
    ix = edge_index(cond)
    assert ix is not None
    assert ix.op == (FLIP[op] if next_on_left else op)
    pred = compile_bool(cond)
    pairs = [({} if k is None else {"a": k}, vec) for k, vec in keyed]
    for q in queries:
        y = {} if q is None else {"b": q}
        assert _same(_indexed(pairs, ix, y), _brute(pairs, pred, y)), (cond, q)


def test_keys_compare_exactly_across_int_and_float() -> None:
    """2**53 + 1 > float(2**53) although float(2**53 + 1) == float(2**53): never rounded."""
    cond = ast.Comparison("<", ast.Attr("V", "a"), ast.Attr("W", "b", next=True))
    ix = edge_index(cond)
    assert ix is not None
    pairs = [({"a": 2**53 + 1}, [1, 1, None, None]), ({"a": 2**53}, [10, 0, None, None])]
    assert _indexed(pairs, ix, {"b": float(2**53)}) is None
    assert _indexed(pairs, ix, {"b": 2**53 + 1}) == [10, 0, None, None]
    assert _indexed(pairs, ix, {"b": 2**53 + 2}) == [11, 1, None, None]
    ne = edge_index(ast.Comparison("!=", ast.Attr("V", "a"), ast.Attr("W", "b", next=True)))
    assert ne is not None
    mixed = [({"a": 1}, [1, 0, 1, 1]), ({"a": "1"}, [2, 0, 5, 5]), ({"a": 1.0}, [4, 0, 0, 0])]
    # 1 == 1.0 (one key), and the string '1' is unequal to the number 1
    assert _indexed(mixed, ne, {"b": 1}) == [2, 0, 5, 5]
    assert _indexed(mixed, ne, {"b": "1"}) == [5, 0, 0, 1]
    assert _indexed(mixed, ne, {"b": math.nan}) == [7, 0, 0, 5]


@pytest.mark.parametrize("first", [0, 3, 6])
def test_nan_and_booleans_are_ordered_with_nothing(first: int) -> None:
    """NaN (a float) and booleans never enter an ordered tree: only != reaches them."""
    keys: list[object] = [1, -2, 5, 0.5, 3, "b", 4, -1, True, 2]
    keys.insert(first, math.nan)
    pairs = [({"a": k}, [1 << i, i, i, i]) for i, k in enumerate(keys)]
    for op in OPS:
        cond = ast.Comparison(op, ast.Attr("V", "a"), ast.Attr("W", "b", next=True))
        ix = edge_index(cond)
        pred = compile_bool(cond)
        for q in [*range(-3, 7), 0.5, math.nan, "a", "b", False]:
            y = {"b": q}
            assert _indexed(pairs, ix, y) == _brute(pairs, pred, y), (op, q)


def test_many_keys_in_increasing_order_stay_shallow() -> None:
    """Sorted keys (a rising price) do not degrade the tree into a list."""
    index = KeyIndex(REGS)
    for i in range(5000):
        index.insert(0, i, [1, i, i, i])
    depth = 0
    stack = [(index.trees[0].root, 1)]
    while stack:
        node, d = stack.pop()
        if node is None:
            continue
        depth = max(depth, d)
        stack.extend([(node.left, d + 1), (node.right, d + 1)])
    assert depth < 60  # about 2.5 log2(5000) = 31 expected; a list would be 5000
    assert index.collect("<", 0, 2500, None) == [2500, sum(range(2500)), 0, 2499]
    assert index.collect(">=", 0, 4990, None) == [10, sum(range(4990, 5000)), 4990, 4999]
    assert index.collect("!=", 0, 7, None) == [4999, sum(range(5000)) - 7, 0, 4999]
    assert index.collect("=", 0, 7.0, None) == [1, 7, 7, 7]
    assert index.collect("<", 1, "7", None) is None  # no string keys


# -- recognising indexable conditions ---------------------------------------------------


def _condition(text: str) -> ast.BoolExpr:
    query = parse(f"RETURN COUNT(*) PATTERN SEQ(A, B) WHERE {text} WITHIN 5 s").queries[0]
    cond = query.where[0]
    assert not isinstance(cond, ast.Equivalence)
    return cond


@pytest.mark.parametrize(
    ("text", "op"),
    [
        ("A.x * 1.05 < NEXT(B).y", "<"),
        ("NEXT(B).y - 3 >= A.x", "<="),
        ("NEXT(B).y > A.x", "<"),
        ("A.x <> NEXT(B).y", "!="),
        ("A.name = NEXT(B).name", "="),
        ("(A.x + 1) * 2 <= NEXT(B).y % 7", "<="),
        ("-A.x > NEXT(B).y / 2", ">"),
        ("A.x + A.z < NEXT(B).y", "<"),
    ],
)
def test_indexable_conditions(text: str, op: str) -> None:
    ix = edge_index(_condition(text))
    assert ix is not None and ix.op == op


@pytest.mark.parametrize(
    "text",
    [
        "A.x + NEXT(B).y < 3",  # both on one side
        "A.x < NEXT(B).y + A.z",
        "(A.x < NEXT(B).y OR A.x > 5)",
        "(A.x < NEXT(B).y AND A.x > 5)",
    ],
)
def test_other_shapes_are_not_indexable(text: str) -> None:
    assert edge_index(_condition(text)) is None


def test_a_transition_with_two_edge_predicates_is_scanned() -> None:
    plans = compile_workload(
        parse(
            "RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE A.x < NEXT(B).x AND A.y > NEXT(B).y "
            "AND B.x != NEXT(B).x WITHIN 5 s"
        )
    )
    assert set(plans[0].edge_indexes) == {("B", "B")}
    assert set(plans[0].edges) == {("A", "B"), ("B", "B")}
    assert "B.x != NEXT(B).x [indexable]" in plans[0].describe()


# -- (b) greta and hamlet equal twostep --------------------------------------------------


_SHAPES = ["SEQ(A, B+)", "(SEQ(A+, B))+", "A+", "SEQ(A+, B)", "SEQ(A, B, C)", "SEQ(A, NOT C, B+)"]


@st.composite
def _edge_condition(draw: st.DrawFn, src: str, dst: str) -> ast.Comparison:
    op = draw(st.sampled_from(OPS))
    left = ast.Attr(src, draw(st.sampled_from(["x", "y"])))
    right = ast.Attr(dst, draw(st.sampled_from(["x", "y"])), next=True)
    key: ast.Expr = left
    query: ast.Expr = right
    form = draw(st.integers(0, 5))
    c = ast.Number(draw(st.sampled_from([1, 2, 3, 0.5, 1.05])))
    if form == 1:
        key = ast.BinOp("*", left, c)
    elif form == 2:
        query = ast.BinOp("-", right, c)
    elif form == 3:
        key = ast.BinOp("+", left, c)
        query = ast.BinOp("*", right, ast.Number(2))
    elif form == 4:
        key = ast.BinOp("%", left, c)
    elif form == 5:
        query = ast.BinOp("/", right, ast.Number(draw(st.sampled_from([0, 2]))))  # 0: undefined
    if draw(st.booleans()):
        return ast.Comparison(FLIP[op], query, key)
    return ast.Comparison(op, key, query)


_TRANSITIONS = {
    "SEQ(A, B+)": [("A", "B"), ("B", "B")],
    "(SEQ(A+, B))+": [("A", "A"), ("A", "B"), ("B", "A")],
    "A+": [("A", "A")],
    "SEQ(A+, B)": [("A", "A"), ("A", "B")],
    "SEQ(A, B, C)": [("A", "B"), ("B", "C")],
    "SEQ(A, NOT C, B+)": [("A", "B"), ("B", "B")],  # A -> B crosses the NOT: scanned
}


@st.composite
def _indexed_query(draw: st.DrawFn, name: str, shape: str | None = None) -> ast.Query:
    shape = shape or draw(st.sampled_from(_SHAPES))
    where = []
    for src, dst in _TRANSITIONS[shape]:
        if draw(st.integers(0, 3)) > 0:
            where.append(to_text_condition(draw(_edge_condition(src, dst))))
    if draw(st.integers(0, 5)) == 0:
        where.append("[g]")
    returns = ["COUNT(*)"]
    var = "B" if "B" in shape else "A"
    returns += draw(
        st.lists(
            st.sampled_from([f"COUNT({var})", f"SUM({var}.x)", f"MIN({var}.y)", f"MAX({var}.x)"]),
            unique=True,
            max_size=3,
        )
    )
    within = draw(st.sampled_from([4, 6, 10]))
    slide = draw(st.sampled_from(["", " SLIDE 2 s", f" SLIDE {within // 2} s"]))
    text = (
        f"{name}: RETURN {', '.join(returns)} PATTERN {shape}"
        + (f" WHERE {' AND '.join(where)}" if where else "")
        + f" WITHIN {within} s{slide}"
    )
    return parse(text).queries[0]


def to_text_condition(cond: ast.Comparison) -> str:
    from trendagg.language import to_text

    return to_text(cond)


@st.composite
def _stream(draw: st.DrawFn, types: str = "ABC", max_events: int = 14, max_time: int = 10):
    """Events with ties in time; x and y ints or floats (equal keys are common)."""
    number = st.one_of(st.integers(0, 4), st.sampled_from([0.5, 1.5, 2.0, 2.1, 3.15]))
    events = []
    for _ in range(draw(st.integers(3, max_events))):
        e: dict[str, object] = {
            "type": draw(st.sampled_from(types)),
            "time": draw(st.integers(0, max_time)),
            "x": draw(number),
            "y": draw(number),
            "g": draw(st.integers(0, 1)),
        }
        events.append(e)
    return events


def _engine(queries: list[ast.Query], events: list[dict[str, object]], strategy: str) -> list[Any]:
    """Rows of the Python GRETA or HAMLET executor itself (whatever a Runner would pick)."""
    plans = [compile_query(q) for q in queries]
    ex: Any
    if strategy == "greta":
        ex = GretaExecutor(plans)
    else:
        ex = HamletExecutor(plans, sharing_plan(plans, strategy, compiled=False))
    rows = []
    for t, batch in time_batches(from_records(events).events):
        rows.extend(ex.step(t, batch))
    rows.extend(ex.finish())
    return rows


@given(_indexed_query("q1"), _stream())
def test_greta_and_hamlet_equal_twostep_with_indexed_edges(
    query: ast.Query, events: list[dict[str, object]]
) -> None:
    expected = canon(run_queries([query], events, "twostep", trend_limit=500_000))
    assert canon(_engine([query], events, "greta")) == expected
    assert canon(_engine([query], events, "hamlet")) == expected


@st.composite
def _shared_workload(draw: st.DrawFn) -> list[ast.Query]:
    """Queries that HAMLET can share B+ in, each with its own indexed predicates."""
    n = draw(st.integers(2, 4))
    return [
        draw(
            _indexed_query(f"q{i + 1}", draw(st.sampled_from(["SEQ(A, B+)", "SEQ(A, NOT C, B+)"])))
        )
        for i in range(n)
    ]


@given(_shared_workload(), _stream(types="ABBBBC", max_events=18, max_time=12))
def test_shared_bursts_with_indexed_edges_equal_twostep(
    queries: list[ast.Query], events: list[dict[str, object]]
) -> None:
    expected = canon(run_queries(queries, events, "twostep", trend_limit=500_000))
    assert canon(_engine(queries, events, "greta")) == expected
    assert canon(_engine(queries, events, "hamlet-static")) == expected
    assert canon(_engine(queries, events, "hamlet")) == expected


# -- (c) the index is used ---------------------------------------------------------------


def _counting(plans: list[QueryPlan]) -> list[int]:
    """Replace every edge predicate closure by one that counts its calls."""
    calls = [0]
    for plan in plans:
        for pair, fns in list(plan.edges.items()):

            def counted(x: Any, y: Any, fns: Any = fns) -> bool:
                calls[0] += 1
                return all(f(x, y) for f in fns)

            plan.edges[pair] = (counted,)
    return calls


def _run(plans: list[QueryPlan], events: EventBatch, **kw: Any) -> tuple[list[Any], GretaExecutor]:
    ex = GretaExecutor(plans, **kw)
    rows = []
    for t, batch in time_batches(events):
        rows.extend(ex.step(t, batch))
    rows.extend(ex.finish())
    return rows, ex


STOCK = (
    "RETURN COUNT(*), SUM(S.price), MIN(S.price), MAX(S.price) PATTERN S+ "
    "WHERE S.price * 1.05 < NEXT(S).price WITHIN 20 s SLIDE 10 s"
)


def _stock(n: int) -> EventBatch:
    prices = [50 + (i * 37) % 23 + i // 3 for i in range(n)]
    return from_records(
        [{"type": "S", "time": i // 2, "price": p} for i, p in enumerate(prices)]
    ).events


def test_the_index_answers_without_calling_the_predicate() -> None:
    events = _stock(120)
    plans = compile_workload(parse(STOCK))
    calls = _counting(plans)
    rows, ex = _run(plans, events)
    assert calls[0] == 0
    (part,) = ex.queries[0].partitions.values()
    (tr,) = part.root.transitions
    assert tr.index is not None and tr.index.op == "<"
    scanned, _ = _run(plans, events, edge_index=False)
    assert calls[0] > 1000  # the scan tests pairs
    assert canon(rows) == canon(scanned)
    assert rows and all(r.values["COUNT(*)"] > 0 for r in rows)
    assert canon(rows) == canon(run_strategy(plans, events, "twostep", trend_limit=10**7))


def test_closed_windows_drop_their_index() -> None:
    plans = compile_workload(parse(STOCK))
    ex = GretaExecutor(plans)
    seen = set()
    for t, batch in time_batches(_stock(200)):
        ex.step(t, batch)
        for part in ex.queries[0].partitions.values():
            (tr,) = part.root.transitions
            seen.update(tr.indexes)
            closed = ex.queries[0].closed
            assert closed is None or all(k >= closed for k in tr.indexes)
            assert len(tr.indexes) <= 2  # WITHIN 20 SLIDE 10: two open windows
    assert len(seen) > 5


def test_a_negated_transition_keeps_the_scan() -> None:
    plans = compile_workload(
        parse("RETURN COUNT(*) PATTERN SEQ(A, NOT C, B) WHERE A.x < NEXT(B).x WITHIN 9 s")
    )
    assert ("A", "B") in plans[0].edge_indexes
    events = from_records(
        [{"type": t, "time": i, "x": i % 3} for i, t in enumerate("AABCAB")]
    ).events
    rows, ex = _run(plans, events)
    (part,) = ex.queries[0].partitions.values()
    crossing = [tr for tr in part.root.transitions if tr.negation is not None]
    assert crossing and all(tr.index is None for tr in crossing)
    assert canon(rows) == canon(run_strategy(plans, events, "twostep"))


@pytest.mark.parametrize("indexed", [True, False])
def test_a_saved_engine_keeps_its_index(indexed: bool) -> None:
    """Engine state (a stream's) pickles with the index and continues exactly."""
    from trendagg.engine.state import dumps, loads

    events = _stock(80)
    plans = compile_workload(parse(STOCK))
    expected, _ = _run(plans, events, edge_index=indexed)
    ex = GretaExecutor(plans, edge_index=indexed)
    batches = list(time_batches(events))
    rows = []
    for t, batch in batches[:22]:
        rows.extend(ex.step(t, batch))
    fresh = compile_workload(parse(STOCK))
    calls = _counting(fresh)  # the restored engine finds its predicates in these plans
    ex = loads(dumps(ex, plans), fresh)
    (part,) = ex.queries[0].partitions.values()
    assert bool(part.root.transitions[0].indexes) == indexed
    for t, batch in batches[22:]:
        rows.extend(ex.step(t, batch))
    rows.extend(ex.finish())
    assert (calls[0] == 0) == indexed
    assert canon(rows) == canon(expected)


def test_sums_stay_exact_with_float_prices() -> None:
    """Float attributes enter sums as Fractions; the index adds them exactly too."""
    events = from_records(
        [{"type": "S", "time": i, "price": 0.1 * (i % 7) + i / 3} for i in range(60)]
    ).events
    plans = compile_workload(parse(STOCK))
    indexed, ex = _run(plans, events)
    scanned, _ = _run(plans, events, edge_index=False)
    assert [r.registers for r in indexed] == [r.registers for r in scanned]
    assert any(isinstance(v, Fraction) for r in indexed for v in r.registers or ())
