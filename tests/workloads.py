"""Hypothesis strategies for random queries (as ASTs) and event streams.

Patterns nest SEQ, + and NOT (middle NOTs anywhere, leading/trailing NOTs in
the outermost SEQ), with local predicates, NEXT predicates on real transitions
(including inside negative sub-patterns), unqualified and qualified
equivalence and GROUP-BY attributes (so some events are partition wildcards),
every aggregate, and sliding windows over streams with ties in time; with
``decimals``, attribute x holds integers and decimals (k + 0.5, never equal to an
integer, so that a MIN or MAX is one value of one kind) in one stream.
"""

from __future__ import annotations

from hypothesis import strategies as st

from trendagg.language import ast
from trendagg.language.analysis import negated_variables, pattern_variables
from trendagg.plan.template import build_template

TYPES = ["A", "B", "C", "D", "E", "F", "G"]


def _leaf(draw: st.DrawFn, pool: list[str]) -> ast.EventPattern:
    t = pool.pop(draw(st.integers(0, len(pool) - 1)))
    var = t if draw(st.booleans()) else t.lower() + "v"
    return ast.EventPattern(t, var)


def _negative(draw: st.DrawFn, pool: list[str], depth: int) -> ast.Pattern:
    choice = draw(st.integers(0, 3 if depth > 0 and len(pool) >= 3 else 0))
    if choice == 0 or len(pool) < 2:
        return _leaf(draw, pool)
    if choice == 1:
        return ast.Plus(_leaf(draw, pool))
    if choice == 2:
        return ast.Seq((_leaf(draw, pool), _leaf(draw, pool)))
    first = _leaf(draw, pool)
    inner = _leaf(draw, pool)
    last = _leaf(draw, pool) if pool else None
    if last is None:
        return ast.Seq((first, ast.Plus(inner)))
    return ast.Seq((first, ast.Not(inner), last))


def _positive(draw: st.DrawFn, pool: list[str], depth: int) -> ast.Pattern:
    kind = draw(st.integers(0, 3)) if depth > 0 and len(pool) >= 2 else draw(st.integers(0, 1))
    if kind == 0 or not pool:
        return _leaf(draw, pool)
    if kind == 1:
        inner = (
            _positive(draw, pool, depth - 1)
            if len(pool) >= 2 and draw(st.booleans())
            else _leaf(draw, pool)
        )
        return ast.Plus(inner)
    n = draw(st.integers(2, 3))
    items: list[ast.Pattern] = []
    for i in range(n):
        if not pool:
            break
        if i > 0 and len(pool) >= 2 and draw(st.integers(0, 3)) == 0:
            items.append(ast.Not(_negative(draw, pool, depth - 1)))
        if not pool:
            items.pop() if isinstance(items[-1], ast.Not) else None
            break
        items.append(_positive(draw, pool, depth - 1))
    if isinstance(items[-1], ast.Not):
        items.pop()
    if len([i for i in items if not isinstance(i, ast.Not)]) < 2 and len(items) == 1:
        item = items[0]
        return ast.Plus(item) if kind == 3 and not isinstance(item, ast.Plus) else item
    seq = ast.Seq(tuple(items))
    return ast.Plus(seq) if kind == 3 else seq


def _small(draw: st.DrawFn, pool: list[str]) -> ast.Pattern:
    leaf = _leaf(draw, pool)
    return ast.Plus(leaf) if draw(st.booleans()) else leaf


def _negation_focused(draw: st.DrawFn, pool: list[str]) -> ast.Pattern:
    """Short patterns around one NOT (middle, leading or trailing), so negation decides results."""
    first = _small(draw, pool)
    negative = _negative(draw, pool, draw(st.integers(0, 1)))
    last = _small(draw, pool) if draw(st.integers(0, 3)) > 0 else None
    where = draw(st.integers(0, 2)) if last is not None else draw(st.integers(1, 2))
    if where == 0:
        assert last is not None
        seq = ast.Seq((first, ast.Not(negative), last))
        return ast.Plus(seq) if draw(st.integers(0, 2)) == 0 else seq
    positives = (first,) if last is None else (first, last)
    if where == 1:
        return ast.Seq((ast.Not(negative),) + positives)
    return ast.Seq(positives + (ast.Not(negative),))


