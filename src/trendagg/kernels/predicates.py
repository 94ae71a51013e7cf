"""Vertex (local) predicates evaluated on whole columns before the kernel runs.

:func:`filter_mask` says, for every event of a chunk, whether it can be bound
to a variable: its type, the attributes the query reads on it, and its local
predicates. Comparisons of numeric columns and numbers (with + - * and
parentheses, AND, OR) are evaluated with numpy under the value semantics of
:mod:`trendagg.plan.predicates`; anything else (strings, division, modulo,
mixed columns, integers beyond 2**53) is evaluated by the predicate's own
closure, event by event, so the result is the same either way.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from trendagg.io.batch import EventBatch
from trendagg.language import ast

_SAFE = 2**53
_OPS = {
    "=": np.equal,
    "!=": np.not_equal,
    "<>": np.not_equal,
    "<": np.less,
    "<=": np.less_equal,
    ">": np.greater,
    ">=": np.greater_equal,
}


class _Unsupported(Exception):
    pass


def _expr(expr: ast.Expr, batch: EventBatch, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(values, defined) of a numeric expression at the rows ``index``."""
    if isinstance(expr, ast.Number):
        v = expr.value
        if isinstance(v, int) and abs(v) > _SAFE:
            raise _Unsupported
        return np.full(len(index), float(v)), np.ones(len(index), dtype=bool)
    if isinstance(expr, ast.Attr):
        col = batch.columns.get(expr.name)
        if col is None:
            return np.zeros(len(index)), np.zeros(len(index), dtype=bool)
        if col.kind == "int":
            vals = col.values[index]
            if len(vals) and int(np.abs(vals).max()) > _SAFE:
                raise _Unsupported
            return vals.astype(np.float64), col.valid[index]
        if col.kind == "float":
            return col.values[index], col.valid[index]
        raise _Unsupported
    if isinstance(expr, ast.Negate):
        v, ok = _expr(expr.operand, batch, index)
        return -v, ok
    if isinstance(expr, ast.BinOp) and expr.op in ("+", "-", "*"):
        a, oka = _expr(expr.left, batch, index)
        b, okb = _expr(expr.right, batch, index)
        out = a + b if expr.op == "+" else a - b if expr.op == "-" else a * b
        # float arithmetic is exact only while results stay below 2**53 and inputs are
        # integers; otherwise Python's int/float arithmetic may differ: evaluate per event
        if len(out) and (np.abs(out).max() > _SAFE or not _integral(a, b)):
            raise _Unsupported
        return out, oka & okb
    raise _Unsupported


def _integral(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.all(a == np.floor(a)) and np.all(b == np.floor(b)))


def _bool(cond: ast.BoolExpr, batch: EventBatch, index: np.ndarray) -> np.ndarray:
    if isinstance(cond, ast.Comparison):
        a, oka = _expr(cond.left, batch, index)
        b, okb = _expr(cond.right, batch, index)
        both_plain = not isinstance(cond.left, ast.BinOp) and not isinstance(cond.right, ast.BinOp)
        if not both_plain and not _integral(a, b):
            raise _Unsupported
        result: np.ndarray = _OPS[cond.op](a, b) & oka & okb
        return result
    if isinstance(cond, ast.And):
        out = np.ones(len(index), dtype=bool)
        for item in cond.items:
            out &= _bool(item, batch, index)
        return out
    if isinstance(cond, ast.Or):
        out = np.zeros(len(index), dtype=bool)
        for item in cond.items:
            out |= _bool(item, batch, index)
        return out
    raise _Unsupported


def filter_mask(batch: EventBatch, rule: Any) -> np.ndarray:
    """True where the event has ``rule``'s type, its required attributes, and passes its predicates."""
    n = len(batch)
    if rule.type_ not in batch.type_names:
        return np.zeros(n, dtype=bool)
    mask = batch.types == batch.type_names.index(rule.type_)
    for name in rule.required:
        col = batch.columns.get(name)
        if col is None:
            return np.zeros(n, dtype=bool)
        mask &= col.valid
    if not rule.predicates:
        return mask
    index = np.flatnonzero(mask)
    keep = np.ones(len(index), dtype=bool)
    for pred in rule.predicates:
        try:
            keep &= _bool(pred.condition, batch, index)
        except _Unsupported:
            cols = {name: col for name, col in batch.columns.items()}
            for j, i in enumerate(index.tolist()):
                if keep[j]:
                    attrs = {
                        name: v for name, col in cols.items() if (v := _value(col, i)) is not None
                    }
                    keep[j] = pred(attrs)
    out = np.zeros(n, dtype=bool)
    out[index[keep]] = True
    return out


def _value(col: Any, i: int) -> object:
    if not col.valid[i]:
        return None
    if col.kind == "mixed":
        return col.values[i]
    if col.kind == "text":
        return col.dictionary[col.values[i]]
    return col.values[i].item()
