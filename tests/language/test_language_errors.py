"""Every syntax and validation error, with its exact message: what, where, how to fix.

Each case is one rule of SEMANTICS.md (or one kind of syntax error); the
expected message is spelled out line by line, so a wrong caret or a missing
"Line L, Col C." fails the test.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from trendagg.errors import QueryError, QuerySyntaxError, TrendAggError
from trendagg.language import (
    Aggregate,
    Duration,
    EventPattern,
    Query,
    ReturnItem,
    Workload,
    parse,
    validate,
)

SYNTAX_ERRORS = [
    pytest.param(
        "RETURN COUNT(*) PATTERN SEQ(A, ) WITHIN 1 min",
        (
            "unexpected ')' in PATTERN; expected a name, NOT, SEQ or '('. Line 1, Col 32.",
            "  RETURN COUNT(*) PATTERN SEQ(A, ) WITHIN 1 min",
            "                                 ^",
        ),
        id="syntax-missing-item",
    ),
    pytest.param(
        "RETURN COUNT(*) PATTERN A WHERE A.x @ 3 WITHIN 1 min",
        (
            "unexpected character '@' in WHERE; expected a comparison operator (= != <> < <= > >=) or an arithmetic operator (+ - * / %). Line 1, Col 37.",
            "  RETURN COUNT(*) PATTERN A WHERE A.x @ 3 WITHIN 1 min",
            "                                      ^",
        ),
        id="syntax-bad-char",
    ),
    pytest.param(
        "RETURN COUNT(*) PATTERN A\nWHERE A.x = 'abc\nWITHIN 1 min",
        (
            "unexpected character \"'\" in WHERE; expected a name, a number, a quoted string, NEXT, '(' or '-'. Line 2, Col 13.",
            "  WHERE A.x = 'abc",
            "              ^",
            "unterminated string: close it with ' on the same line",
        ),
        id="syntax-unterminated",
    ),
    pytest.param(
        "RETURN COUNT(*) PATTERN A -- no window\n",
        (
            "unexpected end of text in PATTERN; expected a name, GROUP-BY, WHERE, WITHIN or '+'. Line 1, Col 26.",
            "  RETURN COUNT(*) PATTERN A -- no window",
            "                           ^",
            "every query ends with 'WITHIN <duration>', e.g. WITHIN 10 min",
        ),
        id="syntax-missing-within",
    ),
    pytest.param(
        "RETURN COUNT(*) PATTERN A WHERE A.x < WITHIN 1 min",
        (
            "unexpected '1' in WITHIN; expected AND, GROUP-BY, WITHIN, '.' or an arithmetic operator (+ - * / %). Line 1, Col 46.",
            "  RETURN COUNT(*) PATTERN A WHERE A.x < WITHIN 1 min",
            "                                               ^",
            "'WITHIN' stands where a value or name belongs, so it was read as a plain word: is something missing before it?",
        ),
        id="syntax-keyword-as-word",
    ),
    pytest.param(
        "RETURN COUNT(*) PATTERN A WHERE A.x < 1 OR A.y > 2 WITHIN 1 min",
        (
            "unexpected 'OR' in WHERE; expected AND, GROUP-BY or WITHIN. Line 1, Col 41.",
            "  RETURN COUNT(*) PATTERN A WHERE A.x < 1 OR A.y > 2 WITHIN 1 min",
            "                                          ^^",
            "OR is written inside parentheses: WHERE (A.x < 1 OR A.y > 2)",
        ),
        id="syntax-top-level-or",
    ),
    pytest.param(
        "  -- nothing here\n",
        (
            "no query in the text; a query reads '[name:] RETURN ... PATTERN ... WITHIN <duration>'. Line 2, Col 1.",
            "  ",
            "  ^",
        ),
        id="syntax-empty",
    ),
    pytest.param(
        "x: COUNT(*) PATTERN A WITHIN 1 min",
        (
            "unexpected 'COUNT' in the query header; expected RETURN. Line 1, Col 4.",
            "  x: COUNT(*) PATTERN A WITHIN 1 min",
            "     ^^^^^",
        ),
        id="syntax-missing-return",
    ),
    pytest.param(
        "RETURN COUNT(*) PATTERN A WITHIN 10",
        (
            "unexpected end of text in WITHIN; expected a duration unit (ms, s, min, h, day). Line 1, Col 36.",
            "  RETURN COUNT(*) PATTERN A WITHIN 10",
            "                                     ^",
        ),
        id="syntax-no-unit",
    ),
]

QUERY_ERRORS = [
    pytest.param(
        "RETURN COUNT(*)\nPATTERN SEQ(A, B)\nWHERE X.speed < 10\nWITHIN 1 min",
        (
            "unknown variable 'X' in WHERE. Line 3, Col 7.",
            "  WHERE X.speed < 10",
            "        ^",
            "the pattern binds A, B",
        ),
        id="unknown-where",
    ),
    pytest.param(
        "RETURN COUNT(*) PATTERN A+ WHERE A.x < NEXT( X ).x WITHIN 1 min",
        (
            "unknown variable 'X' in WHERE. Line 1, Col 46.",
            "  RETURN COUNT(*) PATTERN A+ WHERE A.x < NEXT( X ).x WITHIN 1 min",
            "                                               ^",
            "the pattern binds A",
        ),
        id="unknown-next",
    ),
    pytest.param(
        "RETURN SUM(X.a) PATTERN A WITHIN 1 min",
        (
            "unknown variable 'X' in RETURN. Line 1, Col 12.",
            "  RETURN SUM(X.a) PATTERN A WITHIN 1 min",
            "             ^",
            "the pattern binds A",
        ),
        id="unknown-return-agg",
    ),
    pytest.param(
        "RETURN X.d, COUNT(*) PATTERN A GROUP-BY X.d WITHIN 1 min",
        (
            "unknown variable 'X' in RETURN. Line 1, Col 8.",
            "  RETURN X.d, COUNT(*) PATTERN A GROUP-BY X.d WITHIN 1 min",
            "         ^",
            "the pattern binds A",
        ),
        id="unknown-return-attr",
    ),
    pytest.param(
        "RETURN COUNT(*) PATTERN A GROUP-BY X.d WITHIN 1 min",
        (
            "unknown variable 'X' in GROUP-BY. Line 1, Col 36.",
            "  RETURN COUNT(*) PATTERN A GROUP-BY X.d WITHIN 1 min",
            "                                     ^",
            "the pattern binds A",
        ),
        id="unknown-groupby",
    ),
    pytest.param(
        "RETURN COUNT(*) PATTERN A WHERE [a, X.b] WITHIN 1 min",
        (
            "unknown variable 'X' in WHERE. Line 1, Col 37.",
            "  RETURN COUNT(*) PATTERN A WHERE [a, X.b] WITHIN 1 min",
            "                                      ^",
            "the pattern binds A",
        ),
        id="unknown-equiv",
    ),
    pytest.param(
        "RETURN COUNT(*) PATTERN SEQ(A X, B X) WITHIN 1 min",
        (
            "duplicate variable 'X' in PATTERN. Line 1, Col 36.",
            "  RETURN COUNT(*) PATTERN SEQ(A X, B X) WITHIN 1 min",
            "                                     ^",
            "give each event of the pattern its own variable: Type Var",
        ),
        id="dup-var",
    ),
    pytest.param(
        "RETURN COUNT(*) PATTERN SEQ(A, B, A C) WITHIN 1 min",
        (
            "event type 'A' used twice in PATTERN. Line 1, Col 35.",
            "  RETURN COUNT(*) PATTERN SEQ(A, B, A C) WITHIN 1 min",
            "                                    ^",
            "a type appears at most once per pattern; repeat it with A+",
        ),
        id="dup-type",
    ),
    pytest.param(
        "RETURN COUNT(*) PATTERN NOT A WITHIN 1 min",
        (
            "NOT outside a SEQ in PATTERN. Line 1, Col 25.",
            "  RETURN COUNT(*) PATTERN NOT A WITHIN 1 min",
            "                          ^^^^^",
            "NOT may only be an item of a SEQ that also has a positive item, e.g. SEQ(A, NOT N, B)",
        ),
        id="not-top",
    ),
    pytest.param(
        "RETURN COUNT(*) PATTERN SEQ(A, NOT NOT B, C) WITHIN 1 min",
        (
            "NOT outside a SEQ in PATTERN. Line 1, Col 36.",
            "  RETURN COUNT(*) PATTERN SEQ(A, NOT NOT B, C) WITHIN 1 min",
            "                                     ^^^^^",
            "NOT may only be an item of a SEQ that also has a positive item, e.g. SEQ(A, NOT N, B)",
        ),
        id="not-not",
    ),
    pytest.param(
        "RETURN COUNT(*) PATTERN SEQ(NOT A) WITHIN 1 min",
        (
            "SEQ with no positive item in PATTERN. Line 1, Col 25.",
            "  RETURN COUNT(*) PATTERN SEQ(NOT A) WITHIN 1 min",
            "                          ^^^^^^^^^^",
            "a SEQ needs at least one item that is not negated",
        ),
        id="seq-no-pos",
    ),
    pytest.param(
        "RETURN COUNT(*) PATTERN SEQ(A, NOT B, NOT C, D) WITHIN 1 min",
        (
            "two NOTs in a row in PATTERN. Line 1, Col 39.",
            "  RETURN COUNT(*) PATTERN SEQ(A, NOT B, NOT C, D) WITHIN 1 min",
            "                                        ^^^^^",
            "merge them into one NOT, or put a positive item between them",
        ),
        id="two-nots",
    ),
    pytest.param(
        "RETURN COUNT(*) PATTERN SEQ(A, (NOT B)+, C) WITHIN 1 min",
        (
            "NOT directly under '+' in PATTERN. Line 1, Col 33.",
            "  RETURN COUNT(*) PATTERN SEQ(A, (NOT B)+, C) WITHIN 1 min",
            "                                  ^^^^^",
            "a negation cannot repeat; put it inside a SEQ under the +, e.g. (SEQ(A, NOT N, B))+",
        ),
        id="not-plus",
    ),
    pytest.param(
        "RETURN COUNT(*) PATTERN (SEQ(NOT B, A))+ WITHIN 1 min",
        (
            "NOT at the start of a nested SEQ in PATTERN. Line 1, Col 30.",
            "  RETURN COUNT(*) PATTERN (SEQ(NOT B, A))+ WITHIN 1 min",
            "                               ^^^^^",
            "a leading or trailing NOT is only allowed in the outermost SEQ, whose window bounds it; put positive items around this NOT",
        ),
        id="lead-nested",
    ),
    pytest.param(
        "RETURN COUNT(*) PATTERN SEQ(A, SEQ(C, NOT B)) WITHIN 1 min",
        (
            "NOT at the end of a nested SEQ in PATTERN. Line 1, Col 39.",
            "  RETURN COUNT(*) PATTERN SEQ(A, SEQ(C, NOT B)) WITHIN 1 min",
            "                                        ^^^^^",
            "a leading or trailing NOT is only allowed in the outermost SEQ, whose window bounds it; put positive items around this NOT",
        ),
        id="trail-nested",
    ),
    pytest.param(
        "RETURN COUNT(*) PATTERN SEQ(A, NOT SEQ(C, NOT E), B) WITHIN 1 min",
        (
            "NOT at the end of a nested SEQ in PATTERN. Line 1, Col 43.",
            "  RETURN COUNT(*) PATTERN SEQ(A, NOT SEQ(C, NOT E), B) WITHIN 1 min",
            "                                            ^^^^^",
            "a leading or trailing NOT is only allowed in the outermost SEQ, whose window bounds it; put positive items around this NOT",
        ),
        id="trail-in-not",
    ),
    pytest.param(
        "RETURN COUNT(*) PATTERN SEQ(A, B) WHERE A.x < B.x WITHIN 1 min",
        (
            "comparison over two different variables 'A' and 'B' without NEXT in WHERE. Line 1, Col 41.",
            "  RETURN COUNT(*) PATTERN SEQ(A, B) WHERE A.x < B.x WITHIN 1 min",
            "                                          ^^^^^^^^^",
            "to compare adjacent events write A.attr < NEXT(B).attr; otherwise give each variable its own condition",
        ),
        id="two-vars",
    ),
    pytest.param(
        "RETURN COUNT(*) PATTERN SEQ(A, B) WHERE NEXT(A).x < NEXT(B).x WITHIN 1 min",
        (
            "edge predicate names more than one NEXT variable (A, B) in WHERE. Line 1, Col 41.",
            "  RETURN COUNT(*) PATTERN SEQ(A, B) WHERE NEXT(A).x < NEXT(B).x WITHIN 1 min",
            "                                          ^^^^^^^^^^^^^^^^^^^^^",
            "an edge predicate reads one pair of adjacent events: V.a and NEXT(W).a",
        ),
        id="two-next",
    ),
    pytest.param(
        "RETURN COUNT(*) PATTERN SEQ(A, B, C) WHERE A.x + B.x < NEXT(C).x WITHIN 1 min",
        (
            "edge predicate names more than one plain variable (A, B) in WHERE. Line 1, Col 44.",
            "  RETURN COUNT(*) PATTERN SEQ(A, B, C) WHERE A.x + B.x < NEXT(C).x WITHIN 1 min",
            "                                             ^^^^^^^^^^^^^^^^^^^^^",
            "an edge predicate reads one pair of adjacent events: V.a and NEXT(W).a",
        ),
        id="two-plain",
    ),
    pytest.param(
        "RETURN COUNT(*) PATTERN SEQ(A, NOT E, B) WHERE A.x < NEXT(E).x WITHIN 1 min",
        (
            "condition mixes negated variable 'E' with positive variable 'A' in WHERE. Line 1, Col 48.",
            "  RETURN COUNT(*) PATTERN SEQ(A, NOT E, B) WHERE A.x < NEXT(E).x WITHIN 1 min",
            "                                                 ^^^^^^^^^^^^^^^",
            "negated events are never adjacent to trend events; compare a negated variable only with itself or its own sub-pattern",
        ),
        id="mix-neg",
    ),
    pytest.param(
        "RETURN COUNT(*) PATTERN SEQ(A, NOT E, B) WHERE (A.x < 1 OR E.x > 2) WITHIN 1 min",
        (
            "condition mixes negated variable 'E' with positive variable 'A' in WHERE. Line 1, Col 49.",
            "  RETURN COUNT(*) PATTERN SEQ(A, NOT E, B) WHERE (A.x < 1 OR E.x > 2) WITHIN 1 min",
            "                                                  ^^^^^^^^^^^^^^^^^^",
            "negated events are never adjacent to trend events; compare a negated variable only with itself or its own sub-pattern",
        ),
        id="mix-neg-local",
    ),
    pytest.param(
        "RETURN COUNT(*) PATTERN SEQ(A, NOT SEQ(C, NOT E, D), B) WHERE C.x < NEXT(E).x WITHIN 1 min",
        (
            "condition mixes variables 'C' and 'E' of different negative sub-patterns in WHERE. Line 1, Col 63.",
            "  RETURN COUNT(*) PATTERN SEQ(A, NOT SEQ(C, NOT E, D), B) WHERE C.x < NEXT(E).x WITHIN 1 min",
            "                                                                ^^^^^^^^^^^^^^^",
            "each NOT is matched on its own; compare variables of one NOT only",
        ),
        id="diff-neg",
    ),
    pytest.param(
        "RETURN COUNT(*) PATTERN SEQ(A, B, C) WHERE A.x < NEXT(C).x WITHIN 1 min",
        (
            "edge predicate over 'A' and NEXT(C), which the pattern never makes adjacent in WHERE. Line 1, Col 44.",
            "  RETURN COUNT(*) PATTERN SEQ(A, B, C) WHERE A.x < NEXT(C).x WITHIN 1 min",
            "                                             ^^^^^^^^^^^^^^^",
            "pairs the pattern makes adjacent: A -> B, B -> C",
        ),
        id="never-adj",
    ),
    pytest.param(
        "RETURN COUNT(*) PATTERN SEQ(A, B)\nWHERE A.x < NEXT(A).x\nWITHIN 1 min",
        (
            "edge predicate over 'A' and NEXT(A), which the pattern never makes adjacent in WHERE. Line 2, Col 7.",
            "  WHERE A.x < NEXT(A).x",
            "        ^^^^^^^^^^^^^^^",
            "pairs the pattern makes adjacent: A -> B; only a Kleene plus (A+) makes A follow A",
        ),
        id="never-adjacent-self",
    ),
    pytest.param(
        "RETURN COUNT(*) PATTERN SEQ(A, B) WHERE NEXT(A).x > 1 WITHIN 1 min",
        (
            "NEXT(A) never follows another event in WHERE. Line 1, Col 41.",
            "  RETURN COUNT(*) PATTERN SEQ(A, B) WHERE NEXT(A).x > 1 WITHIN 1 min",
            "                                          ^^^^^^^^^^^^^",
            "pairs the pattern makes adjacent: A -> B",
        ),
        id="next-first",
    ),
    pytest.param(
        "RETURN COUNT(*) PATTERN A WHERE speed < 10 WITHIN 1 min",
        (
            "condition names no variable in WHERE. Line 1, Col 33.",
            "  RETURN COUNT(*) PATTERN A WHERE speed < 10 WITHIN 1 min",
            "                                  ^^^^^^^^^^",
            "qualify attributes with a variable, e.g. V.speed; a bare word such as speed is the string 'speed'",
        ),
        id="novar",
    ),
    pytest.param(
        "RETURN COUNT(*) PATTERN A WHERE A.x + fast > 10 WITHIN 1 min",
        (
            "string constant 'fast' in arithmetic in WHERE. Line 1, Col 39.",
            "  RETURN COUNT(*) PATTERN A WHERE A.x + fast > 10 WITHIN 1 min",
            "                                        ^^^^",
            "arithmetic needs numbers; a bare word is a string: write V.attr to read an attribute",
        ),
        id="str-arith",
    ),
    pytest.param(
        "RETURN COUNT(E) PATTERN SEQ(A, NOT E) WITHIN 1 min",
        (
            "aggregate over negated variable 'E' in RETURN. Line 1, Col 14.",
            "  RETURN COUNT(E) PATTERN SEQ(A, NOT E) WITHIN 1 min",
            "               ^",
            "negated events are never part of a trend; aggregate a positive variable (A)",
        ),
        id="agg-neg",
    ),
    pytest.param(
        "RETURN SUM(A) PATTERN A WITHIN 1 min",
        (
            "SUM without an attribute in RETURN. Line 1, Col 8.",
            "  RETURN SUM(A) PATTERN A WITHIN 1 min",
            "         ^^^^^^",
            "SUM reads an attribute: write SUM(A.attr)",
        ),
        id="sum-noattr",
    ),
    pytest.param(
        "RETURN COUNT(A.x) PATTERN A WITHIN 1 min",
        (
            "COUNT with an attribute in RETURN. Line 1, Col 8.",
            "  RETURN COUNT(A.x) PATTERN A WITHIN 1 min",
            "         ^^^^^^^^^^",
            "write COUNT(*) to count trends or COUNT(A) to count A events",
        ),
        id="count-attr",
    ),
    pytest.param(
        "RETURN COUNT(*) PATTERN A WITHIN 0 min",
        (
            "non-positive duration 0 min in WITHIN. Line 1, Col 34.",
            "  RETURN COUNT(*) PATTERN A WITHIN 0 min",
            "                                   ^^^^^",
            "WITHIN must be greater than zero, e.g. WITHIN 10 min",
        ),
        id="zero-within",
    ),
    pytest.param(
        "RETURN COUNT(*) PATTERN A WITHIN 1 min SLIDE -5 s",
        (
            "non-positive duration -5 s in SLIDE. Line 1, Col 46.",
            "  RETURN COUNT(*) PATTERN A WITHIN 1 min SLIDE -5 s",
            "                                               ^^^^",
            "SLIDE must be greater than zero, e.g. SLIDE 10 min",
        ),
        id="neg-slide",
    ),
    pytest.param(
        "RETURN COUNT(*) PATTERN SEQ(A, NOT E) WHERE [E.v] WITHIN 1 min",
        (
            "partition attribute not on a positive variable in WHERE. Line 1, Col 46.",
            "  RETURN COUNT(*) PATTERN SEQ(A, NOT E) WHERE [E.v] WITHIN 1 min",
            "                                               ^^^",
            "'E' is negated; qualify v with a positive variable (A) or write it unqualified: v",
        ),
        id="part-neg-eq",
    ),
    pytest.param(
        "RETURN COUNT(*) PATTERN SEQ(NOT E, A) GROUP-BY E.v WITHIN 1 min",
        (
            "partition attribute not on a positive variable in GROUP-BY. Line 1, Col 48.",
            "  RETURN COUNT(*) PATTERN SEQ(NOT E, A) GROUP-BY E.v WITHIN 1 min",
            "                                                 ^^^",
            "'E' is negated; qualify v with a positive variable (A) or write it unqualified: v",
        ),
        id="part-neg-gb",
    ),
    pytest.param(
        "RETURN district, COUNT(*) PATTERN A GROUP-BY A.district WITHIN 1 min",
        (
            "attribute 'district' is not a GROUP-BY attribute in RETURN. Line 1, Col 8.",
            "  RETURN district, COUNT(*) PATTERN A GROUP-BY A.district WITHIN 1 min",
            "         ^^^^^^^^",
            "RETURN lists aggregates and GROUP-BY attributes; add district to GROUP-BY or aggregate it",
        ),
        id="ret-not-gb",
    ),
    pytest.param(
        "RETURN COUNT(*), COUNT(*) PATTERN A WITHIN 1 min",
        (
            "duplicate output column 'COUNT(*)' in RETURN. Line 1, Col 18.",
            "  RETURN COUNT(*), COUNT(*) PATTERN A WITHIN 1 min",
            "                   ^^^^^^^^",
            "name one of the columns with AS",
        ),
        id="dup-col",
    ),
    pytest.param(
        "RETURN COUNT(*) AS n, SUM(A.x) AS n PATTERN A WITHIN 1 min",
        (
            "duplicate output column 'n' in RETURN. Line 1, Col 23.",
            "  RETURN COUNT(*) AS n, SUM(A.x) AS n PATTERN A WITHIN 1 min",
            "                        ^^^^^^^^^^^^^",
            "name one of the columns with AS",
        ),
        id="dup-col-alias",
    ),
    pytest.param(
        "a: RETURN COUNT(*) PATTERN A WITHIN 1 min;\nb: RETURN COUNT(*) PATTERN A WITHIN 1 min;\na: RETURN COUNT(*) PATTERN A WITHIN 1 min",
        (
            "query name 'a' used twice. Line 3, Col 1.",
            "  a: RETURN COUNT(*) PATTERN A WITHIN 1 min",
            "  ^",
            "give every query of a file its own name",
        ),
        id="dup-query",
    ),
    pytest.param(
        "q2: RETURN COUNT(*) PATTERN A WITHIN 1 min;\nRETURN COUNT(*) PATTERN A WITHIN 1 min",
        (
            "query name 'q2' used twice. Line 2, Col 1.",
            "  RETURN COUNT(*) PATTERN A WITHIN 1 min",
            "  ^^^^^^",
            "give every query of a file its own name",
        ),
        id="dup-query-auto",
    ),
    pytest.param(
        "RETURN COUNT(*)\nPATTERN A\nWITHIN 10 mins",
        (
            "unknown duration unit 'mins' in WITHIN. Line 3, Col 11.",
            "  WITHIN 10 mins",
            "            ^^^^",
            "valid units: ms, s, sec, second, seconds, min, minute, minutes, h, hour, hours, day, days",
        ),
        id="unknown-unit",
    ),
    pytest.param(
        "RETURN COUNT(*) PATTERN A WITHIN 1 min SLIDE 5 fortnights",
        (
            "unknown duration unit 'fortnights' in SLIDE. Line 1, Col 48.",
            "  RETURN COUNT(*) PATTERN A WITHIN 1 min SLIDE 5 fortnights",
            "                                                 ^^^^^^^^^^",
            "valid units: ms, s, sec, second, seconds, min, minute, minutes, h, hour, hours, day, days",
        ),
        id="unknown-unit-slide",
    ),
    pytest.param(
        "RETURN COUNT(*) PATTERN A WHERE A.x < 1e999 WITHIN 1 min",
        (
            "number 1e999 is too large in WHERE. Line 1, Col 39.",
            "  RETURN COUNT(*) PATTERN A WHERE A.x < 1e999 WITHIN 1 min",
            "                                        ^^^^^",
            "floating-point numbers must stay below about 1.8e308",
        ),
        id="number-too-large",
    ),
]


@pytest.mark.parametrize(("text", "lines"), SYNTAX_ERRORS)
def test_syntax_error_message(text: str, lines: tuple[str, ...]) -> None:
    with pytest.raises(QuerySyntaxError) as info:
        parse(text)
    assert str(info.value) == "\n".join(lines)


@pytest.mark.parametrize(("text", "lines"), QUERY_ERRORS)
def test_query_error_message(text: str, lines: tuple[str, ...]) -> None:
    with pytest.raises(QueryError) as info:
        parse(text)
    assert str(info.value) == "\n".join(lines)


@pytest.mark.parametrize(("text", "lines"), QUERY_ERRORS)
def test_validation_errors_wait_for_validate(text: str, lines: tuple[str, ...]) -> None:
    """With validate=False only what the AST cannot hold fails (units, huge numbers)."""
    if "duration unit" in lines[0] or "too large" in lines[0]:
        with pytest.raises(QueryError):
            parse(text, validate=False)
        return
    workload = parse(text, validate=False)
    with pytest.raises(QueryError) as info:
        validate(workload)
    assert str(info.value) == "\n".join(lines)


def test_the_documented_example_message() -> None:
    text = "RETURN COUNT(*)\nPATTERN SEQ(A, B)\n  WHERE X.speed < 10\nWITHIN 1 min"
    with pytest.raises(QueryError) as info:
        parse(text)
    assert str(info.value).startswith(
        "unknown variable 'X' in WHERE. Line 3, Col 9.\n    WHERE X.speed < 10\n          ^\n"
    )


@pytest.mark.parametrize(
    "text",
    [
        "RETURN COUNT(*) PATTERN SEQ(A, ) WITHIN 1 min",
        "RETURN COUNT(*) PATTERN A WHERE A.x @ 3 WITHIN 1 min",
        "RETURN COUNT(*) PATTERN A",
        "RETURN COUNT(*) PATTERN A WHERE A.x = 'open",
    ],
)
def test_no_lark_exception_leaks(text: str) -> None:
    with pytest.raises(QuerySyntaxError) as info:
        parse(text)
    error = info.value
    assert error.__cause__ is None and error.__suppress_context__
    assert "lark" not in str(error).lower() and "Token(" not in str(error)
    assert isinstance(error, ValueError) and isinstance(error, TrendAggError)


# ---------------------------------------------------------------- what is allowed


@pytest.mark.parametrize(
    "text",
    [
        # a local predicate on a negated variable
        "RETURN COUNT(*) PATTERN SEQ(A, NOT E, B) WHERE E.kind = 'crash' WITHIN 1 min",
        # an edge predicate between two variables of one negative sub-pattern
        "RETURN COUNT(*) PATTERN SEQ(A, NOT SEQ(C, D), B) WHERE C.x < NEXT(D).x WITHIN 1 min",
        "RETURN COUNT(*) PATTERN SEQ(A, NOT E+, B) WHERE E.x < NEXT(E).x WITHIN 1 min",
        # adjacency crosses a NOT
        "RETURN COUNT(*) PATTERN SEQ(A, NOT E, B) WHERE A.x < NEXT(B).x WITHIN 1 min",
        # an edge predicate without a plain variable
        "RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE NEXT(B).x > 1 WITHIN 1 min",
        # leading and trailing NOT in the outermost SEQ; NOT in the middle of a nested one
        "RETURN COUNT(*) PATTERN SEQ(NOT E, A+, NOT F) WITHIN 1 min",
        "RETURN COUNT(*) PATTERN (SEQ(A+, NOT SEQ(C, NOT E, D), B))+ WITHIN 1 min",
        # unqualified partition attributes always apply to the positive variables
        "RETURN g, COUNT(*) PATTERN SEQ(NOT E, A) WHERE [v] GROUP-BY g WITHIN 1 min",
        # RETURN attributes match GROUP-BY attributes by text
        "RETURN A.g, COUNT(*) AS g PATTERN A GROUP-BY A.g WITHIN 1 min",
        # a condition with OR on one variable is local
        "RETURN COUNT(*) PATTERN A WHERE (A.x < 1 OR A.y = 'z' AND -A.w > 2) WITHIN 1 min",
        "RETURN COUNT(*) PATTERN SEQ(A, B) WHERE (A.x < NEXT(B).x OR NEXT(B).y = 1) WITHIN 1 min",
        # strings compared, not computed with
        "RETURN COUNT(*) PATTERN A WHERE A.kind = fast AND 'x' != A.y WITHIN 1 min",
        # SLIDE larger than WITHIN is allowed (windows with gaps)
        "RETURN COUNT(*) PATTERN A WITHIN 1 min SLIDE 2 min",
    ],
)
def test_valid_queries_pass(text: str) -> None:
    parse(text)


# ---------------------------------------------------------------- hand-built ASTs


def _query(**changes: object) -> Query:
    fields: dict[str, object] = {
        "name": "x",
        "returns": (ReturnItem(Aggregate("COUNT")),),
        "pattern": EventPattern("A", "A"),
        "where": (),
        "group_by": (),
        "within": Duration(1, "min"),
    }
    fields.update(changes)
    return Query(**fields)  # type: ignore[arg-type]


def test_validate_without_spans_names_the_query() -> None:
    with pytest.raises(QueryError) as info:
        validate(_query(returns=(ReturnItem(Aggregate("SUM", "Z", "a")),)))
    assert str(info.value) == ("unknown variable 'Z' in RETURN of query 'x'.\nthe pattern binds A")


def test_validate_checks_units_of_hand_built_durations() -> None:
    with pytest.raises(QueryError) as info:
        validate(Workload((_query(within=Duration(1, "week")),)))
    assert str(info.value).startswith("unknown duration unit 'week' in WITHIN of query 'x'.\n")
    assert "valid units: ms, s, sec" in str(info.value)


def test_validate_non_positive_fraction() -> None:
    with pytest.raises(QueryError, match=r"non-positive duration -0.5 s in SLIDE of query 'x'\."):
        validate(_query(slide=Duration(Fraction(-1, 2), "s")))


def test_validate_unknown_aggregate_function() -> None:
    with pytest.raises(QueryError, match=r"unknown aggregate 'MEDIAN'"):
        validate(_query(returns=(ReturnItem(Aggregate("MEDIAN", "A", "x")),)))


def test_validate_accepts_a_query_and_explicit_text() -> None:
    text = "RETURN COUNT(*) PATTERN A WHERE B.x > 1 WITHIN 1 min"
    query = parse(text, validate=False).queries[0]
    with pytest.raises(QueryError, match=r"Line 1, Col 33\."):
        validate(query, text)
