"""The parser builds the AST SEMANTICS.md describes, for every construct, with spans."""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from pathlib import Path

import pytest

from trendagg.errors import QueryError, QuerySyntaxError
from trendagg.language import (
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
    Span,
    String,
    Workload,
    adjacent_pairs,
    condition_variables,
    expr_attrs,
    negated_variables,
    negation_scopes,
    parse,
    parse_query,
    pattern_variables,
    quote,
    to_text,
)

RIDESHARE = """trips: RETURN district, COUNT(*) AS n
PATTERN SEQ(Request R, Travel T+, Dropoff D)
WHERE [driver] AND T.speed < NEXT(T).speed
GROUP-BY district
WITHIN 10 min SLIDE 1 min;"""


def q(body: str, within: str = "WITHIN 1 min") -> Query:
    """Parse one query without validation, to look at a construct on its own."""
    return parse(f"{body} {within}", validate=False).queries[0]


def where(condition: str, pattern: str = "SEQ(A, B+)") -> tuple[object, ...]:
    return q(f"RETURN COUNT(*) PATTERN {pattern} WHERE {condition}").where


def expr(text: str) -> object:
    """The left side of ``<text> = 0``."""
    comparison = where(f"{text} = 0")[0]
    assert isinstance(comparison, Comparison)
    return comparison.left


GOLDEN = Path(__file__).resolve().parents[1] / "golden"
A = EventPattern("A", "A")
B = EventPattern("B", "B")


# ---------------------------------------------------------------- a whole query


def test_rideshare_query_builds_the_expected_ast() -> None:
    expected = Query(
        name="trips",
        returns=(
            ReturnItem(PartAttr("district")),
            ReturnItem(Aggregate("COUNT"), alias="n"),
        ),
        pattern=Seq(
            (
                EventPattern("Request", "R"),
                Plus(EventPattern("Travel", "T")),
                EventPattern("Dropoff", "D"),
            )
        ),
        where=(
            Equivalence((PartAttr("driver"),)),
            Comparison("<", Attr("T", "speed"), Attr("T", "speed", next=True)),
        ),
        group_by=(PartAttr("district"),),
        within=Duration(10, "min"),
        slide=Duration(1, "min"),
    )
    assert parse_query(RIDESHARE) == expected


def test_canonical_text_is_the_documented_layout() -> None:
    assert to_text(parse_query(RIDESHARE)) == RIDESHARE


def test_optional_clauses_default_to_empty() -> None:
    query = parse_query("RETURN COUNT(*) PATTERN A WITHIN 5 s")
    assert query.where == () and query.group_by == () and query.slide is None
    assert query.slide_or_within == Duration(5, "s")
    assert query.name == "q1"


# ---------------------------------------------------------------- lexical matters


def test_keywords_are_case_insensitive() -> None:
    lower = parse(RIDESHARE.lower())
    upper = parse(RIDESHARE.upper())
    assert to_text(lower).upper() == to_text(upper).upper()
    assert lower.queries[0].pattern == Seq(
        (
            EventPattern("request", "r"),
            Plus(EventPattern("travel", "t")),
            EventPattern("dropoff", "d"),
        )
    )
    assert upper.queries[0].within == Duration(10, "min")
    mixed = parse_query(
        "ReTuRn CoUnT(*) pAtTeRn SeQ(A, nOt C, B) WhErE A.x > 1 gRoUp-By g WiThIn 1 MiN sLiDe 1 S"
    )
    assert mixed.pattern == Seq((A, Not(EventPattern("C", "C")), B))
    assert mixed.slide == Duration(1, "s")


@pytest.mark.parametrize(
    "spelling", ["GROUP-BY", "GROUP BY", "group - by", "Group\tBy", "GROUP\nBY"]
)
def test_group_by_spellings(spelling: str) -> None:
    query = parse_query(f"RETURN g, COUNT(*) PATTERN A {spelling} g WITHIN 1 min")
    assert query.group_by == (PartAttr("g"),)


