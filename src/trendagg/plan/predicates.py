"""Conditions compiled to Python closures (never ``eval``) and classified.

A condition is *local* when it names one variable and no NEXT: it filters the
events bound to that variable. It is an *edge* predicate when it names
``NEXT(W)``: it must hold for every adjacent pair (x, y) of a trend with x bound
to V (the plain variable, if any) and y bound to W (docs/semantics.md, Predicates).

Value semantics, shared by every strategy: numbers compare as numbers (int and
float mixed exactly), strings compare as strings; a number never equals a
string, and ordering a number against a string is false. Arithmetic needs
numbers; a division or modulo by zero makes the comparison false.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from trendagg.language import ast

Attrs = Mapping[str, object]
ValueFn = Callable[[Attrs, Attrs], object]
PredFn = Callable[[Attrs, Attrs], bool]


EXACT = 2**53  # integers a float64 holds exactly (and the bound of their arithmetic)


class UndefinedValue(Exception):
    """Raised inside an expression whose value does not exist (x / 0, 'a' + 1)."""


_ARITH: dict[str, Callable[[object, object], object]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "%": operator.mod,
}


def _is_number(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _compare(op: str, a: Any, b: Any) -> bool:
    if _is_number(a) and _is_number(b) or isinstance(a, str) and isinstance(b, str):
        if op == "=":
            return bool(a == b)
        if op == "!=":
            return bool(a != b)
        if op == "<":
            return bool(a < b)
        if op == "<=":
            return bool(a <= b)
        if op == ">":
            return bool(a > b)
        return bool(a >= b)
    # a number against a string: never equal, never ordered
    return op == "!="


def compile_expr(expr: ast.Expr) -> ValueFn:
    """Compile an expression to ``f(x_attrs, y_attrs)``: ``V.a`` reads x, ``NEXT(W).a`` reads y."""
    if isinstance(expr, ast.Number):
        value: object = expr.value
        return lambda x, y: value
    if isinstance(expr, ast.String):
        text: object = expr.value
        return lambda x, y: text
    if isinstance(expr, ast.Attr):
        name = expr.name
        if expr.next:
            return lambda x, y: y[name]
        return lambda x, y: x[name]
    if isinstance(expr, ast.Negate):
        inner = compile_expr(expr.operand)

        def negate(x: Attrs, y: Attrs) -> object:
            v = inner(x, y)
            if not _is_number(v):
                raise UndefinedValue
            return -v  # type: ignore[operator]

        return negate
    left = compile_expr(expr.left)
    right = compile_expr(expr.right)
    fn = _ARITH[expr.op]

    def arith(x: Attrs, y: Attrs) -> object:
        a = left(x, y)
        b = right(x, y)
        if not (_is_number(a) and _is_number(b)):
            raise UndefinedValue
        try:
            return fn(a, b)
        except (ZeroDivisionError, OverflowError) as exc:
            raise UndefinedValue from exc

    return arith


def compile_bool(cond: ast.BoolExpr) -> PredFn:
    """Compile a comparison or a nested AND/OR to ``f(x_attrs, y_attrs) -> bool``."""
    if isinstance(cond, ast.Comparison):
        left = compile_expr(cond.left)
        right = compile_expr(cond.right)
        op = cond.op

        def compare(x: Attrs, y: Attrs) -> bool:
            try:
                return _compare(op, left(x, y), right(x, y))
            except UndefinedValue:
                return False

        return compare
    parts = [compile_bool(c) for c in cond.items]
    if isinstance(cond, ast.Or):
        return lambda x, y: any(p(x, y) for p in parts)
    return lambda x, y: all(p(x, y) for p in parts)


def _expr_refs(expr: ast.Expr, out: list[ast.Attr]) -> None:
    if isinstance(expr, ast.Attr):
        out.append(expr)
    elif isinstance(expr, ast.Negate):
        _expr_refs(expr.operand, out)
    elif isinstance(expr, ast.BinOp):
        _expr_refs(expr.left, out)
        _expr_refs(expr.right, out)


def expr_refs(expr: ast.Expr) -> list[ast.Attr]:
    """Every attribute reference of an expression, in order."""
    out: list[ast.Attr] = []
    _expr_refs(expr, out)
    return out


def bool_refs(cond: ast.BoolExpr) -> list[ast.Attr]:
    """Every attribute reference of a condition, in order."""
    out: list[ast.Attr] = []
    if isinstance(cond, ast.Comparison):
        _expr_refs(cond.left, out)
        _expr_refs(cond.right, out)
    else:
        for item in cond.items:
            out.extend(bool_refs(item))
    return out


@dataclass(frozen=True)
class LocalPredicate:
    """A vertex predicate on one variable."""

    var: str
    fn: PredFn
    condition: ast.BoolExpr

    def __call__(self, attrs: Attrs) -> bool:
        return self.fn(attrs, attrs)


@dataclass(frozen=True)
class EdgePredicate:
    """A predicate on adjacent pairs (x, y): x bound to ``src`` (None: any), y bound to ``dst``."""

    src: str | None
    dst: str
    fn: PredFn
    condition: ast.BoolExpr


def classify(cond: ast.BoolExpr) -> LocalPredicate | EdgePredicate:
    """Local or edge, by the variables a validated condition names."""
    refs = bool_refs(cond)
    plain = sorted({r.var for r in refs if not r.next})
    nexts = sorted({r.var for r in refs if r.next})
    fn = compile_bool(cond)
    if not nexts:
        if len(plain) != 1:
            raise ValueError("a local condition names exactly one variable (validated earlier)")
        return LocalPredicate(plain[0], fn, cond)
    if len(nexts) != 1 or len(plain) > 1:
        raise ValueError("an edge condition names one NEXT variable and at most one other")
    return EdgePredicate(plain[0] if plain else None, nexts[0], fn, cond)


def numeric_attrs(cond: ast.BoolExpr) -> set[tuple[str, str]]:
    """(var, attr) pairs a condition reads as numbers: arithmetic operands and order
    comparisons against a numeric literal. Used to reject non-numeric input rows early."""
    out: set[tuple[str, str]] = set()

    def arith_operands(expr: ast.Expr) -> None:
        if isinstance(expr, ast.BinOp):
            for side in (expr.left, expr.right):
                if isinstance(side, ast.Attr):
                    out.add((side.var, side.name))
                arith_operands(side)
        elif isinstance(expr, ast.Negate):
            if isinstance(expr.operand, ast.Attr):
                out.add((expr.operand.var, expr.operand.name))
            arith_operands(expr.operand)

    def walk(c: ast.BoolExpr) -> None:
        if isinstance(c, ast.Comparison):
            arith_operands(c.left)
            arith_operands(c.right)
            if c.op in ("<", "<=", ">", ">="):
                for a, b in ((c.left, c.right), (c.right, c.left)):
                    if isinstance(a, ast.Attr) and isinstance(
                        b, (ast.Number, ast.BinOp, ast.Negate)
                    ):
                        out.add((a.var, a.name))
        else:
            for item in c.items:
                walk(item)

    walk(cond)
    return out


def inexact_constant(conds: list[ast.BoolExpr]) -> bool:
    """True when a condition holds an integer constant beyond 2**53 (not exact in the
    kernel's values)."""

    def walk(e: object) -> bool:
        if isinstance(e, ast.Number):
            return isinstance(e.value, int) and abs(e.value) > EXACT
        if isinstance(e, ast.Negate):
            return walk(e.operand)
        if isinstance(e, ast.BinOp):
            return walk(e.left) or walk(e.right)
        if isinstance(e, ast.Comparison):
            return walk(e.left) or walk(e.right)
        if isinstance(e, (ast.And, ast.Or)):
            return any(walk(i) for i in e.items)
        return False

    return any(walk(c) for c in conds)
