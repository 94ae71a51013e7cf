"""Query text -> AST: the lark grammar, the tree-to-AST transformer, readable errors.

The grammar (``grammar.lark``) is parsed by lark's LALR(1) parser with the
contextual lexer: it is fast, and every syntax error is found at the first
token that cannot continue a query, which is what the person reading the
message needs. Lark's exceptions never leave this module: they become
:class:`~trendagg.errors.QuerySyntaxError` with a sentence saying what was
expected, ``Line L, Col C.`` and the underlined source line.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import lru_cache
from importlib import resources
from typing import Any

from lark import Lark, Token, Transformer, Tree, v_args
from lark.exceptions import (
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
    VisitError,
)
from lark.lexer import PatternStr
from lark.tree import Meta

from trendagg.errors import QueryError, QuerySyntaxError, TrendAggError, locate, wrong_argument
from trendagg.language.ast import (
    Aggregate,
    And,
    Attr,
    BinOp,
    Comparison,
    Condition,
    Duration,
    Equivalence,
    EventPattern,
    Negate,
    Not,
    Number,
    Or,
    PartAttr,
    Pattern,
    Plus,
    Query,
    ReturnItem,
    Seq,
    Span,
    String,
    Workload,
)

__all__ = ["UNIT_NAMES", "parse", "parse_query"]

#: Every accepted spelling of a duration unit (lower case) -> the canonical unit.
UNIT_NAMES: dict[str, str] = {
    "ms": "ms",
    "s": "s",
    "sec": "s",
    "second": "s",
    "seconds": "s",
    "min": "min",
    "minute": "min",
    "minutes": "min",
    "h": "h",
    "hour": "h",
    "hours": "h",
    "day": "day",
    "days": "day",
}


def parse(text: str, *, validate: bool = True) -> Workload:
    """Parse every query of ``text`` into a :class:`Workload`.

    Parameters
    ----------
    text
        One or more queries, separated by ``;`` or simply written one after
        the other. ``--`` starts a comment.
    validate
        Also run :func:`trendagg.language.validate.validate`, so that a query
        that parses but means nothing valid (unknown variable, misplaced NOT...)
        is refused here, pointing at its text. Turn off only to inspect or
        print queries that are known to be incomplete.

    Returns
    -------
    Workload
        The queries in file order; an unnamed query is named ``q<N>`` after its
        1-based position. Every node carries its :class:`Span`.

    Raises
    ------
    QuerySyntaxError
        The text does not follow the grammar, or holds no query.
    QueryError
        An unknown duration unit, a number too large to represent, or (with
        ``validate``) any error found by ``validate``.
    """
    _check_nesting(text)
    try:
        tree = _lark().parse(text)
    except UnexpectedInput as exc:
        raise QuerySyntaxError(_syntax_message(text, exc)) from None
    _check_arithmetic(text, tree)
    try:
        queries: list[Query] = _ToAst(text).transform(tree)
    except VisitError as exc:
        if isinstance(exc.orig_exc, TrendAggError):
            raise exc.orig_exc from None
        raise
    if not queries:
        end = _end_position(text)
        raise QuerySyntaxError(
            "no query in the text; a query reads "
            "'[name:] RETURN ... PATTERN ... WITHIN <duration>'. " + locate(text, end[0], end[1])
        )
    named = tuple(
        query if query.name else replace(query, name=f"q{position}")
        for position, query in enumerate(queries, start=1)
    )
    workload = Workload(queries=named, source=text)
    if validate:
        from trendagg.language.validate import validate as check

        check(workload, text)
    return workload


def workload_of(queries: object, argument: str = "queries") -> Workload:
    """The workload of an API call's ``queries``: query text is parsed (and validated), a
    Workload is taken as it is; anything else is an ArgumentError naming ``argument``."""
    if isinstance(queries, str):
        return parse(queries)
    if isinstance(queries, Workload):
        return queries
    raise wrong_argument(
        argument, queries, "query text (a str) or a Workload (from trendagg.parse(text))"
    )


#: The deepest nesting of parentheses (SEQ, groups under +, NOT, arithmetic) a query may
#: have: every stage after the parser walks the tree recursively, and a person writes
#: far less than this.
MAX_NESTING = 50
_NESTING_TOKENS = re.compile(r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|--[^\n]*|[()]""")


