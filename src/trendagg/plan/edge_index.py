"""Edge predicates that an ordered index can answer: ``key(x) op query(y)``.

A NEXT condition such as ``S.price * 1.05 < NEXT(S).price`` relates the
previous event x and the next event y of a pair only through one comparison
of a value computed from x alone with a value computed from y alone. Such a
condition is *indexable*: the predecessors of y that satisfy it are the
vertices whose key lies in a range of an ordered index, so GRETA finds their
combined registers in O(log n) instead of testing every pair
(:mod:`trendagg.reference.key_index`).

:func:`edge_index` recognises the shape: one comparison whose one side reads
only plain attributes of the source variable (and constants) and whose other
side reads only ``NEXT`` attributes (and constants), with any arithmetic.
When NEXT is on the left the comparison is turned around (``<`` becomes ``>``),
so the predicate always reads ``key(x) op query(y)``.

Values are those of :mod:`trendagg.plan.predicates`, computed by the same
compiled expressions, so a key is exactly what the closure would compare: an
int stays an int, ``x * 1.05`` the same float. :func:`value_kind` sorts a
value into the classes the comparison rule of that module distinguishes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from trendagg.language import ast
from trendagg.plan.predicates import UndefinedValue, ValueFn, compile_expr, expr_refs

Attrs = Mapping[str, object]

_EMPTY: Attrs = {}

#: ``a op b`` is ``b FLIP[op] a``
FLIP = {"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}

# the kinds of a value: ordered among numbers, ordered among strings, and the rest
NUMBER = 0
STRING = 1
OTHER = 2  # NaN, booleans, anything else: equal to nothing, ordered with nothing
UNDEFINED = 3  # no value at all (x / 0, 'a' + 1): the pair never matches


def value_kind(value: object) -> int:
    """NUMBER, STRING or OTHER, as ``_compare`` of :mod:`trendagg.plan.predicates` sees it.

    Numbers (int and float, not bool) compare with numbers, strings with strings.
    NaN is a number that is equal to nothing and ordered with nothing, and any
    other value (a bool, ...) is compared with nothing: for both only ``!=``
    holds, against every defined value, which is the OTHER kind.
    """
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return NUMBER if value == value else OTHER
    if isinstance(value, str):
        return STRING
    return OTHER


@dataclass(frozen=True)
class EdgeIndex:
    """An indexable edge predicate: the pair (x, y) matches iff ``key(x) op query(y)``.

    ``key`` and ``query`` are compiled expressions (``f(x_attrs, y_attrs)``):
    ``key`` reads only x, ``query`` only y. ``op`` is one of ``= != < <= > >=``.
    """

    op: str
    key: ValueFn
    query: ValueFn
    condition: ast.Comparison

    def key_of(self, attrs: Attrs) -> tuple[int, object]:
        """(kind, key) of a source event; kind UNDEFINED where the key has no value
        (x / 0, 'a' + 1, a missing attribute)."""
        try:
            value = self.key(attrs, _EMPTY)
        except (UndefinedValue, KeyError):
            return UNDEFINED, None
        return value_kind(value), value

    def query_of(self, attrs: Attrs) -> tuple[int, object]:
        """(kind, value) that a next event compares keys with; kind UNDEFINED: no value."""
        try:
            value = self.query(_EMPTY, attrs)
        except (UndefinedValue, KeyError):
            return UNDEFINED, None
        return value_kind(value), value


def edge_index(cond: ast.BoolExpr) -> EdgeIndex | None:
    """The indexable form of an edge condition, or None when it has another shape.

    Indexable: a single comparison (no AND/OR) whose one side names only plain
    attributes (``V.a``) and the other only NEXT attributes (``NEXT(W).b``),
    each side with at least one attribute; constants and arithmetic anywhere.
    """
    if not isinstance(cond, ast.Comparison) or cond.op not in FLIP:
        return None
    left, right = expr_refs(cond.left), expr_refs(cond.right)
    if not left or not right:
        return None
    if all(not r.next for r in left) and all(r.next for r in right):
        return EdgeIndex(cond.op, compile_expr(cond.left), compile_expr(cond.right), cond)
    if all(r.next for r in left) and all(not r.next for r in right):
        return EdgeIndex(FLIP[cond.op], compile_expr(cond.right), compile_expr(cond.left), cond)
    return None


__all__ = [
    "FLIP",
    "NUMBER",
    "OTHER",
    "STRING",
    "UNDEFINED",
    "EdgeIndex",
    "edge_index",
    "value_kind",
]