def _query(
    name: str,
    returns: list[ast.ReturnItem],
    body: ast.Pattern,
    where: list[ast.Condition],
    group_by: list[ast.PartAttr],
    within: int,
    slide: int | None,
) -> ast.Query:
    """The query of a generator's parts (a window in seconds; slide None: tumbling)."""
    return ast.Query(
        name,
        tuple(returns),
        body,
        tuple(where),
        tuple(group_by),
        ast.Duration(within, "s"),
        ast.Duration(slide, "s") if slide is not None else None,
    )


@st.composite
def queries(draw: st.DrawFn, name: str = "q1", max_depth: int = 2) -> ast.Query:
    pool = list(TYPES)
    if draw(st.integers(0, 2)) == 0:
        body = _negation_focused(draw, pool)
    else:
        body = _positive(draw, pool, max_depth)
    edged = isinstance(body, ast.Seq) and (
        isinstance(body.items[0], ast.Not) or isinstance(body.items[-1], ast.Not)
    )
    if pool and not edged and draw(st.integers(0, 3)) == 0:
        items = list(body.items) if isinstance(body, ast.Seq) else [body]
        if draw(st.booleans()):
            items.insert(0, ast.Not(_leaf(draw, pool)))
        else:
            items.append(ast.Not(_negative(draw, pool, 1)))
        body = ast.Seq(tuple(items))
    leaves = pattern_variables(body)
    negated = negated_variables(body)
    positives = [v for v in leaves if v not in negated]
    template = build_template(body)
    where: list[ast.Condition] = []
    # local predicates
    for var in leaves:
        if draw(st.integers(0, 4)) == 0:
            op = draw(st.sampled_from(["<", ">=", "!=", "="]))
            where.append(
                ast.Comparison(op, ast.Attr(var, "x"), ast.Number(draw(st.integers(0, 4))))
            )
        if draw(st.integers(0, 8)) == 0:
            where.append(
                ast.Or(
                    (
                        ast.Comparison(
                            "=", ast.BinOp("%", ast.Attr(var, "x"), ast.Number(2)), ast.Number(0)
                        ),
                        ast.Comparison(">", ast.Attr(var, "x"), ast.Number(3)),
                    )
                )
            )
    # edge predicates on real transitions of any (sub-)template
    for tpl in template.all_templates():
        for tr in tpl.transitions:
            if draw(st.integers(0, 3)) == 0:
                op = draw(st.sampled_from(["<", "<=", ">", "!="]))
                left: ast.Expr = ast.Attr(tr.src, "x")
                if draw(st.integers(0, 3)) == 0:
                    left = ast.BinOp("+", left, ast.Number(1))
                where.append(ast.Comparison(op, left, ast.Attr(tr.dst, "x", next=True)))
        for var in tpl.states:
            if tpl.predecessors(var) and draw(st.integers(0, 9)) == 0:
                where.append(ast.Comparison(">", ast.Attr(var, "x", next=True), ast.Number(0)))
    # partitions and groups
    group_by: list[ast.PartAttr] = []
    part_choice = draw(st.integers(0, 4))
    if part_choice == 1:
        where.append(ast.Equivalence((ast.PartAttr("g"),)))
    elif part_choice == 2:
        where.append(ast.Equivalence((ast.PartAttr("g", draw(st.sampled_from(positives))),)))
    elif part_choice == 3:
        group_by.append(ast.PartAttr("g"))
    elif part_choice == 4:
        group_by.append(ast.PartAttr("h", draw(st.sampled_from(positives))))
        if draw(st.booleans()):
            where.append(ast.Equivalence((ast.PartAttr("g"),)))
    returns: list[ast.ReturnItem] = [ast.ReturnItem(a) for a in group_by]
    returns.append(ast.ReturnItem(ast.Aggregate("COUNT")))
    for _ in range(draw(st.integers(0, 3))):
        var = draw(st.sampled_from(positives))
        func = draw(st.sampled_from(["COUNT", "SUM", "MIN", "MAX", "AVG"]))
        agg = ast.Aggregate(func, var, None if func == "COUNT" else "x")
        if all(r.expr != agg for r in returns):
            returns.append(ast.ReturnItem(agg))
    within = draw(st.integers(2, 12))
    slide = draw(st.one_of(st.none(), st.integers(1, within + 2)))
    return _query(name, returns, body, where, group_by, within, slide)


def pattern_types(p: ast.Pattern) -> list[str]:
    """Event types of a pattern, in order of appearance."""
    return [leaf.type for leaf in pattern_variables(p).values()]