def _check_nesting(text: str) -> None:
    """Refuse text nested deeper than :data:`MAX_NESTING` parentheses (strings and
    comments aside), pointing at the first parenthesis too deep."""
    depth = 0
    for match in _NESTING_TOKENS.finditer(text):
        token = match.group()
        if token == "(":
            depth += 1
            if depth > MAX_NESTING:
                line = text.count("\n", 0, match.start()) + 1
                column = match.start() - (text.rfind("\n", 0, match.start()) + 1) + 1
                raise QueryError(
                    f"nested deeper than {MAX_NESTING} parentheses (SEQ, +, NOT or arithmetic); "
                    f"trendagg takes at most {MAX_NESTING}: write the pattern flatter. "
                    + locate(text, line, column)
                )
        elif token == ")":
            depth = max(depth - 1, 0)


#: The most operations an arithmetic expression may nest (``A.x + 1 + 1`` nests two; so does
#: ``-(A.x * 2)``): every stage after the parser, the lark tree's transformer too, walks an
#: expression recursively, and a chain of terms nests as deep as it is long.
MAX_ARITHMETIC = 100
_ARITHMETIC = frozenset({"binop", "negate"})


def _check_arithmetic(text: str, tree: Tree[Token]) -> None:
    """Refuse an arithmetic expression that nests more than :data:`MAX_ARITHMETIC`
    operations, pointing at the first operator beyond (the parse tree is walked with a
    stack of its own: this check must not recurse either)."""
    depth: dict[int, int] = {}  # id of an arithmetic node -> operations nested in it
    stack: list[tuple[Tree[Token], bool]] = [(tree, False)]
    while stack:
        node, done = stack.pop()
        if not done:
            stack.append((node, True))
            children = [child for child in node.children if isinstance(child, Tree)]
            stack.extend((child, False) for child in reversed(children))  # (in text order)
            continue
        if node.data not in _ARITHMETIC:
            continue
        nested = 1 + max((depth.get(id(c), 0) for c in node.children), default=0)
        depth[id(node)] = nested
        if nested > MAX_ARITHMETIC:
            operator: Tree[Token] | Token = node
            if node.data == "binop":  # (the operator's rule holds its token)
                rule = node.children[1]
                operator = rule.children[0] if isinstance(rule, Tree) else rule
            line, column = _tree_position(operator)
            raise QueryError(
                f"an arithmetic expression nests more than {MAX_ARITHMETIC} operations (each "
                f"+ - * / % or sign of a chain nests one more); trendagg takes at most "
                f"{MAX_ARITHMETIC}: split the condition, or precompute a column. "
                + locate(text, line, column)
            )


def _tree_position(node: Tree[Token] | Token) -> tuple[int, int]:
    """Line and column where a parse-tree node (or token) starts."""
    if isinstance(node, Token):
        return node.line or 1, node.column or 1
    return node.meta.line, node.meta.column


def parse_query(text: str) -> Query:
    """Parse and validate text that holds exactly one query.

    Raises
    ------
    QuerySyntaxError
        The text does not parse, or holds more than one query (the message
        points at the second one).
    QueryError
        The query is not valid (see :func:`parse`).
    """
    workload = parse(text)
    if len(workload.queries) != 1:
        second = workload.queries[1].span
        where = locate(text, second.line, second.column, 1) if second else ""
        raise QuerySyntaxError(
            f"expected exactly one query, found {len(workload.queries)}. {where}".rstrip()
        )
    return workload.queries[0]


# ---------------------------------------------------------------- the lark parser


