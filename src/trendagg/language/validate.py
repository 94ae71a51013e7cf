"""Refuse queries that parse but mean nothing valid, pointing at their text.

Every rule here comes from docs/semantics.md and docs/language.md; each error is a
:class:`~trendagg.errors.QueryError` whose message reads
``<what is wrong> in <clause>. Line L, Col C.``, then the source line with the
culprit underlined, then (where it helps) one line saying how to fix it.
The first error found is raised; the checks run query by query, and inside a
query clause by clause (PATTERN first, since it defines the variables, then
RETURN, WHERE, GROUP-BY, WITHIN, SLIDE), in text order:

- workload: two queries with the same name;
- PATTERN: an event type used twice; a variable bound twice; NOT anywhere but
  as a SEQ item (``NOT directly under '+'`` has its own message); a SEQ with
  no positive item; two NOTs in a row; a leading or trailing NOT in a SEQ
  that is not the outermost pattern;
- RETURN: SUM/MIN/MAX/AVG without an attribute; COUNT with one; an aggregate
  over an unknown or a negated variable; an attribute that is not a GROUP-BY
  attribute (compared by text); two output columns with one name;
- WHERE: an unknown variable (comparisons and equivalence lists); a string
  constant in arithmetic; a comparison naming no variable; a condition mixing
  a negated variable with a positive one, or variables of two different
  negative sub-patterns; an edge predicate with more than one NEXT variable
  or more than one plain variable; an edge predicate over two variables that
  are never adjacent, or a NEXT(W) that never follows any event; two
  different variables compared without NEXT;
- WHERE and GROUP-BY: a partition attribute qualified with a negated variable;
- WITHIN and SLIDE: an unknown unit (for hand-built ASTs: the parser already
  refuses it), a duration that is not positive or not shorter than 2**43 s,
  and more than a million windows per event (WITHIN / SLIDE; see
  :mod:`trendagg.limits`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from fractions import Fraction

from trendagg.errors import QueryError, locate
from trendagg.language.analysis import (
    adjacent_pairs,
    attributes,
    comparisons,
    condition_variables,
    negation_scopes,
)
from trendagg.language.ast import (
    AGGREGATE_FUNCTIONS,
    UNIT_SECONDS,
    Aggregate,
    And,
    Attr,
    BinOp,
    Comparison,
    Condition,
    Duration,
    Equivalence,
    EventPattern,
    Expr,
    Negate,
    Not,
    Or,
    PartAttr,
    Pattern,
    Plus,
    Query,
    Seq,
    Span,
    String,
    Workload,
)
from trendagg.language.printer import quote
from trendagg.limits import TIME_LIMIT, WINDOWS_PER_EVENT_LIMIT

__all__ = ["validate"]

_UNITS_HELP = (
    "valid units: ms, s, sec, second, seconds, min, minute, minutes, h, hour, hours, day, days"
)


def validate(workload: Workload | Query, source_text: str | None = None) -> None:
    """Check a parsed workload (or one query) against the rules of docs/language.md.

    Parameters
    ----------
    workload
        What :func:`trendagg.language.parse` returned (with ``validate=False``),
        or an AST built by hand.
    source_text
        The text the spans refer to; defaults to ``workload.source``. Without
        text (or without spans) the messages carry no location.

    Raises
    ------
    QueryError
        On the first rule broken. The checks are listed in the module
        docstring; each has a test in ``tests/language/test_language_errors.py``.
    """
    if isinstance(workload, Query):
        queries: tuple[Query, ...] = (workload,)
        text = source_text or ""
    else:
        queries = workload.queries
        text = source_text if source_text is not None else workload.source
    source = _Source(text)
    seen: set[str] = set()
    for query in queries:
        if query.name in seen:
            span = source.name_span(query.span, query.name)
            if span is not None and span == query.span:  # an unnamed query: point at RETURN
                span = Span(span.line, span.column, len("RETURN"))
            raise source.error(
                f"query name '{query.name}' used twice",
                None,
                span,
                "give every query of a file its own name",
            )
        seen.add(query.name)
        _QueryChecker(query, source).run()


class _Source:
    """The query text, with conversions between spans and offsets for messages."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def error(self, what: str, clause: str | None, span: Span | None, fix: str = "") -> QueryError:
        message = f"{what} in {clause}." if clause else f"{what}."
        if span is not None and self.text:
            message += " " + locate(self.text, span.line, span.column, span.length)
        if fix:
            message += "\n" + fix
        return QueryError(message)

    def name_span(self, span: Span | None, name: str, after: str = "") -> Span | None:
        """The span of the first word ``name`` inside ``span`` (after regex ``after``).

        Nodes carry one span; messages about a variable underline just the
        variable, so it is found again in the text. Falls back to ``span``.
        """
        if span is None or not self.text or not 0 < span.line <= len(self.line_starts):
            return span
        start = self.line_starts[span.line - 1] + span.column - 1
        segment = self.text[start : start + span.length]
        word = rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])"
        match = re.search(after + f"({word})", segment)
        if match is None:
            return span
        offset = start + match.start(1)
        line = next(
            i for i in range(len(self.line_starts), 0, -1) if self.line_starts[i - 1] <= offset
        )
        return Span(line, offset - self.line_starts[line - 1] + 1, len(name))