def test_comments_run_to_end_of_line_anywhere() -> None:
    text = """-- leading comment
    x: -- after the name
    RETURN COUNT(*) -- after an item
    PATTERN SEQ(A, -- inside a SEQ
                B) WHERE A.v > 1 -- inside WHERE
    WITHIN 1 min -- last line, no newline"""
    query = parse_query(text)
    assert query.name == "x" and query.pattern == Seq((A, B))
    assert query.where == (Comparison(">", Attr("A", "v"), Number(1)),)


def test_double_minus_is_a_comment_but_spaced_minus_is_not() -> None:
    assert where("A.v - -5 > 0")[0] == Comparison(
        ">", BinOp("-", Attr("A", "v"), Number(-5)), Number(0)
    )
    assert where("A.v > 0 --5 > 0\n") == (Comparison(">", Attr("A", "v"), Number(0)),)


def test_keywords_are_names_where_no_keyword_fits() -> None:
    query = q("RETURN T.count AS count, SUM(T.min) AS max PATTERN Travel T+ WHERE T.sum > 1")
    assert query.returns == (
        ReturnItem(PartAttr("count", "T"), alias="count"),
        ReturnItem(Aggregate("SUM", "T", "min"), alias="max"),
    )
    assert q("RETURN COUNT(*) PATTERN count").pattern == EventPattern("count", "count")


# ---------------------------------------------------------------- several queries


def test_several_queries_with_and_without_semicolons_and_positional_names() -> None:
    text = """RETURN COUNT(*) PATTERN A WITHIN 1 min;
    ;; second: RETURN COUNT(*) PATTERN B WITHIN 1 min
    RETURN COUNT(*) PATTERN C WITHIN 1 min SLIDE 1 s RETURN COUNT(*) PATTERN D WITHIN 1 min;"""
    workload = parse(text)
    assert [query.name for query in workload] == ["q1", "second", "q3", "q4"]
    assert len(workload) == 4
    assert [query.pattern for query in workload] == [
        EventPattern(t, t) for t in ("A", "B", "C", "D")
    ]
    assert workload.source == text


def test_parse_query_accepts_one_query_only() -> None:
    text = "RETURN COUNT(*) PATTERN A WITHIN 1 min RETURN COUNT(*) PATTERN B WITHIN 1 min"
    with pytest.raises(QuerySyntaxError) as info:
        parse_query(text)
    assert str(info.value) == (
        f"expected exactly one query, found 2. Line 1, Col 40.\n  {text}\n" + " " * 41 + "^"
    )


# ---------------------------------------------------------------- RETURN


def test_return_items() -> None:
    query = q(
        "RETURN g, T.d AS d, count(*), COUNT(T), sum(T.a) AS s, Min(T.a), MAX(T.a), avg(T.a) "
        "PATTERN Travel T+"
    )
    assert [item.expr for item in query.returns] == [
        PartAttr("g"),
        PartAttr("d", "T"),
        Aggregate("COUNT"),
        Aggregate("COUNT", "T"),
        Aggregate("SUM", "T", "a"),
        Aggregate("MIN", "T", "a"),
        Aggregate("MAX", "T", "a"),
        Aggregate("AVG", "T", "a"),
    ]
    assert [item.name for item in query.returns] == [
        "g",
        "d",
        "COUNT(*)",
        "COUNT(T)",
        "s",
        "MIN(T.a)",
        "MAX(T.a)",
        "AVG(T.a)",
    ]


def test_aggregate_shapes_the_validator_refuses_still_parse() -> None:
    query = q("RETURN SUM(T), COUNT(T.a), MAX(*) PATTERN Travel T")
    assert [item.expr for item in query.returns] == [
        Aggregate("SUM", "T"),
        Aggregate("COUNT", "T", "a"),
        Aggregate("MAX"),
    ]