@lru_cache(maxsize=1)
def _lark() -> Lark:
    """Build the parser once, on first use (nothing is done at import time)."""
    grammar = resources.files("trendagg.language").joinpath("grammar.lark").read_text("ascii")
    return Lark(
        grammar,
        parser="lalr",
        lexer="contextual",
        propagate_positions=True,
        maybe_placeholders=True,
    )


# ---------------------------------------------------------------- tree -> AST


def _meta_span(meta: Meta) -> Span | None:
    if meta.empty:
        return None
    return Span(meta.line, meta.column, max(1, meta.end_pos - meta.start_pos))


def _token_span(token: Token) -> Span:
    return Span(token.line or 1, token.column or 1, max(1, len(token)))


@dataclass(frozen=True)
class _RawDuration:
    """A duration before its unit is checked: the check needs the clause name."""

    value: int | Fraction
    unit: Token
    span: Span | None


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0"}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}


def _unescape(body: str) -> str:
    r"""Decode the backslash escapes of a quoted string's body.

    ``\n \t \r \0``, ``\xHH``, ``\uHHHH`` and ``\UHHHHHHHH`` stand for those
    characters; a backslash before any other character keeps that character
    (``\'``, ``\"``, ``\\``). Decoded by hand: user text is never evaluated.
    """
    out: list[str] = []
    i = 0
    while i < len(body):
        char = body[i]
        if char != "\\" or i + 1 == len(body):
            out.append(char)
            i += 1
            continue
        code = body[i + 1]
        width = _HEX_ESCAPES.get(code)
        digits = body[i + 2 : i + 2 + width] if width else ""
        if width and len(digits) == width and re.fullmatch(r"[0-9A-Fa-f]+", digits):
            value = int(digits, 16)
            out.append(chr(value) if value <= 0x10FFFF else digits)
            i += 2 + width
        else:
            out.append(_ESCAPES.get(code, code))
            i += 2
    return "".join(out)


def _number_value(token: Token) -> int | float:
    """An integer literal as ``int``; a decimal or exponent form as ``float``."""
    text = str(token)
    return int(text) if text.isdigit() else float(text)


