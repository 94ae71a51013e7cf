"""AST -> canonical query text.

The layout is fixed (one clause per line, upper-case keywords, the variable
omitted when it equals the type, durations in canonical units) and the
parentheses are the fewest that keep the tree, so that
``parse(to_text(w)) == w`` for every workload the parser can produce. Golden
files compare this printout, which makes them insensitive to how the original
query was laid out.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TypeAlias

from trendagg.language.ast import (
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
)

__all__ = ["quote", "to_text"]

Node: TypeAlias = (
    Workload
    | Query
    | ReturnItem
    | Aggregate
    | PartAttr
    | EventPattern
    | Plus
    | Seq
    | Not
    | Equivalence
    | Comparison
    | Or
    | And
    | Number
    | String
    | Attr
    | BinOp
    | Negate
    | Duration
)

_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2, "%": 2}
_NAMED_ESCAPES = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def to_text(node: Node) -> str:
    """Print a workload, a query or any sub-node in canonical form.

    A workload prints its queries separated by a blank line, each ending in
    ``;``, with a final newline. A query prints as::

        name: RETURN a, COUNT(*) AS n
        PATTERN SEQ(Request R, Travel T+, Dropoff D)
        WHERE [driver] AND T.speed < NEXT(T).speed
        GROUP-BY district
        WITHIN 10 min SLIDE 1 min;

    A top-level ``Or``/``And`` condition prints in parentheses, as it must be
    written in WHERE.

    Raises
    ------
    ValueError
        A value has no spelling in the language: an infinite or NaN number, or
        a duration that is not a finite decimal (``Fraction(1, 3)``).
    TypeError
        ``node`` is not an AST node.
    """
    if isinstance(node, Workload):
        return "\n\n".join(_query(query) for query in node.queries) + "\n"
    if isinstance(node, Query):
        return _query(node)
    if isinstance(node, ReturnItem):
        return _return_item(node)
    if isinstance(node, Aggregate | PartAttr):
        return node.text
    if isinstance(node, EventPattern | Plus | Seq | Not):
        return _pattern(node)
    if isinstance(node, Equivalence | Comparison | Or | And):
        return _condition(node)
    if isinstance(node, Number | String | Attr | BinOp | Negate):
        return _expr(node)
    if isinstance(node, Duration):
        return _duration(node)
    raise TypeError(f"to_text() needs an AST node, got {type(node).__name__}")


def quote(value: str) -> str:
    r"""Single-quote a string constant, escaping what the lexer would misread.

    Backslash, quote, ``\n``, ``\t`` and ``\r`` get their short escapes; any
    other character that is not printable (controls, line separators) gets a
    ``\x``/``\u``/``\U`` escape, so the printed query stays on its lines.
    """
    out = []
    for char in value:
        if char in _NAMED_ESCAPES:
            out.append(_NAMED_ESCAPES[char])
        elif char.isprintable():
            out.append(char)
        elif ord(char) <= 0xFF:
            out.append(f"\\x{ord(char):02x}")
        elif ord(char) <= 0xFFFF:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    return "'" + "".join(out) + "'"


# ---------------------------------------------------------------- query


def _query(query: Query) -> str:
    lines = [
        f"{query.name}: RETURN " + ", ".join(_return_item(item) for item in query.returns),
        "PATTERN " + _pattern(query.pattern),
    ]
    if query.where:
        lines.append("WHERE " + " AND ".join(_condition(c) for c in query.where))
    if query.group_by:
        lines.append("GROUP-BY " + ", ".join(attr.text for attr in query.group_by))
    window = "WITHIN " + _duration(query.within)
    if query.slide is not None:
        window += " SLIDE " + _duration(query.slide)
    lines.append(window + ";")
    return "\n".join(lines)


def _return_item(item: ReturnItem) -> str:
    text = item.expr.text
    return text if item.alias is None else f"{text} AS {item.alias}"


def _duration(duration: Duration) -> str:
    return f"{_decimal(duration.value)} {duration.unit}"


def _decimal(value: int | Fraction) -> str:
    """Exact decimal text of an integer or a Fraction whose denominator is 2^a * 5^b."""
    fraction = Fraction(value)
    sign = "-" if fraction < 0 else ""
    numerator, denominator = abs(fraction.numerator), fraction.denominator
    if denominator == 1:
        return f"{sign}{numerator}"
    places, rest = 0, denominator
    for prime in (2, 5):
        count = 0
        while rest % prime == 0:
            rest //= prime
            count += 1
        places = max(places, count)
    if rest != 1:
        raise ValueError(f"duration {value} has no finite decimal spelling")
    digits = str(numerator * 10**places // denominator).rjust(places + 1, "0")
    whole, frac = digits[:-places], digits[-places:].rstrip("0")
    return f"{sign}{whole}.{frac}"


# ---------------------------------------------------------------- pattern


def _pattern(pattern: EventPattern | Plus | Seq | Not) -> str:
    if isinstance(pattern, EventPattern):
        return pattern.type if pattern.var == pattern.type else f"{pattern.type} {pattern.var}"
    if isinstance(pattern, Plus):
        # `(SEQ(A+, B))+` as in the papers; `SEQ(A+, B)+` would parse the same.
        inner = _pattern(pattern.inner)
        return f"({inner})+" if isinstance(pattern.inner, Not | Seq) else f"{inner}+"
    if isinstance(pattern, Not):
        return "NOT " + _pattern(pattern.inner)
    return "SEQ(" + ", ".join(_pattern(item) for item in pattern.items) + ")"


# ---------------------------------------------------------------- conditions


def _condition(condition: Equivalence | Comparison | Or | And) -> str:
    """A WHERE item: a boolean combination is written in parentheses there."""
    if isinstance(condition, Equivalence):
        return "[" + ", ".join(attr.text for attr in condition.attrs) + "]"
    if isinstance(condition, Comparison):
        return _bool(condition)
    return f"({_bool(condition)})"


def _bool(node: Comparison | Or | And) -> str:
    """AND binds tighter than OR; an item of the same kind keeps its parentheses."""
    if isinstance(node, Comparison):
        return f"{_expr(node.left)} {node.op} {_expr(node.right)}"
    if len(node.items) == 1:
        return _bool(node.items[0])
    if isinstance(node, Or):
        parts = [f"({_bool(i)})" if isinstance(i, Or) else _bool(i) for i in node.items]
        return " OR ".join(parts)
    parts = [f"({_bool(i)})" if isinstance(i, Or | And) else _bool(i) for i in node.items]
    return " AND ".join(parts)


def _expr(expr: Number | String | Attr | BinOp | Negate) -> str:
    if isinstance(expr, Number):
        return _number(expr.value)
    if isinstance(expr, String):
        return quote(expr.value)
    if isinstance(expr, Attr):
        return f"NEXT({expr.var}).{expr.name}" if expr.next else f"{expr.var}.{expr.name}"
    if isinstance(expr, Negate):
        # `-5` would read back as the literal -5 and `--` starts a comment.
        inner = _expr(expr.operand)
        return f"-{inner}" if isinstance(expr.operand, Attr | String) else f"-({inner})"
    precedence = _PRECEDENCE[expr.op]
    left, right = _expr(expr.left), _expr(expr.right)
    if isinstance(expr.left, BinOp) and _PRECEDENCE[expr.left.op] < precedence:
        left = f"({left})"
    if isinstance(expr.right, BinOp) and _PRECEDENCE[expr.right.op] <= precedence:
        right = f"({right})"
    return f"{left} {expr.op} {right}"


def _number(value: int | float) -> str:
    if isinstance(value, int):
        return str(value)
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"number {value} has no spelling in the query language")
    return repr(value)