# ---------------------------------------------------------------- PATTERN


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("A", A),
        ("Travel T", EventPattern("Travel", "T")),
        ("A+", Plus(A)),
        ("Travel T+", Plus(EventPattern("Travel", "T"))),
        ("SEQ(A, B)", Seq((A, B))),
        ("SEQ(A)", Seq((A,))),
        ("(A)", A),
        ("((A))+", Plus(A)),
        ("SEQ(A+, B)+", Plus(Seq((Plus(A), B)))),
        ("(SEQ(A+, B))+", Plus(Seq((Plus(A), B)))),
        ("A++", Plus(Plus(A))),
        ("SEQ(A, NOT B+, A2)", Seq((A, Not(Plus(B)), EventPattern("A2", "A2")))),
        ("NOT NOT A", Not(Not(A))),
        ("(NOT A)+", Plus(Not(A))),
        (
            "(SEQ(A+, NOT SEQ(C, NOT E, D), B))+",
            Plus(
                Seq(
                    (
                        Plus(A),
                        Not(
                            Seq(
                                (
                                    EventPattern("C", "C"),
                                    Not(EventPattern("E", "E")),
                                    EventPattern("D", "D"),
                                )
                            )
                        ),
                        B,
                    )
                )
            ),
        ),
    ],
)
def test_patterns(text: str, pattern: object) -> None:
    assert q(f"RETURN COUNT(*) PATTERN {text}").pattern == pattern


# ---------------------------------------------------------------- WHERE


def test_equivalence_lists_and_top_level_and() -> None:
    assert where("[driver, B.district] AND [x]") == (
        Equivalence((PartAttr("driver"), PartAttr("district", "B"))),
        Equivalence((PartAttr("x"),)),
    )


@pytest.mark.parametrize(
    ("op", "stored"),
    [("=", "="), ("!=", "!="), ("<>", "!="), ("<", "<"), ("<=", "<="), (">", ">"), (">=", ">=")],
)
def test_comparison_operators(op: str, stored: str) -> None:
    assert where(f"B.x {op} NEXT(B).x") == (
        Comparison(stored, Attr("B", "x"), Attr("B", "x", next=True)),
    )


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("42", 42),
        ("007", 7),
        ("123456789012345678901234567890", 123456789012345678901234567890),
        ("2.5", 2.5),
        ("5.", 5.0),
        (".5", 0.5),
        ("1e3", 1000.0),
        ("1.5E-2", 0.015),
        ("-5", -5),
        ("-2.5", -2.5),
    ],
)
def test_number_literals(text: str, value: int | float) -> None:
    number = expr(text)
    assert isinstance(number, Number)
    assert number.value == value and type(number.value) is type(value)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("'plain'", "plain"),
        ('"double"', "double"),
        (r"'it\'s'", "it's"),
        (r'"say \"hi\""', 'say "hi"'),
        (r"'a\\b'", "a\\b"),
        (r"'tab\tnew\nret\r'", "tab\tnew\nret\r"),
        (r"'\x41\u00e9\U0001F600'", "A\u00e9\U0001f600"),
        (r"'\q'", "q"),
        ("''", ""),
        ("accident", "accident"),
        ("AND_not_a_keyword", "AND_not_a_keyword"),
    ],
)
def test_strings_and_bare_words(text: str, value: str) -> None:
    assert where(f"A.kind = {text}") == (Comparison("=", Attr("A", "kind"), String(value)),)


def test_arithmetic_precedence_and_associativity() -> None:
    a, b, c = Attr("A", "a"), Attr("A", "b"), Attr("A", "c")
    assert expr("A.a + A.b * A.c") == BinOp("+", a, BinOp("*", b, c))
    assert expr("(A.a + A.b) * A.c") == BinOp("*", BinOp("+", a, b), c)
    assert expr("A.a - A.b - A.c") == BinOp("-", BinOp("-", a, b), c)
    assert expr("A.a - (A.b - A.c)") == BinOp("-", a, BinOp("-", b, c))
    assert expr("A.a / A.b % A.c") == BinOp("%", BinOp("/", a, b), c)
    assert expr("A.a * 2 + NEXT(A).b / 3") == BinOp(
        "+", BinOp("*", a, Number(2)), BinOp("/", Attr("A", "b", next=True), Number(3))
    )