@st.composite
def streams(
    draw: st.DrawFn,
    max_events: int = 12,
    max_time: int = 14,
    types: list[str] | None = None,
    decimals: bool = False,
) -> list[dict[str, object]]:
    """Events over ``types`` (mostly) and some noise, with ties in time and missing
    attributes; with ``decimals``, a third of the x values are decimals."""
    n = draw(st.integers(min(3, max_events), max_events))
    pool = (types or TYPES) + ["Z"]
    events = []
    for _ in range(n):
        e: dict[str, object] = {
            "type": draw(st.sampled_from(pool)),
            "time": draw(st.integers(0, max_time)),
        }
        if draw(st.integers(0, 9)) > 0:
            e["x"] = draw(st.integers(0, 5))
            if decimals and draw(st.integers(0, 2)) == 0:
                e["x"] += 0.5  # type: ignore[operator]
        if draw(st.integers(0, 9)) > 0:
            e["g"] = draw(st.integers(0, 1))
        if draw(st.integers(0, 9)) > 0:
            e["h"] = draw(st.sampled_from(["p", "q"]))
        e["y"] = draw(st.integers(0, 3))
        events.append(e)
    return events


@st.composite
def cases(
    draw: st.DrawFn,
    n_queries: int = 1,
    max_events: int = 12,
    max_time: int = 14,
    max_depth: int = 2,
    decimals: bool = False,
) -> tuple[list[ast.Query], list[dict[str, object]]]:
    """A workload of random queries and a stream over their event types."""
    qs = [draw(queries(name=f"q{i + 1}", max_depth=max_depth)) for i in range(n_queries)]
    types = sorted({t for q in qs for t in pattern_types(q.pattern)})
    stream = streams(max_events=max_events, max_time=max_time, types=types, decimals=decimals)
    return qs, draw(stream)