class _QueryChecker:
    """The checks of one query; ``run`` raises on the first error."""

    def __init__(self, query: Query, source: _Source) -> None:
        self.query = query
        self.source = source
        self.scopes = negation_scopes(query.pattern)
        self.positives = [var for var, scope in self.scopes.items() if scope == 0]

    def run(self) -> None:
        self.check_pattern()
        self.check_return()
        for condition in self.query.where:
            self.check_condition(condition)
        for attr in self.query.group_by:
            self.check_partition_attr(attr, "GROUP-BY")
        self.check_duration(self.query.within, "WITHIN")
        if self.query.slide is not None:
            self.check_duration(self.query.slide, "SLIDE")
            self.check_windows_per_event(self.query.within, self.query.slide)

    def error(self, what: str, clause: str | None, span: Span | None, fix: str = "") -> QueryError:
        if span is None or not self.source.text:
            clause = f"{clause} of query '{self.query.name}'"
        return self.source.error(what, clause, span, fix)

    # ---------------------------------------------------------- PATTERN

    def check_pattern(self) -> None:
        types: set[str] = set()
        variables: set[str] = set()

        def visit(node: Pattern, parent: Pattern | None) -> None:
            if isinstance(node, EventPattern):
                if node.type in types:
                    raise self.error(
                        f"event type '{node.type}' used twice",
                        "PATTERN",
                        self.source.name_span(node.span, node.type),
                        f"a type appears at most once per pattern; repeat it with {node.type}+",
                    )
                if node.var in variables:
                    raise self.error(
                        f"duplicate variable '{node.var}'",
                        "PATTERN",
                        self._var_in_event(node),
                        "give each event of the pattern its own variable: Type Var",
                    )
                types.add(node.type)
                variables.add(node.var)
                return
            if isinstance(node, Not):
                self._check_not_parent(node, parent)
                visit(node.inner, node)
            elif isinstance(node, Plus):
                visit(node.inner, node)
            else:
                self._check_seq(node, outermost=parent is None)
                for item in node.items:
                    visit(item, node)

        visit(self.query.pattern, None)

    def _var_in_event(self, node: EventPattern) -> Span | None:
        if node.var == node.type:
            return self.source.name_span(node.span, node.var)
        return self.source.name_span(node.span, node.var, after=rf"{re.escape(node.type)}\s+")

    def _check_not_parent(self, node: Not, parent: Pattern | None) -> None:
        if isinstance(parent, Seq):
            return
        if isinstance(parent, Plus):
            raise self.error(
                "NOT directly under '+'",
                "PATTERN",
                node.span,
                "a negation cannot repeat; put it inside a SEQ under the +, "
                "e.g. (SEQ(A, NOT N, B))+",
            )
        raise self.error(
            "NOT outside a SEQ",
            "PATTERN",
            node.span,
            "NOT may only be an item of a SEQ that also has a positive item, e.g. SEQ(A, NOT N, B)",
        )

    def _check_seq(self, node: Seq, outermost: bool) -> None:
        if all(isinstance(item, Not) for item in node.items):
            raise self.error(
                "SEQ with no positive item",
                "PATTERN",
                node.span,
                "a SEQ needs at least one item that is not negated",
            )
        for before, item in zip(node.items, node.items[1:], strict=False):
            if isinstance(before, Not) and isinstance(item, Not):
                raise self.error(
                    "two NOTs in a row",
                    "PATTERN",
                    item.span,
                    "merge them into one NOT, or put a positive item between them",
                )
        if outermost:
            return
        for item, where in ((node.items[0], "start"), (node.items[-1], "end")):
            if isinstance(item, Not):
                raise self.error(
                    f"NOT at the {where} of a nested SEQ",
                    "PATTERN",
                    item.span,
                    "a leading or trailing NOT is only allowed in the outermost SEQ, "
                    "whose window bounds it; put positive items around this NOT",
                )

    # ---------------------------------------------------------- RETURN

    def check_return(self) -> None:
        group_by = {attr.text for attr in self.query.group_by}
        names: set[str] = set()
        for item in self.query.returns:
            if isinstance(item.expr, Aggregate):
                self._check_aggregate(item.expr)
            else:
                attr = item.expr
                self._check_known(attr.var, "RETURN", self._part_var_span(attr))
                if attr.text not in group_by:
                    raise self.error(
                        f"attribute '{attr.text}' is not a GROUP-BY attribute",
                        "RETURN",
                        attr.span,
                        "RETURN lists aggregates and GROUP-BY attributes; "
                        f"add {attr.text} to GROUP-BY or aggregate it",
                    )
            if item.name in names:
                raise self.error(
                    f"duplicate output column '{item.name}'",
                    "RETURN",
                    item.span,
                    "name one of the columns with AS",
                )
            names.add(item.name)

    def _check_aggregate(self, agg: Aggregate) -> None:
        if agg.func not in AGGREGATE_FUNCTIONS:
            raise self.error(
                f"unknown aggregate '{agg.func}'",
                "RETURN",
                agg.span,
                "aggregates are " + ", ".join(AGGREGATE_FUNCTIONS),
            )
        example = agg.var or (self.positives[0] if self.positives else "V")
        if agg.func != "COUNT" and agg.attr is None:
            raise self.error(
                f"{agg.func} without an attribute",
                "RETURN",
                agg.span,
                f"{agg.func} reads an attribute: write {agg.func}({example}.attr)",
            )
        if agg.func == "COUNT" and agg.attr is not None:
            raise self.error(
                "COUNT with an attribute",
                "RETURN",
                agg.span,
                f"write COUNT(*) to count trends or COUNT({example}) to count {example} events",
            )
        if agg.var is None:
            return
        span = self.source.name_span(agg.span, agg.var, after=r"\(\s*")
        self._check_known(agg.var, "RETURN", span)
        if self.scopes[agg.var]:
            raise self.error(
                f"aggregate over negated variable '{agg.var}'",
                "RETURN",
                span,
                "negated events are never part of a trend; aggregate a positive variable ("
                + ", ".join(self.positives)
                + ")",
            )

    # ---------------------------------------------------------- WHERE

    def check_condition(self, condition: Condition) -> None:
        if isinstance(condition, Equivalence):
            for part in condition.attrs:
                self.check_partition_attr(part, "WHERE")
            return
        for attr in attributes(condition):
            self._check_known(attr.var, "WHERE", self._attr_var_span(attr))
        self._check_no_string_arithmetic(condition)
        for comparison in comparisons(condition):
            plain, following = condition_variables(comparison)
            if not plain and not following:
                raise self.error(
                    "condition names no variable",
                    "WHERE",
                    comparison.span,
                    "qualify attributes with a variable, e.g. V.speed; "
                    "a bare word such as speed is the string 'speed'",
                )
        self._check_variable_mix(condition)

    def _check_no_string_arithmetic(self, node: Condition | Expr) -> None:
        if isinstance(node, Comparison):
            operands: tuple[Condition | Expr, ...] = (node.left, node.right)
        elif isinstance(node, Or | And):
            operands = node.items
        elif isinstance(node, BinOp | Negate):
            operands = (node.left, node.right) if isinstance(node, BinOp) else (node.operand,)
            for operand in operands:
                if isinstance(operand, String):
                    raise self.error(
                        f"string constant {quote(operand.value)} in arithmetic",
                        "WHERE",
                        operand.span,
                        "arithmetic needs numbers; a bare word is a string: "
                        "write V.attr to read an attribute",
                    )
        else:
            return
        for item in operands:
            self._check_no_string_arithmetic(item)

    def _check_variable_mix(self, condition: Condition) -> None:
        plain, following = condition_variables(condition)
        variables = sorted(plain | following, key=list(self.scopes).index)
        negated = [var for var in variables if self.scopes[var]]
        positive = [var for var in variables if not self.scopes[var]]
        span = condition.span
        if negated and positive:
            raise self.error(
                f"condition mixes negated variable '{negated[0]}' "
                f"with positive variable '{positive[0]}'",
                "WHERE",
                span,
                "negated events are never adjacent to trend events; "
                "compare a negated variable only with itself or its own sub-pattern",
            )
        if len({self.scopes[var] for var in negated}) > 1:
            raise self.error(
                f"condition mixes variables '{negated[0]}' and '{negated[-1]}' "
                "of different negative sub-patterns",
                "WHERE",
                span,
                "each NOT is matched on its own; compare variables of one NOT only",
            )
        if following:
            self._check_edge(plain, following, span)
        elif len(plain) > 1:
            first, second = variables[0], variables[1]
            raise self.error(
                f"comparison over two different variables '{first}' and '{second}' without NEXT",
                "WHERE",
                span,
                f"to compare adjacent events write {first}.attr < NEXT({second}).attr; "
                "otherwise give each variable its own condition",
            )

    def _check_edge(self, plain: set[str], following: set[str], span: Span | None) -> None:
        order = list(self.scopes)
        if len(following) > 1:
            names = ", ".join(sorted(following, key=order.index))
            raise self.error(
                f"edge predicate names more than one NEXT variable ({names})",
                "WHERE",
                span,
                "an edge predicate reads one pair of adjacent events: V.a and NEXT(W).a",
            )
        if len(plain) > 1:
            names = ", ".join(sorted(plain, key=order.index))
            raise self.error(
                f"edge predicate names more than one plain variable ({names})",
                "WHERE",
                span,
                "an edge predicate reads one pair of adjacent events: V.a and NEXT(W).a",
            )
        (second,) = following
        pairs = adjacent_pairs(self.query.pattern)
        if plain:
            (first,) = plain
            if (first, second) not in pairs:
                fix = "pairs the pattern makes adjacent: " + _show_pairs(pairs)
                if first == second:
                    fix += f"; only a Kleene plus ({first}+) makes {first} follow {first}"
                raise self.error(
                    f"edge predicate over '{first}' and NEXT({second}), "
                    "which the pattern never makes adjacent",
                    "WHERE",
                    span,
                    fix,
                )
        elif not any(after == second for _, after in pairs):
            raise self.error(
                f"NEXT({second}) never follows another event",
                "WHERE",
                span,
                "pairs the pattern makes adjacent: " + _show_pairs(pairs),
            )

    # ---------------------------------------------------------- shared

    def check_partition_attr(self, attr: PartAttr, clause: str) -> None:
        if attr.var is None:
            return
        span = self._part_var_span(attr)
        self._check_known(attr.var, clause, span)
        if self.scopes[attr.var]:
            raise self.error(
                "partition attribute not on a positive variable",
                clause,
                attr.span,
                f"'{attr.var}' is negated; qualify {attr.name} with a positive variable ("
                + ", ".join(self.positives)
                + f") or write it unqualified: {attr.name}",
            )

    def _check_known(self, var: str | None, clause: str, span: Span | None) -> None:
        if var is None or var in self.scopes:
            return
        raise self.error(
            f"unknown variable '{var}'",
            clause,
            span,
            ("the pattern binds " + ", ".join(self.scopes)) if self.scopes else "",
        )

    def _attr_var_span(self, attr: Attr) -> Span | None:
        if attr.next:
            return self.source.name_span(attr.span, attr.var, after=r"(?i:NEXT)\s*\(\s*")
        return self.source.name_span(attr.span, attr.var)

    def _part_var_span(self, attr: PartAttr) -> Span | None:
        return self.source.name_span(attr.span, attr.var) if attr.var else attr.span

    # ---------------------------------------------------------- WITHIN, SLIDE

    def check_duration(self, duration: Duration, clause: str) -> None:
        if duration.unit not in UNIT_SECONDS:
            raise self.error(
                f"unknown duration unit '{duration.unit}'", clause, duration.span, _UNITS_HELP
            )
        if duration.value <= 0:
            raise self.error(
                f"non-positive duration {_number_text(duration.value)} {duration.unit}",
                clause,
                duration.span,
                f"{clause} must be greater than zero, e.g. {clause} 10 min",
            )
        if duration.seconds >= TIME_LIMIT:
            raise self.error(
                f"duration {_number_text(duration.value)} {duration.unit} is longer than any time "
                f"trendagg takes (2**43 s, about 278,000 years)",
                clause,
                duration.span,
                f"{clause} must be shorter than 2**43 s, e.g. {clause} 1000 day",
            )

    def check_windows_per_event(self, within: Duration, slide: Duration) -> None:
        """WITHIN / SLIDE windows hold each event: at most WINDOWS_PER_EVENT_LIMIT."""
        per_event = within.seconds / slide.seconds
        if per_event <= WINDOWS_PER_EVENT_LIMIT:
            return
        shortest = within.seconds / WINDOWS_PER_EVENT_LIMIT
        raise self.error(
            f"WITHIN {_number_text(within.value)} {within.unit} SLIDE "
            f"{_number_text(slide.value)} {slide.unit} puts every event into "
            f"{math.ceil(per_event):,} windows, more than the {WINDOWS_PER_EVENT_LIMIT:,} "
            f"trendagg keeps per event",
            "SLIDE",
            slide.span,
            f"make SLIDE at least WITHIN / {WINDOWS_PER_EVENT_LIMIT:,} "
            f"({_seconds_text(shortest)}), or WITHIN shorter",
        )


def _show_pairs(pairs: Iterable[tuple[str, str]]) -> str:
    shown = sorted(f"{first} -> {second}" for first, second in pairs)
    return ", ".join(shown) if shown else "none"


def _seconds_text(seconds: Fraction) -> str:
    """A duration in seconds as seconds, or milliseconds below one second (``86.4 s``)."""
    if seconds >= 1:
        return f"{float(seconds):g} s"
    return f"{float(seconds * 1000):g} ms"


def _number_text(value: int | Fraction) -> str:
    """A duration value as written (a decimal for decimal fractions)."""
    fraction = Fraction(value)
    if fraction.denominator == 1:
        return str(fraction.numerator)
    return str(float(fraction))
