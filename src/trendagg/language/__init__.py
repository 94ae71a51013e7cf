"""The query language: text -> AST (``parse``), AST -> text (``to_text``), checks (``validate``).

The grammar is ``grammar.lark`` (lark, LALR); the AST is frozen dataclasses in
:mod:`trendagg.language.ast`; :mod:`trendagg.language.analysis` answers the
small questions about a pattern that later stages ask (its variables, which
are negated, which pairs can be adjacent).
"""

from trendagg.language.analysis import (
    adjacent_pairs,
    attributes,
    comparisons,
    condition_variables,
    expr_attrs,
    negated_variables,
    negation_scopes,
    pattern_variables,
    walk_pattern,
)
from trendagg.language.ast import (
    AGGREGATE_FUNCTIONS,
    UNIT_SECONDS,
    Aggregate,
    And,
    Attr,
    BinOp,
    BoolExpr,
    Comparison,
    Condition,
    Duration,
    Equivalence,
    EventPattern,
    Expr,
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
from trendagg.language.parser import UNIT_NAMES, parse, parse_query
from trendagg.language.printer import quote, to_text
from trendagg.language.validate import validate

__all__ = [
    "AGGREGATE_FUNCTIONS",
    "UNIT_NAMES",
    "UNIT_SECONDS",
    "Aggregate",
    "And",
    "Attr",
    "BinOp",
    "BoolExpr",
    "Comparison",
    "Condition",
    "Duration",
    "Equivalence",
    "EventPattern",
    "Expr",
    "Negate",
    "Not",
    "Number",
    "Or",
    "PartAttr",
    "Pattern",
    "Plus",
    "Query",
    "ReturnItem",
    "Seq",
    "Span",
    "String",
    "Workload",
    "adjacent_pairs",
    "attributes",
    "comparisons",
    "condition_variables",
    "expr_attrs",
    "negated_variables",
    "negation_scopes",
    "parse",
    "parse_query",
    "pattern_variables",
    "quote",
    "to_text",
    "validate",
    "walk_pattern",
]
