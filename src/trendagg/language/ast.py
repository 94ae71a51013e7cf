"""The query AST: frozen dataclasses, compared without source positions.

Every node carries an optional :class:`Span` (where it stood in the query
text) that takes no part in equality, so ``parse(print(q)) == q`` holds
although the printed text is laid out differently from the original.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction


@dataclass(frozen=True)
class Span:
    """1-based line and column of a node's first character, and its length in characters."""

    line: int
    column: int
    length: int = 1


def _span() -> Span | None:
    return field(default=None, compare=False, repr=False)  # type: ignore[no-any-return]


# ---------------------------------------------------------------- expressions


@dataclass(frozen=True)
class Number:
    """A numeric literal: ``int`` when written without '.' or exponent, else ``float``."""

    value: int | float
    span: Span | None = _span()


@dataclass(frozen=True)
class String:
    """A string constant: a quoted string or a bare word in a comparison."""

    value: str
    span: Span | None = _span()


@dataclass(frozen=True)
class Attr:
    """``V.a`` (``next`` false) or ``NEXT(V).a`` (``next`` true)."""

    var: str
    name: str
    next: bool = False
    span: Span | None = _span()


@dataclass(frozen=True)
class BinOp:
    """Arithmetic: ``op`` is one of ``+ - * / %``."""

    op: str
    left: Expr
    right: Expr
    span: Span | None = _span()


@dataclass(frozen=True)
class Negate:
    """Unary minus applied to a non-literal expression (``-V.a``)."""

    operand: Expr
    span: Span | None = _span()


Expr = Number | String | Attr | BinOp | Negate


# ---------------------------------------------------------------- conditions


@dataclass(frozen=True)
class Comparison:
    """``left op right`` with op one of ``= != < <= > >=`` (``<>`` is read as ``!=``)."""

    op: str
    left: Expr
    right: Expr
    span: Span | None = _span()


@dataclass(frozen=True)
class Or:
    """Disjunction, only ever written inside parentheses."""

    items: tuple[BoolExpr, ...]
    span: Span | None = _span()


@dataclass(frozen=True)
class And:
    """Conjunction nested inside a parenthesised condition (the top-level AND is ``Query.where``)."""

    items: tuple[BoolExpr, ...]
    span: Span | None = _span()


BoolExpr = Comparison | Or | And


@dataclass(frozen=True)
class PartAttr:
    """A partition attribute: ``a`` (``var`` None, applies to every variable) or ``V.a``."""

    name: str
    var: str | None = None
    span: Span | None = _span()

    @property
    def text(self) -> str:
        return self.name if self.var is None else f"{self.var}.{self.name}"


@dataclass(frozen=True)
class Equivalence:
    """``[a, V.b, ...]``: every listed attribute is equal across a trend's events."""

    attrs: tuple[PartAttr, ...]
    span: Span | None = _span()


Condition = Equivalence | Comparison | Or | And


# ---------------------------------------------------------------- patterns


@dataclass(frozen=True)
class EventPattern:
    """``Type Var``; the variable defaults to the type name."""

    type: str
    var: str
    span: Span | None = _span()


@dataclass(frozen=True)
class Plus:
    """Kleene plus ``P+``."""

    inner: Pattern
    span: Span | None = _span()


@dataclass(frozen=True)
class Seq:
    """``SEQ(P1, ..., Pn)``; items may be :class:`Not` under the rules of docs/language.md."""

    items: tuple[Pattern, ...]
    span: Span | None = _span()


@dataclass(frozen=True)
class Not:
    """``NOT P``, only as an item of a :class:`Seq`."""

    inner: Pattern
    span: Span | None = _span()


Pattern = EventPattern | Plus | Seq | Not


# ---------------------------------------------------------------- query


AGGREGATE_FUNCTIONS = ("COUNT", "SUM", "MIN", "MAX", "AVG")


@dataclass(frozen=True)
class Aggregate:
    """``COUNT(*)`` (var and attr None), ``COUNT(V)`` (attr None), or ``F(V.a)``."""

    func: str
    var: str | None = None
    attr: str | None = None
    span: Span | None = _span()

    @property
    def text(self) -> str:
        if self.var is None:
            return f"{self.func}(*)"
        if self.attr is None:
            return f"{self.func}({self.var})"
        return f"{self.func}({self.var}.{self.attr})"


@dataclass(frozen=True)
class ReturnItem:
    """One RETURN item: an aggregate or a group-by attribute, with an optional alias."""

    expr: Aggregate | PartAttr
    alias: str | None = None
    span: Span | None = _span()

    @property
    def name(self) -> str:
        """The output column name: the alias, else the canonical text without blanks."""
        return self.alias if self.alias is not None else self.expr.text


UNIT_SECONDS: dict[str, Fraction] = {
    "ms": Fraction(1, 1000),
    "s": Fraction(1),
    "min": Fraction(60),
    "h": Fraction(3600),
    "day": Fraction(86400),
}


@dataclass(frozen=True)
class Duration:
    """A duration as written: ``value`` (int, or Fraction for decimals) and a canonical unit."""

    value: int | Fraction
    unit: str
    span: Span | None = _span()

    @property
    def seconds(self) -> Fraction:
        return Fraction(self.value) * UNIT_SECONDS[self.unit]


@dataclass(frozen=True)
class Query:
    """One trend aggregation query (docs/language.md)."""

    name: str
    returns: tuple[ReturnItem, ...]
    pattern: Pattern
    where: tuple[Condition, ...]
    group_by: tuple[PartAttr, ...]
    within: Duration
    slide: Duration | None = None
    span: Span | None = _span()

    @property
    def slide_or_within(self) -> Duration:
        return self.slide if self.slide is not None else self.within


@dataclass(frozen=True)
class Workload:
    """The queries of one file, in order. Unnamed queries are named ``q1``, ``q2``... by position."""

    queries: tuple[Query, ...]
    source: str = field(default="", compare=False, repr=False)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.queries)

    def __len__(self) -> int:
        return len(self.queries)