def test_unary_minus_literal_versus_negate() -> None:
    a = Attr("A", "a")
    assert expr("-5") == Number(-5)
    assert expr("- 5") == Number(-5)
    assert expr("-(5)") == Negate(Number(5))
    assert expr("- -5") == Negate(Number(-5))
    assert expr("-A.a") == Negate(a)
    assert expr("-A.a * 2") == BinOp("*", Negate(a), Number(2))
    assert expr("-(A.a * 2)") == Negate(BinOp("*", a, Number(2)))
    assert expr("2 * -A.a") == BinOp("*", Number(2), Negate(a))


def test_parenthesised_or_and_and() -> None:
    x = Comparison("<", Attr("A", "x"), Number(1))
    y = Comparison(">", Attr("A", "y"), Number(2))
    z = Comparison("=", Attr("A", "z"), String("s"))
    assert where("(A.x < 1 OR A.y > 2)") == (Or((x, y)),)
    assert where("(A.x < 1 AND A.y > 2)") == (And((x, y)),)
    assert where("(A.x < 1 AND A.y > 2 OR A.z = s)") == (Or((And((x, y)), z)),)
    assert where("(A.x < 1 AND (A.y > 2 OR A.z = s))") == (And((x, Or((y, z)))),)
    assert where("((A.x < 1 OR A.y > 2) OR A.z = s)") == (Or((Or((x, y)), z)),)
    assert where("(A.x < 1)") == (x,)
    assert where("((A.x) < (1))") == (x,)
    assert where("(A.x + 1) * 2 > 3")[0] == Comparison(
        ">", BinOp("*", BinOp("+", Attr("A", "x"), Number(1)), Number(2)), Number(3)
    )
    assert where("A.x < 1 AND (A.y > 2 OR A.z = s)") == (x, Or((y, z)))


# ---------------------------------------------------------------- durations


@pytest.mark.parametrize(
    ("text", "duration"),
    [
        ("250 ms", Duration(250, "ms")),
        ("5 MS", Duration(5, "ms")),
        ("1 s", Duration(1, "s")),
        ("2 sec", Duration(2, "s")),
        ("3 second", Duration(3, "s")),
        ("4 Seconds", Duration(4, "s")),
        ("5 min", Duration(5, "min")),
        ("6 minute", Duration(6, "min")),
        ("7 MINUTES", Duration(7, "min")),
        ("8 h", Duration(8, "h")),
        ("9 hour", Duration(9, "h")),
        ("10 hours", Duration(10, "h")),
        ("1 day", Duration(1, "day")),
        ("2 days", Duration(2, "day")),
        ("10min", Duration(10, "min")),
        ("1.5 s", Duration(Fraction(3, 2), "s")),
        ("0.1 day", Duration(Fraction(1, 10), "day")),
        ("1e-3 h", Duration(Fraction(1, 1000), "h")),
    ],
)
def test_durations(text: str, duration: Duration) -> None:
    query = parse_query(f"RETURN COUNT(*) PATTERN A WITHIN {text}")
    assert query.within == duration
    number = text.split()[0] if " " in text else "10"
    assert isinstance(query.within.value, int) == number.isdigit()


def test_decimal_durations_are_exact() -> None:
    query = parse_query("RETURN COUNT(*) PATTERN A WITHIN 0.1 s SLIDE 0.3 s")
    assert query.within.seconds * 3 == query.slide_or_within.seconds
    assert query.within.value == Fraction(1, 10)


