"""Small pure questions about a query's AST, shared by validation and the plan layer.

Nothing here raises on an invalid query: the helpers describe what is written
(a variable bound twice is reported once, at its first binding), and
:mod:`trendagg.language.validate` decides what is wrong with it.
"""

from __future__ import annotations

from collections.abc import Iterator

from trendagg.language.ast import (
    And,
    Attr,
    BinOp,
    BoolExpr,
    Comparison,
    Condition,
    Equivalence,
    EventPattern,
    Expr,
    Negate,
    Not,
    Number,
    Or,
    Pattern,
    Plus,
    Seq,
    String,
)

__all__ = [
    "adjacent_pairs",
    "attributes",
    "comparisons",
    "condition_variables",
    "expr_attrs",
    "negated_variables",
    "negation_scopes",
    "pattern_variables",
    "walk_pattern",
]


def walk_pattern(pattern: Pattern) -> Iterator[Pattern]:
    """Yield ``pattern`` and every sub-pattern, parents first, items left to right."""
    yield pattern
    if isinstance(pattern, Seq):
        for item in pattern.items:
            yield from walk_pattern(item)
    elif isinstance(pattern, Plus | Not):
        yield from walk_pattern(pattern.inner)


def pattern_variables(pattern: Pattern) -> dict[str, EventPattern]:
    """Map every variable of the pattern, positive or negated, to its event leaf.

    The dictionary follows the order of the text; a variable bound twice (an
    invalid query) maps to its first binding.
    """
    leaves: dict[str, EventPattern] = {}
    for node in walk_pattern(pattern):
        if isinstance(node, EventPattern):
            leaves.setdefault(node.var, node)
    return leaves


def negation_scopes(pattern: Pattern) -> dict[str, int]:
    """Map every variable to the negative sub-pattern that binds it most closely.

    ``0`` means positive (under no NOT); otherwise the value is the 1-based
    position, in text order, of the innermost ``NOT`` above the variable. Two
    variables can only be adjacent in a trend (GRETA, section 5: each negative
    sub-pattern is matched on its own) when their scopes are equal.
    """
    scopes: dict[str, int] = {}
    counter = 0

    def visit(node: Pattern, scope: int) -> None:
        nonlocal counter
        if isinstance(node, EventPattern):
            scopes.setdefault(node.var, scope)
        elif isinstance(node, Not):
            counter += 1
            visit(node.inner, counter)
        elif isinstance(node, Plus):
            visit(node.inner, scope)
        else:
            for item in node.items:
                visit(item, scope)

    visit(pattern, 0)
    return scopes


def negated_variables(pattern: Pattern) -> set[str]:
    """The variables bound inside a ``NOT``, at any depth.

    Negated events are never part of a trend: they only invalidate trends
    (docs/semantics.md, "Negation"), so they cannot be aggregated or partitioned on.
    """
    return {var for var, scope in negation_scopes(pattern).items() if scope}


def adjacent_pairs(pattern: Pattern) -> set[tuple[str, str]]:
    """Every ``(V, W)`` such that an event of W can directly follow one of V.

    Computed like the edges of a GRETA template (GRETA, section 3.1): ``P+``
    links the last variables of P back to its first ones, ``SEQ`` links each
    positive item to the next positive item (adjacency crosses a NOT), and a
    negative sub-pattern contributes the pairs inside it, never pairs that
    leave it.
    """
    pairs: set[tuple[str, str]] = set()

    def ends(node: Pattern) -> tuple[set[str], set[str]]:
        """First and last variables of ``node``; records the pairs inside it."""
        if isinstance(node, EventPattern):
            return {node.var}, {node.var}
        if isinstance(node, Plus):
            inner_first, inner_last = ends(node.inner)
            pairs.update((v, w) for v in inner_last for w in inner_first)
            return inner_first, inner_last
        if isinstance(node, Not):
            ends(node.inner)
            return set(), set()
        first: set[str] | None = None
        last: set[str] = set()
        for item in node.items:
            item_first, item_last = ends(item)
            if isinstance(item, Not):
                continue
            if first is None:
                first = item_first
            pairs.update((v, w) for v in last for w in item_first)
            last = item_last
        return first or set(), last

    ends(pattern)
    return pairs


def attributes(node: Expr | Condition) -> Iterator[Attr]:
    """Yield the ``V.a`` and ``NEXT(V).a`` terms of an expression or condition, in text order."""
    if isinstance(node, Attr):
        yield node
    elif isinstance(node, BinOp):
        yield from attributes(node.left)
        yield from attributes(node.right)
    elif isinstance(node, Negate):
        yield from attributes(node.operand)
    elif isinstance(node, Comparison):
        yield from attributes(node.left)
        yield from attributes(node.right)
    elif isinstance(node, Or | And):
        for item in node.items:
            yield from attributes(item)
    elif not isinstance(node, Number | String | Equivalence):  # pragma: no cover
        raise TypeError(f"not an expression or condition: {node!r}")


def comparisons(condition: Condition) -> Iterator[Comparison]:
    """Yield the comparisons of a condition, in text order (none for an equivalence list)."""
    if isinstance(condition, Comparison):
        yield condition
    elif isinstance(condition, Or | And):
        for item in condition.items:
            yield from comparisons(item)


def condition_variables(condition: Condition | Expr) -> tuple[set[str], set[str]]:
    """The variables a condition reads: ``(plain, next)``.

    ``plain`` holds V of every ``V.a`` (and of every qualified attribute of an
    equivalence list), ``next`` holds W of every ``NEXT(W).a``. A condition
    with an empty ``next`` is a local (vertex) predicate when ``plain`` has one
    variable; otherwise it is an edge predicate (docs/semantics.md, "Predicates").
    """
    plain: set[str] = set()
    following: set[str] = set()
    if isinstance(condition, Equivalence):
        plain.update(attr.var for attr in condition.attrs if attr.var is not None)
        return plain, following
    for attr in attributes(condition):
        (following if attr.next else plain).add(attr.var)
    return plain, following


def expr_attrs(expr: Expr | BoolExpr) -> set[tuple[str, str]]:
    """The ``(variable, attribute)`` pairs an expression or condition reads.

    ``V.a`` and ``NEXT(V).a`` both give ``(V, a)``: an event bound to V must
    carry ``a`` for the predicate to be evaluated (docs/semantics.md, "Predicates").
    """
    return {(attr.var, attr.name) for attr in attributes(expr)}