@v_args(meta=True)
class _ToAst(Transformer[Token, Any]):
    """Turn the lark tree into AST nodes, attaching a :class:`Span` to each."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    # ---------------------------------------------------------- queries

    def start(self, meta: Meta, children: list[Query]) -> list[Query]:
        return list(children)

    def query(self, meta: Meta, children: list[Any]) -> Query:
        name, returns, pattern, where, group_by, within, slide = children
        return Query(
            name=str(name) if name is not None else "",
            returns=returns,
            pattern=pattern,
            where=where if where is not None else (),
            group_by=group_by if group_by is not None else (),
            within=self._duration(within, "WITHIN"),
            slide=self._duration(slide, "SLIDE") if slide is not None else None,
            span=_meta_span(meta),
        )

    def slide(self, meta: Meta, children: list[_RawDuration]) -> _RawDuration:
        return children[0]

    def duration(self, meta: Meta, children: list[Token]) -> _RawDuration:
        number, unit = children
        return _RawDuration(_duration_value(number), unit, _meta_span(meta))

    def negative_duration(self, meta: Meta, children: list[Token]) -> _RawDuration:
        number, unit = children
        return _RawDuration(-_duration_value(number), unit, _meta_span(meta))

    def _duration(self, raw: _RawDuration, clause: str) -> Duration:
        unit = UNIT_NAMES.get(str(raw.unit).lower())
        if unit is None:
            span = _token_span(raw.unit)
            raise QueryError(
                f"unknown duration unit '{raw.unit}' in {clause}. "
                + locate(self.text, span.line, span.column, span.length)
                + "\nvalid units: "
                + ", ".join(UNIT_NAMES)
            )
        return Duration(raw.value, unit, span=raw.span)

    # ---------------------------------------------------------- RETURN

    def return_items(self, meta: Meta, children: list[ReturnItem]) -> tuple[ReturnItem, ...]:
        return tuple(children)

    def return_item(self, meta: Meta, children: list[Any]) -> ReturnItem:
        expr, alias = children
        return ReturnItem(expr, str(alias) if alias is not None else None, span=_meta_span(meta))

    def aggregate(self, meta: Meta, children: list[Any]) -> Aggregate:
        func, (var, attr) = children
        return Aggregate(func, var, attr, span=_meta_span(meta))

    def agg_func(self, meta: Meta, children: list[Token]) -> str:
        return str(children[0]).upper()

    def agg_star(self, meta: Meta, children: list[Token]) -> tuple[None, None]:
        return (None, None)

    def agg_var(self, meta: Meta, children: list[Token]) -> tuple[str, None]:
        return (str(children[0]), None)

    def agg_attr(self, meta: Meta, children: list[Token]) -> tuple[str, str]:
        return (str(children[0]), str(children[1]))

    def part_plain(self, meta: Meta, children: list[Token]) -> PartAttr:
        return PartAttr(str(children[0]), None, span=_meta_span(meta))

    def part_qualified(self, meta: Meta, children: list[Token]) -> PartAttr:
        var, name = children
        return PartAttr(str(name), str(var), span=_meta_span(meta))

    # ---------------------------------------------------------- PATTERN

    def event(self, meta: Meta, children: list[Token | None]) -> EventPattern:
        type_, var = children
        assert type_ is not None
        return EventPattern(
            str(type_), str(var) if var is not None else str(type_), span=_meta_span(meta)
        )

    def plus(self, meta: Meta, children: list[Pattern]) -> Plus:
        return Plus(children[0], span=_meta_span(meta))

    def seq(self, meta: Meta, children: list[Pattern]) -> Seq:
        return Seq(tuple(children), span=_meta_span(meta))

    def not_pattern(self, meta: Meta, children: list[Pattern]) -> Not:
        return Not(children[0], span=_meta_span(meta))

    # ---------------------------------------------------------- WHERE

    def where(self, meta: Meta, children: list[Condition]) -> tuple[Condition, ...]:
        return tuple(children)

    def group_by(self, meta: Meta, children: list[PartAttr]) -> tuple[PartAttr, ...]:
        return tuple(children)

    def equivalence(self, meta: Meta, children: list[PartAttr]) -> Equivalence:
        return Equivalence(tuple(children), span=_meta_span(meta))

    def or_expr(self, meta: Meta, children: list[Any]) -> Or:
        return Or(tuple(children), span=_meta_span(meta))

    def and_expr(self, meta: Meta, children: list[Any]) -> And:
        return And(tuple(children), span=_meta_span(meta))

    def comparison(self, meta: Meta, children: list[Any]) -> Comparison:
        left, op, right = children
        return Comparison("!=" if op == "<>" else op, left, right, span=_meta_span(meta))

    def comp_op(self, meta: Meta, children: list[Token]) -> str:
        return str(children[0])

    add_op = comp_op
    mul_op = comp_op

    def binop(self, meta: Meta, children: list[Any]) -> BinOp:
        left, op, right = children
        return BinOp(op, left, right, span=_meta_span(meta))

    def number(self, meta: Meta, children: list[Token]) -> Number:
        return Number(self._finite(children[0]), span=_meta_span(meta))

    def negative_number(self, meta: Meta, children: list[Token]) -> Number:
        return Number(-self._finite(children[0]), span=_meta_span(meta))

    def _finite(self, token: Token) -> int | float:
        value = _number_value(token)
        if isinstance(value, float) and math.isinf(value):
            span = _token_span(token)
            raise QueryError(
                f"number {token} is too large in WHERE. "
                + locate(self.text, span.line, span.column, span.length)
                + "\nfloating-point numbers must stay below about 1.8e308"
            )
        return value

    def negate(self, meta: Meta, children: list[Any]) -> Negate:
        return Negate(children[0], span=_meta_span(meta))

    def attr(self, meta: Meta, children: list[Token]) -> Attr:
        var, name = children
        return Attr(str(var), str(name), False, span=_meta_span(meta))

    def next_attr(self, meta: Meta, children: list[Token]) -> Attr:
        var, name = children
        return Attr(str(var), str(name), True, span=_meta_span(meta))

    def string(self, meta: Meta, children: list[Token]) -> String:
        return String(_unescape(str(children[0])[1:-1]), span=_meta_span(meta))

    def bare_word(self, meta: Meta, children: list[Token]) -> String:
        return String(str(children[0]), span=_meta_span(meta))


def _duration_value(token: Token) -> int | Fraction:
    """An integer as ``int``; a decimal or exponent form as the exact ``Fraction``."""
    text = str(token)
    return int(text) if text.isdigit() else Fraction(text)


# ---------------------------------------------------------------- syntax errors

_WORD_TERMINALS = {
    "NAME": "a name",
    "NUMBER": "a number",
    "STRING": "a quoted string",
    "_GROUP_BY": "GROUP-BY",
    "_SEMI": "';'",
    "$END": "the end of the text",
}
_COMPARISON_OPS = frozenset({"=", "!=", "<>", "<", "<=", ">", ">="})
_ARITHMETIC_OPS = frozenset({"+", "-", "*", "/", "%"})
_CLAUSE_RE = re.compile(
    r"(?<![A-Za-z0-9_])(RETURN|PATTERN|WHERE|GROUP\s*-?\s*BY|WITHIN|SLIDE|;)(?![A-Za-z0-9_])",
    re.IGNORECASE,
)
_WORD_BEFORE_RE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*$")
_KEYWORDS = frozenset(
    {"RETURN", "PATTERN", "WHERE", "WITHIN", "SLIDE", "SEQ", "NOT", "NEXT", "AND", "OR", "AS"}
    | {"COUNT", "SUM", "MIN", "MAX", "AVG"}
)
_MASK_RE = re.compile(r"--[^\n]*|'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"")


def _describe_terminal(name: str) -> tuple[int, str]:
    """A terminal as the person writing a query knows it, with a sort rank."""
    if name in _WORD_TERMINALS:
        rank = {"$END": 3, "_SEMI": 2, "_GROUP_BY": 1}.get(name, 0)
        return (rank, _WORD_TERMINALS[name])
    try:
        pattern = _lark().get_terminal(name).pattern
    except KeyError:
        return (2, name)
    if isinstance(pattern, PatternStr):
        value = pattern.value
        if value.isalpha():
            return (1, value.upper())
        return (2, f"'{value}'")
    return (2, name)


def _expected_phrase(names: set[str] | frozenset[str] | None) -> str:
    """Render a set of acceptable terminals as 'a, b or c', grouping operators."""
    described = sorted({_describe_terminal(name) for name in names or ()})
    texts = [text for _, text in described]
    ops = {text.strip("'") for text in texts}
    if ops >= _COMPARISON_OPS:
        texts = [t for t in texts if t.strip("'") not in _COMPARISON_OPS]
        texts.append("a comparison operator (= != <> < <= > >=)")
    if ops >= _ARITHMETIC_OPS:
        texts = [t for t in texts if t.strip("'") not in _ARITHMETIC_OPS]
        texts.append("an arithmetic operator (+ - * / %)")
    if not texts:
        return "nothing more"
    if len(texts) == 1:
        return texts[0]
    return ", ".join(texts[:-1]) + " or " + texts[-1]


def _clause_at(text: str, pos: int) -> str:
    """Name the clause being written at ``pos``: the last clause keyword before it."""
    masked = _MASK_RE.sub(lambda m: " " * len(m.group()), text[:pos])
    last = None
    for match in _CLAUSE_RE.finditer(masked):
        last = match.group(1)
    if last is None or last == ";":
        return "the query header"
    word = last.upper()
    return "GROUP-BY" if word.startswith("GROUP") else word


def _end_position(text: str) -> tuple[int, int]:
    """Line and column just after the last character of ``text``."""
    lines = text.split("\n")
    return len(lines), len(lines[-1]) + 1


def _acceptable(exc: UnexpectedInput) -> set[str]:
    """The terminals that really continue the text at the error.

    LALR merges states, so the expected set of the failing state may hold
    tokens that only fit elsewhere (OR at the top level of WHERE); replaying
    each candidate on a copy of the parser keeps those that are accepted.
    """
    fallback = set(
        (exc.allowed if isinstance(exc, UnexpectedCharacters) else getattr(exc, "expected", None))
        or ()
    )
    interactive = getattr(exc, "interactive_parser", None)
    if interactive is None:
        return fallback
    try:
        accepted: set[str] = set(interactive.accepts())
    except UnexpectedInput:  # pragma: no cover - accepts() only probes
        return fallback
    return accepted or fallback


def _read_as_word(text: str, start: int, word: str) -> bool:
    """Whether the keyword ``word`` at ``start`` was lexed as a plain name.

    The contextual lexer reads a keyword as a name where no keyword fits, so
    ``A.x < WITHIN 1 min`` compares A.x with the string 'WITHIN' and fails one
    token later; saying so points at the real mistake.
    """
    if word.upper() not in _KEYWORDS:
        return False
    try:
        probe = _lark().parse_interactive(text[:start])
        probe.exhaust_lexer()
        accepted: set[str] = probe.accepts()  # type: ignore[no-untyped-call]
    except UnexpectedInput:
        return False
    return word.upper() not in accepted and "NAME" in accepted


def _syntax_message(text: str, exc: UnexpectedInput) -> str:
    """Turn a lark exception into '<what> in <clause>; expected <...>. Line L, Col C. ...'."""
    if isinstance(exc, UnexpectedToken) and exc.token.type != "$END":
        token = exc.token
        pos = token.start_pos or 0
        line, column, length = token.line or 1, token.column or 1, max(1, len(token))
        what = repr(str(token))
        expected = _acceptable(exc)
    elif isinstance(exc, UnexpectedToken | UnexpectedEOF):
        pos = len(text)
        last = exc.token if isinstance(exc, UnexpectedToken) else None
        if last is not None and last.end_line is not None and last.end_column is not None:
            line, column = last.end_line, last.end_column  # just after the last token
        else:
            line, column = _end_position(text.rstrip())
        length = 1
        what = "end of text"
        expected = _acceptable(exc)
    elif isinstance(exc, UnexpectedCharacters):
        pos = exc.pos_in_stream
        line, column, length = exc.line, exc.column, 1
        what = f"character {exc.char!r}"
        expected = _acceptable(exc)
    else:  # pragma: no cover - lark raises only the three kinds above
        return f"syntax error: {exc}"
    clause = _clause_at(text, pos)
    wanted = _expected_phrase(expected)
    if clause in ("WITHIN", "SLIDE") and set(expected) == {"NAME"}:
        wanted = "a duration unit (ms, s, min, h, day)"
    message = f"unexpected {what} in {clause}; expected {wanted}. " + locate(
        text, line, column, length
    )
    if what.upper() == "'OR'" and clause == "WHERE":
        message += "\nOR is written inside parentheses: WHERE (A.x < 1 OR A.y > 2)"
    elif isinstance(exc, UnexpectedCharacters) and exc.char in "'\"":
        message += f"\nunterminated string: close it with {exc.char} on the same line"
    elif isinstance(exc, UnexpectedCharacters) and not exc.char.isascii():
        message += (
            "\nnames (types, variables, attributes) are ASCII letters, digits and '_'; "
            "text with other letters goes in quotes as a string: WHERE A.city = 'Zürich'"
        )
    elif what == "end of text" and "WITHIN" in {_describe_terminal(n)[1] for n in expected}:
        message += "\nevery query ends with 'WITHIN <duration>', e.g. WITHIN 10 min"
    else:
        previous = _WORD_BEFORE_RE.search(_MASK_RE.sub(lambda m: " " * len(m.group()), text[:pos]))
        if previous and _read_as_word(text, previous.start(1), previous.group(1)):
            message += (
                f"\n'{previous.group(1)}' stands where a value or name belongs, so it was read "
                "as a plain word: is something missing before it?"
            )
    return message