# ---------------------------------------------------------------- spans


def test_spans_point_at_the_text() -> None:
    text = "x: RETURN COUNT(*) AS n\n  PATTERN SEQ(Request R, Travel T+)\n  WHERE T.speed < NEXT(T).speed\n  WITHIN 10 min"
    query = parse(text).queries[0]
    lines = text.split("\n")

    def show(span: Span | None) -> str:
        assert span is not None
        return lines[span.line - 1][span.column - 1 : span.column - 1 + span.length]

    assert query.span == Span(1, 1, len(text))
    assert show(query.returns[0].span) == "COUNT(*) AS n"
    assert show(query.returns[0].expr.span) == "COUNT(*)"
    pattern = query.pattern
    assert isinstance(pattern, Seq)
    assert show(pattern.span) == "SEQ(Request R, Travel T+)"
    assert show(pattern.items[0].span) == "Request R"
    assert show(pattern.items[1].span) == "Travel T+"
    travel = pattern.items[1]
    assert isinstance(travel, Plus)
    assert show(travel.inner.span) == "Travel T"
    comparison = query.where[0]
    assert isinstance(comparison, Comparison)
    assert show(comparison.span) == "T.speed < NEXT(T).speed"
    assert show(comparison.left.span) == "T.speed"
    assert show(comparison.right.span) == "NEXT(T).speed"
    assert comparison.right.span == Span(3, 19, 13)
    assert show(query.within.span) == "10 min"


def test_every_node_has_a_span() -> None:
    text = (GOLDEN / "arithmetic.tq").read_text() + (GOLDEN / "aliases_groups.tq").read_text()
    text += (GOLDEN / "or_conditions.tq").read_text()
    text += (GOLDEN / "semantics_nested_negation.tq").read_text()
    missing: list[str] = []

    def visit(node: object) -> None:
        if isinstance(node, tuple):
            for item in node:
                visit(item)
        elif dataclasses.is_dataclass(node) and not isinstance(node, Span | Workload):
            if getattr(node, "span", None) is None:
                missing.append(repr(node))
            for field in dataclasses.fields(node):
                visit(getattr(node, field.name))

    workload = parse(text)
    for query in workload:
        visit(query)
    assert missing == []
    assert len(workload) == 7


def test_spans_take_no_part_in_equality() -> None:
    one = parse_query("RETURN COUNT(*) PATTERN A WITHIN 1 min")
    two = parse_query("\n\n   RETURN   COUNT( * )\nPATTERN\n A  WITHIN 1   min")
    assert one.span != two.span
    assert one == two
    assert hash(one) == hash(two)


# ---------------------------------------------------------------- validate switch


def test_validate_false_keeps_invalid_queries() -> None:
    text = "RETURN COUNT(*) PATTERN A WHERE X.v > 1 WITHIN 1 min"
    with pytest.raises(QueryError):
        parse(text)
    assert parse(text, validate=False).queries[0].where[0] == Comparison(
        ">", Attr("X", "v"), Number(1)
    )


# ---------------------------------------------------------------- analysis helpers


NESTED = q("RETURN COUNT(*) PATTERN (SEQ(A+, NOT SEQ(C, NOT E X, D), B))+").pattern


def test_pattern_variables_lists_positive_and_negated_leaves() -> None:
    variables = pattern_variables(NESTED)
    assert list(variables) == ["A", "C", "X", "D", "B"]
    assert variables["X"] == EventPattern("E", "X")


def test_negated_variables_at_any_depth() -> None:
    assert negated_variables(NESTED) == {"C", "X", "D"}
    assert negated_variables(Seq((A, B))) == set()


def test_negation_scopes_separate_each_not() -> None:
    assert negation_scopes(NESTED) == {"A": 0, "C": 1, "X": 2, "D": 1, "B": 0}