@st.composite
def shared_query(draw: st.DrawFn, name: str, kleene: str = "B") -> ast.Query:
    """A query with ``kleene+`` and a random prefix/suffix, predicates, aggregates, window."""
    others = [t for t in TYPES if t != kleene]
    var = kleene if draw(st.booleans()) else kleene.lower() + "k"
    core: ast.Pattern = ast.Plus(ast.EventPattern(kleene, var))
    shape = draw(st.integers(0, 6))
    picks = draw(st.permutations(others))
    a, c, n = ast.EventPattern(picks[0], picks[0]), ast.EventPattern(picks[1], picks[1]), picks[2]
    if shape == 0:
        body: ast.Pattern = core
    elif shape == 1:
        body = ast.Seq((a, core))
    elif shape == 2:
        body = ast.Seq((core, c))
    elif shape == 3:
        body = ast.Seq((a, core, c))
    elif shape == 4:
        body = ast.Plus(ast.Seq((a, core)))
    elif shape == 5:
        body = ast.Seq((a, ast.Not(ast.EventPattern(n, n)), core))
    else:
        body = (
            ast.Seq((ast.Not(ast.EventPattern(n, n)), core, c))
            if draw(st.booleans())
            else ast.Seq((a, core, ast.Not(ast.EventPattern(n, n))))
        )
    where: list[ast.Condition] = []
    if draw(st.integers(0, 2)) == 0:  # local predicate on the shared Kleene variable
        where.append(
            ast.Comparison(
                draw(st.sampled_from(["<", ">=", "!="])),
                ast.Attr(var, "x"),
                ast.Number(draw(st.integers(0, 4))),
            )
        )
    if draw(st.integers(0, 4)) == 0:  # NEXT(B) condition without the previous event
        where.append(
            ast.Comparison(">", ast.Attr(var, "x", next=True), ast.Number(draw(st.integers(0, 3))))
        )
    if draw(st.integers(0, 3)) == 0:  # edge predicate on B+: pairs differ between queries
        op = draw(st.sampled_from(["<", "<=", ">", "!="]))
        where.append(ast.Comparison(op, ast.Attr(var, "x"), ast.Attr(var, "x", next=True)))
    if shape in (1, 3, 4, 5) and draw(st.integers(0, 4)) == 0:  # from the prefix into B
        where.append(ast.Comparison("<=", ast.Attr(a.var, "y"), ast.Attr(var, "y", next=True)))
    if shape in (2, 3) and draw(st.integers(0, 4)) == 0:  # from B to the suffix: B is scanned
        where.append(ast.Comparison(">=", ast.Attr(var, "y"), ast.Attr(c.var, "y", next=True)))
    part = draw(st.integers(0, 2))
    group_by: list[ast.PartAttr] = []
    if part == 1:
        where.append(ast.Equivalence((ast.PartAttr("g"),)))
    elif part == 2:
        group_by.append(ast.PartAttr("g"))
    returns: list[ast.ReturnItem] = [ast.ReturnItem(x) for x in group_by]
    returns.append(ast.ReturnItem(ast.Aggregate("COUNT")))
    for func in draw(
        st.lists(st.sampled_from(["COUNT", "SUM", "MIN", "MAX", "AVG"]), max_size=3, unique=True)
    ):
        returns.append(ast.ReturnItem(ast.Aggregate(func, var, None if func == "COUNT" else "x")))
    if draw(st.booleans()):
        returns.append(
            ast.ReturnItem(ast.Aggregate("COUNT", a.var))
            if shape in (1, 3, 4, 5)
            else ast.ReturnItem(ast.Aggregate("MAX", var, "y"))
        )
    within = draw(st.sampled_from([4, 6, 8, 12]))
    slide = draw(st.sampled_from([None, 2, within // 2]))
    return _query(name, returns, body, where, group_by, within, slide or None)


@st.composite
def shared_cases(
    draw: st.DrawFn,
    min_queries: int = 2,
    max_queries: int = 8,
    max_events: int = 16,
    max_time: int = 12,
    decimals: bool = False,
) -> tuple[list[ast.Query], list[dict[str, object]]]:
    """Workloads of queries sharing ``B+`` (often in long bursts), and streams over their types."""
    n = draw(st.integers(min_queries, max_queries))
    qs = [draw(shared_query(f"q{i + 1}")) for i in range(n)]
    types = sorted({t for q in qs for t in pattern_types(q.pattern)})
    # B four times as likely as each other type: long bursts of B
    stream = streams(max_events, max_time, ["B"] * 4 + types, decimals)
    return qs, draw(stream)


@st.composite
def seq_query(draw: st.DrawFn, name: str, routes: list[list[str]]) -> ast.Query:
    """A fixed-length SEQ query (SHARON's class): a stretch of one of ``routes`` (orders
    of the types), sometimes continued by a stretch of another, so that queries share
    sub-sequences in their middles and ends; each variable named as its type, so that
    equal predicates are equal binding rules; local predicates from a small set (equal
    and different across queries), partitions, groups, every aggregate, two windows."""
    route = draw(st.sampled_from(routes))
    start = draw(st.integers(0, len(route) - 1))
    types = route[start : start + draw(st.integers(1, 5))]
    if draw(st.integers(0, 3)) == 0:
        other = [t for t in draw(st.sampled_from(routes)) if t not in types]
        at = draw(st.integers(0, max(0, len(other) - 1)))
        types = types + other[at : at + draw(st.integers(1, 2))]
    body: ast.Pattern = ast.Seq(tuple(ast.EventPattern(t, t) for t in types))
    if len(types) == 1:
        body = ast.EventPattern(types[0], types[0])
    where: list[ast.Condition] = []
    for t in types:
        if draw(st.integers(0, 3)) == 0:
            op, value = draw(st.sampled_from([(">=", 2), ("<", 4)]))
            where.append(ast.Comparison(op, ast.Attr(t, "x"), ast.Number(value)))
    group_by: list[ast.PartAttr] = []
    part = draw(st.integers(0, 3))
    if part == 1:
        where.append(ast.Equivalence((ast.PartAttr("g"),)))
    elif part == 2:
        group_by.append(ast.PartAttr("g"))
    elif part == 3:
        group_by.append(ast.PartAttr("h"))
    returns: list[ast.ReturnItem] = [ast.ReturnItem(a) for a in group_by]
    returns.append(ast.ReturnItem(ast.Aggregate("COUNT")))
    for _ in range(draw(st.integers(0, 3))):
        var = draw(st.sampled_from(types))
        func = draw(st.sampled_from(["COUNT", "SUM", "MIN", "MAX", "AVG"]))
        agg = ast.Aggregate(func, var, None if func == "COUNT" else "x")
        if all(r.expr != agg for r in returns):
            returns.append(ast.ReturnItem(agg))
    within = draw(st.sampled_from([4, 8]))
    slide = draw(st.sampled_from([None, 2]))
    return _query(name, returns, body, where, group_by, within, slide or None)


@st.composite
def seq_cases(
    draw: st.DrawFn,
    min_queries: int = 2,
    max_queries: int = 6,
    max_events: int = 16,
    max_time: int = 12,
) -> tuple[list[ast.Query], list[dict[str, object]]]:
    """Workloads of fixed-length SEQ queries that share sub-sequences (stretches of two
    orders of six types), and streams over their types."""
    routes = [list(draw(st.permutations(TYPES[:6]))) for _ in range(2)]
    n = draw(st.integers(min_queries, max_queries))
    qs = [draw(seq_query(f"q{i + 1}", routes)) for i in range(n)]
    types = sorted({t for q in qs for t in pattern_types(q.pattern)})
    return qs, draw(streams(max_events, max_time, types))


GLORIA_CORES = ["B+", "SEQ(A, B)+", "SEQ(C, SEQ(A, B)+)+", "SEQ(C, SEQ(A, B)+, D)+"]


@st.composite
def gloria_query(draw: st.DrawFn, name: str, route: list[str]) -> ast.Query:
    """A query of GLORIA's class: a flat or nested Kleene core (``SEQ(A, B)+``,
    ``SEQ(C, SEQ(A, B)+, D)+``, ...) with a prefix and a suffix from ``route``, or a
    stretch of ``route`` alone (SEQ); each variable named as its type, so that equal
    predicates are equal binding rules; local predicates from a small set (equal and
    different across queries), partitions, groups, every aggregate, two windows."""
    from trendagg.language import parse

    core = draw(st.sampled_from([*GLORIA_CORES, None]))
    used = set() if core is None else {t for t in "ABCD" if t in core}
    free = [t for t in route if t not in used]

    def some(types: list[str], low: int, high: int) -> list[str]:
        """A sub-sequence (in route order, gaps allowed: queries part and meet again)."""
        if not types:
            return []
        keep = draw(st.lists(st.sampled_from(types), min_size=low, max_size=high, unique=True))
        return [t for t in types if t in keep]

    if core is None:
        items = some(route, 2, 4)
        types = list(items)
    else:
        cut = draw(st.integers(0, len(free)))
        prefix = some(free[:cut], 0, 3)
        suffix = some(free[cut:], 0, 2)
        items = [*prefix, core, *suffix]
        types = [*prefix, *[t for t in "CABD" if t in used], *suffix]
    conds = []
    for t in types:
        if draw(st.integers(0, 4)) == 0:
            conds.append(draw(st.sampled_from([f"{t}.x >= 2", f"{t}.x < 4"])))
    part = draw(st.integers(0, 2))
    group = ""
    if part == 1:
        conds.append("[g]")
    elif part == 2:
        group = " GROUP-BY g"
    returns = ["g"] if part == 2 else []
    returns.append("COUNT(*)")
    for _ in range(draw(st.integers(0, 2))):
        t = draw(st.sampled_from(types))
        func = draw(st.sampled_from(["COUNT", "SUM", "MIN", "MAX", "AVG"]))
        item = f"COUNT({t})" if func == "COUNT" else f"{func}({t}.x)"
        if item not in returns:
            returns.append(item)
    pattern = items[0] if len(items) == 1 else f"SEQ({', '.join(items)})"
    where = f" WHERE {' AND '.join(conds)}" if conds else ""
    within = draw(st.sampled_from([4, 8]))
    slide = draw(st.sampled_from(["", " SLIDE 2 s"]))
    text = (
        f"{name}: RETURN {', '.join(returns)} PATTERN {pattern}{where}{group} "
        f"WITHIN {within} s{slide}"
    )
    return parse(text).queries[0]


@st.composite
def gloria_cases(
    draw: st.DrawFn,
    min_queries: int = 2,
    max_queries: int = 5,
    max_events: int = 12,
    max_time: int = 10,
) -> tuple[list[ast.Query], list[dict[str, object]]]:
    """Workloads of GLORIA's class that share SEQ and Kleene sub-patterns (one order of
    the prefix and suffix types), and streams over their types with ties in time."""
    route = list(draw(st.permutations(["D", "E", "F", "G"])))
    n = draw(st.integers(min_queries, max_queries))
    qs = [draw(gloria_query(f"q{i + 1}", route)) for i in range(n)]
    types = sorted({t for q in qs for t in pattern_types(q.pattern)})
    events = draw(streams(max_events, max_time, types))
    # walks along random queries' patterns (a type once or twice, times rising by 0 or
    # 1: ties too), so that trends exist and shared transitions carry them
    for _ in range(draw(st.integers(1, 3))):
        walk = pattern_types(draw(st.sampled_from(qs)).pattern)
        t = draw(st.integers(0, 2))
        for kind in walk * draw(st.integers(1, 2)):
            for _ in range(draw(st.integers(1, 2))):
                t += draw(st.integers(0, 1))
                events.append(
                    {"type": kind, "time": t, "x": draw(st.integers(0, 5)), "g": 0, "y": 0}
                )
    return qs, events