def test_adjacent_pairs_follow_the_template() -> None:
    assert adjacent_pairs(NESTED) == {("A", "A"), ("A", "B"), ("B", "A"), ("C", "D")}
    assert adjacent_pairs(Seq((A, Plus(B)))) == {("A", "B"), ("B", "B")}
    assert adjacent_pairs(Seq((Not(A), B))) == set()


def test_condition_variables_and_expr_attrs() -> None:
    edge, local, equivalence = where(
        "A.x + B.y < NEXT(B).z AND (B.k = 1 OR B.j = -B.k) AND [d, A.e]"
    )
    assert condition_variables(edge) == ({"A", "B"}, {"B"})
    assert condition_variables(local) == ({"B"}, set())
    assert condition_variables(equivalence) == ({"A"}, set())
    assert expr_attrs(edge) == {("A", "x"), ("B", "y"), ("B", "z")}
    assert expr_attrs(local) == {("B", "k"), ("B", "j")}
    assert isinstance(edge, Comparison)
    assert expr_attrs(edge.left) == {("A", "x"), ("B", "y")}


# ---------------------------------------------------------------- printer details


@pytest.mark.parametrize(
    "text",
    [
        "A.a - (A.b - A.c) > 0",
        "A.a - A.b - A.c > 0",
        "A.a + A.b * A.c > 0",
        "(A.a + A.b) * A.c > 0",
        "A.a * (A.b + A.c) > 0",
        "A.a / (A.b * A.c) > 0",
        "A.a * A.b / A.c % 2 > 0",
        "-(A.a + 1) > 0",
        "-(-A.a) > 0",
        "-(-5) > A.a",
        "-(5) > A.a",
        "-A.a * 2 > 0",
        "A.a - -5 > 0",
        "A.a * -2.5 > -1e-07",
        "(A.x < 1 OR A.y > 2) AND (A.x < 1 AND A.y > 2)",
        "((A.x < 1 OR A.y > 2) AND A.x < 1 OR A.y > 2)",
        "((A.x < 1 AND A.y > 2) AND A.z > 3)",
        "(A.x < 1 OR (A.y > 2 OR A.z > 3))",
        "(A.x < 1 AND A.y > 2 OR A.z > 3 AND A.w > 4)",
    ],
)
def test_printer_keeps_needed_parentheses_only(text: str) -> None:
    """Canonical text prints back unchanged: no parenthesis added, none lost."""
    query = q(f"RETURN COUNT(*) PATTERN A WHERE {text}")
    assert to_text(query).split("\n")[2] == f"WHERE {text}"
    assert parse(to_text(query), validate=False).queries[0] == query


def test_printer_values() -> None:
    assert to_text(Number(0.1)) == "0.1"
    assert to_text(Number(1e300)) == "1e+300"
    assert to_text(Number(-3)) == "-3"
    assert to_text(String("it's \\ \n\x00\u2028")) == "'it\\'s \\\\ \\n\\x00\\u2028'"
    assert quote("\U0001f600") == "'\U0001f600'"
    assert to_text(Duration(Fraction(1, 8), "s")) == "0.125 s"
    assert to_text(Duration(Fraction(-1, 20), "min")) == "-0.05 min"
    assert to_text(Duration(Fraction(10, 1), "h")) == "10 h"
    assert to_text(EventPattern("Travel", "Travel")) == "Travel"
    assert to_text(Plus(Not(A))) == "(NOT A)+"
    assert to_text(Not(Plus(A))) == "NOT A+"
    assert to_text(ReturnItem(Aggregate("SUM", "T", "a"), alias="s")) == "SUM(T.a) AS s"


def test_printer_refuses_values_without_spelling() -> None:
    with pytest.raises(ValueError, match="no spelling"):
        to_text(Number(float("inf")))
    with pytest.raises(ValueError, match="no finite decimal"):
        to_text(Duration(Fraction(1, 3), "s"))
    with pytest.raises(TypeError):
        to_text("RETURN")  # type: ignore[arg-type]
